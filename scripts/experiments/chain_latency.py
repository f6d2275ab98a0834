"""Latency per layer of a chain of switches (seed 003's "4 layers"), and
each hop's share of it from the switches' own ground truth.

Seed 003 measures RFC 2889 through 1 and through 4 chained switches with
the tester on the first and the last, and tabulates latency (average, min,
max) and jitter per frame size for each layer. Here layer k is a chain of
k reference DUTs (fabric.chain), the tester on its first and last switch,
a stream each way at `pct` of line rate: the tester's FIFO latency (first
bit out minus first bit in) per direction.

Every switch's traffic-manager trace says when each frame was enqueued
(complete at that switch: store and forward) and dequeued (first bit out),
so the end-to-end latency splits into hops exactly:

    latency = sum over hops of (dequeue - enqueue)               ground truth
            + sum over wires of (size + 8) x 8 / rate + delay     tester's port and links

`hop_table` gives each hop's residence and each wire's time; `sum_check`
compares, frame by frame, the tester's latency with that sum (it must
agree within one frame time: the engine keeps times in whole ns).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd

from .fabric import EAST, WEST, End, VirtualFabric, chain
from .linerate import GBPS_100, PREAMBLE_SFD, frame_time_ns
from .params import Profile
from .testbed import DutProgram

SEED_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)
"""Seed 003's frame sizes."""
ENQ, DEQ = 0, 1  # the trace's kinds
DIRECTIONS = ("east", "west")
"""east: from the first switch's tester port to the last's; west: back."""


@dataclass
class ChainRun:
    """One run through a chain: what the tester and each switch recorded."""

    layers: int
    frame_size: int
    rate_bps: float
    """The tester ports' line rate."""
    links: list[dict[str, Any]]
    """Fabric.links(): each direction's rate and delay."""
    streams: dict[str, int]
    """direction -> the tester's stream id."""
    sent: dict[str, int]
    """direction -> frames sent."""
    records: dict[str, np.ndarray]
    """The tester's per-frame records (stream, seq, switch, port, size, tx_ns, rx_ns)."""
    traces: list[dict[str, np.ndarray]]
    """Per switch, its traffic manager's trace columns."""
    digest: str
    captured: dict[End, list[tuple[int, bytes]]] = field(default_factory=dict)
    """(switch, port) -> the frames that left the fabric there: (time_ns, bytes)."""


def wire_ns(size: int, rate_bps: float) -> float:
    """A frame of `size` bytes (FCS included) from its first bit to its
    last at `rate_bps`, preamble counted: what store and forward waits."""
    return (size + PREAMBLE_SFD) * 8 * 1e9 / rate_bps


def run_chain(vf: VirtualFabric, frame_size: int, pct: float, frames: int,
              directions: Sequence[str] = DIRECTIONS, burst: Optional[int] = None,
              rate_bps: float = GBPS_100, capture: Sequence[End] = ()) -> ChainRun:
    """Resets `vf` (a started chain) and sends `frames` frames of
    `frame_size` each way at `pct` of the tester ports' line rate
    `rate_bps` (in bursts of `burst` frames at line rate when given),
    until every frame is through; keeps the frames that leave by the
    unlinked ports `capture` (a switch's collector port, say)."""
    if vf.first is None or vf.last is None:
        raise ValueError("run_chain needs a chain (fabric.chain): its tester ends")
    vf.reset()
    ends = {"east": (vf.first, vf.last), "west": (vf.last, vf.first)}
    for vs in vf.switches:
        with vs.locked() as e:
            e.tm_trace_start()
    streams: dict[str, int] = {}
    with vf.locked() as f:
        f.record_rx(True)
        for end in capture:
            f.capture_port(*end)
        for d in directions:
            src, dst = ends[d]
            kw: dict[str, Any] = dict(vf.addresses(src, dst), size=int(frame_size),
                                      frames=int(frames), name=d, line_rate_bps=rate_bps)
            if burst:
                kw.update(rate_pct=100.0, burst=int(burst),
                          burst_gap_ns=int(frame_time_ns(frame_size, rate_bps) * burst
                                           * (100.0 / pct - 1.0)))
            else:
                kw["rate_pct"] = float(pct)
            streams[d] = int(f.add_stream(src[0], src[1], **kw))
        f.run(drain=True)
        links = f.links()
        rows = f.stream_stats()
        records = {k: np.asarray(v) for k, v in f.rx_records().items()}
        digest = str(f.sim_digest())
        captured = {end: list(f.take_captured(*end)) for end in capture}
        f.record_rx(False)
    traces = []
    for vs in vf.switches:
        with vs.locked() as e:
            traces.append({k: np.asarray(v) for k, v in e.tm_trace_stop().items()
                           if k != "overflow"})
    sent = {d: next(int(r["tx_frames"]) for r in rows if r["stream"] == sid)
            for d, sid in streams.items()}
    return ChainRun(len(vf), int(frame_size), float(rate_bps), links, streams, sent, records,
                    traces, digest, captured)


