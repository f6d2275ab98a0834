//! Narrow expressions: the subtrees of a program's expressions that can be
//! evaluated on i128 without ever overflowing, found at load time by range
//! analysis and evaluated without `Val`.
//!
//! BMv2 computes on unbounded integers; the engine's `Val` does too, with
//! an i128 fast path that still checks every operation and carries an enum
//! through the tree. Most expressions of real programs (TTL decrements,
//! comparisons, masks, flag tests) only ever see values of a few dozen
//! bits. For those, interval bounds computed per node from the fields'
//! widths and the constants prove that every intermediate value stays
//! within +-2^120; plain i128 arithmetic then gives exactly the unbounded
//! result. Anything the analysis cannot bound (action parameters, header
//! stacks, run-time shift amounts to the left, casts) stays a generic
//! `Expr`; a narrow subtree inside it is still evaluated fast.

use super::exec::Exec;
use super::Packet;
use crate::program::*;
use crate::value::Val;

/// Bound on the magnitude of every value a narrow expression computes.
const LIMIT: i128 = 1 << 120;

/// Closed interval of the values a subtree can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Range {
    lo: i128,
    hi: i128,
}

impl Range {
    fn new(lo: i128, hi: i128) -> Option<Range> {
        (lo >= -LIMIT && hi <= LIMIT && lo <= hi).then_some(Range { lo, hi })
    }

    fn bool() -> Range {
        Range { lo: 0, hi: 1 }
    }

    fn magnitude(&self) -> i128 {
        self.lo.abs().max(self.hi.abs())
    }

    /// The smallest [-2^k, 2^k - 1] holding both ranges: bitwise operators
    /// on two's complement values stay in it.
    fn bitwise_hull(a: Range, b: Range) -> Option<Range> {
        let m = a.magnitude().max(b.magnitude());
        let k = 128 - (m as u128).leading_zeros();
        if a.lo >= 0 && b.lo >= 0 {
            return Range::new(0, (1i128 << k) - 1);
        }
        Range::new(-(1i128 << k), (1i128 << k) - 1)
    }
}

/// Rewrites the expressions of a program's actions, conditions, checksum
/// conditions and parser `set` and `verify` operations into narrow form where the
/// analysis allows it.
pub fn narrow_program(p: &mut Program) {
    let fmeta = p.fmeta.clone();
    let cx = Cx { fmeta: &fmeta };
    for a in &mut p.actions {
        for prim in &mut a.prims {
            for e in operands(prim) {
                cx.rewrite(e);
            }
            cx.specialize(prim);
        }
    }
    for c in &mut p.conds {
        cx.rewrite(&mut c.expr);
    }
    for c in &mut p.checksums {
        if let Some(e) = &mut c.cond {
            cx.rewrite(e);
        }
    }
    for st in &mut p.parser.states {
        for op in &mut st.ops {
            match op {
                ParserOp::Set(_, e) => cx.rewrite(e),
                ParserOp::Verify { cond, error } => {
                    cx.rewrite(cond);
                    cx.rewrite(error);
                }
                ParserOp::Primitive(prim @ Prim::Assign(..)) => {
                    if let Prim::Assign(_, e) = prim {
                        cx.rewrite(e);
                    }
                    cx.specialize(prim);
                }
                _ => {}
            }
        }
    }
}

/// The expressions a primitive evaluates for their value (a counter's or
/// register's index, what a register is written, a clone's session, ...).
fn operands(prim: &mut Prim) -> Vec<&mut Expr> {
    match prim {
        Prim::Assign(_, e) | Prim::JumpIfZero(e, _) | Prim::Push { count: e, .. }
        | Prim::Pop { count: e, .. } | Prim::Resubmit(e) | Prim::Recirculate(e)
        | Prim::Truncate(e) | Prim::Count { index: e, .. } | Prim::ExecuteMeter { index: e, .. }
        | Prim::RegisterRead { index: e, .. } => vec![e],
        Prim::RegisterWrite { index, src, .. } => vec![index, src],
        Prim::CloneI2E { session, field_list } | Prim::CloneE2E { session, field_list } => {
            vec![session, field_list]
        }
        Prim::GenerateDigest { receiver, learn_id } => vec![receiver, learn_id],
        Prim::HashOffset { base, max, .. } => vec![base, max],
        Prim::RngUniform { lo, hi, .. } => vec![lo, hi],
        _ => vec![],
    }
}

struct Cx<'a> {
    fmeta: &'a [FieldMeta],
}

