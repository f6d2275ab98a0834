//! The parser translated to machine code when the program loads (with
//! Cranelift), for the parse states whose work is fixed: extractions of
//! fixed headers whose fields are each one load (headers with an extract
//! plan, outside unions), `set`s of a field of at most 64 bits from a
//! constant, an unsigned field of at most 64 bits or a narrow expression
//! (`native_actions::Emit`, the interpreter's arithmetic to the bit),
//! `verify`s of a narrow condition with a constant error, and a transition
//! on fields of at most 8 bytes in all, or on nothing. Each such state
//! becomes a block of straight-line code with its offsets, shifts, slots
//! and transitions as constants: no plan is looked up and nothing is
//! dispatched per field. A failed `verify` ends the parse as the
//! interpreter's does: the error recorded, the cursor past what the state
//! extracted before it.
//!
//! The code hands over to the interpreter, which then finishes the parse
//! exactly as it would have from the start, at a state that does not
//! qualify, and at a state whose loads would reach past the packet's end
//! (a short packet: its errors, its zero-padded reads). It hands over
//! before the state has done anything, with the cursor and the count of
//! states run so far. So the interpreter stays the one definition of the
//! parser's semantics; this is a faster way to the same PHV.
#![allow(unsafe_code)]

use super::jit::{self, Code};
use super::native_actions::{expr_translates, Emit};
use super::parser::{planned_extract, MAX_STATES};
use super::phv::Phv;
use crate::program::{Expr, KeyPart, LValue, NExpr, ParserOp, Program};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, Value};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::{FunctionBuilder, Variable};

/// How the native code left the parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The parser accepted, the cursor at `cursor`.
    Accept { cursor: usize },
    /// More than the interpreter's limit of states ran (a loop).
    Timeout { cursor: usize },
    /// The interpreter goes on from `state`, nothing of it done yet.
    Resume { state: u32, cursor: usize, steps: usize },
    /// A `verify` failed with parser error `error`.
    Reject { cursor: usize, error: u32 },
}

const ACCEPT: u32 = 0;
const TIMEOUT: u32 = 1;
const RESUME: u32 = 2;
const REJECT: u32 = 3;

/// (packet, its length, PHV values, validity, varbit lengths, out) ->
/// ACCEPT, TIMEOUT, RESUME or REJECT; out holds the cursor, then for
/// RESUME the state and the count of states run, for REJECT the error.
type Entry = unsafe extern "C" fn(*const u8, u64, *mut u128, *mut bool, *mut u32, *mut u64) -> u32;

/// A program's parser as machine code (see the module's comment).
pub struct NativeParser {
    entry: Entry,
    /// Holds the code `entry` points to.
    _code: Code,
    init: u32,
    /// States translated, of all the parser's.
    pub states: usize,
    /// The PHV sizes the code indexes within (the program's).
    fields: usize,
    headers: usize,
}

impl std::fmt::Debug for NativeParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NativeParser {{ states: {} }}", self.states)
    }
}

impl NativeParser {
    /// Parses `data` into `phv` from the parser's first state.
    #[inline]
    pub fn run(&self, data: &[u8], phv: &mut Phv) -> Outcome {
        if phv.vals.len() < self.fields || phv.valid.len() < self.headers || phv.vl_bits.len() < self.headers {
            return Outcome::Resume { state: self.init, cursor: 0, steps: 0 };
        }
        let mut out = [0u64; 3];
        // SAFETY: the code reads `data` only below `data.len()` (each
        // state checks its span first) and writes the PHV's slots of the
        // program's fields and headers, which the lengths above hold.
        let r = unsafe {
            (self.entry)(
                data.as_ptr(),
                data.len() as u64,
                phv.vals.as_mut_ptr(),
                phv.valid.as_mut_ptr(),
                phv.vl_bits.as_mut_ptr(),
                out.as_mut_ptr(),
            )
        };
        let cursor = out[0] as usize;
        match r {
            ACCEPT => Outcome::Accept { cursor },
            TIMEOUT => Outcome::Timeout { cursor },
            REJECT => Outcome::Reject { cursor, error: out[1] as u32 },
            _ => Outcome::Resume { state: out[1] as u32, cursor, steps: out[2] as usize },
        }
    }
}

