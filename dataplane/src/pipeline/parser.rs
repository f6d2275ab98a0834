//! The parser: runs parse states over the packet bytes.
//!
//! Each extract checks once that the header fits in what is left of the
//! packet; a short packet stops parsing with `PacketTooShort` (the P4
//! parser error, recorded in standard_metadata.parser_error), never a
//! panic. As in BMv2, the bytes of headers extracted before the error are
//! consumed and the rest is payload.

use super::bits;
use super::exec::Exec;
use super::native_parser::Outcome;
use super::Packet;
use crate::program::*;

/// Guard against parsers that loop without consuming (BMv2 would hang).
pub(crate) const MAX_STATES: usize = 100_000;

impl<'a> Exec<'a> {
    /// Parses `pkt.data`; sets parser_error/checksum_error and the payload
    /// offset, then verifies checksums.
    pub fn parse(&mut self, pkt: &mut Packet) {
        let prog = self.prog;
        pkt.parser_error = prog.errors.no_error;
        pkt.checksum_error = false;
        pkt.cursor = 0;
        let mut state = prog.parser.init;
        let mut steps = 0usize;
        if let Some(native) = &prog.native_parser {
            match native.run(&pkt.data, &mut pkt.phv) {
                Outcome::Accept { cursor } => {
                    pkt.cursor = cursor;
                    state = None;
                }
                Outcome::Timeout { cursor } => {
                    pkt.cursor = cursor;
                    pkt.parser_error = prog.errors.parser_timeout;
                    state = None;
                }
                Outcome::Reject { cursor, error } => {
                    pkt.cursor = cursor;
                    pkt.parser_error = error;
                    state = None;
                }
                Outcome::Resume { state: s, cursor, steps: n } => {
                    pkt.cursor = cursor;
                    state = Some(s);
                    steps = n;
                }
            }
        }
        while let Some(s) = state {
            steps += 1;
            if steps > MAX_STATES {
                pkt.parser_error = prog.errors.parser_timeout;
                break;
            }
            match self.run_state(pkt, s) {
                Ok(next) => state = next,
                Err(code) => {
                    pkt.parser_error = code;
                    break;
                }
            }
        }
        pkt.payload_off = pkt.cursor.min(pkt.data.len());
        self.verify_checksums(pkt);
    }

