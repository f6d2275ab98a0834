//! Fixed bit layouts of narrow fields, packed into big-endian 64-bit words
//! and computed once at load.
//!
//! A header's wire image (deparse) and a calculation's input (checksums,
//! hashes) are sequences of fields packed MSB first, whose positions never
//! change from packet to packet. A [`WordPlan`] records, for each 64-bit
//! word of the image, the constant bits it holds and the shift that puts
//! each field (or the part of it that falls in the word) in place, so the
//! image is built with one shift and one OR per piece and one 8-byte store
//! per word, with no bit cursor. Fields are PHV slots of at most 128 bits,
//! whose stored value is always below 2^width (the PHV's invariant).

use super::bits::read_bits;
use crate::program::{CalcInput, HashAlgo, HdrId, Program};
use crate::value::mask_u128;

/// The part of a field of at most 64 bits that falls in one word:
/// `(v << l) >> r` on 64 bits (`l`, `r` < 64), without a branch or a
/// 128-bit shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    field: u32,
    l: u8,
    r: u8,
}

/// The part of a field of 65 to 128 bits that falls in one word: the
/// field's value shifted left by `shift` (right by `-shift` when
/// negative), truncated to 64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WidePiece {
    field: u32,
    shift: i16,
}

/// One 64-bit word of an image: its constant bits, and the end of its
/// pieces in `pieces` and `wide`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Word {
    base: u64,
    end: u32,
    wide_end: u32,
}

/// A 64-bit word of an image: its constant bits, and its pieces as (PHV
/// slot, left shift, right shift): `(v << l) >> r`.
pub(crate) type ImageWord = (u64, Vec<(u32, u8, u8)>);

/// What goes into one field of a packed image (see [`WordPlan::new`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// A PHV field of `width` (1..=128) bits.
    Field { field: u32, width: u32 },
    /// A constant of `width` bits (its value below 2^width, width <= 128).
    Const { value: u128, width: u32 },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WordPlan {
    pieces: Vec<Piece>,
    wide: Vec<WidePiece>,
    words: Vec<Word>,
    /// Length of the image in bits; its bytes are `ceil(bits / 8)`, the
    /// last one zero-padded.
    bits: u32,
}

impl WordPlan {
    /// Packs `slots` back to back, MSB first. Zero-width slots take no room.
    pub fn new(slots: &[Slot]) -> WordPlan {
        let total: u32 = slots.iter().map(|s| match s {
            Slot::Field { width, .. } | Slot::Const { width, .. } => *width,
        }).sum();
        let nwords = total.div_ceil(64) as usize;
        let mut base = vec![0u64; nwords];
        let mut per_word: Vec<(Vec<Piece>, Vec<WidePiece>)> = vec![(vec![], vec![]); nwords];
        let mut off = 0u32;
        for s in slots {
            let (width, field, value) = match *s {
                Slot::Field { field, width } => (width, Some(field), 0),
                Slot::Const { value, width } => (width, None, value & mask_u128(width)),
            };
            if width == 0 {
                continue;
            }
            let end = off + width;
            for w in off / 64..=(end - 1) / 64 {
                let shift = 64 * (w as i32 + 1) - end as i32;
                let (narrow, wide) = &mut per_word[w as usize];
                match field {
                    Some(field) if width <= 64 => {
                        narrow.push(Piece { field, l: shift.max(0) as u8, r: (-shift).max(0) as u8 })
                    }
                    Some(field) => wide.push(WidePiece { field, shift: shift as i16 }),
                    None => base[w as usize] |= shifted(value, shift),
                }
            }
            off = end;
        }
        let mut plan = WordPlan { bits: total, ..WordPlan::default() };
        for (b, (narrow, wide)) in base.into_iter().zip(per_word) {
            plan.pieces.extend(narrow);
            plan.wide.extend(wide);
            plan.words.push(Word { base: b, end: plan.pieces.len() as u32, wide_end: plan.wide.len() as u32 });
        }
        plan
    }

    /// The image's words, when no field is wider than 64 bits: what the
    /// native deparser translates.
    pub(crate) fn narrow_words(&self) -> Option<Vec<ImageWord>> {
        if !self.wide.is_empty() {
            return None;
        }
        let mut start = 0usize;
        let words = self.words.iter().map(|w| {
            let pieces = self.pieces[start..w.end as usize].iter().map(|p| (p.field, p.l, p.r)).collect();
            start = w.end as usize;
            (w.base, pieces)
        });
        Some(words.collect())
    }

