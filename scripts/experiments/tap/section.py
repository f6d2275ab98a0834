"""The report's section for a run with the tap in the path of another
switch: that switch's egress queue as the tap inferred it next to its
qdisc's sampled backlog during each burst, the error table, the bursts
with their culprits, the drops, the heatmap and the shares, and what
the clock and the sampling do to the figures. In virtual time the
reference is the DUT's own ground truth (section_truth.py says how)."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
import pandas as pd

from .. import plotdata as pdt
from .. import report
from . import plots as tp
from . import section_truth as st

ERROR_COLUMNS = {
    "case": "case", "burst_id": "burst", "peak_tap_bytes": "peak, tap (B)",
    "peak_reference_bytes": "peak, qdisc (B)", "peak_error_bytes": "peak error (B)",
    "peak_error_rel": "peak error (rel)", "peak_tap_at_samples_bytes": "tap at the qdisc's samples, peak (B)",
    "reference_burst": "qdisc saw it", "peak_within_tolerance": "peak within tolerance", "mean_tap_bytes": "mean, tap (B)",
    "mean_reference_bytes": "mean, qdisc (B)", "mean_error_rel": "mean error (rel)",
    "mean_error_at_samples_rel": "mean error, tap read at the qdisc's samples (rel)",
    "mae_at_samples_bytes": "|tap − qdisc| at its samples, mean (B)",
    "reference_max_gap_ns": "qdisc: longest time between reads (ns)",
    "start_error_ns": "start error (ns)", "end_error_ns": "end error (ns)",
    "reports": "reports", "reports_lost": "lost", "lost_reports": "burst touched by lost reports",
}
BURST_COLUMNS = ["case", "source", "burst_id", "start_ns", "peak_ns", "end_ns", "peak_bytes",
                 "peak_frames", "bytes_in", "frames_in", "dropped_frames", "culprits", "flows"]


def section(page: report.Page) -> None:
    run = page.run
    if not run.has("tap_series") or not run.has("microburst"):
        return  # (fairness with the tap: section_fairness.py)
    micro = run.t.get("microburst", pd.DataFrame())
    err = run.t.get("tap_errors", pd.DataFrame())
    info = run.meta.get("tap", {})
    dut = info.get("dut_title") or "the DUT"
    truth = st.is_truth(info)
    s = page.section("tap", f"Microburst through {dut}, seen by the tap in its path")
    s.parts.append(st.intro(dut) if truth else report.para(
        f"A p4scope switch running p4src/tap.p4 sits on every link of {report.esc(dut)}: each "
        "sender's link, and the DUT's port towards the receiver. It reports every frame it "
        "passes (its timestamp, the port, the frame's length and first 64 bytes, and the "
        "cumulative counts of both directions). Per DUT egress port the queue is inferred "
        "as bytes sent towards it − bytes out of it − bytes it dropped: a frame seen leaving "
        "is matched to the frame seen entering with the same first bytes, and a frame never "
        "seen leaving is a DUT drop, counted apart. The reference is the backlog of the "
        "DUT's egress qdisc (htb over a pfifo) on that port, read with tc."))
    rate = run.meta.get("parameters", {}).get("microburst_mininet", {}).get("rate_bps")
    s.parts.append(st.statement(info, err) if truth else report.para(_statement(info, err, rate)))
    labels = {r["case_id"]: pdt.short_case(r) for _, r in micro.iterrows()} if not micro.empty else {}
    cases = list(labels) or sorted(run.t["tap_series"]["case_id"].unique())
    shown = _shown(micro, cases)
    views = [v for c in shown
             if (v := tp.tap_view(run.t["tap_series"], run.t.get("tap_reference"),
                                  run.t.get("tap_bursts"), c, labels.get(c, c))) is not None]
    if views:
        s.parts.append(f"<h3>The queue of {report.esc(dut)} during each burst</h3>")
        if len(shown) < len(cases):
            s.parts.append(report.para(f"{len(shown)} representative cases of {len(cases)}; the "
                                  "tables below and tap_series hold every case."))
        ref = st.REFERENCE_LABEL if truth else tp.QDISC
        page.plot(s, "tap_occupancy", tp.web(views, dut, ref, truth),
                  tp.png(views, dut, ref, truth))
    if not err.empty:
        s.parts.append("<h3>The tap against "
                       + ("the DUT's ground truth" if truth else "the qdisc's backlog") + "</h3>")
        tol = info.get("peak_tolerance", {})
        s.parts.append(st.method() if truth else report.para(
            "Per burst the tap found: its peak against the highest qdisc sample within the "
            "burst (one sample period either side), the time-weighted mean over the burst of "
            "both (the qdisc's samples as a step; and the tap's series read only at the qdisc's "
            "sample times, averaged the same way, which leaves out the qdisc's sampling), the "
            "mean difference at the qdisc's sample times, and start and end against the qdisc's "
            "own burst (same thresholds; it can place them only to within a sample period). "
            "Peak within tolerance: within "
            f"{100 * tol.get('rel', 0.05):g} % or {tol.get('frames', 2)} frames of the qdisc's "
            "(no verdict for a burst the qdisc did not see)." + _reference_note(info)))
        e = err.assign(case=[labels.get(c, c) for c in err["case_id"]])
        columns = st.ERROR_COLUMNS if truth else ERROR_COLUMNS
        cols = [c for c in columns if c in e]
        s.parts.append(report.html_table(e[cols].rename(columns=columns)))
        if truth:
            s.parts.append(st.checks(err, labels))
        d = e[[c for c in ("case", "drops_tap_frames", "drops_truth_frames",
                           "drops_tester_frames", "drops_tap_bytes",
                           "unresolved_frames", "strays") if c in e]].drop_duplicates("case")
        s.parts.append("<h3>Frames the DUT dropped</h3>" + report.para(
            "Sent towards the DUT and never seen leaving it, by the tap; the tester's count is "
            "what its senders sent minus what its receiver got. Unresolved: never seen leaving "
            "while reports were lost. Strays: frames the DUT sent of its own."))
        s.parts.append(report.html_table(d.rename(columns={
            "drops_tap_frames": "dropped, tap (frames)", "drops_truth_frames": "dropped, DUT's truth (frames)",
            "drops_tester_frames": "lost, tester (frames)",
            "drops_tap_bytes": "dropped, tap (B)", "unresolved_frames": "unresolved",
            "strays": "strays"})))
    if run.has("tap_bursts"):
        b = run.t["tap_bursts"]
        b = b.assign(case=[labels.get(c, c) for c in b["case_id"]])
        s.parts.append("<details><summary>every burst: the tap's (size, drops, culprit ingress "
                       "ports and flows) and the qdisc's</summary>"
                       + report.html_table(b[[c for c in BURST_COLUMNS if c in b]]) + "</details>")
    h = pdt.queue_heatmap(pdt.by_case(run.t["tap_series"].fillna({"occupancy_bytes": 0})),
                          labels or {c: c for c in cases})
    if h is not None:
        from .. import plots_png as pp
        from .. import plots_web as pw

        title = f"Occupancy per egress port of {dut}, inferred by the tap"
        s.parts.append("<h3>Time × egress port</h3>")
        page.plot(s, "tap_heatmap", pw.queue_heatmap(h, title), pp.queue_heatmap(h, title))
    if run.has("tap_ingress"):
        from .. import plots_png as pp
        from .. import plots_web as pw

        stacks = [sk for c in shown if (sk := pdt.stacked_by_ingress(
            run.rows("tap_ingress"), c, labels.get(c, c))) is not None]
        if stacks:
            s.parts.append(f"<h3>The queue of {report.esc(dut)} stacked by ingress port (the tap's "
                           "shares)</h3>")
            page.plot(s, "tap_by_ingress", pw.stacked_by_ingress(stacks),
                      pp.stacked_by_ingress(stacks))


def _shown(micro: pd.DataFrame, cases: list[str], most: int = 8) -> list[str]:
    """The cases drawn one panel each: all of them, or with more than
    `most` a few representative ones (the tables keep every case)."""
    if len(cases) <= most or micro.empty:
        return cases
    return pdt.representative_cases(micro)


def _statement(info: dict, err: pd.DataFrame, rate_bps: Optional[float]) -> str:
    """What the clock and the sampling do to the figures, with this run's numbers."""
    def med(col: str) -> float:
        return float(np.nanmedian(err[col])) if col in err and not err.empty else math.nan

    def total(col: str) -> int:
        return int(err.drop_duplicates("case_id")[col].sum()) if col in err and not err.empty else 0

    period_ms = med("reference_period_ns") / 1e6
    got_ms = med("reference_interval_median_ns") / 1e6
    transit_us = float(np.nanmin(err["transit_min_ns"])) / 1e3 if "transit_min_ns" in err and not err.empty else math.nan
    reports, lost, drops = total("reports"), total("reports_lost"), total("capture_drops")
    delay_us = med("report_delay_median_ns") / 1e3
    return (
        "<b>Clock and sampling.</b> "
        f"The tap's figures are on its own clock ({report.esc(info.get('clock', 'the tap switch clock'))}); "
        "a frame is stamped when the tap's real-time loop takes it from the kernel, and the "
        "frames taken in one batch share a stamp. "
        f"Sample interval: {report.esc(info.get('sampling', 'every frame'))}, so no change of the "
        f"queue falls between two samples: {reports:,} reports in all, {lost:,} lost "
        f"({drops:,} of them dropped by the capture socket); where reports are lost the series "
        "is left empty (NaN), not filled in. The tap's own delay: a frame counts as in the "
        "DUT from when the tap takes it in until the tap takes it back out, so its own "
        "forwarding, the links and the wait in its receive rings are part of the inferred "
        f"occupancy; the fastest transit seen (tap in to tap out, through the DUT) was "
        f"{transit_us:,.1f} µs" + (
            f" (at one link's rate, {rate_bps / 1e6:g} Mbit/s, {transit_us * rate_bps / 8e6:,.0f} "
            "bytes per link that feeds or drains the queue)" if rate_bps else "") + ". "
        f"The reference is asked for every {period_ms:g} ms (each read takes a few ms and is "
        "stamped when it returns; a busy machine makes them fewer: the median case got one "
        f"every {got_ms:.1f} ms), and put on the tap's clock by the offset of the report that "
        "reached the collector port fastest (kernel timestamp at the tap's collector port "
        f"minus the tap's; the median report took {delay_us:,.1f} µs more): the reference "
        "misses what happens between its reads and its times are uncertain by about a read."
    )


def _reference_note(info: dict) -> str:
    if info.get("dut") == "bridge":
        return (" The bridge forwards in the kernel as frames arrive: its egress qdisc is "
                "where its queue builds, so the qdisc is the whole of what it holds.")
    return (" The reference is the qdisc only: what the switch holds itself (its own queue, "
            "frames between its ports in its rings) is in the tap's figure and not in the "
            "qdisc's, so the tap reads more, and a burst the switch holds before the link "
            "queue fills has no reference.")