    fn run_state(&mut self, pkt: &mut Packet, s: u32) -> Result<Option<u32>, u32> {
        let prog = self.prog;
        let st = &prog.parser.states[s as usize];
        let plan = &prog.state_plans[s as usize];
        match plan {
            Some(plan) => {
                for &(id, bytes) in &plan.extracts {
                    self.extract_planned(pkt, id, bytes as usize)?;
                }
            }
            None => {
                for op in &st.ops {
                    self.parser_op(pkt, op)?;
                }
            }
        }
        if st.transitions.is_empty() {
            return Ok(None);
        }
        if st.small {
            let key = match plan.as_ref().and_then(|p| p.key_field) {
                Some(f) => Some(pkt.phv.vals[f as usize]),
                None => self.small_key(pkt, st),
            };
            if let Some(k) = key {
                for t in &st.transitions {
                    match t.small {
                        Some((v, m)) if k & m != v => continue,
                        _ => return Ok(t.next),
                    }
                }
                // no default transition: BMv2 accepts
                return Ok(None);
            }
        }
        // build the key (bytes per part, each padded to whole bytes)
        let mut key = self.rt_key();
        key.clear();
        for (part, width) in &st.key {
            let nb = ((*width + 7) / 8) as usize;
            match part {
                KeyPart::Field(f) => pkt.phv.append_bytes(prog, *f, &mut key),
                KeyPart::Valid(h) => {
                    let v = self.hdr(pkt, &[], h).map(|id| pkt.phv.valid[id as usize]).unwrap_or(false);
                    key.push(v as u8);
                }
                KeyPart::StackField { stack, off } => {
                    let next = pkt.phv.stack_next[*stack as usize] as usize;
                    let hdrs = &prog.stacks[*stack as usize].headers;
                    let h = hdrs[next.saturating_sub(1).min(hdrs.len() - 1)];
                    let f = prog.headers[h as usize].first_field + off;
                    pkt.phv.append_bytes(prog, f, &mut key);
                }
                KeyPart::UnionStackField { ustack, member, off } => {
                    let next = pkt.phv.ustack_next[*ustack as usize] as usize;
                    let us = &prog.union_stacks[*ustack as usize].unions;
                    let u = us[next.saturating_sub(1).min(us.len() - 1)];
                    let h = prog.unions[u as usize].headers[*member as usize];
                    let f = prog.headers[h as usize].first_field + off;
                    pkt.phv.append_bytes(prog, f, &mut key);
                }
                KeyPart::Lookahead { off, width } => {
                    let start = pkt.cursor * 8 + *off as usize;
                    let l = key.len();
                    key.resize(l + nb, 0);
                    bits::read_bits_wide(&pkt.data, start, *width, &mut key[l..]);
                }
            }
        }
        let mut next = None;
        let mut matched = false;
        let small = if key.len() <= 16 { Some(be_u128(&key)) } else { None };
        for t in &st.transitions {
            if let (Some(k), Some((v, m))) = (small, t.small) {
                if k & m == v {
                    next = t.next;
                    matched = true;
                    break;
                }
                continue;
            }
            let ok = match &t.kind {
                TransitionKind::Default => true,
                TransitionKind::Value { value, mask } => match mask {
                    None => key == *value,
                    Some(m) => key.iter().zip(m).zip(value).all(|((k, m), v)| k & m == *v),
                },
                TransitionKind::VSet { vset, mask } => {
                    let set = &self.rt.ext.vsets[*vset as usize];
                    match mask {
                        None => set.contains(&key),
                        Some(m) => set.iter().any(|v| {
                            v.len() == key.len() && key.iter().zip(m).zip(v).all(|((k, m), v)| k & m == v & m)
                        }),
                    }
                }
            };
            if ok {
                next = t.next;
                matched = true;
                break;
            }
        }
        self.put_rt_key(key);
        if !matched {
            // no default transition: BMv2 accepts (p4c always adds a reject/NoMatch state)
            return Ok(None);
        }
        Ok(next)
    }

    /// The transition key as an integer (the bytes `run_state` would
    /// build), when its parts are narrow fields, validity bits or lookahead.
    fn small_key(&self, pkt: &Packet, st: &ParseState) -> Option<u128> {
        let prog = self.prog;
        let mut acc: u128 = 0;
        for (part, width) in &st.key {
            let nb = (*width).div_ceil(8);
            let v = match part {
                KeyPart::Field(f) if !prog.fmeta[*f as usize].wide => pkt.phv.vals[*f as usize],
                KeyPart::Valid(h) => self.hdr(pkt, &[], h).map(|id| pkt.phv.valid[id as usize]).unwrap_or(false) as u128,
                KeyPart::Lookahead { off, width } if *width <= 128 => {
                    bits::read_bits(&pkt.data, pkt.cursor * 8 + *off as usize, *width)
                }
                _ => return None,
            };
            acc = if nb >= 16 { v } else { (acc << (8 * nb)) | v };
        }
        Some(acc)
    }

