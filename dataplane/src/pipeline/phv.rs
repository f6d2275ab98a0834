//! The packet header vector: every field of every header instance, stored
//! flat. Fields of up to 128 bits live in `vals` (indexed by field id);
//! wider and varbit fields in `wide` (fixed-capacity big-endian buffers,
//! allocated once with the PHV). A PHV is reused from packet to packet.

use crate::program::{FieldId, HdrId, Program};
use crate::value::{mask_u128, Val};

#[derive(Clone, Debug)]
pub struct Phv {
    pub vals: Vec<u128>,
    pub wide: Vec<Vec<u8>>,
    pub valid: Vec<bool>,
    /// Current length in bits of each header's varbit field.
    pub vl_bits: Vec<u32>,
    pub stack_next: Vec<u32>,
    pub ustack_next: Vec<u32>,
}

/// The metadata headers' storage, found once per program: a packet's
/// clones and recirculations reset it, and a large program has dozens of
/// metadata headers, most of them adjacent.
#[derive(Clone, Debug, Default)]
pub struct MetadataLayout {
    /// Their field slots, adjacent headers' merged.
    slots: Vec<std::ops::Range<u32>>,
    /// The other slots (the headers'), in the same form.
    header_slots: Vec<std::ops::Range<u32>>,
    /// Their wide fields' byte vectors.
    wide: Vec<u32>,
    headers: Vec<HdrId>,
}

impl MetadataLayout {
    pub fn of(p: &Program) -> MetadataLayout {
        let mut m = MetadataLayout::default();
        for (i, hd) in p.headers.iter().enumerate().filter(|(_, h)| h.metadata) {
            let r = hd.first_field..hd.first_field + hd.nfields;
            match m.slots.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ if r.is_empty() => {}
                _ => m.slots.push(r.clone()),
            }
            m.wide.extend(r.filter_map(|f| p.fields[f as usize].wide));
            m.headers.push(i as HdrId);
        }
        let mut runs = m.slots.clone();
        runs.sort_by_key(|r| r.start);
        let end = p.fields.len() as u32;
        let mut at = 0;
        for r in runs.iter().chain(std::iter::once(&(end..end))) {
            if at < r.start {
                m.header_slots.push(at..r.start);
            }
            at = r.end;
        }
        m
    }
}

impl Phv {
    pub fn new(p: &Program) -> Phv {
        let mut phv = Phv {
            vals: vec![0; p.fields.len()],
            wide: p.wide_bytes.iter().map(|n| vec![0u8; *n as usize]).collect(),
            valid: vec![false; p.headers.len()],
            vl_bits: vec![0; p.headers.len()],
            stack_next: vec![0; p.stacks.len()],
            ustack_next: vec![0; p.union_stacks.len()],
        };
        phv.reset(p);
        phv
    }

    /// Everything zero, headers invalid, metadata valid (BMv2's metadata
    /// headers are always valid).
    pub fn reset(&mut self, p: &Program) {
        self.vals.iter_mut().for_each(|v| *v = 0);
        for w in &mut self.wide {
            w.iter_mut().for_each(|b| *b = 0);
        }
        if p.valid_init.len() == self.valid.len() {
            self.valid.copy_from_slice(&p.valid_init);
        } else {
            for (i, h) in p.headers.iter().enumerate() {
                self.valid[i] = h.metadata;
            }
        }
        self.vl_bits.iter_mut().for_each(|v| *v = 0);
        self.stack_next.iter_mut().for_each(|v| *v = 0);
        self.ustack_next.iter_mut().for_each(|v| *v = 0);
    }

    /// Zeroes all metadata fields (simple_switch's `reset_metadata`), as
    /// `zero_header` of each metadata header would.
    pub fn reset_metadata(&mut self, p: &Program) {
        let m = &p.metadata;
        for r in &m.slots {
            self.vals[r.start as usize..r.end as usize].fill(0);
        }
        for w in &m.wide {
            self.wide[*w as usize].fill(0);
        }
        for h in &m.headers {
            self.vl_bits[*h as usize] = 0;
        }
    }

