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
"""

from __future__ import annotations

from typing import Sequence

from ..device import Switch
from ..entities import Group, Member, TableEntry


class Lags:
    def __init__(self, sw: Switch, table: str = "lag_select", first_member_id: int = 1):
        self.sw = sw
        self.table = table
        self.profile = sw.action_profile(table).name
        self._port_member: dict[int, int] = {}
        self._next_member = first_member_id
        self.lags: dict[int, list[int]] = {}

    def _member(self, port: int) -> int:
        mid = self._port_member.get(port)
        if mid is None:
            mid = self._next_member
            self._next_member += 1
            self.sw.insert(Member(self.profile, mid, "set_egress_port", {"port": port}))
            self._port_member[port] = mid
        return mid

    def _group(self, lag_id: int, ports: Sequence[int]) -> Group:
        return Group(self.profile, lag_id, [(self._member(p), 1) for p in sorted(set(ports))])

    def create(self, lag_id: int, ports: Sequence[int]) -> None:
        """LAG `lag_id` (> 0) over `ports`; the selector group id is the LAG id."""
        if lag_id <= 0:
            raise ValueError("LAG ids start at 1 (0 means no LAG in the DUT)")
        self.sw.insert(self._group(lag_id, ports))
        self.sw.insert(TableEntry(self.table, {"lag_id": lag_id}, group_id=lag_id))
        self.lags[lag_id] = sorted(set(ports))

    def set_ports(self, lag_id: int, ports: Sequence[int]) -> None:
        """Changes the members (a member link failed or came back)."""
        self.sw.modify(self._group(lag_id, ports))
        self.lags[lag_id] = sorted(set(ports))

    def remove(self, lag_id: int) -> None:
        self.sw.delete(TableEntry(self.table, {"lag_id": lag_id}))
        self.sw.delete(Group(self.profile, lag_id))
        self.lags.pop(lag_id, None)

    def lag_of_port(self) -> dict[int, int]:
        """port -> LAG id, for L2 learning on LAG members."""
        return {p: lag for lag, ports in self.lags.items() for p in ports}