impl Cx<'_> {
    /// Turns an assignment to a narrow field from a parameter, a field, a
    /// constant or a narrow expression into a `SetField`.
    fn specialize(&self, prim: &mut Prim) {
        let Prim::Assign(LValue::Field(dst), e) = prim else { return };
        let Some(d) = self.fmeta.get(*dst as usize) else { return };
        if d.wide {
            return;
        }
        let src = match e {
            Expr::Param(i) => SetSrc::Param(*i),
            Expr::Const(c) => SetSrc::Const(c.low_u128()),
            Expr::Narrow(n) => match **n {
                // a bare field: its stored bits, when they are the value's low bits
                NExpr::Field(g) => SetSrc::Field(g),
                NExpr::SField(g, w) if w >= d.width as u32 => SetSrc::Field(g),
                NExpr::Const(c) => SetSrc::Const(c as u128),
                _ => SetSrc::Narrow(n.clone()),
            },
            Expr::Field(g) => match self.fmeta.get(*g as usize) {
                Some(s) if !s.wide && !(s.signed && s.width < d.width) => SetSrc::Field(*g),
                _ => return,
            },
            _ => return,
        };
        *prim = Prim::SetField { dst: *dst, mask: crate::value::mask_u128(d.width as u32), src };
    }

    /// Replaces `e` by its narrow form, or failing that its largest narrow
    /// subtrees.
    fn rewrite(&self, e: &mut Expr) {
        if matches!(e, Expr::Narrow(_) | Expr::Const(_)) {
            return;
        }
        if let Some((n, _)) = self.narrow(e) {
            *e = Expr::Narrow(Box::new(n));
            return;
        }
        match e {
            Expr::Unary(_, a) | Expr::TwoCompMod(a, _) | Expr::SatCast(a, _) | Expr::USatCast(a, _) => self.rewrite(a),
            Expr::Binary(_, a, b) => {
                self.rewrite(a);
                self.rewrite(b);
            }
            Expr::Cond(c, a, b) => {
                self.rewrite(c);
                self.rewrite(a);
                self.rewrite(b);
            }
            _ => {}
        }
    }

    fn narrow(&self, e: &Expr) -> Option<(NExpr, Range)> {
        Some(match e {
            Expr::Const(Val::S(c)) => (NExpr::Const(*c), Range::new(*c, *c)?),
            Expr::Const(Val::B(_)) => return None,
            Expr::Field(f) => {
                let m = self.fmeta.get(*f as usize)?;
                let w = m.width as u32;
                if m.wide || w > 120 {
                    return None;
                }
                if m.signed && w > 0 {
                    let half = 1i128 << (w - 1);
                    (NExpr::SField(*f, w), Range::new(-half, half - 1)?)
                } else {
                    (NExpr::Field(*f), Range::new(0, (1i128 << w) - 1)?)
                }
            }
            Expr::Valid(HdrX::Static(h)) => (NExpr::Valid(*h), Range::bool()),
            Expr::Unary(op, a) => {
                let (na, ra) = self.narrow(a)?;
                if matches!(op, UnOp::D2B | UnOp::B2D) && ra.lo >= 0 && ra.hi <= 1 {
                    return Some((na, ra)); // already 0 or 1
                }
                let r = match op {
                    UnOp::Not | UnOp::D2B | UnOp::B2D => Range::bool(),
                    UnOp::BitNot => Range::new(-ra.hi - 1, -ra.lo - 1)?,
                    UnOp::Neg => Range::new(-ra.hi, -ra.lo)?,
                };
                (NExpr::Unary(*op, Box::new(na)), r)
            }
            Expr::Binary(op, a, b) => {
                let (na, ra) = self.narrow(a)?;
                let (nb, rb) = self.narrow(b)?;
                let r = binary_range(*op, ra, rb, &nb)?;
                match nb {
                    NExpr::Const(c) if !matches!(op, BinOp::And | BinOp::Or) => (NExpr::BinaryConst(*op, Box::new(na), c), r),
                    _ => (NExpr::Binary(*op, Box::new(na), Box::new(nb)), r),
                }
            }
            Expr::Cond(c, a, b) => {
                let (nc, _) = self.narrow(c)?;
                let (na, ra) = self.narrow(a)?;
                let (nb, rb) = self.narrow(b)?;
                (NExpr::Cond(Box::new(nc), Box::new(na), Box::new(nb)), Range::new(ra.lo.min(rb.lo), ra.hi.max(rb.hi))?)
            }
            Expr::TwoCompMod(a, w) => {
                if *w == 0 || *w > 120 {
                    return None;
                }
                let (na, _) = self.narrow(a)?;
                let half = 1i128 << (w - 1);
                (NExpr::TwoCompMod(Box::new(na), *w), Range::new(-half, half - 1)?)
            }
            _ => return None,
        })
    }
}