/// The program's parser as machine code, when its first state qualifies
/// and the host has a Cranelift back end; None otherwise (the interpreter
/// parses alone).
pub fn compile(p: &Program) -> Option<NativeParser> {
    let init = p.parser.init?;
    let shapes: Vec<Option<Shape>> = (0..p.parser.states.len()).map(|s| shape(p, s)).collect();
    shapes[init as usize].as_ref()?;
    if !jit::slots_addressable(p.fields.len()) {
        return None;
    }
    let code = jit::compile(6, |b, args, target| Emitter::new(b, args, &shapes).emit(init, target))?;
    // SAFETY: the function was built with exactly `Entry`'s signature.
    let entry = unsafe { std::mem::transmute::<*const u8, Entry>(code.entry) };
    Some(NativeParser {
        entry,
        _code: code,
        init,
        states: shapes.iter().filter(|s| s.is_some()).count(),
        fields: p.fields.len(),
        headers: p.headers.len(),
    })
}

/// What a qualifying state does, with its operands resolved.
struct Shape {
    /// Its operations in order.
    steps: Vec<Step>,
    /// Bytes from the state's cursor that its loads touch.
    need: u32,
    /// The key's fields, each with its left shift in the key (the bytes
    /// of the parts after it); none: the key is 0.
    key: Vec<(u32, u32)>,
    /// Transitions in order. Empty: the state accepts.
    transitions: Vec<Transition>,
}

/// A field's load: (PHV slot, byte offset in the header, left shift,
/// right shift), the value being `(load << l) >> r` of 8 big-endian bytes.
type Load = (u32, u32, u8, u8);

enum Step {
    /// A header: its id, its length in bytes and its loads.
    Extract(u32, u32, Vec<Load>),
    /// `set`: the field (PHV slot) and what it takes.
    Set(u32, Src),
    /// `verify`: the condition and the error when it is false.
    Verify(NExpr, u32),
}

enum Src {
    /// The constant as the field keeps it (truncated to its width).
    Const(u64),
    /// A field's value under the destination's width mask.
    Field(u32, u64),
    /// A narrow expression's value under the destination's width mask.
    Expr(NExpr, u64),
}

/// (value, mask), or None for the default; then the next state (None:
/// accept).
type Transition = (Option<(u64, u64)>, Option<u32>);

fn shape(p: &Program, s: usize) -> Option<Shape> {
    let st = &p.parser.states[s];
    let narrow_field = |f: u32| {
        let m = p.fmeta[f as usize];
        (!m.wide && m.width <= 64).then_some(m)
    };
    let mut steps = Vec::with_capacity(st.ops.len());
    let (mut off, mut need) = (0u32, 0u32);
    for op in &st.ops {
        if let Some((h, bytes)) = planned_extract(p, op) {
            if p.headers[h as usize].union_of.is_some() {
                return None;
            }
            let (takes, span) = p.extract_plans[h as usize].as_ref()?.loads()?;
            let loads = takes.iter().map(|t| (t.field, t.byte, t.l, t.r)).collect();
            steps.push(Step::Extract(h, bytes, loads));
            need = need.max(off + bytes.max(span as u32));
            off += bytes;
            continue;
        }
        match op {
            ParserOp::Set(LValue::Field(dst), e) => {
                let width = narrow_field(*dst)?.width as u32;
                let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
                let src = match e {
                    Expr::Const(v) => Src::Const(v.trunc_u128(width) as u64),
                    Expr::Narrow(n) => match **n {
                        NExpr::Const(c) => Src::Const(c as u64 & mask),
                        NExpr::Field(f) if narrow_field(f).is_some_and(|m| !m.signed) => Src::Field(f, mask),
                        ref e if expr_translates(p, e) => Src::Expr(e.clone(), mask),
                        _ => return None,
                    },
                    Expr::Field(f) if narrow_field(*f).is_some_and(|m| !m.signed) => Src::Field(*f, mask),
                    _ => return None,
                };
                steps.push(Step::Set(*dst, src));
            }
            ParserOp::Verify { cond, error } => {
                let cond = match cond {
                    Expr::Const(v) => NExpr::Const(v.truthy() as i128),
                    Expr::Narrow(n) if expr_translates(p, n) => (**n).clone(),
                    _ => return None,
                };
                let error = match error {
                    Expr::Const(v) => v.low_u64() as u32,
                    Expr::Narrow(n) => match **n {
                        NExpr::Const(c) => c as u64 as u32,
                        _ => return None,
                    },
                    _ => return None,
                };
                steps.push(Step::Verify(cond, error));
            }
            _ => return None,
        }
    }
    let narrow = |v: u128| u64::try_from(v).ok();
    let mut transitions = Vec::with_capacity(st.transitions.len());
    if !st.transitions.is_empty() {
        if !st.small {
            return None;
        }
        for t in &st.transitions {
            let vm = match t.small {
                Some((v, m)) => Some((narrow(v)?, narrow(m)?)),
                None => None,
            };
            transitions.push((vm, t.next));
        }
    }
    let key = if transitions.is_empty() { vec![] } else { key_fields(p, st)? };
    if need > i32::MAX as u32 {
        return None; // beyond a 32-bit offset
    }
    Some(Shape { steps, need, key, transitions })
}

