"""The tap around a reference DUT in virtual time: one engine Fabric
(experiments.fabric) holding the DUT, switch 0, with its own traffic-
manager profile, and one tap switch (p4src/tap.p4) on each of its links.

    tester --(p) TAP (p + 256) ------ (p) DUT        one tap per DUT port p
                 (250) collector: the tap's reports, captured

The tap on DUT port p faces the tester with its port p and the DUT with
p + DUT_SIDE, as one tap does every link in Mininet (placement.py), so the
tap ports are unique across the taps and one Wiring serves them all; each
tap reports as its own node (NODE_BASE + p), since each counts and numbers
its reports itself. Every frame is sampled; a tap's collector port runs at
400 Gb/s, fast enough to send a report of every frame of a 100 Gb/s link
(collector_port.py), so none is lost unless `collector_rate_bps` (and
`collector_queue_frames`, the collector queue's depth) say otherwise; a
report that waits there is late, which changes nothing (it carries the
tap's timestamp), and one dropped there is found lost by the cumulative
counts of the next. The DUT's own instrument is not configured: the taps measure.

Clock. Every switch of a Fabric runs on the one virtual clock, so the taps'
timestamps (p4scope's ingress_timestamp_ns: when a frame's last bit is in)
and the DUT's traffic-manager trace share it. The link between a tap and
the DUT takes a frame's bits at the line rate plus the link's delay, from
the nanosecond its sender dequeued it (fabric.rs departure_ns, arrival_ns:
whole ns, rounded up): one the DUT dequeues at d is stamped by the tap at
d + link time. A frame going in leaves the tap when its port towards the
DUT takes it: at once (the ns the tap stamped it) unless that port is
still sending the frames before. At the tester's own rate that happens
by store and forward (a small frame is in sooner after a large one than
the large one takes to leave: frames of a size mix wait behind their
larger elders, up to one large frame's time) and by the engine's rounding
(an idle port starts a frame at a whole nanosecond, up to 1 ns after its
exact last bit came in, and the frames behind it follow back to back at
exact picoseconds, so one now and then is due a nanosecond before the
port is free). `tap_sent_ns` counts that from the tap's own reports, as
the tap's traffic manager does, and `on_dut_clock` adds it and the link
time to a frame going in and takes the link time off one coming out:
each report lands on the nanosecond the DUT's trace records, so the
inferred queue holds a frame from when the DUT has it to when it
dequeues it, exactly as the trace does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .. import collector_port
from ..fabric import Link, VirtualFabric
from ..linerate import GBPS_100
from ..params import Profile
from ..testbed import DutProgram, Flow, host_mac
from . import placement as pl
from .frames import TOWARDS, TapFrame, TapFrames
from .inference import Wiring

NODE_BASE = 0x100
TAP_PROFILE = Profile("tap", 4 * 1024 * 1024, 1.0, {"mode": "fifo"}, 1,
                      "the taps' own: a wire that holds no queue (its ports run at the "
                      "link's rate), its collector port fast and with a reserve")
FCS, PREAMBLE = 4, 8
WIRE_OVERHEAD = collector_port.WIRE_OVERHEAD
"""A port's bytes on the wire besides the frame (the engine's default)."""


def tap_profile(collector_rate_bps: Optional[float] = None,
                collector_queue_frames: Optional[int] = None) -> Profile:
    """The taps' traffic-manager profile: `collector_rate_bps` (None: 400
    Gb/s) on the collector port, whose queue holds `collector_queue_frames`
    (None: as the buffer admits)."""
    port = collector_port.port_tm(GBPS_100, TAP_PROFILE.cell_bytes)
    if collector_rate_bps is not None:
        port = {**port, "rate_bps": int(collector_rate_bps)}
    if collector_queue_frames is not None:
        port = {**port, "queue_depth": int(collector_queue_frames)}
    return replace(TAP_PROFILE, ports={pl.COLLECTOR_PORT: port})


def link_ns(frame_bytes: int, rate_bps: float, delay_ns: int = 0) -> int:
    """A frame of `frame_bytes` (no FCS) from its first bit leaving one end
    of a link to its last bit at the other, as the Fabric counts it."""
    wire_ps = ((frame_bytes + FCS + PREAMBLE) * 8 * 10**12 + int(rate_bps) // 2) // int(rate_bps)
    return -(-(wire_ps + int(delay_ns) * 1000) // 1000)


def tap_sent_ns(frames: Sequence[TapFrame], rate_bps: float) -> dict[int, int]:
    """Index in `frames` -> the nanosecond the tap's port towards the DUT
    dequeued that frame going in, for each tap (node) as its traffic
    manager sends at `rate_bps`: when the frame is in (its stamp) and the
    port has sent the frame before (to the picosecond), rounded up; a
    frame starts back to back (at the exact picosecond the port frees)
    when that is within the nanosecond before, else at the nanosecond.
    Exact while the tap reports every frame; a frame it did not report
    (sampling, lost reports) is missing from the port's history, which
    can leave a later frame a nanosecond early."""
    index, sent = _sent_ns(TapFrames.of(frames), rate_bps)
    return dict(zip(index.tolist(), sent.tolist()))


def _sent_ns(frames: TapFrames, rate_bps: float) -> tuple[np.ndarray, np.ndarray]:
    """tap_sent_ns as (indices, nanoseconds), in the order of (node, stamp)."""
    c = frames.columns
    going_in = np.flatnonzero(c["direction"] == TOWARDS)
    order = going_in[np.lexsort((c["time_ns"][going_in], c["node_id"][going_in]))]
    rate = int(rate_bps)
    out = []
    node, busy_ps, rem = None, -1, 0
    for n, t, size in zip(c["node_id"][order].tolist(), c["time_ns"][order].tolist(),
                          c["frame_bytes"][order].tolist()):
        if n != node:
            node, busy_ps, rem = n, -1, 0
        now = max(t, -(-busy_ps // 1000))
        start = busy_ps if busy_ps > (now - 1) * 1000 else now * 1000
        dur, rem = divmod((size + WIRE_OVERHEAD) * 8 * 10**12 + rem, rate)
        busy_ps = start + dur
        out.append(now)
    return order, np.array(out, dtype=np.int64)


def tap_held(frames: Sequence[TapFrame], rate_bps: float) -> int:
    """How many frames going in the taps' ports sent later than stamped."""
    frames = TapFrames.of(frames)
    index, sent = _sent_ns(frames, rate_bps)
    return int((sent > frames.columns["time_ns"][index]).sum())


