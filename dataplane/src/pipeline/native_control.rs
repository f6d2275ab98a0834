//! A pipeline's control flow translated to machine code when the program
//! loads (with Cranelift).
//!
//! p4c turns a control's straight-line code into keyless tables (`tbl_*`)
//! whose constant default action assigns fields, and its `if`s into
//! conditionals on a field and a constant or a header's validity. The
//! reference DUT's egress walks a dozen of each per packet; interpreted,
//! each is a dispatch, a table's state and plan looked up, and a jump
//! through the plan's operations. Here a pipeline becomes one function
//! with a block per node: a conditional whose test has one of
//! `cond::Test`'s shapes is a compare and a branch, and a keyless table
//! whose constant default action has a plan and no parameters is that
//! plan inline, behind a check that the table holds no entry (a keyless
//! table may be given one; it then goes the interpreter's way): its writes
//! as machine code (`native_actions`), each other operation (a count, a
//! register read or write, add_header, mark_to_drop, a clone...) a call of
//! the interpreter's function for it (`actions::count`...) with its
//! operands computed by the code. Every other node is a call back into
//! the interpreter (`Exec::step`), which applies it exactly as the
//! interpreted walk does and returns the next node, which the code then
//! jumps to. So the interpreter stays the one definition of what a node
//! and an operation do.
//!
//! A pipeline is translated when more of its nodes translate than call
//! back (a call back costs about what a translated node saves: an L2/L3
//! program of three tables and one `if` stays interpreted), and only
//! without cycles (p4c emits none; the interpreter bounds a cycle's steps
//! instead).
#![allow(unsafe_code)]

use super::actions::{self, Call, Step};
use super::cond::Test;
use super::exec::{next_of, Exec};
use super::jit::{self, Code};
use super::native_actions::{self, Emit, Write};
use super::Packet;
use crate::program::{BinOp, NodeRef, Program};
use crate::tables::{fixed_next, TableState};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, AbiParam, Block, InstBuilder, MemFlagsData, Signature, Value};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::{FunctionBuilder, Switch};
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What the code returns when the pipeline is done (or the packet exited).
const DONE: u32 = u32::MAX;
/// What the call back returns when the node exited the packet (or
/// panicked): the code returns at once.
const EXIT: u32 = u32::MAX - 1;

/// (PHV values, validity, the tables' states, call-back context, call
/// back) -> DONE, or the node the interpreter goes on from.
type Entry = unsafe extern "C" fn(*mut u128, *const bool, *const TableState, *mut Ctx, NodeFn) -> u32;

/// (context, node) -> the next node, DONE for none, or EXIT.
type NodeFn = unsafe extern "C" fn(*mut Ctx, u32) -> u32;

/// A pipeline's control flow as machine code (see the module's comment).
pub struct NativeControl {
    entry: Entry,
    /// Holds the code `entry` points to.
    _code: Code,
    /// The pipeline's first node.
    pub init: NodeRef,
    /// Conditionals translated to a compare and tables to their plans.
    pub tests: usize,
    pub inlined: usize,
    /// The program's sizes the code indexes within.
    fields: usize,
    headers: usize,
    tables: usize,
}

impl std::fmt::Debug for NativeControl {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "NativeControl({:?}: {} tests, {} tables inlined)", self.init, self.tests, self.inlined)
    }
}

/// How a node is translated.
enum Node {
    Test(Test, Option<NodeRef>, Option<NodeRef>),
    /// A keyless table's default plan and the node after it.
    Plan(Vec<Step>, Option<NodeRef>),
    /// A call back, and the nodes it may return.
    Call(Vec<Option<NodeRef>>),
}

/// The call back's view of the interpreter: raw, as the native code
/// writes the same PHV between calls.
struct Ctx {
    ex: *mut Exec<'static>,
    pkt: *mut Packet,
    panic: Option<Box<dyn Any + Send>>,
}

