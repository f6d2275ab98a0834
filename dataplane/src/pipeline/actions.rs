//! Straight-line action plans, built at load.
//!
//! Most actions of real programs only write narrow fields from their
//! parameters, other fields, constants and narrow expressions, add or
//! remove headers and mark packets to drop (forwarding, rewrites, TTL
//! decrements, encapsulations). For those, an
//! [`ActionPlan`] lists the writes with their operands resolved: a table
//! hit runs it on the entry's data in place, with no primitive loop, no
//! jump handling and no moving of the data out of the entry. Any other
//! action (externs, header stacks, jumps, wide fields) has no plan and
//! runs through `Exec::run_prims` as before; both give the same PHV.

use super::narrow::{binary_n, eval_narrow};
use super::Packet;
use crate::program::*;
use crate::value::Val;

/// One write of a plan; `mask` is the destination's width mask.
#[derive(Clone, Debug)]
enum Op {
    Param { dst: u32, mask: u128, idx: u32 },
    Copy { dst: u32, mask: u128, src: u32 },
    Const { dst: u32, value: u128 },
    /// A chain of operations with constants on a field: `((f op c) op c)...`
    Chain { dst: u32, mask: u128, field: u32, ops: Vec<(BinOp, i128)> },
    /// The chain `(f + add) & and` (`and` -1 when absent): p4c's form of a
    /// decrement (`ttl - 1` is `(ttl + 0xff) & 0xff`), run without a loop.
    AddAnd { dst: u32, mask: u128, field: u32, add: i128, and: i128 },
    Narrow { dst: u32, mask: u128, expr: NExpr },
    /// mark_to_drop: egress_spec to the drop port, mcast_grp to 0.
    Drop,
    /// add_header / remove_header of a header known at load.
    AddHeader(HdrId),
    RemoveHeader(HdrId),
}

/// An action's parameters as a plan reads them: parameter `i`'s low 128
/// bits, 0 past the end. A table entry keeps them as words ([`u128`]),
/// so a hit reads no `Val`; the default action's `Val`s read the same.
pub trait PlanParams {
    fn word(&self, i: usize) -> u128;
}

impl PlanParams for [Val] {
    #[inline(always)]
    fn word(&self, i: usize) -> u128 {
        self.get(i).map(Val::low_u128).unwrap_or(0)
    }
}

impl<const N: usize> PlanParams for [u128; N] {
    #[inline(always)]
    fn word(&self, i: usize) -> u128 {
        self.get(i).copied().unwrap_or(0)
    }
}

#[derive(Clone, Debug)]
pub struct ActionPlan {
    ops: Vec<Op>,
}

impl ActionPlan {
    /// The plan of an action whose every primitive is a narrow field write
    /// or mark_to_drop; None otherwise.
    fn new(p: &Program, a: &ActionDef) -> Option<ActionPlan> {
        let narrow = |f: u32| p.fmeta.get(f as usize).is_some_and(|m| !m.wide);
        let mut ops = Vec::with_capacity(a.prims.len());
        for prim in &a.prims {
            let op = match prim {
                Prim::SetField { dst, mask, src } if narrow(*dst) => match src {
                    SetSrc::Param(i) => Op::Param { dst: *dst, mask: *mask, idx: *i },
                    SetSrc::Field(g) if narrow(*g) => Op::Copy { dst: *dst, mask: *mask, src: *g },
                    SetSrc::Field(_) => return None,
                    SetSrc::Const(c) => Op::Const { dst: *dst, value: c & mask },
                    SetSrc::Narrow(e) => match chain(e) {
                        Some((field, ops)) => match ops[..] {
                            [(BinOp::Add, add)] => Op::AddAnd { dst: *dst, mask: *mask, field, add, and: -1 },
                            [(BinOp::Add, add), (BinOp::BitAnd, and)] => Op::AddAnd { dst: *dst, mask: *mask, field, add, and },
                            _ => Op::Chain { dst: *dst, mask: *mask, field, ops },
                        },
                        None => Op::Narrow { dst: *dst, mask: *mask, expr: (**e).clone() },
                    },
                },
                Prim::MarkToDrop => Op::Drop,
                Prim::AddHeader(HdrX::Static(h)) => Op::AddHeader(*h),
                Prim::RemoveHeader(HdrX::Static(h)) => Op::RemoveHeader(*h),
                _ => return None,
            };
            ops.push(op);
        }
        Some(ActionPlan { ops })
    }

