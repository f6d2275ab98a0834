"""Ground truth: the traffic manager's own record of its queues.

The engine's occupancy trace (Engine.tm_trace_take) has one record per
enqueue and dequeue (and drop, when asked) with what the queue holds right
after it (q_pkts, q_bytes: packet bytes, no FCS), what the packet's
ingress port holds in that queue (in_pkts, in_bytes) and the shared
buffer's use (cells). From it come, per egress queue, the occupancy over
time (stored reduced, without losing the peak), the occupancy split by
ingress port, the true peak and the true bursts — found with the
instrument's own thresholds and unit, so the two compare burst by burst.

The series keeps the last record of each nanosecond; the peak is taken over
every record, since a frame enqueued and another dequeued in the same
nanosecond were both held for a moment (the buffer admitted the first
with the second still in it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from . import figures as fg

TRACE_COLUMNS = ("time_ns", "port", "queue", "ingress", "kind", "q_pkts", "q_bytes", "in_pkts",
                 "in_bytes")
DROP = 2


@dataclass
class Truth:
    occupancy: pd.DataFrame  # case_id, t_ns, egress_port, queue, occupancy_bytes, occupancy_frames
    by_ingress: pd.DataFrame  # case_id, t_ns, egress_port, ingress_port, occupancy_bytes
    peaks: pd.DataFrame  # egress_port, queue, peak_bytes, peak_frames, peak_ns, mean_bytes
    bursts: pd.DataFrame  # burst_events rows with source "truth"

    def peak_of(self, egress: int, unit: str = "bytes") -> tuple[float, float]:
        """(peak, time) of an egress port's fullest queue, in bytes or frames."""
        d = self.peaks[self.peaks["egress_port"] == egress] if not self.peaks.empty else self.peaks
        if d.empty:
            return 0.0, float("nan")
        col = "peak_bytes" if unit == "bytes" else "peak_frames"
        r = d.loc[d[col].idxmax()]
        return float(r[col]), float(r["peak_ns"] if unit == "bytes" else r["peak_frames_ns"])

    def mean_of(self, egress: int, window: bool = False) -> float:
        """Time-weighted mean occupancy (bytes) of an egress port's fullest queue."""
        d = self.peaks[self.peaks["egress_port"] == egress] if not self.peaks.empty else self.peaks
        if d.empty:
            return float("nan")
        r = d.loc[d["peak_bytes"].idxmax()]
        return float(r["window_mean_bytes" if window else "mean_bytes"])


def trace_frame(cols: Mapping[str, Any]) -> pd.DataFrame:
    """The engine's trace columns as a DataFrame (drops left out)."""
    missing = [c for c in TRACE_COLUMNS if c not in cols]
    if missing:
        raise ValueError(f"the occupancy trace lacks columns {missing}")
    df = pd.DataFrame({c: np.asarray(cols[c]) for c in TRACE_COLUMNS})
    return df[df["kind"] != DROP].reset_index(drop=True)


def _last_per_time(t: np.ndarray, *vals: np.ndarray) -> tuple[np.ndarray, ...]:
    """Keeps the last record of each time (records are in event order)."""
    if t.size == 0:
        return (t,) + vals
    keep = np.append(t[1:] != t[:-1], True)
    return (t[keep],) + tuple(v[keep] for v in vals)


def analyse(case_id: str, trace: pd.DataFrame, burst_on: float, burst_off: float,
            unit: str = "bytes", max_points: int = 4000,
            window: "tuple[float, float] | None" = None) -> Truth:
    """Occupancy series, per-ingress split, peaks and bursts of one case.
    `burst_on`/`burst_off` are in `unit` (bytes or frames); the time-weighted
    mean occupancy is taken over the trace's span and over `window`."""
    occ_parts, ing_parts, peaks, bursts = [], [], [], []
    col = {c: trace[c].to_numpy(np.int64) for c in ("time_ns", "q_bytes", "q_pkts", "ingress",
                                                     "in_bytes")}
    # each queue's records in event order (groupby's), as numpy columns
    for (port, q), rows in sorted(trace.groupby(["port", "queue"]).indices.items()):
        time_ns, q_bytes, q_pkts = col["time_ns"][rows], col["q_bytes"][rows], col["q_pkts"][rows]
        t_all = time_ns.astype(float)
        pk_b, pk_t = fg.peak(t_all, q_bytes)
        pk_f, pk_ft = fg.peak(t_all, q_pkts)
        t, b, f = _last_per_time(time_ns, q_bytes, q_pkts)
        tf = t.astype(float)
        peaks.append({"egress_port": int(port), "queue": int(q), "peak_bytes": pk_b,
                      "peak_ns": pk_t, "peak_frames": pk_f, "peak_frames_ns": pk_ft,
                      "mean_bytes": fg.time_weighted_mean(tf, b),
                      "window_mean_bytes": fg.time_weighted_mean(tf, b, *window)
                      if window else float("nan")})
        level = b if unit == "bytes" else f
        for i, bu in enumerate(fg.find_bursts(tf, level, burst_on, burst_off), start=1):
            bursts.append({"case_id": case_id, "source": "truth", "egress_port": int(port),
                           "queue": int(q), "burst_id": i, "start_ns": bu.start, "end_ns": bu.end,
                           "peak": bu.peak, "unit": unit, "peak_ns": bu.peak_time})
        rt, rb = fg.reduce_series(tf, b.astype(float), max_points)
        rf = fg.step_at(tf, f.astype(float), rt)
        occ_parts.append(pd.DataFrame({"case_id": case_id, "t_ns": rt.astype(np.int64),
                                       "egress_port": int(port), "queue": int(q),
                                       "occupancy_bytes": rb.astype(np.int64),
                                       "occupancy_frames": rf.astype(np.int64)}))
        if pk_b > 0 and (pk_b if unit == "bytes" else pk_f) >= burst_on:
            for ing, sub in _by_value(col["ingress"][rows]):
                ti, bi = _last_per_time(time_ns[sub], col["in_bytes"][rows][sub])
                ti, bi = fg.reduce_series(ti.astype(float), bi.astype(float), max_points // 4)
                ing_parts.append(pd.DataFrame({"case_id": case_id, "t_ns": ti.astype(np.int64),
                                               "egress_port": int(port), "ingress_port": int(ing),
                                               "occupancy_bytes": bi.astype(np.int64)}))
    return Truth(_cat(occ_parts), _cat(ing_parts), pd.DataFrame(peaks), pd.DataFrame(bursts))


def _by_value(v: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Per distinct value of v, ascending: the positions holding it, in order."""
    order = np.argsort(v, kind="stable")
    cuts = np.flatnonzero(v[order][1:] != v[order][:-1]) + 1
    return [(int(v[seg[0]]), seg) for seg in np.split(order, cuts)] if v.size else []


def _cat(parts: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