/// A transition key of narrow fields, 8 bytes or fewer as the interpreter
/// packs them (each part padded to whole bytes): each field with its
/// shift. None for any other key.
fn key_fields(p: &Program, st: &crate::program::ParseState) -> Option<Vec<(u32, u32)>> {
    let mut fields = Vec::with_capacity(st.key.len());
    let mut bytes = 0u32;
    for (part, width) in st.key.iter().rev() {
        let KeyPart::Field(f) = part else { return None };
        let m = p.fmeta[*f as usize];
        if m.wide || m.width > 64 {
            return None;
        }
        fields.push((*f, 8 * bytes));
        bytes += width.div_ceil(8);
    }
    (bytes <= 8).then_some(fields)
}

/// Builds the function: a block per qualifying state, one for accept, one
/// for the timeout, and one per state handed over to the interpreter.
struct Emitter<'f, 's> {
    b: FunctionBuilder<'f>,
    shapes: &'s [Option<Shape>],
    states: Vec<Option<Block>>,
    resume: Vec<Option<Block>>,
    accept: Block,
    timeout: Block,
    cursor: Variable,
    steps: Variable,
    /// The function's parameters.
    data: Value,
    len: Value,
    vals: Value,
    valid: Value,
    vl_bits: Value,
    out: Value,
}

impl<'f, 's> Emitter<'f, 's> {
    fn new(mut b: FunctionBuilder<'f>, params: &[Value], shapes: &'s [Option<Shape>]) -> Self {
        let cursor = b.declare_var(types::I64);
        let steps = b.declare_var(types::I64);
        let zero = b.ins().iconst(types::I64, 0);
        b.def_var(cursor, zero);
        b.def_var(steps, zero);
        let states = shapes.iter().map(|s| s.as_ref().map(|_| b.create_block())).collect();
        let accept = b.create_block();
        let timeout = b.create_block();
        Emitter {
            b,
            shapes,
            states,
            resume: vec![None; shapes.len()],
            accept,
            timeout,
            cursor,
            steps,
            data: params[0],
            len: params[1],
            vals: params[2],
            valid: params[3],
            vl_bits: params[4],
            out: params[5],
        }
    }

    fn emit(mut self, init: u32, target: TargetFrontendConfig) {
        let first = self.target(Some(init));
        self.b.ins().jump(first, &[]);
        let shapes = self.shapes;
        for (s, shape) in shapes.iter().enumerate() {
            if let Some(shape) = shape {
                self.state(s as u32, shape);
            }
        }
        self.exit(self.accept, ACCEPT, None);
        self.exit(self.timeout, TIMEOUT, None);
        for s in 0..self.resume.len() {
            if let Some(block) = self.resume[s] {
                self.exit(block, RESUME, Some(s as u32));
            }
        }
        self.b.seal_all_blocks();
        self.b.finalize(target);
    }

    /// The block that goes on to `next` (None: accept).
    fn target(&mut self, next: Option<u32>) -> Block {
        let Some(s) = next else { return self.accept };
        if let Some(block) = self.states[s as usize] {
            return block;
        }
        *self.resume[s as usize].get_or_insert_with(|| self.b.create_block())
    }

    /// A state's block: hand over if the packet is too short for its
    /// loads, count it, extract, then branch on the transitions.
    fn state(&mut self, s: u32, shape: &Shape) {
        let block = self.states[s as usize].expect("a block per qualifying state");
        self.b.switch_to_block(block);
        let cursor = self.b.use_var(self.cursor);
        let left = self.b.ins().isub(self.len, cursor);
        let short = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, left, shape.need as i64);
        let hand_over = *self.resume[s as usize].get_or_insert_with(|| self.b.create_block());
        let run = self.b.create_block();
        self.b.ins().brif(short, hand_over, &[], run, &[]);

