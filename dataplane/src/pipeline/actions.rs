//! Straight-line action plans, built at load.
//!
//! Most actions of real programs only write narrow fields from their
//! parameters, other fields, constants and narrow expressions, add or
//! remove headers, mark packets to drop, count, read and write registers
//! and ask for clones, truncation or digests (forwarding, rewrites, TTL
//! decrements, encapsulations, telemetry). For those, an [`ActionPlan`]
//! lists the operations with their operands resolved: a table hit runs it
//! on the entry's data in place, with no primitive loop, no jump handling
//! and no moving of the data out of the entry. Any other action (header
//! stacks, jumps, wide fields, meters, hashes) has no plan and runs
//! through `Exec::run_prims` as before; both leave the same packet,
//! externs and log.

use super::narrow::{binary_n, eval_narrow};
use super::native_actions::{self, NativeWrites, Write, MAX_PARAMS};
use super::Packet;
use crate::externs::Externs;
use crate::program::*;
use crate::value::{mask_u128, Val};
use std::sync::Arc;

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
    /// A run of the writes above as machine code (`native_actions`).
    Native(Arc<NativeWrites>),
    /// mark_to_drop: egress_spec to the drop port, mcast_grp to 0.
    Drop,
    /// add_header / remove_header of a header known at load.
    AddHeader(HdrId),
    RemoveHeader(HdrId),
    Count { counter: u32, index: Operand },
    /// register_read into a narrow field (`mask`: the field's width).
    RegRead { dst: u32, mask: u128, reg: u32, index: Operand },
    /// register_write of a register at most 127 bits wide (`mask`: its width).
    RegWrite { reg: u32, mask: u128, index: Operand, src: Operand },
    /// clone_ingress_pkt_to_egress / clone_egress_pkt_to_egress.
    Clone { session: Operand, field_list: Operand },
    Truncate(Operand),
    Digest(Operand),
}

/// An extern operation's index or value: a constant, an action parameter
/// of at most 64 bits or a narrow expression (fields among them).
#[derive(Clone, Debug)]
enum Operand {
    Const(i128),
    Param(u32),
    Narrow(NExpr),
}

impl Operand {
    fn of(e: &Expr, a: &ActionDef) -> Option<Operand> {
        match e {
            Expr::Const(Val::S(c)) => Some(Operand::Const(*c)),
            Expr::Param(i) if a.params.get(*i as usize).is_some_and(|p| p.width <= 64) => Some(Operand::Param(*i)),
            Expr::Narrow(n) => Some(match **n {
                NExpr::Const(c) => Operand::Const(c),
                _ => Operand::Narrow((**n).clone()),
            }),
            _ => None,
        }
    }

    /// The value (two's complement in 128 bits: its low bits are what a
    /// truncation keeps).
    #[inline(always)]
    fn value<P: PlanParams + ?Sized>(&self, params: &P, pkt: &Packet) -> i128 {
        match self {
            Operand::Const(c) => *c,
            Operand::Param(i) => params.word(*i as usize) as i128,
            Operand::Narrow(e) => eval_narrow(pkt, e),
        }
    }

    /// The operand without parameters, as an expression.
    fn expr(&self) -> Option<NExpr> {
        match self {
            Operand::Const(c) => Some(NExpr::Const(*c)),
            Operand::Param(_) => None,
            Operand::Narrow(e) => Some(e.clone()),
        }
    }
}

/// What an action's extern operations use beside the packet: the
/// counters and registers, the run-time log an index out of bounds is
/// reported in, and the port mark_to_drop writes. Plans and the primitive
/// loop count and read and write registers through it alike.
pub struct ActionCtx<'r> {
    pub ext: &'r mut Externs,
    pub log: &'r mut Vec<String>,
    pub log_limit: usize,
    pub drop_port: u32,
}

