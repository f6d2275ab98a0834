//! Loader tests: what is rejected, and that the error says where.

use super::*;
use serde_json::json;

fn base() -> Value {
    json!({
        "header_types": [{"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false],
            ["egress_spec", 9, false], ["egress_port", 9, false], ["instance_type", 32, false],
            ["packet_length", 32, false], ["_p", 5, false]]},
            {"name": "h_t", "id": 1, "fields": [["a", 8, false]]}],
        "headers": [{"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
                    {"name": "h", "id": 1, "header_type": "h_t", "metadata": false}],
        "parsers": [{"name": "parser", "id": 0, "init_state": null, "parse_states": []}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["h"]}],
        "actions": [],
        "pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
                      {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
    })
}

fn load_err(v: &Value) -> LoadError {
    load_value(v).expect_err("should be rejected")
}

#[test]
fn the_base_program_loads() {
    let p = load_value(&base()).unwrap();
    assert_eq!(p.headers.len(), 2);
    assert!(p.std.ingress_port.is_some());
}

#[test]
fn not_json_or_not_an_object() {
    assert!(load("{").unwrap_err().msg.contains("not valid JSON"));
    assert!(load("[]").unwrap_err().msg.contains("object"));
}

#[test]
fn unsupported_version() {
    let mut v = base();
    v["__meta__"] = json!({"version": [2, 99]});
    let e = load_err(&v);
    assert_eq!(e.path, "__meta__.version");
}

#[test]
fn unknown_header_type_names_the_header() {
    let mut v = base();
    v["headers"][1]["header_type"] = json!("nope");
    let e = load_err(&v);
    assert_eq!(e.path, "headers[1] ('h')");
    assert!(e.msg.contains("nope"));
}

#[test]
fn header_not_whole_bytes() {
    let mut v = base();
    v["header_types"][1]["fields"] = json!([["a", 7, false]]);
    assert!(load_err(&v).msg.contains("whole number of bytes"));
}

#[test]
fn missing_standard_metadata_field() {
    let mut v = base();
    v["header_types"][0]["fields"] = json!([["ingress_port", 9, false], ["_p", 7, false]]);
    assert!(load_err(&v).msg.contains("egress_spec"));
}

#[test]
fn unknown_primitive_and_bad_arity() {
    let mut v = base();
    v["actions"] = json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": [
        {"op": "assign", "parameters": [{"type": "field", "value": ["h", "a"]}]}]}]);
    let e = load_err(&v);
    assert_eq!(e.path, "actions[0] ('a').primitives[0] ('assign')");
    assert!(e.msg.contains("takes 2"));
    v["actions"][0]["primitives"][0] = json!({"op": "teleport", "parameters": []});
    assert!(load_err(&v).msg.contains("teleport"));
}

#[test]
fn unknown_field_and_operator() {
    let mut v = base();
    v["actions"] = json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": [
        {"op": "assign", "parameters": [{"type": "field", "value": ["h", "zz"]}, {"type": "hexstr", "value": "0x1"}]}]}]);
    assert!(load_err(&v).msg.contains("no field 'zz'"));
    v["actions"][0]["primitives"][0]["parameters"] = json!([{"type": "field", "value": ["h", "a"]},
        {"type": "expression", "value": {"op": "**", "left": {"type": "hexstr", "value": "0x1"},
                                         "right": {"type": "hexstr", "value": "0x1"}}}]);
    assert!(load_err(&v).msg.contains("unknown operator '**'"));
}

#[test]
fn table_with_unknown_successor_or_action() {
    let mut v = base();
    v["actions"] = json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": []}]);
    v["pipelines"][0]["tables"] = json!([{"name": "t", "id": 0, "key": [], "match_type": "exact", "type": "simple",
        "max_size": 1, "action_ids": [0], "actions": ["a"], "next_tables": {"a": "nowhere"}}]);
    let e = load_err(&v);
    assert!(e.path.starts_with("pipelines[0] ('ingress').tables[0] ('t')"), "{}", e.path);
    assert!(e.msg.contains("nowhere"));
    v["pipelines"][0]["tables"][0]["next_tables"] = json!({"a": null});
    v["pipelines"][0]["tables"][0]["action_ids"] = json!([5]);
    assert!(load_err(&v).msg.contains("unknown action id 5"));
}

