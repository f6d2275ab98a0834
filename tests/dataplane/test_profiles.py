"""Action profiles and selectors in the engine (BMv2's act_prof_* and
table_indirect_* calls), watch ports, weights, and idle timeouts."""

import pytest

import p4scope_dataplane as dp
from tests.dataplane.programs import FWD, eth, ethernet_program, key


def selector_program():
    t = {"name": "ingress.lb", "id": 0, "key": [key("ethernet", "type")], "match_type": "exact",
         "type": "indirect_ws", "action_profile": "ingress.sel", "max_size": 64,
         "with_counters": False, "support_timeout": True, "direct_meters": None,
         "action_ids": [0], "actions": ["fwd"], "base_default_next": None,
         "next_tables": {"fwd": None}}
    prog = ethernet_program([FWD], [t], "ingress.lb")
    import json
    doc = json.loads(prog)
    doc["pipelines"][0]["action_profiles"] = [
        {"name": "ingress.sel", "id": 0, "max_size": 64,
         "selector": {"algo": "crc16", "input": [{"type": "field", "value": ["ethernet", "src"]}]}}]
    return json.dumps(doc)


def outputs(e, srcs):
    t0 = e.now_ns + 1  # one packet per ns: outputs in input order, no queueing
    return [p for p, _, _ in e.process([(1, eth(src=s), t0 + i) for i, s in enumerate(srcs)])]


def test_group_spreads_flows_and_follows_weights_and_watch_ports():
    e = dp.Engine(selector_program())
    m = [e.act_prof_create_member("ingress.sel", "fwd", [p]) for p in (2, 3)]
    g = e.act_prof_create_group("sel")
    for h in m:
        e.act_prof_add_member_to_group("sel", h, g)
    e.table_indirect_add_with_group("ingress.lb", [0x0800], g)
    srcs = [(i * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFF for i in range(1, 201)]  # varied MACs
    got = outputs(e, srcs)
    assert set(got) == {2, 3} and 60 < got.count(2) < 140
    assert outputs(e, srcs) == got, "a flow always takes the same member"
    e.set_port_status(3, False)
    e.act_prof_remove_member_from_group("sel", m[1], g)
    e.act_prof_add_member_to_group("sel", m[1], g, watch_port=3)
    assert set(outputs(e, srcs)) == {2}
    e.set_port_status(3, True)
    e.act_prof_remove_member_from_group("sel", m[1], g)
    e.act_prof_add_member_to_group("sel", m[1], g, weight=3)
    got = outputs(e, srcs)
    assert got.count(3) > 2 * got.count(2)
    with pytest.raises(dp.EngineError, match="still in a group"):
        e.act_prof_delete_member("sel", m[0])


def test_member_entries_modify_and_idle_timeout():
    e = dp.Engine(selector_program())
    a = e.act_prof_create_member("sel", "fwd", [5])
    h = e.table_indirect_add("lb", [0x0800], a)
    assert outputs(e, [1]) == [5]
    e.act_prof_modify_member("sel", a, "fwd", [6])
    assert outputs(e, [1]) == [6]
    e.table_set_entry_ttl("lb", h, 1_000_000)
    e.advance(e.now_ns + 2_000_000)
    assert e.idle_sweep() == [("ingress.lb", h, e.table_entry_idle_ns("lb", h))]
    assert e.idle_sweep() == []
    outputs(e, [1])
    assert e.table_entry_idle_ns("lb", h) == 0
    with pytest.raises(dp.EngineError, match="no member"):
        e.table_indirect_modify("lb", h, 99)