impl NativeControl {
    /// Runs the pipeline from its first node; returns None when it is
    /// done (or the packet exited), else the node the interpreter goes on
    /// from.
    pub fn run(&self, ex: &mut Exec, pkt: &mut Packet) -> Option<NodeRef> {
        assert!(pkt.phv.vals.len() >= self.fields && pkt.phv.valid.len() >= self.headers);
        assert!(ex.rt.tables.len() >= self.tables);
        let vals = pkt.phv.vals.as_mut_ptr();
        let valid = pkt.phv.valid.as_ptr();
        let tables = ex.rt.tables.as_ptr();
        let mut ctx = Ctx { ex: ex as *mut Exec as *mut Exec<'static>, pkt, panic: None };
        // SAFETY: the code reads and writes slots below `fields`, validity
        // below `headers` and the entry counts of tables below `tables`,
        // all checked above; the PHV's and the tables' vectors do not grow
        // or move while it runs (nodes change values, not sizes).
        let r = unsafe { (self.entry)(vals, valid, tables, &mut ctx, call_node) };
        if let Some(p) = ctx.panic.take() {
            std::panic::resume_unwind(p);
        }
        decode(self.tables as u32, r)
    }
}

/// A node's number: tables first, then conditionals.
fn encode(tables: u32, n: Option<NodeRef>) -> u32 {
    match n {
        None => DONE,
        Some(NodeRef::Table(t)) => t,
        Some(NodeRef::Cond(c)) => tables + c,
    }
}

fn decode(tables: u32, code: u32) -> Option<NodeRef> {
    match code {
        DONE | EXIT => None,
        t if t < tables => Some(NodeRef::Table(t)),
        c => Some(NodeRef::Cond(c - tables)),
    }
}

/// Applies one node in the interpreter for the native code.
unsafe extern "C" fn call_node(ctx: *mut Ctx, node: u32) -> u32 {
    // SAFETY: `ctx` is the context `NativeControl::run` passed, alive for
    // the call; the native code holds no reference into it.
    let ctx = unsafe { &mut *ctx };
    let (ex, pkt) = unsafe { (&mut *ctx.ex, &mut *ctx.pkt) };
    let tables = ex.prog.tables.len() as u32;
    match catch_unwind(AssertUnwindSafe(|| ex.step(pkt, decode(tables, node).expect("a node")))) {
        Ok(_) if pkt.exit => EXIT,
        Ok(next) => encode(tables, next),
        Err(p) => {
            ctx.panic = Some(p);
            EXIT
        }
    }
}

/// `f` on the interpreter's action context for the native code; 0, or
/// EXIT when it panicked.
fn guarded(ctx: *mut Ctx, f: impl FnOnce(&Program, &mut Packet, &mut actions::ActionCtx)) -> u32 {
    // SAFETY: as in `call_node`.
    let ctx = unsafe { &mut *ctx };
    let (ex, pkt) = unsafe { (&mut *ctx.ex, &mut *ctx.pkt) };
    match catch_unwind(AssertUnwindSafe(|| ex.with_action_ctx(pkt, f))) {
        Ok(()) => 0,
        Err(p) => {
            ctx.panic = Some(p);
            EXIT
        }
    }
}

/// An i128 passed as its two halves.
fn join(lo: u64, hi: u64) -> i128 {
    ((hi as u128) << 64 | lo as u128) as i128
}

/// The calls of `Call`'s operations: (context, operands...) -> 0, or EXIT.
unsafe extern "C" fn call_count(ctx: *mut Ctx, counter: u32, lo: u64, hi: u64) -> u32 {
    guarded(ctx, |p, pkt, cx| actions::count(p, pkt, cx, counter, join(lo, hi)))
}

unsafe extern "C" fn call_reg_read(ctx: *mut Ctx, reg: u32, dst: u32, lo: u64, hi: u64) -> u32 {
    guarded(ctx, |p, pkt, cx| {
        let mask = crate::value::mask_u128(p.fmeta[dst as usize].width as u32);
        actions::register_read(p, pkt, cx, dst, mask, reg, join(lo, hi))
    })
}

unsafe extern "C" fn call_reg_write(ctx: *mut Ctx, reg: u32, lo: u64, hi: u64, vlo: u64, vhi: u64) -> u32 {
    guarded(ctx, |p, _, cx| {
        let mask = crate::value::mask_u128(p.registers[reg as usize].width);
        actions::register_write(p, cx, reg, mask, join(lo, hi), join(vlo, vhi))
    })
}

unsafe extern "C" fn call_header(ctx: *mut Ctx, h: u32, add: u32) -> u32 {
    guarded(ctx, |p, pkt, _| match add {
        0 => actions::remove_header(p, pkt, h),
        _ => actions::add_header(p, pkt, h),
    })
}

unsafe extern "C" fn call_drop(ctx: *mut Ctx) -> u32 {
    guarded(ctx, |p, pkt, cx| actions::mark_to_drop(p, pkt, cx.drop_port))
}

unsafe extern "C" fn call_clone(ctx: *mut Ctx, slo: u64, shi: u64, flo: u64, fhi: u64) -> u32 {
    guarded(ctx, |_, pkt, _| actions::clone(pkt, join(slo, shi), join(flo, fhi)))
}

unsafe extern "C" fn call_truncate(ctx: *mut Ctx, lo: u64, hi: u64) -> u32 {
    guarded(ctx, |_, pkt, _| actions::truncate(pkt, join(lo, hi)))
}

unsafe extern "C" fn call_digest(ctx: *mut Ctx, lo: u64, hi: u64) -> u32 {
    guarded(ctx, |_, pkt, _| actions::digest(pkt, join(lo, hi)))
}

/// The pipeline starting at `init` as machine code; None where there is
/// nothing to gain (no more nodes translate than call back: a call back
/// costs about what a translated node saves), the graph has a cycle, or
/// Cranelift is not available.
pub fn compile(p: &Program, init: Option<NodeRef>) -> Option<NativeControl> {
    let init = init?;
    let order = topological(p, init)?;
    let nodes: Vec<(NodeRef, Node)> = order.iter().map(|n| (*n, translate(p, *n))).collect();
    let tests = nodes.iter().filter(|(_, n)| matches!(n, Node::Test(..))).count();
    let inlined = nodes.iter().filter(|(_, n)| matches!(n, Node::Plan(..))).count();
    let calls = nodes.len() - tests - inlined;
    if tests + inlined <= calls || !jit::slots_addressable(p.fields.len()) {
        return None;
    }
    let code = jit::compile(5, |b, args, target| Emitter::new(p, b, args).emit(&nodes, target))?;
    // SAFETY: the function was built with exactly `Entry`'s signature.
    let entry = unsafe { std::mem::transmute::<*const u8, Entry>(code.entry) };
    Some(NativeControl {
        entry,
        _code: code,
        init,
        tests,
        inlined,
        fields: p.fields.len(),
        headers: p.headers.len(),
        tables: p.tables.len(),
    })
}

/// The nodes reachable from `init`, each before the nodes after it; None
/// for a graph with a cycle.
fn topological(p: &Program, init: NodeRef) -> Option<Vec<NodeRef>> {
    // 0: not seen, 1: on the path, 2: done
    let index = |n: NodeRef| match n {
        NodeRef::Table(t) => t as usize,
        NodeRef::Cond(c) => p.tables.len() + c as usize,
    };
    let mut state = vec![0u8; p.tables.len() + p.conds.len()];
    let mut post = vec![];
    let mut stack = vec![(init, false)];
    while let Some((n, leaving)) = stack.pop() {
        let i = index(n);
        if leaving {
            state[i] = 2;
            post.push(n);
            continue;
        }
        match state[i] {
            1 => return None,
            2 => continue,
            _ => {}
        }
        state[i] = 1;
        stack.push((n, true));
        for s in successors(p, n).into_iter().flatten() {
            match state[index(s)] {
                1 => return None,
                0 => stack.push((s, false)),
                _ => {}
            }
        }
    }
    post.reverse();
    Some(post)
}

/// Every node a node may lead to (None: the pipeline's end).
fn successors(p: &Program, n: NodeRef) -> Vec<Option<NodeRef>> {
    let mut out = match n {
        NodeRef::Cond(c) => vec![p.conds[c as usize].true_next, p.conds[c as usize].false_next],
        NodeRef::Table(t) => {
            let t = &p.tables[t as usize];
            let mut v = vec![t.base_default_next];
            v.extend(t.next_list.iter().map(|(_, n)| *n));
            if let Some((h, m)) = t.next_hit_miss {
                v.extend([h, m]);
            }
            v
        }
    };
    let mut seen = vec![];
    out.retain(|n| {
        let new = !seen.contains(n);
        seen.push(*n);
        new
    });
    out
}

fn translate(p: &Program, n: NodeRef) -> Node {
    match n {
        NodeRef::Cond(c) => match &p.cond_tests[c as usize] {
            Some(t) if test_translatable(p, t) => {
                Node::Test(t.clone(), p.conds[c as usize].true_next, p.conds[c as usize].false_next)
            }
            _ => Node::Call(successors(p, n)),
        },
        NodeRef::Table(t) => match keyless_plan(p, t) {
            Some(w) => w,
            None => Node::Call(successors(p, n)),
        },
    }
}

/// A keyless table whose constant default action has a plan, no
/// parameters and writes that translate: the plan's steps and the node
/// after them.
fn keyless_plan(p: &Program, ti: u32) -> Option<Node> {
    let t = &p.tables[ti as usize];
    let d = t.default.as_ref()?;
    if !t.keys.is_empty() || !d.action_const || !p.actions.get(d.action as usize)?.params.is_empty() {
        return None;
    }
    let steps = p.action_plans.get(d.action as usize)?.as_ref()?.steps()?;
    let translates = |s: &Step| match s {
        Step::Writes(w) => native_actions::translatable(p, w) && !w.iter().any(|w| matches!(w, Write::Param { .. })),
        Step::Call(c) => call_translates(p, c),
    };
    if !steps.iter().all(translates) {
        return None;
    }
    let next = fixed_next(t).unwrap_or_else(|| next_of(t, Some(d.action), false));
    Some(Node::Plan(steps, next))
}

/// Whether a call's operands translate and its indexes are the program's.
fn call_translates(p: &Program, c: &Call) -> bool {
    let e = |x: &crate::program::NExpr| native_actions::expr_translates(p, x);
    match c {
        Call::Count { counter, index } => (*counter as usize) < p.counters.len() && e(index),
        Call::RegRead { dst, reg, index } => {
            (*dst as usize) < p.fields.len() && (*reg as usize) < p.registers.len() && e(index)
        }
        Call::RegWrite { reg, index, src } => (*reg as usize) < p.registers.len() && e(index) && e(src),
        Call::AddHeader(h) | Call::RemoveHeader(h) => (*h as usize) < p.headers.len(),
        Call::Drop => true,
        Call::Clone { session, field_list } => e(session) && e(field_list),
        Call::Truncate(x) | Call::Digest(x) => e(x),
    }
}

fn test_translatable(p: &Program, t: &Test) -> bool {
    let field = |f: &u32| (*f as usize) < p.fields.len();
    match t {
        Test::Valid(h) => (*h as usize) < p.headers.len(),
        Test::FieldConst(_, f, _) | Test::AnyBits(f, _) => field(f),
        Test::Fields(_, f, g) => field(f) && field(g),
        Test::Not(a) => test_translatable(p, a),
        Test::And(a, b) | Test::Or(a, b) => test_translatable(p, a) && test_translatable(p, b),
    }
}

/// The function being built.
struct Emitter<'p, 'b> {
    p: &'p Program,
    b: FunctionBuilder<'b>,
    vals: Value,
    valid: Value,
    tables: Value,
    ctx: Value,
    call: Value,
}

impl<'p, 'b> Emitter<'p, 'b> {
    fn new(p: &'p Program, b: FunctionBuilder<'b>, args: &[Value]) -> Self {
        Emitter { p, b, vals: args[0], valid: args[1], tables: args[2], ctx: args[3], call: args[4] }
    }