#[test]
fn extern_instances_are_rejected() {
    let mut v = base();
    v["extern_instances"] = json!([{"name": "x", "id": 0, "type": "Foo"}]);
    assert!(load_err(&v).msg.contains("extern"));
}

#[test]
fn constants_are_folded() {
    let mut v = base();
    v["actions"] = json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": [
        {"op": "assign", "parameters": [{"type": "field", "value": ["h", "a"]},
          {"type": "expression", "value": {"op": "+", "left": {"type": "hexstr", "value": "0x1"},
                                           "right": {"type": "hexstr", "value": "0x2"}}}]}]}]);
    let p = load_value(&v).unwrap();
    match &p.actions[0].prims[0] {
        Prim::Assign(_, Expr::Const(c)) => assert_eq!(*c, crate::value::Val::S(3)),
        Prim::SetField { src: SetSrc::Const(c), .. } => assert_eq!(*c, 3),
        other => panic!("not folded: {other:?}"),
    }
}

#[test]
fn header_wider_than_64_kib_is_refused_before_layout() {
    // BMv2 would take a 2^31-bit field (256 MiB in every packet's PHV)
    let mut v = base();
    v["header_types"][1]["fields"] = json!([["a", 8, false], ["huge", 2147483648u64, false]]);
    let e = load_err(&v);
    assert_eq!(e.path, "header_types[1] ('h_t').fields[1]");
    assert!(e.msg.contains("65536 bytes"), "{}", e.msg);
    // many fields that add up to more than 64 KiB: no u32 overflow either
    v["header_types"][1]["fields"] = json!([["a", 4294967295u64, false], ["b", 4294967295u64, false]]);
    assert!(load_err(&v).msg.contains("65536 bytes"));
    // exactly 64 KiB is fine
    v["header_types"][1]["fields"] = json!([["a", 524280, false], ["b", 8, false]]);
    load_value(&v).unwrap();
}

#[test]
fn varbit_max_length_beyond_64_kib_is_refused() {
    let mut v = base();
    v["header_types"][1]["fields"] = json!([["a", 8, false], ["v", "*"]]);
    v["header_types"][1]["max_length"] = json!(4294967295u64);
    let e = load_err(&v);
    assert!(e.path.ends_with(".max_length") && e.msg.contains("65536 bytes"), "{e}");
}

