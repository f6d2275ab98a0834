"""L3 routing (LPM, next hops, MAC rewrite, TTL), ECMP and LAG member
selection, ACL permit/deny/DSCP with hit counters, errored frames."""

from __future__ import annotations

import pytest
from tests.control.ctl_helpers import H1, ports_of

from p4scope.control import packets
from p4scope.control.apps.acl import Acl, AclRule, AclSet, feature_invariance_rules
from p4scope.control.apps.flooding import Flooding
from p4scope.control.apps.lag import Lags
from p4scope.control.apps.routing import NextHop, Router
from p4scope.control.values import to_int

RMAC = "00:aa:00:00:00:01"
NH2 = "00:00:00:00:02:01"
NH3 = "00:00:00:00:03:01"
NH4 = "00:00:00:00:04:01"


def routed(dst_ip="10.0.2.7", src_ip="10.0.1.5", sport=1234, dport=80, ttl=64, **kw):
    return packets.udp_frame(dst_mac=RMAC, src_mac=H1, src_ip=src_ip, dst_ip=dst_ip, sport=sport,
                       dport=dport, ttl=ttl, **kw)


@pytest.fixture
def router(dut):
    r = Router(dut, RMAC)
    r.add_router_mac()
    return r


def test_route_rewrites_macs_and_decrements_ttl(switch, dut, router):
    router.route("10.0.2.0/24", [NextHop(NH2, port=2)])
    out = switch.send(1, routed(ttl=64))
    assert ports_of(out) == [2]
    f = packets.parse_frame(out[0][1])
    assert f.dst_mac == to_int(NH2) and f.src_mac == to_int(RMAC)
    assert f.ttl == 63 and f.ip_checksum_ok


def test_longest_prefix_wins(switch, dut, router):
    router.route("10.0.0.0/8", [NextHop(NH3, port=3)])
    router.route("10.0.2.0/24", [NextHop(NH2, port=2)])
    assert ports_of(switch.send(1, routed("10.0.2.9"))) == [2]
    assert ports_of(switch.send(1, routed("10.7.0.1"))) == [3]
    router.remove("10.0.2.0/24")
    assert ports_of(switch.send(1, routed("10.0.2.9"))) == [3]


def test_ttl_expiry_and_no_route_are_dropped_and_counted(switch, dut, router):
    router.route("10.0.2.0/24", [NextHop(NH2, port=2)])
    assert switch.send(1, routed(ttl=1)) == []
    assert switch.send(1, routed("192.168.0.1")) == []
    drops = dut.counter("drop_counter")
    assert drops[(5 << 9) | 1].packets == 1      # DROP_TTL
    assert drops[(6 << 9) | 1].packets == 1      # DROP_NO_ROUTE


def test_ecmp_spreads_flows_over_next_hops(switch, dut, router):
    router.route("10.0.2.0/24", [NextHop(NH2, port=2), NextHop(NH3, port=3),
                                 NextHop(NH4, port=4)])
    seen = {}
    for sport in range(1000, 1064):
        out = switch.send(1, routed(sport=sport))
        assert len(out) == 1
        seen.setdefault(out[0][0], 0)
        seen[out[0][0]] += 1
        # the same flow always takes the same next hop
        assert ports_of(switch.send(1, routed(sport=sport))) == [out[0][0]]
    assert set(seen) == {2, 3, 4}


def test_ecmp_group_forwards_through_a_member(switch, dut, router):
    router.route("10.0.2.0/24", [NextHop(NH2, port=2), NextHop(NH3, port=3)])
    out = switch.send(1, routed())
    assert len(out) == 1 and out[0][0] in (2, 3)
    f = packets.parse_frame(out[0][1])
    assert f.dst_mac == to_int({2: NH2, 3: NH3}[out[0][0]])


def test_lag_member_removal_moves_traffic(switch, dut):
    lags = Lags(dut)
    lags.create(1, [3, 4])
    dut.table("dmac").insert({"dst_addr": "00:00:00:00:00:09"}, "forward_lag", lag_id=1)
    fr = packets.udp_frame(dst_mac="00:00:00:00:00:09", src_mac=H1)
    out = switch.send(1, fr)
    assert len(out) == 1 and out[0][0] in (3, 4)
    lags.set_ports(1, [4])
    assert ports_of(switch.send(1, fr)) == [4]
    lags.set_ports(1, [3])
    assert ports_of(switch.send(1, fr)) == [3]


