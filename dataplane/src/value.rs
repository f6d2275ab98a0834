//! Unbounded integers as BMv2 computes with them.
//!
//! BMv2 evaluates every expression on arbitrary-precision integers (GMP) and
//! truncates only when a field is written; p4c relies on that and emits
//! explicit `& mask` / `two_comp_mod` where P4 wants wrap-around. [`Val`]
//! reproduces those semantics with a fast path: almost every value fits in an
//! `i128`, and checked arithmetic promotes to a heap [`BigInt`] only when it
//! would overflow (shifts of wide fields, products of 128-bit values). Values
//! are kept canonical: anything that fits in an `i128` is stored as `S`.

use num_bigint::{BigInt, Sign};
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::cmp::Ordering;

/// Shift amounts are clamped to this many bits. A larger shift of a non-zero
/// value can only be observed after a mask no field is wide enough for.
const MAX_SHIFT: u32 = 4096;

/// An unbounded signed integer (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    /// The common case: the value fits in an i128.
    S(i128),
    /// Wide values; never holds a value that fits in an i128.
    B(BigInt),
}

impl Default for Val {
    fn default() -> Self {
        Val::S(0)
    }
}

impl From<u64> for Val {
    fn from(v: u64) -> Self {
        Val::S(v as i128)
    }
}

impl From<bool> for Val {
    fn from(v: bool) -> Self {
        Val::S(v as i128)
    }
}

impl Val {
    pub const ZERO: Val = Val::S(0);

    /// Canonical form of a big value.
    pub fn from_big(b: BigInt) -> Val {
        match b.to_i128() {
            Some(s) => Val::S(s),
            None => Val::B(b),
        }
    }

    /// An unsigned 128-bit value (fields of up to 128 bits are stored so).
    #[inline]
    pub fn from_u128(v: u128) -> Val {
        if v <= i128::MAX as u128 {
            Val::S(v as i128)
        } else {
            Val::B(BigInt::from(v))
        }
    }

    /// Big-endian unsigned bytes.
    pub fn from_be_bytes(bytes: &[u8]) -> Val {
        if bytes.len() <= 15 {
            let mut v: i128 = 0;
            for &b in bytes {
                v = (v << 8) | b as i128;
            }
            Val::S(v)
        } else {
            Val::from_big(BigInt::from_bytes_be(Sign::Plus, bytes))
        }
    }

    fn big(&self) -> BigInt {
        match self {
            Val::S(s) => BigInt::from(*s),
            Val::B(b) => b.clone(),
        }
    }

    #[inline]
    pub fn is_zero(&self) -> bool {
        matches!(self, Val::S(0))
    }

    #[inline]
    pub fn truthy(&self) -> bool {
        !self.is_zero()
    }

    pub fn is_negative(&self) -> bool {
        match self {
            Val::S(s) => *s < 0,
            Val::B(b) => b.is_negative(),
        }
    }

    /// The low 128 bits in two's complement.
    #[inline]
    pub fn low_u128(&self) -> u128 {
        match self {
            Val::S(s) => *s as u128,
            Val::B(b) => big_low_u128(b),
        }
    }

    /// The low 64 bits in two's complement (BMv2's `get<uint64_t>`).
    #[inline]
    pub fn low_u64(&self) -> u64 {
        self.low_u128() as u64
    }

    /// As an index or count: negative values give 0, huge ones saturate.
    pub fn to_usize_sat(&self) -> usize {
        match self {
            Val::S(s) if *s < 0 => 0,
            Val::S(s) => (*s).min(usize::MAX as i128) as usize,
            Val::B(b) if b.is_negative() => 0,
            Val::B(_) => usize::MAX,
        }
    }

    /// The value modulo 2^width, as unsigned (width <= 128).
    #[inline]
    pub fn trunc_u128(&self, width: u32) -> u128 {
        self.low_u128() & mask_u128(width)
    }

