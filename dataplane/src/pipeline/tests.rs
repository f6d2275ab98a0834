//! Parser, deparser and action tests on small programs, with static packets.
//! Every length check of the parser has a negative test here.

use super::*;
use crate::json;
use crate::program::Program;
use serde_json::{json, Value};

fn std_type() -> Value {
    json!({"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
        ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false], ["_p", 5, false]]})
}

/// A program whose parser runs `ops` in one state, over header h (a 16-bit
/// field and a varbit of up to 4 bytes) and a 2-element stack s.
fn prog_with_ops(ops: Value, key: Value, transitions: Value) -> Program {
    let h_t = json!({"name": "h_t", "id": 1, "fields": [["a", 12, false], ["b", 4, false], ["v", "*"]], "max_length": 6});
    let start = json!({"name": "start", "id": 0, "parser_ops": ops, "transition_key": key, "transitions": transitions});
    json::load_value(&doc_with_parser(h_t, json!([start]))).unwrap()
}

/// A program over header h (of type `h_t`, id 1), a 2-element stack s of
/// 8-bit headers, a 16-bit metadata field meta.m and the errors p4c
/// declares (and `Mine`), whose parser has `states` (the first is
/// `start`) and whose deparser emits h, s[0] and s[1].
pub(crate) fn doc_with_parser(h_t: Value, states: Value) -> Value {
    json!({
        "header_types": [std_type(), h_t,
            {"name": "s_t", "id": 2, "fields": [["x", 8, false]]},
            {"name": "m_t", "id": 3, "fields": [["m", 16, false]]}],
        "headers": [
            {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
            {"name": "h", "id": 1, "header_type": "h_t", "metadata": false},
            {"name": "s[0]", "id": 2, "header_type": "s_t", "metadata": false},
            {"name": "s[1]", "id": 3, "header_type": "s_t", "metadata": false},
            {"name": "meta", "id": 4, "header_type": "m_t", "metadata": true}],
        "header_stacks": [{"name": "s", "id": 0, "header_type": "s_t", "size": 2, "header_ids": [2, 3]}],
        "errors": [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2], ["StackOutOfBounds", 3],
                   ["HeaderTooShort", 4], ["ParserTimeout", 5], ["ParserInvalidArgument", 6], ["Mine", 7]],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": states}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["h", "s[0]", "s[1]"]}],
        "pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
                      {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
    })
}

fn extract(h: &str) -> Value {
    json!({"op": "extract", "parameters": [{"type": "regular", "value": h}]})
}

fn default_accept() -> Value {
    json!([{"type": "default", "value": null, "mask": null, "next_state": null}])
}

use crate::fuzzing::parsed as parse;

static TWO: [u8; 2] = [0xab, 0xcd];
static ONE: [u8; 1] = [0xab];

#[test]
fn extract_reads_unaligned_fields() {
    let p = prog_with_ops(json!([extract("h")]), json!([]), default_accept());
    let pkt = parse(&p, &[0xab, 0xcd, 0xee]);
    assert_eq!(pkt.parser_error, 0);
    let a = p.field_by_name("h", "a").unwrap();
    let b = p.field_by_name("h", "b").unwrap();
    assert_eq!(pkt.phv.vals[a as usize], 0xabc);
    assert_eq!(pkt.phv.vals[b as usize], 0xd);
    assert_eq!(pkt.payload_off, 2);
    assert!(pkt.phv.valid[1]);
}

#[test]
fn extract_of_short_packet_is_packet_too_short() {
    let p = prog_with_ops(json!([extract("h")]), json!([]), default_accept());
    let pkt = parse(&p, &ONE);
    assert_eq!(pkt.parser_error, 1);
    assert!(!pkt.phv.valid[1]);
    assert_eq!(pkt.payload_off, 0, "nothing consumed");
    let empty = parse(&p, &[]);
    assert_eq!(empty.parser_error, 1);
}

#[test]
fn stack_overflow_is_stack_out_of_bounds() {
    let ops = json!([{"op": "extract", "parameters": [{"type": "stack", "value": "s"}]},
                     {"op": "extract", "parameters": [{"type": "stack", "value": "s"}]},
                     {"op": "extract", "parameters": [{"type": "stack", "value": "s"}]}]);
    let p = prog_with_ops(ops, json!([]), default_accept());
    let pkt = parse(&p, &[1, 2, 3, 4]);
    assert_eq!(pkt.parser_error, 3);
    assert_eq!(pkt.payload_off, 2);
    let short = parse(&p, &ONE);
    assert_eq!(short.parser_error, 1);
}

#[test]
fn advance_past_the_end_is_packet_too_short() {
    let adv = |bits: u64| json!([{"op": "advance", "parameters": [{"type": "hexstr", "value": format!("0x{bits:x}")}]}]);
    let p = prog_with_ops(adv(16), json!([]), default_accept());
    assert_eq!(parse(&p, &TWO).parser_error, 0);
    assert_eq!(parse(&p, &TWO).payload_off, 2);
    assert_eq!(parse(&p, &ONE).parser_error, 1);
    let odd = prog_with_ops(adv(4), json!([]), default_accept());
    assert_eq!(parse(&odd, &TWO).parser_error, 6, "not a multiple of 8 bits");
}

#[test]
fn lookahead_set_past_the_end_is_packet_too_short() {
    let ops = json!([{"op": "set", "parameters": [{"type": "field", "value": ["meta", "m"]},
                                                  {"type": "lookahead", "value": [0, 16]}]}]);
    let p = prog_with_ops(ops, json!([]), default_accept());
    let pkt = parse(&p, &TWO);
    assert_eq!(pkt.parser_error, 0);
    assert_eq!(pkt.phv.vals[p.field_by_name("meta", "m").unwrap() as usize], 0xabcd);
    assert_eq!(pkt.payload_off, 0, "lookahead does not consume");
    assert_eq!(parse(&p, &ONE).parser_error, 1);
}

fn extract_vl(len_bits: u64) -> Value {
    json!([{"op": "extract_VL", "parameters": [{"type": "regular", "value": "h"},
        {"type": "expression", "value": {"type": "hexstr", "value": format!("0x{len_bits:x}")}}]}])
}

#[test]
fn varbit_extract_and_its_length_checks() {
    let p = prog_with_ops(extract_vl(16), json!([]), default_accept());
    let pkt = parse(&p, &[1, 2, 3, 4, 5]);
    assert_eq!(pkt.parser_error, 0);
    assert_eq!(pkt.payload_off, 4);
    assert_eq!(pkt.phv.vl_bits[1], 16);
    // packet shorter than fixed part + varbit
    assert_eq!(parse(&p, &[1, 2, 3]).parser_error, 1);
    // varbit longer than max_length allows (6 bytes in all)
    let big = prog_with_ops(extract_vl(40), json!([]), default_accept());
    assert_eq!(parse(&big, &[0; 10]).parser_error, 4);
    // not a multiple of 8
    let odd = prog_with_ops(extract_vl(12), json!([]), default_accept());
    assert_eq!(parse(&odd, &[0; 10]).parser_error, 6);
}

#[test]
fn verify_raises_the_given_error() {
    let ops = json!([{"op": "verify", "parameters": [{"type": "bool", "value": false}, {"type": "hexstr", "value": "0x7"}]}]);
    let p = prog_with_ops(ops, json!([]), default_accept());
    assert_eq!(parse(&p, &TWO).parser_error, 7);
}

#[test]
fn transitions_value_mask_and_lookahead_keys() {
    let trans = json!([
        {"type": "hexstr", "value": "0x0ab0", "mask": "0x0ff0", "next_state": null},
        {"type": "default", "value": null, "mask": null, "next_state": "start"}]);
    // key: field a (12 bits, 2 bytes); h.a = 0xabc matches 0x0ab0 under mask 0x0ff0
    let p = prog_with_ops(json!([extract("h")]), json!([{"type": "field", "value": ["h", "a"]}]), trans.clone());
    assert_eq!(parse(&p, &[0xab, 0xcd]).parser_error, 0);
    // no match -> loops to start -> second extract runs out of bytes
    assert_eq!(parse(&p, &[0x12, 0x34]).parser_error, 1);
    // lookahead key beyond the end reads zeros, never panics
    let la = prog_with_ops(json!([]), json!([{"type": "lookahead", "value": [0, 16]}]),
                           json!([{"type": "hexstr", "value": "0x0000", "mask": null, "next_state": null},
                                  {"type": "default", "value": null, "mask": null, "next_state": null}]));
    assert_eq!(parse(&la, &[]).parser_error, 0);
}

#[test]
fn looping_parser_times_out() {
    let p = prog_with_ops(json!([]), json!([]),
                          json!([{"type": "default", "value": null, "mask": null, "next_state": "start"}]));
    assert_eq!(parse(&p, &TWO).parser_error, 5);
}

#[test]
fn deparse_writes_every_bit() {
    let p = prog_with_ops(json!([extract("h")]), json!([]), default_accept());
    let mut rt = Runtime::new(&p, 0);
    let mut pkt = Packet::new(&p);
    pkt.data = vec![0xab, 0xcd, 0x99];
    let mut ex = Exec::new(&p, &mut rt);
    ex.parse(&mut pkt);
    // fill the output buffer with 0xa5 first: any unwritten bit would show
    let mut out = vec![0xa5; 64];
    ex.deparse(&mut pkt, &mut out);
    assert_eq!(pkt.data, vec![0xab, 0xcd, 0x99]);
    pkt.truncate_to = 1;
    let mut out = vec![];
    Exec::new(&p, &mut rt).deparse(&mut pkt, &mut out);
    assert_eq!(pkt.data, vec![0xab]);
}

/// Two fixed headers (14 and 5 bytes, fields straddling words) parsed in
/// sequence and deparsed in that order.
fn two_fixed_headers() -> Program {
    let doc = json!({
        "header_types": [std_type(),
            {"name": "e_t", "id": 1, "fields": [["d", 48, false], ["s", 48, false], ["t", 16, false]]},
            {"name": "x_t", "id": 2, "fields": [["a", 3, false], ["b", 29, false], ["c", 8, false]]}],
        "headers": [
            {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
            {"name": "e", "id": 1, "header_type": "e_t", "metadata": false},
            {"name": "x", "id": 2, "header_type": "x_t", "metadata": false}],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            {"name": "start", "id": 0, "parser_ops": [extract("e"), extract("x")], "transition_key": [],
             "transitions": default_accept()}]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["e", "x"]}],
        "pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
                      {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
    });
    json::load_value(&doc).unwrap()
}