def test_next_hop_on_a_lag(switch, dut, router):
    Lags(dut).create(2, [5, 6])
    router.route("10.0.2.0/24", [NextHop(NH2, lag=2)])
    out = switch.send(1, routed())
    assert len(out) == 1 and out[0][0] in (5, 6)


# ----- ACL ---------------------------------------------------------------------

def test_acl_deny_permit_and_dscp_rewrite(switch, dut, router):
    router.route("10.0.0.0/8", [NextHop(NH2, port=2)])
    acl = Acl(dut)
    deny = AclRule(priority=100, action="deny", dst="10.0.9.0/24", proto=17, dport=(22, 22))
    mark = AclRule(priority=50, action="set_dscp", dscp=46, src="10.0.1.0/24")
    acl.apply(AclSet("edge", [deny, mark]))

    assert switch.send(1, routed("10.0.9.1", dport=22)) == []
    out = switch.send(1, routed("10.0.9.1", dport=23))     # not denied: marked
    assert packets.parse_frame(out[0][1]).dscp == 46
    assert packets.parse_frame(out[0][1]).ip_checksum_ok
    out = switch.send(1, routed("10.0.5.1", src_ip="10.0.3.3"))   # neither
    assert packets.parse_frame(out[0][1]).dscp == 0

    hits = acl.hits()
    assert hits[deny][1] == 1 and hits[mark][1] == 1
    assert dut.counter("drop_counter")[(7 << 9) | 1].packets == 1   # DROP_ACL

    acl.clear()
    assert ports_of(switch.send(1, routed("10.0.9.1", dport=22))) == [2]


def test_feature_invariance_rule_set_marks_test_traffic(switch, dut, router):
    router.route("10.0.0.0/8", [NextHop(NH2, port=2)])
    acl = Acl(dut)
    rules = feature_invariance_rules(24, dscp=10)
    acl.apply(rules)
    assert len(dut.table("acl")) == 24
    out = switch.send(1, routed())
    assert packets.parse_frame(out[0][1]).dscp == 10


# ----- errored frames ----------------------------------------------------------------

def drops(dut, reason, port=1):
    return dut.counter("drop_counter")[(reason << 9) | port].packets


def test_errored_frames_are_filtered(switch, dut):
    Flooding(dut).domain([1, 2])
    good = packets.udp_frame(src_mac=H1)
    assert ports_of(switch.send(1, good)) == [2]
    # undersized: 59 bytes (63 with FCS)
    assert switch.send(1, good[:59]) == []
    assert drops(dut, 1) == 1
    # oversized for a port limited to 1514 (1518 with the FCS)
    Flooding(dut).port(1, max_frame=1514)
    assert switch.send(1, packets.udp_frame(src_mac=H1, size=1515)) == []
    assert drops(dut, 2) == 1
    assert ports_of(switch.send(1, packets.udp_frame(src_mac=H1, size=1514))) == [2]
    # truncated IPv4 header: parser error
    trunc = good[:14 + 12]
    assert switch.send(1, trunc + b"\0" * 0) == []
    assert drops(dut, 3) == 1
    # bad IPv4 header checksum
    assert switch.send(1, packets.udp_frame(src_mac=H1, bad_checksum=True)) == []
    assert drops(dut, 4) == 1
    # not version 4
    bad = bytearray(good)
    bad[14] = 0x65
    assert switch.send(1, bytes(bad)) == []
    assert drops(dut, 3) == 2


def test_per_port_counters(switch, dut):
    Flooding(dut).domain([1, 2, 3])
    for _ in range(3):
        switch.send(1, packets.udp_frame(src_mac=H1, size=100))
    assert dut.counter("ingress_port_counter")[1].packets == 3
    assert dut.counter("ingress_port_counter")[1].bytes == 300
    assert dut.counter("egress_port_counter")[2].packets == 3
    assert dut.counter("egress_port_counter")[3].packets == 3