    /// The value modulo 2^width as `nbytes` big-endian bytes into `out`.
    pub fn write_be(&self, width: u32, out: &mut [u8]) {
        match self {
            Val::S(s) if width <= 128 => {
                let v = (*s as u128) & mask_u128(width);
                let full = v.to_be_bytes();
                let n = out.len().min(16);
                let olen = out.len();
                for b in out.iter_mut() {
                    *b = 0;
                }
                out[olen - n..].copy_from_slice(&full[16 - n..]);
            }
            _ => {
                let m = big_mask(width);
                let t = self.big() & m;
                let (_, bytes) = t.to_bytes_be();
                for b in out.iter_mut() {
                    *b = 0;
                }
                let n = bytes.len().min(out.len());
                let olen = out.len();
                out[olen - n..].copy_from_slice(&bytes[bytes.len() - n..]);
            }
        }
    }

    /// The value modulo 2^width, as a non-negative value.
    pub fn trunc(&self, width: u32) -> Val {
        if width <= 127 {
            if let Val::S(s) = self {
                return Val::S(((*s as u128) & mask_u128(width)) as i128);
            }
        }
        Val::from_big(self.big() & big_mask(width))
    }

    pub fn add(&self, o: &Val) -> Val {
        if let (Val::S(a), Val::S(b)) = (self, o) {
            if let Some(r) = a.checked_add(*b) {
                return Val::S(r);
            }
        }
        Val::from_big(self.big() + o.big())
    }

    pub fn sub(&self, o: &Val) -> Val {
        if let (Val::S(a), Val::S(b)) = (self, o) {
            if let Some(r) = a.checked_sub(*b) {
                return Val::S(r);
            }
        }
        Val::from_big(self.big() - o.big())
    }

    pub fn mul(&self, o: &Val) -> Val {
        if let (Val::S(a), Val::S(b)) = (self, o) {
            if let Some(r) = a.checked_mul(*b) {
                return Val::S(r);
            }
        }
        Val::from_big(self.big() * o.big())
    }

    /// Truncating division as GMP's `mpz_tdiv_q`; division by zero gives 0
    /// (BMv2 would crash; p4c rejects constant zero divisors).
    pub fn div(&self, o: &Val) -> Val {
        if o.is_zero() {
            return Val::ZERO;
        }
        if let (Val::S(a), Val::S(b)) = (self, o) {
            if let Some(r) = a.checked_div(*b) {
                return Val::S(r);
            }
        }
        Val::from_big(self.big() / o.big())
    }

    /// Remainder with the sign of the dividend; modulo zero gives 0.
    pub fn rem(&self, o: &Val) -> Val {
        if o.is_zero() {
            return Val::ZERO;
        }
        if let (Val::S(a), Val::S(b)) = (self, o) {
            if let Some(r) = a.checked_rem(*b) {
                return Val::S(r);
            }
        }
        Val::from_big(self.big() % o.big())
    }

    pub fn shl(&self, amount: &Val) -> Val {
        let n = amount.to_usize_sat().min(MAX_SHIFT as usize) as u32;
        if let Val::S(a) = self {
            if *a == 0 {
                return Val::ZERO;
            }
            // fits if the shifted value keeps its sign bit
            let spare = if *a >= 0 { a.leading_zeros() } else { (!*a).leading_zeros() };
            if n < spare {
                return Val::S(a << n);
            }
        }
        Val::from_big(self.big() << n as usize)
    }

    /// Arithmetic (flooring) right shift, as GMP's `mpz_fdiv_q_2exp`.
    pub fn shr(&self, amount: &Val) -> Val {
        let n = amount.to_usize_sat().min(MAX_SHIFT as usize) as u32;
        match self {
            Val::S(a) => Val::S(if n >= 128 { if *a < 0 { -1 } else { 0 } } else { a >> n }),
            Val::B(b) => {
                if b.is_negative() {
                    // floor division by 2^n
                    let d = BigInt::one() << n as usize;
                    let (q, r) = (b / &d, b % &d);
                    Val::from_big(if r.is_zero() { q } else { q - 1 })
                } else {
                    Val::from_big(b >> n as usize)
                }
            }
        }
    }

