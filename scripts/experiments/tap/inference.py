"""Another switch's queues, inferred from an in-path tap's reports.

The tap (p4src/tap.p4) sits on every link of the DUT and reports every
frame it passes (sampling every frame): the tap's ingress timestamp (the
tap's clock), the tap port the frame came in on, its direction (towards
the DUT or from it), its length, its first bytes (the report's inner
frame) and both directions' cumulative byte and frame counts.

Per DUT egress port, on the tap's clock:

    occupancy(t) = bytes sent towards it by t - bytes out of it by t
                   - bytes the DUT dropped by t

A frame seen leaving the DUT is matched to the frame seen entering it
with the same first bytes (for the tester's streams these hold the stream
and the sequence number, so each frame has its own; identical frames are
matched first in, first out per egress port). The matched pair is what
the egress port held between the two timestamps, split by the DUT port
the frame came in on (shares). A frame sent towards the DUT and never
seen leaving is a DUT drop, counted apart at its arrival time, on the
port its destination MAC is behind (`Wiring.egress_of_mac`; -1 unknown).
A frame seen leaving that never entered is the DUT's own (a stray: the
bridge's own ARP or IPv6 frames), not in the occupancy.

Lost reports are found exactly: every report carries both directions'
cumulative counts, so between two consecutive reports the counts say how
many frames (and bytes) of each direction went unreported, besides the
sequence numbers' gaps. Nothing is invented for them: the time between
those two reports is unknown (NaN, `valid` False), and so is the time
from a frame that never left to the end of any later gap in the departure
reports (it may have left unseen: `unresolved`, not a drop), and from the
start of any earlier gap in the arrival reports to a frame that left
without having been seen entering.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ...control.packets import parse_frame
from .. import figures as fg
from .frames import FROM, TOWARDS, TapFrame, TapFrames

__all__ = ["FROM", "TOWARDS", "TapFrame", "TapFrames", "Wiring", "Gap", "find_gaps",
           "merge_intervals", "Inference", "infer"]
_SEQ_MASK = 0x3FFFFF
_SEQ_AHEAD = 0x200000
_PKT_MASK = 0xFFFFFFFF

SERIES_COLUMNS = ["t_ns", "egress_port", "occupancy_bytes", "occupancy_frames", "valid"]
INGRESS_COLUMNS = ["t_ns", "egress_port", "ingress_port", "occupancy_bytes"]
FRAME_COLUMNS = ["t_ns", "ingress_port", "egress_port", "frame_bytes", "fate", "left_ns", "flow"]
BURST_COLUMNS = ["egress_port", "burst_id", "start_ns", "peak_ns", "end_ns", "peak_bytes",
                 "peak_frames", "bytes_in", "frames_in", "dropped_frames", "dropped_bytes",
                 "by_ingress", "held_at_peak", "culprits", "flows", "complete", "lost_reports"]


@dataclass(frozen=True)
class Wiring:
    """Where the tap's ports sit on the DUT's links."""

    dut_port: Mapping[int, int]
    """tap port -> the DUT port at the other end of its link (a frame coming
    in on a tap port facing a host enters the DUT by that port; one coming
    in on a tap port facing the DUT left the DUT by it)."""
    egress_of_mac: Mapping[int, int] = field(default_factory=dict)
    """destination MAC (as an int) -> the DUT port it is behind: where a
    dropped frame was headed."""

    def port_of(self, tap_port: int) -> int:
        return int(self.dut_port.get(tap_port, -1))

    def destination(self, key: bytes) -> int:
        if len(key) < 6:
            return -1
        return int(self.egress_of_mac.get(int.from_bytes(key[:6], "big"), -1))


@dataclass(frozen=True)
class Gap:
    """Reports missing between two consecutive ones (at start_ns, end_ns)."""

    start_ns: int
    end_ns: int
    lost_reports: int
    """By sequence number."""
    lost_to_frames: int
    lost_to_bytes: int
    lost_from_frames: int
    lost_from_bytes: int


def find_gaps(frames: Sequence[TapFrame]) -> list[Gap]:
    """Gaps between consecutive reports of each node (capture order): by the
    sequence numbers, and by both directions' cumulative counts against the
    frames reported."""
    c = TapFrames.of(frames).columns
    by_node = np.argsort(c["node_id"], kind="stable")
    same = c["node_id"][by_node][1:] == c["node_id"][by_node][:-1]
    a, b = by_node[:-1][same], by_node[1:][same]  # each report and the one before it
    to = c["direction"][b] == TOWARDS
    to_1, from_1 = to.astype(np.int64), (~to).astype(np.int64)
    seq_gap = (c["seq"][b] - c["seq"][a] - 1) & _SEQ_MASK
    seq_gap = np.where(seq_gap < _SEQ_AHEAD, seq_gap, 0)
    to_b = c["bytes_to_dut"][b] - c["bytes_to_dut"][a] - np.where(to, c["frame_bytes"][b], 0)
    to_f = ((c["pkts_to_dut"][b] - c["pkts_to_dut"][a]) & _PKT_MASK) - to_1
    fr_b = c["bytes_from_dut"][b] - c["bytes_from_dut"][a] - np.where(to, 0, c["frame_bytes"][b])
    fr_f = ((c["pkts_from_dut"][b] - c["pkts_from_dut"][a]) & _PKT_MASK) - from_1
    gap = np.flatnonzero((seq_gap != 0) | (to_f > 0) | (fr_f > 0) | (to_b > 0) | (fr_b > 0))
    gap = gap[np.argsort(b[gap], kind="stable")]  # in capture order
    ta, tb = c["time_ns"][a[gap]], c["time_ns"][b[gap]]
    return [Gap(*row) for row in zip(
        np.minimum(ta, tb).tolist(), np.maximum(ta, tb).tolist(), seq_gap[gap].tolist(),
        *(np.maximum(x[gap], 0).tolist() for x in (to_f, to_b, fr_f, fr_b)))]


def merge_intervals(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _flow(key: bytes) -> Optional[str]:
    """The frame's 5-tuple and source MAC as text (None when it is not IPv4)."""
    return _flow_of_headers(_flow_bytes(key))


