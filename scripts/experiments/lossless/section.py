"""The lossless-class section of a run's report: loss and completion per
class with PFC off and on (seed 001's TCP + RoCEv2 result), and the pause
time per sender port."""

from __future__ import annotations

import pandas as pd

from .. import report
from .tables import summary

CLASS_LABELS = {"lossless": "lossless (RoCEv2, 3)", "lossy": "lossy (TCP, 0)",
                "cnp": "CNP (7, strict)"}


def _figs(classes: pd.DataFrame, pause: pd.DataFrame):
    import matplotlib.pyplot as plt
    from plotly.subplots import make_subplots

    web = make_subplots(rows=1, cols=2, subplot_titles=("Frames lost per class (%)",
                                                        "Pause time per sender port (us)"))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.4))
    data = classes[classes["class"] != "cnp"]
    labels = [CLASS_LABELS[c] for c in dict.fromkeys(data["class"])]
    settings = list(dict.fromkeys(data["pfc"]))
    width = 0.8 / max(len(settings), 1)
    for k, pfc in enumerate(settings):
        g = data[data["pfc"] == pfc]
        ys = [float(g[g["class"] == c]["loss_pct"].sum()) for c in dict.fromkeys(data["class"])]
        web.add_bar(x=labels, y=ys, name=f"PFC {pfc}", row=1, col=1)
        a1.bar([i + k * width for i in range(len(labels))], ys, width, label=f"PFC {pfc}")
        pg = pause[pause["pfc"] == pfc].sort_values("ingress_port")
        web.add_bar(x=[str(p) for p in pg["ingress_port"]], y=pg["paused_us"],
                    name=f"pause, PFC {pfc}", row=1, col=2)
        a2.bar([i + k * width for i in range(len(pg))], pg["paused_us"], width,
               label=f"PFC {pfc}")
    a1.set_xticks([i + width * (len(settings) - 1) / 2 for i in range(len(labels))], labels)
    a1.set_ylabel("frames lost (%)")
    a1.set_title("Frames lost per class")
    ports = sorted(set(pause["ingress_port"]))
    a2.set_xticks([i + width * (len(settings) - 1) / 2 for i in range(len(ports))],
                  [str(p) for p in ports], fontsize=7)
    a2.set_xlabel("sender port")
    a2.set_ylabel("pause time asked (us)")
    a2.set_title("Pause time per sender port")
    for ax in (a1, a2):
        ax.legend(fontsize=7)
    web.update_layout(template="plotly_white", height=380, barmode="group",
                      margin=dict(l=60, r=20, t=50, b=50),
                      title="Lossy and lossless classes in one incast, PFC off and on")
    return web, fig


def section(page: report.Page) -> None:
    classes, pause = page.run.t.get("lossless_classes"), page.run.t.get("lossless_pause")
    if classes is None or classes.empty or pause is None:
        return
    s = page.section("lossless", "A lossless class beside a lossy one (seed 001, TCP + RoCEv2)")
    par = page.run.meta.get("parameters", {}).get("lossless", {})
    n = par.get("senders", pause["ingress_port"].nunique())
    s.parts.append(report.para(
        f"{n} sender ports each send a lossy TCP-like flow (priority 0) and a lossless "
        "RoCEv2-like flow (UDP 4791, DSCP 26: priority 3) at once into one egress port: an "
        f"{n}:1 incast of both classes; CNPs (DSCP 48: priority 7) run beside them in a "
        "strict-priority queue. The DUT sets the class from the DSCP; the traffic manager "
        "serves classes 0 and 3 by DRR, marks ECN on queue 3 between "
        f"{par.get('ecn_min_bytes', 153600):,} and {par.get('ecn_max_bytes', 1536000):,} bytes "
        "(RED-like, seed 001's thresholds) and, with PFC on, counts what each sender port's "
        "priority 3 holds in the buffer: past xoff the switch sends a PFC pause upstream and "
        "the frames still in flight go to that port's headroom; at xon it resumes the sender. "
        "Completion is a flow's first frame sent to its last received, in virtual time."))
    if not par.get("obey_pause", True):
        s.parts.append(report.para("<b>The senders ignored the pause frames in this run</b>: the "
                              "headroom cannot hold what they keep sending."))
    s.parts.append(report.html_table(summary(classes, pause)))
    on = classes[(classes["pfc"] == "on") & (classes["class"] == "lossless")]
    if len(on):
        lost = int(on["lost"].sum())
        s.parts.append(report.para(f"Lossless class with PFC on: {lost} frames lost "
                              f"{report.verdict(lost == 0)}."))
    page.plot(s, "lossless_loss_and_pause", *_figs(classes, pause))
    cols = ["pfc", "ingress_port", "xoff_frames", "xon_frames", "paused_us", "paused_pct",
            "peak_headroom_bytes", "headroom_bytes", "headroom_drops"]
    s.parts.append(report.para("Per sender port (its priority 3): pause frames sent, the pause time "
                          "asked of it (and as % of the run), the most of its headroom used."))
    s.parts.append(report.html_table(pause[pause["pfc"] == "on"][cols] if (pause["pfc"] == "on").any()
                                else pause[cols]))