    pub fn and(&self, o: &Val) -> Val {
        match (self, o) {
            (Val::S(a), Val::S(b)) => Val::S(a & b),
            _ => Val::from_big(self.big() & o.big()),
        }
    }

    pub fn or(&self, o: &Val) -> Val {
        match (self, o) {
            (Val::S(a), Val::S(b)) => Val::S(a | b),
            _ => Val::from_big(self.big() | o.big()),
        }
    }

    pub fn xor(&self, o: &Val) -> Val {
        match (self, o) {
            (Val::S(a), Val::S(b)) => Val::S(a ^ b),
            _ => Val::from_big(self.big() ^ o.big()),
        }
    }

    /// Bitwise complement of an unbounded integer: -x - 1.
    pub fn not(&self) -> Val {
        match self {
            Val::S(a) => Val::S(!a),
            Val::B(b) => Val::from_big(-b - 1),
        }
    }

    pub fn neg(&self) -> Val {
        match self {
            Val::S(a) if *a != i128::MIN => Val::S(-a),
            _ => Val::from_big(-self.big()),
        }
    }

    pub fn cmp_val(&self, o: &Val) -> Ordering {
        match (self, o) {
            (Val::S(a), Val::S(b)) => a.cmp(b),
            _ => self.big().cmp(&o.big()),
        }
    }

    /// `two_comp_mod`: the value modulo 2^width read as a signed width-bit
    /// integer.
    pub fn two_comp_mod(&self, width: u32) -> Val {
        if width == 0 {
            return Val::ZERO;
        }
        if width <= 127 {
            let u = self.low_u128() & mask_u128(width);
            let sign = 1u128 << (width - 1);
            let v = if u & sign != 0 { (u as i128) - (1i128 << width) } else { u as i128 };
            return Val::S(v);
        }
        let m = BigInt::one() << width as usize;
        let mut r = self.big() % &m;
        if r.is_negative() {
            r += &m;
        }
        if r >= (BigInt::one() << (width - 1) as usize) {
            r -= m;
        }
        Val::from_big(r)
    }

    /// `sat_cast`: clamp into the signed width-bit range.
    pub fn sat_cast(&self, width: u32) -> Val {
        if width == 0 {
            return Val::ZERO;
        }
        let max = Val::from_big((BigInt::one() << (width - 1) as usize) - 1);
        let min = Val::from_big(-(BigInt::one() << (width - 1) as usize));
        if self.cmp_val(&max) == Ordering::Greater {
            max
        } else if self.cmp_val(&min) == Ordering::Less {
            min
        } else {
            self.clone()
        }
    }

    /// `usat_cast`: clamp into the unsigned width-bit range.
    pub fn usat_cast(&self, width: u32) -> Val {
        let max = Val::from_big((BigInt::one() << width as usize) - 1);
        if self.is_negative() {
            Val::ZERO
        } else if self.cmp_val(&max) == Ordering::Greater {
            max
        } else {
            self.clone()
        }
    }

    /// Parses BMv2's `hexstr` ("0x1f", "-0x1", also plain decimal).
    pub fn parse_hexstr(s: &str) -> Option<Val> {
        let (neg, body) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let (radix, digits) = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (16, h)
        } else if let Some(b) = body.strip_prefix("0b") {
            (2, b)
        } else {
            (10, body)
        };
        let digits: String = digits.chars().filter(|c| *c != '_').collect();
        if digits.is_empty() {
            return None;
        }
        let b = BigInt::parse_bytes(digits.as_bytes(), radix)?;
        Some(Val::from_big(if neg { -b } else { b }))
    }

    /// Decimal text as BMv2 prints it in log_msg.
    pub fn to_string_dec(&self) -> String {
        match self {
            Val::S(s) => s.to_string(),
            Val::B(b) => b.to_string(),
        }
    }
}

