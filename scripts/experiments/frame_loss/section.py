"""The frame-loss section of a run's report: Tolly's table shape and the
loss per frame size, per scenario."""

from __future__ import annotations

from .. import report
from .params import describe
from .tables import tolly_table


def _figs(fl):
    import matplotlib.pyplot as plt
    import plotly.graph_objects as go

    web, (fig, ax) = go.Figure(), plt.subplots(figsize=(6.5, 3.4))
    for sc, g in fl.groupby("scenario", sort=False):
        g = g.sort_values("frame_size")
        web.add_scatter(x=g["frame_size"], y=g["loss_pct"], mode="markers+lines", name=sc)
        ax.plot(g["frame_size"], g["loss_pct"], "o-", label=sc)
    web.update_layout(template="plotly_white", title="Frame loss at the offered load per size",
                      xaxis_title="frame size (B)", yaxis_title="frame loss (%)", height=360,
                      margin=dict(l=60, r=20, t=50, b=50))
    web.update_xaxes(type="log")
    ax.set_xscale("log")
    ax.set_xlabel("frame size (B)")
    ax.set_ylabel("frame loss (%)")
    ax.set_title("Frame loss at the offered load per frame size")
    ax.legend(fontsize=7)
    return web, fig


def section(page: report.Page) -> None:
    fl = page.run.t.get("frame_loss")
    if fl is None or fl.empty:
        return
    s = page.section("frame_loss", "Frame loss per frame size (Tolly Tables 1 and 2)")
    offered = ", ".join(f"{v:g} %" for v in sorted(fl["offered_pct"].unique()))
    s.parts.append(report.para(
        f"Every port offers {offered} of line rate for a trial of fixed frames per port; frames "
        "still in the switch a few frame times after the sources stop count as lost. "
        "Scenarios: " + "; ".join(f"<b>{report.esc(k)}</b>: {report.esc(describe(k))}"
                                  for k in dict.fromkeys(fl["scenario"]))
        + ". A non-blocking switch loses nothing at line rate (Tolly's Mellanox row); "
          "loss here points at a forwarding-rate limit, not at oversubscription."))
    s.parts.append(report.html_table(tolly_table(fl)))
    page.plot(s, "frame_loss_per_size", *_figs(fl))
    short = fl[fl["generator_short"]]
    if len(short):
        s.parts.append(report.para(f"{len(short)} trial(s) where the generator fell short of the "
                              "offered rate: a tester limit, not DUT loss."))