impl ActionCtx<'_> {
    /// `count`: cell `i` of `counter` counts a packet of `bytes`.
    #[inline(always)]
    pub(crate) fn count(&mut self, p: &Program, counter: u32, i: usize, bytes: usize) {
        match self.ext.counters[counter as usize].get_mut(i) {
            Some(c) => c.hit(bytes),
            None => self.log(format!("counter '{}': index {i} out of bounds", p.counters[counter as usize].name)),
        }
    }

    /// `register_read`: cell `i` of `reg`, None (logged) past its end.
    #[inline(always)]
    pub(crate) fn register_read(&mut self, p: &Program, reg: u32, i: usize) -> Option<&Val> {
        if i < self.ext.registers[reg as usize].len() {
            return Some(&self.ext.registers[reg as usize][i]);
        }
        self.log(format!("register '{}': read index {i} out of bounds", p.registers[reg as usize].name));
        None
    }

    /// `register_write` of `v` (already truncated to the register's width).
    #[inline(always)]
    pub(crate) fn register_write(&mut self, p: &Program, reg: u32, i: usize, v: Val) {
        match self.ext.registers[reg as usize].get_mut(i) {
            Some(slot) => *slot = v,
            None => self.log(format!("register '{}': write index {i} out of bounds", p.registers[reg as usize].name)),
        }
    }

    #[cold]
    fn log(&mut self, s: String) {
        super::log_bounded(self.log, self.log_limit, s);
    }
}

/// An action's parameters as a plan reads them: parameter `i`'s low 128
/// bits, 0 past the end. A table entry keeps them as words ([`u128`]),
/// so a hit reads no `Val`; the default action's `Val`s read the same.
pub trait PlanParams {
    fn word(&self, i: usize) -> u128;

    /// The words themselves, where they are kept as words.
    #[inline(always)]
    fn words(&self) -> Option<&[u128]> {
        None
    }
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

    #[inline(always)]
    fn words(&self) -> Option<&[u128]> {
        Some(self)
    }
}

/// An operation of a plan other than a write, for machine code that calls
/// the interpreter's function for it (`count`, `register_read`... below)
/// with its operands computed (expressions: a plan without parameters).
#[derive(Clone, Debug)]
pub enum Call {
    Drop,
    Count { counter: u32, index: NExpr },
    /// Into narrow field `dst`, cut to its width.
    RegRead { dst: u32, reg: u32, index: NExpr },
    /// Cut to the register's width.
    RegWrite { reg: u32, index: NExpr, src: NExpr },
    AddHeader(HdrId),
    RemoveHeader(HdrId),
    Clone { session: NExpr, field_list: NExpr },
    Truncate(NExpr),
    Digest(NExpr),
}

/// A plan's part, as `ActionPlan::steps` cuts it.
#[derive(Clone, Debug)]
pub enum Step {
    /// A run of writes.
    Writes(Vec<Write>),
    /// Any other operation.
    Call(Call),
}

#[derive(Clone, Debug)]
pub struct ActionPlan {
    ops: Vec<Op>,
    /// `ops` with runs of writes as machine code, where any translated.
    native: Option<Vec<Op>>,
}

