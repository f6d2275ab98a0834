"""The reference DUT's learning path, run in virtual time.

The DUT learns no address by itself: a frame from an unknown source MAC
raises a `mac_learn_t` digest, and the controller (p4scope.control's
L2Learning) writes the smac and dmac entries over P4Runtime. The address
tests therefore measure that path, the controller's: each digest the
engine raises in virtual time goes to the switch's digest manager exactly
as the real-time switch hands it over (Device.deliver_events), to the
controller over the P4Runtime stream, and the controller's Write comes
back into the engine.

Virtual time stops for none of this, so the controller is a single
server in virtual time: digests wait in the order they were raised, and
each one's entries take effect `service` nanoseconds after the controller
started on it, where `service` is the mean wall-clock time this
controller has taken per digest so far in the trial (the first digest is
charged its own; the warm-up before a trial is not counted). Frames that arrive before their source's entries are
written are flooded, as on a switch whose learning lags. Digests wait in
a queue as deep as the P4Runtime stream's (the switch drops digest lists
beyond it); those still waiting when the trial ends were not learnt in
time.

With `ageing` (ageing.VirtualAgeing) the learnt entries age in virtual
time: virtual time stops at each of the switch's idle-timeout sweeps, and
the controller forgets the addresses a sweep reports (L2Learning deletes
their entries) at the sweep's time, ahead of any digest waiting (its
service time is not charged: a sweep's deletions are no part of the
learning path measured).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from time import perf_counter
from typing import Any, Optional

from ...switch.p4runtime.server import STREAM_QUEUE
from .ageing import VirtualAgeing

HANDLE_TIMEOUT_S = 5.0
"""How long the controller waits for a digest list it was just sent (on
a busy machine the stream thread can be slow; normally well under 1 ms)."""


@dataclass(frozen=True)
class Watch:
    """Frames that may raise digests: `count` frames from `start_ns`, one
    every `period_ns`; virtual time stops `delay_ns` after each so its
    digest is served from the moment it was raised."""

    start_ns: int
    period_ns: float
    count: int
    delay_ns: int = 1_000

    def next_stop(self, now: int) -> Optional[int]:
        """The first stop after `now`, or None after the last frame's."""
        k = max(0, int((now - self.start_ns - self.delay_ns) // self.period_ns) + 1)
        while k < self.count:
            t = self.start_ns + round(k * self.period_ns) + self.delay_ns
            if t > now:
                return t
            k += 1
        return None


class VirtualController:
    """Runs the engine of `vs` (a VirtualSwitch) in virtual time with the
    `learning` app (L2Learning on the same switch) serving its digests."""

    def __init__(self, vs: Any, learning: Any, queue_limit: int = STREAM_QUEUE,
                 ageing: Optional[VirtualAgeing] = None):
        self.vs, self.learning, self.queue_limit = vs, learning, queue_limit
        self.ageing = ageing
        self.aged = 0
        """Addresses the controller forgot because the switch aged them."""
        self.now = 0
        self.free_at = 0
        self.pending: deque = deque()  # (learn list, values, raised at ns)
        self.service_s: list[float] = []
        self.dropped = 0
        self.late_ns = 0
        """How late a write took effect at most (virtual time ran past its
        due time before the controller was asked; 0 when stops are fine
        enough)."""

    @property
    def service_ns(self) -> int:
        """The mean wall-clock time per digest so far (0 before the first)."""
        return round(1e9 * sum(self.service_s) / len(self.service_s)) if self.service_s else 0

    @property
    def handled(self) -> int:
        return len(self.service_s)

    def _due(self) -> int:
        """When the first waiting digest's entries take effect."""
        return max(self.free_at, self.pending[0][2]) + self.service_ns

    def _advance(self, until_ns: int) -> None:
        with self.vs.locked() as e:
            e.run(until_ns=int(until_ns), drain=False)
            raised = e.take_digests()
        self.now = int(until_ns)
        for name, values, t in raised:
            if len(self.pending) >= self.queue_limit:
                self.dropped += 1
            else:
                self.pending.append((name, values, int(t)))

    def _serve(self) -> None:
        """The controller handles the first waiting digest now."""
        due_before = self.service_ns > 0
        name, values, t = self.pending.popleft()
        dev = self.vs.device
        sent = dev.stats.digests
        w0 = perf_counter()
        dev.deliver_events(dev.dataplane, [("digest", name, values, t)])
        if dev.stats.digests > sent:  # a digest list went out on the stream
            self.learning.handle(timeout=HANDLE_TIMEOUT_S)
        self.service_s.append(perf_counter() - w0)
        # with no estimate yet the write happened at once: the controller
        # stays busy for the time it took
        self.free_at = self.now if due_before else self.now + self.service_ns

    def _age(self) -> None:
        """The switch's sweep now; the controller deletes what it reports."""
        if self.ageing is not None and self.ageing.sweep(self.now):
            self.aged += self.learning.expire(timeout=HANDLE_TIMEOUT_S)

    def run_until(self, t_end: int, watch: Optional[Watch] = None) -> None:
        """Virtual time to `t_end`, serving digests as they fall due."""
        while True:
            if self.pending and self._due() <= self.now:
                if self.service_ns:  # the first digest falls due when it is served
                    self.late_ns = max(self.late_ns, self.now - self._due())
                self._serve()
                continue
            if self.ageing is not None and self.ageing.due(self.now):
                self._age()
                continue
            if self.now >= t_end:
                return
            stops = [t_end]
            if self.ageing is not None:
                stops.append(self.ageing.next_ns)
            if self.pending:
                stops.append(self._due())
            elif watch is not None:
                nxt = watch.next_stop(self.now)
                if nxt is not None:
                    stops.append(nxt)
            self._advance(min(stops))

    def serve_all(self) -> None:
        """Virtual time runs on until no digest is waiting."""
        while self.pending:
            self.run_until(max(self._due(), self.now))

    def warm_up(self) -> None:
        """Serves what is waiting now, at once and off the books: the
        controller's first digests after a fresh switch (its stream and
        tables cold) are no measure of its service time."""
        while self.pending:
            self._serve()
        self.service_s.clear()
        self.free_at = self.now
