//! Hash and checksum algorithms, bit-exact with BMv2's calculations.cpp.

use crate::program::HashAlgo;

/// Parameters of a CRC (the Rocksoft model BMv2 uses for its custom CRCs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrcParams {
    pub width: u32,
    pub poly: u64,
    pub init: u64,
    pub xor_out: u64,
    pub reflect_in: bool,
    pub reflect_out: bool,
}

impl CrcParams {
    pub const CRC16: CrcParams =
        CrcParams { width: 16, poly: 0x8005, init: 0, xor_out: 0, reflect_in: true, reflect_out: true };
    pub const CRC32: CrcParams = CrcParams {
        width: 32,
        poly: 0x04c1_1db7,
        init: 0xffff_ffff,
        xor_out: 0xffff_ffff,
        reflect_in: true,
        reflect_out: true,
    };
    pub const CCITT: CrcParams =
        CrcParams { width: 16, poly: 0x1021, init: 0xffff, xor_out: 0, reflect_in: false, reflect_out: false };
    pub const CRC8: CrcParams =
        CrcParams { width: 8, poly: 0x07, init: 0, xor_out: 0, reflect_in: false, reflect_out: false };
    pub const CRC64: CrcParams = CrcParams {
        width: 64,
        poly: 0x42f0_e1eb_a9ea_3693,
        init: 0,
        xor_out: 0,
        reflect_in: false,
        reflect_out: false,
    };
}

/// A table-driven CRC, built once per configuration.
#[derive(Clone, Debug)]
pub struct Crc {
    pub params: CrcParams,
    table: Box<[u64; 256]>,
}

fn reflect(mut v: u64, bits: u32) -> u64 {
    let mut r = 0u64;
    for _ in 0..bits {
        r = (r << 1) | (v & 1);
        v >>= 1;
    }
    r
}

fn top_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

impl Crc {
    pub fn new(params: CrcParams) -> Crc {
        let w = params.width;
        let mask = top_mask(w);
        let top = 1u64 << (w - 1);
        let mut table = Box::new([0u64; 256]);
        for (d, slot) in table.iter_mut().enumerate() {
            // BMv2 shifts the dividend into the top byte of the register
            let mut r = if w >= 8 { (d as u64) << (w - 8) } else { d as u64 };
            for _ in 0..8 {
                r = if r & top != 0 { (r << 1) ^ params.poly } else { r << 1 };
            }
            *slot = r & mask;
        }
        Crc { params, table }
    }

    pub fn compute(&self, buf: &[u8]) -> u64 {
        let p = &self.params;
        let w = p.width;
        let mask = top_mask(w);
        let mut rem = p.init & mask;
        for &b in buf {
            let byte = if p.reflect_in { reflect(b as u64, 8) } else { b as u64 };
            let idx = if w >= 8 { (byte ^ (rem >> (w - 8))) & 0xff } else { (byte ^ rem) & 0xff };
            rem = (self.table[idx as usize] ^ if w > 8 { rem << 8 } else { 0 }) & mask;
        }
        let out = if p.reflect_out { reflect(rem, w) } else { rem };
        (out ^ p.xor_out) & mask
    }
}

/// The Internet checksum (RFC 1071) of `buf`, odd tail padded with zero.
pub fn csum16(buf: &[u8]) -> u64 {
    csum16_finish(sum16(buf) as u128)
}

/// The sum of `buf`'s big-endian 16-bit words (odd tail padded with zero),
/// not folded.
pub fn sum16(buf: &[u8]) -> u64 {
    let mut sum: u64 = 0;
    let mut chunks = buf.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u64) << 8;
    }
    sum
}

/// The checksum of data whose 16-bit words sum to `sum` — or to anything
/// congruent to it modulo 0xffff that is zero only when it is: folding the
/// carries gives the same one's complement sum either way.
pub fn csum16_finish(sum: u128) -> u64 {
    // 2^64 = 1 (mod 0xffff)
    let mut x = (sum >> 64) + (sum & u64::MAX as u128);
    while x >> 16 != 0 {
        x = (x & 0xffff) + (x >> 16);
    }
    (!(x as u64)) & 0xffff
}

