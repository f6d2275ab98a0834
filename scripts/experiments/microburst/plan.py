"""Microburst absorption (seed 000's method; 4:1 as in seed 001).

Per case: k ingress ports each send a burst of N frames of one size at
line rate, all starting at the same instant, to one egress port; the run
goes on until the switch is empty. From the sinks: forwarded frames per
ingress port, buffered = forwarded - N (Tolly), capacity in frames, bytes
and MB. From the traffic manager's trace: the true occupancy, its peak and
the burst's start and end. From the instrument: what it reported.

N is chosen from the configured buffer (theory.burst_frames_needed) so the
bursts always overflow the queue, unless --burst-frames fixes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import pandas as pd

from .. import figures as fg
from .. import theory as th
from ..params import Profile
from .params import MicroburstParams
from ..runner import Case

EXPERIMENT = "microburst"


@dataclass(frozen=True)
class BurstPlan:
    """Everything one microburst case needs, derived from the parameters."""

    scenario: str  # "2:1" or "4:1"
    combination: str
    ingress: tuple[int, ...]
    egress: int
    frame_size: int
    profile: str
    burst_frames: int
    footprint: int  # buffer bytes per frame
    expected_frames: int
    limit_bytes: float  # the configured queue limit (theory)
    rate_bps: float

    def burst_on(self, unit: str) -> int:
        """The instrument's burst threshold: 10% of the expected peak, at
        least two frames; in frame bytes (no FCS, as the switch counts) or
        in frames."""
        frames = max(2, int(0.1 * self.expected_frames))
        return frames * (self.frame_size - 4) if unit == "bytes" else frames

    def burst_off(self, unit: str) -> int:
        """Half the start threshold: the burst ends when the queue drains."""
        return max(1, self.burst_on(unit) // 2)

    @property
    def duration_ns(self) -> float:
        """Bursts plus the drain of a full queue, at line rate."""
        from ..linerate import frame_time_ns

        t = frame_time_ns(self.frame_size, self.rate_bps)
        return self.burst_frames * t + self.expected_frames * t


def case_id(scenario: str, combination: str, size: int, profile: str) -> str:
    slug = combination.replace(" ", "").lower()
    return f"{EXPERIMENT}/{scenario.replace(':', 'to')}-{slug}/{size}B/{profile}"


def plan(params: MicroburstParams, profiles: dict[str, Profile]) -> list[Case]:
    """The cases: per profile, per scenario and port combination, per frame size."""
    params.check()
    cases = []
    for prof in profiles.values():
        prof.check()
        for scenario, combos, sizes in (("2:1", params.combos_2to1, params.sizes_2to1),
                                        ("4:1", params.combos_4to1, params.sizes_4to1)):
            for name, ports in combos:
                for size in sizes:
                    fp = prof.footprint(size)
                    k = len(ports)
                    voqs = k if prof.per_ingress_admission else 1
                    admitted = th.dt_admitted_frames(prof.shared_bytes, prof.alpha, fp, voqs=voqs)
                    n = params.burst_frames or th.burst_frames_needed(admitted, k, params.margin)
                    bp = BurstPlan(scenario, name, tuple(ports), params.egress, size, prof.name, n,
                                   fp, th.burst_absorption_frames(admitted, k, n),
                                   voqs * th.dt_queue_limit(prof.shared_bytes, prof.alpha, voqs),
                                   params.rate_bps)
                    label = (f"microburst {scenario} {name} {size} B {prof.name} "
                             f"({k}x{n:,} frames)")
                    cases.append(Case(case_id(scenario, name, size, prof.name), EXPERIMENT, label,
                                      case_params(bp), weight=float(k * n)))
    return cases


def case_params(bp: BurstPlan) -> dict[str, Any]:
    """A case's parameters, as stored with the case."""
    return {"scenario": bp.scenario, "combination": bp.combination, "ingress": list(bp.ingress),
            "egress": bp.egress, "frame_size": bp.frame_size, "profile": bp.profile,
            "burst_frames": bp.burst_frames, "footprint": bp.footprint,
            "expected_frames": bp.expected_frames, "limit_bytes": bp.limit_bytes,
            "rate_bps": bp.rate_bps}


def plan_of(case: Case) -> BurstPlan:
    p = case.params
    return BurstPlan(p["scenario"], p["combination"], tuple(p["ingress"]), p["egress"],
                     p["frame_size"], p["profile"], p["burst_frames"], p["footprint"],
                     p["expected_frames"], p["limit_bytes"], p["rate_bps"])


def result_row(case: Case, bp: BurstPlan, sinks: pd.DataFrame,
               truth_peak_bytes: Optional[float] = None) -> dict[str, Any]:
    """The case's row of the microburst table, from the sinks' counts.

    `sinks`: one row per stream with ingress_port, tx_frames, rx_frames."""
    per_port = sinks.set_index("ingress_port").reindex(list(bp.ingress))
    fwd = [int(x) for x in per_port["rx_frames"].fillna(0)]
    sent = [int(x) for x in per_port["tx_frames"].fillna(0)]
    a = fg.absorption(fwd, bp.burst_frames, bp.frame_size)
    row = {
        "case_id": case.case_id, "experiment": EXPERIMENT, "profile": bp.profile,
        "scenario": bp.scenario, "combination": bp.combination,
        "ingress_ports": " ".join(str(p) for p in bp.ingress), "egress_port": bp.egress,
        "frame_size": bp.frame_size, "burst_frames": bp.burst_frames,
        "sent_total": sum(sent), "forwarded_per_port": " ".join(str(x) for x in fwd),
        "forwarded_total": a.forwarded, "buffered_frames": a.buffered_frames,
        "buffered_bytes": a.buffered_bytes, "buffered_mb": a.buffered_mb,
        "expected_frames": bp.expected_frames,
        "expected_mb": bp.expected_frames * bp.frame_size / fg.MIB,
        "error_rel": fg.relative_error(a.buffered_frames, bp.expected_frames),
        "footprint_bytes": bp.footprint, "limit_bytes": bp.limit_bytes,
        "lost_frames": sum(sent) - a.forwarded,
    }
    if truth_peak_bytes is not None:
        row["peak_truth_bytes"] = truth_peak_bytes
    return row


def sent_check(bp: BurstPlan, sinks: pd.DataFrame) -> None:
    """Every source sent its N frames (else the case measured nothing)."""
    short = sinks[sinks["tx_frames"] != bp.burst_frames]
    if not short.empty:
        raise RuntimeError(f"sources sent {list(short['tx_frames'])} frames, not "
                           f"{bp.burst_frames} each")

