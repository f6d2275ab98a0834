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

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ...control.packets import parse_frame
from ...control.report_columns import parse_tap_frames
from ...control.reports import ReportError, parse_report_frame
from .. import figures as fg

TOWARDS, FROM = 0, 1
_SEQ_MASK = 0x3FFFFF
_SEQ_AHEAD = 0x200000
_PKT_MASK = 0xFFFFFFFF

SERIES_COLUMNS = ["t_ns", "egress_port", "occupancy_bytes", "occupancy_frames", "valid"]
INGRESS_COLUMNS = ["t_ns", "egress_port", "ingress_port", "occupancy_bytes"]
FRAME_COLUMNS = ["t_ns", "ingress_port", "egress_port", "frame_bytes", "fate", "left_ns", "flow"]
BURST_COLUMNS = ["egress_port", "burst_id", "start_ns", "peak_ns", "end_ns", "peak_bytes",
                 "peak_frames", "bytes_in", "frames_in", "dropped_frames", "dropped_bytes",
                 "by_ingress", "held_at_peak", "culprits", "flows", "complete", "lost_reports"]


@dataclass
class TapFrame:
    """One frame the tap passed, as its report tells it. A value, not to
    be changed (`at` makes a moved copy); not a frozen dataclass only
    because a case makes 10^5 and more of them, at twice the cost each."""

    time_ns: int
    """The tap's ingress timestamp (its own clock)."""
    seq: int
    direction: int
    """TOWARDS (0) the DUT or FROM (1) it."""
    tap_port: int
    frame_bytes: int
    key: bytes
    """The frame's first bytes (the report's inner frame): its identity."""
    bytes_to_dut: int
    bytes_from_dut: int
    pkts_to_dut: int
    pkts_from_dut: int
    node_id: int = 0

    def at(self, time_ns: int) -> "TapFrame":
        """The same frame at another time (what dataclasses.replace gives,
        at a third of its cost: a capture has 10^5 frames and more)."""
        return TapFrame(time_ns, *itertools.islice(self.__dict__.values(), 1, None))


def frames_from_reports(reports: Iterable[Any]) -> list[TapFrame]:
    """The tap frames of parsed reports (control.reports.Report), in the
    order given (capture order); reports without a DOMAIN_TAP block are
    skipped."""
    out = []
    for r in reports:
        t = r.tap
        if t is None:
            continue
        out.append(TapFrame(int(r.md.ingress_ts_ns or 0), int(r.seq), int(t.direction) & 1,
                            int(r.md.ingress_port or 0), int(t.frame_bytes), bytes(r.inner),
                            int(t.bytes_to_dut), int(t.bytes_from_dut), int(t.pkts_to_dut),
                            int(t.pkts_from_dut), int(r.node_id)))
    return out


def tap_frames(captured: Sequence[tuple[int, bytes]],
               udp_port: int) -> tuple[list[TapFrame], list[int], int]:
    """The tap frames of a capture of (time, frame) in capture order, the
    time of each one's report, and how many frames were no report (those
    parse_report_frame rejects): what each frame parsed one by one and
    frames_from_reports give, with the reports read in bulk (a case
    captures a report per frame the DUT passes: 10^5 and more)."""
    parsed = parse_tap_frames([f for _, f in captured], udp_port)
    c = parsed.columns
    found = dict(zip(c["position"].tolist(), map(
        TapFrame, c["time_ns"].tolist(), c["seq"].tolist(), (c["direction"] & 1).tolist(),
        c["tap_port"].tolist(), c["frame_bytes"].tolist(), parsed.inner,
        c["bytes_to_dut"].tolist(), c["bytes_from_dut"].tolist(), c["pkts_to_dut"].tolist(),
        c["pkts_from_dut"].tolist(), c["node_id"].tolist())))
    reports, bad = [], 0
    for i in parsed.slow:
        try:
            reports.append((i, parse_report_frame(captured[i][1], udp_port)))
        except ReportError:
            bad += 1
    found.update(zip((i for i, r in reports if r.tap is not None),
                     frames_from_reports(r for _, r in reports)))
    order = sorted(found)
    return [found[i] for i in order], [captured[i][0] for i in order], bad


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
    out = []
    last: dict[int, TapFrame] = {}
    for b in frames:
        a = last.get(b.node_id)
        last[b.node_id] = b
        if a is None:
            continue
        seq_gap = (b.seq - a.seq - 1) & _SEQ_MASK
        seq_gap = seq_gap if seq_gap < _SEQ_AHEAD else 0
        to_b = b.bytes_to_dut - a.bytes_to_dut - (b.frame_bytes if b.direction == TOWARDS else 0)
        to_f = ((b.pkts_to_dut - a.pkts_to_dut) & _PKT_MASK) - (b.direction == TOWARDS)
        fr_b = b.bytes_from_dut - a.bytes_from_dut - (b.frame_bytes if b.direction == FROM else 0)
        fr_f = ((b.pkts_from_dut - a.pkts_from_dut) & _PKT_MASK) - (b.direction == FROM)
        if seq_gap or to_f > 0 or fr_f > 0 or to_b > 0 or fr_b > 0:  # most pairs: none
            out.append(Gap(min(a.time_ns, b.time_ns), max(a.time_ns, b.time_ns), seq_gap,
                           max(0, to_f), max(0, to_b), max(0, fr_f), max(0, fr_b)))
    return out


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


