"""The reference DUT in Mininet, configured by the controller from the
topology (root): pingall with learning by the controller, iperf3 through
the DUT, a LAG member going down and coming back with the outage measured.
Each test checks that its run left no namespace, interface or process."""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

from p4scope.experiments.mininet.testbed import Testbed, build_dut
from p4scope.topologies import builders, procs, tcp
from p4scope.topologies import traffic

from tests.topologies.mn_namespaces import netns as _netns
from tests.fixtures.processes import live_children

pytestmark = pytest.mark.usefixtures("mininet_ok")


@pytest.fixture(scope="module")
def dut_build(tmp_path_factory):
    return build_dut(tmp_path_factory.mktemp("dut"))


def leftovers(tb: Testbed, children_before: set[int]) -> list[str]:
    """What of the testbed's run still exists."""
    m = tb_manifest[tb]
    out = [n for n in _netns() if n in m.namespaces]
    names = tuple(f"{n}-" for n in tb.names.values())
    out += [i for i in os.listdir("/sys/class/net") if i.startswith(names)]
    out += [p["what"] for p in m.processes
            if procs.is_same(p["pid"], p["start"]) and not procs.is_zombie_or_gone(p["pid"])]
    out += [f"child pid {p}" for p in live_children() - children_before]
    return out


tb_manifest: dict = {}


class Run:
    """A testbed whose leftovers are checked after it stops."""

    def __init__(self, topo, tmp_path, dut, **kw):
        self.children = live_children()
        self.tb = Testbed(topo, tmp_path / "run", dut, **kw)

    def __enter__(self) -> Testbed:
        self.tb.start()
        tb_manifest[self.tb] = self.tb.net.manifest
        return self.tb

    def __exit__(self, *exc):
        self.tb.stop()
        left = leftovers(self.tb, self.children)
        assert left == [], f"left behind: {left}"


def test_pingall_through_the_dut_with_learning_by_the_controller(tmp_path, dut_build):
    with Run(builders.single_switch(4), tmp_path, dut_build) as tb:
        loss = tb.net.net.pingAll(timeout=1)
        # the controller learns on its own thread from the digests the pings
        # made: on a busy machine it may not have taken them all yet (seen:
        # none learnt at the end of a pingAll with nothing lost)
        deadline = time.monotonic() + 20
        while len(learnt := tb.fabric.learnt()[tb.name("s1")]) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        stats = tb.fabric.states[tb.name("s1")].learning.stats
    assert loss == 0.0
    assert sorted(learnt.values()) == [1, 2, 3, 4], learnt
    assert stats.learnt == 4 and stats.moved == 0


def test_iperf3_through_the_dut(tmp_path, dut_build):
    with Run(builders.single_switch(2), tmp_path, dut_build) as tb:
        h1, h2 = tb.host("h1"), tb.host("h2")
        server = tcp.Iperf3Server(h2, 5201)
        rep = tcp.Iperf3Client(h1, h2.IP(), 5201, seconds=2).result(timeout=60)
        server.result(timeout=10)
    s = tcp.summary(rep)
    print(f"iperf3 through the DUT (p4scope switch): {s['receiver_bps'] / 1e6:.1f} Mbit/s, "
          f"{s['retransmits']} retransmits")
    assert s["received_bytes"] > 1_000_000 and s["receiver_bps"] > 5e6, s


def _blast(host, iface, dst_mac, dst_ip, first_id, n, pps, seconds, out, key):
    streams = [traffic.Stream(first_id + i, dst=dst_mac, ip_dst=dst_ip, rate=pps, size=128,
                        sport=40000 + 97 * i) for i in range(n)]
    out[key] = traffic.send(host, iface, streams, duration=seconds, batch=8)


