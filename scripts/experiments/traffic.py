"""The tester's side of a case: the engine's sources and sinks, its virtual
clock and its ground-truth trace, behind one small interface.

    tr = Traffic(vs)                      # vs: a started VirtualSwitch
    tr.trace([31])                        # record egress port 31's queues
    tr.burst(0, ingress=1, egress=31, frame_size=64, frames=1000)
    tr.stream(1, ingress=2, egress=31, mix={64: 55, 1518: 45}, load=1.0, stop_ns=10**6)
    tr.run_until(500_000, tick)           # virtual time
    tr.run_until_idle(tick)
    tr.sinks()                            # per stream: tx/rx frames and bytes, latency
    tr.trace_events()                     # the trace as a DataFrame (groundtruth)
    tr.outputs(port)                      # frames that left a port: [(time_ns, bytes)]
    tr.output_block(port)                 # the same as (times, FrameBlock)
    with trace_observed(fn): ...          # fn(t_ns, piece): the trace as virtual time runs

Frame sizes and byte counts are a tester's (FCS included); the engine's
packets are 4 bytes shorter. Every engine call happens with the device's
lock held, so P4Runtime requests see the switch between steps, never
during one; long runs go in steps so the progress bar moves and Ctrl-C is
seen between steps.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from p4scope.control.report_columns import FrameBlock
from . import groundtruth
from .testbed import VirtualSwitch, host_ip, host_mac

Tick = Callable[[float], None]
STEPS = 50  # progress steps per run

TraceObserver = Callable[[Optional[int], Mapping[str, np.ndarray]], None]
_TRACE_OBSERVERS: list[TraceObserver] = []


@contextmanager
def trace_observed(fn: TraceObserver) -> Iterator[None]:
    """Hands `fn(t_ns, piece)` each piece of the ground-truth trace that
    cases measured in this process take while the block runs: the engine's
    trace columns of the records since the last piece (the very arrays
    the case's ground truth is made of) and the virtual time reached (None
    after the final drain). For a view of the case in flight (the live
    dashboard); `fn` must be quick and must not raise."""
    _TRACE_OBSERVERS.append(fn)
    try:
        yield
    finally:
        _TRACE_OBSERVERS.remove(fn)


def apply_profile(engine: Any, profile: Any) -> None:
    """Configures a fresh engine's traffic manager with a profile."""
    engine.tm_configure(profile.tm_config(100e9))


def _weights(mix: Mapping[int, float]) -> list[tuple[int, int]]:
    """Integer weights for the engine (scaled when given as fractions)."""
    w = list(mix.items())
    if all(float(x).is_integer() for _, x in w):
        return [(int(s), int(x)) for s, x in w]
    return [(int(s), max(0, round(float(x) * 1000))) for s, x in w]