    fn rt_key(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.rt.parse_key)
    }

    fn put_rt_key(&mut self, k: Vec<u8>) {
        self.rt.parse_key = k;
    }

    fn parser_op(&mut self, pkt: &mut Packet, op: &'a ParserOp) -> Result<(), u32> {
        let prog = self.prog;
        let errs = &prog.errors;
        match op {
            ParserOp::Extract(HdrX::Static(id)) => self.extract(pkt, *id, None)?,
            ParserOp::Extract(h) => {
                let id = self.hdr(pkt, &[], h).ok_or(errs.stack_out_of_bounds)?;
                self.extract(pkt, id, None)?;
            }
            ParserOp::ExtractStackNext(s) => {
                let next = pkt.phv.stack_next[*s as usize] as usize;
                let Some(id) = prog.stacks[*s as usize].headers.get(next).copied() else {
                    return Err(errs.stack_out_of_bounds);
                };
                self.extract(pkt, id, None)?;
                pkt.phv.stack_next[*s as usize] += 1;
            }
            ParserOp::ExtractUnionStackNext(us, member) => {
                let next = pkt.phv.ustack_next[*us as usize] as usize;
                let Some(u) = prog.union_stacks[*us as usize].unions.get(next).copied() else {
                    return Err(errs.stack_out_of_bounds);
                };
                let id = prog.unions[u as usize].headers[*member as usize];
                self.extract(pkt, id, None)?;
                pkt.phv.ustack_next[*us as usize] += 1;
            }
            ParserOp::ExtractVL { hdr, len_bits, max_bytes } => {
                let nbits = self.eval(pkt, &[], len_bits);
                if nbits.is_negative() || nbits.low_u64() % 8 != 0 || nbits.to_usize_sat() > u32::MAX as usize {
                    return Err(errs.parser_invalid_argument);
                }
                let nbits = nbits.low_u64() as u32;
                let (id, stack) = match hdr {
                    VLTarget::Header(h) => (self.hdr(pkt, &[], h).ok_or(errs.stack_out_of_bounds)?, None),
                    VLTarget::StackNext(s) => {
                        let next = pkt.phv.stack_next[*s as usize] as usize;
                        match prog.stacks[*s as usize].headers.get(next) {
                            Some(id) => (*id, Some(*s)),
                            None => return Err(errs.stack_out_of_bounds),
                        }
                    }
                };
                let fixed = (prog.headers[id as usize].fixed_bits / 8) as usize;
                let total = fixed + (nbits / 8) as usize;
                if pkt.data.len().saturating_sub(pkt.cursor) < total {
                    return Err(errs.packet_too_short);
                }
                if *max_bytes != 0 && total > *max_bytes as usize {
                    return Err(errs.header_too_short);
                }
                self.extract(pkt, id, Some(nbits))?;
                if let Some(s) = stack {
                    pkt.phv.stack_next[s as usize] += 1;
                }
            }
            ParserOp::Set(l, e) => {
                if let Expr::Lookahead { off, width } = e {
                    let need = pkt.cursor * 8 + (*off + *width) as usize;
                    if need > pkt.data.len() * 8 {
                        return Err(errs.packet_too_short);
                    }
                }
                let v = self.eval(pkt, &[], e);
                let f = match l {
                    LValue::Field(f) => Some(*f),
                    LValue::HdrField(h, off) => self.hdr(pkt, &[], h).map(|id| prog.headers[id as usize].first_field + off),
                };
                if let Some(f) = f {
                    pkt.phv.set(prog, f, &v);
                }
            }
            ParserOp::Verify { cond, error } => {
                if !self.eval(pkt, &[], cond).truthy() {
                    let code = self.eval(pkt, &[], error).low_u64() as u32;
                    return Err(code);
                }
            }
            ParserOp::Advance(e) => {
                let v = self.eval(pkt, &[], e);
                if v.is_negative() || v.low_u64() % 8 != 0 {
                    return Err(errs.parser_invalid_argument);
                }
                let bytes = v.to_usize_sat() / 8;
                if pkt.data.len().saturating_sub(pkt.cursor) < bytes {
                    return Err(errs.packet_too_short);
                }
                pkt.cursor += bytes;
            }
            ParserOp::Primitive(p) => {
                self.run_prims(pkt, std::slice::from_ref(p), &[]);
            }
        }
        Ok(())
    }

    /// Extracts header `id` at the cursor (`vl_bits`: the varbit length).
    #[inline]
    fn extract(&mut self, pkt: &mut Packet, id: HdrId, vl_bits: Option<u32>) -> Result<(), u32> {
        let prog = self.prog;
        let hd = &prog.headers[id as usize];
        let fixed_bytes = (hd.fixed_bits / 8) as usize;
        let vl = vl_bits.unwrap_or(0);
        let total = fixed_bytes + (vl / 8) as usize;
        if pkt.data.len().saturating_sub(pkt.cursor) < total {
            return Err(prog.errors.packet_too_short);
        }
        match &prog.extract_plans[id as usize] {
            Some(plan) => plan.extract(&pkt.data, pkt.cursor, &mut pkt.phv.vals),
            None => self.extract_fields(pkt, id, vl),
        }
        pkt.phv.vl_bits[id as usize] = vl;
        pkt.phv.set_valid(prog, id);
        pkt.cursor += total;
        Ok(())
    }

    /// Extracts header `id`, `bytes` long, with its extract plan (see
    /// [`StatePlan`]).
    #[inline(always)]
    fn extract_planned(&mut self, pkt: &mut Packet, id: HdrId, bytes: usize) -> Result<(), u32> {
        let prog = self.prog;
        if pkt.data.len().saturating_sub(pkt.cursor) < bytes {
            return Err(prog.errors.packet_too_short);
        }
        if let Some(plan) = &prog.extract_plans[id as usize] {
            plan.extract(&pkt.data, pkt.cursor, &mut pkt.phv.vals);
        }
        pkt.phv.vl_bits[id as usize] = 0;
        pkt.phv.set_valid(prog, id);
        pkt.cursor += bytes;
        Ok(())
    }

    /// Reads the fields of header `id` at the cursor one by one (headers
    /// with wide or varbit fields); `vl`: the varbit's length in bits.
    #[inline(never)]
    fn extract_fields(&mut self, pkt: &mut Packet, id: HdrId, vl: u32) {
        let prog = self.prog;
        let hd = &prog.headers[id as usize];
        let fixed_bytes = (hd.fixed_bits / 8) as usize;
        let base = pkt.cursor * 8;
        for f in hd.first_field..hd.first_field + hd.nfields {
            let fm = prog.fmeta[f as usize];
            if !fm.wide {
                pkt.phv.vals[f as usize] = bits::read_bits(&pkt.data, base + fm.bit_off as usize, fm.width as u32);
                continue;
            }
            let fd = &prog.fields[f as usize];
            if fd.varbit {
                let w = fd.wide.expect("varbit fields have wide storage") as usize;
                let buf = &mut pkt.phv.wide[w];
                buf.iter_mut().for_each(|b| *b = 0);
                let nb = (vl / 8) as usize;
                let start = pkt.cursor + fixed_bytes;
                let blen = buf.len();
                if nb <= blen {
                    buf[blen - nb..].copy_from_slice(&pkt.data[start..start + nb]);
                }
                continue;
            }
            match fd.wide {
                None => pkt.phv.vals[f as usize] = bits::read_bits(&pkt.data, base + fd.bit_off as usize, fd.width),
                Some(w) => {
                    bits::read_bits_wide(&pkt.data, base + fd.bit_off as usize, fd.width, &mut pkt.phv.wide[w as usize])
                }
            }
        }
    }
}