def infer(frames: Sequence[TapFrame], wiring: Wiring) -> Inference:
    """See the module docstring. `frames` in capture order (frames_from_reports)."""
    gaps = find_gaps(frames)
    order = sorted(range(len(frames)), key=lambda i: (frames[i].time_ns, i))
    arrivals = [frames[i] for i in order if frames[i].direction == TOWARDS]
    departures = [frames[i] for i in order if frames[i].direction == FROM]
    by_key: defaultdict[bytes, list[int]] = defaultdict(list)
    for i, a in enumerate(arrivals):
        by_key[a.key].append(i)
    taken: dict[tuple[int, bytes], int] = {}
    left: dict[int, tuple[int, int]] = {}  # arrival -> (first departure time, its port)
    pairs: list[tuple[TapFrame, TapFrame, int]] = []
    unknown: list[tuple[int, int]] = [(g.start_ns, g.end_ns) for g in gaps]
    strays = unmatched = 0
    lost_to = [g for g in gaps if g.lost_to_frames or g.lost_to_bytes]
    lost_from = [g for g in gaps if g.lost_from_frames or g.lost_from_bytes]
    port_of = {p: wiring.port_of(p) for p in {f.tap_port for f in frames}}
    for d in departures:
        port = port_of[d.tap_port]
        cand = by_key.get(d.key, [])
        k = taken.get((port, d.key), 0)
        while k < len(cand) and port_of[arrivals[cand[k]].tap_port] == port:
            k += 1  # a frame does not leave by the port it came in on
        if k < len(cand) and arrivals[cand[k]].time_ns <= d.time_ns:
            a = arrivals[cand[k]]
            taken[(port, d.key)] = k + 1
            pairs.append((a, d, port))
            left.setdefault(cand[k], (d.time_ns, port))
            continue
        before = [g for g in lost_to if g.start_ns < d.time_ns]
        if before:  # its arrival's report may be among the lost ones
            unmatched += 1
            unknown.append((min(g.start_ns for g in before), d.time_ns))
        else:
            strays += 1
    rows = []
    for i, a in enumerate(arrivals):
        ing = port_of[a.tap_port]
        if i in left:
            t_left, port = left[i]
            rows.append((a.time_ns, ing, port, a.frame_bytes, "left", t_left, _flow(a.key)))
            continue
        after = [g for g in lost_from if g.end_ns > a.time_ns]
        fate = "unresolved" if after else "dropped"
        if after:
            unknown.append((a.time_ns, max(g.end_ns for g in after)))
        rows.append((a.time_ns, ing, wiring.destination(a.key), a.frame_bytes, fate, math.nan,
                     _flow(a.key)))
    unknown = merge_intervals(unknown)
    series, by_ingress = _series(pairs, port_of, unknown)
    return Inference(series, by_ingress, pd.DataFrame(rows, columns=FRAME_COLUMNS), gaps,
                     unknown, strays, unmatched)


def _series(pairs: list[tuple[TapFrame, TapFrame, int]], port_of: Mapping[int, int],
            unknown: list[tuple[int, int]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The occupancy series of each egress port the pairs (arrival,
    departure, egress port) went through, and split by ingress port
    (`port_of`: tap port -> DUT port)."""
    occ, ing_parts = [], []
    ports = sorted({p for _, _, p in pairs})
    for port in ports:
        mine = [(a, d) for a, d, p in pairs if p == port]
        t = np.array([a.time_ns for a, _ in mine] + [d.time_ns for _, d in mine], dtype=float)
        nb = np.array([a.frame_bytes for a, _ in mine], dtype=float)
        ones = np.ones(len(mine))
        tb, vb = fg.step_from_deltas(t, np.concatenate([nb, -nb]))
        _, vf = fg.step_from_deltas(t, np.concatenate([ones, -ones]))
        edges = np.array([x for s, e in unknown for x in (s, e)], dtype=float)
        at = np.unique(np.concatenate([tb, edges]))
        b, f = fg.step_at(tb, vb, at), fg.step_at(tb, vf, at)
        valid = np.ones(at.size, dtype=bool)
        for s, e in unknown:
            valid[(at >= s) & (at < e)] = False
        occ.append(pd.DataFrame({"t_ns": at.astype(np.int64), "egress_port": port,
                                 "occupancy_bytes": np.where(valid, b, np.nan),
                                 "occupancy_frames": np.where(valid, f, np.nan), "valid": valid}))
        ins = np.array([port_of[a.tap_port] for a, _ in mine])
        for ing in sorted(set(ins.tolist())):
            sel = ins == ing
            ti, vi = fg.step_from_deltas(
                np.concatenate([t[:len(mine)][sel], t[len(mine):][sel]]),
                np.concatenate([nb[sel], -nb[sel]]))
            ing_parts.append(pd.DataFrame({"t_ns": ti.astype(np.int64), "egress_port": port,
                                           "ingress_port": int(ing), "occupancy_bytes": vi}))
    series = pd.concat(occ, ignore_index=True) if occ else pd.DataFrame(columns=SERIES_COLUMNS)
    by_ingress = (pd.concat(ing_parts, ignore_index=True) if ing_parts
                  else pd.DataFrame(columns=INGRESS_COLUMNS))
    return series, by_ingress
