"""Planning and measuring the frame-loss cases: one trial per (scenario,
frame size) at the offered load, on any testbed (tester/testbed.py)."""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from ..linerate import frames_per_second
from ..runner import Case, Tables, Tick
from ..tester.streams import Stream, full_mesh, pair
from . import EXPERIMENT
from .params import FrameLossParams, describe, routed, scenario_ports


def plan(p: FrameLossParams) -> list[Case]:
    cases = []
    for sc in p.scenarios:
        kind, ports = scenario_ports(sc)
        for size in p.sizes:
            cases.append(Case(f"{EXPERIMENT}/{sc}/{size}", EXPERIMENT,
                              f"frame loss {sc} {size} B at {p.load_pct:g} %",
                              {"scenario": sc, "size": size}, weight=float(len(ports))))
    return cases


def streams_of(p: FrameLossParams, scenario: str, size: int) -> list[Stream]:
    kind, ports = scenario_ports(scenario)
    if kind == "mesh":
        return full_mesh(ports, size, p.load_pct, p.rate_bps)
    return [s for a, b in zip(ports[::2], ports[1::2]) for s in pair(a, b, size, p.load_pct)]


class FrameLossMeasure:
    """measure(case, tick) -> tables, one trial per case."""

    def __init__(self, bed: Any, p: FrameLossParams, store: Callable[[str, Any], None]):
        self.bed, self.p, self.store = bed, p, store

    def __call__(self, case: Case, tick: Tick) -> Tables:
        sc, size = case.params["scenario"], int(case.params["size"])
        duration = int(self.p.trial_frames / (frames_per_second(size, self.p.rate_bps)
                                              * self.p.load_pct / 100.0) * 1e9) + 1
        self.bed.routed = routed(sc)  # the virtual testbed bridges or routes
        t = self.bed.trial(streams_of(self.p, sc, size), duration, tick=tick)
        s = t.summary()
        row = {"case_id": case.case_id, "experiment": EXPERIMENT, "scenario": sc,
               "description": describe(sc), "frame_size": size, "offered_pct": self.p.load_pct,
               "ports": len(scenario_ports(sc)[1]), "layer": 3 if routed(sc) else 2,
               "streams": len(t.streams),
               "tx_frames": s["tx_frames"], "rx_frames": s["rx_frames"], "lost": s["lost"],
               "loss_pct": s["loss_pct"], "queued_at_end": s["queued_at_end"],
               "misdelivered": s["misdelivered"], "generator_short": s["generator_short"],
               "rx_l1_bps": s["rx_l1_bps"], "duration_ns": duration}
        streams = t.streams.assign(case_id=case.case_id, scenario=sc)
        return {"frame_loss": pd.DataFrame([row]),
                "frame_loss_streams": streams.astype({"duplicated": "Int64"})}
