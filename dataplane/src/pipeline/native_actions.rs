//! An action plan's field writes translated to machine code when the
//! program loads (with Cranelift).
//!
//! A run of consecutive writes of narrow fields (from a parameter, another
//! field, a constant, a chain of operations with constants or a narrow
//! expression) becomes one function with every slot, mask, constant and
//! operator fixed: no operation is dispatched and no expression tree
//! walked per packet. The code computes on 128-bit integers, as
//! `eval_narrow` does, so every value is the interpreter's to the bit:
//! the range analysis that made the expressions narrow proved that none
//! overflows. Division and remainder are not translated (they would need
//! a call); a run holding one stays interpreted, as do the extern
//! operations between runs.
#![allow(unsafe_code)]

use super::jit::{self, Code};
use crate::program::{BinOp, NExpr, Program, UnOp};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;

/// Parameters a translated run may read (the call passes them as words).
pub const MAX_PARAMS: usize = 8;

/// One write of a run, as the plan has it (`mask`: the destination's
/// width mask).
#[derive(Clone, Debug)]
pub enum Write {
    Param { dst: u32, mask: u128, idx: u32 },
    Copy { dst: u32, mask: u128, src: u32 },
    Const { dst: u32, value: u128 },
    Chain { dst: u32, mask: u128, field: u32, ops: Vec<(BinOp, i128)> },
    Narrow { dst: u32, mask: u128, expr: NExpr },
}

/// (PHV values, validity, parameter words) -> 0.
type Entry = unsafe extern "C" fn(*mut u128, *const bool, *const u128) -> u32;

/// A run of writes as machine code.
pub struct NativeWrites {
    entry: Entry,
    /// Holds the code `entry` points to.
    _code: Code,
    /// Writes translated.
    pub writes: usize,
    /// Parameters read: the words the call needs.
    pub params: usize,
    /// The PHV sizes the code indexes within (the program's).
    fields: usize,
    headers: usize,
}

impl std::fmt::Debug for NativeWrites {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "NativeWrites({} writes)", self.writes)
    }
}

impl NativeWrites {
    /// Runs the writes on `vals` (every field's slot), with `valid` (every
    /// header's validity) and the parameter words (at least `self.params`:
    /// a table entry's own words, without a copy, where it has enough).
    #[inline(always)]
    pub fn run(&self, vals: &mut [u128], valid: &[bool], params: &[u128]) {
        assert!(vals.len() >= self.fields && valid.len() >= self.headers && params.len() >= self.params);
        // SAFETY: the code reads and writes only slots below `fields`,
        // validity below `headers` and words below `params` (one past the
        // highest index a write reads), checked at translation and by the
        // assertion above.
        unsafe { (self.entry)(vals.as_mut_ptr(), valid.as_ptr(), params.as_ptr()) };
    }
}

