"""The controller's side of link events in virtual time.

The engine reports every port status change as an event with its virtual
time (Engine.take_port_events), as PI's port status callback tells a
P4Runtime server. A controller in the same run hears of it and acts
`reaction_ns` later (detection plus programming, scaled like the rest of
the run), over P4Runtime as any controller would: `LinkController.run_until`
runs virtual time in steps that stop at every scheduled change and at every
reaction due, so each reaction is written at its exact virtual time. The
engine is stepped with the device's lock held and released between steps,
since the controller's writes go through the P4Runtime server, which takes
the same lock.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any, Callable, Optional

STEPS = 50  # progress steps per run_until


@dataclass(frozen=True)
class Reaction:
    """A port event and when the controller acted on it."""

    event_ns: int
    port: int
    up: bool
    acted_ns: int


class LinkController:
    """`react(port, up)` is the controller's action (e.g. Lags.link_changed),
    called `reaction_ns` after each port event of `vs` (a started
    VirtualSwitch)."""

    def __init__(self, vs: Any, react: Callable[[int, bool], Any], reaction_ns: int):
        if reaction_ns < 0:
            raise ValueError("the reaction delay cannot be negative")
        self.vs = vs
        self.react = react
        self.reaction_ns = int(reaction_ns)
        self.reactions: list[Reaction] = []
        self._pending: list[tuple[int, int, int, int, bool]] = []  # due, seq, event, port, up
        self._seq = 0
        self.now = 0

    def run_until(self, t_ns: int, tick: Optional[Callable[[float], None]] = None) -> None:
        """Runs sources and switch to virtual time `t_ns`, reacting on the way."""
        t0 = self.now
        for k in range(1, STEPS + 1):
            self._advance(t0 + (t_ns - t0) * k // STEPS)
            if tick:
                tick(k / STEPS)

    def _advance(self, until: int) -> None:
        while True:
            with self.vs.locked() as e:
                stops = [until, e.next_port_event_at(),
                         self._pending[0][0] if self._pending else None]
                stop = max(self.now, min(s for s in stops if s is not None))
                e.run(until_ns=int(stop))
                for t, port, up in e.take_port_events():
                    self._seq += 1
                    heapq.heappush(self._pending,
                                   (t + self.reaction_ns, self._seq, t, port, bool(up)))
            self.now = stop
            while self._pending and self._pending[0][0] <= stop:
                _, _, t, port, up = heapq.heappop(self._pending)
                self.react(port, up)  # outside the lock: a P4Runtime write
                self.reactions.append(Reaction(t, port, up, stop))
            if stop >= until:
                return