    /// Runs the plan with the action's parameters `params`; `drop_port`:
    /// the port mark_to_drop writes.
    #[inline(always)]
    pub fn run<P: PlanParams + ?Sized>(&self, p: &Program, params: &P, pkt: &mut Packet, drop_port: u32) {
        for op in &self.ops {
            let (dst, v) = match op {
                Op::Param { dst, mask, idx } => (*dst, params.word(*idx as usize) & mask),
                Op::Copy { dst, mask, src } => (*dst, pkt.phv.vals[*src as usize] & mask),
                Op::Const { dst, value } => (*dst, *value),
                Op::Chain { dst, mask, field, ops } => {
                    let mut x = pkt.phv.vals[*field as usize] as i128;
                    for (op, c) in ops {
                        x = binary_n(*op, x, *c);
                    }
                    (*dst, x as u128 & mask)
                }
                Op::AddAnd { dst, mask, field, add, and } => {
                    let x = binary_n(BinOp::Add, pkt.phv.vals[*field as usize] as i128, *add);
                    (*dst, binary_n(BinOp::BitAnd, x, *and) as u128 & mask)
                }
                Op::Narrow { dst, mask, expr } => (*dst, eval_narrow(pkt, expr) as u128 & mask),
                Op::Drop => {
                    mark_to_drop(p, pkt, drop_port);
                    continue;
                }
                Op::AddHeader(h) => {
                    add_header(p, pkt, *h);
                    continue;
                }
                Op::RemoveHeader(h) => {
                    remove_header(p, pkt, *h);
                    continue;
                }
            };
            pkt.phv.vals[dst as usize] = v;
        }
    }
}

/// simple_switch's mark_to_drop: egress_spec to the drop port, mcast_grp 0.
pub(crate) fn mark_to_drop(p: &Program, pkt: &mut Packet, drop_port: u32) {
    if let Some(f) = p.std.egress_spec {
        pkt.phv.set_u(p, f, drop_port as u128);
    }
    if let Some(f) = p.std.mcast_grp {
        pkt.phv.set_u(p, f, 0);
    }
}

/// add_header: an invalid header becomes valid with every field zero, and
/// the packet-length register grows by its size; a valid one is left as
/// it is.
pub(crate) fn add_header(p: &Program, pkt: &mut Packet, h: HdrId) {
    if !pkt.phv.valid[h as usize] {
        pkt.phv.zero_header(p, h);
        pkt.phv.set_valid(p, h);
        pkt.len_reg += pkt.phv.header_bytes(p, h);
    }
}

/// remove_header: a valid header (not metadata) becomes invalid and the
/// packet-length register shrinks by its size.
pub(crate) fn remove_header(p: &Program, pkt: &mut Packet, h: HdrId) {
    if pkt.phv.valid[h as usize] && !p.headers[h as usize].metadata {
        pkt.len_reg = pkt.len_reg.saturating_sub(pkt.phv.header_bytes(p, h));
        pkt.phv.valid[h as usize] = false;
    }
}

/// `e` as an unsigned field followed by operations with constants, when it
/// has that shape: `BinaryConst(op2, BinaryConst(op1, Field(f), c1), c2)`.
fn chain(e: &NExpr) -> Option<(u32, Vec<(BinOp, i128)>)> {
    match e {
        NExpr::Field(f) => Some((*f, vec![])),
        NExpr::BinaryConst(op, a, c) if !matches!(op, BinOp::And | BinOp::Or) => {
            let (f, mut ops) = chain(a)?;
            ops.push((*op, *c));
            Some((f, ops))
        }
        _ => None,
    }
}

