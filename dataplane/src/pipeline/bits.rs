//! Bit-level reads and writes of big-endian fields in byte buffers.
//!
//! Callers check once that `bit_off + width` fits in the buffer (the
//! parser's length check per header); these helpers then index freely.
//! A short buffer is a caller bug, so the helpers are written to never
//! panic on it either: bytes past the end read as zero and writes past
//! the end are dropped.

/// Reads `width` (<= 128) bits starting at `bit_off`.
#[inline]
pub fn read_bits(data: &[u8], bit_off: usize, width: u32) -> u128 {
    if width == 0 {
        return 0;
    }
    let first = bit_off / 8;
    let sh = (bit_off % 8) as u32;
    // fast path: the field and its first byte's leading bits fit in one
    // 64-bit big-endian word read in place
    if width + sh <= 64 {
        if let Some(b) = data.get(first..first + 8) {
            let w = u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            return ((w << sh) >> (64 - width)) as u128;
        }
    }
    read_bits_slow(data, bit_off, width)
}

#[cold]
fn read_bits_slow(data: &[u8], bit_off: usize, width: u32) -> u128 {
    let end = bit_off + width as usize;
    if bit_off % 8 == 0 && end % 8 == 0 {
        let (a, b) = (bit_off / 8, end / 8);
        let mut acc: u128 = 0;
        for i in a..b {
            acc = (acc << 8) | *data.get(i).unwrap_or(&0) as u128;
        }
        return acc;
    }
    let first = bit_off / 8;
    let last = (end - 1) / 8;
    if last - first + 1 > 16 {
        // spans 17 bytes: take the bits of the first byte separately
        let head = 8 - (bit_off % 8) as u32;
        let hi = read_bits(data, bit_off, head);
        let lo = read_bits(data, bit_off + head as usize, width - head);
        return (hi << (width - head)) | lo;
    }
    let mut acc: u128 = 0;
    for i in first..=last {
        acc = (acc << 8) | *data.get(i).unwrap_or(&0) as u128;
    }
    let trailing = (last + 1) * 8 - end;
    acc >>= trailing;
    if width >= 128 {
        acc
    } else {
        acc & ((1u128 << width) - 1)
    }
}

/// Writes the low `width` (<= 128) bits of `v` at `bit_off`.
#[inline]
pub fn write_bits(out: &mut [u8], bit_off: usize, width: u32, v: u128) {
    if width == 0 {
        return;
    }
    let first = bit_off / 8;
    let sh = (bit_off % 8) as u32;
    // fast path: read-modify-write one 64-bit big-endian word in place
    if width + sh <= 64 {
        if let Some(b) = out.get_mut(first..first + 8) {
            let w = u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            let shift = 64 - sh - width;
            let mask = (u64::MAX >> (64 - width)) << shift;
            let w = (w & !mask) | (((v as u64) << shift) & mask);
            b.copy_from_slice(&w.to_be_bytes());
            return;
        }
    }
    write_bits_slow(out, bit_off, width, v)
}

#[cold]
fn write_bits_slow(out: &mut [u8], bit_off: usize, width: u32, v: u128) {
    let end = bit_off + width as usize;
    if bit_off % 8 == 0 && end % 8 == 0 {
        let (a, b) = (bit_off / 8, end / 8);
        let mut cur = v;
        for i in (a..b).rev() {
            if let Some(x) = out.get_mut(i) {
                *x = cur as u8;
            }
            cur >>= 8;
        }
        return;
    }
    let first = bit_off / 8;
    let last = (end - 1) / 8;
    for j in (first..=last).rev() {
        let lo = bit_off.max(j * 8);
        let hi = end.min(j * 8 + 8);
        let nb = (hi - lo) as u32;
        let bits = (v >> (end - hi)) & ((1u128 << nb) - 1);
        let shift = (j * 8 + 8 - hi) as u32;
        let mask = ((((1u16 << nb) - 1) << shift) & 0xff) as u8;
        if let Some(x) = out.get_mut(j) {
            *x = (*x & !mask) | (((bits as u16) << shift) as u8 & mask);
        }
    }
}

