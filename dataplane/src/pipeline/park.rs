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
//! Layout of the buffer: the count of non-zero fields (u16), then per
//! field its index (u16, top bit set when the value needs more than 64
//! bits) and its value (u64, or two for the low and high halves); the
//! validity bits (a byte per header); a byte saying whether varbit
//! lengths and stack indexes follow (all zero otherwise); the wide
//! fields' bytes; the frame's length (u32) and bytes.

use super::phv::Phv;
use super::Packet;

const HIGH: u16 = 0x8000;

impl Phv {
    /// A PHV with no storage, held by a parked packet.
    pub(crate) fn empty() -> Phv {
        Phv { vals: vec![], wide: vec![], valid: vec![], vl_bits: vec![], stack_next: vec![], ustack_next: vec![] }
    }

    /// The bytes `park_into` writes (so that parking allocates once, of
    /// the exact size: a buffer grown while parking cost more than the
    /// rest of the park).
    fn parked_size(&self) -> usize {
        let fields: usize = self.vals.iter().map(|v| if *v == 0 { 0 } else if *v >> 64 == 0 { 10 } else { 18 }).sum();
        let counts = self.vl_bits.iter().chain(&self.stack_next).chain(&self.ustack_next);
        let counts = if counts.clone().any(|c| *c != 0) { 4 * counts.count() } else { 0 };
        let wide: usize = self.wide.iter().map(Vec::len).sum();
        2 + fields + self.valid.len() + 1 + counts + wide
    }

    fn park_into(&self, out: &mut Vec<u8>) {
        let at = out.len();
        out.extend_from_slice(&[0, 0]);
        let mut n: u16 = 0;
        let mut put = |i: usize, v: u128| {
            if v >> 64 == 0 {
                out.extend_from_slice(&(i as u16).to_le_bytes());
                out.extend_from_slice(&(v as u64).to_le_bytes());
            } else {
                out.extend_from_slice(&(i as u16 | HIGH).to_le_bytes());
                out.extend_from_slice(&v.to_le_bytes());
            }
            n += 1;
        };
        let chunks = self.vals.chunks_exact(4);
        let tail = chunks.remainder();
        for (c, w) in chunks.enumerate() {
            if w[0] | w[1] | w[2] | w[3] == 0 {
                continue;
            }
            for (j, v) in w.iter().enumerate() {
                if *v != 0 {
                    put(c * 4 + j, *v);
                }
            }
        }
        let base = self.vals.len() - tail.len();
        for (j, v) in tail.iter().enumerate() {
            if *v != 0 {
                put(base + j, *v);
            }
        }
        out[at..at + 2].copy_from_slice(&n.to_le_bytes());
        out.extend(self.valid.iter().map(|v| *v as u8));
        let counts = self.vl_bits.iter().chain(&self.stack_next).chain(&self.ustack_next);
        if counts.clone().any(|c| *c != 0) {
            out.push(1);
            for c in counts {
                out.extend_from_slice(&c.to_le_bytes());
            }
        } else {
            out.push(0);
        }
        for w in &self.wide {
            out.extend_from_slice(w);
        }
    }

    /// Restores what `park_into` wrote into this PHV (of the same program);
    /// returns the bytes read.
    fn unpark_from(&mut self, b: &[u8]) -> usize {
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        self.vals.iter_mut().for_each(|v| *v = 0);
        let n = u16_at(0);
        let mut at = 2;
        for _ in 0..n {
            let i = u16_at(at);
            at += 2;
            let lo = u64_at(at) as u128;
            at += 8;
            if i & HIGH == 0 {
                self.vals[i as usize] = lo;
            } else {
                self.vals[(i & !HIGH) as usize] = lo | (u64_at(at) as u128) << 64;
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
            let n = w.len();
            w.copy_from_slice(&b[at..at + n]);
            at += n;
        }
        at
    }
}

impl Packet {
    /// Whether packets of program `p` can be parked: field indexes fit
    /// the layout's 15 bits.
    pub fn parks(p: &crate::program::Program) -> bool {
        p.fields.len() <= HIGH as usize
    }

    /// Whether the packet's PHV and bytes are parked.
    #[inline]
    pub fn is_parked(&self) -> bool {
        self.parked.is_some()
    }

    /// Parks the PHV and bytes; returns the PHV and buffer it held (for
    /// the engine to reuse).
    pub fn park(&mut self) -> (Phv, Vec<u8>) {
        debug_assert!(!self.is_parked());
        let mut out = Vec::with_capacity(self.phv.parked_size() + 4 + self.data.len());
        self.phv.park_into(&mut out);
        out.extend_from_slice(&(self.data.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.data);
        self.parked = Some(out);
        let phv = std::mem::replace(&mut self.phv, Phv::empty());
        let mut data = std::mem::take(&mut self.data);
        data.clear();
        (phv, data)
    }

    /// Brings a parked packet back into `phv` (any PHV of the program) and
    /// `data` (any buffer: it is cleared first); nothing when it is not parked.
    pub fn unpark(&mut self, mut phv: Phv, mut data: Vec<u8>) {
        let Some(b) = self.parked.take() else { return };
        let at = phv.unpark_from(&b);
        let len = u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")) as usize;
        data.clear();
        data.extend_from_slice(&b[at + 4..at + 4 + len]);
        self.phv = phv;
        self.data = data;
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
        assert!(nf > 4 && nf % 4 != 0, "the tail after the chunks is exercised");
        pkt.phv.valid.iter_mut().enumerate().for_each(|(i, v)| *v = i % 2 == 0);
        pkt.phv.wide.iter_mut().for_each(|w| w.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8 ^ 0x5a));
        pkt.phv.vl_bits.iter_mut().enumerate().for_each(|(i, v)| *v = i as u32 * 8);
        pkt.phv.stack_next.iter_mut().for_each(|v| *v = 1);
        let before = pkt.clone();
        let (phv, data) = pkt.park();
        let parked = pkt.parked.as_ref().unwrap();
        assert_eq!(parked.capacity(), parked.len(), "allocated once, of the size needed");
        assert!(pkt.is_parked() && pkt.phv.vals.is_empty() && pkt.data.is_empty());
        // another packet's PHV and buffer, full of other things, take it back
        let mut other = Packet::new(&p);
        other.phv.vals.iter_mut().for_each(|v| *v = u128::MAX);
        other.phv.vl_bits.iter_mut().for_each(|v| *v = 99);
        other.data.extend_from_slice(&[1; 1000]);
        drop((phv, data));
        pkt.unpark(other.phv, other.data);
        assert!(!pkt.is_parked());
        assert_same(&pkt, &before);
    }

    #[test]
    fn a_fresh_packet_parks_small_and_comes_back_the_same() {
        let p = program();
        let mut pkt = Packet::new(&p);
        pkt.data.extend_from_slice(&[0xab; 64]);
        let before = pkt.clone();
        let (phv, data) = pkt.park();
        let size = pkt.parked.as_ref().unwrap().len();
        // no field is set: the count, the validity bytes, the flag, the
        // wide fields, the length and the bytes
        let wide: usize = before.phv.wide.iter().map(Vec::len).sum();
        assert_eq!(size, 2 + p.headers.len() + 1 + wide + 4 + 64);
        pkt.unpark(phv, data);
        assert_same(&pkt, &before);
    }
}
