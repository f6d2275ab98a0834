"""The RFC 2544 section of a run's report: the tables beside what the
DUT's configuration predicts, and three plots (throughput against the
line-rate curve, latency histograms, loss against offered load), each
as an interactive plotly figure and a PNG."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import report as rp
from ..linerate import frames_per_second
from . import tables as tb


def _throughput_figs(r: pd.DataFrame, rate_bps: float):
    """The line-rate curve and one measured line per DUT (a Mininet run of
    several DUTs), else one 'measured throughput' line."""
    import matplotlib.pyplot as plt
    import plotly.graph_objects as go

    sizes = np.unique(np.concatenate([np.geomspace(64, max(9216, r["frame_size"].max()), 60),
                                      r["frame_size"].to_numpy(float)]))
    line = [frames_per_second(s, rate_bps) / 1e6 for s in sizes]
    several = "dut" in r and r["dut"].nunique() > 1
    lines = ([(str(d), g) for d, g in r.groupby("dut", sort=False)] if several
             else [("measured throughput", r)])
    web = go.Figure()
    web.add_scatter(x=sizes, y=line, mode="lines", name="line rate", line=dict(color="#999"))
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    ax.plot(sizes, line, color="#999", label="line rate")
    for name, g in lines:
        meas = g["throughput_fps_per_port"] / 1e6
        web.add_scatter(x=g["frame_size"], y=meas, mode="markers+lines", name=name,
                        text=[f"{p:g} % of line rate" for p in g["throughput_pct"]])
        ax.plot(g["frame_size"], meas, "o-", label=name)
    web.update_layout(**rp_layout("Throughput per port vs the line-rate curve"
                                  + (", per DUT" if several else ""),
                                  "frame size (B)", "Mframes/s"))
    web.update_xaxes(type="log")
    ax.set_xscale("log")
    ax.set_xlabel("frame size (B)")
    ax.set_ylabel("Mframes/s per port")
    ax.set_title("Throughput vs the line-rate curve" + (", per DUT" if several else ""))
    ax.legend()
    return web, fig


def _series(d: pd.DataFrame) -> list[str]:
    """What groups a plot's series: the frame size, and the DUT in a run
    of several DUTs (its rows name it)."""
    return (["dut", "frame_size"] if "dut" in d and d["dut"].nunique() > 1
            else ["frame_size"])


def _series_name(key) -> str:
    if isinstance(key, tuple) and len(key) == 2:
        return f"{key[0]} {key[1]:g} B"
    size = key[0] if isinstance(key, tuple) else key
    return f"{size:g} B"


def _latency_figs(hist: pd.DataFrame):
    import matplotlib.pyplot as plt
    import plotly.graph_objects as go

    by = _series(hist)
    h = hist.groupby([*by, "lo_ns", "hi_ns"], as_index=False)["frames"].sum()
    h = h[h["frames"] > 0]
    labels = lambda d: [f"{lo:g}-{hi:g}" if np.isfinite(hi) else f">={lo:g}"  # noqa: E731
                        for lo, hi in zip(d["lo_ns"], d["hi_ns"])]
    web = go.Figure()
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    bins = sorted(set(zip(h["lo_ns"], h["hi_ns"])))
    names = [f"{lo:g}-{hi:g}" if np.isfinite(hi) else f">={lo:g}" for lo, hi in bins]
    groups = list(h.groupby(by))
    n = max(1, len(groups))
    width = 0.8 / n
    for i, (key, d) in enumerate(groups):
        share = d["frames"] / d["frames"].sum() * 100
        web.add_bar(x=labels(d), y=share, name=_series_name(key))
        pos = [bins.index(b) + (i - (n - 1) / 2) * width for b in zip(d["lo_ns"], d["hi_ns"])]
        ax.bar(pos, share, width=width, label=_series_name(key))
    web.update_layout(**rp_layout("FIFO latency histogram per frame size (all latency trials)",
                                  "latency bin (ns)", "% of frames"), barmode="group")
    ax.set_xticks(range(len(bins)))
    ax.set_xticklabels(names, rotation=30, fontsize=7)
    ax.set_xlabel("FIFO latency bin (ns)")
    ax.set_ylabel("% of frames")
    ax.set_title("Latency histogram per frame size")
    ax.legend(fontsize=7)
    return web, fig


def _loss_figs(trials: pd.DataFrame):
    import matplotlib.pyplot as plt
    import plotly.graph_objects as go

    t = trials[trials["test"] == "frame_loss"].sort_values("value")
    web = go.Figure()
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for key, d in t.groupby(_series(t)):
        web.add_scatter(x=d["value"], y=d["loss_pct"], mode="markers+lines",
                        name=_series_name(key))
        ax.plot(d["value"], d["loss_pct"], "o-", label=_series_name(key))
        if "theory_loss_pct" in d:
            ax.plot(d["value"], d["theory_loss_pct"], ":", color="#999")
    if "theory_loss_pct" in t:
        th = t.groupby("value", as_index=False)["theory_loss_pct"].first()
        web.add_scatter(x=th["value"], y=th["theory_loss_pct"], mode="lines", name="predicted",
                        line=dict(dash="dot", color="#999"))
    web.update_layout(**rp_layout("Frame loss vs offered load", "offered load (% line rate)",
                                  "frame loss (%)"))
    ax.set_xlabel("offered load (% line rate)")
    ax.set_ylabel("frame loss (%)")
    ax.set_title("Frame loss vs offered load (dotted: predicted)")
    ax.legend(fontsize=7)
    return web, fig


def rp_layout(title: str, x: str, y: str) -> dict:
    return dict(template="plotly_white", title=title, xaxis_title=x, yaxis_title=y,
                margin=dict(l=60, r=20, t=50, b=50), height=380)


_VIRTUAL = (
    "Each trial starts from a fresh switch (counters, queues and clock reset). Frames still in "
    "the switch a few frame times after the sources stop count as not forwarded, so the buffer "
    "cannot hide an overload (a buffer of B bytes hides an overload of d for B/(d x rate)). "
    "Latency is FIFO as stamped "
    "(first bit in to first bit out, 1 ns clock); LIFO is FIFO less the frame's time in.")
_MININET = (
    "Mininet, real time: a tester host per port runs p4scope-trafgen, fresh generator and "
    "analyzer processes for every trial (so every counter starts at zero), after learning "
    "frames from every receiving host (RFC 2544 s. 23). The line rate is what the tester says "
    "a port is; a generator that sent less than asked marks the trial short (the tester's "
    "limit, not the DUT's loss) and the search counts it as failed. Frames that have not "
    "arrived shortly after the generators stop count as lost; what is still queued in the DUT "
    "is not observable. Latency is from the generator's software timestamp to the analyzer's "
    "kernel receive timestamp (no serialization on veth links); LIFO is that less the frame's "
    "time at the nominal line rate, so it can be negative at low line rates. Percentiles are "
    "the upper edges of the analyzer's histogram bins.")


def section(page: rp.Page) -> None:
    run = page.run
    results = run.t.get("rfc2544_results")
    trials = run.t.get("rfc2544_trials")
    if results is None and trials is None:
        return
    meta = run.meta
    params = meta.get("parameters", {}).get("rfc2544", {})
    rate = float(params.get("rate_bps", 100e9))
    duts = meta.get("duts") or []
    dut = meta.get("dut", {}).get("label") or "the reference DUT in the embedded switch"
    s = page.section("rfc2544", "RFC 2544: throughput, latency, frame loss, back-to-back, "
                     "recovery — " + (f"DUTs: {', '.join(d['name'] for d in duts)}"
                                      if len(duts) > 1 else f"DUT: {dut}"))
    s.parts.append(rp.para(
        ("DUTs, measured one after another, each on a testbed of its own: "
         + "; ".join(f"<b>{rp.esc(d['name'])}</b> ({rp.esc(d['label'])})" for d in duts) + ". "
         if len(duts) > 1 else f"DUT: {rp.esc(dut)}. ")
        + "".join(f"Skipped <b>{rp.esc(name)}</b>: {rp.esc(why)}. "
                  for name, why in (meta.get("skipped") or {}).items())
        + "Port pairs "
        f"{', '.join(f'{a}&harr;{b}' for a, b in params.get('pairs', []))}, every pair "
        f"sending both ways at once at a line rate of "
        f"{f'{rate / 1e9:g} Gbit/s' if rate >= 1e9 else f'{rate / 1e6:g} Mbit/s'} per port; loss "
        f"tolerance {params.get('tolerance_pct', 0):g} %, search resolution "
        f"{params.get('resolution_pct', 0.1):g} % of line rate. "
        + (_MININET if meta.get("mode") == "mininet" else _VIRTUAL)))
    made = tb.all_tables(results, trials)
    for name, df in made.items():
        s.parts.append(f"<h3>{rp.esc(tb.CSV_FILES[name].split(':')[0])}</h3>")
        s.parts.append(rp.para(rp.esc(tb.CSV_FILES[name]) + f" (<code>{name}.csv</code>)"))
        s.parts.append(rp.html_table(df))
    if results is not None and (results["test"] == "throughput").any():
        page.plot(s, "rfc2544_throughput", *_throughput_figs(tb.rows_of(results, "throughput"),
                                                             rate))
    hist = run.t.get("rfc2544_latency_hist")
    if hist is not None and not hist.empty:
        page.plot(s, "rfc2544_latency_histogram", *_latency_figs(hist))
    if trials is not None and (trials["test"] == "frame_loss").any():
        page.plot(s, "rfc2544_frame_loss", *_loss_figs(trials))