    /// Length of the image in bytes.
    pub fn bytes(&self) -> usize {
        self.bits.div_ceil(8) as usize
    }

    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Appends the image of the fields' values in `vals` (PHV slots) to
    /// `out`: `bytes()` bytes, the last one zero-padded.
    #[inline]
    pub fn emit(&self, vals: &[u128], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.bytes(), 0);
        self.emit_into(vals, &mut out[start..]);
    }

    /// Writes the image into `out`, which is `bytes()` long (deparsing in
    /// place).
    #[inline(always)]
    pub fn emit_into(&self, vals: &[u128], out: &mut [u8]) {
        self.emit_words(vals, out, |_| {});
    }

    /// `emit_into`, returning the one's complement sum of the image's
    /// 64-bit words (`csum_fuse::add_word`; the last one zero-padded).
    #[inline(always)]
    pub fn emit_into_summing(&self, vals: &[u128], out: &mut [u8]) -> u64 {
        let mut sum = 0u64;
        self.emit_words(vals, out, |w| sum = super::csum_fuse::add_word(sum, w));
        sum
    }

    #[inline(always)]
    fn emit_words(&self, vals: &[u128], out: &mut [u8], mut each: impl FnMut(u64)) {
        let (mut p, mut q) = (0usize, 0usize);
        let mut chunks = out.chunks_exact_mut(8);
        let mut words = self.words.iter();
        for (chunk, w) in (&mut chunks).zip(&mut words) {
            let cur = self.word(w, &mut p, &mut q, vals);
            each(cur);
            chunk.copy_from_slice(&cur.to_be_bytes());
        }
        let rest = chunks.into_remainder();
        if let (false, Some(w)) = (rest.is_empty(), words.next()) {
            let cur = self.word(w, &mut p, &mut q, vals);
            each(cur);
            put_head(rest, cur);
        }
    }

    /// Word `w` of the image; `p`, `q`: where its pieces start in `pieces`
    /// and `wide` (moved to the next word's).
    #[inline(always)]
    fn word(&self, w: &Word, p: &mut usize, q: &mut usize, vals: &[u128]) -> u64 {
        let mut cur = w.base;
        // plans are built from the program: every field is a PHV slot
        for piece in &self.pieces[*p..w.end as usize] {
            cur |= ((vals[piece.field as usize] as u64) << piece.l) >> piece.r;
        }
        *p = w.end as usize;
        if *q < w.wide_end as usize {
            for piece in &self.wide[*q..w.wide_end as usize] {
                cur |= shifted(vals[piece.field as usize], piece.shift as i32);
            }
            *q = w.wide_end as usize;
        }
        cur
    }
}

/// The first `out.len()` (1 to 7) bytes of `w`, big-endian, in pieces of
/// 4, 2 and 1 bytes (no call to copy a few bytes).
#[inline(always)]
fn put_head(out: &mut [u8], w: u64) {
    let b = w.to_be_bytes();
    let n = out.len();
    let mut i = 0;
    if n & 4 != 0 {
        out[..4].copy_from_slice(&b[..4]);
        i = 4;
    }
    if n & 2 != 0 {
        out[i..i + 2].copy_from_slice(&b[i..i + 2]);
        i += 2;
    }
    if n & 1 != 0 {
        out[i] = b[i];
    }
}

/// A calculation's input as a plan: every input a field of at most 128
/// bits or a constant, possibly followed by the payload once the fields
/// end on a byte boundary. It holds while every header in `headers` is
/// valid (an invalid header's fields are left out of the input, which
/// moves everything after them: the bit-by-bit path does that).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalcPlan {
    pub words: WordPlan,
    pub headers: Vec<HdrId>,
    pub payload: bool,
    /// For csum16 over fields of at most 64 bits: the checksum straight
    /// from the field values, without the bytes.
    pub csum: Option<CsumPlan>,
}

/// csum16 computed from the fields: the one's complement sum of an image
/// only depends on it modulo 0xffff, and 2^16 = 1 modulo 0xffff, so each
/// field adds its value shifted to its place within a 16-bit word
/// (`shift` = bits from its end to the next 16-bit boundary of the image),
/// wherever that word is. The sum is zero only when every field is, as
/// the sum of the words is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsumPlan {
    terms: Vec<(u32, u8)>,
    constants: u64,
    /// The payload starts in the middle of a 16-bit word.
    payload_odd: bool,
}

