//! A queued packet's PHV and bytes in compact form.
//!
//! A packet waiting in a deep queue keeps a full PHV (16 bytes per field
//! of the program: 4.2 KB for the reference DUT) and a 2 KiB buffer,
//! though most fields are zero and most frames short. A burst queues
//! 10^4-10^5 of them: each one is fresh memory going in and a row of
//! cache misses coming out. Parked, a packet keeps only its non-zero
//! fields, its validity bits and its bytes in one buffer; its PHV and
//! buffer go back to the engine for the next packet. Unparking restores
//! exactly what was parked.
//!
//! Layout of the buffer: the frame's bytes, then the PHV. Its fields in
//! blocks of 64: per block a bitmap of the non-zero fields and one of
//! those needing more than 64 bits (u64 each), then the low 64 bits of
//! each non-zero field and the high 64 bits of each wide one, in field
//! order. Then the validity bits (a byte per header); a byte saying
//! whether varbit lengths and stack indexes follow (all zero otherwise);
//! the wide fields' bytes from their first non-zero one (a u32 count, then
//! the bytes: values are right-aligned, and a varbit field's buffer is as
//! long as its largest value, the reference DUT's INT stack's 1008 bytes,
//! nearly always empty). The bitmaps make parking a pass of compares and
//! a copy per non-zero field (no index per field). The frame comes first
//! so that unparking reads the PHV and keeps the buffer, cut to the
//! frame, as the packet's bytes: a parked frame is copied once, not twice.

use super::phv::Phv;
use super::Packet;

/// The fields `bits` marks, lowest first.
#[inline(always)]
fn set_bits(mut bits: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let j = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            j
        })
    })
}

impl Phv {
    /// A PHV with no storage, held by a parked packet.
    pub(crate) fn empty() -> Phv {
        Phv { vals: vec![], wide: vec![], valid: vec![], vl_bits: vec![], stack_next: vec![], ustack_next: vec![] }
    }

    /// Writes the compact PHV at the start of `out` (a scratch buffer the
    /// engine keeps, grown to the most it may take and never cut, so that
    /// the parked buffer is then allocated once, of the exact size);
    /// returns its length. Each field is written to where the next one
    /// goes, which moves on only past a non-zero field: no branch per field
    /// (only per four, to skip the zeros of a large program's PHV fast).
    /// The fields needing their high half are found in a second look, only
    /// when a block has one.
    fn park_into(&self, out: &mut Vec<u8>) -> usize {
        let counts = self.vl_bits.iter().chain(&self.stack_next).chain(&self.ustack_next);
        let any_count = counts.clone().any(|c| *c != 0);
        let wide: usize = self.wide.iter().map(Vec::len).sum();
        let most = self.vals.len().div_ceil(64) * 16 + self.vals.len() * 16 + self.valid.len() + 1
            + if any_count { 4 * counts.clone().count() } else { 0 } + 4 * self.wide.len() + wide;
        if out.len() < most {
            out.resize(most, 0);
        }
        let mut at = 0;
        for block in self.vals.chunks(64) {
            let bits_at = at;
            at += 16;
            let (mut nz, mut any_hi) = (0u64, 0u128);
            let fours = block.chunks_exact(4);
            let rest = fours.remainder();
            for (q, g) in fours.enumerate() {
                let or = g[0] | g[1] | g[2] | g[3];
                if or == 0 {
                    continue; // most fields of a large program are zero
                }
                any_hi |= or >> 64;
                // room for all four, checked once (o is at most 24: `min`
                // only spares a check per field)
                let to: &mut [u8; 32] = (&mut out[at..at + 32]).try_into().expect("room for four");
                let (mut o, mut m) = (0, 0u64);
                for (k, v) in g.iter().enumerate() {
                    to[o.min(24)..o.min(24) + 8].copy_from_slice(&(*v as u64).to_le_bytes());
                    let n = *v != 0;
                    m |= (n as u64) << k;
                    o += 8 * n as usize;
                }
                nz |= m << (4 * q);
                at += o;
            }
            for (k, v) in rest.iter().enumerate() {
                out[at..at + 8].copy_from_slice(&(*v as u64).to_le_bytes());
                let n = *v != 0;
                nz |= (n as u64) << (block.len() - rest.len() + k);
                at += 8 * n as usize;
            }
            // which fields need their high half: looked for only when one
            // does (most programs' values all fit in 64 bits)
            let hi = match any_hi {
                0 => 0,
                _ => set_bits(nz).filter(|&j| block[j] >> 64 != 0).fold(0, |h, j| h | 1 << j),
            };
            for j in set_bits(hi) {
                out[at..at + 8].copy_from_slice(&((block[j] >> 64) as u64).to_le_bytes());
                at += 8;
            }
            out[bits_at..bits_at + 8].copy_from_slice(&nz.to_le_bytes());
            out[bits_at + 8..bits_at + 16].copy_from_slice(&hi.to_le_bytes());
        }
        for v in &self.valid {
            out[at] = *v as u8;
            at += 1;
        }
        out[at] = any_count as u8;
        at += 1;
        if any_count {
            for c in counts {
                out[at..at + 4].copy_from_slice(&c.to_le_bytes());
                at += 4;
            }
        }
        for w in &self.wide {
            let kept = &w[leading_zeros(w)..];
            out[at..at + 4].copy_from_slice(&(kept.len() as u32).to_le_bytes());
            out[at + 4..at + 4 + kept.len()].copy_from_slice(kept);
            at += 4 + kept.len();
        }
        at
    }