#[test]
fn lookahead_wider_than_64_kib_is_refused() {
    let mut v = base();
    v["parsers"][0]["init_state"] = json!("start");
    v["parsers"][0]["parse_states"] = json!([{"name": "start", "id": 0, "parser_ops": [],
        "transition_key": [{"type": "lookahead", "value": [0, 4294967295u64]}],
        "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}]);
    assert!(load_err(&v).msg.contains("lookahead of 4294967295 bits"));
}

/// An action `a(bit<8> v)` whose one primitive assigns `value` to h.a.
fn assign_from(value: Value) -> Value {
    let mut v = base();
    v["actions"] = json!([{"name": "a", "id": 0, "runtime_data": [{"name": "v", "bitwidth": 8}],
        "primitives": [{"op": "assign", "parameters": [{"type": "field", "value": ["h", "a"]}, value]}]}]);
    v
}

fn plus_one(operand: Value) -> Value {
    json!({"type": "expression", "value": {"type": "expression", "value":
        {"op": "+", "left": operand, "right": {"type": "hexstr", "value": "0x01"}}}})
}

#[test]
fn action_data_is_runtime_data_as_a_parameter_and_local_inside_an_expression() {
    // as BMv2's P4Objects: process_single_param takes runtime_data, build_expression takes local
    load_value(&assign_from(json!({"type": "runtime_data", "value": 0}))).unwrap();
    load_value(&assign_from(plus_one(json!({"type": "local", "value": 0})))).unwrap();

    let e = load_err(&assign_from(plus_one(json!({"type": "runtime_data", "value": 0}))));
    assert!(e.msg.contains("Invalid 'type' in expression: 'runtime_data'"), "{e}");
    assert!(e.path.starts_with("actions[0] ('a').primitives[0] ('assign').parameters[1]"), "{}", e.path);

    let e = load_err(&assign_from(json!({"type": "local", "value": 0})));
    assert!(e.msg.contains("Parameter type 'local' not supported"), "{e}");
}

#[test]
fn runtime_data_beyond_the_actions_parameters_is_refused() {
    let e = load_err(&assign_from(json!({"type": "runtime_data", "value": 1})));
    assert!(e.msg.contains("offset 1 but action only has 1 parameter(s)"), "{e}");
}

#[test]
fn runtime_data_in_a_conditional_is_refused() {
    let mut v = base();
    v["pipelines"][0]["init_table"] = json!("c");
    v["pipelines"][0]["conditionals"] = json!([{"name": "c", "id": 0, "true_next": null, "false_next": null,
        "expression": {"type": "expression", "value": {"op": "d2b", "left": null,
                                                       "right": {"type": "runtime_data", "value": 0}}}}]);
    assert!(load_err(&v).msg.contains("Invalid 'type' in expression: 'runtime_data'"));
}

/// A table keyed on one narrow field without a mask looks up that field's
/// value as it is; masked, multi-field and range keys go through the
/// general key builder.
#[test]
fn one_field_keys_are_found_at_load() {
    let mut v = base();
    v["actions"] = json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": []}]);
    let key = |kind: &str, mask: Value| json!({"match_type": kind, "name": "h.a", "target": ["h", "a"], "mask": mask});
    let table = |i: u32, kind: &str, keys: Vec<Value>| json!({"name": format!("t{i}"), "id": i, "key": keys,
        "match_type": kind, "type": "simple", "max_size": 1, "action_ids": [0], "actions": ["a"],
        "next_tables": {"a": null}});
    v["pipelines"][0]["tables"] = json!([
        table(0, "exact", vec![key("exact", Value::Null)]),
        table(1, "lpm", vec![key("lpm", Value::Null)]),
        table(2, "ternary", vec![key("ternary", json!("0x0f"))]),
        table(3, "exact", vec![key("exact", Value::Null), key("exact", Value::Null)]),
        table(4, "range", vec![key("range", Value::Null)])]);
    let p = load_value(&v).unwrap();
    let a = p.field_by_name("h", "a");
    assert_eq!(p.table_key_fields, vec![a, a, None, None, None]);
}

/// What a program is made of, as text, without its hash maps (whose
/// order differs from one load to the next).
fn program_parts(p: &Program) -> String {
    let tables: Vec<_> = p.tables.iter().map(|t| (&t.name, &t.keys, &t.actions)).collect();
    format!("{:?}", (&p.headers, &p.fields, &p.actions, &tables, &p.conds, &p.field_lists,
                     &p.deparse_plans, &p.extract_plans, &p.action_plans, &p.cond_tests,
                     &p.state_plans, &p.valid_init))
}

#[test]
fn a_document_loaded_again_gives_the_same_program() {
    let text = crate::fuzzing::PROGRAM;
    let fresh = program_parts(&load(text).unwrap());
    assert_eq!(program_parts(&load_again(text).unwrap()), fresh);
    assert_eq!(program_parts(&load_again(text).unwrap()), fresh);
    // another document in between, then the first again; a bad one fails as `load` says
    let other = base().to_string();
    assert_eq!(program_parts(&load_again(&other).unwrap()), program_parts(&load(&other).unwrap()));
    assert_eq!(program_parts(&load_again(text).unwrap()), fresh);
    assert_eq!(load_again("{").unwrap_err().msg, load("{").unwrap_err().msg);
    assert_eq!(program_parts(&load_again(text).unwrap()), fresh);
}
