"""What every switch of a topology needs, computed from the topology alone.

`plan(topology, options, down)` returns a `FabricPlan`: per switch the
ports that face hosts, the LAGs (a bonded host's links into one switch),
which inter-switch ports are on the spanning tree that floods use, the
multicast groups and the flood group of every port, and (L3 mode) the
routes. Nothing here talks to a switch, so the plan is unit-tested
without one and recomputed when links fail (`down`: ports taken out).

Flooding and LAGs. The DUT floods to the ingress port's multicast group
and drops the copy that would leave by the ingress port itself; a LAG is
several ports, so the groups are made per LAG:

* group 1 holds every flooding port: host ports, spanning-tree ports, and
  one *designated* member (the lowest active one) of each LAG;
* group 1 + L serves the members of LAG L: group 1 without L's designated
  member, so a flood never goes back to the host it came from.

Ports off the spanning tree (the second spine of a leaf-spine, say) get
flood group 0: nothing is flooded to them or from them, so broadcasts
cannot circle. Unicast follows the learnt ports, which are tree ports,
because frames only ever arrive over the tree.

The topology is read duck-typed (hosts with name/ip/mac/bond, switches
with name/cpu_port, links with a/b endpoints of node and port), as
`p4scope.topologies.spec.Topology` has them; control/ does not import
topologies/.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ..apps.routing import NextHop, from_topology, topology_routes

BASE_GROUP = 1
MODES = ("l2", "l3")


class FabricError(ValueError):
    """The topology or the options cannot be configured as asked."""


@dataclass(frozen=True)
class TelemetryOptions:
    """The instrument on the ports that face hosts (or `ports`)."""
    collector: str = "cpu"
    """"cpu": reports become packet-ins to the controller (needs the
    switch's cpu_port); else the name of a host that receives them."""
    ports: Optional[tuple[int, ...]] = None
    """Egress ports measured; None: every host-facing port below 64."""
    burst_threshold: int = 0
    burst_end: Optional[int] = None
    interval_log2_us: int = 13
    report_intervals: bool = True
    report_burst_packets: bool = False
    histogram_shift: int = 0
    udp_port: int = 32766


@dataclass(frozen=True)
class FabricOptions:
    mode: str = "l2"
    """"l2": one bridged domain, MACs learnt by the controller; "l3": /32
    routes from the topology (hosts must send to the router MAC: see
    `router_arp`)."""
    min_frame: int = 14
    """Shortest frame accepted (bytes without FCS). The DUT's default, 60,
    drops what Linux sends over veth: nothing pads an ARP (42 bytes) or a
    bare TCP ACK (54 bytes) to Ethernet's minimum there."""
    max_frame: int = 9212
    ageing_s: float = 300.0
    telemetry: Optional[TelemetryOptions] = None

    @classmethod
    def from_dict(cls, d: Optional[dict[str, Any]]) -> "FabricOptions":
        """From a topology's control.fabric section (unknown keys are errors)."""
        d = dict(d or {})
        tel = d.pop("telemetry", None)
        known = {"mode", "min_frame", "max_frame", "ageing_s"}
        bad = sorted(set(d) - known)
        if bad:
            raise FabricError(f"control.fabric: unknown key(s) {', '.join(bad)} "
                              f"(known: {', '.join(sorted(known | {'telemetry'}))})")
        t = None
        if tel is not None:
            if tel is True:
                tel = {}
            if not isinstance(tel, dict):
                raise FabricError("control.fabric.telemetry: must be an object or true")
            tknown = set(TelemetryOptions.__dataclass_fields__)
            bad = sorted(set(tel) - tknown)
            if bad:
                raise FabricError(f"control.fabric.telemetry: unknown key(s) {', '.join(bad)}")
            if tel.get("ports") is not None:
                tel = {**tel, "ports": tuple(tel["ports"])}
            t = TelemetryOptions(**tel)
        return cls(telemetry=t, **d).check()

    def check(self) -> "FabricOptions":
        if self.mode not in MODES:
            raise FabricError(f"mode {self.mode!r} is not one of {', '.join(MODES)}")
        if not 14 <= self.min_frame <= self.max_frame <= 65535:
            raise FabricError(f"frame limits {self.min_frame}..{self.max_frame} must satisfy "
                              "14 <= min_frame <= max_frame <= 65535")
        if self.ageing_s <= 0:
            raise FabricError("ageing_s must be > 0")
        return self


@dataclass
class SwitchPlan:
    name: str
    host_ports: dict[int, str] = field(default_factory=dict)
    """port -> host it faces."""
    tree_ports: set[int] = field(default_factory=set)
    """Inter-switch ports on the spanning tree."""
    blocked_ports: set[int] = field(default_factory=set)
    """Inter-switch ports off the tree: nothing is flooded over them."""
    down_ports: set[int] = field(default_factory=set)
    lags: dict[int, list[int]] = field(default_factory=dict)
    """LAG id -> all member ports (configured LAG)."""
    lag_active: dict[int, list[int]] = field(default_factory=dict)
    """LAG id -> members that are up."""
    lag_host: dict[int, str] = field(default_factory=dict)
    groups: dict[int, list[int]] = field(default_factory=dict)
    """multicast group -> ports."""
    port_group: dict[int, int] = field(default_factory=dict)
    """every port -> its flood group (0: floods nowhere)."""
    routes: dict[str, list[NextHop]] = field(default_factory=dict)
    router_mac: Optional[int] = None
    cpu_port: Optional[int] = None

    def lag_of_port(self) -> dict[int, int]:
        return {p: lag for lag, ports in self.lags.items() for p in ports}

    @property
    def ports(self) -> set[int]:
        return set(self.host_ports) | self.tree_ports | self.blocked_ports | {
            p for ps in self.lags.values() for p in ps}


@dataclass
class FabricPlan:
    options: FabricOptions
    switches: dict[str, SwitchPlan]
    tree: list[tuple[str, int, str, int]]
    """Spanning-tree links (switch a, port a, switch b, port b)."""
    down: frozenset[tuple[str, int]] = frozenset()


def _switch_links(topo: Any, down: frozenset) -> list[tuple[str, int, str, int]]:
    names = {s.name for s in topo.switches}
    out = []
    for l in topo.links:
        if l.a.node in names and l.b.node in names:
            if (l.a.node, l.a.port) in down or (l.b.node, l.b.port) in down:
                continue
            out.append((l.a.node, l.a.port, l.b.node, l.b.port))
    return out


def spanning_tree(switches: Iterable[str], links: list[tuple[str, int, str, int]]
                  ) -> list[tuple[str, int, str, int]]:
    """Breadth-first trees from the first switch (by name) of each
    connected part; among parallel candidates the first link wins, so the
    tree is the same for the same topology."""
    adj: dict[str, list[tuple[int, str, int]]] = {s: [] for s in switches}
    for a, pa, b, pb in links:
        adj[a].append((pa, b, pb))
        adj[b].append((pb, a, pa))
    for s in adj:
        adj[s].sort()
    seen: set[str] = set()
    tree = []
    for root in sorted(adj):
        if root in seen:
            continue
        seen.add(root)
        queue = [root]
        while queue:
            s = queue.pop(0)
            for p, n, pn in adj[s]:
                if n not in seen:
                    seen.add(n)
                    tree.append((s, p, n, pn))
                    queue.append(n)
    return tree


def _lags(topo: Any, down: frozenset) -> dict[str, dict[int, tuple[str, list[int]]]]:
    """switch -> LAG id -> (host, ports) for bonded hosts with 2+ links."""
    out: dict[str, dict[int, tuple[str, list[int]]]] = {}
    for h in topo.hosts:
        if getattr(h, "bond", None) is None:
            continue
        ends = [l.b if l.a.node == h.name else l.a for l in topo.links
                if h.name in (l.a.node, l.b.node)]
        if len(ends) < 2:
            continue
        sws = sorted({e.node for e in ends})
        if len(sws) > 1:
            raise FabricError(f"host {h.name} is bonded over switches {', '.join(sws)}: a LAG "
                              "spread over several switches (MLAG) is not supported")
        lags = out.setdefault(sws[0], {})
        lags[len(lags) + 1] = (h.name, sorted(e.port for e in ends))
    return out


def _groups(sp: SwitchPlan) -> None:
    flooding = set(sp.tree_ports) | {p for p in sp.host_ports
                                     if p not in sp.lag_of_port() and p not in sp.down_ports}
    designated = {lag: min(act) for lag, act in sp.lag_active.items() if act}
    flooding |= set(designated.values())
    sp.groups = {BASE_GROUP: sorted(flooding)}
    sp.port_group = {p: BASE_GROUP for p in sp.host_ports}
    sp.port_group.update({p: BASE_GROUP for p in sp.tree_ports})
    sp.port_group.update({p: 0 for p in sp.blocked_ports})
    for lag, members in sp.lags.items():
        gid = BASE_GROUP + lag
        sp.groups[gid] = sorted(flooding - {designated.get(lag, -1)})
        for p in members:
            sp.port_group[p] = gid
    for p in sp.down_ports:
        sp.port_group.setdefault(p, 0)


def router_macs(topo: Any) -> dict[str, int]:
    """A stable router MAC per switch: 02:00:00:ff:00:NN by name order."""
    return {s: 0x020000FF0000 + i + 1 for i, s in enumerate(sorted(x.name for x in topo.switches))}


def _routes(topo: Any, sp: SwitchPlan, macs: dict[str, int], down: frozenset) -> None:
    rt = from_topology(topo, router_macs=macs)
    rt.links = [l for l in rt.links if (l[0], l[1]) not in down and (l[2], l[3]) not in down]
    routes = topology_routes(rt, sp.name)
    hosts = {h.name: h for h in topo.hosts}
    for lag, host in sp.lag_host.items():
        h = hosts[host]
        ip = str(ipaddress.ip_interface(h.ip).ip)
        routes[f"{ip}/32"] = [NextHop(h.mac, lag=lag)]
    sp.routes = routes
    sp.router_mac = macs[sp.name]


def plan(topo: Any, options: Optional[FabricOptions] = None,
         down: Iterable[tuple[str, int]] = ()) -> FabricPlan:
    """The configuration of every switch of `topo`; `down` lists (switch,
    port) pairs whose links are out of service."""
    opts = (options or FabricOptions()).check()
    down_set = frozenset(down)
    names = [s.name for s in topo.switches if getattr(s, "kind", "p4scope") != "bridge"]
    if not names:
        raise FabricError("the topology has no P4 switch to configure")
    links = _switch_links(topo, down_set)
    tree = spanning_tree(names, [l for l in links if l[0] in names and l[2] in names])
    lags = _lags(topo, down_set)
    sps: dict[str, SwitchPlan] = {}
    for s in topo.switches:
        if s.name not in names:
            continue
        sp = SwitchPlan(s.name, cpu_port=getattr(s, "cpu_port", None))
        sp.down_ports = {p for sw, p in down_set if sw == s.name}
        for lag, (host, ports) in lags.get(s.name, {}).items():
            sp.lags[lag] = ports
            sp.lag_host[lag] = host
            sp.lag_active[lag] = [p for p in ports if p not in sp.down_ports]
        in_lag = sp.lag_of_port()
        for l in topo.links:
            for me, other in ((l.a, l.b), (l.b, l.a)):
                if me.node != s.name:
                    continue
                if other.node in names or any(other.node == x.name for x in topo.switches):
                    continue
                if me.port not in in_lag:
                    sp.host_ports[me.port] = other.node
        for a, pa, b, pb in tree:
            if a == s.name:
                sp.tree_ports.add(pa)
            if b == s.name:
                sp.tree_ports.add(pb)
        for l in topo.links:
            for me, other in ((l.a, l.b), (l.b, l.a)):
                if me.node == s.name and other.node in names and me.port not in sp.tree_ports:
                    sp.blocked_ports.add(me.port)
        _groups(sp)
        sps[s.name] = sp
    if opts.mode == "l3":
        macs = router_macs(topo)
        for sp in sps.values():
            _routes(topo, sp, macs, down_set)
    if opts.telemetry is not None and opts.telemetry.collector == "cpu":
        missing = [n for n, sp in sps.items() if not sp.cpu_port]
        if missing:
            raise FabricError(f"telemetry to the controller needs a CPU port; {', '.join(missing)} "
                              "has none (set cpu_port, e.g. 255, or name a collector host)")
    return FabricPlan(opts, sps, tree, down_set)


def router_arp(topo: Any) -> dict[str, dict[str, str]]:
    """For L3 mode: host -> {every other host's IP: the router MAC of the
    switch the host hangs on}, as static ARP entries (P4 routers answer no
    ARP), so hosts in one subnet still send every frame to their router."""
    macs = router_macs(topo)
    sw_names = {s.name for s in topo.switches}
    out: dict[str, dict[str, str]] = {}
    for h in topo.hosts:
        ends = [l.b if l.a.node == h.name else l.a for l in topo.links
                if h.name in (l.a.node, l.b.node)]
        sw = next((e.node for e in ends if e.node in sw_names), None)
        if sw is None:
            continue
        mac = macs[sw]
        text = ":".join(f"{(mac >> (8 * i)) & 0xFF:02x}" for i in range(5, -1, -1))
        out[h.name] = {str(ipaddress.ip_interface(o.ip).ip): text
                       for o in topo.hosts if o.name != h.name}
    return out