/// The range of `a op b`; None when it may leave +-2^120 or the analysis
/// does not cover the operator (a left shift by a run-time amount).
fn binary_range(op: BinOp, a: Range, b: Range, nb: &NExpr) -> Option<Range> {
    match op {
        BinOp::Add => Range::new(a.lo + b.lo, a.hi + b.hi),
        BinOp::Sub => Range::new(a.lo - b.hi, a.hi - b.lo),
        BinOp::Mul => {
            // both magnitudes are below 2^120, so check before multiplying
            let m = a.magnitude().checked_mul(b.magnitude())?;
            Range::new(-m, m)
        }
        BinOp::Div => Range::new(-a.magnitude(), a.magnitude()),
        BinOp::Mod => {
            let m = a.magnitude().min(b.magnitude());
            Range::new(-m, m)
        }
        BinOp::Shl => {
            let NExpr::Const(n) = nb else { return None };
            let n = (*n).max(0);
            if n > 120 {
                return if a.lo == 0 && a.hi == 0 { Range::new(0, 0) } else { None };
            }
            Range::new(a.lo.checked_mul(1i128 << n)?, a.hi.checked_mul(1i128 << n)?)
        }
        BinOp::Shr => Range::new(a.lo.min(0), a.hi.max(0)),
        BinOp::Eq | BinOp::Ne | BinOp::Gt | BinOp::Ge | BinOp::Lt | BinOp::Le | BinOp::And | BinOp::Or => {
            Some(Range::bool())
        }
        BinOp::BitAnd if a.lo >= 0 || b.lo >= 0 => {
            // the result is within [0, hi] of whichever operand is non-negative
            let hi = match (a.lo >= 0, b.lo >= 0) {
                (true, true) => a.hi.min(b.hi),
                (true, false) => a.hi,
                _ => b.hi,
            };
            Range::new(0, hi)
        }
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => Range::bitwise_hull(a, b),
    }
}

impl Exec<'_> {
    /// Evaluates a narrow expression (no value can overflow, see above).
    #[inline]
    pub(crate) fn eval_n(&self, pkt: &Packet, e: &NExpr) -> i128 {
        eval_narrow(pkt, e)
    }
}

/// Evaluates a narrow expression on a packet's PHV (no value can overflow,
/// see above).
pub(crate) fn eval_narrow(pkt: &Packet, e: &NExpr) -> i128 {
    match e {
        NExpr::Const(c) => *c,
        NExpr::Field(f) => pkt.phv.vals.get(*f as usize).copied().unwrap_or(0) as i128,
        NExpr::SField(f, w) => {
            let v = pkt.phv.vals.get(*f as usize).copied().unwrap_or(0) as i128;
            // sign-extend from w bits (w <= 120)
            let sh = 128 - w;
            (v << sh) >> sh
        }
        NExpr::Valid(h) => pkt.phv.valid.get(*h as usize).copied().unwrap_or(false) as i128,
        NExpr::Unary(op, a) => {
            let x = eval_narrow(pkt, a);
            match op {
                UnOp::Not => (x == 0) as i128,
                UnOp::D2B | UnOp::B2D => (x != 0) as i128,
                UnOp::BitNot => !x,
                UnOp::Neg => -x,
            }
        }
        NExpr::Binary(op, a, b) => {
            let x = eval_narrow(pkt, a);
            match op {
                BinOp::And => (x != 0 && eval_narrow(pkt, b) != 0) as i128,
                BinOp::Or => (x != 0 || eval_narrow(pkt, b) != 0) as i128,
                _ => binary_n(*op, x, eval_narrow(pkt, b)),
            }
        }
        NExpr::BinaryConst(op, a, c) => binary_n(*op, eval_narrow(pkt, a), *c),
        NExpr::Cond(c, a, b) => {
            if eval_narrow(pkt, c) != 0 {
                eval_narrow(pkt, a)
            } else {
                eval_narrow(pkt, b)
            }
        }
        NExpr::TwoCompMod(a, w) => {
            let sh = 128 - w;
            (eval_narrow(pkt, a) << sh) >> sh
        }
    }
}

