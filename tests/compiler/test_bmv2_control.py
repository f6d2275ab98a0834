"""BMv2 backend: control flow of apply blocks (conditionals, synthesized
keyless tables, switch, exit/return, inlining of actions and controls)."""

from tests.compiler.bmv2_support import (action, action_by_id, compile_ingress, compile_json,
                                         conditional, errors, ingress, node, pipeline, program,
                                         table, walk_primitives)

T_DECL = """
    action set_a(bit<8> v) { hdr.h.a = v; }
    action drop() { mark_to_drop(sm); }
    table t { key = { hdr.h.b: exact; } actions = { set_a; drop; } default_action = drop(); }
"""


def test_statements_become_a_keyless_table_with_a_const_default():
    j = compile_ingress("hdr.h.a = 1;\n        hdr.h.b = 2;")
    p = pipeline(j)
    t = node(j, p["init_table"])
    assert t["key"] == [] and t["name"].startswith("tbl_tl")
    assert t["default_entry"]["action_const"] and t["default_entry"]["action_entry_const"]
    prims = action_by_id(j, t["default_entry"]["action_id"])["primitives"]
    assert [p["op"] for p in prims] == ["assign", "assign"]
    assert t["next_tables"] == {t["actions"][0]: None}


def test_if_becomes_a_conditional():
    j = compile_ingress("if (hdr.h.isValid()) { t.apply(); } else { hdr.h.a = 3; }", T_DECL)
    p = pipeline(j)
    c = conditional(j, p["init_table"])
    assert c["expression"] == {"type": "expression", "value": {
        "op": "d2b", "left": None, "right": {"type": "field", "value": ["h", "$valid$"]}}}
    assert c["true_next"] == "ingress.t"
    assert node(j, c["false_next"])["key"] == []
    assert table(j, "ingress.t")["base_default_next"] is None


def test_statements_after_if_are_shared_by_both_branches():
    j = compile_ingress("if (hdr.h.a == 1) { hdr.h.b = 1; } hdr.h.b = 2;")
    c = conditional(j, pipeline(j)["init_table"])
    after = c["false_next"]
    assert node(j, c["true_next"])["base_default_next"] == after


def test_switch_on_action_run_sets_next_tables():
    j = compile_ingress("switch (t.apply().action_run) { set_a: { hdr.h.b = 9; } default: { exit; } }",
                        T_DECL)
    t = table(j, "ingress.t")
    assert t["actions"] == ["ingress.set_a", "ingress.drop"]
    nt = t["next_tables"]
    assert nt["ingress.drop"] is None
    assert node(j, nt["ingress.set_a"])["key"] == []


def test_hit_miss():
    j = compile_ingress("if (!t.apply().hit) { hdr.h.b = 9; }", T_DECL)
    t = table(j, "ingress.t")
    assert set(t["next_tables"]) == {"__HIT__", "__MISS__"}
    assert t["next_tables"]["__HIT__"] is None
    assert node(j, t["next_tables"]["__MISS__"])["key"] == []


def test_hit_in_an_expression_is_recorded_in_a_temporary():
    j = compile_ingress("meta.flag = t.apply().hit;", T_DECL)
    t = table(j, "ingress.t")
    hit = node(j, t["next_tables"]["__HIT__"])
    miss = node(j, t["next_tables"]["__MISS__"])
    assert action_by_id(j, hit["default_entry"]["action_id"])["primitives"][0]["parameters"][1]["value"] == "0x01"
    assert action_by_id(j, miss["default_entry"]["action_id"])["primitives"][0]["parameters"][1]["value"] == "0x00"


def test_switch_on_a_value_becomes_conditionals():
    j = compile_ingress("switch (hdr.h.a) { 1: { hdr.h.b = 1; } 2: 3: { hdr.h.b = 2; } default: { hdr.h.b = 3; } }")
    p = pipeline(j)
    c1 = conditional(j, p["init_table"])
    assert c1["expression"]["value"]["op"] == "=="
    c2 = conditional(j, c1["false_next"])
    assert c2["expression"]["value"]["op"] == "or"


def test_exit_ends_the_pipeline_and_return_ends_the_control():
    j = compile_ingress("if (hdr.h.a == 1) { exit; } hdr.h.b = 1; if (hdr.h.a == 2) { return; } hdr.h.b = 2;")
    p = pipeline(j)
    c1 = conditional(j, p["init_table"])
    assert c1["true_next"] is None
    t1 = node(j, c1["false_next"])
    c2 = conditional(j, t1["base_default_next"])
    assert c2["true_next"] is None


def test_direct_action_call_uses_the_action_with_constant_data():
    j = compile_ingress("set_a(8w7);", T_DECL)
    t = node(j, pipeline(j)["init_table"])
    assert t["name"] == "tbl_set_a"
    assert t["actions"] == ["ingress.set_a"]
    assert t["default_entry"]["action_data"] == ["0x7"]