def tester_rows(run: ChainRun) -> pd.DataFrame:
    """Per direction: the tester's latency and jitter (ns) through the
    chain: frames, min/avg/max latency, jitter (|difference of consecutive
    latencies|) avg/min/max."""
    out = []
    for d, sid in run.streams.items():
        sel = run.records["stream"] == sid
        lat = (run.records["rx_ns"][sel].astype(np.int64)
               - run.records["tx_ns"][sel].astype(np.int64))
        jit = np.abs(np.diff(lat)) if lat.size > 1 else np.array([0])
        out.append({"layers": run.layers, "frame_size": run.frame_size, "direction": d,
                    "tx_frames": run.sent[d], "rx_frames": int(lat.size),
                    "lat_min_ns": float(lat.min()) if lat.size else float("nan"),
                    "lat_avg_ns": float(lat.mean()) if lat.size else float("nan"),
                    "lat_max_ns": float(lat.max()) if lat.size else float("nan"),
                    "jitter_avg_ns": float(jit.mean()), "jitter_min_ns": float(jit.min()),
                    "jitter_max_ns": float(jit.max())})
    return pd.DataFrame(out)


def _path(run: ChainRun, direction: str) -> list[tuple[int, int]]:
    """(switch, egress port) of each hop, in the order frames cross them."""
    if direction == "east":
        return [(i, EAST) for i in range(run.layers)]
    return [(i, WEST) for i in reversed(range(run.layers))]


def wires_in(run: ChainRun, direction: str) -> list[float]:
    """Per hop, the time (ns) of the wire a frame crosses into it: from
    its first bit leaving the tester or the switch before to its last bit
    in (the tester port's or the link's rate, plus the link's delay)."""
    path = _path(run, direction)
    out = [wire_ns(run.frame_size, run.rate_bps)]
    for sw, port in path[:-1]:
        ln = next(x for x in run.links if (x["from_switch"], x["from_port"]) == (sw, port))
        out.append(wire_ns(run.frame_size, ln["rate_bps"]) + ln["delay_ns"])
    return out