impl CsumPlan {
    fn new(slots: &[Slot]) -> Option<CsumPlan> {
        let mut terms = vec![];
        let mut constants = 0u128;
        let mut off = 0u32;
        for s in slots {
            let (width, field, value) = match *s {
                Slot::Field { field, width } => (width, Some(field), 0),
                Slot::Const { value, width } => (width, None, value & mask_u128(width)),
            };
            if width > 64 {
                return None;
            }
            off += width;
            let shift = (16 - off % 16) % 16;
            match field {
                Some(f) => terms.push((f, shift as u8)),
                None => constants += value << shift,
            }
        }
        if terms.len() > 1 << 15 {
            return None;
        }
        // fold the constants' sum below 2^17 (same residue, zero only if it was)
        while constants >> 16 != 0 {
            constants = (constants & 0xffff) + (constants >> 16);
        }
        Some(CsumPlan { terms, constants: constants as u64, payload_odd: off % 16 == 8 })
    }

    /// The checksum of the fields' values in `vals` followed by `payload`
    /// (when the calculation has one).
    #[inline]
    pub fn csum16(&self, vals: &[u128], payload: Option<&[u8]>) -> u64 {
        let mut sum = self.constants;
        for &(f, shift) in &self.terms {
            // a field of at most 64 bits, folded to 33 bits (2^32 = 1 modulo
            // 0xffff; zero only when it is), shifted by at most 15: every
            // term is below 2^48 and the sum cannot overflow
            let v = vals[f as usize] as u64;
            sum += ((v & 0xffff_ffff) + (v >> 32)) << shift;
        }
        if let Some(p) = payload {
            let s = crate::hash::sum16(p);
            sum += if self.payload_odd { s << 8 } else { s };
        }
        // the terms are below 2^48: the sum stays far below 2^64; fold the
        // carries on 64 bits (as csum16_finish does on 128)
        while sum >> 16 != 0 {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !sum & 0xffff
    }
}

/// The deparse plan of each header: its fixed fields when all are at most
/// 128 bits wide (None for metadata and headers with wide or varbit fields).
pub fn header_plans(p: &Program) -> Vec<Option<WordPlan>> {
    narrow_headers(p, |fields| {
        let slots: Vec<Slot> = fields.map(|f| Slot::Field { field: f, width: p.fmeta[f as usize].width as u32 }).collect();
        Some(WordPlan::new(&slots))
    })
}

/// `plan(fields)` for each header whose fields are all fixed and at most 128
/// bits wide; None for metadata and headers with wide or varbit fields.
fn narrow_headers<T>(p: &Program, plan: impl Fn(std::ops::Range<u32>) -> Option<T>) -> Vec<Option<T>> {
    p.headers
        .iter()
        .map(|h| {
            let fields = h.first_field..h.first_field + h.nfields;
            if h.metadata || fields.clone().any(|f| p.fmeta[f as usize].wide) {
                return None;
            }
            plan(fields)
        })
        .collect()
}

/// The plan of each calculation, where one applies (see [`CalcPlan`]).
pub fn calc_plans(p: &Program) -> Vec<Option<CalcPlan>> {
    p.calcs.iter().map(|c| calc_plan(p, &c.inputs, c.algo == HashAlgo::Csum16)).collect()
}

fn calc_plan(p: &Program, inputs: &[CalcInput], csum16: bool) -> Option<CalcPlan> {
    let mut slots = vec![];
    let mut headers: Vec<HdrId> = vec![];
    let mut payload = false;
    for (i, inp) in inputs.iter().enumerate() {
        match inp {
            CalcInput::Field(f) => {
                let fd = &p.fields[*f as usize];
                if fd.wide.is_some() || fd.width > 128 {
                    return None;
                }
                if !headers.contains(&fd.hdr) {
                    headers.push(fd.hdr);
                }
                slots.push(Slot::Field { field: *f, width: fd.width });
            }
            CalcInput::Const { value, width } => {
                if *width > 128 {
                    return None;
                }
                slots.push(Slot::Const { value: value.low_u128(), width: *width });
            }
            CalcInput::Payload => {
                if i + 1 != inputs.len() {
                    return None;
                }
                payload = true;
            }
        }
    }
    let words = WordPlan::new(&slots);
    if payload && words.bits() % 8 != 0 {
        return None;
    }
    let csum = if csum16 { CsumPlan::new(&slots) } else { None };
    Some(CalcPlan { words, headers, payload, csum })
}

/// One field of an [`ExtractPlan`]: the 8 big-endian bytes at `byte` of
/// the header, shifted left by `l` and right by `r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Take {
    pub(crate) field: u32,
    pub(crate) byte: u32,
    pub(crate) l: u8,
    pub(crate) r: u8,
}

