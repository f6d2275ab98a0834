"""The reference DUT never bridges a frame back out of the port it came in
on (IEEE 802.1Q's forwarding process), as a leaf-spine L2 fabric needs: a
frame flooded to a spine that learnt its destination behind the leaf it
came from must stop there, not return to the leaf (which would then learn
the sender on a spine port). Routed frames may still leave by their
ingress port (a one-armed router)."""

from __future__ import annotations

from p4scope.control import packets
from p4scope.control.apps.flooding import Flooding
from p4scope.control.apps.learning import L2Learning
from p4scope.control.apps.routing import NextHop, Router
from p4scope.control.values import to_int

H1, H2, H3 = "02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:03"
BCAST = "ff:ff:ff:ff:ff:ff"
ROUTER_MAC = "02:00:00:ff:00:01"
DROP_SAME_PORT = 11
"""dut.p4's drop reason (drop_counter index reason << 9 | ingress port)."""


def ports_of(outs) -> list[int]:
    return sorted(port for port, _ in outs)


def learnt_bridge(switch, dut) -> L2Learning:
    """Ports 1..3 in one flood domain; H1 and H2 learnt on port 1 (both
    behind it, as hosts behind a leaf are seen from a spine), H3 on 3."""
    Flooding(dut).domain([1, 2, 3])
    learning = L2Learning(dut).start()
    for port, src in ((1, H1), (1, H2), (3, H3)):
        switch.send(port, packets.l2_frame(BCAST, src))
        assert learning.handle(timeout=2) == 1
    assert learning.macs == {to_int(H1): 1, to_int(H2): 1, to_int(H3): 3}
    return learning


def test_a_frame_to_a_mac_learnt_on_its_ingress_port_is_filtered_and_counted(switch, dut):
    learnt_bridge(switch, dut)
    unicast = packets.udp_frame(dst_mac=H2, src_mac=H1, size=60)
    assert switch.send(1, unicast) == []
    assert dut.counter("drop_counter")[(DROP_SAME_PORT << 9) | 1].packets == 1
    # the same destination from another port is forwarded to it
    assert ports_of(switch.send(3, packets.udp_frame(dst_mac=H2, src_mac=H3, size=60))) == [1]
    assert ports_of(switch.send(1, packets.udp_frame(dst_mac=H3, src_mac=H1, size=60))) == [3]


def test_a_routed_frame_may_leave_by_its_ingress_port(switch, dut):
    learnt_bridge(switch, dut)
    router = Router(dut, ROUTER_MAC)
    router.add_router_mac()
    router.route("10.0.9.0/24", [NextHop(H2, port=1)])
    out = switch.send(1, packets.udp_frame(dst_mac=ROUTER_MAC, src_mac=H1, src_ip="10.0.1.1",
                                           dst_ip="10.0.9.9", ttl=64))
    assert ports_of(out) == [1]
    routed = packets.parse_frame(out[0][1])
    assert routed.dst_mac == to_int(H2) and routed.ttl == 63
