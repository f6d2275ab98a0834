"""The report's interactive plots (plotly), drawn from the same prepared
data as the PNGs (plotdata)."""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly import colors as pcolors
from plotly.colors import sample_colorscale
from plotly.subplots import make_subplots

from . import plotdata as pdt

LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=50, b=50),
              font=dict(size=11), legend=dict(font=dict(size=10)))


def subplot_lines(fig: go.Figure, lines: list[tuple[str, float, int, int, dict]],
                  labels: Sequence[tuple[float, int, int, str]] = ()) -> None:
    """Straight lines on subplots of a make_subplots figure, each (axis,
    value, row, col, line style): axis "x" a vertical line at x = value
    over the subplot's height, "y" a horizontal one over its width; and
    `labels` (x, row, col, text) at the top of their subplot, right of x.
    All added in one layout update, where add_vline/add_hline look
    through every subplot for each line (~20 ms a line: a second for a
    report's fifty; 13 s for a lag-failover run's 64 labelled events)."""
    def refs(row: int, col: int) -> tuple[str, str]:
        sp = fig.get_subplot(row, col)
        return "x" + sp.xaxis.plotly_name[5:], "y" + sp.yaxis.plotly_name[5:]

    shapes = list(fig.layout.shapes)
    for axis, value, row, col, style in lines:
        xref, yref = refs(row, col)
        if axis == "x":
            shapes.append(dict(type="line", xref=xref, yref=f"{yref} domain", x0=value, x1=value,
                               y0=0, y1=1, line=style))
        else:
            shapes.append(dict(type="line", xref=f"{xref} domain", yref=yref, x0=0, x1=1,
                               y0=value, y1=value, line=style))
    notes = list(fig.layout.annotations)
    for x, row, col, text in labels:
        xref, yref = refs(row, col)
        notes.append(dict(x=x, y=1, xref=xref, yref=f"{yref} domain", text=text,
                          showarrow=False, xanchor="left", yanchor="top", font=dict(size=9)))
    fig.update_layout(shapes=shapes, annotations=notes)


