"""The fabric plan: flood groups over a spanning tree, LAGs, routes and
options, from topologies alone (no switch)."""

from __future__ import annotations

import pytest

from p4scope.control.fabric import FabricError, FabricOptions, plan, router_arp
from p4scope.topologies import builders
from p4scope.topologies.spec import from_dict


def test_single_switch_floods_to_every_host_port():
    fp = plan(builders.single_switch(3))
    sp = fp.switches["s1"]
    assert sp.host_ports == {1: "h1", 2: "h2", 3: "h3"}
    assert sp.groups == {1: [1, 2, 3]}
    assert set(sp.port_group.values()) == {1}
    assert fp.tree == [] and not sp.lags


def test_lag_members_share_a_group_without_their_designated_member():
    fp = plan(builders.lag(members=3, clients=2))
    sp = fp.switches["s1"]
    assert sp.lags == {1: [1, 2, 3]} and sp.lag_host == {1: "h1"}
    assert sp.host_ports == {4: "h2", 5: "h3"}
    # group 1: the clients and one member of the LAG; group 2: what the LAG floods to
    assert sp.groups == {1: [1, 4, 5], 2: [4, 5]}
    assert sp.port_group == {1: 2, 2: 2, 3: 2, 4: 1, 5: 1}
    assert sp.lag_of_port() == {1: 1, 2: 1, 3: 1}


def test_a_failed_designated_member_hands_over_to_the_next():
    fp = plan(builders.lag(members=3, clients=1), down=[("s1", 1)])
    sp = fp.switches["s1"]
    assert sp.lag_active == {1: [2, 3]}
    assert sp.groups == {1: [2, 4], 2: [4]}
    fp = plan(builders.lag(members=2, clients=1), down=[("s1", 1), ("s1", 2)])
    assert fp.switches["s1"].groups == {1: [3], 2: [3]}


def test_leaf_spine_blocks_the_links_off_the_tree():
    fp = plan(builders.leaf_spine(2, 2, 1))
    assert len(fp.tree) == 3  # 4 switches
    l2, p2 = fp.switches["l2"], fp.switches["p2"]
    assert l2.blocked_ports == {3} or l2.blocked_ports == {2}
    blocked = {(n, p) for n, sp in fp.switches.items() for p in sp.blocked_ports}
    assert len(blocked) == 2  # one link: both its ends
    for n, p in blocked:
        sp = fp.switches[n]
        assert sp.port_group[p] == 0 and all(p not in g for g in sp.groups.values())
    assert p2.tree_ports or p2.blocked_ports


def test_chain_floods_along_the_path():
    fp = plan(builders.chain(4))
    assert fp.switches["s2"].groups == {1: [1, 2]}
    assert fp.switches["s1"].groups == {1: [1, 2]}
    assert [t[:3] for t in fp.tree] == [("s1", 2, "s2"), ("s2", 2, "s3"), ("s3", 2, "s4")]


def test_a_failed_tree_link_is_replaced_by_a_blocked_one():
    topo = builders.leaf_spine(2, 2, 1)
    fp = plan(topo)
    a, pa, b, pb = next(t for t in fp.tree if {t[0], t[2]} == {"l2", "p1"} or
                        {t[0], t[2]} == {"l2", "p2"})
    fp2 = plan(topo, down=[(a, pa), (b, pb)])
    assert len(fp2.tree) == 3
    assert all((t[0], t[1]) != (a, pa) for t in fp2.tree)
    assert pa in fp2.switches[a].down_ports


def test_l3_routes_host_prefixes_with_ecmp_and_lags():
    fp = plan(builders.leaf_spine(2, 2, 1), FabricOptions(mode="l3"))
    l1 = fp.switches["l1"]
    assert [h.port for h in l1.routes["10.0.1.1/32"]] == [1]
    assert sorted(h.port for h in l1.routes["10.0.2.1/32"]) == [2, 3]  # both spines
    assert l1.router_mac is not None
    lag = plan(builders.lag(2, 1), FabricOptions(mode="l3")).switches["s1"]
    assert [(h.lag, h.port) for h in lag.routes["10.0.0.1/32"]] == [(1, None)]


def test_router_arp_points_hosts_at_their_switch():
    topo = builders.leaf_spine(2, 1, 1)
    arp = router_arp(topo)
    assert arp["h1x1"] == {"10.0.2.1": "02:00:00:ff:00:01"}
    assert arp["h2x1"] == {"10.0.1.1": "02:00:00:ff:00:02"}


def test_options_from_the_topology_are_checked():
    o = FabricOptions.from_dict({"mode": "l3", "telemetry": {"burst_threshold": 8, "ports": [1]}})
    assert o.mode == "l3" and o.telemetry.burst_threshold == 8 and o.telemetry.ports == (1,)
    assert FabricOptions.from_dict({"telemetry": True}).telemetry.collector == "cpu"
    with pytest.raises(FabricError, match="unknown key"):
        FabricOptions.from_dict({"moed": "l2"})
    with pytest.raises(FabricError, match="mode"):
        FabricOptions.from_dict({"mode": "l4"})
    with pytest.raises(FabricError, match="unknown key"):
        FabricOptions.from_dict({"telemetry": {"threshold": 3}})


def test_telemetry_to_the_controller_needs_a_cpu_port():
    with pytest.raises(FabricError, match="CPU port"):
        plan(builders.single_switch(2), FabricOptions.from_dict({"telemetry": True}))
    topo = builders.single_switch(2, switch={"cpu_port": 255})
    assert plan(topo, FabricOptions.from_dict({"telemetry": True})).switches["s1"].cpu_port == 255


def test_mlag_and_bridges_only_are_refused():
    doc = {"hosts": [{"name": "h1", "bond": "l34"}, {"name": "h2"}],
           "switches": [{"name": "s1"}, {"name": "s2"}],
           "links": [{"a": "h1", "b": "s1"}, {"a": "h1", "b": "s2"}, {"a": "h2", "b": "s1"},
                     {"a": "s1", "b": "s2"}]}
    with pytest.raises(FabricError, match="MLAG"):
        plan(from_dict(doc))
    with pytest.raises(FabricError, match="no P4 switch"):
        plan(builders.single_switch(2, switch={"kind": "bridge"}))
