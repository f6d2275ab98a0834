//! The in-place deparse translated to machine code when the program loads
//! (with Cranelift): when every header the deparser emits has a word plan
//! of fields of at most 64 bits (`words::WordPlan`), each header becomes
//! straight-line code that builds its 64-bit words from the PHV with the
//! shifts and constant bits as immediates and stores them big-endian, and,
//! for the fused IPv4-style checksum (`csum_fuse`), sums the words as it
//! goes and writes the checksum.
//!
//! It does what `deparse_in_place` does and fails where that fails (a
//! header without a plan is valid, or the headers do not take exactly the
//! bytes the parser consumed): the interpreter's general path then
//! deparses the packet, as it would have. It writes only before the
//! payload.
#![allow(unsafe_code)]

use super::csum_fuse::FusedCsum;
use super::jit::{self, Code};
use super::phv::Phv;
use super::words::ImageWord;
use crate::program::Program;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::{FunctionBuilder, Variable};

/// (the packet's header bytes, their length, PHV values, validity, whether
/// the fused checksum is computed) -> 1 when deparsed, 0 when not.
type Entry = unsafe extern "C" fn(*mut u8, u64, *mut u128, *const bool, u64) -> u32;

/// A program's in-place deparse as machine code (see the module's comment).
pub struct NativeDeparser {
    entry: Entry,
    /// Holds the code `entry` points to.
    _code: Code,
    fields: usize,
    headers: usize,
}

impl std::fmt::Debug for NativeDeparser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NativeDeparser")
    }
}

impl NativeDeparser {
    /// Writes the valid headers over `head` (the bytes before the payload)
    /// from `phv`, computing the fused checksum when `fused`; false when
    /// the headers do not fit exactly (nothing past `head` is touched).
    #[inline]
    pub fn run(&self, head: &mut [u8], phv: &mut Phv, fused: bool) -> bool {
        if phv.vals.len() < self.fields || phv.valid.len() < self.headers {
            return false;
        }
        // SAFETY: the code writes `head` only below its length (each header
        // checks that it fits first) and reads and writes the PHV's slots of
        // the program's fields and headers, which the lengths above hold.
        unsafe {
            (self.entry)(head.as_mut_ptr(), head.len() as u64, phv.vals.as_mut_ptr(), phv.valid.as_ptr(), fused as u64)
                == 1
        }
    }
}

/// A header the deparser lists, as the code treats it.
enum Step {
    /// Its words (see `WordPlan::narrow_words`) and length in bytes.
    Emit { hdr: u32, words: Vec<ImageWord>, bytes: u32 },
    /// No plan: the in-place deparse fails when it is valid.
    FailIfValid(u32),
}

/// The program's in-place deparse as machine code, when every header its
/// deparser emits has a plan of narrow fields; None otherwise.
pub fn compile(p: &Program) -> Option<NativeDeparser> {
    let mut steps = vec![];
    for &h in &p.deparser {
        let hd = &p.headers[h as usize];
        match &p.deparse_plans[h as usize] {
            Some(plan) => {
                steps.push(Step::Emit { hdr: h, words: plan.narrow_words()?, bytes: plan.bytes() as u32 })
            }
            None if hd.metadata => {}
            None => steps.push(Step::FailIfValid(h)),
        }
    }
    if !jit::slots_addressable(p.fields.len()) {
        return None;
    }
    let fused = p.fused_csum;
    let code = jit::compile(5, |mut b, args, target| {
        let off = b.declare_var(types::I64);
        let zero = b.ins().iconst(types::I64, 0);
        b.def_var(off, zero);
        let mut e = Emitter { b, data: args[0], end: args[1], vals: args[2], valid: args[3], fused_on: args[4], off };
        e.emit(&steps, fused);
        e.b.seal_all_blocks();
        e.b.finalize(target);
    })?;
    // SAFETY: the function was built with exactly `Entry`'s signature.
    let entry = unsafe { std::mem::transmute::<*const u8, Entry>(code.entry) };
    Some(NativeDeparser { entry, _code: code, fields: p.fields.len(), headers: p.headers.len() })
}

struct Emitter<'f> {
    b: FunctionBuilder<'f>,
    data: Value,
    end: Value,
    vals: Value,
    valid: Value,
    fused_on: Value,
    /// The bytes written so far.
    off: Variable,
}

