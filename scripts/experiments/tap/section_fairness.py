"""The report's section for `p4scope run fairness --instrument tap`: who
got the DUT's congested egress port over the steady-state window as the
taps saw it, against the DUT's ground truth (tap.shares): the checks per
case, each ingress port's shares (delivered and of the queue) and drops,
the queue as inferred next to the truth's, stacked by ingress port, and
what the clock and the sampling do to the figures (with a sampled run,
what the samples cost in accuracy; with every frame, what they would)."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .. import plotdata as pdt
from .. import report
from . import plots as tp
from . import section_truth as st
from . import shares as sh
from . import truth as tt

CHECK_COLUMNS = {
    "case": "case", "delivered_shares_within_tolerance": "delivered shares",
    "queue_shares_within_tolerance": "queue shares", "peak_within_tolerance": "peak",
    "mean_within_tolerance": "mean", "drops_equal": "drops", "all_pass": "all",
}
SHARE_COLUMNS = {
    "case": "case", "ingress_port": "ingress port", "tap_frames": "frames out, tap",
    "truth_frames": "frames out, truth", "tap_bw_share": "bandwidth share, tap",
    "truth_bw_share": "bandwidth share, truth", "bw_error_pp": "error (pp)",
    "tap_pkt_share": "packet share, tap", "truth_pkt_share": "packet share, truth",
    "pkt_error_pp": "error (pp)", "tap_queue_share": "queue share, tap",
    "truth_queue_share": "queue share, truth", "queue_error_pp": "error (pp)",
    "tap_drops": "dropped, tap", "truth_drops": "dropped, truth", "samples": "samples",
    "bw_standard_error_pp": "standard error (pp)",
}
SAMPLE_INTERVALS_US = (1, 16, 256)
"""Intervals the every-frame statement prices sampling at."""


def section(page: report.Page) -> None:
    run = page.run
    if not run.has("tap_shares"):
        return
    info = run.meta.get("tap", {})
    dut = info.get("dut_title") or "the DUT"
    shares = run.t["tap_shares"]
    err = run.t.get("tap_errors", pd.DataFrame())
    fair = run.t.get("fairness", pd.DataFrame())
    labels = {r["case_id"]: pdt.short_case(r) for _, r in fair.iterrows()} if not fair.empty else {}
    s = page.section("tap_fairness", f"Fairness through {dut}, seen by the taps in its path")
    s.parts.append(_intro(dut, info))
    s.parts.append(statement(info, err))
    if not err.empty:
        s.parts.append(checks(err, labels))
    views = _views(run, labels)
    if views:
        s.parts.append(f"<h3>The congested queue of {report.esc(dut)}</h3>")
        page.plot(s, "tap_fairness_occupancy", tp.web(views, dut, st.REFERENCE_LABEL, True),
                  tp.png(views, dut, st.REFERENCE_LABEL, True))
    t = shares.assign(case=[labels.get(c, c) for c in shares["case_id"]])
    cols = [c for c in SHARE_COLUMNS if c in t and t[c].notna().any()]
    s.parts.append("<h3>Each ingress port's share, the taps' against the truth</h3>"
                   "<details><summary>every case and port</summary>"
                   + report.html_table(t[cols].rename(columns=SHARE_COLUMNS)) + "</details>")
    if run.has("tap_ingress"):
        from .. import plots_png as pp
        from .. import plots_web as pw

        stacks = [sk for c in list(labels)[:4] if (sk := pdt.stacked_by_ingress(
            run.rows("tap_ingress"), c, labels.get(c, c))) is not None]
        if stacks:
            s.parts.append(f"<h3>The queue of {report.esc(dut)} stacked by ingress port (the "
                           "taps' shares)</h3>")
            page.plot(s, "tap_fairness_by_ingress", pw.stacked_by_ingress(stacks),
                      pp.stacked_by_ingress(stacks))


def _views(run: Any, labels: Mapping[str, str]) -> list:
    if not run.has("tap_series"):
        return []
    shown = list(labels)[:4] or sorted(run.t["tap_series"]["case_id"].unique())[:4]
    return [v for c in shown
            if (v := tp.tap_view(run.t["tap_series"], run.t.get("tap_reference"), None, c,
                                 labels.get(c, c))) is not None]


def _intro(dut: str, info: Mapping[str, Any]) -> str:
    every = not info.get("sample_interval_us")
    return report.para(
        f"A p4scope switch running p4src/tap.p4 sits on each link of {report.esc(dut)}, all in "
        "one virtual-time run (the engine's Fabric): each sender's link and the DUT's port "
        "towards the receiver; the DUT's own instrument is off. Over the steady-state window, "
        "each ingress port's share of what the congested port sent "
        + ("is counted from the frames the taps saw leave the DUT, each matched to the frame "
           "that went in (so its ingress port is known); each port's share of the queue is "
           "the inferred occupancy (bytes towards it − bytes out − drops) split by ingress "
           "port, time-weighted; a frame sent towards the DUT and never seen leaving is a drop. "
           if every else
           "is estimated from the taps' samples: the first frame of every "
           f"{info.get('sample_interval_us')} us leaving the DUT, whose source address names "
           "its ingress port. A frame is picked when it is the first to end after an "
           "interval's start, so while the port is busy its chance is its time on the wire: "
           "the fraction of samples from a port estimates its bandwidth share, and weighting "
           "each sample by 1 / its wire bytes its packet-rate share. ")
        + "The reference is the DUT's ground truth: its traffic manager's record of every "
        "enqueue, dequeue and drop of that port.")


def statement(info: Mapping[str, Any], err: pd.DataFrame) -> str:
    """What the clock and the sampling do to the figures, with this run's numbers."""
    def total(col: str) -> int:
        return int(np.nansum(err[col])) if col in err and not err.empty else 0

    def most(col: str) -> float:
        return float(np.nanmax(err[col])) if col in err and err[col].notna().any() else math.nan

    every = not info.get("sample_interval_us")
    head = (
        "<b>Clock and sampling.</b> "
        f"One clock ({report.esc(info.get('clock', 'virtual time'))}): the taps' timestamps "
        "(when a frame's last bit is in) and the DUT's trace are the same nanoseconds, and each "
        "report is moved to the DUT's side of its link: "
        + ("the link's time off, and the time the tap's own port held a frame going in "
           "(store and forward behind a larger frame) added, "
           f"{total('tap_held_frames'):,} frames here, so every frame lands on the "
           "nanosecond the DUT's trace records it. " if every else
           "the link's time off a frame coming out of the DUT, so a sample lands on the "
           "nanosecond the DUT's trace records its frame leaving. ")
        + f"Sample interval: {report.esc(info.get('sampling', 'every frame'))}: "
        f"{total('reports'):,} reports in all, {total('reports_lost'):,} lost "
        f"({total('collector_drops'):,} dropped at a tap's collector port). ")
    if every:
        return report.para(head + "Every frame is counted, so the shares are exact (the bar, "
                           f"{sh.SHARE_TOL_PP:g} pp, allows nothing for sampling); "
                           + _sampling_cost(err))
    k = err["samples"].to_numpy(float) if "samples" in err else np.array([])
    n = int(err["n"].max()) if "n" in err and not err.empty else 2
    need = samples_needed(1.0 / max(n, 2))
    interval = float(info.get("sample_interval_us") or 1)
    return report.para(
        head + f"Sampled, a case has {np.nanmedian(k) if k.size else math.nan:,.0f} samples "
        "of the congested port in its window (median); a share p estimated from k samples has "
        "a standard error of sqrt(p (1 − p) / k): at most "
        f"{most('bw_standard_error_max_pp'):.2f} pp here, and the largest error against the "
        f"truth was {most('delivered_share_error_pp'):.2f} pp (the packet-rate share's "
        "estimate is noisier: it weighs each sample by 1 / its size, and the small frames, "
        "rarely picked, weigh most). For the bar "
        f"({sh.SHARE_TOL_PP:g} pp) to hold at three standard errors a 1/{n} share needs "
        f"{need:,} samples: a window of {need * interval / 1000:,.1f} ms at this interval. "
        "The queue's occupancy, its shares and the drops are not inferred from samples (no "
        "verdict).")