#[test]
fn deparse_over_the_parsed_headers_keeps_the_payload_in_place() {
    let p = two_fixed_headers();
    let mut rt = Runtime::new(&p, 0);
    let mut pkt = Packet::new(&p);
    let payload: Vec<u8> = (0..200u32).map(|i| (i * 7) as u8).collect();
    let mut bytes: Vec<u8> = (1..=19).collect();
    bytes.extend_from_slice(&payload);
    pkt.data = bytes.clone();
    let mut ex = Exec::new(&p, &mut rt);
    ex.parse(&mut pkt);
    assert_eq!(pkt.payload_off, 19);
    let (s, b) = (p.field_by_name("e", "s").unwrap(), p.field_by_name("x", "b").unwrap());
    pkt.phv.vals[s as usize] = 0xa1a2_a3a4_a5a6;
    pkt.phv.vals[b as usize] = 0x1fff_ffff;
    let before = pkt.data.as_ptr();
    let mut out = vec![0x5a; 8];
    ex.deparse(&mut pkt, &mut out);
    assert_eq!(pkt.data.as_ptr(), before, "the packet's buffer is kept: headers written over themselves");
    let mut want = bytes.clone();
    want[6..12].copy_from_slice(&[0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6]);
    // x: a (3 bits) of byte 14 kept, b = all ones, c kept
    want[14] = (bytes[14] & 0xe0) | 0x1f;
    want[15..18].copy_from_slice(&[0xff, 0xff, 0xff]);
    assert_eq!(pkt.data, want);
    assert_eq!(pkt.payload_off, 0);
    // a header removed: the image is shorter, built in the other buffer
    pkt.data = bytes.clone();
    ex.parse(&mut pkt);
    pkt.phv.valid[2] = false;
    ex.deparse(&mut pkt, &mut out);
    let mut want = bytes[..14].to_vec();
    want.extend_from_slice(&payload);
    assert_eq!(pkt.data, want);
    // truncation applies to the in-place image too
    pkt.data = bytes.clone();
    ex.parse(&mut pkt);
    pkt.truncate_to = 16;
    ex.deparse(&mut pkt, &mut out);
    assert_eq!(pkt.data, bytes[..16].to_vec());
}

