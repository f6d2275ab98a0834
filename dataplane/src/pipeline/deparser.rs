//! The deparser: update checksums, then emit valid headers in `order`
//! followed by the unparsed payload.

use super::bits;
use super::exec::Exec;
use super::Packet;

impl<'a> Exec<'a> {
    /// Rebuilds `pkt.data` from the PHV and the payload; `out` is a reusable
    /// buffer that is swapped with the packet's data.
    pub fn deparse(&mut self, pkt: &mut Packet, out: &mut Vec<u8>) {
        self.update_checksums(pkt);
        let prog = self.prog;
        out.clear();
        for &h in &prog.deparser {
            if !pkt.phv.valid[h as usize] || prog.headers[h as usize].metadata {
                continue;
            }
            let hd = &prog.headers[h as usize];
            let start = out.len();
            let fixed = (hd.fixed_bits / 8) as usize;
            let vl = pkt.phv.vl_bits[h as usize];
            out.resize(start + fixed + (vl / 8) as usize, 0);
            let base = start * 8;
            for f in hd.first_field..hd.first_field + hd.nfields {
                let fd = &prog.fields[f as usize];
                if fd.varbit {
                    let w = &pkt.phv.wide[fd.wide.expect("varbit has storage") as usize];
                    let nb = (vl / 8) as usize;
                    let dst = start + fixed;
                    if nb <= w.len() {
                        out[dst..dst + nb].copy_from_slice(&w[w.len() - nb..]);
                    }
                    continue;
                }
                match fd.wide {
                    None => bits::write_bits(out, base + fd.bit_off as usize, fd.width, pkt.phv.vals[f as usize]),
                    Some(w) => bits::write_bits_wide(
                        out,
                        base + fd.bit_off as usize,
                        fd.width,
                        &pkt.phv.wide[w as usize],
                    ),
                }
            }
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
}
