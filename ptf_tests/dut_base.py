"""Layer 2 of the suite: the reference DUT (p4src/dut.p4) in its own words.

`DutTest` adds the verbs a test of the DUT needs, each one call into
p4scope.control and its apps (so the suite also exercises the controller
that the experiments use):

    setup_flood_domain(ports)          multicast group 1 = every port
    set_port_limits(port, ...)         port_config: frame sizes, flood group
    add_bridging_entry(mac, port)      dmac -> forward
    add_station(mac, port)             smac + dmac, as learning would
    add_next_hop(mac, port|lag)        a next hop (selector member)
    add_route(prefix, [(mac, port)])   router MAC, next hop(s), LPM entry
    add_acl_rule(priority, action...)  permit / deny / set_dscp
    add_lag(lag_id, ports)             LAG group over the selector
    learning(ageing_s)                 the L2 learning app, digests enabled
    set_telemetry_port(port, ...)      the instrument on an egress port
    watch_flow(dst=..., dport=...)     INT-XD postcards for a flow

and packet builders with the suite's addressing plan (host i: MAC
00:00:00:00:00:i, IPv4 10.0.<subnet>.i).
"""

from __future__ import annotations

import time
from typing import Optional, Sequence

import ptf.testutils as tu

from p4scope.control.apps.acl import Acl, AclRule
from p4scope.control.apps.flooding import Flooding
from p4scope.control.apps.lag import Lags
from p4scope.control.apps.learning import L2Learning
from p4scope.control.apps.routing import NextHop, Router
from p4scope.control.apps.telemetry import Telemetry

from p4rt_base import P4RuntimeTest

ROUTER_MAC = "00:aa:bb:00:00:01"
FLOOD_GROUP = 1

# dut.p4's drop reasons (drop_counter index = reason << 9 | ingress port)
DROP_UNDERSIZE, DROP_OVERSIZE, DROP_PARSER, DROP_CHECKSUM = 1, 2, 3, 4
DROP_TTL, DROP_NO_ROUTE, DROP_ACL, DROP_L2, DROP_NO_FLOOD, DROP_LAG = 5, 6, 7, 8, 9, 10


def host_mac(i: int) -> str:
    return f"00:00:00:00:{i >> 8:02x}:{i & 0xFF:02x}"


def host_ip(i: int, subnet: int = 0) -> str:
    return f"10.0.{subnet}.{i}"


def udp_packet(src: int = 1, dst: int = 2, size: int = 100, ttl: int = 64,
               src_mac: Optional[str] = None, dst_mac: Optional[str] = None,
               src_ip: Optional[str] = None, dst_ip: Optional[str] = None,
               sport: int = 1234, dport: int = 80, dscp: int = 0):
    """A UDP frame from host `src` to host `dst` (addresses overridable)."""
    return tu.simple_udp_packet(
        pktlen=size, eth_src=src_mac or host_mac(src), eth_dst=dst_mac or host_mac(dst),
        ip_src=src_ip or host_ip(src), ip_dst=dst_ip or host_ip(dst), ip_ttl=ttl,
        ip_dscp=dscp, udp_sport=sport, udp_dport=dport)


def l2_packet(src: int = 1, dst: int = 2, size: int = 64, ether_type: int = 0x88B5,
              dst_mac: Optional[str] = None):
    """A non-IP frame (only the bridge looks at it)."""
    return tu.simple_eth_packet(pktlen=size, eth_src=host_mac(src),
                                eth_dst=dst_mac or host_mac(dst), eth_type=ether_type)