impl ActionPlan {
    /// The plan of an action whose every primitive is one a plan runs;
    /// None otherwise.
    fn new(p: &Program, a: &ActionDef) -> Option<ActionPlan> {
        let narrow = |f: u32| p.fmeta.get(f as usize).is_some_and(|m| !m.wide);
        let operand = |e: &Expr| Operand::of(e, a);
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
                Prim::Count { counter, index } => Op::Count { counter: *counter, index: operand(index)? },
                Prim::RegisterRead { dst: LValue::Field(f), reg, index } if narrow(*f) => Op::RegRead {
                    dst: *f,
                    mask: mask_u128(p.fmeta[*f as usize].width as u32),
                    reg: *reg,
                    index: operand(index)?,
                },
                Prim::RegisterWrite { reg, index, src } if p.registers.get(*reg as usize)?.width <= 127 => Op::RegWrite {
                    reg: *reg,
                    mask: mask_u128(p.registers[*reg as usize].width),
                    index: operand(index)?,
                    src: operand(src)?,
                },
                Prim::CloneI2E { session, field_list } | Prim::CloneE2E { session, field_list } => {
                    Op::Clone { session: operand(session)?, field_list: operand(field_list)? }
                }
                Prim::Truncate(e) => Op::Truncate(operand(e)?),
                Prim::GenerateDigest { learn_id, .. } => Op::Digest(operand(learn_id)?),
                _ => return None,
            };
            ops.push(op);
        }
        let native = if super::jit::enabled() { with_native_writes(p, &ops) } else { None };
        Some(ActionPlan { ops, native })
    }

    /// Runs the plan with the action's parameters `params`.
    #[inline(always)]
    pub fn run<P: PlanParams + ?Sized>(&self, p: &Program, params: &P, pkt: &mut Packet, cx: &mut ActionCtx) {
        run_ops(self.native.as_deref().unwrap_or(&self.ops), p, params, pkt, cx)
    }

    /// Forgets the machine code: the plan then runs interpreted.
    pub fn drop_native(&mut self) {
        self.native = None;
    }

    /// The plan as runs of writes and the other operations between them,
    /// in order, for machine code; None when an operation reads a
    /// parameter other than by a write.
    pub fn steps(&self) -> Option<Vec<Step>> {
        let mut out = vec![];
        for op in &self.ops {
            match (as_write(op), out.last_mut()) {
                (Some(w), Some(Step::Writes(run))) => run.push(w),
                (Some(w), _) => out.push(Step::Writes(vec![w])),
                (None, _) => out.push(Step::Call(as_call(op)?)),
            }
        }
        Some(out)
    }

    /// Writes that run as machine code (0 where the plan has none).
    pub fn native_writes(&self) -> usize {
        let writes = |op: &Op| match op {
            Op::Native(n) => n.writes,
            _ => 0,
        };
        self.native.iter().flatten().map(writes).sum()
    }
}

/// Runs a plan's operations on the action's parameters `params`.
#[inline(always)]
fn run_ops<P: PlanParams + ?Sized>(ops: &[Op], p: &Program, params: &P, pkt: &mut Packet, cx: &mut ActionCtx) {
    for op in ops {
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
            Op::Native(n) => {
                match params.words() {
                    Some(words) if words.len() >= n.params => n.run(&mut pkt.phv.vals, &pkt.phv.valid, words),
                    _ => {
                        let mut words = [0u128; MAX_PARAMS];
                        for (i, w) in words.iter_mut().enumerate().take(n.params) {
                            *w = params.word(i);
                        }
                        n.run(&mut pkt.phv.vals, &pkt.phv.valid, &words);
                    }
                }
                continue;
            }
            Op::Drop => {
                mark_to_drop(p, pkt, cx.drop_port);
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
            Op::Count { counter, index } => {
                count(p, pkt, cx, *counter, index.value(params, pkt));
                continue;
            }
            Op::RegRead { dst, mask, reg, index } => {
                register_read(p, pkt, cx, *dst, *mask, *reg, index.value(params, pkt));
                continue;
            }
            Op::RegWrite { reg, mask, index, src } => {
                let i = index.value(params, pkt);
                register_write(p, cx, *reg, *mask, i, src.value(params, pkt));
                continue;
            }
            Op::Clone { session, field_list } => {
                clone(pkt, session.value(params, pkt), field_list.value(params, pkt));
                continue;
            }
            Op::Truncate(n) => {
                truncate(pkt, n.value(params, pkt));
                continue;
            }
            Op::Digest(id) => {
                digest(pkt, id.value(params, pkt));
                continue;
            }
        };
        pkt.phv.vals[dst as usize] = v;
    }
}

