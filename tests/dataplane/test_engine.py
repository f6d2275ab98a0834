"""The engine through its Python module: loading, tables, forwarding,
parser errors, multicast, cloning, registers and counters."""

import pytest

import p4scope_dataplane as dp
from tests.dataplane.programs import (DROP, FWD, assign, eth, ethernet_program, expr, field, hexv,
                                     key, program, table)


def l2(match_type="exact", kind="exact"):
    t = table("ingress.mac", 0, [key("ethernet", "dst", kind)], [0, 1], ["fwd", "drop"],
              match_type=match_type, default=1)
    return dp.Engine(ethernet_program([FWD, DROP], [t], "ingress.mac"))


def test_load_errors_name_the_place():
    with pytest.raises(dp.LoadError, match="not valid JSON"):
        dp.Engine("{")
    bad = program(actions=[{"name": "a", "id": 0, "runtime_data": [],
                            "primitives": [{"op": "frobnicate", "parameters": []}]}])
    with pytest.raises(dp.LoadError, match=r"actions\[0\] \('a'\).*frobnicate"):
        dp.Engine(bad)
    with pytest.raises(dp.LoadError, match="version 3.0"):
        dp.Engine('{"__meta__": {"version": [3, 0]}}')


def test_exact_table_forwards_and_default_drops():
    e = l2()
    e.table_add("ingress.mac", "fwd", [0xAA], [3])
    out = e.process([(1, eth(), 1000), (1, eth(dst=0xCC), 2000)])
    assert out == [(3, eth(), 1000)]
    assert e.stats()["dropped_ingress"] == 1


def test_table_errors_are_exceptions():
    e = l2()
    e.table_add("mac", "fwd", [0xAA], [3])  # suffix names work
    with pytest.raises(dp.TableError, match="already exists"):
        e.table_add("ingress.mac", "fwd", [0xAA], [4])
    with pytest.raises(dp.TableError, match="takes 1 argument"):
        e.table_add("ingress.mac", "fwd", [0xAB], [])
    with pytest.raises(dp.EngineError, match="no table named"):
        e.table_add("nope", "fwd", [1], [1])


def test_modify_delete_and_set_default():
    e = l2()
    h = e.table_add("ingress.mac", "fwd", [0xAA], [3])
    e.table_modify("ingress.mac", h, "fwd", [5])
    assert [o[0] for o in e.process([(1, eth(), 0)])] == [5]
    e.table_delete("ingress.mac", h)
    assert e.process([(1, eth(), 0)]) == []
    e.table_set_default("ingress.mac", "fwd", [7])
    assert [o[0] for o in e.process([(1, eth(), 0)])] == [7]


def test_lpm_longest_prefix_wins():
    e = l2("lpm", "lpm")
    e.table_add("ingress.mac", "fwd", [("lpm", 0x0000000000A0, 44)], [1])
    e.table_add("ingress.mac", "fwd", [("lpm", 0x0000000000AA, 48)], [2])
    e.table_add("ingress.mac", "fwd", [("lpm", 0, 0)], [9])
    out = e.process([(0, eth(dst=0xAA), 0), (0, eth(dst=0xAB), 0), (0, eth(dst=0xF0), 0)])
    assert [o[0] for o in out] == [2, 1, 9]


def test_ternary_lower_priority_number_wins():
    e = l2("ternary", "ternary")
    e.table_add("ingress.mac", "fwd", [("ternary", 0xA0, 0xF0)], [1], priority=20)
    e.table_add("ingress.mac", "fwd", [("ternary", 0xAA, 0xFF)], [2], priority=10)
    out = e.process([(0, eth(dst=0xAA), 0), (0, eth(dst=0xA1), 0)])
    assert [o[0] for o in out] == [2, 1]


def test_short_packet_is_a_parser_error_not_a_crash():
    # ingress copies parser_error into the source MAC and forwards to port 1
    act = {"name": "a", "id": 0, "runtime_data": [], "primitives": [
        assign(field("standard_metadata", "egress_spec"), hexv(1))]}
    t = table("ingress.t", 0, [], [0], ["a"], default=0)
    e = dp.Engine(ethernet_program([act], [t], "ingress.t"))
    out = e.process([(0, b"\x01\x02\x03", 0)])
    # the header was not extracted: the packet leaves as it came
    assert out == [(1, b"\x01\x02\x03", 0)]