def on_dut_clock(frames: Sequence[TapFrame], rate_bps: float, delay_ns: int = 0) -> TapFrames:
    """Each report's time moved to the DUT's side of its link: a frame
    going in to when the tap sent it (tap_sent_ns) plus its link time, one
    coming out earlier by its link time."""
    frames = TapFrames.of(frames)
    c = frames.columns
    sizes, size_at = np.unique(c["frame_bytes"], return_inverse=True)
    link = np.array([link_ns(int(s), rate_bps, delay_ns) for s in sizes.tolist()],
                    dtype=np.int64)[size_at]
    index, sent = _sent_ns(frames, rate_bps)
    t = c["time_ns"] - link
    t[index] = sent + link[index]
    return frames.at(t)


def wiring(ports: Sequence[int]) -> Wiring:
    """Tap port -> DUT port, and the DUT port behind each tester host's MAC
    (testbed's addressing: the host behind port p)."""
    m = {p: p for p in ports}
    m.update({p + pl.DUT_SIDE: p for p in ports})
    return Wiring(m, {host_mac(p): p for p in ports})


def _tap_setup(port: int, sample_log2_us: Optional[int]) -> Callable[[Any], None]:
    def setup(sw: Any) -> None:
        from .testbed import configure_tap

        configure_tap(sw, [port], node_id=NODE_BASE + port, sample_log2_us=sample_log2_us)
    return setup


