//! Conditionals' tests in the shapes p4c emits, resolved at load.
//!
//! Nearly every `if` of a real program compares an unsigned field with a
//! constant or another field, tests some bits of a field, or asks whether
//! a header is valid, joined by `&&`, `||` and `!`. As a narrow expression
//! tree that is three to nine nodes, each a dispatch and i128 arithmetic;
//! a [`Test`] is one node per comparison on the stored bits. Anything else
//! keeps its expression.

use super::Packet;
use crate::program::{BinOp, Expr, NExpr, Program, UnOp};

#[derive(Clone, Debug)]
pub enum Test {
    Valid(u32),
    /// An unsigned field against a non-negative constant.
    FieldConst(BinOp, u32, u128),
    /// Two unsigned fields.
    Fields(BinOp, u32, u32),
    /// `(field & mask) != 0`.
    AnyBits(u32, u128),
    Not(Box<Test>),
    And(Box<Test>, Box<Test>),
    Or(Box<Test>, Box<Test>),
}

fn comparison(op: BinOp) -> bool {
    matches!(op, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
}

#[inline(always)]
fn compare(op: BinOp, x: u128, y: u128) -> bool {
    match op {
        BinOp::Eq => x == y,
        BinOp::Ne => x != y,
        BinOp::Lt => x < y,
        BinOp::Le => x <= y,
        BinOp::Gt => x > y,
        _ => x >= y,
    }
}

impl Test {
    /// The test of `e != 0`, when `e` has one of the shapes.
    pub fn of(e: &NExpr) -> Option<Test> {
        Some(match e {
            NExpr::Valid(h) => Test::Valid(*h),
            NExpr::Field(f) => Test::FieldConst(BinOp::Ne, *f, 0),
            NExpr::Unary(UnOp::D2B | UnOp::B2D, a) => Test::of(a)?,
            NExpr::Unary(UnOp::Not, a) => Test::Not(Box::new(Test::of(a)?)),
            NExpr::Binary(BinOp::And, a, b) => Test::And(Box::new(Test::of(a)?), Box::new(Test::of(b)?)),
            NExpr::Binary(BinOp::Or, a, b) => Test::Or(Box::new(Test::of(a)?), Box::new(Test::of(b)?)),
            NExpr::Binary(op, a, b) if comparison(*op) => match (&**a, &**b) {
                (NExpr::Field(f), NExpr::Const(c)) if *c >= 0 => Test::FieldConst(*op, *f, *c as u128),
                (NExpr::Field(f), NExpr::Field(g)) => Test::Fields(*op, *f, *g),
                _ => return None,
            },
            NExpr::BinaryConst(op, a, c) if comparison(*op) && *c >= 0 => match &**a {
                NExpr::Field(f) => Test::FieldConst(*op, *f, *c as u128),
                NExpr::BinaryConst(BinOp::BitAnd, m, mask) if *c == 0 && *mask >= 0 && matches!(op, BinOp::Ne | BinOp::Eq) => {
                    let NExpr::Field(f) = **m else { return None };
                    let any = Test::AnyBits(f, *mask as u128);
                    if *op == BinOp::Ne {
                        any
                    } else {
                        Test::Not(Box::new(any))
                    }
                }
                _ => return None,
            },
            _ => return None,
        })
    }

    #[inline]
    pub fn eval(&self, pkt: &Packet) -> bool {
        let v = &pkt.phv.vals;
        match self {
            Test::Valid(h) => pkt.phv.valid[*h as usize],
            Test::FieldConst(op, f, c) => compare(*op, v[*f as usize], *c),
            Test::Fields(op, f, g) => compare(*op, v[*f as usize], v[*g as usize]),
            Test::AnyBits(f, m) => v[*f as usize] & m != 0,
            Test::Not(a) => !a.eval(pkt),
            Test::And(a, b) => a.eval(pkt) && b.eval(pkt),
            Test::Or(a, b) => a.eval(pkt) || b.eval(pkt),
        }
    }
}

/// Each conditional's test, where its expression has one of the shapes.
pub fn cond_tests(p: &Program) -> Vec<Option<Test>> {
    p.conds
        .iter()
        .map(|c| match &c.expr {
            Expr::Narrow(n) => Test::of(n),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::narrow::eval_narrow;

    fn b(e: NExpr) -> Box<NExpr> {
        Box::new(e)
    }

    #[test]
    fn every_shape_answers_as_the_expression_tree() {
        let p = crate::json::load(crate::engine::tests::MINIMAL).unwrap();
        let mut pkt = Packet::new(&p);
        let ops = [BinOp::Eq, BinOp::Ne, BinOp::Lt, BinOp::Le, BinOp::Gt, BinOp::Ge];
        let mut exprs = vec![NExpr::Valid(0), NExpr::Unary(UnOp::Not, b(NExpr::Unary(UnOp::D2B, b(NExpr::Valid(0))))),
                             NExpr::Unary(UnOp::D2B, b(NExpr::Field(1)))];
        for op in ops {
            exprs.push(NExpr::BinaryConst(op, b(NExpr::Field(0)), 5));
            exprs.push(NExpr::Binary(op, b(NExpr::Field(0)), b(NExpr::Const(5))));
            exprs.push(NExpr::Binary(op, b(NExpr::Field(0)), b(NExpr::Field(1))));
        }
        for op in [BinOp::Eq, BinOp::Ne] {
            exprs.push(NExpr::BinaryConst(op, b(NExpr::BinaryConst(BinOp::BitAnd, b(NExpr::Field(1)), 0x6)), 0));
        }
        let n = exprs.len();
        for i in 0..n {
            let (x, y) = (exprs[i].clone(), exprs[(i * 7 + 3) % n].clone());
            exprs.push(NExpr::Binary(BinOp::And, b(x.clone()), b(y.clone())));
            exprs.push(NExpr::Binary(BinOp::Or, b(x), b(y)));
        }
        for e in &exprs {
            assert!(Test::of(e).is_some(), "{e:?} has a test");
        }
        // shapes it must leave alone: a negative constant, arithmetic
        assert!(Test::of(&NExpr::BinaryConst(BinOp::Lt, b(NExpr::Field(0)), -1)).is_none());
        assert!(Test::of(&NExpr::BinaryConst(BinOp::Add, b(NExpr::Field(0)), 1)).is_none());
        for (f0, f1, valid) in [(0u128, 0u128, false), (5, 5, true), (4, 6, true), (6, 4, false), (7, 1, true), (300, 8, false)] {
            pkt.phv.vals[0] = f0;
            pkt.phv.vals[1] = f1;
            pkt.phv.valid[0] = valid;
            for e in &exprs {
                let want = eval_narrow(&pkt, e) != 0;
                assert_eq!(Test::of(e).unwrap().eval(&pkt), want, "{e:?} at {f0} {f1} {valid}");
            }
        }
    }
}
