"""The report's plots as PNG files (matplotlib, no display needed).

Each function draws prepared data (plotdata) into a new figure and
returns it; the report saves and closes it.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib import colors as mcolors  # noqa: E402

from . import plotdata as pdt  # noqa: E402

plt.rcParams.update({
    "figure.dpi": 110, "savefig.dpi": 110, "axes.grid": True, "grid.alpha": 0.3,
    "axes.spines.top": False, "axes.spines.right": False, "font.size": 9,
    "axes.titlesize": 9.5, "legend.fontsize": 8, "legend.frameon": False,
})

SIZE_CMAP = plt.get_cmap("viridis")


def _size_norm(sizes: Sequence[float]) -> mcolors.Normalize:
    lo, hi = min(sizes), max(sizes)
    return mcolors.LogNorm(vmin=lo, vmax=hi if hi > lo else lo * 1.01)


def _grid(n: int, ncols: int, w: float = 4.2, h: float = 2.9):
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _figure_legend(fig: plt.Figure, axes: list) -> None:
    """One legend for all panels, under the title."""
    handles, labels = {}, {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                labels[lab] = lab
                handles[lab] = h
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    if handles:
        fig.legend(list(handles.values()), list(labels.values()), loc="upper center",
                   bbox_to_anchor=(0.5, 0.955), ncol=min(4, len(handles)), fontsize=8)


def _marker(i: int) -> str:
    return ["o", "s", "D", "v", "P", "X"][i % 6]


def absorption_vs_size(micro: pd.DataFrame) -> plt.Figure:
    """Buffered MB per frame size, measured (Tolly formula) over what the
    configured buffer predicts, and the difference in percent. Where
    profiles or port combinations measure the same, their markers sit on
    top of each other: the first profile filled, the others as rings."""
    fig, (a_mb, a_err) = plt.subplots(1, 2, figsize=(11.5, 3.9),
                                      gridspec_kw={"width_ratios": [1.35, 1]})
    for scen, t in pdt.absorption_theory(micro):
        a_mb.plot(t["frame_size"], t["expected_mb"], "-" if scen == "2:1" else "--",
                  color="#bbbbbb", lw=5, alpha=0.7, zorder=1,
                  label=f"configured buffer, {scen} (theory)")
    groups, ncombos = pdt.absorption_groups(micro)
    for gr in groups:
        g, ci, pi, col = gr.rows, gr.combo_index, gr.profile_index, gr.color
        # dodge: each combination a little to the side, so equal values stay visible
        x = g["frame_size"] * (1 + 0.045 * (ci - (ncombos - 1) / 2))
        style = dict(marker=_marker(ci), ms=5 if pi == 0 else 9, ls="none", color=col,
                     mfc=col if pi == 0 else "none", mew=1.3, zorder=3 + (pi == 0),
                     label=gr.label)
        a_mb.plot(x, g["buffered_mb"], **style)
        a_err.plot(x, g["error_rel"] * 100, **style)
    a_err.axhspan(-2, 2, color="#2e7d32", alpha=0.08, label="±2%")
    a_err.axhline(0, color="black", lw=0.7)
    lim = max(2.5, float(np.nanmax(np.abs(micro["error_rel"]))) * 100 * 1.3)
    a_err.set_ylim(-lim, lim)
    for ax in (a_mb, a_err):
        ax.set_xscale("log")
        ax.set_xlabel("frame size (bytes)")
        sizes = sorted(micro["frame_size"].unique())
        ticks = [s for s in sizes if s in (64, 128, 256, 512, 1024, 1518, 2048, 4096, 9216)] or sizes
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(int(s)) for s in ticks], rotation=45)
        ax.minorticks_off()
    a_mb.set_ylabel("buffered (MB = 2^20 B)")
    a_mb.set_title("Microburst absorption: buffered = forwarded − N")
    a_err.set_ylabel("measured − configured (%)")
    a_err.set_title("Against the configured buffer")
    handles, labels = a_mb.get_legend_handles_labels()
    h2, l2 = a_err.get_legend_handles_labels()
    handles += [h for h, lab in zip(h2, l2) if lab == "±2%"]
    labels += ["±2%"] if "±2%" in l2 else []
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7.5)
    return fig


def burst_occupancy_grid(panels: list[pdt.Panel]) -> plt.Figure:
    """Queue occupancy over time during each burst: one panel per scenario,
    combination and profile, one line per frame size."""
    sizes = [s for p in panels for _, s in p.lines] or [64.0]
    norm = _size_norm(sizes)
    fig, axes = _grid(len(panels), 2, 5.2, 3.0)
    for ax, p in zip(axes, panels):
        for s, size in p.lines:
            ax.plot(s.t_us, s.mb, color=SIZE_CMAP(norm(size)), lw=1.0)
        ax.set_title(p.title)
        ax.set_xlabel("time since the first frame was queued (µs)")
        ax.set_ylabel("queue occupancy (MB)")
    sm = plt.cm.ScalarMappable(norm=norm, cmap=SIZE_CMAP)
    fig.tight_layout(rect=(0, 0, 0.93, 1))
    cax = fig.add_axes((0.945, 0.15, 0.012, 0.7))
    cb = fig.colorbar(sm, cax=cax)
    cb.set_label("frame size (bytes)")
    return fig


def instrument_vs_truth(views: list[pdt.InstrumentView]) -> plt.Figure:
    """The instrument's occupancy samples over the true occupancy, with the
    burst start and end each found."""
    fig, axes = _grid(len(views), 3, 4.3, 2.9)
    for ax, v in zip(axes, views):
        ax.plot(v.truth.t_us, v.truth.mb, color="#333333", lw=1.1, label="ground truth")
        if v.iv_us.size:
            ax.step(v.iv_us, v.iv_mb, where="post", color="#2a9d8f", lw=1.0,
                    label="instrument: interval maxima (held just before a dequeue)")
        if v.t_us.size:
            ax.plot(v.t_us, v.mb, ".", color="#e07a1f", ms=2.0,
                    label="instrument: burst packets (held just before each left)")
        if v.case_max_mb is not None:
            ax.axhline(v.case_max_mb, color="#e07a1f", ls="--", lw=1.2,
                       label="instrument: peak (register, over P4Runtime)")
        for _, b in v.bursts.iterrows():
            ls = "-" if b["source"] == "truth" else "--"
            col = "#333333" if b["source"] == "truth" else "#e07a1f"
            for c in ("start_us", "end_us"):
                if c in b and not pd.isna(b[c]):
                    ax.axvline(b[c], color=col, ls=ls, lw=0.8, alpha=0.8)
        ax.set_title(v.truth.label)
        ax.set_xlabel("time (µs)")
        ax.set_ylabel("occupancy (MB)")
    fig.suptitle("Instrument vs ground truth (vertical lines: burst start/end; solid truth, "
                 "dashed instrument)", fontsize=9.5)
    _figure_legend(fig, axes)
    return fig


def queue_heatmap(h: pdt.Heatmap, title: str) -> plt.Figure:
    height = max(2.5, 0.16 * len(h.rows) + 1.2)
    fig, ax = plt.subplots(figsize=(11, height))
    m = ax.pcolormesh(h.edges_us, np.arange(len(h.rows) + 1), h.mb, cmap="magma_r",
                      shading="flat", vmin=0)
    ax.set_yticks(np.arange(len(h.rows)) + 0.5)
    ax.set_yticklabels(h.rows, fontsize=6.5 if len(h.rows) > 30 else 8)
    for b in h.breaks:
        ax.axhline(b, color="white", lw=1.5)
    ax.invert_yaxis()
    ax.grid(False)
    ax.set_xlabel("time since the case's first queued frame (µs)")
    ax.set_title(title)
    cb = fig.colorbar(m, ax=ax, pad=0.01, fraction=0.03, aspect=30)
    cb.set_label("occupancy (MB), max per bin")
    fig.tight_layout()
    return fig


def stacked_by_ingress(stacks: list[pdt.Stack]) -> plt.Figure:
    """Occupancy of the congested queue, stacked by the ingress port its
    frames came from."""
    fig, axes = _grid(len(stacks), 2, 5.2, 3.0)
    cmap = plt.get_cmap("tab20")
    for ax, s in zip(axes, stacks):
        cols = [cmap(i % 20) for i in range(len(s.ports))]
        ax.stackplot(s.t_us, s.mb, labels=[f"port {p}" for p in s.ports], colors=cols, lw=0)
        ax.set_title(s.label)
        ax.set_xlabel("time (µs)")
        ax.set_ylabel("occupancy (MB)")
        if len(s.ports) <= 8:
            ax.legend(loc="upper right", ncol=2, fontsize=7)
    fig.tight_layout()
    return fig


def share_bars(cases: list[pdt.ShareCase], title: str) -> plt.Figure:
    """Bandwidth share vs packet-rate share per stream, the instrument's
    bandwidth share as a marker, 1/N as a line."""
    fig, axes = _grid(len(cases), 2, 5.6 if max(c.n for c in cases) > 8 else 4.4, 2.8)
    for ax, c in zip(axes, cases):
        x = np.arange(len(c.ports))
        col = pdt.profile_color(c.profile)
        ax.bar(x - 0.2, c.bw * 100, 0.4, color=col, label="bandwidth share")
        ax.bar(x + 0.2, c.pkt * 100, 0.4, color=col, alpha=0.4, hatch="//", edgecolor=col,
               label="packet-rate share")
        if c.instr_bw is not None:
            ax.plot(x - 0.2, c.instr_bw * 100, "k_", ms=9, mew=1.6, label="instrument (bandwidth)")
        ax.axhline(100 / c.n, color="black", lw=0.8, ls=":", label="1/N")
        ax.set_xticks(x)
        ax.set_xticklabels([str(p) for p in c.ports], fontsize=7 if c.n > 8 else 8)
        ax.set_xlabel("source port")
        ax.set_ylabel("share (%)")
        ax.set_title(f"{c.label} · {c.profile} · Jain {c.jain:.3f}")
    fig.suptitle(title, fontsize=10)
    _figure_legend(fig, axes)
    return fig


def fairness_index(fair: pd.DataFrame) -> plt.Figure:
    """Jain's index per case and profile, with the 0.99 bar."""
    key = fair["n"].astype(int).astype(str) + ":1 " + fair["combination"].map(pdt.combo_short)
    labels = pdt.ordered(key)
    profiles = pdt.ordered(fair["profile"])
    fig, ax = plt.subplots(figsize=(max(6, 0.75 * len(labels) + 2), 3.4))
    x = np.arange(len(labels))
    w = 0.8 / max(1, len(profiles))
    for i, prof in enumerate(profiles):
        d = fair[fair["profile"] == prof].assign(key=key).set_index("key")["jain_bw"]
        ax.bar(x + (i - (len(profiles) - 1) / 2) * w, [d.get(k, np.nan) for k in labels], w,
               color=pdt.profile_color(prof, profiles), label=prof)
    ax.axhline(0.99, color="black", ls=":", lw=0.9, label="0.99")
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("Jain's index (bandwidth)")
    ax.set_title("Fairness per port combination (source ports → 31)", pad=22)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(profiles) + 1,
              fontsize=8)
    fig.tight_layout()
    return fig


