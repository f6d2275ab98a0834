"""What the telemetry instrument reported, as the run's tables.

The DUT's reports leave through the collector port; the controller's
collector (p4scope.control.apps.collector) parses them. From it:

* instrument_series: per report, the occupancy the instrument saw — for a
  packet reported while a burst lasts, the bytes already in its queue when
  it was enqueued, placed at its enqueue time (egress time minus time in
  queue); for an interval report, the interval's maximum, placed at the
  interval's start (intervals are of the egress clock, 2^n microseconds);
* burst_events with source "instrument": start, end, peak per burst;
* the instrument's peak occupancy of an egress port.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd


@dataclass
class Seen:
    series: pd.DataFrame
    bursts: pd.DataFrame
    lost_reports: int
    errors: int

    def peak(self, egress: int, unit: str = "bytes") -> float:
        """The highest occupancy the instrument reported for `egress`."""
        d = self.series[self.series["egress_port"] == egress] if not self.series.empty else self.series
        col = "depth_bytes" if unit == "bytes" else "depth_frames"
        return float(d[col].max()) if not d.empty else math.nan

    def bursts_of(self, egress: int) -> pd.DataFrame:
        if self.bursts.empty:
            return self.bursts
        return self.bursts[self.bursts["egress_port"] == egress]


def from_collector(case_id: str, col: Any, interval_log2_us: int, unit: str = "bytes") -> Seen:
    """`unit`: what the instrument measured depth in (bytes or frames); its
    burst peaks are in that unit."""
    rows = []
    for s in col.samples:
        rows.append({"case_id": case_id, "t_ns": int(s.enq_ns), "egress_port": s.egress_port,
                     "queue": s.queue_id, "kind": "burst_pkt", "depth_bytes": s.enq_qbytes,
                     "depth_frames": s.enq_qdepth, "ingress_port": s.ingress_port})
    span_ns = (1 << interval_log2_us) * 1000
    for iv in col.intervals:
        rows.append({"case_id": case_id, "t_ns": int(iv.interval) * span_ns,
                     "egress_port": iv.port, "queue": 0, "kind": "interval_max",
                     "depth_bytes": iv.max_bytes, "depth_frames": iv.max_pkts, "ingress_port": -1})
    series = pd.DataFrame(rows, columns=["case_id", "t_ns", "egress_port", "queue", "kind",
                                         "depth_bytes", "depth_frames", "ingress_port"])
    if not series.empty:
        series = series.sort_values(["egress_port", "t_ns"], kind="stable").reset_index(drop=True)
    bursts = pd.DataFrame([{
        "case_id": case_id, "source": "instrument", "egress_port": b.port, "queue": 0,
        "burst_id": b.burst_id, "start_ns": _f(b.start_ns), "end_ns": _f(b.end_ns),
        "peak": b.peak_bytes if unit == "bytes" else b.peak_pkts, "unit": unit,
        "peak_ns": math.nan, "frames": b.packets} for b in col.bursts()])
    return Seen(series, bursts, int(sum(col.lost.values())), len(col.errors))


def from_registers(case_id: str, vs: Any, egress: int, unit: str) -> Seen:
    """The instrument read over P4Runtime only (no reports): the occupancy
    maximum of the current interval (configured to span the whole case) and
    the number of bursts it detected. No time series."""
    sw = vs.sw
    mx_pkts = sw.register("tel_interval_max_pkts")[egress]
    mx_bytes = sw.register("tel_interval_max_bytes")[egress]
    nb = sw.counter("tel_bursts")[egress].packets
    series = pd.DataFrame([{"case_id": case_id, "t_ns": -1, "egress_port": egress, "queue": 0,
                            "kind": "case_max", "depth_bytes": mx_bytes, "depth_frames": mx_pkts,
                            "ingress_port": -1}])
    bursts = pd.DataFrame([{"case_id": case_id, "source": "instrument", "egress_port": egress,
                            "queue": 0, "burst_id": i + 1, "start_ns": math.nan,
                            "end_ns": math.nan, "peak": math.nan, "unit": unit,
                            "peak_ns": math.nan, "frames": math.nan} for i in range(nb)])
    return Seen(series, bursts, 0, 0)


def _f(v: Any) -> float:
    return math.nan if v is None else float(v)


def error_row(case_id: str, experiment: str, profile: str, unit: str, truth_peak: float,
              seen_peak: float, truth_bursts: pd.DataFrame, seen_bursts: pd.DataFrame,
              share_err_pp: float = math.nan, lost: int = 0) -> dict[str, Any]:
    """The instrument's errors in one case (first burst matched by overlap);
    peaks in `unit` (bytes, or frames when the DUT reads depths in packets)."""
    from . import figures as fg

    def bl(df: pd.DataFrame) -> list:
        return [fg.Burst(r.start_ns, r.end_ns, r.peak, r.peak_ns)
                for r in df.itertuples()] if df is not None and not df.empty else []

    m = fg.match_bursts(bl(truth_bursts), bl(seen_bursts))
    first = m[0] if m else None
    return {
        "case_id": case_id, "experiment": experiment, "profile": profile,
        "peak_unit": unit, "peak_truth": truth_peak, "peak_instrument": seen_peak,
        "peak_error_rel": fg.relative_error(seen_peak, truth_peak) if truth_peak else math.nan,
        "start_error_ns": first.start_error if first else math.nan,
        "end_error_ns": first.end_error if first else math.nan,
        "bursts_truth": len(bl(truth_bursts)), "bursts_instrument": len(bl(seen_bursts)),
        "bursts_matched": sum(1 for x in m if x.measured is not None),
        "share_error_pp": share_err_pp, "reports_lost": lost,
    }