    /// `copy_from(o)` then `reset_metadata(p)`, without copying the
    /// metadata's slots first.
    pub fn copy_headers_from(&mut self, o: &Phv, p: &Program) {
        for r in &p.metadata.header_slots {
            let r = r.start as usize..r.end as usize;
            self.vals[r.clone()].copy_from_slice(&o.vals[r]);
        }
        self.copy_rest_from(o);
        self.reset_metadata(p);
    }

    pub fn copy_from(&mut self, o: &Phv) {
        self.vals.copy_from_slice(&o.vals);
        self.copy_rest_from(o);
    }

    /// Copies all but the field slots.
    fn copy_rest_from(&mut self, o: &Phv) {
        for (a, b) in self.wide.iter_mut().zip(&o.wide) {
            a.copy_from_slice(b);
        }
        self.valid.copy_from_slice(&o.valid);
        self.vl_bits.copy_from_slice(&o.vl_bits);
        self.stack_next.copy_from_slice(&o.stack_next);
        self.ustack_next.copy_from_slice(&o.ustack_next);
    }

    pub fn zero_header(&mut self, p: &Program, h: HdrId) {
        let hd = &p.headers[h as usize];
        let fields = hd.first_field as usize..(hd.first_field + hd.nfields) as usize;
        self.vals[fields.clone()].fill(0);
        if !self.wide.is_empty() {
            for f in fields {
                if let Some(w) = p.fields[f].wide {
                    self.wide[w as usize].fill(0);
                }
            }
        }
        self.vl_bits[h as usize] = 0;
    }

    /// Reads a field as BMv2 does: unsigned, or sign-extended for int<w>.
    #[inline]
    pub fn get(&self, p: &Program, f: FieldId) -> Val {
        let fm = p.fmeta[f as usize];
        if !fm.wide {
            let v = self.vals[f as usize];
            let width = fm.width as u32;
            return if fm.signed && width > 0 && (v >> (width - 1)) & 1 == 1 {
                if width < 128 {
                    Val::S(v as i128 - (1i128 << width))
                } else {
                    Val::from_u128(v).two_comp_mod(128)
                }
            } else {
                Val::from_u128(v)
            };
        }
        self.get_wide(p, f)
    }

    /// `get` of a field in wide storage (wider than 128 bits, or varbit).
    fn get_wide(&self, p: &Program, f: FieldId) -> Val {
        let fd = &p.fields[f as usize];
        let v = match fd.wide {
            Some(w) => Val::from_be_bytes(&self.wide[w as usize]),
            None => Val::from_u128(self.vals[f as usize]),
        };
        if fd.signed {
            v.two_comp_mod(fd.width)
        } else {
            v
        }
    }

    /// Writes a field, truncating to its width.
    #[inline]
    pub fn set(&mut self, p: &Program, f: FieldId, v: &Val) {
        let fm = p.fmeta[f as usize];
        if !fm.wide {
            self.vals[f as usize] = v.trunc_u128(fm.width as u32);
            return;
        }
        // wide storage; a varbit keeps its current length, the value right-aligned
        let fd = &p.fields[f as usize];
        match fd.wide {
            Some(w) => v.write_be(fd.width, &mut self.wide[w as usize]),
            None => self.vals[f as usize] = v.trunc_u128(fd.width),
        }
    }

    /// Writes a narrow field from an unsigned value (masked here).
    #[inline]
    pub fn set_u(&mut self, p: &Program, f: FieldId, v: u128) {
        let fm = p.fmeta[f as usize];
        if !fm.wide {
            self.vals[f as usize] = v & mask_u128(fm.width as u32);
        } else {
            self.set(p, f, &Val::from_u128(v));
        }
    }

    /// The field as `ceil(width/8)` big-endian bytes appended to `out`
    /// (table keys, parser keys, digests).
    pub fn append_bytes(&self, p: &Program, f: FieldId, out: &mut Vec<u8>) {
        let fd = &p.fields[f as usize];
        match fd.wide {
            None => {
                let n = fd.width.div_ceil(8) as usize;
                let b = self.vals[f as usize].to_be_bytes();
                out.extend_from_slice(&b[16 - n..]);
            }
            Some(w) => out.extend_from_slice(&self.wide[w as usize]),
        }
    }