/// The plan of each action, where one applies.
pub fn action_plans(p: &Program) -> Vec<Option<ActionPlan>> {
    p.actions.iter().map(|a| ActionPlan::new(p, a)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;
    use crate::pipeline::{Exec, Runtime};
    use crate::program::MatchValue;
    use serde_json::{json, Value};

    #[test]
    fn chains_are_fields_then_constant_operations() {
        let f = Box::new(NExpr::Field(3));
        let ttl = NExpr::BinaryConst(BinOp::BitAnd, Box::new(NExpr::BinaryConst(BinOp::Add, f.clone(), 0xff)), 0xff);
        assert_eq!(chain(&ttl), Some((3, vec![(BinOp::Add, 0xff), (BinOp::BitAnd, 0xff)])));
        assert_eq!(chain(&NExpr::BinaryConst(BinOp::And, f.clone(), 1)), None, "logical and stays a tree");
        assert_eq!(chain(&NExpr::BinaryConst(BinOp::Add, Box::new(NExpr::SField(3, 8)), 1)), None);
    }

    fn fld(h: &str, f: &str) -> Value {
        json!({"type": "field", "value": [h, f]})
    }

    fn assign(dst: Value, src: Value) -> Value {
        json!({"op": "assign", "parameters": [dst, src]})
    }

    fn expr(op: &str, l: Value, r: Value) -> Value {
        json!({"type": "expression", "value": {"op": op, "left": l, "right": r}})
    }

    fn hex(v: u64) -> Value {
        json!({"type": "hexstr", "value": format!("{v:#x}")})
    }

    /// Every kind of planned write gives the PHV the primitive loop gives;
    /// actions with anything else have no plan.
    #[test]
    fn plans_write_what_the_primitives_write() {
        let doc = json!({
            "header_types": [
                {"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
                    ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false],
                    ["mcast_grp", 16, false], ["_p", 7, false]]},
                {"name": "h_t", "id": 1, "fields": [["a", 8, false], ["b", 16, false], ["s", 8, true], ["w", 48, false],
                    ["x", 64, false]]}],
            "headers": [
                {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
                {"name": "h", "id": 1, "header_type": "h_t", "metadata": false}],
            "actions": [
                {"name": "rewrite", "id": 0, "runtime_data": [{"name": "p", "bitwidth": 48}, {"name": "q", "bitwidth": 9}],
                 "primitives": [
                    assign(fld("h", "w"), json!({"type": "runtime_data", "value": 0})),
                    assign(fld("standard_metadata", "egress_spec"), json!({"type": "runtime_data", "value": 1})),
                    assign(fld("h", "x"), fld("h", "w")),
                    assign(fld("h", "b"), fld("h", "s")),
                    assign(fld("h", "a"), expr("&", expr("+", fld("h", "a"), hex(0xff)), hex(0xff))),
                    assign(fld("h", "s"), expr("-", fld("h", "s"), hex(3))),
                    assign(fld("h", "b"), expr("+", fld("h", "b"), fld("h", "a"))),
                    assign(fld("standard_metadata", "mcast_grp"), hex(0x1_0007))]},
                {"name": "drop", "id": 1, "runtime_data": [],
                 "primitives": [{"op": "mark_to_drop", "parameters": [{"type": "header", "value": "standard_metadata"}]}]},
                {"name": "strip", "id": 2, "runtime_data": [],
                 "primitives": [assign(fld("h", "a"), hex(1)), {"op": "remove_header", "parameters": [{"type": "header", "value": "h"}]}]},
                {"name": "encap", "id": 3, "runtime_data": [],
                 "primitives": [{"op": "add_header", "parameters": [{"type": "header", "value": "h"}]},
                                assign(fld("h", "b"), hex(0x800))]},
                {"name": "other", "id": 4, "runtime_data": [],
                 "primitives": [{"op": "clone_egress_pkt_to_egress", "parameters": [hex(1), hex(0)]}]}],
            "parsers": [{"name": "parser", "id": 0, "init_state": null, "parse_states": []}],
            "deparsers": [{"name": "deparser", "id": 0, "order": ["h"]}],
            "pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
                          {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
        });
        let p = json::load_value(&doc).unwrap();
        assert!((0..4).all(|a| p.action_plans[a].is_some()));
        assert!(p.action_plans[4].is_none(), "externs run through the primitives");
        // the decrement's form runs without the chain's loop; a signed
        // field's subtraction does not take it
        let ops = &p.action_plans[0].as_ref().unwrap().ops;
        assert!(matches!(ops[4], Op::AddAnd { add: 0xff, and: 0xff, .. }), "{:?}", ops[4]);
        assert!(!matches!(ops[5], Op::AddAnd { .. }), "{:?}", ops[5]);
        let mut rt = Runtime::new(&p, 1);
        let mut seed = 0x1234_5678_9abc_def0u64;
        for round in 0..200 {
            let mut pkt = Packet::new(&p);
            for (i, fm) in p.fmeta.iter().enumerate() {
                let r = crate::hash::xorshift64star(&mut seed);
                let v = match round % 4 { 0 => 0, 1 => u128::MAX, _ => r as u128 };
                pkt.phv.vals[i] = v & crate::value::mask_u128(fm.width as u32);
            }
            pkt.phv.valid[1] = round % 3 != 0;
            pkt.len_reg = 100 + round;
            let params = [Val::S((seed >> 7) as i128), Val::S((seed % 600) as i128)];
            for a in 0..4u32 {
                let mut by_prims = pkt.clone();
                Exec::new(&p, &mut rt).run_action(&mut by_prims, a, &params);
                let mut by_plan = pkt.clone();
                p.action_plans[a as usize].as_ref().unwrap().run(&p, &params[..], &mut by_plan, rt.drop_port);
                assert_eq!(by_plan.phv.vals, by_prims.phv.vals, "action {a}, round {round}");
                assert_eq!((&by_plan.phv.valid, by_plan.len_reg), (&by_prims.phv.valid, by_prims.len_reg), "action {a}");
                // as a table entry keeps them: the parameters' words
                let mut by_words = pkt.clone();
                let words = [params[0].low_u128(), params[1].low_u128()];
                p.action_plans[a as usize].as_ref().unwrap().run(&p, &words, &mut by_words, rt.drop_port);
                assert_eq!(by_words.phv.vals, by_prims.phv.vals, "action {a} from words, round {round}");
            }
        }
    }

    /// A table's hits and misses leave the PHV the primitives leave: a
    /// hit of an action with words (one parameter, the common hit), one
    /// with more parameters than an entry keeps as words (three), a miss
    /// running the default action with its data, and the hit counted.
    #[test]
    fn table_hits_and_misses_write_what_the_primitives_write() {
        let rd = |i: u64| json!({"type": "runtime_data", "value": i});
        let doc = json!({
            "header_types": [
                {"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
                    ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false],
                    ["mcast_grp", 16, false], ["_p", 7, false]]},
                {"name": "h_t", "id": 1, "fields": [["a", 8, false], ["b", 16, false], ["w", 48, false], ["x", 64, false]]}],
            "headers": [
                {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
                {"name": "h", "id": 1, "header_type": "h_t", "metadata": false}],
            "actions": [
                {"name": "set3", "id": 0, "runtime_data": [{"name": "p", "bitwidth": 8}, {"name": "q", "bitwidth": 48},
                    {"name": "r", "bitwidth": 64}],
                 "primitives": [assign(fld("h", "a"), rd(0)), assign(fld("h", "w"), rd(1)), assign(fld("h", "x"), rd(2))]},
                {"name": "set1", "id": 1, "runtime_data": [{"name": "p", "bitwidth": 64}],
                 "primitives": [assign(fld("h", "x"), rd(0))]}],
            "parsers": [{"name": "parser", "id": 0, "init_state": null, "parse_states": []}],
            "deparsers": [{"name": "deparser", "id": 0, "order": ["h"]}],
            "pipelines": [{"name": "ingress", "id": 0, "init_table": "t", "conditionals": [], "tables": [
                {"name": "t", "id": 0, "key": [{"match_type": "exact", "target": ["h", "b"], "mask": null}],
                 "match_type": "exact", "type": "simple", "max_size": 16, "with_counters": false,
                 "support_timeout": false, "direct_meters": null, "action_ids": [0, 1], "actions": ["set3", "set1"],
                 "base_default_next": null, "next_tables": {"set3": null, "set1": null},
                 "default_entry": {"action_id": 1, "action_const": false, "action_data": ["0x5"],
                                   "action_entry_const": false}}]},
                          {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
        });
        let p = json::load_value(&doc).unwrap();
        let mut rt = Runtime::new(&p, 1);
        let three = vec![Val::from(0x1ffu64), Val::from(0xaabb_ccdd_eeffu64), Val::from(u64::MAX)];
        let key = |b: u64| [MatchValue::Exact(Val::from(b).low_u128().to_be_bytes()[14..].to_vec())];
        let h3 = rt.tables[0].add(&p.tables[0], &key(3), 0, 0, three.clone()).unwrap();
        let h1 = rt.tables[0].add(&p.tables[0], &key(1), 0, 1, vec![Val::from(0x1234u64)]).unwrap();
        let b = p.field_by_name("h", "b").unwrap() as usize;
        for (kb, action, params) in [(3u64, 0u32, three.clone()), (1, 1, vec![Val::from(0x1234u64)]), (2, 1, vec![Val::from(5u64)])] {
            let mut pkt = Packet::new(&p);
            pkt.phv.vals[b] = kb as u128;
            let mut by_prims = pkt.clone();
            Exec::new(&p, &mut rt).run_action(&mut by_prims, action, &params);
            let next = Exec::new(&p, &mut rt).apply_table(&mut pkt, 0);
            assert_eq!(next, None);
            assert_eq!(pkt.phv.vals, by_prims.phv.vals, "key {kb}");
        }
        for h in [h3, h1] {
            assert_eq!(rt.tables[0].entries[h as usize].as_ref().unwrap().counter.packets, 1, "entry {h} counted its hit");
        }
    }
}
