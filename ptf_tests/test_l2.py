"""L2: unicast forwarding, flooding, learning and ageing."""

import time

from ptf.testutils import group

from dut_base import DROP_L2, DROP_NO_FLOOD, host_mac, l2_packet, udp_packet
from dut_features import BridgingTest, FloodingTest, LearningTest, mac_int

BROADCAST = "ff:ff:ff:ff:ff:ff"


@group("bridging")
class UnicastUdp(BridgingTest):
    """A frame to a known MAC leaves by its port only, unchanged."""

    def runTest(self):
        p = self.need_ports(3)
        for i, (a, b) in enumerate([(p[0], p[1]), (p[1], p[2]), (p[2], p[0])]):
            self.run_unicast(a, b, udp_packet(10 + i, 20 + i))


@group("bridging")
class UnicastNonIp(BridgingTest):
    """Non-IP frames are bridged on the destination MAC alone."""

    def runTest(self):
        p = self.need_ports(2)
        self.run_unicast(p[0], p[1], l2_packet(1, 2, ether_type=0x88B5))


@group("bridging")
class UnicastFrameSizes(BridgingTest):
    """60 (64 with FCS) to 1514 (1518) byte frames all pass unchanged."""

    def runTest(self):
        p = self.need_ports(2)
        self.add_bridging_entry(host_mac(2), p[1])
        for size in (60, 64, 128, 512, 1024, 1514):
            pkt = udp_packet(1, 2, size=size)
            self.send(p[0], pkt)
            self.expect_on(pkt, [p[1]])


@group("bridging")
class UnicastDropEntry(BridgingTest):
    """A dmac entry with the drop action discards the frame and counts it."""

    def runTest(self):
        p = self.need_ports(2)
        self.setup_flood_domain()
        self.add_bridging_drop(host_mac(9))
        before = self.drops(DROP_L2, p[0])
        self.send(p[0], udp_packet(1, 9))
        self.expect_nothing()
        self.assertEqual(self.drops(DROP_L2, p[0]), before + 1)


@group("flooding")
class FloodUnknownUnicast(FloodingTest):
    """A frame to an unknown MAC goes to every port of the flood domain but
    the one it came in on."""

    def runTest(self):
        self.need_ports(3)
        self.setup_flood_domain()
        for in_port in self.ports:
            pkt = udp_packet(1, 0x42)
            self.run_flood(in_port, pkt, [q for q in self.ports if q != in_port])


@group("flooding")
class FloodBroadcast(FloodingTest):
    """Broadcast is flooded like an unknown destination, IP or not."""

    def runTest(self):
        p = self.need_ports(3)
        self.setup_flood_domain()
        others = [q for q in self.ports if q != p[0]]
        self.run_flood(p[0], udp_packet(1, dst_mac=BROADCAST, dst_ip="10.0.0.255"), others)
        self.run_flood(p[0], l2_packet(1, dst_mac=BROADCAST), others)


@group("flooding")
class FloodDomains(FloodingTest):
    """Ports flood only within their own multicast group (flood domain)."""

    def runTest(self):
        p = self.need_ports(4)
        self.setup_flood_domain()                      # group 1: every port
        self.setup_flood_domain(p[:3], group=2)        # group 2: the first three
        self.set_port_limits(p[0], flood_group=2)
        self.run_flood(p[0], udp_packet(1, 0x42), p[1:3])
        self.run_flood(p[3], udp_packet(4, 0x42), [q for q in self.ports if q != p[3]])


@group("flooding")
class FloodWithoutGroup(FloodingTest):
    """A port whose flood group is 0 drops what it cannot deliver."""

    def runTest(self):
        p = self.need_ports(2)
        self.setup_flood_domain()
        self.set_port_limits(p[0], flood_group=0)
        before = self.drops(DROP_NO_FLOOD, p[0])
        self.send(p[0], udp_packet(1, 0x42))
        self.expect_nothing()
        self.assertEqual(self.drops(DROP_NO_FLOOD, p[0]), before + 1)


