"""Action data as p4c lowers it, so that real BMv2 loads the JSON: a
primitive's own parameter is `runtime_data`, an operand inside an
expression is `local` (BMv2 refuses `runtime_data` there)."""

from __future__ import annotations

import json

from tests.compiler.bmv2_support import action, compile_ingress
from p4scope.commands.stf import run_stf
from p4scope.compiler.bmv2.validate import bmv2_json_problems


def _operands(node, out=None):
    """Every {type, value} operand inside `node`, nested ones included."""
    out = [] if out is None else out
    if isinstance(node, dict):
        if "type" in node and "value" in node:
            out.append(node)
        for v in node.values():
            _operands(v, out)
    elif isinstance(node, list):
        for v in node:
            _operands(v, out)
    return out


ADD = """
    action add(bit<16> data, int<8> s) { hdr.h.w = hdr.h.w + data; hdr.h.s = s; hdr.h.a = (bit<8>)(s + 1); }
    action put(bit<16> data) { hdr.h.w = data; }
    table t { key = { hdr.h.b: exact; } actions = { add; put; } default_action = add(10, -1); }
"""


def test_action_data_inside_an_expression_is_local_and_a_parameter_stays_runtime_data():
    j = compile_ingress("t.apply();", ADD)
    w = action(j, "ingress.add")["primitives"][0]["parameters"][1]
    plus = w["value"]["value"]["left"]["value"]
    assert plus["op"] == "+"
    assert plus["right"] == {"type": "local", "value": 0}     # as p4c: {"type": "local"}
    assert action(j, "ingress.put")["primitives"][0]["parameters"][1] == \
        {"type": "runtime_data", "value": 0}
    # a signed parameter is read through two_comp_mod: inside an expression too
    s = action(j, "ingress.add")["primitives"][1]["parameters"][1]
    assert {"type": "local", "value": 1} in _operands(s)
    assert not [o for p in action(j, "ingress.add")["primitives"] for o in _operands(p["parameters"])
                if o["type"] == "expression" and {"type": "runtime_data", "value": 1} in _operands(o)]
    assert bmv2_json_problems(j) == []


def test_action_data_in_expressions_computes_on_the_engine():
    j = compile_ingress("t.apply();", ADD)
    stf = ("add ingress.t hdr.h.b:0x02 ingress.add(data:0x0100, s:0x7f)\n"
           "packet 0 000000000001 000000000002 88b5 00 02 00 0005\n"
           # w = 5 + 0x100; s = 127; a = (bit<8>)(127 + 1) = 0x80
           "expect 0 000000000001 000000000002 88b5 80 02 7f 0105\n"
           "packet 0 000000000001 000000000002 88b5 00 03 00 0005\n"
           # default add(10, -1): w = 15, s = -1, a = 0
           "expect 0 000000000001 000000000002 88b5 00 03 ff 000f\n")
    r = run_stf(json.dumps(j), stf)
    assert r.passed, r.messages
