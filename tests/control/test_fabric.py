"""configure(topology, switches) on the in-process switch running the
reference DUT: flooding, learning by the controller, LAGs and their
failover, routes, the telemetry collector."""

from __future__ import annotations

from tests.control.ctl_helpers import BCAST, frame, ports_of

from p4scope.control import packets
from p4scope.control.fabric import FabricOptions, configure
from p4scope.control.values import to_int
from p4scope.topologies import builders

H1, H2, H3 = "02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:03"


def test_bridge_with_learning_and_short_frames(switch, dut):
    fab = configure(builders.single_switch(3), {"s1": dut}, start=False)
    learn = fab.states["s1"].learning
    # an ARP-sized frame (42 bytes, as veth carries it) is flooded, not dropped as a runt
    arp = packets.l2_frame(BCAST, H1, ether_type=0x0806, size=42)
    assert len(arp) == 42
    assert ports_of(switch.send(1, arp)) == [2, 3]
    assert learn.handle(timeout=2) == 1
    assert ports_of(switch.send(2, frame(H2, H1))) == [1]
    learn.handle(timeout=2)
    assert fab.learnt() == {"s1": {to_int(H1): 1, to_int(H2): 2}}
    assert ports_of(switch.send(1, frame(H1, H2))) == [2]
    fab.close()


def test_lag_floods_once_learns_once_and_fails_over(switch, dut):
    topo = builders.lag(members=2, clients=2)    # h1 on ports 1+2, h2 on 3, h3 on 4
    fab = configure(topo, {"s1": dut}, start=False)
    learn = fab.states["s1"].learning
    assert ports_of(switch.send(3, packets.l2_frame(BCAST, H2))) == [1, 4]   # one member of the LAG
    # never back into the LAG; short frames accepted on members too
    assert ports_of(switch.send(2, packets.l2_frame(BCAST, H1, size=42))) == [3, 4]
    while learn.handle(timeout=0.5):
        pass
    assert learn.macs == {to_int(H2): 3, to_int(H1): 2}
    switch.send(1, frame(H1, H2))
    assert learn.handle(timeout=0.5) == 0     # h1 known on the LAG already: no change
    assert learn.stats.digests == 3
    # unicast to h1 leaves by the members (spread by the 5-tuple hash where
    # the engine has action selectors; else by the group's first member)
    assert spread(switch) <= {1, 2}
    ev = fab.link_down("s1", 1)
    assert ev.applied_s < 5
    for sport in range(40):
        assert ports_of(switch.send(3, frame(H2, H1, sport=1000 + sport))) == [2]
    assert ports_of(switch.send(4, packets.l2_frame(BCAST, H3))) == [2, 3]  # port 2 designated now
    fab.link_up("s1", 1)
    assert 1 in spread(switch) <= {1, 2}
    assert [(e.port, e.up) for e in fab.events] == [(1, False), (1, True)]
    fab.close()


def spread(switch) -> set[int]:
    used: set[int] = set()
    for sport in range(40):
        out = ports_of(switch.send(3, frame(H2, H1, sport=1000 + sport)))
        assert len(out) == 1
        used |= set(out)
    return used


def test_host_port_down_forgets_its_macs(switch, dut):
    fab = configure(builders.single_switch(3), {"s1": dut}, start=False)
    learn = fab.states["s1"].learning
    switch.send(3, frame(H3, H1))
    learn.handle(timeout=2)
    assert ports_of(switch.send(1, frame(H1, H3))) == [3]
    fab.link_down("s1", 3)
    assert to_int(H3) not in learn.macs
    assert ports_of(switch.send(1, frame(H1, H3))) == [2]   # unknown again, and 3 is out of the group
    fab.close()


def test_l3_routes_between_hosts(switch, dut):
    topo = builders.single_switch(2)
    fab = configure(topo, {"s1": dut}, FabricOptions(mode="l3"), start=False)
    rmac = "02:00:00:ff:00:01"
    out = switch.send(1, packets.udp_frame(dst_mac=rmac, src_mac=H1, src_ip="10.0.0.1",
                                    dst_ip="10.0.0.2", ttl=64))
    assert ports_of(out) == [2]
    f = packets.parse_frame(out[0][1])
    assert f.dst_mac == to_int(H2) and f.src_mac == to_int(rmac) and f.ttl == 63
    fab.close()


def test_telemetry_reports_reach_the_collector(switch, dut):
    topo = builders.single_switch(2, switch={"cpu_port": 255})
    opts = FabricOptions.from_dict({"telemetry": {"burst_threshold": 2, "burst_end": 1,
                                                  "report_burst_packets": True}})
    fab = configure(topo, {"s1": dut}, opts)
    # a batch towards port 2 builds a queue: depth 0, 1, 2, ... -> a burst
    switch.send_many([(1, frame(H1, H2, sport=i)) for i in range(6)])
    import time
    deadline = time.monotonic() + 5
    while not fab.collector.samples and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fab.collector.samples, fab.collector.errors
    assert all(s.egress_port == 2 for s in fab.collector.samples)
    fab.close()
