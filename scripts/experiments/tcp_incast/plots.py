"""The incast report's plots, each drawn twice from the same data: plotly
for the HTML page, matplotlib for the PNG files (as experiments.report
does for the virtual-time runs)."""

from __future__ import annotations

import numpy as np
import pandas as pd

SMOOTH_S = 0.05
T_MIN = -0.2
"""Plots start just before the common start (the tables keep the warm-up)."""


def smoothed(rates: pd.DataFrame, source: str, step_s: float = SMOOTH_S) -> dict[str, pd.DataFrame]:
    """case -> (t_s, mbps) averaged over `step_s` windows."""
    out = {}
    d = rates[(rates["source"] == source) & (rates["t_s"] >= T_MIN)]
    for cid, g in d.groupby("case_id", sort=False):
        k = np.floor(g["t_s"] / step_s)
        s = g.groupby(k)["bps"].mean() / 1e6
        out[cid] = pd.DataFrame({"t_s": (s.index + 0.5) * step_s, "mbps": s.to_numpy()})
    return out


def short(case_id: str) -> str:
    """tcp-incast/16x16/256K/p4scope -> 256K p4scope"""
    parts = case_id.split("/")
    return " ".join(parts[2:]) if len(parts) > 2 else case_id


def _colors(n: int) -> list[str]:
    base = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
            "#17becf", "#bcbd22", "#7f7f7f"]
    return [base[i % len(base)] for i in range(n)]


def aggregate_rate(rates: pd.DataFrame, jobs: pd.DataFrame):
    """(plotly figure, matplotlib figure): aggregate rate into the receiver
    over time per case; dotted: the switch port's rate; grey: the bottleneck."""
    import matplotlib.pyplot as plt
    import plotly.graph_objects as go

    from ..plots_web import LAYOUT

    app, port = smoothed(rates, "receiver"), smoothed(rates, "switch port")
    cases = list(app)
    cols = dict(zip(cases, _colors(len(cases))))
    bott = float(jobs["bottleneck_mbps"].iloc[0]) if not jobs.empty else None
    fig = go.Figure()
    mfig, ax = plt.subplots(figsize=(9, 3.8))
    for cid in cases:
        a = app[cid]
        fig.add_trace(go.Scatter(x=a["t_s"], y=a["mbps"], name=f"{short(cid)} (receiver)",
                                 mode="lines", line=dict(color=cols[cid], width=1.6)))
        ax.plot(a["t_s"], a["mbps"], color=cols[cid], lw=1.3, label=f"{short(cid)} (receiver)")
        if cid in port:
            q = port[cid]
            fig.add_trace(go.Scatter(x=q["t_s"], y=q["mbps"], name=f"{short(cid)} (switch port)",
                                     mode="lines", line=dict(color=cols[cid], width=1, dash="dot")))
            ax.plot(q["t_s"], q["mbps"], color=cols[cid], lw=0.8, ls=":",
                    label=f"{short(cid)} (switch port)")
        row = jobs[jobs["case_id"] == cid]
        if not row.empty and row["job_completion_s"].notna().all():
            jct = float(row["job_completion_s"].iloc[0])
            fig.add_vline(x=jct, line=dict(color=cols[cid], width=1, dash="dash"))
            ax.axvline(jct, color=cols[cid], lw=0.8, ls="--")
    if bott:
        fig.add_hline(y=bott, line=dict(color="grey", width=1),
                      annotation_text=f"bottleneck {bott:g} Mbit/s")
        ax.axhline(bott, color="grey", lw=0.8)
    title = (f"Aggregate rate into the receiver ({SMOOTH_S * 1e3:.0f} ms averages); "
             "dashed: job completion")
    fig.update_layout(title=title, xaxis_title="time since the common start (s)",
                      yaxis_title="Mbit/s", height=430, **LAYOUT)
    ax.set_xlabel("time since the common start (s)")
    ax.set_ylabel("Mbit/s")
    ax.set_title(title)
    ax.legend(loc="lower center", ncol=2, fontsize=7)
    mfig.tight_layout()
    return fig, mfig


def fct_cdf(flows: pd.DataFrame):
    import matplotlib.pyplot as plt
    import plotly.graph_objects as go

    from ..plots_web import LAYOUT

    fig = go.Figure()
    mfig, ax = plt.subplots(figsize=(6.5, 3.4))
    cases = list(dict.fromkeys(flows["case_id"]))
    for cid, col in zip(cases, _colors(len(cases))):
        v = np.sort(flows.loc[flows["case_id"] == cid, "fct_s"].dropna().to_numpy())
        if not len(v):
            continue
        y = np.arange(1, len(v) + 1) / len(v)
        fig.add_trace(go.Scatter(x=v, y=y, name=short(cid), mode="lines",
                                 line=dict(color=col, shape="hv")))
        ax.step(v, y, where="post", color=col, label=short(cid))
    fig.update_layout(title="Flow completion times (CDF over all flows)",
                      xaxis_title="seconds since the common start", yaxis_title="fraction of flows",
                      height=380, **LAYOUT)
    ax.set_xlabel("flow completion time (s)")
    ax.set_ylabel("fraction of flows")
    ax.set_title("Flow completion times (CDF)")
    ax.legend(fontsize=7)
    mfig.tight_layout()
    return fig, mfig


