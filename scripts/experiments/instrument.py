"""What the telemetry instrument reported, as the run's tables.

The DUT's reports leave through the collector port; the controller's
collector (p4scope.control.apps.collector) parses them. From it:

* instrument_series: per report, the occupancy the instrument saw — for a
  packet reported while a burst lasts (and the one that ends it), what its
  queue held just before it left (the depth it left behind plus itself),
  placed at its egress time; for an interval report, the interval's
  maximum (the same measure), placed at the interval's start (intervals
  are of the egress clock, 2^n microseconds); a reported packet's row
  also has its hop latency (hop_latency_ns: egress minus ingress time at
  the switch; -1 on the rows of no one packet);
* burst_events with source "instrument": start and end (egress times of
  the dequeues that crossed the thresholds), peak per burst;
* the instrument's peak occupancy of an egress port.

Burst times are the engine's nanosecond clock at the dequeue
(p4scope.egress_timestamp_ns; on BMv2, v1model's microsecond egress clock
times 1000); interval numbers count v1model's microseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa


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


_KINDS = pa.array(["burst_pkt", "interval_max"], pa.large_string())
"""instrument_series' kinds of row: a report of a burst packet, an interval's maximum."""

SERIES_COLUMNS = ["case_id", "t_ns", "egress_port", "queue", "kind", "depth_bytes",
                  "depth_frames", "ingress_port", "hop_latency_ns"]


def from_collector(case_id: str, col: Any, interval_log2_us: int, unit: str = "bytes") -> Seen:
    """`col`: the controller's Collector, or a capture collected at once
    (collect_capture); read through their tables. `unit`: what the
    instrument measured depth in (bytes or frames); its burst peaks are in
    that unit."""
    tabs = col.tables(flows=False)  # the series does not read the flows
    s, iv, b = tabs["queue_samples"], tabs["intervals"], tabs["bursts"]
    bursts = pd.DataFrame([{
        "case_id": case_id, "source": "instrument", "egress_port": r.port, "queue": 0,
        "burst_id": r.burst_id, "start_ns": _f(r.start_ns), "end_ns": _f(r.end_ns),
        "peak": r.peak_bytes if unit == "bytes" else r.peak_pkts, "unit": unit,
        "peak_ns": math.nan, "frames": r.packets} for r in b.itertuples()])
    return Seen(_series(case_id, s, iv, (1 << interval_log2_us) * 1000), bursts,
                int(sum(col.lost.values())), len(col.errors))


def _series(case_id: str, samples: pd.DataFrame, intervals: pd.DataFrame,
            span_ns: int) -> pd.DataFrame:
    """instrument_series of one case: a row per burst packet sample and per
    interval maximum (placed at the interval's start), by egress port and
    time (samples first where they tie)."""
    if samples.empty and intervals.empty:
        return pd.DataFrame([], columns=SERIES_COLUMNS)
    n, ni = len(samples), len(intervals)

    def col(sample_col: str, interval_values: Any) -> np.ndarray:
        """A column of the samples followed by the intervals' values (an
        array, or one value for all)."""
        return np.concatenate([samples[sample_col].to_numpy(np.int64),
                               np.broadcast_to(np.asarray(interval_values, np.int64), (ni,))])

    def of_intervals(name: str) -> np.ndarray:
        return intervals[name].to_numpy(np.int64)

    t = col("egress_ns", of_intervals("interval") * span_ns)
    port = col("egress_port", of_intervals("port"))
    order = np.lexsort((t, port))  # stable: samples before intervals at equal keys
    kind = _KINDS.take(pa.array((order >= n).astype(np.int8)))  # no Python string per row
    cols = {"case_id": case_id, "t_ns": t[order], "egress_port": port[order],
            "queue": col("queue_id", 0)[order], "kind": pd.array(kind, dtype="str"),
            "depth_bytes": col("held_bytes", of_intervals("max_bytes"))[order],
            "depth_frames": col("held_pkts", of_intervals("max_pkts"))[order],
            "ingress_port": col("ingress_port", -1)[order],
            "hop_latency_ns": col("hop_latency_ns", -1)[order]}
    return pd.DataFrame(cols, columns=SERIES_COLUMNS)


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
                            "ingress_port": -1, "hop_latency_ns": -1}])
    bursts = pd.DataFrame([{"case_id": case_id, "source": "instrument", "egress_port": egress,
                            "queue": 0, "burst_id": i + 1, "start_ns": math.nan,
                            "end_ns": math.nan, "peak": math.nan, "unit": unit,
                            "peak_ns": math.nan, "frames": math.nan} for i in range(nb)])
    return Seen(series, bursts, 0, 0)


def _f(v: Any) -> float:
    return math.nan if v is None or pd.isna(v) else float(v)


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
        "end_truth_ns": first.truth.end if first else math.nan,
        "end_instrument_ns": first.measured.end if first and first.measured else math.nan,
        "bursts_truth": len(bl(truth_bursts)), "bursts_instrument": len(bl(seen_bursts)),
        "bursts_matched": sum(1 for x in m if x.measured is not None),
        "share_error_pp": share_err_pp, "reports_lost": lost,
    }



POLLED = ("tel_interval_id", "tel_interval_max_pkts", "tel_interval_max_bytes", "tel_burst_id",
          "tel_burst_pkts", "tel_burst_start_ns", "tel_burst_end_ns")


class RegisterPoller:
    """The instrument read over P4Runtime while virtual time runs.

    The DUT keeps, per egress port, the occupancy maxima of the current
    interval of 2^n microseconds (egress clock), the current burst's id and
    packet count, and the egress times of the dequeues that started the
    latest burst and ended the latest ended one. Polled exactly at interval
    boundaries — virtual time stops there — the interval registers hold the
    maximum of the interval that just ended (or of an older one, when no
    packet left the port in it: the queue was empty). Each poll is one
    P4Runtime Read of the seven registers; a burst's start and end come
    from the time registers, as exact as the egress clock. Of bursts that
    begin within one poll period only the latest is seen: the one before
    it is taken to last until that one's start."""

    def __init__(self, vs: Any, egress: int, interval_log2_us: int):
        self.vs = vs
        self.egress = egress
        self.interval_ns = (1 << interval_log2_us) * 1000
        sch = vs.sw.schema
        self._ids = {sch.register(n).id: n for n in POLLED}
        self.rows: list[dict[str, Any]] = []

    def _read(self) -> dict[str, int]:
        from finsy.proto import p4r

        ents = []
        for rid in self._ids:
            e = p4r.Entity()
            e.register_entry.register_id = rid
            e.register_entry.index.index = self.egress
            ents.append(e)
        out = {}
        for e in self.vs.sw.client.read(ents):
            name = self._ids.get(e.register_entry.register_id)
            if name is not None:
                out[name] = int.from_bytes(e.register_entry.data.bitstring or b"\0", "big")
        return out

    def poll(self, t_ns: int) -> None:
        """Reads the registers at the end of the interval ending at `t_ns`
        (virtual time stands 1 ns before it)."""
        r = self._read()
        ended = t_ns // self.interval_ns - 1  # the interval that just ended
        fresh = r.get("tel_interval_id", 0) - 1 == ended
        self.rows.append({"t_ns": t_ns, "fresh": fresh,
                          "max_pkts": r.get("tel_interval_max_pkts", 0) if fresh else 0,
                          "max_bytes": r.get("tel_interval_max_bytes", 0) if fresh else 0,
                          "burst_id": r.get("tel_burst_id", 0),
                          "burst_pkts": r.get("tel_burst_pkts", 0),
                          "start_ns": r.get("tel_burst_start_ns", 0),
                          "end_ns": r.get("tel_burst_end_ns", 0)})

    def seen(self, case_id: str, unit: str) -> Seen:
        rows = self.rows
        series = pd.DataFrame([{
            "case_id": case_id, "t_ns": r["t_ns"] - self.interval_ns, "egress_port": self.egress,
            "queue": 0, "kind": "interval_max", "depth_bytes": r["max_bytes"],
            "depth_frames": r["max_pkts"], "ingress_port": -1} for r in rows],
            columns=["case_id", "t_ns", "egress_port", "queue", "kind", "depth_bytes",
                     "depth_frames", "ingress_port"])
        bursts: list[dict[str, Any]] = []
        prev_id = 0
        for r in rows:
            start, end = float(r["start_ns"]), float(r["end_ns"])
            is_open = bool(bursts) and math.isnan(bursts[-1]["end_ns"])
            if r["burst_id"] > prev_id:  # a burst began since the last poll
                if is_open:  # the one before ended meanwhile, at the latest then
                    bursts[-1]["end_ns"] = end if end < start else start
                bursts.append({"case_id": case_id, "source": "instrument",
                               "egress_port": self.egress, "queue": 0,
                               "burst_id": r["burst_id"], "start_ns": start, "end_ns": math.nan,
                               "peak": math.nan, "unit": unit, "peak_ns": math.nan,
                               "frames": math.nan})
                is_open = True
            if is_open and r["burst_pkts"] == 0 and end >= bursts[-1]["start_ns"]:
                bursts[-1]["end_ns"] = end
            prev_id = r["burst_id"]
        col = "max_bytes" if unit == "bytes" else "max_pkts"
        for b in bursts:  # the highest interval maximum while the burst lasted
            last = b["end_ns"] if not math.isnan(b["end_ns"]) else math.inf
            during = [r for r in rows
                      if r["t_ns"] > b["start_ns"] and r["t_ns"] - self.interval_ns <= last]
            if during:
                top = max(during, key=lambda r: r[col])
                b["peak"], b["peak_ns"] = float(top[col]), float(top["t_ns"] - self.interval_ns)
        return Seen(series, pd.DataFrame(bursts), 0, 0)
