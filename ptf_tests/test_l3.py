"""L3: routing by longest prefix, MAC rewrite, TTL, ECMP."""

from ptf.mask import Mask
from ptf.packet import Ether

from dut_base import DROP_NO_ROUTE, DROP_TTL, host_mac, udp_packet
from dut_features import RoutingTest
from ptf.testutils import group

NH1, NH2, NH3 = "00:00:00:aa:00:01", "00:00:00:aa:00:02", "00:00:00:aa:00:03"


@group("routing")
class RouteRewrite(RoutingTest):
    """A frame to the router MAC is routed: next-hop MACs, TTL - 1, new
    header checksum, out of the next hop's port."""

    def runTest(self):
        p = self.need_ports(3)
        self.add_route("10.0.2.0/24", [(NH2, p[1])])
        self.add_route("10.0.3.0/24", [(NH3, p[2])])
        for dst, nh, out in (("10.0.2.5", NH2, p[1]), ("10.0.3.7", NH3, p[2])):
            for ttl in (64, 2):
                pkt = self.to_router(1, dst, ttl=ttl)
                self.send(p[0], pkt)
                self.expect_on(self.routed(pkt, nh), [out])


@group("routing")
class RouteSharedNextHop(RoutingTest):
    """Routes through one next hop share it; each still routes on its own."""

    def runTest(self):
        p = self.need_ports(2)
        member = self.add_next_hop(NH2, port=p[1])
        for prefix in ("10.0.2.0/24", "10.0.4.0/24", "172.16.0.0/12"):
            self.add_route(prefix, [(NH2, p[1])])
        self.assertEqual({self.add_next_hop(NH2, port=p[1])}, {member})
        for dst in ("10.0.2.1", "10.0.4.200", "172.20.1.1"):
            pkt = self.to_router(1, dst)
            self.send(p[0], pkt)
            self.expect_on(self.routed(pkt, NH2), [p[1]])
        self.router.remove("10.0.4.0/24")
        self.send(p[0], self.to_router(1, "10.0.4.200"))
        self.expect_nothing()


@group("routing")
class RouteLongestPrefix(RoutingTest):
    """The longest matching prefix wins; /0 catches the rest."""

    def runTest(self):
        p = self.need_ports(4)
        self.add_route("0.0.0.0/0", [(NH1, p[1])])
        self.add_route("10.0.0.0/8", [(NH2, p[2])])
        self.add_route("10.0.2.0/24", [(NH3, p[3])])
        for dst, nh, out in (("10.0.2.9", NH3, p[3]), ("10.7.0.1", NH2, p[2]),
                             ("192.168.1.1", NH1, p[1])):
            pkt = self.to_router(1, dst)
            self.send(p[0], pkt)
            self.expect_on(self.routed(pkt, nh), [out])


@group("routing")
class RouteTtlExpiry(RoutingTest):
    """TTL 1 (and 0) cannot be routed: dropped and counted."""

    def runTest(self):
        p = self.need_ports(2)
        self.add_route("10.0.2.0/24", [(NH2, p[1])])
        before = self.drops(DROP_TTL, p[0])
        for ttl in (1, 0):
            self.send(p[0], self.to_router(1, "10.0.2.5", ttl=ttl))
        self.expect_nothing()
        self.assertEqual(self.drops(DROP_TTL, p[0]), before + 2)


@group("routing")
class RouteMiss(RoutingTest):
    """No route: dropped and counted; other MACs are bridged, not routed."""

    def runTest(self):
        p = self.need_ports(3)
        self.add_route("10.0.2.0/24", [(NH2, p[1])])
        before = self.drops(DROP_NO_ROUTE, p[0])
        self.send(p[0], self.to_router(1, "10.9.9.9"))
        self.expect_nothing()
        self.assertEqual(self.drops(DROP_NO_ROUTE, p[0]), before + 1)
        self.add_bridging_entry(host_mac(2), p[2])       # not the router MAC: bridged
        pkt = udp_packet(1, 2, dst_ip="10.0.2.5")
        self.send(p[0], pkt)
        self.expect_on(pkt, [p[2]])


@group("routing")
class RouteEcmp(RoutingTest):
    """An ECMP route spreads flows over its next hops, each flow to one
    of them, the same one every time."""

    FLOWS = 32

    def runTest(self):
        p = self.need_ports(3)
        hops = {p[1]: NH1, p[2]: NH2}
        self.add_route("10.0.2.0/24", [(mac, port) for port, mac in hops.items()])
        chosen = {}
        for i in range(self.FLOWS):
            pkt = self.to_router(1, "10.0.2.5", sport=20000 + i)
            exp = Mask(self.routed(pkt, NH1))
            exp.set_do_not_care_packet(Ether, "dst")    # which next hop: the hash's choice
            for _ in range(2):
                self.send(p[0], pkt)
                got = self.receive(None)
                self.assertIsNotNone(got, f"flow {i} was not routed")
                port, data = got
                self.assertTrue(exp.pkt_match(data), f"flow {i}: not the routed frame")
                self.assertIn(port, hops)
                self.assertEqual(Ether(data).dst, hops[port], "next-hop MAC of another port")
                self.assertEqual(chosen.setdefault(i, port), port, f"flow {i} changed next hop")
        self.expect_nothing()
        self.assertEqual(set(chosen.values()), set(hops), "a next hop got no flow")