def _flow_bytes(key: bytes) -> bytes:
    """The part of `key` its flow text depends on: the bytes up to the L4
    ports (past the IPv4 header's 34), when `key` holds them all (what
    follows, such as the tester's frame number, changes nothing)."""
    end = max(34, 18 + (key[14] & 0xF) * 4) if len(key) > 14 else len(key)
    return key[:end] if len(key) >= end else key


@lru_cache(maxsize=4096)
def _flow_of_headers(key: bytes) -> Optional[str]:
    """`_flow` once per distinct flow (a capture has few, each frame its
    own key)."""
    try:
        f = parse_frame(key)
    except ValueError:
        return None
    if f.ip_src is None:
        return None
    ports = f"{f.sport}>{f.dport}" if f.sport is not None else "-"
    mac = ":".join(f"{b:02x}" for b in f.src_mac.to_bytes(6, "big"))
    return f"{_ip(f.ip_src)}>{_ip(f.ip_dst)} {f.proto} {ports} from {mac}"


def _ip(v: int) -> str:
    return ".".join(str(b) for b in int(v).to_bytes(4, "big"))


@dataclass
class Inference:
    series: pd.DataFrame
    """SERIES_COLUMNS: per egress port, the occupancy after each change
    (bytes and frames; NaN and valid False where reports were lost)."""
    by_ingress: pd.DataFrame
    """INGRESS_COLUMNS: the same split by the DUT port the frames came in on."""
    frames: pd.DataFrame
    """FRAME_COLUMNS: every frame sent towards the DUT and what became of it:
    fate "left" (left_ns: when it was seen leaving), "dropped" or
    "unresolved" (never seen leaving, with reports lost after it)."""
    gaps: list[Gap]
    unknown: list[tuple[int, int]]
    """Intervals [start, end) of the tap's clock where the occupancy is not known."""
    strays: int
    """Frames seen leaving the DUT that never entered it (its own)."""
    unmatched_departures: int
    """Frames seen leaving whose arrival report was lost."""

    @property
    def lost_reports(self) -> int:
        return sum(g.lost_reports for g in self.gaps)

    @property
    def drops(self) -> pd.DataFrame:
        return self.frames[self.frames["fate"] == "dropped"]

    def ports(self) -> list[int]:
        return sorted(int(p) for p in self.series["egress_port"].unique())

    def port_series(self, port: int) -> pd.DataFrame:
        return self.series[self.series["egress_port"] == port]

    def peak(self, port: int, unit: str = "bytes") -> tuple[float, float]:
        """(peak, its time) of a port's known occupancy; (nan, nan) for none."""
        d = self.port_series(port)
        d = d[d["valid"].astype(bool)]
        col = "occupancy_bytes" if unit == "bytes" else "occupancy_frames"
        return fg.peak(d["t_ns"].to_numpy(float), d[col].to_numpy(float))

    def bursts(self, on_bytes: float, off_bytes: Optional[float] = None) -> pd.DataFrame:
        """BURST_COLUMNS per burst of each egress port: start at the first
        occupancy >= on_bytes, end at the first later one < off_bytes
        (figures.find_bursts); what came in towards that port meanwhile (and
        what of it the DUT dropped), per ingress port, and the culprits: the
        ingress ports by their share of it, and the flows that sent most."""
        rows = []
        for port in self.ports():
            d = self.port_series(port)
            t = d["t_ns"].to_numpy(float)
            v = d["occupancy_bytes"].to_numpy(float)
            fr = d["occupancy_frames"].to_numpy(float)
            ing = self.by_ingress[self.by_ingress["egress_port"] == port]
            arr = self.frames[self.frames["egress_port"] == port]
            for i, b in enumerate(fg.find_bursts(t, v, on_bytes, off_bytes), start=1):
                end = b.end if not math.isnan(b.end) else math.inf
                inside = arr[(arr["t_ns"] >= b.start) & (arr["t_ns"] < end)]
                by_in = inside.groupby("ingress_port")["frame_bytes"].sum()
                total = float(by_in.sum())
                order = by_in.sort_values(ascending=False, kind="stable")
                culprits = ", ".join(f"{int(p)} ({100 * x / total:.0f}%)"
                                     for p, x in order.items()) if total else ""
                held = {int(p): int(fg.step_at(g["t_ns"].to_numpy(float),
                                               g["occupancy_bytes"].to_numpy(float),
                                               [b.peak_time])[0])
                        for p, g in ing.groupby("ingress_port")}
                flows = inside.dropna(subset=["flow"]).groupby("flow")["frame_bytes"].sum()
                top = flows.sort_values(ascending=False, kind="stable").index[:3]
                dropped = inside[inside["fate"] == "dropped"]
                lost = any(s < end and e > b.start for s, e in self.unknown)
                pk_frames = fr[np.searchsorted(t, b.peak_time, side="left")]
                rows.append({
                    "egress_port": port, "burst_id": i, "start_ns": b.start, "peak_ns": b.peak_time,
                    "end_ns": b.end, "peak_bytes": b.peak, "peak_frames": float(pk_frames),
                    "bytes_in": int(inside["frame_bytes"].sum()), "frames_in": len(inside),
                    "dropped_frames": len(dropped), "dropped_bytes": int(dropped["frame_bytes"].sum()),
                    "by_ingress": {int(p): int(x) for p, x in by_in.items()},
                    "held_at_peak": {p: x for p, x in held.items() if x},
                    "culprits": culprits, "flows": "; ".join(str(f) for f in top),
                    "complete": not math.isnan(b.end), "lost_reports": lost})
        return pd.DataFrame(rows, columns=BURST_COLUMNS)