/// When the image does not keep the parsed length, the headers written over
/// themselves before that is known do not leak into the result: a changed
/// first header with the second removed, and a header added.
#[test]
fn deparse_falls_back_after_writing_headers_in_place() {
    let p = two_fixed_headers();
    let mut rt = Runtime::new(&p, 0);
    let mut pkt = Packet::new(&p);
    let payload: Vec<u8> = (0..50u32).map(|i| (i * 13) as u8).collect();
    let mut bytes: Vec<u8> = (1..=19).collect();
    bytes.extend_from_slice(&payload);
    let d = p.field_by_name("e", "d").unwrap();
    let mut ex = Exec::new(&p, &mut rt);
    // e changed, x removed: 14 header bytes, then the payload
    pkt.data = bytes.clone();
    ex.parse(&mut pkt);
    pkt.phv.vals[d as usize] = 0x0102_0304_0506;
    pkt.phv.valid[2] = false;
    let mut out = vec![];
    ex.deparse(&mut pkt, &mut out);
    let mut want = vec![1, 2, 3, 4, 5, 6];
    want.extend_from_slice(&bytes[6..14]);
    want.extend_from_slice(&payload);
    assert_eq!(pkt.data, want);
    // only e parsed (a 14-byte packet), x made valid: 19 bytes out of 14
    pkt.data = bytes[..14].to_vec();
    ex.parse(&mut pkt);
    assert_eq!(pkt.payload_off, 14);
    pkt.phv.valid[2] = true;
    pkt.phv.vals[d as usize] = 0xffff_ffff_ffff;
    for (f, v) in [("a", 0), ("b", 1), ("c", 0)] {
        pkt.phv.vals[p.field_by_name("x", f).unwrap() as usize] = v;
    }
    ex.deparse(&mut pkt, &mut out);
    let mut want = vec![0xff; 6];
    want.extend_from_slice(&bytes[6..14]);
    // x: a = 0 (3 bits), b = 1 (29 bits), and c = 0
    want.extend_from_slice(&[0, 0, 0, 1, 0]);
    assert_eq!(pkt.data, want);
}