impl Emitter<'_> {
    fn emit(&mut self, steps: &[Step], fused: Option<FusedCsum>) {
        let fail = self.b.create_block();
        for step in steps {
            let next = self.b.create_block();
            let hdr = match step {
                Step::Emit { hdr, .. } | Step::FailIfValid(hdr) => *hdr,
            };
            let valid = self.b.ins().uload8(types::I32, jit::phv_slot(), self.valid, hdr as i32);
            let run = self.b.create_block();
            self.b.ins().brif(valid, run, &[], next, &[]);
            self.b.switch_to_block(run);
            match step {
                Step::FailIfValid(_) => {
                    self.b.ins().jump(fail, &[]);
                }
                Step::Emit { hdr, words, bytes } => self.header(*hdr, words, *bytes, fused, fail, next),
            }
            self.b.switch_to_block(next);
        }
        // done: the headers took exactly the bytes before the payload
        let at = self.b.use_var(self.off);
        let exact = self.b.ins().icmp(IntCC::Equal, at, self.end);
        let one = self.b.ins().iconst(types::I32, 1);
        let zero32 = self.b.ins().iconst(types::I32, 0);
        let r = self.b.ins().select(exact, one, zero32);
        self.b.ins().return_(&[r]);
        self.b.switch_to_block(fail);
        let zero32 = self.b.ins().iconst(types::I32, 0);
        self.b.ins().return_(&[zero32]);
    }

    /// A valid header: fail if it does not fit, else write it (summing it
    /// when it is the fused checksum's and that is on) and go to `next`.
    fn header(&mut self, hdr: u32, words: &[ImageWord], bytes: u32,
              fused: Option<FusedCsum>, fail: cranelift_codegen::ir::Block,
              next: cranelift_codegen::ir::Block) {
        let at = self.b.use_var(self.off);
        let after = self.b.ins().iadd_imm_s(at, bytes as i64);
        let over = self.b.ins().icmp(IntCC::UnsignedGreaterThan, after, self.end);
        let fits = self.b.create_block();
        self.b.ins().brif(over, fail, &[], fits, &[]);
        self.b.switch_to_block(fits);
        let base = self.b.ins().iadd(self.data, at);
        self.b.def_var(self.off, after);
        match fused {
            Some(f) if f.hdr == hdr => {
                let (summed, plain) = (self.b.create_block(), self.b.create_block());
                self.b.ins().brif(self.fused_on, summed, &[], plain, &[]);
                self.b.switch_to_block(summed);
                self.write(base, words, bytes, Some(f));
                self.b.ins().jump(next, &[]);
                self.b.switch_to_block(plain);
                self.write(base, words, bytes, None);
            }
            _ => self.write(base, words, bytes, None),
        }
        self.b.ins().jump(next, &[]);
    }

    /// Stores the header's words at `base`; with `fused`, its target counts
    /// as zero, the words are summed, and the checksum goes into the target
    /// and its two bytes.
    fn write(&mut self, base: Value, words: &[ImageWord], bytes: u32, fused: Option<FusedCsum>) {
        let mut sum = fused.map(|_| self.b.ins().iconst(types::I64, 0));
        for (i, (constant, pieces)) in words.iter().enumerate() {
            let mut w = self.b.ins().iconst(types::I64, *constant as i64);
            for &(field, l, r) in pieces {
                if fused.is_some_and(|f| f.target == field) {
                    continue;
                }
                let mut v = jit::load_slot(&mut self.b, self.vals, field);
                if l != 0 {
                    v = self.b.ins().ishl_imm_u(v, l as i64);
                }
                if r != 0 {
                    v = self.b.ins().ushr_imm_u(v, r as i64);
                }
                w = self.b.ins().bor(w, v);
            }
            if let Some(s) = sum {
                // one's complement: a word adds its two halves
                let hi = self.b.ins().ushr_imm_u(w, 32);
                let lo = self.b.ins().band_imm_u(w, 0xffff_ffff);
                let s = self.b.ins().iadd(s, hi);
                sum = Some(self.b.ins().iadd(s, lo));
            }
            let at = (8 * i) as i32;
            let left = bytes as i32 - at;
            if left >= 8 {
                let be = self.b.ins().bswap(w);
                self.b.ins().store(jit::packet_bytes(), be, base, at);
            } else {
                self.head_bytes(base, at, w, left as u32);
            }
        }
        if let (Some(f), Some(sum)) = (fused, sum) {
            let c = self.finish(sum);
            jit::store_slot(&mut self.b, self.vals, f.target, c);
            let c16 = self.b.ins().ireduce(types::I16, c);
            let be = self.b.ins().bswap(c16);
            self.b.ins().store(jit::packet_bytes(), be, base, f.byte as i32);
        }
    }

    /// The first `n` (1 to 7) bytes of word `w`, big-endian, at `base + at`.
    fn head_bytes(&mut self, base: Value, at: i32, w: Value, n: u32) {
        let mut k = 0u32;
        for (size, ty) in [(4u32, types::I32), (2, types::I16), (1, types::I8)] {
            if n & size == 0 {
                continue;
            }
            let shifted = self.b.ins().ushr_imm_u(w, (64 - 8 * (k + size)) as i64);
            let mut v = self.b.ins().ireduce(ty, shifted);
            if size > 1 {
                v = self.b.ins().bswap(v);
            }
            self.b.ins().store(jit::packet_bytes(), v, base, at + k as i32);
            k += size;
        }
    }

    /// `csum_fuse::finish`: folded to 16 bits (five folds take any 64-bit
    /// sum there), complemented.
    fn finish(&mut self, mut s: Value) -> Value {
        for _ in 0..5 {
            let lo = self.b.ins().band_imm_u(s, 0xffff);
            let hi = self.b.ins().ushr_imm_u(s, 16);
            s = self.b.ins().iadd(lo, hi);
        }
        let not = self.b.ins().bnot(s);
        self.b.ins().band_imm_u(not, 0xffff)
    }
}

