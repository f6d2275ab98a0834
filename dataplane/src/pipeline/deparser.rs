//! The deparser: update checksums, then emit valid headers in `order`
//! followed by the unparsed payload.

use super::bits;
use super::csum_fuse::{self, FusedCsum};
use super::exec::Exec;
use super::Packet;

impl<'a> Exec<'a> {
    /// Rebuilds `pkt.data` from the PHV and the payload; `out` is a reusable
    /// buffer that is swapped with the packet's data.
    pub fn deparse(&mut self, pkt: &mut Packet, out: &mut Vec<u8>) {
        match self.fused_csum(pkt) {
            Some(f) => {
                if self.deparse_in_place(pkt, Some(f)) {
                    return;
                }
                // not in place: the checksum computed as usual (again, if
                // it was already: the target is not among its inputs)
                self.update_checksums(pkt);
            }
            None => {
                self.update_checksums(pkt);
                if self.deparse_in_place(pkt, None) {
                    return;
                }
            }
        }
        out.clear();
        if !self.emit_native(pkt, out) {
            self.emit_headers(pkt, out);
        }
        let payload = pkt.data.get(pkt.payload_off..).unwrap_or(&[]);
        out.extend_from_slice(payload);
        if out.len() > pkt.truncate_to {
            out.truncate(pkt.truncate_to);
        }
        std::mem::swap(&mut pkt.data, out);
        pkt.payload_off = 0;
        pkt.cursor = 0;
    }

    /// Writes the valid headers into `out` (empty) with the native
    /// deparser, which writes exactly the bytes it is given: those of the
    /// valid headers, when each has a word plan (headers added or removed:
    /// a report, a tunnel, an INT stack). False when there is no native
    /// deparser or a valid header has no plan (`out` then left empty).
    fn emit_native(&self, pkt: &mut Packet, out: &mut Vec<u8>) -> bool {
        let prog = self.prog;
        let Some(native) = &prog.native_deparser else { return false };
        let mut bytes = 0;
        for &h in &prog.deparser {
            if !pkt.phv.valid[h as usize] || prog.headers[h as usize].metadata {
                continue;
            }
            match &prog.deparse_plans[h as usize] {
                Some(plan) => bytes += plan.bytes(),
                None => return false,
            }
        }
        out.resize(bytes, 0);
        // checksums were updated: none is fused into the writing
        let written = native.run(out, &mut pkt.phv, false);
        debug_assert!(written, "the native deparser fills the valid headers' bytes");
        if !written {
            out.clear();
        }
        written
    }

    /// Appends the valid headers to `out`, field by field where a header
    /// has no word plan.
    fn emit_headers(&self, pkt: &Packet, out: &mut Vec<u8>) {
        let prog = self.prog;
        for &h in &prog.deparser {
            if !pkt.phv.valid[h as usize] || prog.headers[h as usize].metadata {
                continue;
            }
            if let Some(plan) = &prog.deparse_plans[h as usize] {
                plan.emit(&pkt.phv.vals, out);
                continue;
            }
            let hd = &prog.headers[h as usize];
            let vl = pkt.phv.vl_bits[h as usize];
            let mut w = bits::BitWriter::new(out);
            for f in hd.first_field..hd.first_field + hd.nfields {
                let fm = prog.fmeta[f as usize];
                if !fm.wide {
                    let v = pkt.phv.vals[f as usize];
                    let width = fm.width as u32;
                    w.put_u128(v, width);
                    continue;
                }
                let fd = &prog.fields[f as usize];
                if fd.varbit {
                    let buf = &pkt.phv.wide[fd.wide.expect("varbit has storage") as usize];
                    let nb = ((vl + 7) / 8) as usize;
                    if nb <= buf.len() {
                        w.put_wide(&buf[buf.len() - nb..], vl);
                    }
                    continue;
                }
                match fd.wide {
                    None => {
                        let v = pkt.phv.vals[f as usize];
                        w.put_u128(v, fd.width);
                    }
                    Some(x) => w.put_wide(&pkt.phv.wide[x as usize], fd.width),
                }
            }
            w.flush();
        }
    }

    /// Deparses over the parsed headers when the headers to emit, all with
    /// word plans, take exactly the bytes the parser consumed (a packet
    /// whose headers were modified, not added or removed): the payload
    /// stays where it is instead of being copied. False when that does not
    /// hold; the headers' bytes may then have been written over, but never
    /// the payload's, which is all the general path reads of the packet.
    /// The program's fused checksum when it updates this packet (its
    /// condition holds, its header is valid).
    #[inline]
    fn fused_csum(&self, pkt: &Packet) -> Option<FusedCsum> {
        let f = self.prog.fused_csum?;
        if !pkt.phv.valid[f.hdr as usize] {
            return None;
        }
        match &self.prog.checksums[f.checksum as usize].cond {
            Some(cond) if !self.truthy(pkt, &[], cond) => None,
            _ => Some(f),
        }
    }

    /// `fused`: the checksum to compute as its header is written.
    fn deparse_in_place(&mut self, pkt: &mut Packet, fused: Option<FusedCsum>) -> bool {
        let prog = self.prog;
        let end = pkt.payload_off;
        if end > pkt.data.len() {
            return false;
        }
        let written = match &prog.native_deparser {
            Some(native) => native.run(&mut pkt.data[..end], &mut pkt.phv, fused.is_some()),
            None => self.write_in_place(pkt, fused, end),
        };
        if !written {
            return false;
        }
        if pkt.data.len() > pkt.truncate_to {
            pkt.data.truncate(pkt.truncate_to);
        }
        pkt.payload_off = 0;
        pkt.cursor = 0;
        true
    }

    /// Writes the valid headers over the packet's first `end` bytes (see
    /// `deparse_in_place`); false when they do not take exactly those.
    fn write_in_place(&mut self, pkt: &mut Packet, fused: Option<FusedCsum>, end: usize) -> bool {
        let prog = self.prog;
        let mut off = 0usize;
        for &h in &prog.deparser {
            if !pkt.phv.valid[h as usize] {
                continue;
            }
            let Some(plan) = &prog.deparse_plans[h as usize] else {
                if prog.headers[h as usize].metadata {
                    continue;
                }
                return false;
            };
            let n = plan.bytes();
            if off + n > end {
                return false;
            }
            match fused {
                Some(f) if f.hdr == h => {
                    let t = f.target as usize;
                    pkt.phv.vals[t] = 0;
                    let sum = plan.emit_into_summing(&pkt.phv.vals, &mut pkt.data[off..off + n]);
                    let c = csum_fuse::finish(sum);
                    pkt.phv.vals[t] = c as u128;
                    let b = off + f.byte as usize;
                    pkt.data[b..b + 2].copy_from_slice(&(c as u16).to_be_bytes());
                }
                _ => plan.emit_into(&pkt.phv.vals, &mut pkt.data[off..off + n]),
            }
            off += n;
        }
        off == end
    }
}
