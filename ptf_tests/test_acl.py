"""ACL: permit, deny and DSCP rewrite by priority, with hit counters."""

from ptf.testutils import group

from dut_base import DROP_ACL, host_mac, udp_packet
from dut_features import AclTest, RoutingTest

NH2 = "00:00:00:aa:00:02"


@group("acl")
class AclDeny(AclTest):
    """A deny rule drops exactly what it matches (prefix, protocol, port
    range) and counts it; everything else passes."""

    def runTest(self):
        p = self.need_ports(2)
        self.add_bridging_entry(host_mac(2), p[1])
        rule = self.add_acl_rule(100, "deny", dst="10.0.0.0/24", proto=17, dport=(5000, 5999))
        before = self.drops(DROP_ACL, p[0])
        for dport in (5000, 5500, 5999):
            self.send(p[0], udp_packet(1, 2, dport=dport))
        self.expect_nothing()
        self.assertEqual(self.drops(DROP_ACL, p[0]), before + 3)
        for pkt in (udp_packet(1, 2, dport=4999), udp_packet(1, 2, dport=6000),
                    udp_packet(1, 2, dst_ip="10.0.1.2", dport=5000)):
            self.send(p[0], pkt)
            self.expect_on(pkt, [p[1]])
        hits = self.acl.hits()[rule]
        self.assertEqual(hits[1], 3, f"deny rule hit counter: {hits}")


@group("acl")
class AclDscpRewrite(AclTest):
    """set_dscp rewrites DSCP (ECN kept, checksum updated) of what matches."""

    def runTest(self):
        p = self.need_ports(2)
        self.add_bridging_entry(host_mac(2), p[1])
        self.add_acl_rule(50, "set_dscp", dscp=46, src="10.0.0.0/24")
        pkt = udp_packet(1, 2, dscp=10)
        self.send(p[0], pkt)
        self.expect_on(self.with_dscp(pkt, 46), [p[1]])
        other = udp_packet(1, 2, src_ip="10.0.7.1", dscp=10)
        self.send(p[0], other)
        self.expect_on(other, [p[1]])


@group("acl")
class AclPriority(AclTest):
    """Of two matching rules the higher priority wins."""

    def runTest(self):
        p = self.need_ports(2)
        self.add_bridging_entry(host_mac(2), p[1])
        self.add_acl_rule(10, "deny", dst="10.0.0.0/8")
        self.add_acl_rule(20, "set_dscp", dscp=8, dst="10.0.0.2/32")
        pkt = udp_packet(1, 2)                              # both match: set_dscp wins
        self.send(p[0], pkt)
        self.expect_on(self.with_dscp(pkt, 8), [p[1]])
        self.send(p[0], udp_packet(1, 2, dst_ip="10.0.0.3"))   # only the deny
        self.expect_nothing()


@group("acl")
class AclOnRoutedTraffic(RoutingTest, AclTest):
    """The ACL also applies to routed frames: routed and DSCP rewritten."""

    def runTest(self):
        p = self.need_ports(2)
        self.add_route("10.0.2.0/24", [(NH2, p[1])])
        self.add_acl_rule(30, "set_dscp", dscp=34, proto=17, dport=(80, 80))
        pkt = self.to_router(1, "10.0.2.5", dport=80)
        self.send(p[0], pkt)
        self.expect_on(self.routed(pkt, NH2, dscp=34), [p[1]])
