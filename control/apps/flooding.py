"""Flood domains (multicast groups) and per-port settings of the DUT.

The DUT floods a frame whose destination is unknown (or broadcast) to the
multicast group of its ingress port (port_config.flood_group, default 1)
and drops the copy that would go back out of the ingress port, so one
group holding every port of a domain serves all its ports.

    Flooding(sw).domain([1, 2, 3, 4])              # group 1, every port's default
    Flooding(sw).domain([5, 6], group=2, ports_use_it=True)
    Flooding(sw).port(3, max_frame=1514)           # RFC 2889 oversize limit
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ..device import Switch
from ..entities import TableEntry

DEFAULT_GROUP = 1
MIN_FRAME = 60      # 64 bytes on the wire with the FCS
MAX_FRAME = 9212    # 9216 with the FCS


@dataclass
class PortSettings:
    flood_group: int = DEFAULT_GROUP
    min_frame: int = MIN_FRAME
    max_frame: int = MAX_FRAME


class Flooding:
    def __init__(self, sw: Switch, table: str = "port_config"):
        self.sw = sw
        self.table = table
        self.ports: dict[int, PortSettings] = {}

    def domain(self, ports: Sequence[int], group: int = DEFAULT_GROUP,
               ports_use_it: bool = False) -> None:
        """Makes multicast group `group` replicate to `ports` (instance 1);
        with `ports_use_it`, those ports flood to it (else they use their
        current group, by default group 1)."""
        self.sw.multicast_group(group, sorted(set(ports)), instance=1)
        if ports_use_it:
            for p in ports:
                self.port(p, flood_group=group)

    def remove_domain(self, group: int) -> None:
        self.sw.delete_multicast_group(group)

    def port(self, port: int, flood_group: Optional[int] = None, min_frame: Optional[int] = None,
             max_frame: Optional[int] = None) -> PortSettings:
        """Sets one port's flood group and accepted frame lengths (bytes
        without FCS); unspecified values keep their current setting."""
        cur = self.ports.get(port, PortSettings())
        new = PortSettings(cur.flood_group if flood_group is None else flood_group,
                           cur.min_frame if min_frame is None else min_frame,
                           cur.max_frame if max_frame is None else max_frame)
        e = TableEntry(self.table, {"ingress_port": port}, "set_port_config",
                       {"flood_group": new.flood_group, "min_frame": new.min_frame,
                        "max_frame": new.max_frame})
        if port in self.ports:
            self.sw.modify(e)
        else:
            self.sw.insert_or_modify(e)
        self.ports[port] = new
        return new

    def defaults(self, flood_group: int = DEFAULT_GROUP, min_frame: int = MIN_FRAME,
                 max_frame: int = MAX_FRAME) -> None:
        """The settings of ports without their own entry."""
        self.sw.table(self.table).set_default("set_port_config", flood_group=flood_group,
                                              min_frame=min_frame, max_frame=max_frame)
