"""From one trial's per-frame records to the trunk's figures: which frames
were lost and to which link event, the outage each event cost, the time
until the trunk carried the full load again, per-member rates.

A stream's frame k left the tester at start + k x slot (the engine's
sources keep exact picoseconds), so a frame that never arrived has a send
time. A lost frame counts against the last event at or before its send
time plus `guard` (how long a frame takes through the uncongested DUT):
frames already in the DUT when a link goes down are lost to that event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..linerate import frame_time_ns, wire_bits


@dataclass(frozen=True)
class SentStream:
    """What a source sent: its engine id, first frame, spacing (ps), frames."""

    sid: int
    start_ns: int
    slot_ps: int
    frames: int

    def send_ns(self, seq: np.ndarray) -> np.ndarray:
        return (self.start_ns * 1000 + seq.astype(np.int64) * self.slot_ps) // 1000

    @property
    def fps(self) -> float:
        return 1e12 / self.slot_ps


def slot_ps(frame_size: int, pct: float, line_bps: float) -> int:
    """A source's frame spacing in ps, as the engine computes it."""
    return max(1, round(wire_bits(frame_size) / (line_bps * pct / 100.0) * 1e12))


def guard_ns(frame_size: int, line_bps: float) -> int:
    """100 ns plus four frames' time: how long before an event a frame may
    have been sent and still be in the DUT (the tester's settle time)."""
    return 100 + 4 * int(frame_time_ns(frame_size, line_bps) + 1)


def lost_send_times(streams: Sequence[SentStream], rec: Mapping[str, np.ndarray]) -> np.ndarray:
    """Send times (ns, sorted) of every frame sent and never received."""
    out = []
    for st in streams:
        got = np.zeros(st.frames, bool)
        seq = rec["seq"][rec["stream"] == st.sid].astype(np.int64)
        got[seq[seq < st.frames]] = True
        out.append(st.send_ns(np.flatnonzero(~got)))
    return np.sort(np.concatenate(out)) if out else np.array([], np.int64)


@dataclass(frozen=True)
class EventLoss:
    lost: int
    outage_ns: float
    """Frames lost / the offered frame rate, as a time."""
    recovery_ns: float
    """From the event to when the trunk carried the full load again (0:
    nothing lost)."""

    def columns(self) -> dict[str, Any]:
        """The event row's columns for it (lag_failover_events)."""
        return {"lost_frames": self.lost, "outage_ns": self.outage_ns,
                "recovery_ns": self.recovery_ns}


@dataclass(frozen=True)
class LostRuns:
    """Runs of lost frames, one array entry each, from either mode: how
    many frames, the send time that puts the run against an event, and
    when its stream was whole again (ns; integers where they are wall
    clock: a float has no ns at 1.7e18)."""

    frames: np.ndarray
    sent_ns: np.ndarray
    whole_ns: np.ndarray

    @classmethod
    def of_frames(cls, lost_ns: np.ndarray, frame_interval_ns: float) -> "LostRuns":
        """Each lost frame a run of its own, whole again one frame interval
        after it (the engine's records: lost_send_times)."""
        lost = np.asarray(lost_ns, np.int64)
        return cls(np.ones(len(lost), np.int64), lost, lost + frame_interval_ns)


def per_event(lost: LostRuns, issued_ns: Sequence[int], at_ns: Sequence[int], guard: int,
              offered_fps: float) -> tuple[int, list[EventLoss]]:
    """Frames lost before the first event, and each event's loss. A run
    counts against the last event issued at or before its send time plus
    `guard`; its recovery runs from the event's time `at_ns` (in Mininet
    when the kernel announced the change, after the command was issued)."""
    starts = np.asarray(issued_ns, np.int64) - guard
    which = np.searchsorted(starts, np.asarray(lost.sent_ns, np.int64), side="right") - 1
    before = int(lost.frames[which < 0].sum())
    fps = offered_fps if offered_fps > 0 else float("nan")
    out = []
    for j, at in enumerate(at_ns):
        mine = which == j
        n = int(lost.frames[mine].sum())
        back = max(0.0, float((lost.whole_ns[mine] - at).max())) if n else 0.0
        out.append(EventLoss(n, n / fps * 1e9 if n else 0.0, back))
    return before, out


def member_gbps(rec: Mapping[str, np.ndarray], members: Sequence[int], t0: int,
                t1: int) -> dict[int, float]:
    """Layer-1 Gbit/s that left each member port with first bits in (t0, t1]."""
    inside = (rec["rx_ns"] > t0) & (rec["rx_ns"] <= t1)
    bits = wire_bits(rec["size"].astype(np.float64))
    return {m: float(bits[inside & (rec["port"] == m)].sum()) / (t1 - t0) for m in members}


def series(rec: Mapping[str, np.ndarray], members: Sequence[int], end_ns: int,
           bin_ns: int) -> dict[str, np.ndarray]:
    """Per member and time bin: layer-1 Gbit/s (columns t_ns, port, gbps)."""
    edges = np.arange(0, end_ns + bin_ns, bin_ns, dtype=np.int64)
    bits = wire_bits(rec["size"].astype(np.float64))
    t, port, gbps = [], [], []
    for m in members:
        mine = rec["port"] == m
        h, _ = np.histogram(rec["rx_ns"][mine], bins=edges, weights=bits[mine])
        t.append(edges[:-1])
        port.append(np.full(len(h), m))
        gbps.append(h / bin_ns)
    return {"t_ns": np.concatenate(t), "port": np.concatenate(port),
            "gbps": np.concatenate(gbps)}


def member_of_streams(rec: Mapping[str, np.ndarray], sids: Sequence[int],
                      before_ns: int) -> dict[int, int]:
    """The member each stream's frames took before `before_ns` (-1: none arrived)."""
    out = {}
    early = rec["rx_ns"] < before_ns
    for s in sids:
        ports, counts = np.unique(rec["port"][early & (rec["stream"] == s)], return_counts=True)
        out[s] = int(ports[np.argmax(counts)]) if len(ports) else -1
    return out