#[cfg(test)]
mod tests {
    use crate::fuzzing::{native_and_interpreted, native_deparse_mismatch, parsed, parser_walk_frames, Rng};

    /// An Ethernet/IPv4/TCP-ports frame of the L3 program.
    fn frame() -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 8, 0];
        f.extend_from_slice(&[0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 3, 0, 2]);
        f.extend_from_slice(&[0, 80, 1, 0]);
        f.extend_from_slice(&[0xeeu8; 22]);
        f
    }

    #[test]
    fn the_l3_programs_deparse_is_native_and_writes_in_place() {
        let (native, _) = native_and_interpreted();
        let d = native.native_deparser.as_ref().expect("the L3 program's deparse is native");
        let mut pkt = parsed(&native, &frame());
        let end = pkt.payload_off;
        assert_eq!(end, 38);
        assert!(d.run(&mut pkt.data[..end], &mut pkt.phv, true));
        // the IPv4 checksum of the frame as written
        let ip = &pkt.data[14..34];
        let sum: u32 = ip.chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum();
        assert_eq!((sum & 0xffff) + (sum >> 16), 0xffff);
        assert_ne!(&ip[10..12], &[0, 0]);
        // an IPv4 header made invalid no longer fills the parsed bytes
        let ipv4 = native.names.headers["ipv4"] as usize;
        pkt.phv.valid[ipv4] = false;
        assert!(!d.run(&mut pkt.data[..end], &mut pkt.phv, false));
    }

    /// Headers that no longer take the parsed bytes (one removed, one
    /// added) are written by the native code into a new buffer, with the
    /// interpreter's bytes.
    #[test]
    fn headers_removed_or_added_deparse_as_in_the_interpreter() {
        use crate::pipeline::exec::Exec;
        use crate::pipeline::Runtime;
        let (native, interpreted) = native_and_interpreted();
        let (ipv4, l4) = (native.names.headers["ipv4"] as usize, native.names.headers["l4"] as usize);
        // an ICMP frame: no L4 ports parsed, 26 bytes of payload
        let mut icmp = frame();
        icmp[14 + 9] = 1;
        for (f, h, valid, len) in [(frame(), ipv4, false, 14 + 4 + 22), (icmp, l4, true, 14 + 20 + 4 + 26)] {
            let mut bytes = vec![];
            for p in [&native, &interpreted] {
                let mut pkt = parsed(p, &f);
                pkt.phv.valid[h] = valid;
                let (mut rt, mut out) = (Runtime::new(p, 0), vec![]);
                Exec::new(p, &mut rt).deparse(&mut pkt, &mut out);
                bytes.push(pkt.data);
            }
            assert_eq!(bytes[0].len(), len);
            assert_eq!(bytes[0], bytes[1]);
        }
    }

    #[test]
    fn the_native_deparse_gives_the_interpreters_bytes() {
        let (native, interpreted) = native_and_interpreted();
        let mut rng = Rng::new(3);
        let mut frames = parser_walk_frames(&native, 17, 6000);
        frames.push(frame());
        for f in &frames {
            if let Some(d) = native_deparse_mismatch(&native, &interpreted, f, &mut rng) {
                panic!("{d}");
            }
        }
    }
}
