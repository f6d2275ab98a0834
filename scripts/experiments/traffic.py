"""The tester's side of a case: the engine's sources and sinks, its virtual
clock and its ground-truth trace, behind one small interface.

    tr = Traffic(vs)                      # vs: a started VirtualSwitch
    tr.trace([31])                        # record egress port 31's queues
    tr.burst(0, ingress=1, egress=31, frame_size=64, frames=1000)
    tr.stream(1, ingress=2, egress=31, mix={64: 55, 1518: 45}, load=1.0, stop_ns=10**6)
    tr.run_until(500_000, tick)           # virtual time
    tr.run_until_idle(tick)
    tr.sinks()                            # per stream: tx/rx frames and bytes, latency
    tr.trace_events()                     # groundtruth.EVENT_COLUMNS
    tr.outputs(port)                      # frames that left a port: [(time_ns, bytes)]

Frame sizes and byte counts are a tester's (FCS included); the engine's
packets are 4 bytes shorter. Everything here runs with the device's lock
held, so P4Runtime requests see the switch between steps, never during one.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

import pandas as pd

from .testbed import MissingEngineAPI, VirtualSwitch

Tick = Callable[[float], None]

# What the experiments need from p4scope_dataplane.Engine. Checked before a
# run starts, so a run never begins on an engine that cannot finish it.
REQUIRED = {
    "tm_configure": "traffic-manager configuration (line rate, shared buffer, alpha, arbitration)",
    "add_source": "traffic sources: bursts of N frames and streams with a frame-size mix",
    "sink_stats": "sinks: per-stream tx/rx frames and bytes",
    "trace_enable": "the ground-truth occupancy trace",
    "take_trace": "reading the trace",
}


def missing_api(engine_cls: Any = None) -> list[str]:
    """The engine calls the experiments need that are not there."""
    if engine_cls is None:
        try:
            import p4scope_dataplane

            engine_cls = p4scope_dataplane.Engine
        except ImportError:
            return ["the p4scope_dataplane module (run scripts/setup.sh)"]
    return [f"Engine.{name} ({why})" for name, why in REQUIRED.items()
            if not hasattr(engine_cls, name)]


def check_engine() -> None:
    miss = missing_api()
    if miss:
        raise MissingEngineAPI("the engine cannot run virtual-time experiments yet; missing: "
                               + "; ".join(miss))


def apply_profile(engine: Any, profile: Any) -> None:
    """Configures a fresh engine's traffic manager with a profile."""
    import json

    if not hasattr(engine, "tm_configure"):
        raise MissingEngineAPI("Engine.tm_configure is missing")
    engine.tm_configure(json.dumps(profile.tm_config(_rate(profile))))


def _rate(profile: Any) -> float:
    return float(getattr(profile, "rate_bps", 100e9))


class Traffic:
    def __init__(self, vs: VirtualSwitch):
        check_engine()
        self.vs = vs
        self._streams: dict[int, dict[str, Any]] = {}

    def trace(self, ports: Sequence[int]) -> None:
        with self.vs.locked() as e:
            e.trace_enable(list(ports))

    def burst(self, stream: int, ingress: int, egress: int, frame_size: int, frames: int,
              start_ns: int = 0) -> None:
        raise MissingEngineAPI("sources: to be written against Engine.add_source")

    def stream(self, stream: int, ingress: int, egress: int, mix: Mapping[int, float],
               load: float = 1.0, start_ns: int = 0, stop_ns: Optional[int] = None) -> None:
        raise MissingEngineAPI("sources: to be written against Engine.add_source")

    def run_until(self, t_ns: int, tick: Optional[Tick] = None) -> None:
        raise MissingEngineAPI("virtual time with sources")

    def run_until_idle(self, tick: Optional[Tick] = None, expected_ns: float = 0.0) -> None:
        raise MissingEngineAPI("virtual time with sources")

    def sinks(self) -> pd.DataFrame:
        raise MissingEngineAPI("sinks")

    def trace_events(self) -> pd.DataFrame:
        raise MissingEngineAPI("trace")

    def outputs(self, port: int) -> list[tuple[int, bytes]]:
        raise MissingEngineAPI("outputs of a port")