    /// Restores what `park_into` wrote into this PHV (of the same program).
    fn unpark_from(&mut self, b: &[u8]) {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let mut at = 0;
        for block in self.vals.chunks_mut(64) {
            let (nz, hi) = (u64_at(at), u64_at(at + 8));
            at += 16;
            block.iter_mut().for_each(|v| *v = 0);
            for j in set_bits(nz) {
                block[j] = u64_at(at) as u128;
                at += 8;
            }
            for j in set_bits(hi) {
                block[j] |= (u64_at(at) as u128) << 64;
                at += 8;
            }
        }
        for (v, x) in self.valid.iter_mut().zip(&b[at..]) {
            *v = *x != 0;
        }
        at += self.valid.len();
        let counts = self.vl_bits.iter_mut().chain(&mut self.stack_next).chain(&mut self.ustack_next);
        at += 1;
        if b[at - 1] == 1 {
            for c in counts {
                *c = u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
                at += 4;
            }
        } else {
            counts.for_each(|c| *c = 0);
        }
        for w in &mut self.wide {
            let n = u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")) as usize;
            let zeros = w.len() - n;
            w[..zeros].fill(0);
            w[zeros..].copy_from_slice(&b[at + 4..at + 4 + n]);
            at += 4 + n;
        }
    }
}

/// The number of zero bytes `w` starts with (64 at a time, as eight
/// words: a wide field is mostly zeros).
fn leading_zeros(w: &[u8]) -> usize {
    let word = |c: &[u8]| u64::from_ne_bytes(c.try_into().expect("8 bytes"));
    let blocks = w.chunks_exact(64).take_while(|c| c.chunks_exact(8).fold(0, |a, b| a | word(b)) == 0).count();
    let at = blocks * 64;
    at + w[at..].iter().take_while(|b| **b == 0).count()
}

/// A parked packet's bytes: the frame, then the compact PHV from `phv_at`.
#[derive(Clone, Debug)]
pub struct Parked {
    bytes: Vec<u8>,
    phv_at: usize,
}

impl Packet {
    /// Whether the packet's PHV and bytes are parked.
    #[inline]
    pub fn is_parked(&self) -> bool {
        self.parked.is_some()
    }

    /// Hints the parked PHV into the caches (reading where it is: best
    /// once the packet itself was hinted).
    #[inline]
    pub fn prefetch_parked(&self) {
        if let Some(p) = &self.parked {
            crate::prefetch::prefetch(&p.bytes[p.phv_at..], 512);
        }
    }

    /// Parks the PHV and bytes (`scratch`: any buffer, for the compact
    /// PHV on its way); returns the PHV and buffer it held (for the engine
    /// to reuse).
    pub fn park(&mut self, scratch: &mut Vec<u8>) -> (Phv, Vec<u8>) {
        debug_assert!(!self.is_parked());
        let n = self.phv.park_into(scratch);
        let phv_at = self.data.len();
        let mut bytes = Vec::with_capacity(phv_at + n);
        bytes.extend_from_slice(&self.data);
        bytes.extend_from_slice(&scratch[..n]);
        self.parked = Some(Parked { bytes, phv_at });
        let phv = std::mem::replace(&mut self.phv, Phv::empty());
        let mut data = std::mem::take(&mut self.data);
        data.clear();
        (phv, data)
    }

