"""A 2:1 microburst through the reference DUT with the taps on its links,
in virtual time: what the taps captured and what the DUT's trace recorded
(for the tests of the tap's reports)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class TappedBurst:
    captured: list[tuple[int, bytes]]
    """The taps' reports as (time, frame)."""
    trace: dict[str, np.ndarray]
    """The DUT's occupancy trace of the congested port."""
    case: Any
    plan: Any
    """The case's microburst.plan.BurstPlan."""
    ports: list[int]


def burst_through_taps(dut: Any, tap: Any, frame_size: int, buffer_mb: float = 1.0) -> TappedBurst:
    from p4scope.experiments import traffic
    from p4scope.experiments.microburst import plan as mbx
    from p4scope.experiments.microburst import tap_virtual as mtv
    from p4scope.experiments.microburst.params import MicroburstParams
    from p4scope.experiments.params import EngineOptions
    from p4scope.experiments.tap import virtual as tv
    from p4scope.experiments.tap import virtual_run as vr

    prof = EngineOptions(buffer_mb, 1.0, 256, 1).profiles("fair")["fair"]
    mb = MicroburstParams(sizes_2to1=(frame_size,), sizes_4to1=(),
                          combos_2to1=(("Test 1", (1, 2)),)).check()
    case = mbx.plan(mb, {prof.name: prof})[0]
    bp = mbx.plan_of(case)
    ports, flows = vr.fabric_ports([case])
    with tv.TappedDut(dut, tap, prof, ports, flows, seed=1,
                      apply_profile=traffic.apply_profile) as td:
        td.reset(prof)
        with td.dut.locked() as e:
            e.tm_trace_start(True, [bp.egress], 0)
        for p in bp.ingress:
            td.add_source(p, bp.egress, size=bp.frame_size, frames=bp.burst_frames,
                          rate_pct=100.0, line_rate_bps=bp.rate_bps,
                          vary=mtv.numbering(bp.frame_size))
        with td.vf.locked() as f:
            f.run(until_ns=2**62, drain=True)
        with td.dut.locked() as e:
            cols = {k: np.asarray(v) for k, v in e.tm_trace_stop().items() if k != "overflow"}
        return TappedBurst(td.take_reports(), cols, case, bp, ports)
