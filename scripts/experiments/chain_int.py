"""INT-MD through a chain of reference DUTs in virtual time: each hop's
latency and queue occupancy as the INT-MD reports give them, next to the
switch's own ground truth, and the hops adding up to the tester's latency.

Switch i of fabric.chain(n) is INT-MD node i + 1 (its reports carry the
same node id). The first switch is the source of the eastbound stream
(frames entering WEST) and the sink of the westbound one (leaving WEST);
the last switch the other way round; the switches between are transit
hops. Each sink's reports leave by its collector port, which the run
captures: the stack of the hops before the sink and the sink's own hop,
which p4scope's Collector joins per packet (IntMdPath).

Ground truth (chain_latency): each switch's traffic-manager trace has the
frame's enqueue (= its arrival: ingress takes no virtual time) and its
dequeue (egress starts, first bit out). INT-MD's hop latency is egress
minus ingress timestamp, in ns from p4scope's clock, so per hop

    INT hop latency       = dequeue - enqueue             (exactly)
    INT queue occupancy   = frames in the queue at enqueue, this one not counted
    tester's latency      = sum of INT hop latencies + the wires into each hop

where a wire carries the frame as the hop before left it: the source adds
the shim and the INT-MD header (16 bytes) and its hop's Hop ML words,
every transit another Hop ML words, the sink takes it all off again.

    with int_md_chain(dut, 4, profile, delay_ns=250) as vf:
        r = run_int_chain(vf, 64, pct=30, frames=300, burst=50)
        hop_rows(r), hop_summary(r), sum_rows(r)
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np
import pandas as pd

from . import chain_latency as cl
from .collector_port import COLLECTOR_PORT
from .fabric import EAST, WEST, VirtualFabric, chain
from .linerate import GBPS_100
from .params import Profile
from .testbed import (COLLECTOR_IP_STR, COLLECTOR_UDP, SWITCH_IP_STR, SWITCH_MAC, DutProgram,
                      host_mac)

INT_SNAP_BYTES = 40
"""Bytes of a packet in the sink's postcard: enough for the collector to
join it with the stack report (IPv4 identification, addresses, UDP source
port), and short of a 64-byte frame's tester tag, so that no report is
counted as a received frame."""
SHIM_AND_HEADER = 16


def int_md_setup(index: int, n: int, instructions: Optional[int] = None,
                 max_hops: Optional[int] = None,
                 util_window_log2_ns: Optional[int] = None) -> Callable[[Any], None]:
    """What switch `index` of a chain of `n` is told over P4Runtime (a
    VirtualSwitch.setup_switch): its node id in reports and INT-MD, the
    first and last switch's source and sink roles (every hop asked for
    `instructions`, at most `max_hops` of them: default all, n)."""
    from p4scope.control.apps.int_md import (ALL_INSTRUCTIONS, DEFAULT_UTIL_WINDOW_LOG2_NS,
                                             IntMd)
    from p4scope.control.apps.telemetry import configure_collector

    ins = ALL_INSTRUCTIONS if instructions is None else instructions
    hops = n if max_hops is None else max_hops
    node = index + 1
    window = DEFAULT_UTIL_WINDOW_LOG2_NS if util_window_log2_ns is None else util_window_log2_ns

    def setup(sw: Any) -> None:
        configure_collector(sw, COLLECTOR_PORT, SWITCH_IP_STR, COLLECTOR_IP_STR,
                            collector_mac=_mac(host_mac(COLLECTOR_PORT)),
                            switch_mac=_mac(SWITCH_MAC), udp_port=COLLECTOR_UDP, node_id=node,
                            snaplen=INT_SNAP_BYTES)
        md = IntMd(sw)
        md.node(node, window)
        for end, port in ((0, WEST), (n - 1, EAST)):
            if index == end:
                md.source(ingress_port=port, instructions=ins, max_hops=hops)
                md.sink_port(port)

    return setup


def _mac(v: int) -> str:
    return ":".join(f"{b:02x}" for b in v.to_bytes(6, "big"))


@contextmanager
def int_md_chain(program: DutProgram, n: int, profile: Profile, *,
                 instructions: Optional[int] = None, max_hops: Optional[int] = None,
                 util_window_log2_ns: Optional[int] = None,
                 **chain_kw: Any) -> Iterator[VirtualFabric]:
    """fabric.chain(...) started, every switch with its INT-MD role (from
    the next reset on: run_int_chain resets)."""
    with chain(program, n, profile, **chain_kw) as vf:
        for i, vs in enumerate(vf.switches):
            vs.setup_switch = int_md_setup(i, n, instructions, max_hops, util_window_log2_ns)
        yield vf


@dataclass
class IntChainRun:
    run: cl.ChainRun
    collector: Any
    """p4scope.control.apps.collector.Collector fed with both sinks' reports."""

    def paths(self, direction: str) -> list:
        """The IntMdPaths of one direction, in the order the sink took the
        packets in (the stream's order: every hop is FIFO)."""
        sink = self.run.layers if direction == "east" else 1
        return [p for p in self.collector.int_md_paths if p.node_id == sink]


