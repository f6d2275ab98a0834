"""Who built a burst: the ingress ports behind it and their flows, from a
case's stored tables.

* a ground-truth burst: what each ingress port held in the queue at the
  burst's peak (ground_truth_ingress, a step series per ingress port);
* an instrument burst: the packets the instrument reported while it
  lasted, per ingress port (instrument_series' burst_pkt rows: the
  collector's own count, BurstEvent.by_ingress); a burst whose packets
  were not reported falls back to the ground truth at its peak.

The flows are the case's streams (streams table) from those ingress ports
to the burst's egress port: the traffic generator's flows that met there.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
import pandas as pd

Culprit = dict[str, Any]  # {"port", "amount", "share", "unit"}


def held_at(gi: pd.DataFrame, egress: int, t_ns: float) -> list[Culprit]:
    """What each ingress port held in `egress`'s queue at `t_ns` (the last
    record at or before it), largest first; ports holding nothing left out."""
    if gi.empty or not math.isfinite(t_ns):
        return []
    d = gi[(gi["egress_port"] == egress) & (gi["t_ns"] <= t_ns)]
    if d.empty:
        return []
    last = d.sort_values("t_ns", kind="stable").groupby("ingress_port").tail(1)
    held = zip(last["ingress_port"], last["occupancy_bytes"])
    return _ranked({int(p): float(b) for p, b in held}, "bytes held at the peak")


def reported_during(ins: pd.DataFrame, egress: int, start: float, end: float) -> list[Culprit]:
    """Per ingress port, the packets the instrument reported leaving
    `egress` from `start` to `end` (an open end: to the last report)."""
    if ins.empty or "ingress_port" not in ins.columns or not math.isfinite(start):
        return []
    d = ins[(ins["kind"] == "burst_pkt") & (ins["egress_port"] == egress) & (ins["t_ns"] >= start)]
    if math.isfinite(end):
        d = d[d["t_ns"] <= end]
    d = d[d["ingress_port"] >= 0]
    return _ranked({int(p): float(n) for p, n in d.groupby("ingress_port").size().items()},
                   "packets reported")


def _ranked(amounts: dict[int, float], unit: str) -> list[Culprit]:
    total = sum(a for a in amounts.values() if a > 0)
    if total <= 0:
        return []
    return [{"port": p, "amount": a, "share": a / total, "unit": unit}
            for p, a in sorted(amounts.items(), key=lambda kv: (-kv[1], kv[0])) if a > 0]


def flows_of(st: pd.DataFrame, egress: int, ingress: list[int]) -> list[str]:
    """The case's streams from those ingress ports to `egress`, named."""
    if st.empty or not {"ingress_port", "egress_port"} <= set(st.columns) or not ingress:
        return []
    d = st[(st["egress_port"] == egress) & st["ingress_port"].isin(ingress)]
    sid = d["stream"] if "stream" in d.columns else pd.Series(range(len(d)), index=d.index)
    order = {p: i for i, p in enumerate(ingress)}  # the biggest contributor first
    rows = sorted(zip(d["ingress_port"], sid), key=lambda r: (order[int(r[0])], int(r[1])))
    return [f"stream {int(s)}: port {int(p)} \u2192 {egress}" for p, s in rows]


def blame(burst: dict[str, Any], gi: pd.DataFrame, ins: pd.DataFrame, st: pd.DataFrame) -> None:
    """Adds `ingress` (culprits) and `flows` to a burst of a case's view."""
    eg = burst["egress_port"]
    start, end = _f(burst.get("start_ns")), _f(burst.get("end_ns"))
    who: list[Culprit] = []
    if burst["source"] == "instrument":
        who = reported_during(ins, eg, start, end)
    if not who:
        who = held_at(gi, eg, _f(burst.get("peak_ns")) if burst["source"] == "truth"
                      else _peak_time(gi, eg, start, end))
    burst["ingress"] = who
    burst["flows"] = flows_of(st, eg, [c["port"] for c in who])


def _peak_time(gi: pd.DataFrame, egress: int, start: float, end: float) -> float:
    """When the ingress ports together held the most in [start, end]."""
    if gi.empty or not math.isfinite(start):
        return math.nan
    d = gi[gi["egress_port"] == egress].sort_values("t_ns", kind="stable")
    if d.empty:
        return math.nan
    wide = d.pivot_table(index="t_ns", columns="ingress_port", values="occupancy_bytes",
                         aggfunc="last").ffill().fillna(0.0)
    total = wide.sum(axis=1)
    inside = total[(total.index >= start) & ((total.index <= end) if math.isfinite(end) else True)]
    return float(inside.idxmax()) if not inside.empty else math.nan


def _f(x: Optional[Any]) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v if not np.isnan(v) else math.nan