/// The write an operation is, for machine code.
fn as_write(op: &Op) -> Option<Write> {
    Some(match op {
        Op::Param { dst, mask, idx } => Write::Param { dst: *dst, mask: *mask, idx: *idx },
        Op::Copy { dst, mask, src } => Write::Copy { dst: *dst, mask: *mask, src: *src },
        Op::Const { dst, value } => Write::Const { dst: *dst, value: *value },
        Op::Chain { dst, mask, field, ops } => Write::Chain { dst: *dst, mask: *mask, field: *field, ops: ops.clone() },
        Op::AddAnd { dst, mask, field, add, and } => {
            Write::Chain { dst: *dst, mask: *mask, field: *field, ops: vec![(BinOp::Add, *add), (BinOp::BitAnd, *and)] }
        }
        Op::Narrow { dst, mask, expr } => Write::Narrow { dst: *dst, mask: *mask, expr: expr.clone() },
        _ => return None,
    })
}

/// The call an operation other than a write is (None when it reads a parameter).
fn as_call(op: &Op) -> Option<Call> {
    Some(match op {
        Op::Drop => Call::Drop,
        Op::Count { counter, index } => Call::Count { counter: *counter, index: index.expr()? },
        Op::RegRead { dst, reg, index, .. } => Call::RegRead { dst: *dst, reg: *reg, index: index.expr()? },
        Op::RegWrite { reg, index, src, .. } => Call::RegWrite { reg: *reg, index: index.expr()?, src: src.expr()? },
        Op::AddHeader(h) => Call::AddHeader(*h),
        Op::RemoveHeader(h) => Call::RemoveHeader(*h),
        Op::Clone { session, field_list } => Call::Clone { session: session.expr()?, field_list: field_list.expr()? },
        Op::Truncate(n) => Call::Truncate(n.expr()?),
        Op::Digest(id) => Call::Digest(id.expr()?),
        _ => return None,
    })
}

/// `ops` with each run of writes worth a call (two writes or more, or one
/// that computes) as machine code; None where no run translates.
fn with_native_writes(p: &Program, ops: &[Op]) -> Option<Vec<Op>> {
    let mut out = Vec::with_capacity(ops.len());
    let mut translated = false;
    let mut i = 0;
    while i < ops.len() {
        let run: Vec<Write> = ops[i..].iter().map_while(as_write).collect();
        if run.is_empty() {
            out.push(ops[i].clone());
            i += 1;
            continue;
        }
        let computes = run.iter().any(|w| matches!(w, Write::Chain { .. } | Write::Narrow { .. }));
        match (run.len() >= 2 || computes).then(|| native_actions::translate(p, &run)).flatten() {
            Some(n) => {
                out.push(Op::Native(Arc::new(n)));
                translated = true;
            }
            None => out.extend_from_slice(&ops[i..i + run.len()]),
        }
        i += run.len();
    }
    translated.then_some(out)
}

/// An index's value as an index: 0 when negative, as `Val::to_usize_sat`.
#[inline(always)]
fn index(v: i128) -> usize {
    v.clamp(0, usize::MAX as i128) as usize
}

/// `count`: the cell at `i` of `counter` counts the packet.
#[inline(always)]
pub(crate) fn count(p: &Program, pkt: &Packet, cx: &mut ActionCtx, counter: u32, i: i128) {
    cx.count(p, counter, index(i), pkt.ingress_len);
}

/// `register_read` of the cell at `i` of `reg` into field `dst` (`mask`:
/// its width); nothing past the register's end.
#[inline(always)]
pub(crate) fn register_read(p: &Program, pkt: &mut Packet, cx: &mut ActionCtx, dst: u32, mask: u128, reg: u32, i: i128) {
    if let Some(v) = cx.register_read(p, reg, index(i)) {
        pkt.phv.vals[dst as usize] = v.low_u128() & mask;
    }
}

/// `register_write` of `v` (cut to `mask`, the register's width) to the
/// cell at `i` of `reg`.
#[inline(always)]
pub(crate) fn register_write(p: &Program, cx: &mut ActionCtx, reg: u32, mask: u128, i: i128, v: i128) {
    cx.register_write(p, reg, index(i), Val::S((v as u128 & mask) as i128));
}

/// The low 16 bits, as clone sessions, field lists and digests take them.
#[inline(always)]
fn id(v: i128) -> u32 {
    v as u32 & 0xffff
}