/// How to read a header's fixed fields (each at most 128 bits) from the
/// packet, computed at load: a field within 8 bytes from its first byte is
/// one load and two shifts; any other (over 64 bits, or straddling) is
/// read bit by bit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExtractPlan {
    takes: Vec<Take>,
    /// (field, bit offset in the header, width) of the fields read bit by bit.
    slow: Vec<(u32, u32, u32)>,
    /// The takes' fields are consecutive PHV slots from this one (no field
    /// skipped or read bit by bit): they are written without an index each.
    first: Option<u32>,
    /// The header fits in [`WINDOW`] bytes: its fields are read from a
    /// zero-padded copy of them, without a length check per field.
    windowed: bool,
    /// Bytes from the header's start that the loads touch (each reads 8
    /// bytes): with that many bytes in the packet, the fields are read in
    /// place, without the copy.
    span: usize,
}

/// Bytes of a packet copied for a header's extraction (see `windowed`).
const WINDOW: usize = 128;

impl ExtractPlan {
    /// The plan's loads and the bytes they touch, when every field is one
    /// load (none read bit by bit): what the native parser translates.
    pub(crate) fn loads(&self) -> Option<(&[Take], usize)> {
        self.slow.is_empty().then_some((&self.takes[..], self.span))
    }

    /// `fields`: (field id, bit offset in the header, width); None when a
    /// field is wider than 128 bits.
    pub fn new(fields: &[(u32, u32, u32)]) -> Option<ExtractPlan> {
        let mut plan = ExtractPlan::default();
        let mut end_bits = 0u32;
        for &(field, bit, width) in fields {
            end_bits = end_bits.max(bit + width);
            if width > 128 {
                return None;
            }
            if width == 0 {
                continue; // its value is always 0
            }
            if bit % 8 + width > 64 {
                plan.slow.push((field, bit, width));
                continue;
            }
            plan.takes.push(Take { field, byte: bit / 8, l: (bit % 8) as u8, r: (64 - width) as u8 });
            plan.span = plan.span.max((bit / 8) as usize + 8);
        }
        plan.windowed = (end_bits as usize).div_ceil(8) <= WINDOW;
        let f0 = plan.takes.first().map(|t| t.field);
        let consecutive = plan.takes.iter().enumerate().all(|(i, t)| Some(t.field) == f0.map(|f| f + i as u32));
        if consecutive && plan.slow.is_empty() {
            plan.first = f0;
        }
        Some(plan)
    }

    /// Reads the fields of the header starting at byte `start` of `data`
    /// into `vals`. Bytes past the end of `data` read as zero (the caller
    /// has checked that the header fits).
    #[inline(always)]
    pub fn extract(&self, data: &[u8], start: usize, vals: &mut [u128]) {
        match data.get(start..start + self.span) {
            Some(d) => self.take_all(d, vals),
            None if self.windowed => {
                let mut win = [0u8; WINDOW + 8];
                let src = data.get(start..).unwrap_or(&[]);
                let n = src.len().min(WINDOW);
                win[..n].copy_from_slice(&src[..n]);
                self.take_all(&win, vals);
            }
            None => {
                for t in &self.takes {
                    let bit = t.byte * 8 + t.l as u32;
                    vals[t.field as usize] = read_bits(data, start * 8 + bit as usize, 64 - t.r as u32);
                }
            }
        }
        for &(field, bit, width) in &self.slow {
            vals[field as usize] = read_bits(data, start * 8 + bit as usize, width);
        }
    }

    /// The takes from `d`, which holds at least `span` bytes.
    #[inline(always)]
    fn take_all(&self, d: &[u8], vals: &mut [u128]) {
        let word = |t: &Take| {
            let o = t.byte as usize;
            let b: [u8; 8] = d[o..o + 8].try_into().expect("within span");
            ((u64::from_be_bytes(b) << t.l) >> t.r) as u128
        };
        match self.first {
            Some(first) => {
                let dst = &mut vals[first as usize..first as usize + self.takes.len()];
                for (slot, t) in dst.iter_mut().zip(&self.takes) {
                    *slot = word(t);
                }
            }
            None => {
                for t in &self.takes {
                    vals[t.field as usize] = word(t);
                }
            }
        }
    }
}