    fn emit(mut self, nodes: &[(NodeRef, Node)], target: TargetFrontendConfig) {
        let ntables = self.p.tables.len() as u32;
        let blocks: Vec<(u32, Block)> = nodes.iter().map(|(n, _)| (encode(ntables, Some(*n)), self.b.create_block())).collect();
        let done = self.b.create_block();
        let resume = self.b.create_block();
        self.b.append_block_param(resume, types::I32);
        let block_of = |n: Option<NodeRef>| match n {
            None => done,
            Some(n) => blocks.iter().find(|(c, _)| *c == encode(ntables, Some(n))).expect("every reachable node has a block").1,
        };
        // the call back is an `extern "C"` function: the host's convention
        let mut sig = Signature::new(target.default_call_conv);
        sig.params.extend([AbiParam::new(types::I64), AbiParam::new(types::I32)]);
        sig.returns.push(AbiParam::new(types::I32));
        let sig = self.b.import_signature(sig);
        // the entry block falls into the first node's
        let first = blocks[0].1;
        self.b.ins().jump(first, &[]);
        for ((n, node), (_, block)) in nodes.iter().zip(&blocks) {
            self.b.switch_to_block(*block);
            let code = encode(ntables, Some(*n));
            match node {
                Node::Test(t, yes, no) => {
                    let v = self.test(t);
                    self.b.ins().brif(v, block_of(*yes), &[], block_of(*no), &[]);
                }
                Node::Plan(steps, next) => {
                    let NodeRef::Table(ti) = n else { unreachable!("plans are a table's") };
                    let count = self.entry_count(*ti);
                    let inline = self.b.create_block();
                    let call = self.b.create_block();
                    self.b.ins().brif(count, call, &[], inline, &[]);
                    self.b.switch_to_block(inline);
                    for step in steps {
                        match step {
                            Step::Writes(w) => Emit { b: &mut self.b, vals: self.vals, valid: self.valid }.writes(w, None),
                            Step::Call(c) => self.call(c, done, target),
                        }
                    }
                    self.b.ins().jump(block_of(*next), &[]);
                    self.b.switch_to_block(call);
                    let succ = successors(self.p, *n);
                    self.call_and_dispatch(sig, code, &succ, &block_of, done, resume);
                }
                Node::Call(succ) => self.call_and_dispatch(sig, code, succ, &block_of, done, resume),
            }
        }
        self.b.switch_to_block(done);
        let r = self.b.ins().iconst(types::I32, DONE as i64);
        self.b.ins().return_(&[r]);
        self.b.switch_to_block(resume);
        let r = self.b.block_params(resume)[0];
        self.b.ins().return_(&[r]);
        self.b.seal_all_blocks();
        self.b.finalize(target);
    }