class TappedDut:
    """The DUT (bridging `flows`) with a tap on each of `ports`; use as a
    context manager. `reset(profile)`: fresh engines, the DUT with
    `profile`, every tap's reports captured from then on. The taps report
    every frame, or with `sample_log2_us` n the first frame of every 2^n
    us in each direction (tap.p4's sampling)."""

    def __init__(self, dut: DutProgram, tap: DutProgram, profile: Profile, ports: Sequence[int],
                 flows: Sequence[Flow], *, seed: int = 0, delay_ns: int = 0,
                 collector_rate_bps: Optional[float] = None,
                 collector_queue_frames: Optional[int] = None,
                 apply_profile: Optional[Callable[[Any, Profile], None]] = None,
                 sample_log2_us: Optional[int] = None):
        self.ports = sorted(set(int(p) for p in ports))
        if not self.ports:
            raise ValueError("the tap needs at least one DUT port")
        bad = [p for p in self.ports if not 1 <= p < pl.MAX_HOST_PORT]
        if bad:
            raise ValueError(f"DUT ports {bad}: the taps number theirs 1..{pl.MAX_HOST_PORT - 1}")
        if delay_ns < 0:
            raise ValueError(f"a link's delay is at least 0 ns, not {delay_ns}")
        if sample_log2_us is not None and not 0 <= sample_log2_us <= pl.MAX_SAMPLE_LOG2_US:
            raise ValueError(f"a tap samples every 2^n us, n 0..{pl.MAX_SAMPLE_LOG2_US}, "
                             f"not {sample_log2_us}")
        self.delay_ns = int(delay_ns)
        self.sample_log2_us = sample_log2_us
        self.tap_prof = tap_profile(collector_rate_bps, collector_queue_frames)
        n = len(self.ports)
        links = [Link((1 + i, p + pl.DUT_SIDE), (0, p), self.delay_ns)
                 for i, p in enumerate(self.ports)]
        kw = {"apply_profile": apply_profile} if apply_profile is not None else {}
        self.vf = VirtualFabric([dut] + [tap] * n, [profile] + [self.tap_prof] * n,
                                [list(flows)] + [[] for _ in range(n)], links, seed=seed,
                                setups=[None] + [_tap_setup(p, sample_log2_us) for p in self.ports],
                                **kw)

    def __enter__(self) -> "TappedDut":
        self.vf.start()
        self._capture()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.vf.close()

    @property
    def dut(self) -> Any:
        """The DUT's VirtualSwitch."""
        return self.vf.switches[0]

    def tap_of(self, port: int) -> int:
        """The fabric's index of the tap on DUT port `port`."""
        return 1 + self.ports.index(port)

    def reset(self, profile: Profile) -> None:
        self.vf.reset([profile] + [self.tap_prof] * len(self.ports))
        self._capture()

    def _capture(self) -> None:
        with self.vf.locked() as f:
            for p in self.ports:
                f.capture_port(self.tap_of(p), pl.COLLECTOR_PORT)

    def add_source(self, port: int, dst_port: int, **kw: Any) -> int:
        """A tester stream into the tap on DUT port `port`, from the host
        behind it to the host behind `dst_port`; keywords as add_stream."""
        with self.vf.locked() as f:
            return int(f.add_stream(self.tap_of(port), port,
                                    **self.vf.addresses((0, port), (0, dst_port)), **kw))

    def take_reports(self) -> list[tuple[int, bytes]]:
        """Every tap's report frames since the last take, as (time leaving
        the collector port, bytes), tap by tap."""
        out: list[tuple[int, bytes]] = []
        with self.vf.locked() as f:
            for p in self.ports:
                out += [(int(t), bytes(b)) for t, b in f.take_captured(self.tap_of(p),
                                                                       pl.COLLECTOR_PORT)]
        return out

    def tap_queue_stats(self) -> list[dict[str, Any]]:
        """The taps' own queues (tm_queue_stats, with the tap's DUT port as
        `tap`), the collector ports included."""
        out = []
        for p in self.ports:
            with self.vf.switches[self.tap_of(p)].locked() as e:
                out += [{**s, "tap": p} for s in e.tm_queue_stats()]
        return out
