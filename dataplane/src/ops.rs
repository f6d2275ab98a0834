//! The pure operators of BMv2 expressions, shared by the per-packet
//! evaluator and by constant folding at load time.

use crate::program::{BinOp, UnOp};
use crate::value::Val;
use std::cmp::Ordering;

#[inline]
pub fn unary(op: UnOp, a: &Val) -> Val {
    match op {
        UnOp::Not => Val::from(!a.truthy()),
        UnOp::BitNot => a.not(),
        UnOp::Neg => a.neg(),
        UnOp::D2B => Val::from(a.truthy()),
        UnOp::B2D => Val::from(a.truthy()),
    }
}

#[inline]
pub fn binary(op: BinOp, a: &Val, b: &Val) -> Val {
    match op {
        BinOp::Add => a.add(b),
        BinOp::Sub => a.sub(b),
        BinOp::Mul => a.mul(b),
        BinOp::Div => a.div(b),
        BinOp::Mod => a.rem(b),
        BinOp::Shl => a.shl(b),
        BinOp::Shr => a.shr(b),
        BinOp::Eq => Val::from(a.cmp_val(b) == Ordering::Equal),
        BinOp::Ne => Val::from(a.cmp_val(b) != Ordering::Equal),
        BinOp::Gt => Val::from(a.cmp_val(b) == Ordering::Greater),
        BinOp::Ge => Val::from(a.cmp_val(b) != Ordering::Less),
        BinOp::Lt => Val::from(a.cmp_val(b) == Ordering::Less),
        BinOp::Le => Val::from(a.cmp_val(b) != Ordering::Greater),
        BinOp::And => Val::from(a.truthy() && b.truthy()),
        BinOp::Or => Val::from(a.truthy() || b.truthy()),
        BinOp::BitAnd => a.and(b),
        BinOp::BitOr => a.or(b),
        BinOp::BitXor => a.xor(b),
    }
}

pub fn binop_by_name(name: &str) -> Option<BinOp> {
    Some(match name {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Mod,
        "<<" => BinOp::Shl,
        ">>" => BinOp::Shr,
        "==" => BinOp::Eq,
        "!=" => BinOp::Ne,
        ">" => BinOp::Gt,
        ">=" => BinOp::Ge,
        "<" => BinOp::Lt,
        "<=" => BinOp::Le,
        "and" => BinOp::And,
        "or" => BinOp::Or,
        "&" => BinOp::BitAnd,
        "|" => BinOp::BitOr,
        "^" => BinOp::BitXor,
        _ => return None,
    })
}

pub fn unop_by_name(name: &str) -> Option<UnOp> {
    Some(match name {
        "not" => UnOp::Not,
        "~" => UnOp::BitNot,
        "-" => UnOp::Neg,
        "d2b" => UnOp::D2B,
        "b2d" => UnOp::B2D,
        _ => return None,
    })
}