    /// Calls the interpreter for node `code` and jumps to the node it
    /// returns (`done` at the end or on exit; `resume` with any node not
    /// among `succ`, which cannot happen but is handed over, not assumed).
    fn call_and_dispatch(
        &mut self,
        sig: cranelift_codegen::ir::SigRef,
        code: u32,
        succ: &[Option<NodeRef>],
        block_of: &dyn Fn(Option<NodeRef>) -> Block,
        done: Block,
        resume: Block,
    ) {
        let ntables = self.p.tables.len() as u32;
        let node = self.b.ins().iconst(types::I32, code as i64);
        let call = self.b.ins().call_indirect(sig, self.call, &[self.ctx, node]);
        let next = self.b.inst_results(call)[0];
        let other = self.b.create_block();
        let mut sw = Switch::new();
        sw.set_entry(EXIT as u128, done);
        for s in succ {
            sw.set_entry(encode(ntables, *s) as u128, block_of(*s));
        }
        sw.emit(&mut self.b, next, other);
        self.b.switch_to_block(other);
        self.b.ins().jump(resume, &[next.into()]);
    }

    /// A `Call`: its operands computed here, the interpreter's function
    /// for it called (at its address), then on in a new block (to `done`
    /// when it panicked).
    fn call(&mut self, c: &Call, done: Block, target: TargetFrontendConfig) {
        let (f, args): (usize, Vec<Value>) = match c {
            Call::Count { counter, index } => {
                let (lo, hi) = self.operand(index);
                (call_count as *const () as usize, vec![self.u32(*counter), lo, hi])
            }
            Call::RegRead { dst, reg, index } => {
                let (lo, hi) = self.operand(index);
                (call_reg_read as *const () as usize, vec![self.u32(*reg), self.u32(*dst), lo, hi])
            }
            Call::RegWrite { reg, index, src } => {
                let (lo, hi) = self.operand(index);
                let (vlo, vhi) = self.operand(src);
                (call_reg_write as *const () as usize, vec![self.u32(*reg), lo, hi, vlo, vhi])
            }
            Call::AddHeader(h) => (call_header as *const () as usize, vec![self.u32(*h), self.u32(1)]),
            Call::RemoveHeader(h) => (call_header as *const () as usize, vec![self.u32(*h), self.u32(0)]),
            Call::Drop => (call_drop as *const () as usize, vec![]),
            Call::Clone { session, field_list } => {
                let (slo, shi) = self.operand(session);
                let (flo, fhi) = self.operand(field_list);
                (call_clone as *const () as usize, vec![slo, shi, flo, fhi])
            }
            Call::Truncate(n) => {
                let (lo, hi) = self.operand(n);
                (call_truncate as *const () as usize, vec![lo, hi])
            }
            Call::Digest(id) => {
                let (lo, hi) = self.operand(id);
                (call_digest as *const () as usize, vec![lo, hi])
            }
        };
        let mut sig = Signature::new(target.default_call_conv);
        sig.params.push(AbiParam::new(types::I64));
        sig.params.extend(args.iter().map(|a| AbiParam::new(self.b.func.dfg.value_type(*a))));
        sig.returns.push(AbiParam::new(types::I32));
        let sig = self.b.import_signature(sig);
        let f = self.b.ins().iconst(types::I64, f as i64);
        let call = self.b.ins().call_indirect(sig, f, &[&[self.ctx], &args[..]].concat());
        let r = self.b.inst_results(call)[0];
        let on = self.b.create_block();
        self.b.ins().brif(r, done, &[], on, &[]);
        self.b.switch_to_block(on);
    }