/// Bytes of slack a buffer keeps after the data written with
/// `write_bits`, so the 64-bit fast path applies to its last fields.
pub const SLACK: usize = 8;

/// Copies `width` bits at `bit_off` in `data` into `out` (right-aligned,
/// big-endian; `out` is `ceil(width/8)` bytes). For wide fields.
pub fn read_bits_wide(data: &[u8], bit_off: usize, width: u32, out: &mut [u8]) {
    for b in out.iter_mut() {
        *b = 0;
    }
    let n = out.len();
    let pad = n * 8 - width as usize;
    if bit_off % 8 == 0 && pad == 0 {
        let a = bit_off / 8;
        for (i, o) in out.iter_mut().enumerate() {
            *o = *data.get(a + i).unwrap_or(&0);
        }
        return;
    }
    for i in 0..width as usize {
        let src = bit_off + i;
        let bit = (data.get(src / 8).unwrap_or(&0) >> (7 - src % 8)) & 1;
        let dst = pad + i;
        out[dst / 8] |= bit << (7 - dst % 8);
    }
}

/// Writes a right-aligned big-endian `width`-bit value into `out` at `bit_off`.
pub fn write_bits_wide(out: &mut [u8], bit_off: usize, width: u32, src: &[u8]) {
    let pad = src.len() * 8 - width as usize;
    if bit_off % 8 == 0 && pad == 0 {
        let a = bit_off / 8;
        for (i, s) in src.iter().enumerate() {
            if let Some(o) = out.get_mut(a + i) {
                *o = *s;
            }
        }
        return;
    }
    for i in 0..width as usize {
        let s = pad + i;
        let bit = (src[s / 8] >> (7 - s % 8)) & 1;
        let d = bit_off + i;
        if let Some(o) = out.get_mut(d / 8) {
            let m = 1u8 << (7 - d % 8);
            *o = (*o & !m) | (bit << (7 - d % 8));
        }
    }
}

/// Appends bit fields MSB first to a byte vector, keeping the pending
/// bits in a register: no read-modify-write of memory per field (which
/// stalls on store forwarding when fields share bytes).
pub struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u128,
    n: u32,
}