/// A parse state with its operands resolved at load, when every operation
/// is the extraction of a fixed header that has an extract plan: the
/// headers (with their length in bytes) are extracted one after the other
/// without dispatching on the operation; a key that is one narrow field is
/// read as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatePlan {
    pub(crate) extracts: Vec<(HdrId, u32)>,
    pub(crate) key_field: Option<FieldId>,
}

/// The plan of each parse state, where one applies.
pub fn state_plans(p: &Program) -> Vec<Option<StatePlan>> {
    p.parser.states.iter().map(|st| state_plan(p, st)).collect()
}

fn state_plan(p: &Program, st: &ParseState) -> Option<StatePlan> {
    let extracts = st.ops.iter().map(|op| planned_extract(p, op)).collect::<Option<Vec<_>>>()?;
    Some(StatePlan { extracts, key_field: narrow_key_field(p, st) })
}

/// The header and its length in bytes when `op` extracts a fixed header
/// that has an extract plan.
pub(crate) fn planned_extract(p: &Program, op: &ParserOp) -> Option<(HdrId, u32)> {
    match op {
        ParserOp::Extract(HdrX::Static(id)) if p.extract_plans[*id as usize].is_some() => {
            Some((*id, p.headers[*id as usize].fixed_bits / 8))
        }
        _ => None,
    }
}

/// The state's key field when its key is one field of at most 128 bits.
pub(crate) fn narrow_key_field(p: &Program, st: &ParseState) -> Option<FieldId> {
    match st.key.as_slice() {
        [(KeyPart::Field(f), _)] if !p.fmeta[*f as usize].wide => Some(*f),
        _ => None,
    }
}