def test_lag_member_down_traffic_moves_to_the_other_member(tmp_path, dut_build):
    """seed 004's failover: h1 bonded over switch ports 1 and 2; port 1's
    link goes down 1 s into 8 flows each way, comes back 1 s later. The
    switch's LAG (controller, on the link watcher's event) and the host's
    bond move the flows; the outage of a flow is its lost frames over its
    rate."""
    pps, n, seconds = 400, 8, 3.0
    with Run(builders.lag(members=2, clients=1), tmp_path, dut_build) as tb:
        sw = tb.name("s1")
        h1, h2 = tb.host("h1"), tb.host("h2")
        assert " 0% packet loss" in h2.cmd(f"ping -c 2 -i 0.2 -W 1 {h1.IP()}")
        rx1 = traffic.start_receiver(h1, "bond0", idle=1.5, interval_ms=10)
        rx2 = traffic.start_receiver(h2, "h2-eth0", idle=1.5, interval_ms=10)
        sent: dict = {}
        threads = [threading.Thread(target=_blast, args=a) for a in (
            (h2, "h2-eth0", h1.MAC(), h1.IP(), 1, n, pps, seconds, sent, "to_lag"),
            (h1, "bond0", h2.MAC(), h2.IP(), 101, n, pps, seconds, sent, "from_lag"))]
        for t in threads:
            t.start()
        time.sleep(1.0)
        subprocess.run(["ip", "link", "set", "dev", f"{sw}-eth1", "down"], check=True)
        time.sleep(1.0)
        subprocess.run(["ip", "link", "set", "dev", f"{sw}-eth1", "up"], check=True)
        for t in threads:
            t.join(timeout=30)
        to_lag = traffic.combine(sent["to_lag"], rx1.result())
        from_lag = traffic.combine(sent["from_lag"], rx2.result())
        events = [(e.port, e.up, e.applied_s) for e in tb.fabric.events]
        bond_moves = list(h1.bond.failovers)
    outage = {name: max(r.lost / pps for r in res) for name, res in
              (("switch->bond", to_lag), ("bond->switch", from_lag))}
    print(f"LAG failover: worst flow outage {outage['switch->bond'] * 1e3:.0f} ms towards the "
          f"bond, {outage['bond->switch'] * 1e3:.0f} ms from it; controller {events}")
    assert [(p, up) for p, up, _ in events] == [(1, False), (1, True)], events
    assert [a for _, a in bond_moves] == [["h1-eth1"], ["h1-eth0", "h1-eth1"]], bond_moves
    for r in to_lag + from_lag:
        assert r.tx_packets > 0.8 * pps * seconds, r
        # every flow kept going: whatever was lost is a short outage, not the rest of the run
        assert r.lost < 0.25 * r.tx_packets, r
    assert max(outage.values()) < 0.75, outage


@pytest.mark.parametrize("mode", ["l2", "l3"])
def test_leaf_spine_with_a_loop_pings_in_both_modes(tmp_path, dut_build, mode):
    """Four switches with a loop (2 leaves x 2 spines): L2 floods over the
    spanning tree only (a broadcast storm would lose pings), L3 routes /32s
    over both spines (ECMP) with the hosts' static ARP to their leaf.
    L2: a flood reaching a spine that learnt the destination behind the
    leaf it came from stops there (the DUT filters a frame bridged back
    to its ingress port); before, it came back and the leaf learnt its
    own host on a spine port, about one run in four."""
    from p4scope.control.fabric import FabricOptions

    topo = builders.leaf_spine(2, 2, 1)
    with Run(topo, tmp_path, dut_build, options=FabricOptions(mode=mode)) as tb:
        loss = tb.net.net.pingAll(timeout=1)
        out = tb.host("h1x1").cmd(f"ping -c 1 -W 2 {tb.host('h2x1').IP()}")
        plan = tb.fabric.plan
        blocked = sum(len(sp.blocked_ports) for sp in plan.switches.values())
        routes = {n: len(sp.routes) for n, sp in plan.switches.items()}
        h1x1_mac = int(tb.host("h1x1").MAC().replace(":", ""), 16)
        deadline = time.monotonic() + 10  # learning is the controller's, from digests, in its own time
        while True:
            learnt = tb.fabric.learnt().get(tb.name("l1"), {})
            if mode != "l2" or h1x1_mac in learnt or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    assert loss == 0.0
    assert blocked == 2
    # bridged: the TTL arrives untouched; routed: leaf, spine and leaf took one each
    assert f"ttl={64 if mode == 'l2' else 61}" in out, out
    if mode == "l2":
        assert learnt.get(h1x1_mac) == 1, learnt    # its host port, never a spine's
    if mode == "l3":
        assert all(v == 2 for v in routes.values()), routes