def hop_times(run: ChainRun, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """(enqueue, dequeue) times (ns), one row per frame in sending order,
    one column per hop, from each switch's trace. Needs every frame
    through (FIFO: the k-th enqueue and dequeue at a hop are frame k)."""
    n = run.sent[direction]
    got = int((run.records["stream"] == run.streams[direction]).sum())
    if got != n:
        raise ValueError(f"{direction}: {n - got} of {n} frames lost; hops need every frame")
    enq, deq = [], []
    for sw, port in _path(run, direction):
        t = run.traces[sw]
        mine = t["port"] == port
        e = t["time_ns"][mine & (t["kind"] == ENQ)].astype(np.int64)
        q = t["time_ns"][mine & (t["kind"] == DEQ)].astype(np.int64)
        if e.size != n or q.size != n:
            raise ValueError(f"{direction}: switch {sw} port {port} queued {e.size} and sent "
                             f"{q.size} frames, not {n}")
        enq.append(e)
        deq.append(q)
    return np.stack(enq, axis=1), np.stack(deq, axis=1)


def hop_table(run: ChainRun) -> pd.DataFrame:
    """Per direction and hop (1 = the first switch crossed): the switch's
    residence (enqueue to dequeue, ground truth) min/avg/max, and the wire
    into it (the tester's port for hop 1, else the link before it):
    measured from the traces (arrival here minus departure before) and
    as the line rate and delay say."""
    out = []
    for d in run.streams:
        enq, deq = hop_times(run, d)
        res = deq - enq
        wires = wires_in(run, d)
        for h, (sw, port) in enumerate(_path(run, d)):
            row = {"layers": run.layers, "frame_size": run.frame_size, "direction": d,
                   "hop": h + 1, "switch": sw, "egress_port": port,
                   "residence_min_ns": float(res[:, h].min()),
                   "residence_avg_ns": float(res[:, h].mean()),
                   "residence_max_ns": float(res[:, h].max()),
                   "wire_in_ns": wires[h]}
            if h:
                row["wire_in_measured_ns"] = float((enq[:, h] - deq[:, h - 1]).mean())
            out.append(row)
    return pd.DataFrame(out)


def sum_check(run: ChainRun) -> pd.DataFrame:
    """Per frame: the tester's latency, the sum of the hops' residences
    (ground truth) and of the wires' times (tester's port + links), and
    their difference (ns)."""
    parts = []
    for d, sid in run.streams.items():
        enq, deq = hop_times(run, d)
        sel = run.records["stream"] == sid
        order = np.argsort(run.records["seq"][sel], kind="stable")
        lat = (run.records["rx_ns"][sel].astype(np.int64)
               - run.records["tx_ns"][sel].astype(np.int64))[order]
        total = (deq - enq).sum(axis=1) + sum(wires_in(run, d))
        parts.append(pd.DataFrame({"direction": d, "seq": np.arange(lat.size),
                                   "latency_ns": lat, "hops_ns": total,
                                   "difference_ns": lat - total}))
    return pd.concat(parts, ignore_index=True)


def layer_latency(program: DutProgram, profile: Profile, layers: int = 4,
                  sizes: Sequence[int] = SEED_SIZES, pct: float = 50.0, frames: int = 1000,
                  delay_ns: int = 0, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seed 003's per-layer latency: for k = 1..`layers`, a chain of k
    switches, every size; returns (tester rows per layer, size and
    direction; the hop table of the longest chain per size)."""
    rows, hops = [], []
    for k in range(1, layers + 1):
        with chain(program, k, profile, delay_ns=delay_ns, seed=seed) as vf:
            for size in sizes:
                run = run_chain(vf, size, pct, frames)
                rows.append(tester_rows(run))
                if k == layers:
                    hops.append(hop_table(run))
    return pd.concat(rows, ignore_index=True), pd.concat(hops, ignore_index=True)


def seed_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Seed 003's layout: per layer and frame size, latency and jitter in
    us (average, min, max), each as the range over the directions
    ("lo-hi", one value when they agree)."""
    def rng(s: pd.Series) -> str:
        lo, hi = s.min() / 1000.0, s.max() / 1000.0
        return f"{lo:.3f}" if abs(hi - lo) < 5e-4 else f"{lo:.3f}-{hi:.3f}"

    cols = {"lat_avg_ns": "latency avg (us)", "lat_min_ns": "latency min (us)",
            "lat_max_ns": "latency max (us)", "jitter_avg_ns": "jitter avg (us)",
            "jitter_min_ns": "jitter min (us)", "jitter_max_ns": "jitter max (us)"}
    g = rows.groupby(["layers", "frame_size"], sort=True)
    out = g.agg({c: rng for c in cols}).rename(columns=cols).reset_index()
    return out.rename(columns={"layers": "layer", "frame_size": "frame size (B)"})
