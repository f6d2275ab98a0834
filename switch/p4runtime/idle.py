"""Idle timeout: time since last hit and IdleTimeoutNotification.

The engine counts every hit of every entry (the direct counter cells exist
even without a direct counter), so "was it hit since the last look" is a
change in the engine's packet count; in real time the engine is never asked
for hit timestamps. A sweep (every `interval_ns`) notifies the primary of entries
whose TTL has passed without a hit, one message per table, and then resets
their timer, as the spec asks.

In virtual time (`follow_engine_clock`) the clock is the engine's, and an
entry's last hit is the one the engine stamped (as BMv2 stamps every hit):
a sweep driven at virtual-time steps then ages entries by virtual time.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Optional

from finsy.proto import p4r

if TYPE_CHECKING:
    from .pipeline import ForwardingPipeline
    from .tables import Entry, TableState


class IdleTimeout:
    interval_ns = 100_000_000  # BMv2's ageing sweep is in this range too

    def __init__(self, pipe: "ForwardingPipeline", send: Optional[Callable] = None,
                 clock: Callable[[], int] = time.monotonic_ns):
        self.pipe = pipe
        self.send: Callable[[p4r.StreamMessageResponse], None] = send or (lambda msg: None)
        self.clock = clock
        self.engine_hits = False
        """Each entry's last hit from the engine's own stamp (virtual time)."""

    def follow_engine_clock(self) -> None:
        """Virtual time: the engine's clock, and each entry's last hit as the
        engine stamped it (exact, where a counter change only shows that a
        hit came since the last look). Nothing sweeps by itself: the run
        calls `sweep()` at its steps."""
        raw = self.pipe.engine.raw
        self.clock = lambda: raw.now_ns
        self.engine_hits = True

    def _observe(self, st: "TableState", e: "Entry", now: int) -> None:
        if self.engine_hits:
            hit = now - self.pipe.engine.raw.table_entry_idle_ns(st.map.name, e.handle)
            e.last_hit_ns = max(e.last_hit_ns, hit)  # a notification restarted it later
            return
        _, packets = self.pipe.engine.direct_counter_read(st.map.name, e.handle)
        if packets != e.last_packets:
            e.last_packets = packets
            e.last_hit_ns = now
        elif e.last_hit_ns == 0:
            e.last_hit_ns = now

    def elapsed(self, st: "TableState", e: "Entry") -> int:
        now = self.clock()
        self._observe(st, e, now)
        return max(now - e.last_hit_ns, 0)

    def sweep(self) -> int:
        """Checks every entry with a TTL; returns how many expired."""
        now = self.clock()
        count = 0
        tables = self.pipe.tables
        for st in tables.tables.values():
            if not st.map.info.idle_timeout:
                continue
            resp = None
            for e in st.entries.values():
                if not e.idle_timeout_ns:
                    continue
                self._observe(st, e, now)
                if now - e.last_hit_ns >= e.idle_timeout_ns:
                    if resp is None:
                        resp = p4r.StreamMessageResponse()
                    tables.entry_key_proto(st, e, resp.idle_timeout_notification.table_entry.add())
                    e.last_hit_ns = now
                    count += 1
            if resp is not None:
                resp.idle_timeout_notification.timestamp = time.time_ns()
                self.send(resp)
        return count