def run_int_chain(vf: VirtualFabric, frame_size: int, pct: float, frames: int,
                  directions: Sequence[str] = cl.DIRECTIONS, burst: Optional[int] = None,
                  rate_bps: float = GBPS_100) -> IntChainRun:
    """chain_latency.run_chain on an int_md_chain, the sinks' collector
    ports captured and their reports collected."""
    from p4scope.control.apps.collector import Collector

    n = len(vf)
    sinks = sorted({(0, COLLECTOR_PORT), (n - 1, COLLECTOR_PORT)})
    run = cl.run_chain(vf, frame_size, pct, frames, directions, burst, rate_bps, capture=sinks)
    c = Collector(udp_port=COLLECTOR_UDP)
    frames_in_time = sorted((t, end, data) for end in sinks for t, data in run.captured[end])
    c.feed_frames(data for _, _, data in frames_in_time)
    return IntChainRun(run, c)


def enqueue_depths(run: cl.ChainRun, direction: str) -> np.ndarray:
    """Frames already in the queue when each frame was enqueued (ground
    truth), one row per frame, one column per hop (as cl.hop_times)."""
    cols = []
    for sw, port in cl._path(run, direction):
        t = run.traces[sw]
        sel = (t["port"] == port) & (t["kind"] == cl.ENQ)
        cols.append(t["q_pkts"][sel].astype(np.int64) - 1)
    return np.stack(cols, axis=1)


def _int_columns(r: IntChainRun, direction: str, name: str) -> np.ndarray:
    paths = r.paths(direction)
    want = r.run.sent[direction]
    if len(paths) != want or any(len(p.hops) != r.run.layers for p in paths):
        got = sum(len(p.hops) == r.run.layers for p in paths)
        raise ValueError(f"{direction}: {got} of {want} frames reported with all "
                         f"{r.run.layers} hops (reports lost, or INT-MD did not reach them)")
    return np.array([[getattr(h, name) for h in p.hops] for p in paths], dtype=np.int64)