@dataclass
class _Side:
    """One direction's frames in time order, as columns: their key ids,
    times, sizes and DUT ports (where a frame came in on, or left by)."""

    key: np.ndarray
    time_ns: np.ndarray
    frame_bytes: np.ndarray
    port: np.ndarray

    def take(self, i: np.ndarray) -> "_Side":
        return _Side(self.key[i], self.time_ns[i], self.frame_bytes[i], self.port[i])


def infer(frames: Sequence[TapFrame], wiring: Wiring) -> Inference:
    """See the module docstring. `frames` in capture order (frames_from_reports)."""
    frames = TapFrames.of(frames)
    c = frames.columns
    gaps = find_gaps(frames)
    tap_ports, tap_port_at = np.unique(c["tap_port"], return_inverse=True)
    ports = np.array([wiring.port_of(int(p)) for p in tap_ports.tolist()], dtype=np.int64)
    ids: dict[bytes, int] = {}
    keys = frames.keys
    every = _Side(np.fromiter((ids.setdefault(k, len(ids)) for k in keys), np.int64, len(keys)),
                  c["time_ns"], c["frame_bytes"], ports[tap_port_at])
    order = np.argsort(every.time_ns, kind="stable")
    towards = (c["direction"] == TOWARDS)[order]
    arrival_of = order[towards]
    arrivals, departures = every.take(arrival_of), every.take(order[~towards])
    d_pos, a_pos = _match(arrivals, departures, len(ids))
    unknown: list[tuple[int, int]] = [(g.start_ns, g.end_ns) for g in gaps]
    # the first gap in the arrivals' reports, the last in the departures'
    lost_to = min((g.start_ns for g in gaps if g.lost_to_frames or g.lost_to_bytes), default=None)
    lost_from = max((g.end_ns for g in gaps if g.lost_from_frames or g.lost_from_bytes),
                    default=None)
    alone = np.ones(len(departures.key), dtype=bool)
    alone[d_pos] = False
    # a departure without an arrival: its arrival's report may be among the
    # lost ones (after the first gap in the arrivals), or it is the DUT's own
    late = alone & (departures.time_ns > lost_to) if lost_to is not None else np.zeros_like(alone)
    unknown += [(lost_to, t) for t in departures.time_ns[late].tolist()]
    unmatched = int(late.sum())
    strays = int(alone.sum()) - unmatched
    # each arrival's first departure (in time order) is when it left
    first, at = np.unique(a_pos, return_index=True)
    has_left = np.zeros(len(arrivals.key), dtype=bool)
    has_left[first] = True
    left_ns = np.full(len(arrivals.key), math.nan)
    left_ns[first] = departures.time_ns[d_pos[at]]
    egress = np.zeros(len(arrivals.key), dtype=np.int64)
    egress[first] = departures.port[d_pos[at]]
    # an arrival that never left with reports of departures lost after it
    # may have left unseen
    unresolved = (~has_left & (arrivals.time_ns < lost_from) if lost_from is not None
                  else np.zeros_like(has_left))
    unknown += [(t, lost_from) for t in arrivals.time_ns[unresolved].tolist()]
    arrival_keys = [keys[i] for i in arrival_of.tolist()]
    for i in np.flatnonzero(~has_left).tolist():
        egress[i] = wiring.destination(arrival_keys[i])
    fate = np.where(has_left, "left", np.where(unresolved, "unresolved", "dropped"))
    table = pd.DataFrame([], columns=FRAME_COLUMNS) if not has_left.size else pd.DataFrame({
        "t_ns": arrivals.time_ns, "ingress_port": arrivals.port, "egress_port": egress,
        "frame_bytes": arrivals.frame_bytes, "fate": fate.tolist(),
        "left_ns": left_ns.astype(np.int64) if has_left.all() else left_ns,  # whole ns when no NaN
        "flow": [_flow(k) for k in arrival_keys]}, columns=FRAME_COLUMNS)
    unknown = merge_intervals(unknown)
    pairs = arrivals.take(a_pos), departures.take(d_pos)
    series, by_ingress = _series(*pairs, unknown)
    return Inference(series, by_ingress, table, gaps, unknown, strays, unmatched)