/// States made only of fixed-header extracts run from their plan, with the
/// parser's checks: a header that does not fit stops parsing with
/// PacketTooShort, the headers before it consumed.
#[test]
fn planned_states_extract_and_check_lengths() {
    let p = two_fixed_headers();
    assert!(p.state_plans[0].is_some());
    let varbit = prog_with_ops(json!([extract("h")]), json!([]), default_accept());
    assert!(varbit.state_plans[0].is_none(), "a varbit header has no extract plan");
    let stack = prog_with_ops(json!([extract("s[0]"), extract("s[1]")]), json!([]), default_accept());
    assert!(stack.state_plans[0].is_some(), "fixed stack elements named statically");
    let bytes: Vec<u8> = (1..=16).collect();
    let pkt = parse(&p, &bytes);
    assert_eq!(pkt.parser_error, 1, "PacketTooShort");
    assert!(pkt.phv.valid[1] && !pkt.phv.valid[2]);
    assert_eq!(pkt.payload_off, 14);
    let t = p.field_by_name("e", "t").unwrap();
    assert_eq!(pkt.phv.vals[t as usize], 0x0d0e);
    let pkt = parse(&p, &bytes[..13]);
    assert_eq!((pkt.parser_error, pkt.payload_off, pkt.phv.valid[1]), (1, 0, false));
}
