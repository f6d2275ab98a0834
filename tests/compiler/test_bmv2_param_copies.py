"""Copies of action and function parameters as p4c lowers them: a
parameter the body never mentions gets no copy-in/copy-out where p4c's
LocalCopyPropagation removes them (real BMv2 does not bounds-check a
run-time stack index, so a needless copy of `h.s[i].f` aborts it)."""

from __future__ import annotations

import json

from tests.compiler.bmv2_support import compile_json
from p4scope.commands.stf import run_stf


STACK_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header H { bit<32> a; }
struct headers { eth_t eth; H[2] h; }
struct meta_t {}
TOP
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.h.next); pkt.extract(hdr.h.next); transition accept; }
}
control ingress(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    ACTIONS
    apply { CALLS }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout meta_t m) { apply { } }
control CC(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.h); } }
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
"""


def _stack_program(actions: str, calls: str, top: str = "") -> dict:
    return compile_json(STACK_PROGRAM.replace("ACTIONS", actions).replace("CALLS", calls)
                        .replace("TOP", top))


def _all_primitives(j: dict) -> list[dict]:
    return [p for a in j["actions"] for p in a["primitives"]]


def _derefs(j: dict) -> int:
    return json.dumps(_all_primitives(j)).count("dereference_header_stack")


def test_an_unused_inout_parameter_gets_no_copies():
    # gauntlet_index_5-bmv2: p4c drops both copies; BMv2 would abort on
    # h.h[2] (it does not bounds-check a run-time stack index)
    j = _stack_program("action noop(inout bit<32> dummy) {}",
                       "noop(hdr.h[hdr.eth.dst].a);")
    assert _all_primitives(j) == []
    # an unused in (or directionless) parameter: no copy-in either
    j = _stack_program("action noop(in bit<32> v, bit<32> w) {}",
                       "noop(hdr.h[hdr.eth.dst].a, hdr.h[hdr.eth.src].a);")
    assert _all_primitives(j) == []


def test_unused_parameters_of_functions_and_table_actions_get_no_copies():
    j = _stack_program("""
        action set_type(inout bit<32> x) { hdr.eth.type = 1; }
        table t { key = { hdr.eth.src: exact; } actions = { set_type(hdr.h[hdr.eth.dst].a); } }""",
                       "hdr.eth.type = (bit<16>)f(hdr.h[hdr.eth.dst].a); t.apply();",
                       top="bit<32> f(inout bit<32> x) { return 7; }")
    assert _derefs(j) == 0


def test_copies_stay_where_p4c_keeps_them():
    # used parameters
    j = _stack_program("action inc(inout bit<32> v) { v = v + 1; }", "inc(hdr.h[hdr.eth.dst].a);")
    assert _derefs(j) == 2
    # an unused out parameter: its copy-out stays, as in p4c
    j = _stack_program("action clear(out bit<32> v) {}", "clear(hdr.h[hdr.eth.dst].a);")
    assert _derefs(j) == 1
    # the body writes the argument's storage: the copy-out restores it
    j = _stack_program("action poke(inout H v) { hdr.h[0].a = 5; }", "poke(hdr.h[0]);")
    assert len(_all_primitives(j)) == 3
    # the argument's index is written before the copy-out
    j = _stack_program("action poke(inout bit<32> v) { hdr.eth.dst = 0; }", "poke(hdr.h[hdr.eth.dst].a);")
    assert _derefs(j) == 2
    # another argument aliases it and is copied out first
    j = _stack_program("action two(inout bit<32> w, inout bit<32> v) { w = 9; }",
                       "two(hdr.h[0].a, hdr.h[0].a);")
    assert len(_all_primitives(j)) == 5   # w in, w = 9, w out, v in, v out
    # any call in the body may write it
    j = _stack_program("action inv(inout bit<32> v) { hdr.h[1].setInvalid(); }", "inv(hdr.h[1].a);")
    assert len(_all_primitives(j)) == 3


def test_a_copy_out_that_restores_the_argument_still_runs():
    # gauntlet_indirect_hdr_assign_1-bmv2: `h.eth.type = 2` is undone by the copy-out of v
    j = _stack_program("action a(inout headers v) { hdr.eth.type = 2; }", "a(hdr);")
    r = run_stf(json.dumps(j), "packet 0 000000000001 000000000002 0000 00000001 00000002\n"
                               "expect 0 000000000001 000000000002 0000 00000001 00000002\n")
    assert r.passed, r.messages