    /// Marks a header valid; a union member invalidates its siblings.
    #[inline]
    pub fn set_valid(&mut self, p: &Program, h: HdrId) {
        if let Some(u) = p.headers[h as usize].union_of {
            self.invalidate_union(p, u);
        }
        self.valid[h as usize] = true;
    }

    #[inline(never)]
    fn invalidate_union(&mut self, p: &Program, u: u32) {
        for s in &p.unions[u as usize].headers {
            self.valid[*s as usize] = false;
        }
    }

    /// Copies field values and validity of header `src` into `dst` (same type).
    pub fn copy_header(&mut self, p: &Program, dst: HdrId, src: HdrId) {
        if dst == src {
            return;
        }
        let (d, s) = (&p.headers[dst as usize], &p.headers[src as usize]);
        let n = d.nfields.min(s.nfields);
        for i in 0..n {
            let (fd, fs) = (d.first_field + i, s.first_field + i);
            self.vals[fd as usize] = self.vals[fs as usize];
            if let (Some(wd), Some(ws)) = (p.fields[fd as usize].wide, p.fields[fs as usize].wide) {
                let tmp = self.wide[ws as usize].clone();
                self.wide[wd as usize].copy_from_slice(&tmp);
            }
        }
        self.vl_bits[dst as usize] = self.vl_bits[src as usize];
    }

    /// Swaps values and validity of two headers of the same type (stack shifts).
    pub fn swap_headers(&mut self, p: &Program, a: HdrId, b: HdrId) {
        if a == b {
            return;
        }
        let (ha, hb) = (&p.headers[a as usize], &p.headers[b as usize]);
        let n = ha.nfields.min(hb.nfields);
        for i in 0..n {
            let (fa, fb) = ((ha.first_field + i) as usize, (hb.first_field + i) as usize);
            self.vals.swap(fa, fb);
            if let (Some(wa), Some(wb)) = (p.fields[fa].wide, p.fields[fb].wide) {
                self.wide.swap(wa as usize, wb as usize);
            }
        }
        self.valid.swap(a as usize, b as usize);
        self.vl_bits.swap(a as usize, b as usize);
    }

    /// Wire length of a header in bytes (fixed part plus current varbit).
    pub fn header_bytes(&self, p: &Program, h: HdrId) -> usize {
        ((p.headers[h as usize].fixed_bits + self.vl_bits[h as usize]) / 8) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    /// A program of a metadata header, `h_t` (a, signed s, 136-bit w) and
    /// `headers` (the instances after standard_metadata, as JSON).
    fn program(headers: &str) -> Program {
        let doc = r#"{
            "header_types": [
              {"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
                ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false], ["_p", 5, false]]},
              {"name": "h_t", "id": 1, "fields": [["a", 8, false], ["s", 8, true], ["w", 136, false]]}
            ],
            "headers": [
              {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
              HEADERS
            ],
            "parsers": [{"name": "parser", "id": 0, "init_state": null, "parse_states": []}],
            "deparsers": [{"name": "deparser", "id": 0, "order": []}],
            "pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
                          {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
        }"#;
        json::load(&doc.replace("HEADERS", headers)).unwrap()
    }

    fn prog() -> Program {
        program(
            r#"{"name": "h", "id": 1, "header_type": "h_t", "metadata": false},
               {"name": "g", "id": 2, "header_type": "h_t", "metadata": false}"#,
        )
    }

    #[test]
    fn signed_fields_read_sign_extended() {
        let p = prog();
        let mut phv = Phv::new(&p);
        let s = p.field_by_name("h", "s").unwrap();
        phv.set(&p, s, &Val::S(-2));
        assert_eq!(phv.vals[s as usize], 0xfe);
        assert_eq!(phv.get(&p, s), Val::S(-2));
        let a = p.field_by_name("h", "a").unwrap();
        phv.set(&p, a, &Val::S(0x1ff));
        assert_eq!(phv.get(&p, a), Val::S(0xff));
    }