def _match(arrivals: _Side, departures: _Side, nkeys: int) -> tuple[np.ndarray, np.ndarray]:
    """Each departure matched to an arrival of the same key, first in, first
    out per (egress port, key), never to one that came in by the port it
    left by nor to one seen after it: (departure, arrival) positions of the
    matches, in departure order. A key that arrived once (each frame of
    the tester's streams) is matched in bulk, the others one by one."""
    seen, at, n = np.unique(arrivals.key, return_index=True, return_counts=True)
    count, first = np.zeros(nkeys, dtype=np.int64), np.zeros(nkeys, dtype=np.int64)
    count[seen], first[seen] = n, at
    once = np.flatnonzero(count[departures.key] == 1)
    cand = first[departures.key[once]]
    okpos = once[(arrivals.port[cand] != departures.port[once])
                 & (arrivals.time_ns[cand] <= departures.time_ns[once])]
    # per (port, key) the first departure that may take its arrival takes it
    lo = int(departures.port.min()) if departures.port.size else 0
    group = departures.key[okpos] * (int(departures.port.max(initial=lo)) - lo + 1) + \
        (departures.port[okpos] - lo)
    _, firsts = np.unique(group, return_index=True)
    d_pos, a_pos = [okpos[firsts]], [first[departures.key[okpos[firsts]]]]
    many = np.flatnonzero(count[departures.key] > 1)
    if many.size:
        d_more, a_more = _match_each(arrivals, departures, many)
        d_pos.append(d_more)
        a_pos.append(a_more)
    d, a = np.concatenate(d_pos), np.concatenate(a_pos)
    by_departure = np.argsort(d, kind="stable")
    return d[by_departure], a[by_departure]


