"""Engine.table_add_many: one call adding many entries to a table (what the
P4Runtime server's batched INSERTs use) ends each entry as table_add would,
one call at a time: the same handles, the same refusals, in order."""

from __future__ import annotations

import json

import pytest

import p4scope_dataplane
from p4scope.compiler import compile_text

PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { ethernet_t ethernet; }
struct metadata_t { }
parser P(packet_in pkt, out headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}
control V(inout headers_t hdr, inout metadata_t m) { apply { } }
control I(inout headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) {
    action forward(bit<9> port) { sm.egress_spec = port; }
    table mac { key = { hdr.ethernet.dst: exact; } actions = { forward; NoAction; } size = 4; }
    apply { mac.apply(); }
}
control E(inout headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout metadata_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.fixture(scope="module")
def program_json() -> str:
    return json.dumps(compile_text(PROGRAM, "table_add_many.p4").bmv2_json)


def entry(dst: int, port: int) -> tuple:
    return ("I.forward", [("exact", dst.to_bytes(6, "big"))], [port], 0)


def one_at_a_time(engine, entries: list[tuple]) -> list:
    out = []
    for action, key, args, priority in entries:
        try:
            out.append(engine.table_add("I.mac", action, key, args, priority))
        except p4scope_dataplane.EngineError as e:
            out.append(str(e))
    return out


def test_each_entry_ends_as_one_table_add_would(program_json):
    # a duplicate key in the middle, then more entries than the table's 4
    entries = [entry(1, 1), entry(2, 2), entry(1, 3), entry(3, 3), entry(4, 4), entry(5, 5)]
    batched = p4scope_dataplane.Engine(program_json)
    got = batched.table_add_many("I.mac", entries)
    assert got == one_at_a_time(p4scope_dataplane.Engine(program_json), entries)
    assert [type(x) for x in got] == [int, int, str, int, int, str]
    assert "full" in got[5]
    assert batched.table_entry_count("I.mac") == 4
    frame = (3).to_bytes(6, "big") + bytes(6) + b"\x08\x00" + bytes(46)
    assert [port for port, _, _ in batched.process([(0, frame, 0)])] == [3]


def test_a_malformed_item_adds_nothing(program_json):
    engine = p4scope_dataplane.Engine(program_json)
    with pytest.raises(p4scope_dataplane.EngineError, match="unknown match kind"):
        engine.table_add_many("I.mac", [entry(1, 1), ("I.forward", [("fuzzy", b"\x01")], [1], 0)])
    assert engine.table_entry_count("I.mac") == 0