def test_table_action_body_and_runtime_data():
    j = compile_ingress("t.apply();", T_DECL)
    a = action(j, "ingress.set_a")
    assert a["runtime_data"] == [{"name": "v", "bitwidth": 8}]
    assert a["primitives"] == [{"op": "assign", "parameters": [
        {"type": "field", "value": ["h", "a"]}, {"type": "runtime_data", "value": 0}]}]
    assert action(j, "ingress.drop")["primitives"] == [
        {"op": "mark_to_drop", "parameters": [{"type": "header", "value": "standard_metadata"}]}]


def test_if_inside_an_action_uses_jumps():
    locals_ = """
    action a(inout bit<8> v) { if (v > 10) { v = 2; return; } else { v = 3; } v = 4; }
    table t2 { key = { hdr.h.b: exact; } actions = { a(hdr.h.a); } }
    """
    j = compile_ingress("t2.apply();", locals_)
    prims = action(j, "ingress.a")["primitives"]
    ops = [p["op"] for p in prims]
    assert ops == ["assign", "_jump_if_zero", "assign", "_jump", "assign", "assign", "assign"]
    # the return jumps to the copy-out at the end
    assert prims[3]["parameters"][0]["value"] == hex(6)
    assert prims[1]["parameters"][1]["value"] == hex(4)
    assert prims[-1]["parameters"][0] == {"type": "field", "value": ["h", "a"]}


def test_inout_arguments_are_copied_in_and_out():
    locals_ = """
    bit<8> c = 12;
    action f(inout bit<8> x) { hdr.h.a = x; c = 24; }
    """
    j = compile_ingress("f(c);", locals_)
    prims = walk_primitives(j)
    writes_c = [p for p in prims if p["parameters"][0] == {"type": "field", "value": ["scalars", "c"]}]
    # initializer, the action's own write, then the copy-out of x
    assert len(writes_c) == 3
    assert writes_c[-1]["parameters"][1]["type"] == "field"


def test_sub_control_is_inlined_under_its_instance_name():
    extra = """
control Sub(inout headers hdr, in bit<8> v) {
    action set(bit<8> x) { hdr.h.a = x; }
    table st { key = { hdr.h.b: exact; } actions = { set; NoAction; } }
    apply { if (v == 1) { st.apply(); } }
}
"""
    ing = ingress("sub.apply(hdr, hdr.h.b);", "Sub() sub;")
    j = compile_json(program(ing, extra=extra))
    t = table(j, "ingress.sub.st")
    assert "ingress.sub.set" in t["actions"]
    # the scalar `in` argument is copied first, then the sub-control's if
    copy = node(j, pipeline(j)["init_table"])
    assert action_by_id(j, copy["default_entry"]["action_id"])["primitives"][0]["parameters"][1] == \
        {"type": "field", "value": ["h", "b"]}
    c = conditional(j, copy["base_default_next"])
    assert c["true_next"] == "ingress.sub.st"


def test_default_action_is_no_action_when_absent():
    j = compile_ingress("t0.apply();", "table t0 { key = { hdr.h.b: exact; } actions = { } }")
    t = table(j, "ingress.t0")
    assert t["actions"] == ["NoAction"]
    assert action_by_id(j, t["default_entry"]["action_id"])["name"] == "NoAction"


def test_unsupported_construct_is_reported():
    src = program(ingress("hdr.h.a = hdr.h.a / hdr.h.b;"))
    msgs = errors(src)
    assert any("not supported yet" in m and "/" in m for m in msgs)


def test_table_applied_inside_a_conditional_expression_only_when_evaluated():
    j = compile_ingress("hdr.h.a = hdr.h.b == 4 ? (t.apply().hit ? 8w1 : 8w2) : 8w3;", T_DECL)
    c = conditional(j, pipeline(j)["init_table"])
    assert c["true_next"] == "ingress.t"
    t = table(j, "ingress.t")
    hit = node(j, t["next_tables"]["__HIT__"])
    assert hit["base_default_next"] == c["false_next"]


def test_table_in_a_branch_never_taken_is_not_applied():
    j = compile_ingress("hdr.h.a = false ? (t.apply().hit ? 8w1 : 8w2) : 8w3;", T_DECL)
    t = table(j, "ingress.t")
    assert pipeline(j)["init_table"] != "ingress.t"
    assert set(t["next_tables"].values()) == {None}


def test_for_loop_uses_a_backward_jump():
    locals_ = "action loop() { for (bit<8> i = 0; i < hdr.h.a; i = i + 1) { hdr.h.b = hdr.h.b + 1; } }"
    j = compile_ingress("loop();", locals_)
    prims = action(j, "ingress.loop")["primitives"]
    assert [p["op"] for p in prims] == ["assign", "_jump_if_zero", "assign", "assign", "_jump"]
    assert prims[-1]["parameters"][0]["value"] == hex(1)
    assert prims[1]["parameters"][1]["value"] == hex(5)


def test_table_applied_inside_a_loop_is_reported():
    msgs = errors(program(ingress("for (bit<8> i = 0; i < 2; i = i + 1) { t.apply(); }", T_DECL)))
    assert any("not supported yet" in m for m in msgs)