    /// An operand's value as its two 64-bit halves.
    fn operand(&mut self, e: &crate::program::NExpr) -> (Value, Value) {
        let v = Emit { b: &mut self.b, vals: self.vals, valid: self.valid }.expr(e);
        let (lo, hi) = self.b.ins().isplit(v);
        (lo, hi)
    }

    fn u32(&mut self, v: u32) -> Value {
        self.b.ins().iconst(types::I32, v as i64)
    }

    /// Non-zero when table `t` holds entries.
    fn entry_count(&mut self, t: u32) -> Value {
        let at = t as usize * std::mem::size_of::<TableState>() + TableState::COUNT_OFFSET;
        self.b.ins().load(types::I64, MemFlagsData::trusted(), self.tables, at as i32)
    }

    /// A test's truth as an 8-bit 0 or 1, as `Test::eval` answers.
    fn test(&mut self, t: &Test) -> Value {
        match t {
            Test::Valid(h) => self.b.ins().load(types::I8, MemFlagsData::trusted(), self.valid, *h as i32),
            Test::FieldConst(op, f, c) => {
                let x = self.field(*f);
                let c = self.constant(*c as i128);
                self.b.ins().icmp(unsigned(*op), x, c)
            }
            Test::Fields(op, f, g) => {
                let (x, y) = (self.field(*f), self.field(*g));
                self.b.ins().icmp(unsigned(*op), x, y)
            }
            Test::AnyBits(f, m) => {
                let x = self.field(*f);
                let m = self.constant(*m as i128);
                let x = self.b.ins().band(x, m);
                let zero = self.constant(0);
                self.b.ins().icmp(IntCC::NotEqual, x, zero)
            }
            Test::Not(a) => {
                let v = self.test(a);
                self.b.ins().bxor_imm_u(v, 1)
            }
            Test::And(a, b) => {
                let (x, y) = (self.test(a), self.test(b));
                self.b.ins().band(x, y)
            }
            Test::Or(a, b) => {
                let (x, y) = (self.test(a), self.test(b));
                self.b.ins().bor(x, y)
            }
        }
    }

