"""Ground truth: the traffic manager's own record of its queues.

The engine's occupancy trace, brought into one form:

    t_ns, egress_port, queue, ingress_port, delta_bytes, delta_frames

one row per enqueue (+) and dequeue (-). From it come, per egress queue, the
occupancy over time (what the report plots and stores, reduced without
losing the peak), the occupancy split by ingress port, the true peak and
the true bursts (found with the instrument's own thresholds, so the two
can be compared burst by burst).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd

from . import figures as fg

EVENT_COLUMNS = ("t_ns", "egress_port", "queue", "ingress_port", "delta_bytes", "delta_frames")


@dataclass
class Truth:
    occupancy: pd.DataFrame  # case_id, t_ns, egress_port, queue, occupancy_bytes, occupancy_frames
    by_ingress: pd.DataFrame  # case_id, t_ns, egress_port, ingress_port, occupancy_bytes
    peaks: pd.DataFrame  # egress_port, queue, peak_bytes, peak_ns, peak_frames
    bursts: pd.DataFrame  # burst_events rows with source "truth"

    def peak_of(self, egress: int, queue: Optional[int] = None) -> tuple[float, float]:
        d = self.peaks[self.peaks["egress_port"] == egress]
        if queue is not None:
            d = d[d["queue"] == queue]
        if d.empty:
            return 0.0, float("nan")
        r = d.loc[d["peak_bytes"].idxmax()]
        return float(r["peak_bytes"]), float(r["peak_ns"])


def check_events(ev: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in EVENT_COLUMNS if c not in ev.columns]
    if missing:
        raise ValueError(f"occupancy trace lacks columns {missing}")
    return ev.sort_values("t_ns", kind="stable").reset_index(drop=True)


def analyse(case_id: str, events: pd.DataFrame, burst_on: float, burst_off: float,
            max_points: int = 4000) -> Truth:
    """Occupancy series, per-ingress split, peaks and bursts of one case."""
    ev = check_events(events)
    occ_parts, ing_parts, peaks, bursts = [], [], [], []
    for (port, q), g in ev.groupby(["egress_port", "queue"], sort=True):
        t, b = fg.step_from_deltas(g["t_ns"].to_numpy(float), g["delta_bytes"].to_numpy(float))
        _, f = fg.step_from_deltas(g["t_ns"].to_numpy(float), g["delta_frames"].to_numpy(float))
        pk, pk_t = fg.peak(t, b)
        pk_f = float(f[int(np.argmax(b))]) if b.size else 0.0
        peaks.append({"egress_port": port, "queue": q, "peak_bytes": pk, "peak_ns": pk_t,
                      "peak_frames": pk_f, "mean_bytes": fg.time_weighted_mean(t, b)})
        for i, bu in enumerate(fg.find_bursts(t, b, burst_on, burst_off), start=1):
            bursts.append({"case_id": case_id, "source": "truth", "egress_port": port, "queue": q,
                           "burst_id": i, "start_ns": bu.start, "end_ns": bu.end,
                           "peak_bytes": bu.peak, "peak_ns": bu.peak_time})
        rt, rb = fg.reduce_series(t, b, max_points)
        rf = fg.step_at(t, f, rt)
        occ_parts.append(pd.DataFrame({"case_id": case_id, "t_ns": rt.astype(np.int64),
                                       "egress_port": port, "queue": q,
                                       "occupancy_bytes": rb.astype(np.int64),
                                       "occupancy_frames": rf.astype(np.int64)}))
        if pk >= burst_on:
            for ing, gi in g.groupby("ingress_port", sort=True):
                ti, bi = fg.step_from_deltas(gi["t_ns"].to_numpy(float),
                                             gi["delta_bytes"].to_numpy(float))
                ti, bi = fg.reduce_series(ti, bi, max_points // 4)
                ing_parts.append(pd.DataFrame({"case_id": case_id, "t_ns": ti.astype(np.int64),
                                               "egress_port": port, "ingress_port": ing,
                                               "occupancy_bytes": bi.astype(np.int64)}))
    return Truth(_cat(occ_parts), _cat(ing_parts), pd.DataFrame(peaks), pd.DataFrame(bursts))


def _cat(parts: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
