//! A small multiplicative hasher for table keys (short byte strings chosen
//! by the control plane; HashDoS resistance is not needed here, speed is).

use std::hash::{BuildHasher, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.hash = (self.hash.rotate_left(5) ^ w).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            self.add(u64::from_le_bytes(b));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    /// Integer keys (the tables' `small_key` maps): two words, no byte loop.
    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.add(i as u64);
        self.add((i >> 64) as u64);
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    /// The multiply leaves the low bits depending only on the key's low
    /// bits, and the hash map takes its bucket from the low bits: keys with
    /// trailing zero bits (lpm prefixes, /24 routes) would all probe from a
    /// few buckets. The rotation brings the well-mixed high bits down (as
    /// rustc-hash's finish does).
    #[inline]
    fn finish(&self) -> u64 {
        self.hash.rotate_left(26)
    }
}

#[derive(Default, Clone, Copy, Debug)]
pub struct FxBuildHasher;

impl BuildHasher for FxBuildHasher {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash(k: u128) -> u64 {
        let mut h = FxBuildHasher.build_hasher();
        k.hash(&mut h);
        h.finish()
    }

    /// Prefixes with 16 trailing zero bits spread over the low bits the
    /// hash map indexes with (before the rotation: 32 distinct values).
    #[test]
    fn keys_with_trailing_zeros_spread_over_low_bits() {
        let n = 4096u128;
        let low: std::collections::HashSet<u64> = (0..n).map(|i| hash((0x0200_0000 + i) << 16) & 0xffff).collect();
        assert!(low.len() > 3000, "{} distinct low 16 bits of {n}", low.len());
    }
}
