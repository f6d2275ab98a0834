"""The BMv2 JSON operand check: what BMv2's loader refuses (or misreads)
is reported with its path, what it accepts is not."""

from __future__ import annotations

import copy

from tests.compiler.bmv2_support import compile_ingress
from p4scope.compiler.bmv2.validate import bmv2_json_problems


def field(h, f):
    return {"type": "field", "value": [h, f]}


def hexstr(v):
    return {"type": "hexstr", "value": v}


def op(o, left, right, **more):
    return {"type": "expression", "value": {"op": o, "left": left, "right": right, **more}}


def param(node):
    """A computed primitive parameter: BMv2 reads an expression from `value`."""
    return {"type": "expression", "value": node}


def program(*primitives, nparams=1, conditional=None):
    j = {"actions": [{"name": "a", "id": 0,
                      "runtime_data": [{"name": f"p{i}", "bitwidth": 8} for i in range(nparams)],
                      "primitives": list(primitives)}],
         "pipelines": [{"name": "ingress", "conditionals": []}]}
    if conditional is not None:
        j["pipelines"][0]["conditionals"].append({"name": "c", "expression": conditional})
    return j


def assign(dst, src):
    return {"op": "assign", "parameters": [dst, src]}


def test_action_data_forms_accepted_by_bmv2():
    ok = program(assign(field("h", "a"), {"type": "runtime_data", "value": 0}),
                 assign(field("h", "b"), param(op("+", field("h", "b"), {"type": "local", "value": 0}))))
    assert bmv2_json_problems(ok) == []


def test_runtime_data_inside_an_expression_is_refused_as_bmv2_does():
    bad = program(assign(field("h", "b"),
                         param(op("+", field("h", "b"), {"type": "runtime_data", "value": 0}))))
    (problem,) = bmv2_json_problems(bad)
    assert problem.startswith("actions[0] ('a').primitives[0] ('assign').parameters[1].value.value(op '+').right:")
    assert "Invalid 'type' in expression: 'runtime_data'" in problem


def test_local_outside_an_expression_or_an_action_is_refused():
    (problem,) = bmv2_json_problems(program(assign(field("h", "a"), {"type": "local", "value": 0})))
    assert "Parameter type 'local' not supported" in problem
    cond = op("d2b", None, {"type": "local", "value": 0})
    (problem,) = bmv2_json_problems(program(conditional=cond))
    assert problem.startswith("pipelines[0] ('ingress').conditionals[0] ('c').expression")
    assert "outside an action" in problem


def test_action_data_beyond_the_parameters():
    problems = bmv2_json_problems(program(
        assign(field("h", "a"), {"type": "runtime_data", "value": 1}),
        assign(field("h", "b"), param(op("+", field("h", "b"), {"type": "local", "value": 3})))))
    assert len(problems) == 2
    assert "offset 1 but action only has 1 parameter(s)" in problems[0]
    assert "'local' 3 but the action only has 1 parameter(s)" in problems[1]


def test_expression_wrapping():
    once = op("+", field("h", "b"), hexstr("0x01"))
    # a primitive's expression parameter holds an expression operand in `value`
    assert bmv2_json_problems(program(assign(field("h", "b"), param(once)))) == []
    # wrapped only once, BMv2 finds an operator where it wants {type, value}
    (problem,) = bmv2_json_problems(program(assign(field("h", "b"), once)))
    assert "Invalid 'type' in expression: 'None'" in problem
    # wrapped once too often inside an expression
    (problem,) = bmv2_json_problems(program(conditional=op("d2b", None, param(param(field("h", "a"))))))
    assert "once too often" in problem


def test_operator_shapes_and_kinds():
    def problems(cond):
        return bmv2_json_problems(program(conditional=cond))

    assert problems(op("and", op("d2b", None, field("h", "a")), {"type": "bool", "value": True})) == []
    assert "unknown operator '**'" in problems(op("**", field("h", "a"), hexstr("0x2")))[0]
    # BMv2 asserts that == compares operands of one kind
    assert "different kinds (data and bool)" in problems(op("==", field("h", "a"), {"type": "bool", "value": True}))[0]
    # no implicit bool/data conversion
    assert "a bool operand is needed here, found data" in problems(op("not", None, field("h", "a")))[0]
    assert "needs a left operand" in problems(op("&", None, field("h", "a")))[0]
    assert problems(op("-", None, field("h", "a"))) == []   # unary minus
    assert "'?' needs a 'cond'" in problems(op("?", hexstr("0x1"), hexstr("0x2")))[0]
    deref = op("dereference_header_stack", {"type": "header_stack", "value": "s"}, field("h", "i"))
    assert problems(op("d2b", None, op("access_field", deref, 0))) == []
    assert "integer offset" in problems(op("d2b", None, op("access_field", deref, "0")))[0]
    assert "'hexstr' needs a hexadecimal string" in problems(op("d2b", None, hexstr("12")))[0]


def test_parser_operands():
    base = {"parsers": [{"name": "parser", "parse_states": [{"name": "start", "parser_ops": []}]}]}

    def problems(*ops):
        j = copy.deepcopy(base)
        j["parsers"][0]["parse_states"][0]["parser_ops"] = list(ops)
        return bmv2_json_problems(j)

    good = {"op": "set", "parameters": [field("m", "x"), param(op("+", field("h", "a"), hexstr("0x01")))]}
    assert problems(good) == []
    bad = {"op": "set", "parameters": [field("m", "x"), param(op("+", field("h", "a"),
                                                                 {"type": "runtime_data", "value": 0}))]}
    (problem,) = problems(bad)
    assert problem.startswith("parsers[0] ('parser').parse_states[0] ('start').parser_ops[0] ('set')")
    assert "Invalid 'type' in expression: 'runtime_data'" in problem
    prim = {"op": "primitive", "parameters": [assign(field("m", "x"), {"type": "runtime_data", "value": 0})]}
    assert "action only has 0 parameter(s)" in problems(prim)[0]


def test_the_limit_stops_early():
    bad = program(*[assign(field("h", "a"), {"type": "local", "value": 0})] * 5)
    assert len(bmv2_json_problems(bad)) == 5
    assert len(bmv2_json_problems(bad, limit=2)) == 2


def test_p4scope_output_for_a_program_with_action_data_is_clean():
    j = compile_ingress("t.apply(); if (hdr.h.isValid() && meta.flag) { hdr.h.a = hdr.h.a + 1; }", """
        action set(bit<8> v, int<8> s) { hdr.h.a = v ^ hdr.h.b; hdr.h.s = s; meta.x = v; }
        table t { key = { hdr.h.b: exact; } actions = { set; } default_action = set(1, -2); }""")
    assert bmv2_json_problems(j) == []