@group("learning")
class LearnThenForward(LearningTest):
    """Unknown source -> digest -> controller installs smac/dmac -> the
    replies and the next frames are unicast instead of flooded."""

    def runTest(self):
        p = self.need_ports(3)
        self.setup_flood_domain()
        self.learning()                                         # digests on before traffic
        a, b = host_mac(1), host_mac(2)
        to_b, to_a = udp_packet(1, 2), udp_packet(2, 1)
        self.send(p[0], to_b)                                   # b unknown: flooded
        self.expect_on(to_b, [q for q in self.ports if q != p[0]])
        self.wait_learnt(a, p[0])
        self.send(p[1], to_a)                                   # a learnt: unicast
        self.expect_on(to_a, [p[0]])
        self.wait_learnt(b, p[1])
        self.send(p[0], to_b)                                   # b learnt: unicast
        self.expect_on(to_b, [p[1]])
        self.assertEqual(self.dmac_macs(), {mac_int(a), mac_int(b)})
        self.assertEqual(self.learning().stats.learnt, 2)


@group("learning")
class StationMove(LearningTest):
    """A learnt MAC seen on another port is moved there."""

    def runTest(self):
        p = self.need_ports(3)
        self.setup_flood_domain()
        self.learning()
        a, b = host_mac(1), host_mac(2)
        self.add_station(b, p[1])
        self.send(p[0], udp_packet(1, 2))
        self.expect_on(udp_packet(1, 2), [p[1]])
        self.wait_learnt(a, p[0])
        self.send(p[2], udp_packet(1, 2))                       # a moves to the third port
        self.expect_on(udp_packet(1, 2), [p[1]])
        self.wait_learnt(a, p[2])
        self.send(p[1], udp_packet(2, 1))
        self.expect_on(udp_packet(2, 1), [p[2]])
        self.assertEqual(self.learning().stats.moved, 1)


@group("learning")
class Ageing(LearningTest):
    """An entry not hit for its idle timeout is reported idle; the
    controller removes it and the MAC is flooded again."""

    AGEING_S = 0.5

    def runTest(self):
        p = self.need_ports(3)
        self.setup_flood_domain()
        a = host_mac(1)
        app = self.learning(ageing_s=self.AGEING_S)
        self.add_station(host_mac(2), p[1])
        self.send(p[0], udp_packet(1, 2))
        self.expect_on(udp_packet(1, 2), [p[1]])
        self.wait_learnt(a, p[0])
        learnt = time.monotonic()
        self.send(p[1], udp_packet(2, 1))                       # a known: unicast
        self.expect_on(udp_packet(2, 1), [p[0]])
        self.wait_aged(a, timeout=self.AGEING_S + 5.0)           # BMv2 sweeps once a second
        self.assertGreaterEqual(time.monotonic() - learnt, self.AGEING_S * 0.9,
                                "aged out before its idle timeout")
        self.assertEqual(app.stats.aged, 1)
        self.assertNotIn(mac_int(a), self.dmac_macs())
        self.send(p[1], udp_packet(2, 1))                       # a unknown again: flooded
        self.expect_on(udp_packet(2, 1), [q for q in self.ports if q != p[1]])


@group("learning")
class AgeingRefreshedByTraffic(LearningTest):
    """A MAC that keeps sending is not aged out, however long it stays;
    once it falls silent it is."""

    AGEING_S = 0.5

    def runTest(self):
        p = self.need_ports(2)
        self.setup_flood_domain()
        a = host_mac(1)
        app = self.learning(ageing_s=self.AGEING_S)
        self.add_station(host_mac(2), p[1])
        self.send(p[0], udp_packet(1, 2))
        self.expect_on(udp_packet(1, 2), [p[1]])
        self.wait_learnt(a, p[0])
        self.keep_sending(udp_packet(1, 2), p[0], p[1], seconds=4 * self.AGEING_S,
                          period=self.AGEING_S / 4)
        self.assertEqual(app.stats.aged, 0, "aged out while it kept sending")
        self.assertIn(mac_int(a), app.macs)
        self.wait_aged(a, timeout=self.AGEING_S + 5.0)
        self.expect_nothing()