    fn field(&mut self, f: u32) -> Value {
        Emit { b: &mut self.b, vals: self.vals, valid: self.valid }.field(f)
    }

    fn constant(&mut self, c: i128) -> Value {
        Emit { b: &mut self.b, vals: self.vals, valid: self.valid }.constant(c)
    }
}

/// `cond::Test`'s comparison on stored (unsigned) bits.
fn unsigned(op: BinOp) -> IntCC {
    match op {
        BinOp::Eq => IntCC::Equal,
        BinOp::Ne => IntCC::NotEqual,
        BinOp::Lt => IntCC::UnsignedLessThan,
        BinOp::Le => IntCC::UnsignedLessThanOrEqual,
        BinOp::Gt => IntCC::UnsignedGreaterThan,
        _ => IntCC::UnsignedGreaterThanOrEqual,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzzing::{interpreted, Rng};
    use crate::json;
    use crate::pipeline::Runtime;
    use crate::program::MatchValue;
    use crate::value::Val;
    use serde_json::{json, Value};

    fn fld(h: &str, f: &str) -> Value {
        json!({"type": "field", "value": [h, f]})
    }

    fn hex(v: i64) -> Value {
        json!({"type": "hexstr", "value": format!("{v:#x}")})
    }

    fn expr(op: &str, l: Value, r: Value) -> Value {
        json!({"type": "expression", "value": {"op": op, "left": l, "right": r}})
    }

    fn assign(dst: Value, src: Value) -> Value {
        json!({"op": "assign", "parameters": [dst, src]})
    }

    /// A keyless table p4c-style: its constant default action and the node after it.
    fn keyless(name: &str, id: u32, action: (&str, u32), next: Value) -> Value {
        json!({"name": name, "id": id, "key": [], "match_type": "exact", "type": "simple", "max_size": 1024,
               "with_counters": false, "support_timeout": false, "direct_meters": null,
               "action_ids": [action.1], "actions": [action.0], "base_default_next": next,
               "next_tables": {action.0: next},
               "default_entry": {"action_id": action.1, "action_const": true, "action_data": [], "action_entry_const": true}})
    }

    /// Ingress: `if (h.a == 5) tbl_ab; if (h.isValid() && m.x < 3) t_fwd.apply(); tbl_c; tbl_x;`
    /// where tbl_ab and tbl_c are keyless tables of writes, tbl_x one of
    /// writes between externs (count, register write and read, clone,
    /// truncate, digest, remove_header, mark_to_drop), and t_fwd matches
    /// h.b exactly to forward or exit.
    fn program() -> Program {
        let doc = json!({
            "header_types": [
                {"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
                    ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false], ["_p", 5, false]]},
                {"name": "h_t", "id": 1, "fields": [["a", 8, false], ["b", 16, false], ["c", 32, false]]},
                {"name": "m_t", "id": 2, "fields": [["x", 8, false], ["y", 16, false]]}],
            "headers": [
                {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
                {"name": "h", "id": 1, "header_type": "h_t", "metadata": false},
                {"name": "m", "id": 2, "header_type": "m_t", "metadata": true}],
            "actions": [
                {"name": "set_ab", "id": 0, "runtime_data": [], "primitives": [
                    assign(fld("h", "a"), expr("&", expr("+", fld("h", "a"), hex(0xff)), hex(0xff))),
                    assign(fld("h", "b"), expr("&", expr("<<", fld("h", "b"), hex(2)), hex(0xffff))),
                    assign(fld("m", "y"), fld("m", "x"))]},
                {"name": "set_c", "id": 1, "runtime_data": [], "primitives": [
                    assign(fld("h", "c"), expr("&", expr(">>", fld("h", "c"), fld("h", "a")), hex(0xffff_ffff)))]},
                {"name": "fwd", "id": 2, "runtime_data": [{"name": "p", "bitwidth": 9}], "primitives": [
                    assign(fld("standard_metadata", "egress_spec"), json!({"type": "runtime_data", "value": 0}))]},
                {"name": "quit", "id": 3, "runtime_data": [], "primitives": [{"op": "exit", "parameters": []}]},
                {"name": "NoAction", "id": 4, "runtime_data": [], "primitives": []},
                {"name": "externs", "id": 5, "runtime_data": [], "primitives": [
                    json!({"op": "count", "parameters": [{"type": "counter_array", "value": "c0"}, fld("m", "x")]}),
                    assign(fld("m", "y"), expr("&", expr("+", fld("m", "y"), fld("h", "a")), hex(0xffff))),
                    json!({"op": "register_write", "parameters": [{"type": "register_array", "value": "r0"},
                        fld("m", "x"), fld("m", "y")]}),
                    json!({"op": "register_read", "parameters": [fld("h", "b"), {"type": "register_array", "value": "r0"},
                        expr("&", expr("+", fld("m", "x"), hex(1)), hex(0xff))]}),
                    assign(fld("m", "x"), expr("&", expr("+", fld("h", "b"), hex(1)), hex(0xff))),
                    json!({"op": "clone_egress_pkt_to_egress", "parameters": [
                        expr("&", expr("+", fld("m", "x"), fld("h", "a")), hex(0xffff)), fld("m", "y")]}),
                    json!({"op": "truncate", "parameters": [fld("h", "c")]}),
                    json!({"op": "generate_digest", "parameters": [hex(0x400), fld("h", "a")]}),
                    json!({"op": "remove_header", "parameters": [{"type": "header", "value": "h"}]}),
                    json!({"op": "mark_to_drop", "parameters": [{"type": "header", "value": "standard_metadata"}]})]}],
            "counter_arrays": [{"name": "c0", "id": 0, "is_direct": false, "size": 6}],
            "register_arrays": [{"name": "r0", "id": 0, "bitwidth": 16, "size": 6}],
            "parsers": [{"name": "parser", "id": 0, "init_state": null, "parse_states": []}],
            "deparsers": [{"name": "deparser", "id": 0, "order": ["h"]}],
            "pipelines": [
                {"name": "ingress", "id": 0, "init_table": "node_a", "conditionals": [
                    {"name": "node_a", "id": 0, "expression": expr("==", fld("h", "a"), hex(5)),
                     "true_next": "tbl_ab", "false_next": "node_v"},
                    {"name": "node_v", "id": 1,
                     "expression": expr("and", json!({"type": "expression", "value": {"op": "d2b", "left": null,
                         "right": {"type": "expression", "value": {"op": "valid", "left": null,
                             "right": {"type": "header", "value": "h"}}}}}),
                         expr("<", fld("m", "x"), hex(3))),
                     "true_next": "t_fwd", "false_next": "tbl_c"}],
                 "tables": [
                    keyless("tbl_ab", 0, ("set_ab", 0), json!("node_v")),
                    keyless("tbl_c", 1, ("set_c", 1), json!("tbl_x")),
                    {"name": "t_fwd", "id": 2, "key": [{"match_type": "exact", "target": ["h", "b"], "mask": null}],
                     "match_type": "exact", "type": "simple", "max_size": 16, "with_counters": false,
                     "support_timeout": false, "direct_meters": null, "action_ids": [2, 3, 4],
                     "actions": ["fwd", "quit", "NoAction"], "base_default_next": "tbl_c",
                     "next_tables": {"fwd": "tbl_c", "quit": "tbl_c", "NoAction": "tbl_c"},
                     "default_entry": {"action_id": 4, "action_const": false, "action_data": [],
                                       "action_entry_const": false}},
                    keyless("tbl_x", 3, ("externs", 5), Value::Null)]},
                {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
        });
        json::load_value(&doc).unwrap()
    }

    fn runtime(p: &Program) -> Runtime {
        let mut rt = Runtime::new(p, 1);
        let t = &p.tables[2];
        for (b, a, data) in [(1u16, 2u32, vec![Val::from(3u64)]), (2, 3, vec![])] {
            rt.tables[2].add(t, &[MatchValue::Exact(b.to_be_bytes().to_vec())], 0, a, data).unwrap();
        }
        rt
    }

    /// Random PHVs through the native pipeline and the interpreter; returns
    /// how often h.c was shifted (tbl_c ran) and how often the packet exited.
    fn compare(native: &Program, rt_native: &mut Runtime, plain: &Program, rt_plain: &mut Runtime) -> (usize, usize) {
        let mut rng = Rng::new(7);
        let (c, b) = (native.field_by_name("h", "c").unwrap() as usize, native.field_by_name("h", "b").unwrap() as usize);
        let (mut shifted, mut exited) = (0, 0);
        for round in 0..3000 {
            let mut pkt = Packet::new(native);
            for (i, m) in native.fmeta.iter().enumerate() {
                let v = if rng.below(2) == 0 { rng.below(8) as u128 } else { rng.next_u64() as u128 };
                pkt.phv.vals[i] = v & crate::value::mask_u128(m.width as u32);
            }
            pkt.phv.vals[b] = rng.below(4) as u128;
            pkt.phv.vals[c] = 0xffff_ffff;
            pkt.phv.valid[1] = rng.below(4) != 0;
            let mut by_plain = pkt.clone();
            Exec::new(native, rt_native).apply_pipeline(&mut pkt, native.ingress.init);
            Exec::new(plain, rt_plain).apply_pipeline(&mut by_plain, plain.ingress.init);
            assert_eq!(pkt.phv.vals, by_plain.phv.vals, "round {round}");
            assert_eq!(pkt.phv.valid, by_plain.phv.valid, "round {round}");
            assert_eq!(pkt.len_reg, by_plain.len_reg, "round {round}");
            let requests = |p: &Packet| (p.clone, p.truncate_to, p.learn_id);
            assert_eq!(requests(&pkt), requests(&by_plain), "round {round}");
            assert!(!pkt.exit, "exit is cleared at the pipeline's end");
            shifted += (pkt.phv.vals[c] != 0xffff_ffff) as usize;
            exited += (pkt.phv.vals[b] == 2 && pkt.phv.vals[c] == 0xffff_ffff) as usize;
        }
        assert_eq!(rt_native.ext.counters, rt_plain.ext.counters);
        assert_eq!(rt_native.ext.registers, rt_plain.ext.registers);
        assert_eq!(rt_native.log, rt_plain.log);
        (shifted, exited)
    }

    #[test]
    fn a_pipeline_runs_as_the_interpreter_walks_it() {
        let p = program();
        let native = p.native_control(p.ingress.init).expect("translated");
        assert_eq!((native.tests, native.inlined), (2, 3), "both conditionals, the three keyless tables");
        let plain = interpreted(p.clone());
        assert!(plain.native_control(plain.ingress.init).is_none());
        let (shifted, exited) = compare(&p, &mut runtime(&p), &plain, &mut runtime(&plain));
        assert!(shifted > 500 && exited > 50, "tbl_c ran {shifted} times, t_fwd exited {exited} times");
    }

    #[test]
    fn a_keyless_table_given_an_entry_goes_the_interpreters_way() {
        let p = program();
        let plain = interpreted(p.clone());
        let (mut rt, mut rt_plain) = (runtime(&p), runtime(&plain));
        for (prog, rt) in [(&p, &mut rt), (&plain, &mut rt_plain)] {
            // the entry runs NoAction: tbl_c no longer shifts h.c
            rt.tables[1].add(&prog.tables[1], &[], 0, 4, vec![]).unwrap();
        }
        let (shifted, _) = compare(&p, &mut rt, &plain, &mut rt_plain);
        assert_eq!(shifted, 0, "the entry's action ran, not the inlined default");
    }

    #[test]
    fn a_graph_with_a_cycle_is_not_translated() {
        let mut p = program();
        assert!(compile(&p, p.ingress.init).is_some());
        p.tables[1].base_default_next = Some(NodeRef::Cond(0));
        p.tables[1].next_list = vec![(1, Some(NodeRef::Cond(0)))];
        assert!(compile(&p, p.ingress.init).is_none());
    }
}
