"""What the tap's report section (section.py) says when its reference is
the DUT's own ground truth (a virtual-time run, run.json tap.mode
"virtual", microburst/tap_virtual.py) instead of a qdisc sampled with tc:
the set-up, the clock and sampling effects with the run's numbers, the
error table's columns and the checks per case against issue 18's bars."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .. import report
from . import truth as tt

REFERENCE_LABEL = "the DUT's ground truth (its traffic manager's trace)"
ERROR_COLUMNS = {
    "case": "case", "burst_id": "burst", "truth_burst_id": "true burst",
    "peak_tap_bytes": "peak, tap (B)", "peak_reference_bytes": "peak, truth (B)",
    "peak_error_bytes": "peak error (B)", "peak_error_rel": "peak error (rel)",
    "peak_error_frames": "peak error (frames)", "peak_within_tolerance": "peak within tolerance",
    "peak_raw_error_bytes": "peak error on the tap's own clock (B)",
    "mean_tap_bytes": "mean, tap (B)", "mean_reference_bytes": "mean, truth (B)",
    "mean_error_rel": "mean error (rel)",
    "mae_at_samples_bytes": "|tap − truth| at the truth's changes, mean (B)",
    "start_error_ns": "start error (ns)", "end_error_ns": "end error (ns)",
    "time_tolerance_ns": "time tolerance (ns)", "start_within_tolerance": "start within tolerance",
    "end_within_tolerance": "end within tolerance", "share_error_pp": "share error (pp)",
    "shares_within_tolerance": "shares within 1 pp",
    "reports": "reports", "reports_lost": "lost", "lost_reports": "burst touched by lost reports",
}
CHECK_COLUMNS = {
    "case": "case", "peak_within_tolerance": "peak", "start_within_tolerance": "start",
    "end_within_tolerance": "end", "shares_within_tolerance": "shares", "drops_equal": "drops",
    "all_pass": "all",
}


def is_truth(info: Mapping[str, Any]) -> bool:
    """Whether the run's reference is the DUT's own ground truth."""
    return info.get("mode") == "virtual"


def intro(dut: str) -> str:
    return report.para(
        f"A p4scope switch running p4src/tap.p4 sits on each link of {report.esc(dut)}, all in one "
        "virtual-time run (the engine's Fabric): each sender's link, and the DUT's port towards "
        "the receiver. The DUT is the reference DUT with its own traffic-manager profile and "
        "its own instrument off; the taps measure. Each tap reports every frame it passes "
        "(its timestamp, the port, the frame's length and first 64 bytes, and the cumulative "
        "counts of both directions). Per DUT egress port the queue is inferred as bytes sent "
        "towards it − bytes out of it − bytes it dropped: a frame seen leaving is matched to "
        "the frame seen entering with the same first bytes (the tester numbers its frames "
        "within them), and a frame never seen leaving is a DUT drop, counted apart. The "
        "reference is the DUT's ground truth: its traffic manager's record of every enqueue, "
        "dequeue and drop of that port.")


def statement(info: Mapping[str, Any], err: pd.DataFrame) -> str:
    """What the clock and the sampling do to the figures, with this run's numbers."""
    def total(col: str) -> int:
        return int(err.drop_duplicates("case_id")[col].sum()) if col in err and not err.empty else 0

    def most(col: str) -> float:
        return float(np.nanmax(err[col])) if col in err and not err.empty else math.nan

    def worst_abs(col: str) -> float:
        return float(np.nanmax(np.abs(err[col]))) if col in err and err[col].notna().any() else math.nan

    raw = worst_abs("peak_raw_error_bytes")
    return report.para(
        "<b>Clock and sampling.</b> "
        f"One clock ({report.esc(info.get('clock', 'virtual time'))}): the taps' timestamps "
        "(when a frame's last bit is in) and the DUT's trace are the same nanoseconds. "
        f"Sample interval: {report.esc(info.get('sampling', 'every frame'))}, so no change of the "
        f"queue falls between two samples: {total('reports'):,} reports in all, "
        f"{total('reports_lost'):,} lost ({total('collector_drops'):,} dropped at a tap's "
        "collector port, which runs at 400 Gb/s to send a report of every frame of a "
        "100 Gb/s link before the next comes; where reports are lost the series is left "
        "empty, not filled in). "
        "The tap's own delay: a tap forwards as soon as its port towards the DUT is free (the "
        f"most any tap port held was {most('tap_queue_peak_frames'):g} frames), and the link "
        "between it and the DUT takes each frame's bits at the line rate "
        "(and the link's delay): the tap stamps a frame going in a link time before the DUT "
        "has it, and one coming out a link time after the DUT dequeued it. The tap takes that "
        f"time off each report (at most {most('link_ns'):,.0f} ns here, whole ns as the engine "
        f"counts it); on its own clock the peak would be off by up to {raw:,.0f} B. Its port "
        "towards the DUT sends a frame after its stamp when it is still sending the ones "
        "before (store and forward: a small frame behind a larger one; and the engine's "
        "rounding: an idle port starts at a whole nanosecond, the frames behind it follow at "
        f"exact picoseconds; {total('tap_held_frames'):,} frames here), which the tap counts "
        "from its own reports and adds. So every report lands on the nanosecond the DUT's trace records "
        "its frame in or out; what is left is the order within a nanosecond (a frame admitted "
        "in the nanosecond another leaves: the trace holds both for a moment, the tap's series "
        "the nanosecond's last value), which can put the tap's peak one frame lower. Hence "
        f"the bars: peak within {100 * tt.PEAK_TOL_REL:g} % or {tt.PEAK_TOL_FRAMES} frame, "
        f"start and end within {tt.TIME_TOL_FRAMES} frame time, shares (each ingress port's "
        "part of the queue over the true burst, time-weighted) within "
        f"{tt.SHARE_TOL_PP:g} pp, and the drops equal.")


def method() -> str:
    return report.para(
        "Per burst, the tap's paired with the truth's by overlap (same thresholds; the truth "
        "keeps each nanosecond's last value, as the tap's series does): the tap's peak against "
        "the most the DUT's queue held during the true burst (every record), the time-weighted "
        "mean over the true burst of both, the mean difference at the truth's changes, start "
        "and end, the shares, and the peak on the tap's own clock (before the links' time is "
        "taken off). A burst on one side only fails.")


def checks(err: pd.DataFrame, labels: Mapping[str, str]) -> str:
    """The bars per case, as a table of verdicts."""
    ch = tt.case_checks(err)
    if ch.empty:
        return ""
    rows = "".join(
        "<tr>" + f"<td>{report.esc(labels.get(r['case_id'], r['case_id']))}</td>"
        + "".join(f"<td>{report.verdict(tt.state(r.get(c)))}</td>" for c in list(CHECK_COLUMNS)[1:])
        + "</tr>" for _, r in ch.iterrows())
    head = "".join(f"<th>{report.esc(v)}</th>" for v in CHECK_COLUMNS.values())
    passed = int(ch["all_pass"].map(lambda v: tt.state(v) is True).sum())
    return ("<h3>Checks per case: the tap against the DUT's truth</h3>"
            + report.para(f"{passed} of {len(ch)} cases pass every bar (n/a: lost reports left a "
                     "figure unknown).")
            + f'<table class="data"><tr>{head}</tr>{rows}</table>')
