"""Link aggregation: LAG groups over the DUT's lag_selector.

A LAG is a lag_select entry {lag_id} pointing at an action selector group
whose members each send to one port (set_egress_port); the selector's
5-tuple hash (and MACs) picks the member per flow, as a switch's LAG
hashing does. dmac entries (forward_lag) and next hops (set_next_hop_lag)
send to the LAG.

    lags = Lags(sw)
    lags.create(1, [3, 4])          # LAG 1 over ports 3 and 4
    lags.set_ports(1, [4])          # port 3 failed: its flows move to 4
    lags.set_ports(1, [3, 4])       # recovered
    lags.link_changed(3, up=False)  # the same, from a port-status event

With `watch_ports=True` each member watches its own port (P4Runtime's
watch_port): the switch skips a member whose link is down at once, before
the controller rewrites the group (data-plane failover).
"""

from __future__ import annotations

from typing import Sequence

from ..device import Switch
from ..entities import Group, Member, TableEntry


class Lags:
    def __init__(self, sw: Switch, table: str = "lag_select", first_member_id: int = 1,
                 watch_ports: bool = False):
        self.sw = sw
        self.table = table
        self.profile = sw.action_profile(table).name
        self.watch_ports = watch_ports
        self._port_member: dict[int, int] = {}
        self._next_member = first_member_id
        self.lags: dict[int, list[int]] = {}
        """LAG id -> the member ports its group has now."""
        self.configured: dict[int, list[int]] = {}
        """LAG id -> its member ports as created (link_changed restores them)."""
        self.down: set[int] = set()
        """Ports whose link the controller was told is down."""

    def _member(self, port: int) -> int:
        mid = self._port_member.get(port)
        if mid is None:
            mid = self._next_member
            self._next_member += 1
            self.sw.insert(Member(self.profile, mid, "set_egress_port", {"port": port}))
            self._port_member[port] = mid
        return mid

    def _group(self, lag_id: int, ports: Sequence[int]) -> Group:
        members = {p: self._member(p) for p in sorted(set(ports))}
        watch = {m: p for p, m in members.items()} if self.watch_ports else {}
        return Group(self.profile, lag_id, [(m, 1) for m in members.values()],
                     watch_ports=watch)

    def create(self, lag_id: int, ports: Sequence[int]) -> None:
        """LAG `lag_id` (> 0) over `ports` (at least one); the selector
        group id is the LAG id."""
        if lag_id <= 0:
            raise ValueError("LAG ids start at 1 (0 means no LAG in the DUT)")
        if not ports:
            raise ValueError(f"LAG {lag_id}: a LAG needs at least one member port")
        self.sw.insert(self._group(lag_id, ports))
        self.sw.insert(TableEntry(self.table, {"lag_id": lag_id}, group_id=lag_id))
        self.lags[lag_id] = sorted(set(ports))
        self.configured[lag_id] = sorted(set(ports))

    def set_ports(self, lag_id: int, ports: Sequence[int]) -> None:
        """Changes the members (a member link failed or came back)."""
        self.sw.modify(self._group(lag_id, ports))
        self.lags[lag_id] = sorted(set(ports))

    def link_changed(self, port: int, up: bool) -> list[int]:
        """A port's link went down or came back (a port-status event): each
        LAG created over it is rewritten to its member ports whose links are
        up. Returns the LAG ids rewritten."""
        if up:
            self.down.discard(port)
        else:
            self.down.add(port)
        changed = []
        for lag_id, ports in sorted(self.configured.items()):
            if port in ports:
                active = [p for p in ports if p not in self.down]
                if active != self.lags.get(lag_id):
                    self.set_ports(lag_id, active)
                    changed.append(lag_id)
        return changed

    def remove(self, lag_id: int) -> None:
        self.sw.delete(TableEntry(self.table, {"lag_id": lag_id}))
        self.sw.delete(Group(self.profile, lag_id))
        self.lags.pop(lag_id, None)
        self.configured.pop(lag_id, None)

    def lag_of_port(self) -> dict[int, int]:
        """port -> LAG id, for L2 learning on LAG members."""
        return {p: lag for lag, ports in self.lags.items() for p in ports}
