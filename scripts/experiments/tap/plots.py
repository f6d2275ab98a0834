"""The tap's report plots: per case, the DUT's egress queue as the tap
inferred it (a step line, gaps where reports were lost) with the
reference's samples (points) and both bursts' start and end; as an
interactive figure and as a PNG, from the stored tables only."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd

from .. import figures as fg

KB = 1000.0
MAX_POINTS = 4000
"""Per series drawn (figures.reduce_series keeps every peak and trough)."""
TAP_COLOR, REF_COLOR = "#e07a1f", "#333333"
QDISC = "the qdisc's backlog (sampled)"
"""The reference's name in the legend and title (Mininet: the qdisc)."""
LINE_COLOR = "#b0b0b0"


@dataclass
class TapView:
    label: str
    t_ms: np.ndarray
    kb: np.ndarray
    ref_ms: np.ndarray
    ref_kb: np.ndarray
    marks: list[tuple[str, float]]
    """(source, time in ms) of every burst start and end."""


def tap_view(series: pd.DataFrame, reference: Optional[pd.DataFrame], bursts: Optional[pd.DataFrame],
             case_id: str, label: str) -> Optional[TapView]:
    """A case's congested port: times in ms since its first inferred change."""
    d = series[series["case_id"] == case_id]
    if d.empty:
        return None
    port = d.groupby("egress_port")["occupancy_bytes"].max().idxmax()
    d = d[d["egress_port"] == port].sort_values("t_ns", kind="stable")
    t0 = float(d["t_ns"].iloc[0])
    rt = rv = np.array([])
    if reference is not None and not reference.empty:
        r = reference[(reference["case_id"] == case_id) & (reference["egress_port"] == port)]
        t1 = float(d["t_ns"].iloc[-1])
        margin = max(0.1 * (t1 - t0), 10e6)  # the reference goes on while the receiver waits
        r = r[(r["t_ns"] >= t0 - margin) & (r["t_ns"] <= t1 + margin)]
        rt = (r["t_ns"].to_numpy(float) - t0) / 1e6
        rv = r["backlog_bytes"].to_numpy(float) / KB
    marks: list[tuple[str, float]] = []
    if bursts is not None and not bursts.empty:
        b = bursts[(bursts["case_id"] == case_id) & (bursts["egress_port"] == port)]
        for row in b.itertuples():
            for t in (row.start_ns, row.end_ns):
                if not pd.isna(t):
                    marks.append((row.source, (float(t) - t0) / 1e6))
    t_ms, kb = fg.reduce_series((d["t_ns"].to_numpy(float) - t0) / 1e6,
                                d["occupancy_bytes"].to_numpy(float) / KB, MAX_POINTS)
    rt, rv = fg.reduce_series(rt, rv, MAX_POINTS)
    return TapView(label, t_ms, kb, rt, rv, marks)


def web(views: list[TapView], dut: str, reference: str = QDISC, reference_line: bool = False):
    """Plotly: one panel per case; the reference as points (samples) or,
    with `reference_line`, as a wide grey step line under the tap's."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from ..plots_web import LAYOUT

    ncols = min(2, max(1, len(views)))
    nrows = math.ceil(len(views) / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=[v.label for v in views],
                        vertical_spacing=min(0.12, 0.6 / max(nrows, 1)))
    for i, v in enumerate(views):
        r, c = i // ncols + 1, i % ncols + 1
        if v.ref_ms.size and reference_line:
            fig.add_trace(go.Scatter(x=v.ref_ms, y=v.ref_kb, name=f"reference: {reference}",
                                     legendgroup="ref", showlegend=i == 0, mode="lines",
                                     line=dict(color=LINE_COLOR, width=5, shape="hv")), r, c)
        fig.add_trace(go.Scatter(x=v.t_ms, y=v.kb, name="tap: inferred (bytes in − bytes out − drops)",
                                 legendgroup="tap", showlegend=i == 0, mode="lines",
                                 line=dict(color=TAP_COLOR, width=1.3, shape="hv"),
                                 connectgaps=False), r, c)
        if v.ref_ms.size and not reference_line:
            fig.add_trace(go.Scatter(x=v.ref_ms, y=v.ref_kb, name=f"reference: {reference}",
                                     legendgroup="ref", showlegend=i == 0, mode="markers",
                                     marker=dict(color=REF_COLOR, size=5)), r, c)
        for source, t in v.marks:
            fig.add_vline(x=t, row=r, col=c, line_width=1,
                          line_dash="dash" if source == "tap" else "solid",
                          line_color=TAP_COLOR if source == "tap" else REF_COLOR)
    fig.update_xaxes(title="time since the first frame the tap saw (ms)")
    fig.update_yaxes(title="occupancy (kB)")
    fig.update_layout(height=320 * nrows + 80,
                      title=f"The egress queue of {dut}: inferred by the tap vs {reference} "
                            "(lines: burst start/end; dashed tap, solid reference)", **LAYOUT)
    return fig


def png(views: list[TapView], dut: str, reference: str = QDISC, reference_line: bool = False):
    """Matplotlib: the same panels."""
    from ..plots_png import _figure_legend, _grid

    fig, axes = _grid(len(views), 2, 5.2, 3.0)
    for ax, v in zip(axes, views):
        if v.ref_ms.size and reference_line:
            ax.step(v.ref_ms, v.ref_kb, where="post", color=LINE_COLOR, lw=4,
                    label=f"reference: {reference}")
        ax.step(v.t_ms, v.kb, where="post", color=TAP_COLOR, lw=1.1,
                label="tap: inferred (bytes in − bytes out − drops)")
        if v.ref_ms.size and not reference_line:
            ax.plot(v.ref_ms, v.ref_kb, "o", color=REF_COLOR, ms=2.5,
                    label=f"reference: {reference}")
        for source, t in v.marks:
            ax.axvline(t, color=TAP_COLOR if source == "tap" else REF_COLOR,
                       ls="--" if source == "tap" else "-", lw=0.8, alpha=0.8)
        ax.set_title(v.label)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("occupancy (kB)")
    fig.suptitle(f"The egress queue of {dut}: inferred by the tap vs {reference} "
                 "(vertical lines: burst start/end; dashed tap, solid reference)", fontsize=9.5)
    _figure_legend(fig, axes)
    return fig