    /// Brings a parked packet back into `phv` (any PHV of the program);
    /// its bytes are the parked buffer, cut to the frame (the buffer it
    /// had, empty, is dropped). Nothing when it is not parked.
    pub fn unpark(&mut self, mut phv: Phv) {
        let Some(Parked { mut bytes, phv_at }) = self.parked.take() else { return };
        phv.unpark_from(&bytes[phv_at..]);
        bytes.truncate(phv_at);
        self.phv = phv;
        self.data = bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    /// A program with metadata, a header, a 200-bit field, a varbit and a
    /// stack: every part of the PHV has something to keep.
    fn program() -> crate::program::Program {
        let doc = serde_json::json!({
            "header_types": [
                {"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
                    ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false],
                    ["mcast_grp", 16, false], ["_p", 7, false]]},
                {"name": "h_t", "id": 1, "fields": [["a", 8, false], ["b", 128, false], ["w", 200, false], ["x", 64, false]]},
                {"name": "v_t", "id": 2, "fields": [["len", 8, false], ["opts", "*"]], "max_length": 40}],
            "headers": [
                {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
                {"name": "h", "id": 1, "header_type": "h_t", "metadata": false},
                {"name": "v", "id": 2, "header_type": "v_t", "metadata": false},
                {"name": "s0", "id": 3, "header_type": "h_t", "metadata": false},
                {"name": "s1", "id": 4, "header_type": "h_t", "metadata": false}],
            "header_stacks": [{"name": "s", "id": 0, "header_type": "h_t", "size": 2, "header_ids": [3, 4]}],
            "actions": [],
            "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
                {"name": "start", "id": 0, "parser_ops": [], "transition_key": [],
                 "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}]}],
            "deparsers": [{"name": "deparser", "id": 0, "order": []}],
            "pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
                          {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
        });
        json::load(&doc.to_string()).unwrap()
    }

    fn assert_same(a: &Packet, b: &Packet) {
        assert_eq!(a.phv.vals, b.phv.vals);
        assert_eq!(a.phv.wide, b.phv.wide);
        assert_eq!(a.phv.valid, b.phv.valid);
        assert_eq!(a.phv.vl_bits, b.phv.vl_bits);
        assert_eq!(a.phv.stack_next, b.phv.stack_next);
        assert_eq!(a.phv.ustack_next, b.phv.ustack_next);
        assert_eq!(a.data, b.data);
    }

    #[test]
    fn unparking_restores_every_part_of_the_phv_and_the_bytes() {
        let p = program();
        let mut pkt = Packet::new(&p);
        pkt.data.extend((0..300).map(|i| i as u8));
        let nf = pkt.phv.vals.len();
        for (i, v) in pkt.phv.vals.iter_mut().enumerate() {
            // zeros, 64-bit values and values needing the high half
            *v = match i % 3 {
                0 => 0,
                1 => 0xdead_beef + i as u128,
                _ => (i as u128) << 100 | 7,
            };
        }
        assert!(nf > 4);
        pkt.phv.valid.iter_mut().enumerate().for_each(|(i, v)| *v = i % 2 == 0);
        // wide values right-aligned after leading zeros (a short varbit
        // value, a 200-bit field's small one), and a full one
        for (k, w) in pkt.phv.wide.iter_mut().enumerate() {
            let zeros = [w.len() / 2, 0][k % 2];
            w.iter_mut().enumerate().for_each(|(i, b)| *b = if i < zeros { 0 } else { i as u8 | 1 });
        }
        assert!(pkt.phv.wide.len() >= 2);
        pkt.phv.vl_bits.iter_mut().enumerate().for_each(|(i, v)| *v = i as u32 * 8);
        pkt.phv.stack_next.iter_mut().for_each(|v| *v = 1);
        let before = pkt.clone();
        let (phv, data) = pkt.park(&mut vec![]);
        let parked = &pkt.parked.as_ref().unwrap().bytes;
        assert_eq!(parked.capacity(), parked.len(), "allocated once, of the size needed");
        assert!(pkt.is_parked() && pkt.phv.vals.is_empty() && pkt.data.is_empty());
        // another packet's PHV, full of other things, takes it back
        let mut other = Packet::new(&p);
        other.phv.vals.iter_mut().for_each(|v| *v = u128::MAX);
        other.phv.vl_bits.iter_mut().for_each(|v| *v = 99);
        other.phv.wide.iter_mut().for_each(|w| w.fill(0xff));
        drop((phv, data));
        pkt.unpark(other.phv);
        assert!(!pkt.is_parked());
        assert_same(&pkt, &before);
    }

    #[test]
    fn fields_in_several_blocks_come_back_with_both_halves() {
        // 150 fields: two full blocks of 64 and a partial one; values
        // with only a low half, only a high half, both, and zeros
        let mut rng = crate::fuzzing::Rng::new(7);
        let mut phv = Packet::new(&program()).phv;
        phv.vals = (0..150u32)
            .map(|i| match rng.below(4) {
                0 => 0,
                1 => rng.next_u64() as u128 | 1,
                2 => (rng.next_u64() as u128 | 1) << 64,
                _ => (rng.next_u64() as u128) << 64 | rng.next_u64() as u128,
            } * (i % 7 != 3) as u128)
            .collect();
        let mut b = vec![0xee; 10];
        let n = phv.park_into(&mut b);
        b.truncate(n);
        let mut back = phv.clone();
        back.vals.iter_mut().for_each(|v| *v = u128::MAX);
        back.unpark_from(&b);
        assert_eq!(back.vals, phv.vals);
    }

    #[test]
    fn a_fresh_packet_parks_small_and_comes_back_the_same() {
        let p = program();
        let mut pkt = Packet::new(&p);
        pkt.data.extend_from_slice(&[0xab; 64]);
        let before = pkt.clone();
        let (phv, _) = pkt.park(&mut vec![1; 5000]);
        let size = pkt.parked.as_ref().unwrap().bytes.len();
        let at = pkt.parked.as_ref().unwrap().bytes.as_ptr();
        // no field is set: the bytes, two empty bitmaps per 64 fields, the
        // validity bytes, the flag, each wide field's count (of no bytes)
        let blocks = before.phv.vals.len().div_ceil(64);
        assert_eq!(size, 64 + 16 * blocks + p.headers.len() + 1 + 4 * before.phv.wide.len());
        pkt.unpark(phv);
        assert_same(&pkt, &before);
        assert!(pkt.data.as_ptr() == at && pkt.data.capacity() == size, "the parked buffer, not a copy");
    }
}