def hop_rows(r: IntChainRun) -> pd.DataFrame:
    """Per direction, frame and hop (1 = the first switch crossed): INT-MD's
    node, hop latency, queue occupancy and ingress timestamp next to the
    ground truth's residence, depth at enqueue and enqueue time."""
    parts = []
    for d in r.run.streams:
        enq, deq = cl.hop_times(r.run, d)
        depth = enqueue_depths(r.run, d)
        lat = _int_columns(r, d, "hop_latency_ns")
        occ = _int_columns(r, d, "queue_occupancy")
        node = _int_columns(r, d, "node_id")
        ts = _int_columns(r, d, "ingress_ts_ns")
        frames, hops = lat.shape
        switch = [sw for sw, _ in cl._path(r.run, d)]
        parts.append(pd.DataFrame({
            "direction": d, "frame": np.repeat(np.arange(frames), hops),
            "hop": np.tile(np.arange(1, hops + 1), frames), "switch": np.tile(switch, frames),
            "node_id": node.ravel(), "int_latency_ns": lat.ravel(),
            "truth_residence_ns": (deq - enq).ravel(), "int_occupancy": occ.ravel(),
            "truth_occupancy": depth.ravel(), "int_ingress_ts_ns": ts.ravel(),
            "truth_enqueue_ns": enq.ravel()}))
    out = pd.concat(parts, ignore_index=True)
    out["latency_error_ns"] = out["int_latency_ns"] - out["truth_residence_ns"]
    out["occupancy_error"] = out["int_occupancy"] - out["truth_occupancy"]
    return out


def hop_summary(r: IntChainRun, rows: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """Per direction and hop: INT-MD's and the ground truth's latency
    (average, max) and queue occupancy (average, max), and the largest
    difference of each, frame by frame."""
    rows = hop_rows(r) if rows is None else rows
    g = rows.groupby(["direction", "hop", "switch", "node_id"], sort=False)
    out = g.agg(int_latency_avg_ns=("int_latency_ns", "mean"),
                truth_latency_avg_ns=("truth_residence_ns", "mean"),
                int_latency_max_ns=("int_latency_ns", "max"),
                truth_latency_max_ns=("truth_residence_ns", "max"),
                latency_error_max_ns=("latency_error_ns", lambda s: s.abs().max()),
                int_occupancy_avg=("int_occupancy", "mean"),
                truth_occupancy_avg=("truth_occupancy", "mean"),
                int_occupancy_max=("int_occupancy", "max"),
                truth_occupancy_max=("truth_occupancy", "max"),
                occupancy_error_max=("occupancy_error", lambda s: s.abs().max()))
    return out.reset_index()


def wire_sizes(r: IntChainRun, direction: str) -> list[int]:
    """Per hop, the size (FCS included) of the frame on the wire into it:
    the tester's frame, then as each hop before left it."""
    stack = r.paths(direction)[0].stack
    per_hop = 4 * stack.hop_ml
    base = r.run.frame_size
    return [base] + [base + SHIM_AND_HEADER + per_hop * (h + 1)
                     for h in range(r.run.layers - 1)]


def sum_rows(r: IntChainRun) -> pd.DataFrame:
    """Per frame: the tester's latency against the INT-MD hop latencies
    plus the wires into every hop (each at its link's rate and delay, with
    the frame's size there), and the difference (ns)."""
    parts = []
    for d, sid in r.run.streams.items():
        lat = _int_columns(r, d, "hop_latency_ns").sum(axis=1)
        wires = cl.wires_in(r.run, d)          # at the tester's frame size
        sizes = wire_sizes(r, d)
        rates = [r.run.rate_bps] + [_link_rate(r.run, sw, port)
                                    for sw, port in cl._path(r.run, d)[:-1]]
        grown = sum(w - cl.wire_ns(r.run.frame_size, rate) + cl.wire_ns(size, rate)
                    for w, size, rate in zip(wires, sizes, rates))
        sel = r.run.records["stream"] == sid
        order = np.argsort(r.run.records["seq"][sel], kind="stable")
        tester = (r.run.records["rx_ns"][sel].astype(np.int64)
                  - r.run.records["tx_ns"][sel].astype(np.int64))[order]
        total = lat + grown
        parts.append(pd.DataFrame({"direction": d, "frame": np.arange(tester.size),
                                   "tester_latency_ns": tester, "int_hops_ns": lat,
                                   "wires_ns": grown, "difference_ns": tester - total}))
    return pd.concat(parts, ignore_index=True)


def _link_rate(run: cl.ChainRun, sw: int, port: int) -> float:
    return next(x["rate_bps"] for x in run.links
                if (x["from_switch"], x["from_port"]) == (sw, port))
