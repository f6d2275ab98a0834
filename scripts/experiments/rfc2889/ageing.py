"""The switch's MAC ageing in virtual time.

On a real switch the learning app writes each smac entry with an idle
timeout (`idle_timeout_ns`, its ageing time); the switch's sweep reports
the entries not hit for that long to the controller, which deletes them.
The real-time sweep runs on the wall clock in the switch's own thread; in
a virtual-time run that thread does not run, so the run drives the same
sweep (switch/p4runtime/idle.py) on the engine's clock at the sweep's own
interval of virtual time, and the notifications go to the controller over
the P4Runtime stream as they would.
"""

from __future__ import annotations

from typing import Any


class VirtualAgeing:
    """Sweeps the idle timeouts of `vs` (a VirtualSwitch, just reset: its
    time starts at 0) every `interval_ns` of virtual time (the switch's own
    sweep interval), as a sweep started with the switch would."""

    def __init__(self, vs: Any):
        self.vs = vs
        with vs.locked():
            self.idle = vs.device.pipeline.idle
            self.idle.follow_engine_clock()
        self.interval_ns = int(self.idle.interval_ns)
        self.next_ns = self.interval_ns
        self.expired = 0
        """Entries reported idle so far."""

    def due(self, now_ns: int) -> bool:
        return now_ns >= self.next_ns

    def sweep(self, now_ns: int) -> int:
        """The sweep due by `now_ns` (the engine's time; virtual time must
        stop at each `next_ns`, or the sweep is late): how many entries it
        reported idle."""
        with self.vs.locked():
            n = self.idle.sweep()
        self.next_ns = (now_ns // self.interval_ns + 1) * self.interval_ns
        self.expired += n
        return n