class Traffic:
    def __init__(self, vs: VirtualSwitch):
        self.vs = vs
        self.streams: dict[int, tuple[int, int]] = {}  # engine stream id -> (ingress, egress)
        self._trace: list[dict[str, Any]] = []
        # per captured port, what each step took: (times, frames)
        self._captured: dict[int, list[tuple[np.ndarray, FrameBlock]]] = {}
        self._t = 0
        self._tracing = False

    # ----- set-up ----------------------------------------------------------------

    def trace(self, ports: Sequence[int]) -> None:
        with self.vs.locked() as e:
            e.tm_trace_start(False, list(ports), 0)
        self._tracing = True

    def capture(self, port: int) -> None:
        """Keeps the frames leaving `port`."""
        with self.vs.locked() as e:
            e.capture_port(port)
        self._captured.setdefault(port, [])

    def add(self, ingress: int, egress: int, **kw: Any) -> int:
        """A stream from `ingress` meant for `egress`, with the engine's
        `add_stream` arguments; addresses default to the hosts behind the
        two ports. Returns the engine's stream id."""
        kw.setdefault("dst_mac", host_mac(egress))
        kw.setdefault("src_mac", host_mac(ingress))
        kw.setdefault("src_ip", host_ip(ingress))
        kw.setdefault("dst_ip", host_ip(egress))
        with self.vs.locked() as e:
            sid = int(e.add_stream(ingress, **kw))
        self.streams[sid] = (ingress, egress)
        return sid

    def burst(self, stream: int, ingress: int, egress: int, frame_size: int, frames: int,
              start_ns: int = 0) -> int:
        """N frames of one size at line rate from `ingress` to `egress`."""
        return self.add(ingress, egress, size=int(frame_size), frames=int(frames), rate_pct=100.0,
                        start_ns=int(start_ns), name=f"burst{stream}-p{ingress}")

    def stream(self, stream: int, ingress: int, egress: int, mix: Mapping[int, float],
               load: float = 1.0, start_ns: int = 0, stop_ns: Optional[int] = None) -> int:
        """A stream of a frame-size mix at `load` x line rate, until `stop_ns`."""
        kw: dict[str, Any] = {"weights": _weights(mix), "rate_pct": 100.0 * load,
                              "start_ns": int(start_ns), "name": f"stream{stream}-p{ingress}"}
        if stop_ns is not None:
            kw["duration_ns"] = int(stop_ns - start_ns)
        return self.add(ingress, egress, **kw)

    # ----- virtual time ------------------------------------------------------------

    def _step(self, until_ns: int, drain: bool = False) -> None:
        with self.vs.locked() as e:
            e.run(until_ns=int(until_ns), drain=drain)
            self._take(e, int(until_ns))
        self._t = until_ns

    def _take(self, e: Any, t_ns: Optional[int] = None) -> None:
        if self._tracing:
            cols = e.tm_trace_take()
            if len(cols["time_ns"]):
                piece = {k: np.asarray(v) for k, v in cols.items() if k != "overflow"}
                self._trace.append(piece)
                for fn in tuple(_TRACE_OBSERVERS):
                    fn(t_ns, piece)
            if cols.get("overflow"):
                raise RuntimeError(f"the occupancy trace overflowed ({cols['overflow']} records lost)")
        for port, buf in self._captured.items():
            times, lengths, data = e.take_captured_block(port)
            if len(lengths):
                buf.append((np.frombuffer(times, dtype=np.uint64).astype(np.int64),
                            FrameBlock(data, np.frombuffer(lengths, dtype=np.uint32))))

    def run_until(self, t_ns: int, tick: Optional[Tick] = None, every_ns: int = 0,
                  on_step: Optional[Callable[[int], None]] = None) -> None:
        """Runs sources and switch to virtual time `t_ns` in steps: at every
        multiple of `every_ns` (calling `on_step(t)` there: the instrument
        is polled between steps), else in STEPS equal steps."""
        t0 = self._t
        if every_ns > 0:
            # stop 1 ns before each multiple of every_ns: everything of the
            # period that ends there has happened, nothing of the next one
            first = ((t0 + 1) // every_ns + 1) * every_ns - 1
            points = list(range(first, t_ns + 1, every_ns))
            if not points or points[-1] != t_ns:
                points.append(t_ns)
        else:
            points = [t0 + (t_ns - t0) * k // STEPS for k in range(1, STEPS + 1)]
        for k, p in enumerate(points, start=1):
            self._step(p)
            if on_step is not None and (every_ns <= 0 or (p + 1) % every_ns == 0):
                on_step(p + 1)
            if tick:
                tick(k / len(points))

    def busy(self) -> bool:
        """Whether any queue still holds packets."""
        with self.vs.locked() as e:
            return any(q["pkts"] for q in e.tm_queue_stats())

    def run_until_idle(self, tick: Optional[Tick] = None, expected_ns: float = 0.0,
                       every_ns: int = 0, on_step: Optional[Callable[[int], None]] = None,
                       max_extra_steps: int = 10_000) -> None:
        """Runs until every source is done and the switch is empty; the
        progress follows `expected_ns` (how long that should take). With
        `every_ns`, stepping (and `on_step`) goes on until the queues are
        empty, then one more step."""
        if expected_ns > 0:
            self.run_until(int(expected_ns), (lambda f: tick(0.95 * f)) if tick else None,
                           every_ns, on_step)
        if every_ns > 0:
            after_idle = 0
            for _ in range(max_extra_steps):
                after_idle = after_idle + 1 if not self.busy() else 0
                self.run_until(((self._t + 1) // every_ns + 1) * every_ns - 1, None, every_ns,
                               on_step)
                if after_idle >= 2:  # the instrument saw the queue empty too
                    break
        with self.vs.locked() as e:
            e.run(until_ns=2**62, drain=True)
            self._take(e)
        if tick:
            tick(1.0)

    # ----- results -----------------------------------------------------------------

    def sinks(self) -> pd.DataFrame:
        """Per stream: ingress/egress port, tx and rx (on its egress port)
        frames and bytes, latency."""
        with self.vs.locked() as e:
            rows = e.stream_stats()
        out = []
        for sid, (ing, eg) in self.streams.items():
            mine = [r for r in rows if r["stream"] == sid]
            rx = [r for r in mine if r.get("rx_port") == eg]
            r0 = rx[0] if rx else (mine[0] if mine else {})
            out.append({"stream": sid, "ingress_port": ing, "egress_port": eg,
                        "tx_frames": int(r0.get("tx_frames", 0)), "tx_bytes": int(r0.get("tx_bytes", 0)),
                        "rx_frames": int(rx[0]["rx_frames"]) if rx else 0,
                        "rx_bytes": int(rx[0]["rx_bytes"]) if rx else 0,
                        "lat_min_ns": r0.get("lat_min_ns") if rx else None,
                        "lat_avg_ns": r0.get("lat_avg_ns") if rx else None,
                        "lat_max_ns": r0.get("lat_max_ns") if rx else None})
        return pd.DataFrame(out)

    def digest(self) -> str:
        """The engine's hash of every frame that left the switch (equal for
        two runs exactly when they agree)."""
        with self.vs.locked() as e:
            return str(e.sim_digest())

    def trace_events(self) -> pd.DataFrame:
        if not self._trace:
            return groundtruth.trace_frame({c: np.array([], np.int64)
                                            for c in groundtruth.TRACE_COLUMNS})
        cols = {c: np.concatenate([t[c] for t in self._trace]) for c in groundtruth.TRACE_COLUMNS}
        return groundtruth.trace_frame(cols)

    def outputs(self, port: int) -> list[tuple[int, bytes]]:
        times, frames = self.output_block(port)
        return list(zip(times.tolist(), frames))

    def output_block(self, port: int) -> tuple[np.ndarray, FrameBlock]:
        """The frames that left a captured `port`: departure times (ns) and
        the frames in one block."""
        pieces = self._captured.get(port, [])
        times = np.concatenate([t for t, _ in pieces]) if pieces else np.array([], np.int64)
        return times, FrameBlock.joined([f for _, f in pieces])