def _size_color(size: float, lo: float, hi: float) -> str:
    if hi <= lo:
        return sample_colorscale("Viridis", [0.5])[0]
    f = (math.log(size) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return sample_colorscale("Viridis", [min(max(f, 0.0), 1.0)])[0]


def absorption_vs_size(micro: pd.DataFrame) -> go.Figure:
    """Measured buffer in use over the configured buffer, and the error."""
    fig = make_subplots(rows=1, cols=2, column_widths=[0.57, 0.43], subplot_titles=(
        "buffered = forwarded − N (MB = 2^20 B)", "measured − configured (%)"))
    symbols = ["circle", "square", "diamond", "triangle-down", "cross", "x"]
    for scen, t in pdt.absorption_theory(micro):
        fig.add_trace(go.Scatter(x=t["frame_size"], y=t["expected_mb"], mode="lines",
                                 name=f"configured buffer, {scen} (theory)",
                                 line=dict(color="rgba(150,150,150,0.45)", width=9,
                                           dash="solid" if scen == "2:1" else "dash")), 1, 1)
    for gr in pdt.absorption_groups(micro)[0]:
        g, ci, pi, col, name = gr.rows, gr.combo_index, gr.profile_index, gr.color, gr.label
        marker = dict(symbol=symbols[ci % len(symbols)] + ("" if pi == 0 else "-open"),
                      size=7 if pi == 0 else 12, color=col, line=dict(width=1.5, color=col))
        for c, y in ((1, g["buffered_mb"]), (2, g["error_rel"] * 100)):
            fig.add_trace(go.Scatter(x=g["frame_size"], y=y, name=name, legendgroup=name,
                                     showlegend=c == 1, mode="markers", marker=marker,
                                     text=g["case_id"]), 1, c)
    fig.add_hrect(y0=-2, y1=2, fillcolor="green", opacity=0.08, line_width=0, row=1, col=2)
    fig.update_xaxes(type="log", title="frame size (bytes)")
    lim = max(2.5, float(np.nanmax(np.abs(micro["error_rel"]))) * 130)
    fig.update_yaxes(range=[-lim, lim], row=1, col=2)
    fig.update_layout(height=440, title="Microburst absorption", **LAYOUT)
    fig.update_layout(margin=dict(t=80))
    return fig


def burst_occupancy(panels: list[pdt.Panel]) -> go.Figure:
    """All panels in one figure, one shown at a time through a dropdown."""
    fig = go.Figure()
    sizes = [s for p in panels for _, s in p.lines] or [64.0]
    lo, hi = min(sizes), max(sizes)
    spans: list[tuple[int, int]] = []
    for p in panels:
        first = len(fig.data)
        for s, size in p.lines:
            fig.add_trace(go.Scatter(x=s.t_us, y=s.mb, name=s.label, mode="lines",
                                     line=dict(color=_size_color(size, lo, hi), width=1.3),
                                     visible=not spans))
        spans.append((first, len(fig.data)))
    buttons = []
    for p, (a, b) in zip(panels, spans):
        vis = [a <= i < b for i in range(len(fig.data))]
        buttons.append(dict(label=p.title, method="update",
                            args=[{"visible": vis}, {"title": f"Queue occupancy: {p.title}"}]))
    fig.update_layout(
        height=480, title=dict(text=f"Queue occupancy: {panels[0].title}" if panels else "",
                               y=0.97),
        xaxis_title="time since the first frame was queued (µs)",
        yaxis_title="queue occupancy (MB)",
        updatemenus=[dict(buttons=buttons, x=1.0, xanchor="right", y=1.13, yanchor="top")]
        if len(panels) > 1 else [], **LAYOUT)
    fig.update_layout(margin=dict(t=90))
    return fig


def instrument_vs_truth(views: list[pdt.InstrumentView]) -> go.Figure:
    ncols = min(3, max(1, len(views)))
    nrows = math.ceil(len(views) / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=[v.truth.label for v in views],
                        horizontal_spacing=0.06, vertical_spacing=0.12)
    lines = []
    for i, v in enumerate(views):
        r, c = i // ncols + 1, i % ncols + 1
        fig.add_trace(go.Scatter(x=v.truth.t_us, y=v.truth.mb, name="ground truth",
                                 legendgroup="t", showlegend=i == 0, mode="lines",
                                 line=dict(color="#333333", width=1.2)), r, c)
        if v.iv_us.size:
            fig.add_trace(go.Scatter(x=v.iv_us, y=v.iv_mb, name="instrument: interval maxima (held just before a dequeue)",
                                     legendgroup="iv", showlegend=i == 0, mode="lines",
                                     line=dict(color="#2a9d8f", width=1, shape="hv")), r, c)
        if v.t_us.size:
            fig.add_trace(go.Scattergl(x=v.t_us, y=v.mb, name="instrument: burst packets (held just before each left)",
                                       legendgroup="i",
                                       showlegend=i == 0, mode="markers",
                                       marker=dict(color="#e07a1f", size=3)), r, c)
        if v.case_max_mb is not None:
            fig.add_trace(go.Scatter(x=[v.truth.t_us[0], v.truth.t_us[-1]],
                                     y=[v.case_max_mb, v.case_max_mb], mode="lines",
                                     name="instrument: peak (register)", legendgroup="cm",
                                     showlegend=i == 0,
                                     line=dict(color="#e07a1f", dash="dash")), r, c)
        for _, b in v.bursts.iterrows():
            for col in ("start_us", "end_us"):
                if col in b and not pd.isna(b[col]):
                    truth = b["source"] == "truth"
                    lines.append(("x", b[col], r, c, dict(
                        width=1, dash="solid" if truth else "dash",
                        color="#333333" if truth else "#e07a1f")))
    subplot_lines(fig, lines)
    fig.update_xaxes(title="time (µs)")
    fig.update_yaxes(title="MB")
    fig.update_layout(height=300 * nrows + 60,
                      title="Instrument vs ground truth (lines: burst start/end)", **LAYOUT)
    return fig


def queue_heatmap(h: pdt.Heatmap, title: str) -> go.Figure:
    centers = (h.edges_us[:-1] + h.edges_us[1:]) / 2
    fig = go.Figure(go.Heatmap(z=h.mb, x=centers, y=h.rows, colorscale="Magma", reversescale=True,
                               zmin=0, colorbar=dict(title="MB")))
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(height=max(300, 14 * len(h.rows) + 120), title=title,
                      xaxis_title="time since the case's first queued frame (µs)", **LAYOUT)
    fig.update_layout(margin=dict(l=260))
    return fig


def stacked_by_ingress(stacks: list[pdt.Stack]) -> go.Figure:
    ncols = min(2, max(1, len(stacks)))
    nrows = math.ceil(len(stacks) / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=[s.label for s in stacks],
                        vertical_spacing=0.12)
    palette = pcolors.qualitative.Light24
    for i, s in enumerate(stacks):
        r, c = i // ncols + 1, i % ncols + 1
        for j, p in enumerate(s.ports):
            col = palette[j % len(palette)]
            fig.add_trace(go.Scatter(x=s.t_us, y=s.mb[j], name=f"port {p}", stackgroup=f"s{i}",
                                     mode="lines", line=dict(width=0.5, color=col),
                                     fillcolor=col, showlegend=False,
                                     hovertemplate=f"port {p}: %{{y:.3f}} MB<extra></extra>"), r, c)
    fig.update_xaxes(title="time (µs)")
    fig.update_yaxes(title="MB")
    fig.update_layout(height=300 * nrows + 60,
                      title="Occupancy stacked by ingress port (hover for the port)", **LAYOUT)
    return fig


def share_bars(cases: list[pdt.ShareCase], title: str) -> go.Figure:
    ncols = 2
    nrows = math.ceil(len(cases) / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, vertical_spacing=min(0.08, 0.5 / max(nrows, 1)),
                        subplot_titles=[f"{c.label} · {c.profile} · Jain {c.jain:.3f}" for c in cases])
    for i, c in enumerate(cases):
        r, col = i // ncols + 1, i % ncols + 1
        color = pdt.profile_color(c.profile)
        x = [str(p) for p in c.ports]
        fig.add_trace(go.Bar(x=x, y=c.bw * 100, name="bandwidth share", legendgroup="bw",
                             showlegend=i == 0, marker_color=color), r, col)
        fig.add_trace(go.Bar(x=x, y=c.pkt * 100, name="packet-rate share", legendgroup="pkt",
                             showlegend=i == 0, marker=dict(color=color, opacity=0.45,
                                                            pattern_shape="/")), r, col)
        if c.instr_bw is not None:
            fig.add_trace(go.Scatter(x=x, y=c.instr_bw * 100, name="instrument (bandwidth)",
                                     legendgroup="ins", showlegend=i == 0, mode="markers",
                                     marker=dict(symbol="line-ew", size=14, color="black",
                                                 line=dict(width=2))), r, col)
    subplot_lines(fig, [("y", 100 / c.n, i // ncols + 1, i % ncols + 1, dict(dash="dot", width=1))
                        for i, c in enumerate(cases)])
    fig.update_xaxes(type="category", title="source port")
    fig.update_yaxes(title="share (%)")
    fig.update_layout(height=260 * nrows + 80, title=title, barmode="group", **LAYOUT)
    return fig


def instrument_errors(errors: pd.DataFrame, shares: Optional[pd.DataFrame]) -> go.Figure:
    scale, unit = pdt.peak_scale(errors)
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        f"peak occupancy: instrument vs truth ({unit})", "per-ingress share error (pp)"))
    profiles = pdt.ordered(errors["profile"])
    for prof in profiles:
        d = errors[errors["profile"] == prof]
        fig.add_trace(go.Scatter(x=d["peak_truth"] / scale, y=d["peak_instrument"] / scale,
                                 text=d["case_id"], mode="markers", name=prof,
                                 marker=dict(color=pdt.profile_color(prof, profiles))), 1, 1)
    hi = float(np.nanmax(errors[["peak_truth", "peak_instrument"]].to_numpy(float))) / scale \
        if not errors.empty else 1.0
    fig.add_trace(go.Scatter(x=[0, hi], y=[0, hi], mode="lines", name="equal",
                             line=dict(color="black", width=1)), 1, 1)
    if shares is not None and not shares.empty:
        for prof in profiles:
            d = shares[shares["profile"] == prof]
            fig.add_trace(go.Scatter(x=d["case_id"], y=d["err_pp_bw"], mode="markers",
                                     name=f"{prof} shares", text=d["ingress_port"],
                                     marker=dict(color=pdt.profile_color(prof, profiles), size=5)),
                          1, 2)
        fig.add_hrect(y0=-1, y1=1, fillcolor="gray", opacity=0.15, line_width=0, row=1, col=2)
        fig.update_xaxes(showticklabels=False, row=1, col=2)
    fig.update_layout(height=420, title="The instrument against ground truth", **LAYOUT)
    return fig


def fairness_index(fair: pd.DataFrame) -> go.Figure:
    key = fair["n"].astype(int).astype(str) + ":1 " + fair["combination"].map(pdt.combo_short)
    fig = go.Figure()
    profiles = pdt.ordered(fair["profile"])
    for prof in profiles:
        d = fair[fair["profile"] == prof]
        fig.add_trace(go.Bar(x=key[d.index], y=d["jain_bw"], name=prof,
                             marker_color=pdt.profile_color(prof, profiles)))
    fig.add_hline(y=0.99, line_dash="dot")
    fig.update_layout(height=380, barmode="group", title="Jain's index per port combination",
                      yaxis=dict(range=[0, 1.05], title="Jain's index (bandwidth)"), **LAYOUT)
    return fig