/// XOR of big-endian `n`-byte words, the tail padded with zeros at the end.
pub fn xor_words(buf: &[u8], n: usize) -> u64 {
    let mut acc = 0u64;
    for c in buf.chunks(n) {
        let mut w = 0u64;
        for i in 0..n {
            w = (w << 8) | *c.get(i).unwrap_or(&0) as u64;
        }
        acc ^= w;
    }
    acc
}

/// The first (at most) 8 bytes, big-endian.
pub fn identity(buf: &[u8]) -> u64 {
    buf.iter().take(8).fold(0u64, |a, b| (a << 8) | *b as u64)
}

/// Per-calculation hashing state: CRC tables and round-robin counters.
#[derive(Clone, Debug)]
pub struct Hasher {
    pub algo: HashAlgo,
    crc: Option<Crc>,
    rr: u64,
}

impl Hasher {
    pub fn new(algo: HashAlgo) -> Hasher {
        let crc = match algo {
            HashAlgo::Crc16 | HashAlgo::Crc16Custom => Some(Crc::new(CrcParams::CRC16)),
            HashAlgo::Crc32 | HashAlgo::Crc32Custom => Some(Crc::new(CrcParams::CRC32)),
            HashAlgo::CrcCcitt => Some(Crc::new(CrcParams::CCITT)),
            HashAlgo::Crc8Custom => Some(Crc::new(CrcParams::CRC8)),
            HashAlgo::Crc64Custom => Some(Crc::new(CrcParams::CRC64)),
            _ => None,
        };
        Hasher { algo, crc, rr: 0 }
    }

    /// Reconfigures a custom CRC (simple_switch_CLI's set_crcNN_parameters).
    pub fn set_crc(&mut self, params: CrcParams) -> bool {
        match self.algo {
            HashAlgo::Crc8Custom | HashAlgo::Crc16Custom | HashAlgo::Crc32Custom | HashAlgo::Crc64Custom => {
                if self.crc.as_ref().map(|c| c.params.width) != Some(params.width) {
                    return false;
                }
                self.crc = Some(Crc::new(params));
                true
            }
            _ => false,
        }
    }

    pub fn hash(&mut self, buf: &[u8]) -> u64 {
        match self.algo {
            HashAlgo::Csum16 => csum16(buf),
            HashAlgo::Identity => identity(buf),
            HashAlgo::Xor16 => xor_words(buf, 2),
            HashAlgo::Xor32 => xor_words(buf, 4),
            HashAlgo::RoundRobin => {
                let v = self.rr;
                self.rr = self.rr.wrapping_add(1);
                v
            }
            _ => match &self.crc {
                Some(c) => c.compute(buf),
                None => 0,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECK: &[u8] = b"123456789";

    #[test]
    fn crc_check_values() {
        // standard check values of CRC-16/ARC, CRC-32, CRC-16/CCITT-FALSE
        assert_eq!(Crc::new(CrcParams::CRC16).compute(CHECK), 0xbb3d);
        assert_eq!(Crc::new(CrcParams::CRC32).compute(CHECK), 0xcbf4_3926);
        assert_eq!(Crc::new(CrcParams::CCITT).compute(CHECK), 0x29b1);
        assert_eq!(Crc::new(CrcParams::CRC8).compute(CHECK), 0xf4);
    }

    #[test]
    fn internet_checksum() {
        // IPv4 header example with checksum field zeroed
        let hdr = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0,
            0xa8, 0x00, 0xc7,
        ];
        assert_eq!(csum16(&hdr), 0xb861);
        assert_eq!(csum16(&[0x01]), !0x0100u64 & 0xffff);
        assert_eq!(csum16(&[]), 0xffff);
    }

    #[test]
    fn xor_and_identity() {
        assert_eq!(xor_words(&[0x12, 0x34, 0x56], 2), 0x1234 ^ 0x5600);
        assert_eq!(identity(&[1, 2, 3]), 0x010203);
        assert_eq!(identity(&[1, 2, 3, 4, 5, 6, 7, 8, 9]), 0x0102030405060708);
    }

    #[test]
    fn round_robin_counts() {
        let mut h = Hasher::new(HashAlgo::RoundRobin);
        assert_eq!((h.hash(b""), h.hash(b""), h.hash(b"x")), (0, 1, 2));
    }
}

/// xorshift64* (Vigna): the engine's deterministic random numbers, one
/// state word per user (seeded, never 0).
#[inline]
pub fn xorshift64star(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}