/// The operators on values the analysis bounded; division and remainder
/// by zero give 0 and truncate toward zero, flooring right shifts, as
/// `Val` does.
#[inline(always)]
pub(crate) fn binary_n(op: BinOp, x: i128, y: i128) -> i128 {
    match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => {
            if y == 0 {
                0
            } else {
                x / y
            }
        }
        BinOp::Mod => {
            if y == 0 {
                0
            } else {
                x % y
            }
        }
        BinOp::Shl => x << y.clamp(0, 127),
        BinOp::Shr => x >> y.clamp(0, 127),
        BinOp::Eq => (x == y) as i128,
        BinOp::Ne => (x != y) as i128,
        BinOp::Gt => (x > y) as i128,
        BinOp::Ge => (x >= y) as i128,
        BinOp::Lt => (x < y) as i128,
        BinOp::Le => (x <= y) as i128,
        BinOp::And => (x != 0 && y != 0) as i128,
        BinOp::Or => (x != 0 || y != 0) as i128,
        BinOp::BitAnd => x & y,
        BinOp::BitOr => x | y,
        BinOp::BitXor => x ^ y,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::json;
    use crate::pipeline::{Packet, Runtime};
    use serde_json::json;

    /// Header h: a (8 bits), b (16), s (signed, 8), w (32), x (64), y (100),
    /// z (128), t (signed, 48), pad (4).
    pub(crate) fn prog() -> Program {
        let doc = json!({
            "header_types": [
                {"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
                    ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false], ["_p", 5, false]]},
                {"name": "h_t", "id": 1, "fields": [["a", 8, false], ["b", 16, false], ["s", 8, true], ["w", 32, false],
                    ["x", 64, false], ["y", 100, false], ["z", 128, false], ["t", 48, true], ["pad", 4, false]]}],
            "headers": [
                {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
                {"name": "h", "id": 1, "header_type": "h_t", "metadata": false}],
            "parsers": [{"name": "parser", "id": 0, "init_state": null, "parse_states": []}],
            "deparsers": [{"name": "deparser", "id": 0, "order": ["h"]}],
            "pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
                          {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
        });
        json::load_value(&doc).unwrap()
    }

    /// Assignments become `SetField`s and compute what `Val` arithmetic
    /// and truncation to the destination give.
    #[test]
    fn specialized_assignments() {
        let doc = json!({
            "header_types": [
                {"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
                    ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false], ["_p", 5, false]]},
                {"name": "h_t", "id": 1, "fields": [["a", 8, false], ["b", 16, false], ["s", 8, true], ["w", 32, false]]}],
            "headers": [
                {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
                {"name": "h", "id": 1, "header_type": "h_t", "metadata": false}],
            "actions": [{"name": "act", "id": 0, "runtime_data": [{"name": "p", "bitwidth": 16}], "primitives": [
                {"op": "assign", "parameters": [{"type": "field", "value": ["h", "b"]}, {"type": "field", "value": ["h", "s"]}]},
                {"op": "assign", "parameters": [{"type": "field", "value": ["h", "w"]}, {"type": "runtime_data", "value": 0}]},
                {"op": "assign", "parameters": [{"type": "field", "value": ["h", "s"]}, {"type": "field", "value": ["h", "w"]}]},
                {"op": "assign", "parameters": [{"type": "field", "value": ["h", "a"]},
                    {"type": "expression", "value": {"op": "&", "left": {"type": "expression", "value":
                        {"op": "+", "left": {"type": "field", "value": ["h", "a"]}, "right": {"type": "hexstr", "value": "0xff"}}},
                        "right": {"type": "hexstr", "value": "0xff"}}}]}]}],
            "parsers": [{"name": "parser", "id": 0, "init_state": null, "parse_states": []}],
            "deparsers": [{"name": "deparser", "id": 0, "order": ["h"]}],
            "pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
                          {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
        });
        let p = json::load_value(&doc).unwrap();
        let prims = &p.actions[0].prims;
        assert!(matches!(prims[0], Prim::SetField { src: SetSrc::Narrow(_), .. }), "a narrower signed source is sign-extended");
        assert!(matches!(prims[1], Prim::SetField { src: SetSrc::Param(0), .. }));
        assert!(matches!(prims[2], Prim::SetField { src: SetSrc::Field(_), .. }));
        assert!(matches!(prims[3], Prim::SetField { src: SetSrc::Narrow(_), .. }));
        let f = |n: &str| p.field_by_name("h", n).unwrap() as usize;
        let mut rt = Runtime::new(&p, 1);
        let mut pkt = Packet::new(&p);
        pkt.phv.vals[f("a")] = 0;
        pkt.phv.vals[f("s")] = 0x80; // -128
        let mut ex = Exec::new(&p, &mut rt);
        ex.run_action(&mut pkt, 0, &[Val::S(0x1_2345)]);
        assert_eq!(pkt.phv.vals[f("b")], 0xff80, "int<8> -128 into bit<16>");
        assert_eq!(pkt.phv.vals[f("w")], 0x1_2345, "the parameter's value as given, truncated to the 32-bit field");
        assert_eq!(pkt.phv.vals[f("s")], 0x45);
        assert_eq!(pkt.phv.vals[f("a")], 0xff, "0 - 1 wraps");
    }

    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b))
    }

    fn c(v: i128) -> Expr {
        Expr::Const(Val::S(v))
    }

    /// Every operator, on fields of several widths and signedness, against
    /// the generic evaluator, over edge and pseudo-random field values.
    #[test]
    fn narrow_forms_agree_with_val_arithmetic() {
        let p = prog();
        let f = |n: &str| Expr::Field(p.field_by_name("h", n).unwrap());
        let ops = [
            BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Mod, BinOp::Shl, BinOp::Shr, BinOp::Eq, BinOp::Ne,
            BinOp::Gt, BinOp::Ge, BinOp::Lt, BinOp::Le, BinOp::And, BinOp::Or, BinOp::BitAnd, BinOp::BitOr, BinOp::BitXor,
        ];
        let mut exprs = vec![
            // p4c's TTL decrement, a flag test, a signed sum, a cast back
            bin(BinOp::BitAnd, bin(BinOp::Add, f("a"), c(0xff)), c(0xff)),
            Expr::Unary(UnOp::D2B, Box::new(Expr::Valid(HdrX::Static(1)))),
            Expr::TwoCompMod(Box::new(bin(BinOp::Add, f("s"), f("t"))), 8),
            Expr::Cond(Box::new(bin(BinOp::Lt, f("s"), c(0))), Box::new(Expr::Unary(UnOp::Neg, Box::new(f("s")))),
                       Box::new(Expr::Unary(UnOp::BitNot, Box::new(f("b"))))),
            bin(BinOp::Shl, f("y"), c(30)),
            bin(BinOp::Shl, f("w"), f("a")),
            bin(BinOp::Mul, f("x"), f("x")),
            bin(BinOp::BitOr, f("z"), c(1)),
        ];
        for op in ops {
            for (l, r) in [("a", "b"), ("s", "a"), ("b", "s"), ("t", "w"), ("x", "a"), ("w", "t"), ("s", "t")] {
                exprs.push(bin(op, f(l), f(r)));
                exprs.push(bin(op, f(l), c(3)));
                exprs.push(bin(op, f(l), c(-2)));
                exprs.push(bin(op, c(-7), f(r)));
            }
        }
        let cx = Cx { fmeta: &p.fmeta };
        let mut rt = Runtime::new(&p, 1);
        let mut pkt = Packet::new(&p);
        let mut narrowed = 0;
        let mut seed = 0x1234_5678_9abc_def0u64;
        let names = ["a", "b", "s", "w", "x", "y", "z", "t"];
        for round in 0..200 {
            for (i, n) in names.iter().enumerate() {
                let fid = p.field_by_name("h", n).unwrap();
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let v = match (round + i) % 4 {
                    0 => 0,
                    1 => u128::MAX,
                    2 => 1,
                    _ => ((seed as u128) << 64) | seed.rotate_left(17) as u128,
                };
                pkt.phv.set_u(&p, fid, v);
            }
            pkt.phv.valid[1] = round % 2 == 0;
            for e in &exprs {
                let mut n = e.clone();
                cx.rewrite(&mut n);
                if round == 0 && matches!(n, Expr::Narrow(_)) {
                    narrowed += 1;
                }
                let ex = Exec::new(&p, &mut rt);
                assert_eq!(ex.eval(&pkt, &[], &n), ex.eval(&pkt, &[], e), "{e:?}");
                assert_eq!(ex.truthy(&pkt, &[], &n), ex.eval(&pkt, &[], e).truthy(), "{e:?}");
            }
        }
        // most are narrow; 128-bit fields, x*x and shifts by a field are not
        assert!(narrowed > exprs.len() / 2, "{narrowed} of {}", exprs.len());
        let mut big = bin(BinOp::Mul, f("x"), f("x"));
        cx.rewrite(&mut big);
        assert!(matches!(big, Expr::Binary(..)), "x*x may need 128 bits");
        let mut shl = bin(BinOp::Shl, f("w"), f("a"));
        cx.rewrite(&mut shl);
        assert!(matches!(shl, Expr::Binary(BinOp::Shl, ..)));
    }
}