/// The writes as one function; None where one is not translated (see the
/// module's comment) or Cranelift is not available.
pub fn translate(p: &Program, writes: &[Write]) -> Option<NativeWrites> {
    if !translatable(p, writes) {
        return None;
    }
    let params = writes
        .iter()
        .filter_map(|w| match w {
            Write::Param { idx, .. } => Some(*idx as usize + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let code = jit::compile(3, |mut b, args, target| {
        Emit { b: &mut b, vals: args[0], valid: args[1] }.writes(writes, Some(args[2]));
        let zero = b.ins().iconst(types::I32, 0);
        b.ins().return_(&[zero]);
        b.seal_all_blocks();
        b.finalize(target);
    })?;
    // SAFETY: the function was built with exactly `Entry`'s signature.
    let entry = unsafe { std::mem::transmute::<*const u8, Entry>(code.entry) };
    Some(NativeWrites { entry, _code: code, writes: writes.len(), params, fields: p.fields.len(), headers: p.headers.len() })
}

/// Whether every write translates: its slots within the PHV, its
/// parameter among the words passed, its expression without division.
pub fn translatable(p: &Program, writes: &[Write]) -> bool {
    let (fields, headers) = (p.fields.len(), p.headers.len());
    jit::slots_addressable(fields) && writes.iter().all(|w| write_translatable(w, fields, headers))
}

/// Whether an expression translates (`Emit::expr`).
pub fn expr_translates(p: &Program, e: &NExpr) -> bool {
    jit::slots_addressable(p.fields.len()) && expr_translatable(e, p.fields.len(), p.headers.len())
}

fn write_translatable(w: &Write, fields: usize, headers: usize) -> bool {
    let field = |f: u32| (f as usize) < fields;
    match w {
        Write::Param { dst, idx, .. } => field(*dst) && (*idx as usize) < MAX_PARAMS,
        Write::Copy { dst, src, .. } => field(*dst) && field(*src),
        Write::Const { dst, .. } => field(*dst),
        Write::Chain { dst, field: f, ops, .. } => field(*dst) && field(*f) && ops.iter().all(|(op, _)| operator(*op)),
        Write::Narrow { dst, expr, .. } => field(*dst) && expr_translatable(expr, fields, headers),
    }
}

fn operator(op: BinOp) -> bool {
    !matches!(op, BinOp::Div | BinOp::Mod)
}

fn expr_translatable(e: &NExpr, fields: usize, headers: usize) -> bool {
    let sub = |e: &NExpr| expr_translatable(e, fields, headers);
    match e {
        NExpr::Const(_) => true,
        NExpr::Field(f) => (*f as usize) < fields,
        NExpr::SField(f, w) => (*f as usize) < fields && (1..=127).contains(w),
        NExpr::Valid(h) => (*h as usize) < headers,
        NExpr::Unary(_, a) => sub(a),
        NExpr::Binary(op, a, b) => operator(*op) && sub(a) && sub(b),
        NExpr::BinaryConst(op, a, _) => operator(*op) && sub(a),
        NExpr::Cond(c, a, b) => sub(c) && sub(a) && sub(b),
        NExpr::TwoCompMod(a, w) => (1..=127).contains(w) && sub(a),
    }
}

/// Code being built, with the PHV's values and validity.
pub struct Emit<'a, 'b> {
    pub b: &'a mut FunctionBuilder<'b>,
    pub vals: Value,
    pub valid: Value,
}

impl Emit<'_, '_> {
    /// The writes, in order (`words`: the parameter words, which only a
    /// `Write::Param` reads).
    pub fn writes(&mut self, writes: &[Write], words: Option<Value>) {
        for w in writes {
            let (dst, v, mask) = match w {
                Write::Param { dst, mask, idx } => {
                    let words = words.expect("parameter words passed");
                    (*dst, self.b.ins().load(types::I128, jit::phv_slot(), words, (*idx * 16) as i32), *mask)
                }
                Write::Copy { dst, mask, src } => (*dst, self.field(*src), *mask),
                Write::Const { dst, value } => (*dst, self.constant(*value as i128), u128::MAX),
                Write::Chain { dst, mask, field, ops } => {
                    let mut x = self.field(*field);
                    for (op, c) in ops {
                        let c = self.constant(*c);
                        x = self.binary(*op, x, c);
                    }
                    (*dst, x, *mask)
                }
                Write::Narrow { dst, mask, expr } => (*dst, self.expr(expr), *mask),
            };
            let v = if mask == u128::MAX {
                v
            } else {
                let m = self.constant(mask as i128);
                self.b.ins().band(v, m)
            };
            self.b.ins().store(jit::phv_slot(), v, self.vals, (dst * 16) as i32);
        }
    }

    pub fn constant(&mut self, c: i128) -> Value {
        let lo = self.b.ins().iconst(types::I64, c as i64);
        let hi = self.b.ins().iconst(types::I64, (c >> 64) as i64);
        self.b.ins().iconcat(lo, hi)
    }

    /// A field's stored bits, as `eval_narrow` reads an unsigned field.
    pub fn field(&mut self, f: u32) -> Value {
        self.b.ins().load(types::I128, jit::phv_slot(), self.vals, (f * 16) as i32)
    }

    /// 0 or 1 of a comparison's result.
    fn flag(&mut self, cc: IntCC, x: Value, y: Value) -> Value {
        let c = self.b.ins().icmp(cc, x, y);
        self.b.ins().uextend(types::I128, c)
    }

    fn is_true(&mut self, x: Value) -> Value {
        let zero = self.constant(0);
        self.b.ins().icmp(IntCC::NotEqual, x, zero)
    }

    /// `x` shifted left (`sshr` false) or right arithmetically by `y`
    /// clamped to 0..=127, as `binary_n` shifts.
    fn shift(&mut self, left: bool, x: Value, y: Value) -> Value {
        // compared in 128 bits, selected in 64 (Cranelift's x64 back end
        // has no 128-bit min and max, which a 128-bit select would become)
        let (zero, max) = (self.constant(0), self.constant(127));
        let neg = self.b.ins().icmp(IntCC::SignedLessThan, y, zero);
        let big = self.b.ins().icmp(IntCC::SignedGreaterThan, y, max);
        let low = self.b.ins().ireduce(types::I64, y);
        let (zero, max) = (self.b.ins().iconst(types::I64, 0), self.b.ins().iconst(types::I64, 127));
        let y = self.b.ins().select(neg, zero, low);
        let y = self.b.ins().select(big, max, y);
        if left {
            self.b.ins().ishl(x, y)
        } else {
            self.b.ins().sshr(x, y)
        }
    }

    /// `binary_n(op, x, y)` (division and remainder excluded).
    fn binary(&mut self, op: BinOp, x: Value, y: Value) -> Value {
        match op {
            BinOp::Add => self.b.ins().iadd(x, y),
            BinOp::Sub => self.b.ins().isub(x, y),
            BinOp::Mul => self.b.ins().imul(x, y),
            BinOp::Shl => self.shift(true, x, y),
            BinOp::Shr => self.shift(false, x, y),
            BinOp::Eq => self.flag(IntCC::Equal, x, y),
            BinOp::Ne => self.flag(IntCC::NotEqual, x, y),
            BinOp::Gt => self.flag(IntCC::SignedGreaterThan, x, y),
            BinOp::Ge => self.flag(IntCC::SignedGreaterThanOrEqual, x, y),
            BinOp::Lt => self.flag(IntCC::SignedLessThan, x, y),
            BinOp::Le => self.flag(IntCC::SignedLessThanOrEqual, x, y),
            BinOp::And | BinOp::Or => {
                let (a, b) = (self.is_true(x), self.is_true(y));
                let c = if op == BinOp::And {
                    self.b.ins().band(a, b)
                } else {
                    self.b.ins().bor(a, b)
                };
                self.b.ins().uextend(types::I128, c)
            }
            BinOp::BitAnd => self.b.ins().band(x, y),
            BinOp::BitOr => self.b.ins().bor(x, y),
            BinOp::BitXor => self.b.ins().bxor(x, y),
            BinOp::Div | BinOp::Mod => unreachable!("not translated"),
        }
    }

    /// `x` sign-extended from its low `w` bits.
    fn sign_extend(&mut self, x: Value, w: u32) -> Value {
        let sh = self.b.ins().iconst(types::I64, 128 - w as i64);
        let x = self.b.ins().ishl(x, sh);
        self.b.ins().sshr(x, sh)
    }

    /// `eval_narrow(e)`. Both arms of a condition are computed (they have
    /// no effects and cannot trap) and one kept.
    pub fn expr(&mut self, e: &NExpr) -> Value {
        match e {
            NExpr::Const(c) => self.constant(*c),
            NExpr::Field(f) => self.field(*f),
            NExpr::SField(f, w) => {
                let x = self.field(*f);
                self.sign_extend(x, *w)
            }
            NExpr::Valid(h) => {
                let v = self.b.ins().load(types::I8, MemFlagsData::trusted(), self.valid, *h as i32);
                // a bool is stored as 0 or 1
                self.b.ins().uextend(types::I128, v)
            }
            NExpr::Unary(op, a) => {
                let x = self.expr(a);
                match op {
                    UnOp::Not => {
                        let zero = self.constant(0);
                        self.flag(IntCC::Equal, x, zero)
                    }
                    UnOp::D2B | UnOp::B2D => {
                        let zero = self.constant(0);
                        self.flag(IntCC::NotEqual, x, zero)
                    }
                    UnOp::BitNot => self.b.ins().bnot(x),
                    UnOp::Neg => self.b.ins().ineg(x),
                }
            }
            NExpr::Binary(op, a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                self.binary(*op, x, y)
            }
            NExpr::BinaryConst(op, a, c) => {
                let x = self.expr(a);
                let y = self.constant(*c);
                self.binary(*op, x, y)
            }
            NExpr::Cond(c, a, b) => {
                // by masks, not a 128-bit select (which Cranelift may make a
                // min or a max its x64 back end does not have)
                let c = self.expr(c);
                let yes = self.is_true(c);
                let ones = self.b.ins().uextend(types::I128, yes);
                let zero = self.constant(0);
                let mask = self.b.ins().isub(zero, ones);
                let (x, y) = (self.expr(a), self.expr(b));
                let x = self.b.ins().band(x, mask);
                let y = self.b.ins().band_not(y, mask);
                self.b.ins().bor(x, y)
            }
            NExpr::TwoCompMod(a, w) => {
                let x = self.expr(a);
                self.sign_extend(x, *w)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzzing::Rng;
    use crate::pipeline::narrow::{eval_narrow, tests::prog as program};
    use crate::pipeline::Packet;

    /// A random expression over h's fields that cannot overflow i128 (so
    /// that `eval_narrow` is defined on it, with overflow checks too):
    /// products have an 8-bit field as one factor and shifts to the left
    /// are the outermost operation.
    fn random_expr(rng: &mut Rng, p: &Program, depth: u32) -> NExpr {
        let f = |n: &str| p.field_by_name("h", n).unwrap();
        let leaf = |rng: &mut Rng| match rng.below(5) {
            0 => NExpr::Const(rng.below(600) as i128 - 300),
            1 => NExpr::Field(f(["a", "b", "w", "x"][rng.below(4)])),
            2 => NExpr::SField(f("s"), 8),
            3 => NExpr::Valid(1),
            _ => NExpr::Const(rng.below(140) as i128 - 5),
        };
        if depth == 0 {
            return leaf(rng);
        }
        let b = |e: NExpr| Box::new(e);
        let sub = |rng: &mut Rng| b(random_expr(rng, p, depth - 1));
        let ops = [BinOp::Add, BinOp::Sub, BinOp::Shr, BinOp::Eq, BinOp::Ne, BinOp::Gt, BinOp::Ge, BinOp::Lt, BinOp::Le,
                   BinOp::And, BinOp::Or, BinOp::BitAnd, BinOp::BitOr, BinOp::BitXor];
        let unops = [UnOp::Not, UnOp::BitNot, UnOp::Neg, UnOp::D2B, UnOp::B2D];
        match rng.below(7) {
            0 => NExpr::Unary(unops[rng.below(unops.len())], sub(rng)),
            1 => NExpr::Binary(ops[rng.below(ops.len())], sub(rng), sub(rng)),
            2 => NExpr::BinaryConst(ops[rng.below(ops.len())], sub(rng), rng.below(70000) as i128 - 100),
            // a factor of at most 9 bits: three nested products stay far below 2^127
            3 => NExpr::Binary(BinOp::Mul, sub(rng), b([NExpr::Field(f("a")), NExpr::SField(f("s"), 8)][rng.below(2)].clone())),
            4 => {
                // a condition comparing its own arms: Cranelift's min and max shape
                let (x, y) = (sub(rng), sub(rng));
                NExpr::Cond(b(NExpr::Binary(BinOp::Lt, x.clone(), y.clone())), x, y)
            }
            5 => NExpr::TwoCompMod(sub(rng), 1 + rng.below(64) as u32),
            _ => leaf(rng),
        }
    }

    #[test]
    fn translated_writes_compute_what_the_interpreter_computes() {
        let p = program();
        let mut rng = Rng::new(11);
        let [a, b, c, w] = ["a", "b", "w", "x"].map(|n| p.field_by_name("h", n).unwrap());
        let mut translated = 0;
        for _ in 0..400 {
            let mut e = random_expr(&mut rng, &p, 3);
            if rng.below(4) == 0 {
                // a shift to the left by any amount, clamped to 0..=127
                e = NExpr::Binary(BinOp::Shl, Box::new(e), Box::new(random_expr(&mut rng, &p, 1)));
            }
            let writes = [
                Write::Narrow { dst: w, mask: u64::MAX as u128, expr: e.clone() },
                Write::Chain { dst: c, mask: 0xffff_ffff, field: a, ops: vec![(BinOp::Sub, 1), (BinOp::Shl, 3), (BinOp::BitXor, 0x55)] },
                Write::Param { dst: b, mask: 0xffff, idx: 1 },
                Write::Copy { dst: a, mask: 0xff, src: w },
                Write::Const { dst: 0, value: 0x1ff },
            ];
            let native = translate(&p, &writes).expect("every write translates");
            translated += 1;
            for _ in 0..20 {
                let mut pkt = Packet::new(&p);
                for (i, m) in p.fmeta.iter().enumerate() {
                    pkt.phv.vals[i] = (rng.next_u64() as u128) & crate::value::mask_u128(m.width as u32);
                }
                pkt.phv.valid[1] = rng.below(2) == 0;
                let words = [rng.next_u64() as u128, (rng.next_u64() as u128) << 64 | 0x1234, 0, 0, 0, 0, 0, 0];
                let mut want = pkt.clone();
                // the interpreter's reading of the same writes, in order
                let v = eval_narrow(&want, &e) as u128 & u64::MAX as u128;
                want.phv.vals[w as usize] = v;
                let mut x = want.phv.vals[a as usize] as i128;
                for (op, k) in [(BinOp::Sub, 1), (BinOp::Shl, 3), (BinOp::BitXor, 0x55)] {
                    x = crate::pipeline::narrow::binary_n(op, x, k);
                }
                want.phv.vals[c as usize] = x as u128 & 0xffff_ffff;
                want.phv.vals[b as usize] = words[1] & 0xffff;
                want.phv.vals[a as usize] = want.phv.vals[w as usize] & 0xff;
                want.phv.vals[0] = 0x1ff;
                native.run(&mut pkt.phv.vals, &pkt.phv.valid, &words);
                assert_eq!(pkt.phv.vals, want.phv.vals, "{e:?}");
            }
        }
        assert_eq!(translated, 400);
    }

    #[test]
    fn division_and_remainder_are_not_translated() {
        let p = program();
        let a = p.field_by_name("h", "a").unwrap();
        for op in [BinOp::Div, BinOp::Mod] {
            let e = NExpr::BinaryConst(op, Box::new(NExpr::Field(a)), 3);
            assert!(translate(&p, &[Write::Narrow { dst: a, mask: 0xff, expr: e }]).is_none());
        }
        let beyond = Write::Copy { dst: a, mask: 0xff, src: p.fields.len() as u32 };
        assert!(translate(&p, &[beyond]).is_none(), "a slot past the PHV");
    }
}