class DutTest(P4RuntimeTest):
    """Domain verbs of the reference DUT."""

    def setUp(self) -> None:
        super().setUp()
        self._router: Optional[Router] = None
        self._acl: Optional[Acl] = None
        self._lags: Optional[Lags] = None
        self._flooding: Optional[Flooding] = None
        self._telemetry: Optional[Telemetry] = None
        self._learning: Optional[L2Learning] = None
        self._taken0 = self.port_counts("ingress_port_counter", self.ports)

    # ----- negative checks ------------------------------------------------------------

    def wait_taken_in(self, timeout: float = 5.0) -> None:
        """Waits until ingress_port_counter shows every frame sent in this
        test, so that a negative check only has to cover the way from the
        queue to the wire, however slowly the switch reads its ports."""
        ports = sorted(p for p, n in self.sent.items() if n and p in self._taken0)
        if not ports:
            return
        want = {p: self._taken0[p][0] + self.sent[p] for p in ports}
        deadline = time.monotonic() + timeout
        while True:
            have = {p: v[0] for p, v in self.port_counts("ingress_port_counter", ports).items()}
            if all(have[p] >= want[p] for p in ports):
                break
            if time.monotonic() > deadline:
                self.fail(f"the switch took in {have} frames per port, {want} were sent")
            time.sleep(0.005)
        self.assertEqual(have, want, "the switch took in frames that were not sent")

    # ----- L2 -----------------------------------------------------------------------

    @property
    def flooding(self) -> Flooding:
        if self._flooding is None:
            self._flooding = Flooding(self.sw)
        return self._flooding

    def setup_flood_domain(self, ports: Optional[Sequence[int]] = None,
                           group: int = FLOOD_GROUP) -> None:
        """Multicast group `group` replicates to `ports` (all by default)."""
        self.flooding.domain(list(ports if ports is not None else self.ports), group)

    def set_port_limits(self, port: int, min_frame: Optional[int] = None,
                        max_frame: Optional[int] = None,
                        flood_group: Optional[int] = None) -> None:
        self.flooding.port(port, flood_group=flood_group, min_frame=min_frame,
                           max_frame=max_frame)

    def add_bridging_entry(self, mac: str, port: int) -> None:
        self.sw.table("dmac").insert({"dst_addr": mac}, "forward", port=port)

    def bridge_to(self, mac: str, port: int) -> None:
        """add_bridging_entry, or move the entry if `mac` already has one
        (scenarios that run several times in one test)."""
        dmac = self.sw.table("dmac")
        if any(next(iter(e.match.values())) == int(mac.replace(":", ""), 16)
               for e in dmac.entries()):
            dmac.modify({"dst_addr": mac}, "forward", port=port)
        else:
            self.add_bridging_entry(mac, port)

    def add_bridging_drop(self, mac: str) -> None:
        self.sw.table("dmac").insert({"dst_addr": mac}, "drop")

    def add_bridging_lag_entry(self, mac: str, lag_id: int) -> None:
        self.sw.table("dmac").insert({"dst_addr": mac}, "forward_lag", lag_id=lag_id)

    def add_station(self, mac: str, port: int) -> None:
        """A host the switch knows (smac and dmac), as learning installs it,
        so its frames raise no learning digest."""
        self.sw.table("smac").insert({"src_addr": mac}, "smac_hit", port=port)
        self.add_bridging_entry(mac, port)

    def learning(self, ageing_s: float = 300.0) -> L2Learning:
        """The learning app with its digest enabled (PI needs a DigestEntry)."""
        if self._learning is None:
            self._learning = L2Learning(self.sw, ageing_s=ageing_s).start()
        return self._learning

    # ----- L3 -----------------------------------------------------------------------

    @property
    def router(self) -> Router:
        if self._router is None:
            self._router = Router(self.sw, ROUTER_MAC)
            self._router.add_router_mac()
        return self._router

    def add_next_hop(self, mac: str, port: Optional[int] = None,
                     lag: Optional[int] = None) -> int:
        """A next hop (ipv4_lpm selector member: MAC rewrite, TTL, port or
        LAG); returns its member id. Routes to the same hop share it."""
        return self.router.member(NextHop(mac, port=port, lag=lag))

    def add_route(self, prefix: str, next_hops: Sequence[tuple[str, int]]) -> None:
        """LPM route to `prefix` via (next-hop MAC, port) pairs (> 1: ECMP)."""
        self.router.route(prefix, [NextHop(mac, port=port) for mac, port in next_hops])

    def add_route_via_lag(self, prefix: str, mac: str, lag_id: int) -> None:
        self.router.route(prefix, [NextHop(mac, lag=lag_id)])

    # ----- ACL ----------------------------------------------------------------------

    @property
    def acl(self) -> Acl:
        if self._acl is None:
            self._acl = Acl(self.sw)
        return self._acl

    def add_acl_rule(self, priority: int, action: str = "permit", **match) -> AclRule:
        """An ACL rule; match keywords as AclRule's (src, dst, proto, dport...)."""
        rule = AclRule(priority=priority, action=action, **match)
        self.acl.add(rule)
        return rule

    # ----- LAG ----------------------------------------------------------------------

    @property
    def lags(self) -> Lags:
        if self._lags is None:
            self._lags = Lags(self.sw)
        return self._lags

    def add_lag(self, lag_id: int, ports: Sequence[int]) -> None:
        self.lags.create(lag_id, ports)

    def set_lag_members(self, lag_id: int, ports: Sequence[int]) -> None:
        self.lags.set_ports(lag_id, ports)

    # ----- telemetry ------------------------------------------------------------------

    @property
    def telemetry(self) -> Telemetry:
        if self._telemetry is None:
            self._telemetry = Telemetry(self.sw)
        return self._telemetry

    def set_telemetry_port(self, port: int, **config) -> None:
        """Measures egress `port` (histogram, intervals, burst detection:
        Telemetry.port's keywords)."""
        self.telemetry.port(port, **config)

    def watch_flow(self, **match) -> None:
        """INT-XD watchlist entry (src, dst, proto, sport, dport, ingress_port)."""
        self.telemetry.watch(**match)

    # ----- counters -------------------------------------------------------------------

    def drops(self, reason: int, port: int) -> int:
        """Packets dropped for `reason` that came in on `port`."""
        return self.sw.counter("drop_counter")[(reason << 9) | port].packets

    def port_counts(self, counter: str, ports: Sequence[int]) -> dict[int, tuple[int, int]]:
        """{port: (packets, bytes)} of ingress_port_counter / egress_port_counter."""
        vals = self.sw.counter(counter).read_many(ports)
        return {p: (vals[p].packets, vals[p].bytes) if p in vals else (0, 0) for p in ports}