        self.b.switch_to_block(run);
        let steps = self.b.use_var(self.steps);
        let steps = self.b.ins().iadd_imm_s(steps, 1);
        self.b.def_var(self.steps, steps);
        let over = self.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, steps, MAX_STATES as i64);
        let body = self.b.create_block();
        self.b.ins().brif(over, self.timeout, &[], body, &[]);

        self.b.switch_to_block(body);
        let at = self.b.ins().iadd(self.data, cursor);
        let one8 = self.b.ins().iconst(types::I8, 1);
        let zero32 = self.b.ins().iconst(types::I32, 0);
        let mut off = 0u32;
        for step in &shape.steps {
            let (h, bytes, loads) = match step {
                Step::Extract(h, bytes, loads) => (h, bytes, loads),
                Step::Set(dst, src) => {
                    let v = match *src {
                        Src::Const(c) => self.b.ins().iconst(types::I64, c as i64),
                        Src::Field(f, mask) => {
                            let v = jit::load_slot(&mut self.b, self.vals, f);
                            self.b.ins().band_imm_u(v, mask as i64)
                        }
                        Src::Expr(ref e, mask) => {
                            let v = self.exprs().expr(e);
                            let v = self.b.ins().ireduce(types::I64, v);
                            self.b.ins().band_imm_u(v, mask as i64)
                        }
                    };
                    jit::store_slot(&mut self.b, self.vals, *dst, v);
                    continue;
                }
                Step::Verify(cond, error) => {
                    self.verify(cond, *error, cursor, off);
                    continue;
                }
            };
            for &(field, byte, l, r) in loads {
                let w = self.b.ins().load(types::I64, jit::packet_bytes(), at, (off + byte) as i32);
                let mut w = self.b.ins().bswap(w);
                if l != 0 {
                    w = self.b.ins().ishl_imm_u(w, l as i64);
                }
                if r != 0 {
                    w = self.b.ins().ushr_imm_u(w, r as i64);
                }
                jit::store_slot(&mut self.b, self.vals, field, w);
            }
            self.b.ins().store(jit::phv_slot(), one8, self.valid, *h as i32);
            self.b.ins().store(jit::phv_slot(), zero32, self.vl_bits, (*h * 4) as i32);
            off += bytes;
        }
        let cursor = self.b.ins().iadd_imm_s(cursor, off as i64);
        self.b.def_var(self.cursor, cursor);

        let mut key = self.b.ins().iconst(types::I64, 0);
        for &(f, shift) in &shape.key {
            let v = jit::load_slot(&mut self.b, self.vals, f);
            let v = if shift == 0 { v } else { self.b.ins().ishl_imm_u(v, shift as i64) };
            key = self.b.ins().bor(key, v);
        }
        for &(vm, next) in &shape.transitions {
            let to = self.target(next);
            let Some((v, m)) = vm else {
                self.b.ins().jump(to, &[]);
                return;
            };
            let masked = self.b.ins().band_imm_u(key, m as i64);
            let hit = self.b.ins().icmp_imm_u(IntCC::Equal, masked, v as i64);
            let miss = self.b.create_block();
            self.b.ins().brif(hit, to, &[], miss, &[]);
            self.b.switch_to_block(miss);
        }
        // no transition matched, or none at all: BMv2 accepts
        self.b.ins().jump(self.accept, &[]);
    }

    /// Code for what the PHV's expressions read.
    fn exprs(&mut self) -> Emit<'_, 'f> {
        Emit { b: &mut self.b, vals: self.vals, valid: self.valid }
    }

    /// `verify(cond, error)` of a state entered at `cursor`, `off` bytes
    /// extracted so far: when the condition is false, returns REJECT with
    /// the cursor past them; else goes on in a new block.
    fn verify(&mut self, cond: &NExpr, error: u32, cursor: Value, off: u32) {
        let c = self.exprs().expr(cond);
        let zero = self.exprs().constant(0);
        let holds = self.b.ins().icmp(IntCC::NotEqual, c, zero);
        let (go, fail) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(holds, go, &[], fail, &[]);
        self.b.switch_to_block(fail);
        let flags = jit::phv_slot();
        let at = self.b.ins().iadd_imm_s(cursor, off as i64);
        self.b.ins().store(flags, at, self.out, 0);
        let error = self.b.ins().iconst(types::I64, error as i64);
        self.b.ins().store(flags, error, self.out, 8);
        let code = self.b.ins().iconst(types::I32, REJECT as i64);
        self.b.ins().return_(&[code]);
        self.b.switch_to_block(go);
    }

    /// A block that stores the cursor (and for a hand-over the state and
    /// the count of states) and returns `code`.
    fn exit(&mut self, block: Block, code: u32, state: Option<u32>) {
        let flags = jit::phv_slot();
        self.b.switch_to_block(block);
        let cursor = self.b.use_var(self.cursor);
        self.b.ins().store(flags, cursor, self.out, 0);
        if let Some(s) = state {
            let s = self.b.ins().iconst(types::I64, s as i64);
            self.b.ins().store(flags, s, self.out, 8);
            let steps = self.b.use_var(self.steps);
            self.b.ins().store(flags, steps, self.out, 16);
        }
        let code = self.b.ins().iconst(types::I32, code as i64);
        self.b.ins().return_(&[code]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzzing::{interpreted, native_and_interpreted, native_parse_mismatch, parsed as parse, parser_walk_frames, PROGRAM};
    use crate::json;
    use crate::pipeline::tests::doc_with_parser;
    use serde_json::json;

    /// The program, and the same program without its native code.
    fn both(p: Program) -> (Program, Program) {
        (p.clone(), interpreted(p))
    }

    fn native_run(p: &Program, data: &[u8]) -> Outcome {
        let mut phv = Phv::new(p);
        p.native_parser.as_ref().expect("a native parser").run(data, &mut phv)
    }

    /// A parser over header h (two bytes: a, b) and a two-entry stack s of
    /// one-byte headers: `start` extracts h and goes on by h.a; `again`
    /// extracts nothing and loops by a metadata field that is always 0;
    /// `stack` pushes onto s (the interpreter's alone).
    fn looping_program() -> Program {
        let h_t = json!({"name": "h_t", "id": 1, "fields": [["a", 8, false], ["b", 8, false]]});
        let states = json!([
            {"name": "start", "id": 0,
             "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "h"}]}],
             "transition_key": [{"type": "field", "value": ["h", "a"]}],
             "transitions": [
                 {"type": "hexstr", "value": "0x01", "mask": null, "next_state": "again"},
                 {"type": "hexstr", "value": "0x02", "mask": "0x0f", "next_state": "stack"},
                 {"type": "default", "value": null, "mask": null, "next_state": null}]},
            {"name": "again", "id": 1, "parser_ops": [],
             "transition_key": [{"type": "field", "value": ["meta", "m"]}],
             "transitions": [{"type": "hexstr", "value": "0x0000", "mask": null, "next_state": "again"}]},
            {"name": "stack", "id": 2,
             "parser_ops": [{"op": "extract", "parameters": [{"type": "stack", "value": "s"}]}],
             "transition_key": [{"type": "field", "value": ["h", "b"]}],
             "transitions": [
                 {"type": "hexstr", "value": "0x00", "mask": null, "next_state": "stack"},
                 {"type": "default", "value": null, "mask": null, "next_state": null}]}]);
        json::load_value(&doc_with_parser(h_t, states)).unwrap()
    }

    #[test]
    fn every_state_of_an_l3_parser_is_native() {
        let p = json::load(PROGRAM).unwrap();
        let native = p.native_parser.as_ref().expect("the L3 program's parser is native");
        assert_eq!(native.states, p.parser.states.len());
    }

    #[test]
    fn the_native_l3_parser_gives_the_interpreters_phv() {
        let (native, interpreted) = native_and_interpreted();
        let frames = parser_walk_frames(&native, 11, 6000);
        let (mut l4, mut short) = (0, 0);
        for f in &frames {
            if let Some(d) = native_parse_mismatch(&native, &interpreted, f) {
                panic!("{d}");
            }
            match native_run(&native, f) {
                Outcome::Accept { cursor } if cursor == 14 + 20 + 4 => l4 += 1,
                Outcome::Resume { .. } => short += 1,
                _ => {}
            }
        }
        // the walk reaches the deepest state, and frames too short hand over
        assert!(l4 > 500 && short > 500, "{l4} reached L4, {short} handed over");
    }

    #[test]
    fn a_state_it_does_not_translate_is_the_interpreters() {
        let (native, interpreted) = both(looping_program());
        assert_eq!(native.native_parser.as_ref().unwrap().states, 2);
        // h.a = 2 (under mask 0x0f): on to the stack state, which extracts
        // s[0] and s[1] (h.b = 0 loops), then fails on the third push
        let data = [0x12, 0x00, 0xaa, 0xbb, 0xcc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(native_run(&native, &data), Outcome::Resume { state: 2, cursor: 2, steps: 1 });
        assert_eq!(native_parse_mismatch(&native, &interpreted, &data), None);
        let pkt = parse(&native, &data);
        assert_eq!(pkt.parser_error, native.errors.stack_out_of_bounds);
        assert_eq!((pkt.phv.valid[2], pkt.phv.valid[3], pkt.cursor), (true, true, 4));
    }

    #[test]
    fn a_packet_too_short_for_a_state_is_the_interpreters() {
        let (native, interpreted) = both(looping_program());
        // h's loads read 8 bytes from each field's first: 9 bytes in all
        let data = [0x05, 0x06, 0, 0, 0, 0, 0, 0];
        assert_eq!(native_run(&native, &data), Outcome::Resume { state: 0, cursor: 0, steps: 0 });
        assert_eq!(native_parse_mismatch(&native, &interpreted, &data), None);
        assert_eq!(parse(&native, &data).parser_error, native.errors.no_error);
        let data = [0x05];
        assert_eq!(native_run(&native, &data), Outcome::Resume { state: 0, cursor: 0, steps: 0 });
        assert_eq!(native_parse_mismatch(&native, &interpreted, &data), None);
        assert_eq!(parse(&native, &data).parser_error, native.errors.packet_too_short);
    }

    #[test]
    fn a_loop_that_consumes_nothing_times_out_as_in_the_interpreter() {
        let (native, interpreted) = both(looping_program());
        let data = [0x01, 0x07, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(native_run(&native, &data), Outcome::Timeout { cursor: 2 });
        assert_eq!(native_parse_mismatch(&native, &interpreted, &data), None);
        assert_eq!(parse(&native, &data).parser_error, native.errors.parser_timeout);
    }

    /// `start` extracts h, sets meta.m from h.b (8 into 16 bits) and goes
    /// on by it; `second` sets meta.m to a constant wider than it, then
    /// h.a from meta.m (16 into 8 bits), and goes on by h.a.
    fn setting_program() -> Program {
        let h_t = json!({"name": "h_t", "id": 1, "fields": [["a", 8, false], ["b", 8, false]]});
        let set = |dst: [&str; 2], src: serde_json::Value| json!({"op": "set", "parameters": [
            {"type": "field", "value": dst}, src]});
        let states = json!([
            {"name": "start", "id": 0,
             "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "h"}]},
                            set(["meta", "m"], json!({"type": "field", "value": ["h", "b"]}))],
             "transition_key": [{"type": "field", "value": ["meta", "m"]}],
             "transitions": [
                 {"type": "hexstr", "value": "0x0005", "mask": "0x000f", "next_state": "second"},
                 {"type": "default", "value": null, "mask": null, "next_state": null}]},
            {"name": "second", "id": 1,
             "parser_ops": [set(["meta", "m"], json!({"type": "hexstr", "value": "0x1abcd"})),
                            set(["h", "a"], json!({"type": "field", "value": ["meta", "m"]}))],
             "transition_key": [{"type": "field", "value": ["h", "a"]}],
             "transitions": [
                 {"type": "hexstr", "value": "0xcd", "mask": null, "next_state": null},
                 {"type": "default", "value": null, "mask": null, "next_state": "start"}]}]);
        json::load_value(&doc_with_parser(h_t, states)).unwrap()
    }

    #[test]
    fn sets_from_fields_and_constants_are_native_and_truncate_as_the_interpreter() {
        let (native, interpreted) = both(setting_program());
        assert_eq!(native.native_parser.as_ref().unwrap().states, 2, "both states are native");
        let data = [0x77, 0x15, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(native_run(&native, &data), Outcome::Accept { cursor: 2 });
        assert_eq!(native_parse_mismatch(&native, &interpreted, &data), None);
        let pkt = parse(&native, &data);
        let (a, m) = (native.field_by_name("h", "a").unwrap(), native.field_by_name("meta", "m").unwrap());
        assert_eq!((pkt.phv.vals[m as usize], pkt.phv.vals[a as usize]), (0xabcd, 0xcd));
        for f in parser_walk_frames(&native, 9, 3000) {
            if let Some(d) = native_parse_mismatch(&native, &interpreted, &f) {
                panic!("{d}");
            }
        }
    }

    /// IPv4's first checks in small: `start` extracts h (v: 4 bits, l: 4,
    /// p: 8, x: 16), verifies h.v == 4 and, after setting meta.m to
    /// h.x - 3 (an expression, wrapping in 16 bits), h.l >= 5 (both with
    /// error `Mine`), then goes on by (h.l, h.p) to `second` (l = 5, p =
    /// 0x11 under mask 0x1f) or accepts; `second` sets h.x to meta.m >> 2
    /// and accepts.
    fn verifying_program() -> Program {
        let h_t = json!({"name": "h_t", "id": 1, "fields": [["v", 4, false], ["l", 4, false], ["p", 8, false], ["x", 16, false]]});
        let field = |h: &str, f: &str| json!({"type": "field", "value": [h, f]});
        let hex = |v: &str| json!({"type": "hexstr", "value": v});
        let op = |o: &str, l: serde_json::Value, r: serde_json::Value| json!({"type": "expression", "value": {"op": o, "left": l, "right": r}});
        let verify = |cond: serde_json::Value| json!({"op": "verify", "parameters": [cond, hex("0x7")]});
        let set = |dst: serde_json::Value, e: serde_json::Value| json!({"op": "set", "parameters": [dst, e]});
        let states = json!([
            {"name": "start", "id": 0,
             "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "h"}]},
                            verify(op("==", field("h", "v"), hex("0x4"))),
                            set(field("meta", "m"), op("&", op("-", field("h", "x"), hex("0x3")), hex("0xffff"))),
                            verify(op(">=", field("h", "l"), hex("0x5")))],
             "transition_key": [field("h", "l"), field("h", "p")],
             "transitions": [
                 {"type": "hexstr", "value": "0x0511", "mask": "0xff1f", "next_state": "second"},
                 {"type": "default", "value": null, "mask": null, "next_state": null}]},
            {"name": "second", "id": 1,
             "parser_ops": [set(field("h", "x"), op(">>", field("meta", "m"), hex("0x2")))],
             "transition_key": [], "transitions": []}]);
        json::load_value(&doc_with_parser(h_t, states)).unwrap()
    }

    #[test]
    fn verifies_expressions_and_keys_of_several_fields_are_native() {
        let (native, interpreted) = both(verifying_program());
        assert_eq!(native.native_parser.as_ref().unwrap().states, 2, "both states are native");
        let (m, x) = (native.field_by_name("meta", "m").unwrap(), native.field_by_name("h", "x").unwrap());
        let pad = |head: &[u8]| [head, &[0u8; 12][..]].concat();
        // v = 4, l = 5, p = 0x31 (matches under the mask), x = 1: m wraps
        let data = pad(&[0x45, 0x31, 0x00, 0x01]);
        assert_eq!(native_run(&native, &data), Outcome::Accept { cursor: 4 });
        let pkt = parse(&native, &data);
        assert_eq!((pkt.phv.vals[m as usize], pkt.phv.vals[x as usize]), (0xfffe, 0x3fff));
        // v = 6: the first verify fails, after the extract
        let data = pad(&[0x65, 0x11, 0x00, 0x09]);
        assert_eq!(native_run(&native, &data), Outcome::Reject { cursor: 4, error: 7 });
        assert_eq!(parse(&native, &data).parser_error, 7);
        // l = 4: the second fails, with meta.m set before it
        let pkt = parse(&native, &pad(&[0x44, 0x11, 0x00, 0x09]));
        assert_eq!((pkt.parser_error, pkt.phv.vals[m as usize]), (7, 6));
        for data in [pad(&[0x45, 0x31, 0x00, 0x01]), pad(&[0x65, 0x11, 0, 9]), pad(&[0x44, 0x11, 0, 9]), pad(&[0x45, 0x10, 0, 9])] {
            assert_eq!(native_parse_mismatch(&native, &interpreted, &data), None);
        }
        for f in parser_walk_frames(&native, 13, 3000) {
            if let Some(d) = native_parse_mismatch(&native, &interpreted, &f) {
                panic!("{d}");
            }
        }
    }

    #[test]
    fn frames_of_every_shape_parse_as_in_the_interpreter() {
        let (native, interpreted) = both(looping_program());
        for f in parser_walk_frames(&native, 5, 3000) {
            if let Some(d) = native_parse_mismatch(&native, &interpreted, &f) {
                panic!("{d}");
            }
        }
    }
}
