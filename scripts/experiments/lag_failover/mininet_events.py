"""Link events in Mininet and the frames each one cost, on the generators'
clock.

`LinkSchedule` is a trial's `during` hook: from the moment the generators
start it takes the DUT's member links down and up with `ip link set DEV
down|up` on the DUT's side, at the seed's offsets, and notes when each
command was issued and when it returned (CLOCK_REALTIME, the clock the
generators stamp their frames with). Should it stop early, every link it
took down is put back. When the link really changed is what the kernel
announced (link_changes.py, `changed()`): on a busy machine `ip` may take
a hundred milliseconds to return.

The analyzer reports each run of frames a stream lost with the send times
of the frames received around it (trafgen's loss runs), so a run is put
against the last event issued at or before its start (less `guard`: frames
already in the DUT when the link went down): frames lost per event, outage
= lost / the offered frame rate, recovery = from the event (the change the
kernel announced) to when the trunk carried the full load again: the send
time of the first frame received after the event's last loss, or, if that
is later (a generator that stalled in between), of the frame after the
lost ones had they been sent at the stream's rate from the last frame
received before them.
"""

from __future__ import annotations

import socket
import subprocess
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from .analysis import LostRuns


@dataclass(frozen=True)
class LinkEvent:
    label: str
    port: int
    up: bool
    offset_ns: int
    """When it was due, from the load's start."""
    issued_ns: int
    """time.time_ns() as `ip link set` started."""
    done_ns: int
    """... and as it returned (the link had changed)."""
    changed_ns: int = 0
    """When the kernel announced the change (0: not seen; done_ns then)."""

    @property
    def at_ns(self) -> int:
        """The event's time: the kernel's announcement, else the command's return."""
        return self.changed_ns or self.done_ns


def changed(events: Sequence[LinkEvent], iface_of: Callable[[int], str],
            changes: Any) -> list[LinkEvent]:
    """The events with the time the kernel announced each change (a
    link_changes.LinkChanges that listened meanwhile)."""
    out = []
    for e in events:
        try:
            index = socket.if_nametoindex(iface_of(e.port))
        except OSError:
            index = -1
        t = changes.first(index, e.up, e.issued_ns) if index >= 0 else None
        out.append(replace(e, changed_ns=t if t is not None and t <= e.done_ns + 10**9 else 0))
    return out


def set_link(dev: str, up: bool) -> None:
    subprocess.run(["ip", "link", "set", "dev", dev, "up" if up else "down"], check=True,
                   capture_output=True, text=True, timeout=10)


class LinkSchedule:
    """Called with no argument (MininetTestbed.trial's `during`): runs
    `schedule` [(label, DUT port, up, offset ns)] on the DUT interfaces
    `iface_of(port)`; `events` and `start_ns` describe the last run."""

    def __init__(self, iface_of: Callable[[int], str],
                 schedule: Sequence[tuple[str, int, bool, int]]):
        self.iface_of = iface_of
        self.schedule = list(schedule)
        self.events: list[LinkEvent] = []
        self.start_ns = 0
        self.start_mono = 0.0

    def __call__(self) -> None:
        self.events = []
        self.start_ns, self.start_mono = time.time_ns(), time.monotonic()
        down: set[int] = set()
        try:
            for label, port, up, offset in self.schedule:
                wait = self.start_mono + offset / 1e9 - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                t0 = time.time_ns()
                set_link(self.iface_of(port), up)
                t1 = time.time_ns()
                (down.discard if up else down.add)(port)
                self.events.append(LinkEvent(label, port, up, offset, t0, t1))
        finally:
            for port in sorted(down):  # stopped early: no link stays down
                set_link(self.iface_of(port), True)


@dataclass(frozen=True)
class LossRun:
    frames: int
    before_ns: int
    """Send time of the last frame received before the run."""
    after_ns: int
    """Send time of the first frame received after it."""
    slot_ns: float = 0.0
    """The stream's frame interval."""

    @property
    def recovered_ns(self) -> int:
        """When the stream was whole again (see the module doc)."""
        if self.slot_ns <= 0:
            return self.after_ns
        return min(self.after_ns, int(self.before_ns + (self.frames + 1) * self.slot_ns))


def stream_runs(rx: Optional[Mapping[str, Any]], tx: Mapping[str, Any],
                fps: float) -> list[LossRun]:
    """A stream's loss runs from the analyzer's (`rx`, None: nothing
    arrived) and the generator's (`tx`) reports, `fps` its rate; the frames
    sent after the last one received are a run of their own (their send
    time from the rate), as are all frames of a stream nothing of which
    arrived."""
    sent = int(tx.get("tx_packets", 0))
    first, last = int(tx.get("first_tx_ns", 0)), int(tx.get("last_tx_ns", 0))
    slot = 1e9 / fps if fps > 0 else 0.0
    if sent == 0:
        return []
    if rx is None or rx.get("max_seq") is None:
        return [LossRun(sent, first, last, slot)]
    out = [LossRun(int(m), int(b) or first, int(a), slot)
           for _, _, m, b, a in rx.get("loss_runs", [])]
    got = int(rx["max_seq"]) + 1
    if sent > got:
        step = (last - first) / max(sent - 1, 1)
        out.append(LossRun(sent - got, int(first + got * step), last + int(step), slot))
    return out


def lost_runs(runs: Sequence[LossRun]) -> LostRuns:
    """The streams' loss runs as analysis.per_event takes them (a run is
    put against an event by the frame received before it)."""
    return LostRuns(np.array([r.frames for r in runs], np.int64),
                    np.array([r.before_ns for r in runs], np.int64),
                    np.array([r.recovered_ns for r in runs], np.int64))