/// All-ones mask of `width` bits (width <= 128).
#[inline]
pub fn mask_u128(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

#[cold]
fn big_low_u128(b: &BigInt) -> u128 {
    (b & &big_mask(128)).to_u128().unwrap_or(0)
}

fn big_mask(width: u32) -> BigInt {
    (BigInt::one() << width as usize) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: i128) -> Val {
        Val::S(x)
    }

    #[test]
    fn add_overflows_into_big_and_back() {
        let a = Val::from_u128(u128::MAX);
        assert!(matches!(a, Val::B(_)));
        let b = a.add(&v(1)).and(&Val::from_u128(u128::MAX));
        assert_eq!(b, v(0));
        assert_eq!(v(i128::MAX).add(&v(1)).sub(&v(1)), v(i128::MAX));
    }

    #[test]
    fn subtraction_then_mask_wraps() {
        // p4c: (a - b) & 0xff for bit<8>
        assert_eq!(v(1).sub(&v(2)).and(&v(0xff)), v(0xff));
        assert_eq!(v(1).sub(&v(2)).trunc_u128(8), 0xff);
    }

    #[test]
    fn shifts() {
        assert_eq!(v(1).shl(&v(200)).shr(&v(199)), v(2));
        assert_eq!(v(-8).shr(&v(1)), v(-4));
        assert_eq!(v(-1).shr(&v(300)), v(-1));
        assert_eq!(v(5).shl(&v(1_000_000)).and(&v(0xffff)), v(0));
        let big_neg = v(-3).shl(&v(130));
        assert_eq!(big_neg.shr(&v(130)), v(-3));
        assert_eq!(big_neg.shr(&v(131)), v(-2));
    }

    #[test]
    fn two_comp_mod_and_casts() {
        assert_eq!(v(0xff).two_comp_mod(8), v(-1));
        assert_eq!(v(0x7f).two_comp_mod(8), v(127));
        assert_eq!(v(-129).two_comp_mod(8), v(127));
        assert_eq!(v(300).sat_cast(8), v(127));
        assert_eq!(v(-300).sat_cast(8), v(-128));
        assert_eq!(v(300).usat_cast(8), v(255));
        assert_eq!(v(-3).usat_cast(8), v(0));
        let x = Val::from_u128(1u128 << 127).two_comp_mod(128);
        assert_eq!(x, Val::from_big(-(BigInt::one() << 127usize)));
    }

    #[test]
    fn hexstr_parsing() {
        assert_eq!(Val::parse_hexstr("0x1f"), Some(v(31)));
        assert_eq!(Val::parse_hexstr("-0x1"), Some(v(-1)));
        assert_eq!(Val::parse_hexstr("12"), Some(v(12)));
        assert_eq!(Val::parse_hexstr("0x"), None);
        assert_eq!(Val::parse_hexstr("zz"), None);
        let wide = Val::parse_hexstr("0xffffffffffffffffffffffffffffffffff").unwrap();
        assert!(matches!(wide, Val::B(_)));
    }

    #[test]
    fn write_be_truncates() {
        let mut out = [0xa5u8; 3];
        v(-1).write_be(12, &mut out);
        assert_eq!(out, [0x00, 0x0f, 0xff]);
        let mut wide = [0xa5u8; 20];
        Val::parse_hexstr("0x0102030405060708090a0b0c0d0e0f101112").unwrap().write_be(160, &mut wide);
        assert_eq!(&wide[..3], &[0, 0, 0x01]);
        assert_eq!(wide[19], 0x12);
    }

    #[test]
    fn not_and_neg() {
        assert_eq!(v(0).not().and(&v(0xff)), v(0xff));
        assert_eq!(v(5).neg(), v(-5));
        assert_eq!(v(i128::MIN).neg().neg(), v(i128::MIN));
    }
}
