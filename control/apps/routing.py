"""IPv4 routing: static routes with ECMP, and routes derived from a topology.

The DUT routes frames sent to one of its router MACs (router_mac) by LPM
on the destination (ipv4_lpm). ipv4_lpm's entries point at members or
groups of its action selector: a member is one next hop (set_next_hop:
MAC rewrite, TTL decrement, port; or set_next_hop_lag: a LAG), a group is
an ECMP set whose member the 5-tuple hash picks.

    r = Router(sw, router_mac="00:aa:00:00:00:01")
    r.route("10.0.2.0/24", [NextHop("00:00:00:00:02:01", port=2)])
    r.route("10.9.0.0/16", [NextHop(m1, port=3), NextHop(m2, port=4)])   # ECMP

`topology_routes()` computes every switch's routes from hosts and links
(shortest paths, all equal-cost next hops); `from_topology()` reads a
p4scope.topologies Topology into that form.
"""

from __future__ import annotations

import ipaddress
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Union

from .. import values
from ..client import WriteError
from ..device import Switch
from ..entities import Group, Member, TableEntry

Mac = Union[str, int]


@dataclass(frozen=True)
class NextHop:
    mac: Mac
    port: Optional[int] = None
    lag: Optional[int] = None

    def key(self) -> tuple:
        return (values.to_int(self.mac, 48, "next hop MAC"), self.port, self.lag)


class Router:
    def __init__(self, sw: Switch, router_mac: Mac, table: str = "ipv4_lpm",
                 first_member_id: int = 1, first_group_id: int = 1):
        self.sw = sw
        self.router_mac = values.to_int(router_mac, 48, "router MAC")
        self.table = table
        self.profile = sw.action_profile(table).name
        self._members: dict[tuple, int] = {}
        self._groups: dict[tuple[int, ...], int] = {}
        self._next_member = first_member_id
        self._next_group = first_group_id
        self.routes: dict[str, TableEntry] = {}
        self._router_macs: set[int] = set()

    def add_router_mac(self, mac: Optional[Mac] = None) -> None:
        m = self.router_mac if mac is None else values.to_int(mac, 48, "router MAC")
        if m in self._router_macs:
            return
        try:
            self.sw.insert(TableEntry("router_mac", {"dst_addr": m}, "set_routed"))
        except WriteError:
            pass
        self._router_macs.add(m)

    def member(self, hop: NextHop) -> int:
        """The selector member of one next hop (created on first use)."""
        k = hop.key()
        mid = self._members.get(k)
        if mid is not None:
            return mid
        mid = self._next_member
        self._next_member += 1
        if hop.lag is not None:
            m = Member(self.profile, mid, "set_next_hop_lag",
                       {"dst_mac": k[0], "src_mac": self.router_mac, "lag_id": hop.lag})
        elif hop.port is not None:
            m = Member(self.profile, mid, "set_next_hop",
                       {"dst_mac": k[0], "src_mac": self.router_mac, "port": hop.port})
        else:
            raise ValueError(f"next hop {hop}: give a port or a lag")
        self.sw.insert(m)
        self._members[k] = mid
        return mid

    def group(self, hops: Sequence[NextHop]) -> int:
        mids = tuple(sorted(self.member(h) for h in hops))
        gid = self._groups.get(mids)
        if gid is None:
            gid = self._next_group
            self._next_group += 1
            self.sw.insert(Group(self.profile, gid, [(m, 1) for m in mids]))
            self._groups[mids] = gid
        return gid

    def route(self, prefix: str, hops: Sequence[NextHop]) -> TableEntry:
        """Installs or replaces the route to `prefix` ("10.0.0.0/8")."""
        if not hops:
            raise ValueError(f"route {prefix}: no next hop")
        net = ipaddress.ip_network(prefix, strict=False)
        key = str(net)
        match = {"dst_addr": (int(net.network_address), net.prefixlen)}
        if len(hops) == 1:
            e = TableEntry(self.table, match, member_id=self.member(hops[0]))
        else:
            e = TableEntry(self.table, match, group_id=self.group(hops))
        if key in self.routes:
            self.sw.modify(e)
        else:
            self.sw.insert(e)
        self.routes[key] = e
        return e

    def remove(self, prefix: str) -> None:
        key = str(ipaddress.ip_network(prefix, strict=False))
        e = self.routes.pop(key, None)
        if e is not None:
            self.sw.delete(TableEntry(self.table, e.match))

    def set_ecmp_members(self, hops: Sequence[NextHop], group_id: int) -> None:
        """Changes the members of an existing ECMP group (next hop down/up)."""
        mids = [self.member(h) for h in hops]
        self.sw.modify(Group(self.profile, group_id, [(m, 1) for m in mids]))
        for k, g in list(self._groups.items()):
            if g == group_id:
                del self._groups[k]
        self._groups[tuple(sorted(mids))] = group_id