    #[test]
    fn metadata_is_reset_as_each_metadata_header_would_be_zeroed() {
        // metadata apart and adjacent, with narrow and wide fields, among headers
        let p = program(
            r#"{"name": "h", "id": 1, "header_type": "h_t", "metadata": false},
               {"name": "m1", "id": 2, "header_type": "h_t", "metadata": true},
               {"name": "m2", "id": 3, "header_type": "h_t", "metadata": true},
               {"name": "g", "id": 4, "header_type": "h_t", "metadata": false},
               {"name": "m3", "id": 5, "header_type": "h_t", "metadata": true}"#,
        );
        let mut phv = Phv::new(&p);
        phv.vals.iter_mut().enumerate().for_each(|(i, v)| *v = i as u128 + 1);
        phv.wide.iter_mut().for_each(|w| w.fill(0xab));
        phv.vl_bits.fill(7);
        let mut expect = phv.clone();
        for (i, h) in p.headers.iter().enumerate() {
            if h.metadata {
                expect.zero_header(&p, i as HdrId);
            }
        }
        phv.reset_metadata(&p);
        assert_eq!((&phv.vals, &phv.wide, &phv.vl_bits), (&expect.vals, &expect.wide, &expect.vl_bits));
        let h_a = p.field_by_name("h", "a").unwrap() as usize;
        assert_ne!(phv.vals[h_a], 0, "headers keep their fields");
        assert_eq!(p.metadata.slots.len(), 3, "m1 and m2 are adjacent: one run");
    }

    #[test]
    fn copying_the_headers_leaves_what_a_copy_then_a_metadata_reset_leave() {
        // headers first, between metadata and last; metadata last too
        for last in ["metadata\": false", "metadata\": true"] {
            let p = program(&format!(
                r#"{{"name": "h", "id": 1, "header_type": "h_t", "metadata": false}},
                   {{"name": "m1", "id": 2, "header_type": "h_t", "metadata": true}},
                   {{"name": "g", "id": 3, "header_type": "h_t", "metadata": false}},
                   {{"name": "z", "id": 4, "header_type": "h_t", "{last}}}"#
            ));
            let mut o = Phv::new(&p);
            o.vals.iter_mut().enumerate().for_each(|(i, v)| *v = i as u128 + 1);
            o.wide.iter_mut().enumerate().for_each(|(i, w)| w.fill(i as u8 + 1));
            o.vl_bits.fill(7);
            o.valid.fill(true);
            let mut expect = Phv::new(&p);
            expect.copy_from(&o);
            expect.reset_metadata(&p);
            let mut c = Phv::new(&p);
            c.vals.fill(0x55);
            c.wide.iter_mut().for_each(|w| w.fill(0x55));
            c.copy_headers_from(&o, &p);
            assert_eq!((&c.vals, &c.wide, &c.vl_bits, &c.valid), (&expect.vals, &expect.wide, &expect.vl_bits, &expect.valid));
            assert!(c.vals.iter().any(|v| *v == 0) && c.vals.iter().any(|v| *v != 0));
        }
    }

    #[test]
    fn wide_fields_and_swap() {
        let p = prog();
        let mut phv = Phv::new(&p);
        let w = p.field_by_name("h", "w").unwrap();
        let big = Val::parse_hexstr("0x0102030405060708090a0b0c0d0e0f1011").unwrap();
        phv.set(&p, w, &big);
        assert_eq!(phv.get(&p, w), big);
        let mut out = vec![];
        phv.append_bytes(&p, w, &mut out);
        assert_eq!(out.len(), 17);
        assert_eq!(out[16], 0x11);
        phv.valid[1] = true;
        phv.swap_headers(&p, 1, 2);
        assert!(phv.valid[2] && !phv.valid[1]);
        let gw = p.field_by_name("g", "w").unwrap();
        assert_eq!(phv.get(&p, gw), big);
        assert!(phv.valid[0], "metadata is always valid");
    }
}