def queues(case_id: str, series: pd.DataFrame, link: pd.DataFrame, delivered: pd.DataFrame,
           port: int):
    """One case: the DUT instrument's interval maxima (frames) and the
    receiver link's qdisc backlog over time; below, each sender's rate as
    the instrument's tel_delivered counters give it."""
    import matplotlib.pyplot as plt
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from ..plots_web import LAYOUT

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=("queues towards the receiver",
                                        "per-sender rate into the receiver port (instrument)"),
                        specs=[[{"secondary_y": True}], [{}]])
    mfig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 5.2), sharex=True)
    s = series[(series["case_id"] == case_id) & (series["kind"] == "interval_max")
               & (series["egress_port"] == port) & (series["t_s"] >= T_MIN)] \
        if not series.empty else series
    s = _fill_intervals(s)
    if not s.empty:
        fig.add_trace(go.Scatter(x=s["t_s"], y=s["depth_frames"], name="DUT queue: interval max (frames)",
                                 mode="lines", line=dict(shape="hv", color="#d62728")), 1, 1)
        ax1.step(s["t_s"], s["depth_frames"], where="post", color="#d62728",
                 label="DUT queue: interval max (frames)")
    l = link[(link["case_id"] == case_id) & (link["t_s"] >= T_MIN)] if not link.empty else link
    if not l.empty:
        fig.add_trace(go.Scatter(x=l["t_s"], y=l["qlen"], name="link qdisc backlog (packets)",
                                 mode="lines", line=dict(color="#1f77b4")), 1, 1, secondary_y=True)
        ax1b = ax1.twinx()
        ax1b.plot(l["t_s"], l["qlen"], color="#1f77b4", lw=1, label="link qdisc backlog (packets)")
        ax1b.set_ylabel("link backlog (packets)", color="#1f77b4")
        ax1b.grid(False)
    ax1.set_ylabel("DUT queue (frames)", color="#d62728")
    ax1.set_title(f"{short(case_id)}: queues towards the receiver")
    d = delivered[(delivered["case_id"] == case_id) & (delivered["t_s"] >= T_MIN)] \
        if not delivered.empty else delivered
    if not d.empty and "bps" in d:
        ports = sorted(d["ingress_port"].unique())
        for p, col in zip(ports, _colors(len(ports))):
            g = d[d["ingress_port"] == p].dropna(subset=["bps"])
            fig.add_trace(go.Scatter(x=g["t_s"], y=g["bps"] / 1e6, name=f"sender port {p}",
                                     mode="lines", line=dict(width=1, color=col),
                                     legendgroup="senders"), 2, 1)
            ax2.plot(g["t_s"], g["bps"] / 1e6, lw=0.8, color=col)
    ax2.set_ylabel("Mbit/s per sender")
    ax2.set_xlabel("time since the common start (s)")
    fig.update_yaxes(title_text="frames", row=1, col=1)
    fig.update_yaxes(title_text="packets", row=1, col=1, secondary_y=True)
    fig.update_yaxes(title_text="Mbit/s", row=2, col=1)
    fig.update_xaxes(title_text="time since the common start (s)", row=2, col=1)
    fig.update_layout(height=560, title=f"{short(case_id)}: queue telemetry", **LAYOUT)
    mfig.tight_layout()
    return fig, mfig


def _fill_intervals(s: pd.DataFrame) -> pd.DataFrame:
    """Interval maxima with the intervals that sent no report (no packet
    was enqueued in them) filled in as 0, so a step plot does not carry
    the last maximum across a quiet gap."""
    if s.empty or len(s) < 2:
        return s
    s = s.sort_values("t_ns")
    span = np.diff(s["t_ns"].to_numpy())
    span = span[span > 0]
    if not len(span):
        return s
    step = float(np.min(span))
    idx = np.rint((s["t_ns"] - s["t_ns"].iloc[0]) / step).astype(int)
    full = pd.Series(0, index=range(int(idx.max()) + 1), dtype=float)
    full[idx.to_numpy()] = s["depth_frames"].to_numpy()
    t_ns = s["t_ns"].iloc[0] + full.index.to_numpy() * step
    return pd.DataFrame({"t_ns": t_ns, "t_s": t_ns / 1e9, "depth_frames": full.to_numpy()})


def completion_by_size(jobs: pd.DataFrame):
    """Job completion time per transfer size and switch (seed 001 Figure 5)."""
    import matplotlib.pyplot as plt
    import plotly.graph_objects as go

    from ..plots_web import LAYOUT

    fig = go.Figure()
    mfig, ax = plt.subplots(figsize=(6.5, 3.4))
    kinds = list(dict.fromkeys(jobs["switch"]))
    sizes = sorted(jobs["flow_bytes"].unique())
    labels = [f"{s * int(jobs['flows'].iloc[0]) / 2**20:.0f} MiB" for s in sizes]
    width = 0.8 / max(1, len(kinds))
    for k, (kind, col) in enumerate(zip(kinds, _colors(len(kinds)))):
        g = jobs[jobs["switch"] == kind].groupby("flow_bytes")["job_completion_s"].mean()
        y = [g.get(s, np.nan) for s in sizes]
        fig.add_trace(go.Bar(x=labels, y=y, name=kind, marker_color=col))
        ax.bar(np.arange(len(sizes)) + k * width, y, width, color=col, label=kind)
    ax.set_xticks(np.arange(len(sizes)) + width * (len(kinds) - 1) / 2, labels)
    ax.set_ylabel("job completion (s)")
    ax.set_xlabel("total transfer")
    ax.set_title("Job completion time per transfer size")
    ax.legend(fontsize=7)
    mfig.tight_layout()
    fig.update_layout(title="Job completion time per total transfer size", barmode="group",
                      yaxis_title="seconds", height=360, **LAYOUT)
    return fig, mfig