# ----- routes from a topology ------------------------------------------------------

@dataclass(frozen=True)
class HostAttachment:
    name: str
    ip: str        # address, with or without /len
    mac: Mac
    switch: str
    port: int


@dataclass
class RoutingTopology:
    hosts: list[HostAttachment] = field(default_factory=list)
    links: list[tuple[str, int, str, int]] = field(default_factory=list)
    """Switch-to-switch links: (switch a, port a, switch b, port b)."""
    router_macs: dict[str, Mac] = field(default_factory=dict)

    def router_mac(self, switch: str) -> int:
        if switch in self.router_macs:
            return values.to_int(self.router_macs[switch], 48, "router MAC")
        # a stable default per switch: 02:00:00:ff:00:NN (locally administered)
        names = sorted(self.switches())
        return 0x020000FF0000 + names.index(switch) + 1

    def switches(self) -> set[str]:
        out = {h.switch for h in self.hosts}
        for a, _, b, _ in self.links:
            out.update((a, b))
        return out


def topology_routes(topo: RoutingTopology, switch: str) -> dict[str, list[NextHop]]:
    """Host routes (/32) of `switch`: directly attached hosts through their
    port, others through every neighbour on a shortest path (ECMP)."""
    adj: dict[str, list[tuple[int, str]]] = {s: [] for s in topo.switches()}
    for a, pa, b, pb in topo.links:
        adj[a].append((pa, b))
        adj[b].append((pb, a))
    routes: dict[str, list[NextHop]] = {}
    for h in topo.hosts:
        ip = str(ipaddress.ip_interface(h.ip).ip)
        prefix = f"{ip}/32"
        if h.switch == switch:
            routes[prefix] = [NextHop(h.mac, port=h.port)]
            continue
        dist = _distances(adj, h.switch)
        if switch not in dist:
            continue
        hops = [NextHop(topo.router_mac(n), port=p) for p, n in sorted(adj[switch])
                if dist.get(n) == dist[switch] - 1]
        if hops:
            routes[prefix] = hops
    return routes


def _distances(adj: dict[str, list[tuple[int, str]]], src: str) -> dict[str, int]:
    dist = {src: 0}
    q = deque([src])
    while q:
        s = q.popleft()
        for _, n in adj.get(s, ()):
            if n not in dist:
                dist[n] = dist[s] + 1
                q.append(n)
    return dist


def from_topology(topology: Any,
                  router_macs: Optional[Mapping[str, Mac]] = None) -> RoutingTopology:
    """A RoutingTopology from a p4scope.topologies Topology (hosts with ip
    and mac, links whose ends are hosts or switch ports)."""
    switches = {s.name for s in topology.switches}
    hosts = {h.name: h for h in topology.hosts}
    rt = RoutingTopology(router_macs=dict(router_macs or {}))
    for link in topology.links:
        a, b = link.a, link.b
        if a.node in switches and b.node in switches:
            rt.links.append((a.node, a.port, b.node, b.port))
            continue
        host, sw_end = (a, b) if a.node in hosts else (b, a)
        if host.node in hosts and sw_end.node in switches:
            h = hosts[host.node]
            rt.hosts.append(HostAttachment(h.name, h.ip, h.mac, sw_end.node, sw_end.port))
    return rt


def install_topology_routes(router: Router, topo: RoutingTopology, switch: str) -> int:
    """Installs `switch`'s routes and its router MAC; returns the route count."""
    router.add_router_mac(topo.router_mac(switch))
    routes = topology_routes(topo, switch)
    for prefix, hops in sorted(routes.items()):
        router.route(prefix, hops)
    return len(routes)