impl<'a> BitWriter<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> BitWriter<'a> {
        BitWriter { out, acc: 0, n: 0 }
    }

    /// Appends the low `width` (<= 64) bits of `v`.
    #[inline]
    pub fn put(&mut self, v: u64, width: u32) {
        if width == 0 {
            return;
        }
        let v = if width >= 64 { v } else { v & ((1u64 << width) - 1) };
        self.acc = (self.acc << width) | v as u128;
        self.n += width;
        if self.n >= 64 {
            let top = (self.acc >> (self.n - 64)) as u64;
            self.out.extend_from_slice(&top.to_be_bytes());
            self.n -= 64;
            self.acc &= (1u128 << self.n) - 1;
        }
    }

    /// Appends the low `width` (<= 128) bits of `v`.
    #[inline]
    pub fn put_u128(&mut self, v: u128, width: u32) {
        if width > 64 {
            self.put((v >> 64) as u64, width - 64);
            self.put(v as u64, 64);
        } else {
            self.put(v as u64, width);
        }
    }

    /// Appends `width` bits held right-aligned in big-endian `src`.
    pub fn put_wide(&mut self, src: &[u8], width: u32) {
        let pad = (src.len() * 8) as u32 - width;
        let mut bit = pad as usize;
        let end = src.len() * 8;
        while bit < end {
            let take = ((end - bit) as u32).min(56);
            let v = read_bits(src, bit, take) as u64;
            self.put(v, take);
            bit += take as usize;
        }
    }

    /// Appends whole bytes (fast when aligned).
    pub fn put_bytes(&mut self, b: &[u8]) {
        if self.n % 8 == 0 {
            self.flush();
            self.out.extend_from_slice(b);
        } else {
            for x in b {
                self.put(*x as u64, 8);
            }
        }
    }

    /// Bits written so far.
    pub fn bits(&self) -> usize {
        self.out.len() * 8 + self.n as usize
    }

    /// Writes out the pending bits, zero-padded to a whole byte.
    pub fn flush(&mut self) {
        while self.n >= 8 {
            self.out.push((self.acc >> (self.n - 8)) as u8);
            self.n -= 8;
        }
        if self.n > 0 {
            self.out.push((self.acc << (8 - self.n)) as u8);
            self.n = 0;
        }
        self.acc = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static PKT: [u8; 6] = [0xab, 0xcd, 0xef, 0x01, 0x23, 0x45];

    #[test]
    fn read_aligned_and_unaligned() {
        assert_eq!(read_bits(&PKT, 0, 8), 0xab);
        assert_eq!(read_bits(&PKT, 0, 16), 0xabcd);
        assert_eq!(read_bits(&PKT, 4, 4), 0xb);
        assert_eq!(read_bits(&PKT, 4, 12), 0xbcd);
        assert_eq!(read_bits(&PKT, 3, 3), 0b010);
        assert_eq!(read_bits(&PKT, 0, 48), 0xabcdef012345);
    }

    #[test]
    fn read_past_end_is_zero_not_panic() {
        assert_eq!(read_bits(&PKT, 40, 16), 0x4500);
        assert_eq!(read_bits(&[], 0, 8), 0);
        assert_eq!(read_bits(&PKT, 1000, 3), 0);
    }

    #[test]
    fn write_then_read_roundtrip() {
        let mut buf = [0xa5u8; 6];
        write_bits(&mut buf, 4, 12, 0x123);
        assert_eq!(buf[0], 0xa1);
        assert_eq!(buf[1], 0x23);
        assert_eq!(buf[2], 0xa5);
        write_bits(&mut buf, 17, 3, 0b101);
        assert_eq!(read_bits(&buf, 17, 3), 0b101);
        assert_eq!(buf[2] & 0b1000_1111, 0xa5 & 0b1000_1111);
        let mut wide = [0u8; 17];
        write_bits(&mut wide, 4, 128, u128::MAX - 1);
        assert_eq!(read_bits(&wide, 4, 128), u128::MAX - 1);
        assert_eq!(wide[0], 0x0f);
    }

    #[test]
    fn write_past_end_is_dropped() {
        let mut buf = [0u8; 1];
        write_bits(&mut buf, 4, 12, 0xfff);
        assert_eq!(buf[0], 0x0f);
        write_bits_wide(&mut buf, 8, 16, &[1, 2]);
        assert_eq!(buf[0], 0x0f);
    }

    #[test]
    fn bit_writer_packs_msb_first() {
        let mut v = vec![0xa5];
        let mut w = BitWriter::new(&mut v);
        w.put(0x4, 4);
        w.put(0x5, 4);
        w.put(0x1ff, 9);
        w.put(u64::MAX, 64);
        w.put(0, 3);
        w.put_wide(&[0x0b, 0xcd], 12);
        assert_eq!(w.bits(), 8 + 96);
        w.flush();
        let mut r = vec![0xa5, 0x45];
        let mut acc = BitWriter::new(&mut r);
        acc.put(0x1ff, 9);
        acc.put(u64::MAX, 64);
        acc.put(0, 3);
        acc.put(0xbcd, 12);
        acc.flush();
        assert_eq!(v, r);
        assert_eq!(read_bits(&v, 8, 8), 0x45);
        assert_eq!(read_bits(&v, 16, 9), 0x1ff);
        assert_eq!(read_bits(&v, 25, 64), u64::MAX as u128);
        assert_eq!(read_bits(&v, 92, 12), 0xbcd);
    }

    #[test]
    fn wide_roundtrip() {
        let mut out = [0u8; 2];
        read_bits_wide(&PKT, 4, 12, &mut out);
        assert_eq!(out, [0x0b, 0xcd]);
        let mut buf = [0u8; 3];
        write_bits_wide(&mut buf, 4, 12, &out);
        assert_eq!(buf, [0x0b, 0xcd, 0x00]);
        let mut out3 = [0u8; 3];
        read_bits_wide(&PKT, 8, 24, &mut out3);
        assert_eq!(out3, [0xcd, 0xef, 0x01]);
    }
}