def instrument_errors(errors: pd.DataFrame, shares: Optional[pd.DataFrame],
                      clock_step_ns: int = 1) -> plt.Figure:
    """Peak occupancy measured vs true (scatter and relative error per case),
    burst start and end errors (a band of one clock step below 0 when the
    instrument's clock counts coarser steps than ns) and the per-ingress
    share errors."""
    fig, axs = plt.subplots(2, 2, figsize=(12.5, 7.6))
    a, c, d_ax, b = axs[0, 0], axs[0, 1], axs[1, 0], axs[1, 1]
    profiles = pdt.ordered(errors["profile"])
    scale, unit = pdt.peak_scale(errors)
    for prof in profiles:
        d = errors[errors["profile"] == prof]
        a.plot(d["peak_truth"] / scale, d["peak_instrument"] / scale, "o", ms=4,
               color=pdt.profile_color(prof, profiles), label=prof, alpha=0.8)
    hi = float(np.nanmax(errors[["peak_truth", "peak_instrument"]].to_numpy(float))) / scale \
        if not errors.empty else 1.0
    xs = np.array([0, hi * 1.05])
    a.plot(xs, xs, "k-", lw=0.8, label="equal")
    a.fill_between(xs, xs * 0.95, xs * 1.05, color="gray", alpha=0.15, label="±5%")
    a.set_xlabel(f"true peak occupancy ({unit})")
    a.set_ylabel(f"instrument's peak ({unit})")
    a.set_title("Peak occupancy per case")
    a.legend(loc="upper left")
    # relative peak error per case, cases in run order, experiments apart
    labels = [pdt.case_short(cid) for cid in errors["case_id"]]
    x = np.arange(len(errors))
    for prof in profiles:
        m = (errors["profile"] == prof).to_numpy()
        c.plot(x[m], errors["peak_error_rel"].to_numpy(float)[m] * 100, "o", ms=3.5,
               color=pdt.profile_color(prof, profiles), label=prof)
    c.axhspan(-5, 5, color="gray", alpha=0.15)
    c.axhline(0, color="black", lw=0.7)
    lim = max(6.0, float(np.nanmax(np.abs(errors["peak_error_rel"]))) * 100 * 1.2) \
        if errors["peak_error_rel"].notna().any() else 6.0
    c.set_ylim(-lim, lim)
    c.set_ylabel("peak error (%)")
    c.set_title("Instrument's peak − true peak (band ±5%)")
    _sparse_ticks(c, x, labels)
    # burst start and end
    st = errors["start_error_ns"].to_numpy(float)
    en = errors["end_error_ns"].to_numpy(float)
    for prof in profiles:
        m = (errors["profile"] == prof).to_numpy()
        col = pdt.profile_color(prof, profiles)
        d_ax.plot(x[m], st[m], "o", ms=3.5, color=col, label=f"{prof}: start")
        d_ax.plot(x[m], en[m], "x", ms=4.5, color=col, label=f"{prof}: end")
    d_ax.axhline(0, color="black", lw=0.7)
    if clock_step_ns > 1:  # times rounded down to the clock's step
        d_ax.axhspan(-clock_step_ns, 0, color="gray", alpha=0.15)
        d_ax.set_ylabel(f"instrument − truth (ns; band: {clock_step_ns:,} ns clock step)")
    else:
        d_ax.set_ylabel("instrument − truth (ns)")
    title = "Burst start (o) and end (x)"
    if "end_truth_ns" in errors:
        ended = ~np.isnan(errors["end_truth_ns"].to_numpy(float))
        missed = int(np.sum(ended & np.isnan(en)))
        title += f"; of {int(ended.sum())} bursts that ended, the instrument saw {int(ended.sum()) - missed} end"
    d_ax.set_title(title, fontsize=9)
    _sparse_ticks(d_ax, x, labels)
    if shares is not None and not shares.empty:
        cases = pdt.ordered(shares["case_id"])
        for i, cid in enumerate(cases):
            d = shares[shares["case_id"] == cid]
            prof = d["profile"].iloc[0]
            b.plot(np.full(len(d), i), d["err_pp_bw"], "o", ms=3,
                   color=pdt.profile_color(prof, profiles), alpha=0.75)
        b.axhspan(-1, 1, color="gray", alpha=0.15)
        b.set_ylim(-1.5, 1.5)
        _sparse_ticks(b, np.arange(len(cases)), [pdt.case_short(cid) for cid in cases])
        b.set_ylabel("share error (percentage points)")
        b.set_title("Per-ingress bandwidth share − truth (band ±1 pp)")
    else:
        b.set_visible(False)
    fig.tight_layout()
    return fig


def _sparse_ticks(ax, x: np.ndarray, labels: list[str], most: int = 24) -> None:
    step = max(1, int(np.ceil(len(labels) / most)))
    ax.set_xticks(x[::step])
    ax.set_xticklabels(labels[::step], rotation=70, ha="right", fontsize=6.5)
