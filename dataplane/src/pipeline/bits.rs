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