def samples_needed(p: float, errors: float = 3.0) -> int:
    """Samples for a share p to be within SHARE_TOL_PP at `errors`
    standard errors: errors² p (1 − p) / tolerance²."""
    return math.ceil(errors ** 2 * p * (1 - p) / (sh.SHARE_TOL_PP / 100) ** 2)


def _sampling_cost(err: pd.DataFrame) -> str:
    """What sampling every 2^n us would cost over this run's window: the
    standard error of a 1/N share."""
    if err.empty or "window_end_ns" not in err:
        return ""
    r = err.iloc[0]
    window_us = (float(r["window_end_ns"]) - float(r["window_start_ns"])) / 1000
    n = int(err["n"].max()) if "n" in err else 2
    p = 1.0 / max(n, 2)
    costs = "; ".join(f"every {i} us: {int(window_us // i):,} samples, "
                      f"{sh.standard_error_pp(p, int(window_us // i)):.1f} pp"
                      for i in SAMPLE_INTERVALS_US if window_us // i >= 1)
    return (f"sampled instead (--tap-sample-us), the first frame of every interval over this "
            f"{window_us:,.0f} us window would estimate a 1/{n} share with a standard error of "
            f"sqrt(p (1 − p) / samples) ({costs}), and say nothing of the queue.")


def checks(err: pd.DataFrame, labels: Mapping[str, str]) -> str:
    """The bars per case, as a table of verdicts."""
    rows = "".join(
        "<tr>" + f"<td>{report.esc(labels.get(r['case_id'], r['case_id']))}</td>"
        + "".join(f"<td>{report.verdict(tt.state(r.get(c)))}</td>" for c in list(CHECK_COLUMNS)[1:])
        + "</tr>" for _, r in err.iterrows())
    head = "".join(f"<th>{report.esc(v)}</th>" for v in CHECK_COLUMNS.values())
    passed = int(err["all_pass"].map(lambda v: tt.state(v) is True).sum())
    return ("<h3>Checks per case: the taps against the DUT's truth</h3>"
            + report.para(f"{passed} of {len(err)} cases pass every bar: delivered shares "
                          f"(bandwidth and packet rate) and the queue's shares within "
                          f"{sh.SHARE_TOL_PP:g} pp, the queue's peak and time-weighted mean "
                          f"within {100 * tt.PEAK_TOL_REL:g} % or {tt.PEAK_TOL_FRAMES} frame, "
                          "each port's drops equal (n/a: sampled reports do not give it).")
            + f'<table class="data"><tr>{head}</tr>{rows}</table>')