/// clone_ingress_pkt_to_egress / clone_egress_pkt_to_egress: the request.
#[inline(always)]
pub(crate) fn clone(pkt: &mut Packet, session: i128, field_list: i128) {
    pkt.clone = Some((id(session), id(field_list)));
}

/// `truncate` to `n` bytes (the least of the requests).
#[inline(always)]
pub(crate) fn truncate(pkt: &mut Packet, n: i128) {
    pkt.truncate_to = pkt.truncate_to.min(index(n));
}

/// `generate_digest` of learn list `learn_id`.
#[inline(always)]
pub(crate) fn digest(pkt: &mut Packet, learn_id: i128) {
    pkt.learn_id = id(learn_id);
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

    /// v1model's standard_metadata as the test programs declare it.
    fn std_meta_type() -> Value {
        json!({"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
            ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false],
            ["mcast_grp", 16, false], ["_p", 7, false]]})
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
                std_meta_type(),
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
                 "primitives": [{"op": "recirculate", "parameters": [hex(0)]}]},
                {"name": "ext", "id": 5, "runtime_data": [{"name": "i", "bitwidth": 8}],
                 "primitives": [
                    {"op": "count", "parameters": [{"type": "counter_array", "value": "c"}, fld("h", "a")]},
                    {"op": "register_read", "parameters": [fld("h", "b"), {"type": "register_array", "value": "r"},
                                                           json!({"type": "runtime_data", "value": 0})]},
                    {"op": "register_write", "parameters": [{"type": "register_array", "value": "r"},
                                                            expr("&", fld("h", "a"), hex(3)), expr("+", fld("h", "x"), hex(1))]},
                    {"op": "register_write", "parameters": [{"type": "register_array", "value": "r"}, fld("h", "s"),
                                                            fld("h", "s")]},
                    {"op": "clone_ingress_pkt_to_egress", "parameters": [hex(0x1_0005), fld("h", "a")]},
                    {"op": "truncate", "parameters": [fld("h", "b")]},
                    {"op": "generate_digest", "parameters": [hex(1), hex(3)]},
                    {"op": "register_read", "parameters": [fld("h", "w"), {"type": "register_array", "value": "r"}, hex(2)]}]}],
            "counter_arrays": [{"name": "c", "id": 0, "size": 4, "is_direct": false}],
            "register_arrays": [{"name": "r", "id": 0, "size": 4, "bitwidth": 32}],
            "parsers": [{"name": "parser", "id": 0, "init_state": null, "parse_states": []}],
            "deparsers": [{"name": "deparser", "id": 0, "order": ["h"]}],
            "pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
                          {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
        });
        let p = json::load_value(&doc).unwrap();
        assert!([0, 1, 2, 3, 5].iter().all(|a| p.action_plans[*a].is_some()));
        assert!(p.action_plans[4].is_none(), "recirculate runs through the primitives");
        if crate::pipeline::jit::enabled() {
            assert!(p.action_plans[0].as_ref().unwrap().native_writes() == 8, "the rewrite's writes run as machine code");
        }
        // the decrement's form runs without the chain's loop; a signed
        // field's subtraction does not take it
        let ops = &p.action_plans[0].as_ref().unwrap().ops;
        assert!(matches!(ops[4], Op::AddAnd { add: 0xff, and: 0xff, .. }), "{:?}", ops[4]);
        assert!(!matches!(ops[5], Op::AddAnd { .. }), "{:?}", ops[5]);
        let mut rt = Runtime::new(&p, 1);
        let mut plan_rt = Runtime::new(&p, 1);
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
            pkt.ingress_len = 60 + round as usize;
            for a in [0u32, 1, 2, 3, 5] {
                let mut by_prims = pkt.clone();
                Exec::new(&p, &mut rt).run_action(&mut by_prims, a, &params);
                let plan = p.action_plans[a as usize].as_ref().unwrap();
                let mut by_plan = pkt.clone();
                plan.run(&p, &params[..], &mut by_plan, &mut ctx(&mut plan_rt));
                assert_eq!(by_plan.phv.vals, by_prims.phv.vals, "action {a}, round {round}");
                assert_eq!((&by_plan.phv.valid, by_plan.len_reg), (&by_prims.phv.valid, by_prims.len_reg), "action {a}");
                assert_eq!((by_plan.clone, by_plan.truncate_to, by_plan.learn_id),
                           (by_prims.clone, by_prims.truncate_to, by_prims.learn_id), "action {a}, round {round}");
                assert_eq!(plan_rt.ext.registers, rt.ext.registers, "action {a}, round {round}");
                let counts = |r: &Runtime| r.ext.counters[0].iter().map(|c| (c.packets, c.bytes)).collect::<Vec<_>>();
                assert_eq!(counts(&plan_rt), counts(&rt), "action {a}, round {round}");
                assert_eq!(plan_rt.log, rt.log, "out-of-bounds indexes logged alike");
                // as a table entry keeps them: the parameters' words (the
                // externs' state compared after the next round's prims)
                let mut by_words = pkt.clone();
                let words = [params[0].low_u128(), params[1].low_u128()];
                let mut scratch = Runtime::new(&p, 1);
                scratch.ext = plan_rt.ext.clone();
                plan.run(&p, &words, &mut by_words, &mut ctx(&mut scratch));
                assert_eq!(by_words.phv.vals, by_prims.phv.vals, "action {a} from words, round {round}");
            }
        }
        assert!(rt.log.iter().any(|l| l.contains("out of bounds")), "the rounds reach indexes out of bounds");
        assert!(rt.ext.counters[0][0].packets > 0, "counted in bounds too");
        assert!(rt.ext.registers[0].iter().filter(|v| **v != Val::ZERO).count() > 1, "registers written");
    }

    fn ctx(rt: &mut Runtime) -> ActionCtx<'_> {
        ActionCtx { ext: &mut rt.ext, log: &mut rt.log, log_limit: rt.log_limit, drop_port: rt.drop_port }
    }

    #[test]
    fn a_register_read_past_the_end_leaves_its_field_and_logs() {
        let doc = json!({
            "header_types": [
                std_meta_type(),
                {"name": "m_t", "id": 1, "fields": [["v", 32, false], ["i", 32, false]]}],
            "headers": [
                {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
                {"name": "m", "id": 1, "header_type": "m_t", "metadata": true}],
            "actions": [{"name": "read", "id": 0, "runtime_data": [], "primitives": [
                {"op": "register_read", "parameters": [fld("m", "v"), {"type": "register_array", "value": "r"}, fld("m", "i")]}]}],
            "register_arrays": [{"name": "r", "id": 0, "size": 2, "bitwidth": 16}],
            "parsers": [{"name": "parser", "id": 0, "init_state": null, "parse_states": []}],
            "deparsers": [{"name": "deparser", "id": 0, "order": []}],
            "pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
                          {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
        });
        let p = json::load_value(&doc).unwrap();
        let plan = p.action_plans[0].as_ref().expect("a plan");
        let mut rt = Runtime::new(&p, 1);
        rt.ext.registers[0][1] = Val::from(0xbeefu64);
        let (v, i) = (p.field_by_name("m", "v").unwrap() as usize, p.field_by_name("m", "i").unwrap() as usize);
        let mut pkt = Packet::new(&p);
        pkt.phv.vals[v] = 7;
        pkt.phv.vals[i] = 1;
        plan.run(&p, &[0u128; 0], &mut pkt, &mut ctx(&mut rt));
        assert_eq!(pkt.phv.vals[v], 0xbeef);
        pkt.phv.vals[i] = 2;
        plan.run(&p, &[0u128; 0], &mut pkt, &mut ctx(&mut rt));
        assert_eq!(pkt.phv.vals[v], 0xbeef, "left as it was");
        assert_eq!(rt.log, vec!["register 'r': read index 2 out of bounds".to_string()]);
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
                std_meta_type(),
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