def _match_each(arrivals: _Side, departures: _Side, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_match` for the departures `which` (positions, in order), one by one."""
    keys = set(departures.key[which].tolist())
    by_key: defaultdict[int, list[int]] = defaultdict(list)
    for i, k in enumerate(arrivals.key.tolist()):
        if k in keys:
            by_key[k].append(i)
    a_port, a_time = arrivals.port.tolist(), arrivals.time_ns.tolist()
    taken: dict[tuple[int, int], int] = {}
    d_out, a_out = [], []
    for j in which.tolist():
        key, port, t = int(departures.key[j]), int(departures.port[j]), int(departures.time_ns[j])
        cand = by_key[key]
        k = taken.get((port, key), 0)
        while k < len(cand) and a_port[cand[k]] == port:
            k += 1  # a frame does not leave by the port it came in on
        if k < len(cand) and a_time[cand[k]] <= t:
            taken[(port, key)] = k + 1
            d_out.append(j)
            a_out.append(cand[k])
    return np.array(d_out, dtype=np.int64), np.array(a_out, dtype=np.int64)


def _series(arrivals: _Side, departures: _Side,
            unknown: list[tuple[int, int]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The occupancy series of each egress port matched frames (arrival
    and departure, side by side) went through, and split by the DUT port
    they came in on."""
    occ, ing_parts = [], []
    spans = np.array(unknown, dtype=float).reshape(-1, 2)
    for port in sorted(set(departures.port.tolist())):
        mine = departures.port == port
        t = np.concatenate([arrivals.time_ns[mine], departures.time_ns[mine]]).astype(float)
        nb = arrivals.frame_bytes[mine].astype(float)
        ones = np.ones(nb.size)
        tb, vb = fg.step_from_deltas(t, np.concatenate([nb, -nb]))
        _, vf = fg.step_from_deltas(t, np.concatenate([ones, -ones]))
        at = np.unique(np.concatenate([tb, spans.ravel()]))
        b, f = fg.step_at(tb, vb, at), fg.step_at(tb, vf, at)
        # the spans are merged (apart and in order): the one starting last
        # before a time is the only one that may hold it
        i = np.searchsorted(spans[:, 0], at, side="right") - 1
        valid = ~((i >= 0) & (at < spans[np.clip(i, 0, None), 1])) if spans.size else np.ones(at.size, bool)
        occ.append(pd.DataFrame({"t_ns": at.astype(np.int64), "egress_port": port,
                                 "occupancy_bytes": np.where(valid, b, np.nan),
                                 "occupancy_frames": np.where(valid, f, np.nan), "valid": valid}))
        ins = arrivals.port[mine]
        for ing in sorted(set(ins.tolist())):
            sel = ins == ing
            ti, vi = fg.step_from_deltas(np.concatenate([t[:nb.size][sel], t[nb.size:][sel]]),
                                         np.concatenate([nb[sel], -nb[sel]]))
            ing_parts.append(pd.DataFrame({"t_ns": ti.astype(np.int64), "egress_port": port,
                                           "ingress_port": int(ing), "occupancy_bytes": vi}))
    series = pd.concat(occ, ignore_index=True) if occ else pd.DataFrame(columns=SERIES_COLUMNS)
    by_ingress = (pd.concat(ing_parts, ignore_index=True) if ing_parts
                  else pd.DataFrame(columns=INGRESS_COLUMNS))
    return series, by_ingress