/// The extract plan of each header with only fixed fields of at most 128
/// bits (None for metadata, wide or varbit fields, or long headers).
pub fn extract_plans(p: &Program) -> Vec<Option<ExtractPlan>> {
    narrow_headers(p, |fields| {
        let fs: Vec<(u32, u32, u32)> = fields.map(|f| (f, p.fields[f as usize].bit_off, p.fields[f as usize].width)).collect();
        ExtractPlan::new(&fs)
    })
}

/// `v` shifted left by `shift` (right when negative), low 64 bits.
#[inline(always)]
fn shifted(v: u128, shift: i32) -> u64 {
    if shift >= 0 {
        (v << shift as u32) as u64
    } else {
        (v >> (-shift) as u32) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::bits::BitWriter;

    /// The same image made with the bit writer, field by field.
    fn reference(slots: &[Slot], vals: &[u128]) -> Vec<u8> {
        let mut out = vec![];
        let mut w = BitWriter::new(&mut out);
        for s in slots {
            let (v, width) = match *s {
                Slot::Field { field, width } => (vals[field as usize], width),
                Slot::Const { value, width } => (value, width),
            };
            w.put_u128(v, width);
        }
        w.flush();
        out
    }

    #[test]
    fn ipv4_like_header_matches_bit_writer() {
        let widths = [4u32, 4, 8, 16, 16, 3, 13, 8, 8, 16, 32, 32];
        let vals: Vec<u128> = vec![4, 5, 0x2e, 0x1234, 0xbeef, 0b101, 0x1abc, 64, 17, 0xffff, 0x0a000001, 0x0a000105];
        let slots: Vec<Slot> = widths.iter().enumerate().map(|(i, w)| Slot::Field { field: i as u32, width: *w }).collect();
        let plan = WordPlan::new(&slots);
        assert_eq!(plan.bytes(), 20);
        let mut out = vec![0xa5];
        plan.emit(&vals, &mut out);
        assert_eq!(out[0], 0xa5, "what was there stays");
        assert_eq!(&out[1..], &reference(&slots, &vals)[..]);
        assert_eq!(out[1], 0x45);
    }

    #[test]
    fn fields_across_words_wide_narrow_and_constants() {
        // 48+48+16 (Ethernet), then odd widths so fields straddle words,
        // a 128-bit field, constants, and a total that is not whole bytes
        let slots = vec![
            Slot::Field { field: 0, width: 48 },
            Slot::Field { field: 1, width: 48 },
            Slot::Const { value: 0x0800, width: 16 },
            Slot::Field { field: 2, width: 1 },
            Slot::Field { field: 3, width: 128 },
            Slot::Const { value: 0, width: 0 },
            Slot::Field { field: 4, width: 7 },
            Slot::Const { value: 0x5, width: 3 },
            Slot::Field { field: 5, width: 61 },
        ];
        let vals: Vec<u128> = vec![
            0x0000_0000_000a,
            0xffff_ffff_fffe,
            1,
            0x8123_4567_89ab_cdef_0011_2233_4455_6677,
            0x55,
            (1u128 << 61) - 3,
        ];
        let plan = WordPlan::new(&slots);
        assert_eq!(plan.bits(), 48 + 48 + 16 + 1 + 128 + 7 + 3 + 61);
        let mut out = vec![];
        plan.emit(&vals, &mut out);
        assert_eq!(out, reference(&slots, &vals));
        assert_eq!(out.len(), plan.bytes());
    }

    #[test]
    fn extract_plan_matches_read_bits() {
        use crate::pipeline::bits::read_bits;
        // straddling fields, a 128-bit field at an odd offset, a zero-width
        // field, and a header that ends where the packet does
        let widths = [4u32, 4, 8, 48, 1, 0, 100, 3, 13, 64, 7, 4];
        let mut fs = vec![];
        let mut off = 0;
        for (i, w) in widths.iter().enumerate() {
            fs.push((i as u32, off, *w));
            off += w;
        }
        assert_eq!(off % 8, 0);
        let bytes = (off / 8) as usize;
        let plan = ExtractPlan::new(&fs).expect("fits");
        assert!(plan.windowed);
        for len in [bytes + 3, 300] {
            let data: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(73).wrapping_add(11)).collect();
            for start in [0usize, 3] {
                let mut vals = vec![0xdead_u128; widths.len()];
                plan.extract(&data, start, &mut vals);
                for (i, w) in widths.iter().enumerate() {
                    if *w == 0 {
                        assert_eq!(vals[i], 0xdead, "zero-width fields are left alone");
                        continue;
                    }
                    assert_eq!(vals[i], read_bits(&data, start * 8 + fs[i].1 as usize, *w), "field {i} at byte {start}");
                }
            }
        }
        // a header longer than the window: 21 fields of 61 bits (161 bytes)
        let long: Vec<(u32, u32, u32)> = (0..21).map(|i| (i, i * 61, 61)).collect();
        let plan = ExtractPlan::new(&long).expect("fits");
        assert!(!plan.windowed);
        let data: Vec<u8> = (0..170).map(|i| (i as u8).wrapping_mul(29) ^ 0x5a).collect();
        let mut vals = vec![0u128; 21];
        plan.extract(&data, 2, &mut vals);
        for (i, v) in vals.iter().enumerate() {
            assert_eq!(*v, read_bits(&data, 16 + i * 61, 61));
        }
        assert!(ExtractPlan::new(&[(0, 4, 128)]).is_some());
        assert!(ExtractPlan::new(&[(0, 0, 129)]).is_none());
    }

    #[test]
    fn csum_plan_matches_csum16_of_the_bytes() {
        use crate::hash::csum16;
        // IPv4-like fields; odd widths and a constant; images ending on a
        // byte or a 16-bit boundary, with and without a payload
        let layouts: Vec<Vec<Slot>> = vec![
            [4u32, 4, 8, 16, 16, 3, 13, 8, 8, 32, 32].iter().enumerate().map(|(i, w)| Slot::Field { field: i as u32, width: *w }).collect(),
            vec![Slot::Field { field: 0, width: 32 }, Slot::Const { value: 0, width: 8 }, Slot::Field { field: 1, width: 8 },
                 Slot::Field { field: 2, width: 16 }, Slot::Field { field: 3, width: 24 }],
            vec![Slot::Field { field: 0, width: 5 }, Slot::Const { value: 0x1ff, width: 9 }, Slot::Field { field: 1, width: 64 },
                 Slot::Field { field: 2, width: 2 }, Slot::Field { field: 3, width: 1 }],
        ];
        let payloads: [&[u8]; 4] = [&[], &[0xab], &[0xff, 0xff, 0x01], &[0x12, 0x34, 0x56, 0x78, 0x9a]];
        let mut seed = 7u64;
        for slots in &layouts {
            let plan = CsumPlan::new(slots).expect("narrow fields");
            let words = WordPlan::new(slots);
            for round in 0..50 {
                let mut vals = vec![0u128; slots.len()];
                for s in slots {
                    if let Slot::Field { field, width } = *s {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let v = match round % 3 { 0 => 0, 1 => u128::MAX, _ => (seed >> 3) as u128 ^ field as u128 };
                        vals[field as usize] = v & mask_u128(width);
                    }
                }
                let mut img = vec![];
                words.emit(&vals, &mut img);
                assert_eq!(plan.csum16(&vals, None), csum16(&img), "{slots:?} {vals:?}");
                if words.bits() % 8 == 0 {
                    for p in payloads {
                        let mut with = img.clone();
                        with.extend_from_slice(p);
                        assert_eq!(plan.csum16(&vals, Some(p)), csum16(&with));
                    }
                }
            }
        }
        assert!(CsumPlan::new(&[Slot::Field { field: 0, width: 65 }]).is_none());
    }

    /// The carries of the largest sums (all-ones fields, a jumbo payload
    /// of all ones, odd and even) fold to the checksum of the bytes.
    #[test]
    fn csum_plan_folds_large_sums() {
        use crate::hash::csum16;
        let slots: Vec<Slot> = [64u32, 8, 64, 32, 64].iter().enumerate().map(|(i, w)| Slot::Field { field: i as u32, width: *w }).collect();
        let vals: Vec<u128> = slots.iter().map(|s| match s { Slot::Field { width, .. } => mask_u128(*width), _ => 0 }).collect();
        let plan = CsumPlan::new(&slots).expect("narrow fields");
        let mut img = vec![];
        WordPlan::new(&slots).emit(&vals, &mut img);
        for len in [9000usize, 9001] {
            let payload = vec![0xffu8; len];
            let mut all = img.clone();
            all.extend_from_slice(&payload);
            assert_eq!(plan.csum16(&vals, Some(&payload)), csum16(&all), "{len}");
        }
    }

    #[test]
    fn empty_plan_writes_nothing() {
        let plan = WordPlan::new(&[Slot::Const { value: 0, width: 0 }]);
        let mut out = vec![1];
        plan.emit(&[], &mut out);
        assert_eq!(out, vec![1]);
    }
}