def test_arithmetic_wraps_as_p4c_masks_it():
    # ethernet.type = (ethernet.type - 1) & 0xffff
    act = {"name": "dec", "id": 0, "runtime_data": [], "primitives": [
        assign(field("ethernet", "type"),
               expr("&", expr("-", field("ethernet", "type"), hexv(1)), hexv(0xFFFF))),
        assign(field("standard_metadata", "egress_spec"), hexv(2))]}
    t = table("ingress.t", 0, [], [0], ["dec"], default=0)
    e = dp.Engine(ethernet_program([act], [t], "ingress.t"))
    out = e.process([(0, eth(typ=0), 0)])
    assert out[0][1][12:14] == b"\xff\xff"


def test_multicast_replicates_with_rid():
    act = {"name": "mc", "id": 0, "runtime_data": [], "primitives": [
        assign(field("standard_metadata", "mcast_grp"), hexv(5))]}
    t = table("ingress.t", 0, [], [0], ["mc"], default=0)
    e = dp.Engine(ethernet_program([act], [t], "ingress.t"))
    e.mc_group_create(5)
    n = e.mc_node_create(7, [1, 3])
    e.mc_node_associate(5, n)
    out = e.process([(0, eth(), 0)])
    assert sorted(o[0] for o in out) == [1, 3]


def test_clone_i2e_copies_to_session_port():
    act = {"name": "c", "id": 0, "runtime_data": [], "primitives": [
        {"op": "clone_ingress_pkt_to_egress", "parameters": [hexv(4), hexv(0)]},
        assign(field("standard_metadata", "egress_spec"), hexv(1))]}
    t = table("ingress.t", 0, [], [0], ["c"], default=0)
    e = dp.Engine(ethernet_program([act], [t], "ingress.t"))
    assert sorted(o[0] for o in e.process([(0, eth(), 0)])) == [1]  # no session yet
    e.mirroring_add(4, port=9)
    assert sorted(o[0] for o in e.process([(0, eth(), 0)])) == [1, 9]


def test_registers_and_counters():
    act = {"name": "r", "id": 0, "runtime_data": [], "primitives": [
        {"op": "register_write", "parameters": [{"type": "register_array", "value": "reg"}, hexv(1),
                                                field("ethernet", "type")]},
        {"op": "count", "parameters": [{"type": "counter_array", "value": "cnt"}, hexv(2)]},
        assign(field("standard_metadata", "egress_spec"), hexv(1))]}
    t = table("ingress.t", 0, [], [0], ["r"], default=0)
    e = dp.Engine(ethernet_program(
        [act], [t], "ingress.t",
        register_arrays=[{"name": "reg", "id": 0, "size": 4, "bitwidth": 16}],
        counter_arrays=[{"name": "cnt", "id": 0, "size": 4, "is_direct": False}]))
    e.process([(0, eth(typ=0x1234), 0), (0, eth(typ=0x1234), 0)])
    assert e.register_read("reg", 1) == 0x1234
    assert e.counter_read("cnt", 2) == (2 * len(eth()), 2)
    e.register_write("reg", 0, 0x1FFFF)
    assert e.register_read("reg", 0) == 0xFFFF
    with pytest.raises(dp.EngineError, match="out of range"):
        e.register_read("reg", 4)


def test_timestamps_are_microseconds_of_the_callers_clock():
    act = {"name": "ts", "id": 0, "runtime_data": [], "primitives": [
        assign(field("ethernet", "src"), field("standard_metadata", "ingress_global_timestamp")),
        assign(field("standard_metadata", "egress_spec"), hexv(1))]}
    t = table("ingress.t", 0, [], [0], ["ts"], default=0)
    e = dp.Engine(ethernet_program([act], [t], "ingress.t"))
    out = e.process([(0, eth(), 5_000_000)])
    assert int.from_bytes(out[0][1][6:12], "big") == 5000
    assert out[0][2] == 5_000_000
