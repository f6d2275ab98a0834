"""The tap's inferred occupancy against a reference sampled from the DUT
(in Mininet: the backlog of the DUT's egress qdisc, read with `tc` every
few milliseconds), burst by burst.

For each burst the tap found, over its span [start, end] (the tap's
clock):

* peak: the burst's inferred peak against the highest reference sample
  within the span widened by one sample period on each side (the
  reference only sees the queue when it is read); also the highest
  inferred value at the reference's own sample times, which is what the
  tap would say if it were read like the reference (the part of the peak
  error that is the reference's sampling, not the tap);
* time-weighted mean over the span: the inferred step series against the
  reference's samples as a step series (each holds until the next); and
  the inferred series read only at the reference's sample times, averaged
  the same way (the part of the mean's error that is the reference's
  sampling, not the tap: a reference read every 15 ms misses a burst's
  rise);
* the mean absolute difference at the reference's sample times;
* start and end against the reference's own burst (same thresholds),
  which it can place only to within a sample period.

A burst the reference did not see at all (none of its samples crossed
the threshold meanwhile: a queue it does not hold, such as a software
switch's own, or one shorter than its sample period) has no verdict
(`reference_burst` False, `peak_within_tolerance` None).

A burst touched by lost reports has no inferred values where they are
unknown: its figures are NaN there and it is flagged.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
import pandas as pd

from .. import figures as fg

PEAK_TOL_REL = 0.05
PEAK_TOL_FRAMES = 2
"""The tap's inferred peak passes when it is within 5 % of the reference's
peak or within two frames of it, whichever is more: the reference is read
every few milliseconds and the tap also counts the frames on their way
through the links and its own ports (see the report's statement)."""


def peak_tolerance(reference_peak: float, frame_bytes: float) -> float:
    return max(PEAK_TOL_REL * reference_peak, PEAK_TOL_FRAMES * frame_bytes)


def reference_bursts(t: np.ndarray, v: np.ndarray, on: float, off: float) -> list[fg.Burst]:
    return fg.find_bursts(t, v, on, off)


def _valid_step(series: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Times and values of an inferred port series (NaN where unknown)."""
    return (series["t_ns"].to_numpy(float), series["occupancy_bytes"].to_numpy(float))


def score(case_id: str, port: int, series: pd.DataFrame, bursts: pd.DataFrame,
          ref_t: np.ndarray, ref_v: np.ndarray, period_ns: float, on: float, off: float,
          frame_bytes: float) -> list[dict[str, Any]]:
    """One row per burst of `bursts` (the tap's, of `port`): see the module
    docstring. `ref_t`, `ref_v`: the reference's samples on the tap's clock."""
    t, v = _valid_step(series)
    refs = reference_bursts(ref_t, ref_v, on, off)
    mine = [fg.Burst(r.start_ns, r.end_ns, r.peak_bytes, r.peak_ns) for r in bursts.itertuples()]
    matched = {id(m.truth): m.measured for m in fg.match_bursts(mine, refs)}
    rows = []
    for b, r in zip(mine, bursts.itertuples()):
        end = b.end if not math.isnan(b.end) else (float(t[-1]) if t.size else b.start)
        near = (ref_t >= b.start - period_ns) & (ref_t <= end + period_ns)
        within = (ref_t >= b.start) & (ref_t <= end)
        ref_peak = float(ref_v[near].max()) if near.any() else math.nan
        at = fg.step_at(t, v, ref_t[near]) if t.size else np.array([])
        sampled = float(np.nanmax(at)) if at.size and not np.isnan(at).all() else math.nan
        diffs = np.abs(at - ref_v[near]) if at.size else np.array([])
        known = not bool(r.lost_reports)
        mean_tap = fg.time_weighted_mean(t, v, b.start, end) if known and t.size else math.nan
        mean_ref = (fg.time_weighted_mean(ref_t, ref_v, b.start, end)
                    if (ref_t <= b.start).any() else math.nan)
        # the tap read as the reference reads: at its sample times, held until the next
        mean_tap_sampled = (fg.time_weighted_mean(ref_t[near], at, b.start, end)
                            if known and at.size and not math.isnan(mean_ref) else math.nan)
        tol = peak_tolerance(ref_peak, frame_bytes) if not math.isnan(ref_peak) else math.nan
        ref_b: Optional[fg.Burst] = matched.get(id(b))
        rows.append({
            "case_id": case_id, "egress_port": port, "burst_id": int(r.burst_id),
            "start_ns": b.start, "end_ns": b.end,
            "peak_tap_bytes": b.peak, "peak_reference_bytes": ref_peak,
            "peak_error_bytes": b.peak - ref_peak,
            "peak_error_rel": fg.relative_error(b.peak, ref_peak) if ref_peak else math.nan,
            "peak_tolerance_bytes": tol,
            "reference_burst": ref_b is not None,
            "peak_within_tolerance": (bool(abs(b.peak - ref_peak) <= tol)
                                      if ref_b is not None and not math.isnan(tol) else None),
            "peak_tap_at_samples_bytes": sampled,
            "mean_tap_bytes": mean_tap, "mean_reference_bytes": mean_ref,
            "mean_error_bytes": mean_tap - mean_ref,
            "mean_error_rel": fg.relative_error(mean_tap, mean_ref) if mean_ref else math.nan,
            "mean_tap_at_samples_bytes": mean_tap_sampled,
            "mean_error_at_samples_rel": (fg.relative_error(mean_tap_sampled, mean_ref)
                                          if mean_ref else math.nan),
            "mae_at_samples_bytes": float(np.nanmean(diffs)) if diffs.size and not np.isnan(diffs).all() else math.nan,
            "reference_samples": int(within.sum()),
            "reference_max_gap_ns": _max_gap(ref_t[near]),
            "start_error_ns": b.start - ref_b.start if ref_b is not None else math.nan,
            "end_error_ns": (b.end - ref_b.end) if ref_b is not None else math.nan,
            "lost_reports": bool(r.lost_reports),
        })
    return rows


def _max_gap(t: np.ndarray) -> float:
    """The longest time between two reads of the reference (a busy machine
    delays `tc`): what it cannot have seen."""
    return float(np.diff(t).max()) if t.size > 1 else math.nan


def reference_burst_rows(case_id: str, port: int, ref_t: np.ndarray, ref_v: np.ndarray,
                         on: float, off: float) -> list[dict[str, Any]]:
    """The reference's bursts with the tap's thresholds, as tap_bursts rows."""
    return [{"case_id": case_id, "source": "reference", "egress_port": port, "burst_id": i,
             "start_ns": b.start, "peak_ns": b.peak_time, "end_ns": b.end,
             "peak_bytes": b.peak, "complete": not math.isnan(b.end)}
            for i, b in enumerate(reference_bursts(ref_t, ref_v, on, off), start=1)]
