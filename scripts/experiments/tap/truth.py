"""The tap's inferred queue against the DUT's own ground truth (virtual
time: the DUT's traffic-manager trace, every enqueue, dequeue and drop of
its egress port), burst by burst, with the bars of issue 18:

* peak: the tap's burst peak against the most the DUT's queue held during
  the true burst (over every record: a frame enqueued and another sent in
  the same nanosecond were both held) — within PEAK_TOL_REL of it or
  PEAK_TOL_FRAMES frames, whichever is more;
* start and end: against the true burst's (the same thresholds on the
  trace, one value per nanosecond as the tap's series has) — within
  TIME_TOL_FRAMES frame times (each report lands on the nanosecond the
  DUT's trace records its frame in or out: tap.virtual on_dut_clock);
* shares: each ingress port's part of the queue over the true burst (its
  time-weighted mean occupancy over the sum of them), the tap's against
  the truth's — the largest difference within SHARE_TOL_PP points;
* the time-weighted mean over the true burst, and the mean |tap − truth|
  at the truth's changes;
* drops: the frames the tap saw go in and never come out against the
  frames the DUT's trace dropped.

Bursts pair by overlap (figures.match_bursts); a true burst the tap did
not find, or one the tap found and the truth has not, is a row of its own
(a failed check). Where lost reports leave the tap's series unknown its
figures are NaN and the burst says so (`lost_reports`), never filled in.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import numpy as np
import pandas as pd

from .. import figures as fg
from .inference import Inference

PEAK_TOL_REL = 0.01
PEAK_TOL_FRAMES = 1
TIME_TOL_FRAMES = 1
SHARE_TOL_PP = 1.0
ENQ, DEQ, DROP = 0, 1, 2


@dataclass
class PortTruth:
    """One egress port of the DUT, from its trace."""

    t: np.ndarray
    """Record times (ns), every record (drops left out)."""
    q_bytes: np.ndarray
    """What the queue held after each record."""
    by_ingress: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    """ingress port -> (times, bytes it held after each of its records)."""
    drop_frames: int = 0
    drop_bytes: int = 0

    def series(self) -> tuple[np.ndarray, np.ndarray]:
        """The occupancy after each nanosecond's last record (as the tap's)."""
        return _last_per_ns(self.t, self.q_bytes)

    def peak_within(self, start: float, end: float) -> float:
        """The most the queue held in [start, end], over every record."""
        end = math.inf if math.isnan(end) else end
        sel = (self.t >= start) & (self.t <= end)
        return float(self.q_bytes[sel].max()) if sel.any() else math.nan


def _last_per_ns(t: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if t.size == 0:
        return t.astype(float), v.astype(float)
    keep = np.append(t[1:] != t[:-1], True)
    return t[keep].astype(float), v[keep].astype(float)


def port_truth(cols: Mapping[str, Any], port: int) -> PortTruth:
    """An egress port's ground truth from the engine's trace columns
    (tm_trace_stop, recorded with drops)."""
    port_col = np.asarray(cols["port"])
    kind = np.asarray(cols["kind"])
    t = np.asarray(cols["time_ns"]).astype(np.int64)
    mine = port_col == port
    held = mine & (kind != DROP)
    dropped = mine & (kind == DROP)
    ing = np.asarray(cols["ingress"])[held]
    th, in_b = t[held], np.asarray(cols["in_bytes"]).astype(np.int64)[held]
    by_in = {int(i): _last_per_ns(th[ing == i], in_b[ing == i]) for i in np.unique(ing)}
    return PortTruth(th, np.asarray(cols["q_bytes"]).astype(np.int64)[held], by_in,
                     int(dropped.sum()), int(np.asarray(cols["len"])[dropped].sum()))


def shares(parts: Mapping[int, tuple[np.ndarray, np.ndarray]], start: float,
           end: float) -> dict[int, float]:
    """Each ingress port's share (0..1) of the time-weighted occupancy over
    [start, end]; empty when nothing was held."""
    means = {p: fg.time_weighted_mean(t, v, start, end) for p, (t, v) in parts.items()}
    total = sum(m for m in means.values() if not math.isnan(m))
    if not total:
        return {}
    return {p: m / total for p, m in sorted(means.items())}


def share_error_pp(tap: Mapping[int, float], truth: Mapping[int, float]) -> float:
    """The largest |tap share − true share| over the ingress ports, in points."""
    ports = set(tap) | set(truth)
    if not ports or not tap or not truth:
        return math.nan
    return max(abs(tap.get(p, 0.0) - truth.get(p, 0.0)) for p in ports) * 100


def peak_tolerance(truth_peak: float, frame_bytes: float) -> float:
    return max(PEAK_TOL_REL * truth_peak, PEAK_TOL_FRAMES * frame_bytes)


def tap_ingress(inf: Inference, port: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """ingress port -> (times, bytes it held after each change) of `port`,
    as the tap inferred it (the shape of PortTruth.by_ingress)."""
    d = inf.by_ingress[inf.by_ingress["egress_port"] == port]
    return {int(p): (g["t_ns"].to_numpy(float), g["occupancy_bytes"].to_numpy(float))
            for p, g in d.groupby("ingress_port")}


def verdict(both: bool, lost: bool, ok: bool) -> Optional[bool]:
    """A bar's verdict on one burst: None (no verdict) where lost reports
    leave the tap's figure unknown, else False when only one side has the
    burst."""
    if lost:
        return None
    return bool(ok) if both else False


def score(case_id: str, port: int, inf: Inference, truth: PortTruth, on: float, off: float,
          frame_bytes: float, frame_time_ns: float,
          raw: Optional[Inference] = None) -> list[dict[str, Any]]:
    """One row per burst (see the module docstring): the tap's bursts of
    `port` in `inf` (its series on the DUT's clock) against the truth's.
    `raw`: the same reports on the tap's own clock, whose peak shows what
    the links' time does to the figure."""
    s = inf.port_series(port)
    t, v = s["t_ns"].to_numpy(float), s["occupancy_bytes"].to_numpy(float)
    tt, tv = truth.series()
    tap_b = inf.bursts(on, off)
    tap_b = tap_b[tap_b["egress_port"] == port].reset_index(drop=True)
    mine = [fg.Burst(r.start_ns, r.end_ns, r.peak_bytes, r.peak_ns) for r in tap_b.itertuples()]
    true_b = fg.find_bursts(tt, tv, on, off)
    pairs = fg.match_bursts(true_b, mine)
    used = {id(m.measured) for m in pairs if m.measured is not None}
    rows_in = [(m.truth, m.measured) for m in pairs]
    rows_in += [(None, b) for b in mine if id(b) not in used]
    tap_in = tap_ingress(inf, port)
    time_tol = TIME_TOL_FRAMES * frame_time_ns
    raw_s = raw.port_series(port) if raw is not None else None
    out = []
    for tb, mb in rows_in:
        k = next((i for i, b in enumerate(mine) if b is mb), None)
        span = (tb.start, tb.end if not math.isnan(tb.end) else float(tt[-1])) if tb is not None \
            else (mb.start, mb.end if not math.isnan(mb.end) else float(t[-1]))
        lost = any(a < span[1] and b > span[0] for a, b in inf.unknown)
        row: dict[str, Any] = {
            "case_id": case_id, "egress_port": port,
            "burst_id": int(tap_b.loc[k, "burst_id"]) if k is not None else 0,
            "truth_burst_id": true_b.index(tb) + 1 if tb is not None else 0,
            "start_ns": mb.start if mb is not None else math.nan,
            "end_ns": mb.end if mb is not None else math.nan,
            "reference_burst": tb is not None, "tap_burst": mb is not None,
            "lost_reports": lost,
        }
        ref_peak = truth.peak_within(*span) if tb is not None else math.nan
        tap_peak = mb.peak if mb is not None else math.nan
        tol = peak_tolerance(ref_peak, frame_bytes) if tb is not None else math.nan
        both = tb is not None and mb is not None
        mean_tap = fg.time_weighted_mean(t, v, *span) if t.size and not lost else math.nan
        mean_ref = fg.time_weighted_mean(tt, tv, *span) if tt.size else math.nan
        at = (tt >= span[0]) & (tt <= span[1])
        diffs = np.abs(fg.step_at(t, v, tt[at]) - tv[at]) if t.size else np.array([])
        sh_tap = shares(tap_in, *span) if not lost else {}
        sh_ref = shares(truth.by_ingress, *span)
        sh_err = share_error_pp(sh_tap, sh_ref)
        start_err = mb.start - tb.start if both else math.nan
        end_err = mb.end - tb.end if both else math.nan
        raw_peak = math.nan
        if raw_s is not None and mb is not None:
            rs = raw_s[(raw_s["t_ns"] >= span[0] - time_tol) & (raw_s["t_ns"] <= span[1] + time_tol)]
            raw_peak = float(rs["occupancy_bytes"].max()) if not rs.empty else math.nan
        row.update({
            "peak_tap_bytes": tap_peak, "peak_reference_bytes": ref_peak,
            "peak_error_bytes": tap_peak - ref_peak,
            "peak_error_rel": fg.relative_error(tap_peak, ref_peak) if ref_peak else math.nan,
            "peak_error_frames": (tap_peak - ref_peak) / frame_bytes,
            "peak_tolerance_bytes": tol,
            "peak_within_tolerance": verdict(both, lost, abs(tap_peak - ref_peak) <= tol),
            "peak_raw_tap_bytes": raw_peak, "peak_raw_error_bytes": raw_peak - ref_peak,
            "mean_tap_bytes": mean_tap, "mean_reference_bytes": mean_ref,
            "mean_error_bytes": mean_tap - mean_ref,
            "mean_error_rel": fg.relative_error(mean_tap, mean_ref) if mean_ref else math.nan,
            "mae_at_samples_bytes": float(np.nanmean(diffs)) if diffs.size and not np.isnan(diffs).all() else math.nan,
            "reference_samples": int(at.sum()),
            "start_error_ns": start_err, "end_error_ns": end_err,
            "time_tolerance_ns": time_tol,
            "start_within_tolerance": verdict(both, lost, abs(start_err) <= time_tol),
            "end_within_tolerance": verdict(both, lost, both and (
                (math.isnan(tb.end) and math.isnan(mb.end)) or abs(end_err) <= time_tol)),
            "shares_tap": json.dumps({str(p): round(x, 6) for p, x in sh_tap.items()}),
            "shares_reference": json.dumps({str(p): round(x, 6) for p, x in sh_ref.items()}),
            "share_error_pp": sh_err,
            "shares_within_tolerance": verdict(both, lost, sh_err <= SHARE_TOL_PP),
        })
        out.append(row)
    return out


CHECKS = ("peak_within_tolerance", "start_within_tolerance", "end_within_tolerance",
          "shares_within_tolerance")


def state(v: Any) -> Optional[bool]:
    """A stored verdict as True, False or None (no verdict: None or NaN,
    as a table read back may hold it)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return bool(v)


def combine(verdicts: list[Optional[bool]]) -> Optional[bool]:
    """All of them: False if any is, else None if any has no verdict;
    False for none at all."""
    if not verdicts or any(v is False for v in verdicts):
        return False
    return None if any(v is None for v in verdicts) else True


def case_checks(errors: pd.DataFrame) -> pd.DataFrame:
    """Per case: whether each bar held for every burst (False without any
    burst; None where lost reports left a figure unknown and no burst
    failed), the tap's drops equal to the DUT's (None while frames are
    unresolved), and all of them."""
    rows = []
    for cid, g in errors.groupby("case_id", sort=False):
        r: dict[str, Any] = {"case_id": cid}
        for c in CHECKS:
            r[c] = combine([state(v) for v in g[c]] if c in g else [])
        if "drops_tap_frames" in g and "drops_truth_frames" in g:
            unresolved = int(g["unresolved_frames"].iloc[0]) if "unresolved_frames" in g else 0
            equal = bool(g["drops_tap_frames"].iloc[0] == g["drops_truth_frames"].iloc[0])
            r["drops_equal"] = None if unresolved and not equal else equal
        r["all_pass"] = combine([v for k, v in r.items() if k != "case_id"])
        rows.append(r)
    return pd.DataFrame(rows)
