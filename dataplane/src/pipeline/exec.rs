//! Expression evaluation, action primitives, tables and control graphs.

use super::actions::ActionCtx;
use super::bits;
use super::{Digest, Packet, Runtime};
use crate::externs::MeterArray;
use crate::tables::profile::Ref;
use crate::ops;
use crate::program::*;
use crate::value::Val;

/// Executes program code on packets against a runtime.
pub struct Exec<'a> {
    pub prog: &'a Program,
    pub rt: &'a mut Runtime,
}

/// An action's externs and log from a `&mut Runtime`, field by field (so
/// a table entry can stay borrowed meanwhile).
macro_rules! action_ctx {
    ($rt:ident) => {
        super::actions::ActionCtx { ext: &mut $rt.ext, log: &mut $rt.log, log_limit: $rt.log_limit, drop_port: $rt.drop_port }
    };
}

/// What the action body asked the pipeline to do next.
enum Flow {
    Next,
    Stop,
}

impl<'a> Exec<'a> {
    pub fn new(prog: &'a Program, rt: &'a mut Runtime) -> Exec<'a> {
        Exec { prog, rt }
    }

    // ----- header references -------------------------------------------

    pub(crate) fn hdr(&self, pkt: &Packet, params: &[Val], h: &HdrX) -> Option<HdrId> {
        match h {
            HdrX::Static(id) => Some(*id),
            HdrX::StackElem { stack, index } => {
                let i = self.eval(pkt, params, index).to_usize_sat();
                self.prog.stacks[*stack as usize].headers.get(i).copied()
            }
            HdrX::StackLast(stack) => {
                let next = pkt.phv.stack_next[*stack as usize] as usize;
                self.prog.stacks[*stack as usize].headers.get(next.saturating_sub(1)).copied()
            }
            HdrX::UnionMember { union, member } => {
                let u = self.union(pkt, params, union)?;
                self.prog.unions[u as usize].headers.get(*member as usize).copied()
            }
        }
    }

    fn union(&self, pkt: &Packet, params: &[Val], u: &UnionX) -> Option<u32> {
        match u {
            UnionX::Static(id) => Some(*id),
            UnionX::StackElem { ustack, index } => {
                let i = self.eval(pkt, params, index).to_usize_sat();
                self.prog.union_stacks[*ustack as usize].unions.get(i).copied()
            }
            UnionX::StackLast(us) => {
                let next = pkt.phv.ustack_next[*us as usize] as usize;
                self.prog.union_stacks[*us as usize].unions.get(next.saturating_sub(1)).copied()
            }
        }
    }

    fn hdr_field(&self, pkt: &Packet, params: &[Val], h: &HdrX, off: u32) -> Option<FieldId> {
        let id = self.hdr(pkt, params, h)?;
        let hd = &self.prog.headers[id as usize];
        if off < hd.nfields {
            Some(hd.first_field + off)
        } else {
            None
        }
    }

    // ----- expressions ---------------------------------------------------

    pub fn eval(&self, pkt: &Packet, params: &[Val], e: &Expr) -> Val {
        match e {
            Expr::Const(v) => v.clone(),
            Expr::Field(f) => pkt.phv.get(self.prog, *f),
            Expr::HdrField(h, off) => match self.hdr_field(pkt, params, h, *off) {
                Some(f) => pkt.phv.get(self.prog, f),
                None => Val::ZERO,
            },
            Expr::Valid(h) => match self.hdr(pkt, params, h) {
                Some(id) => Val::from(pkt.phv.valid[id as usize]),
                None => Val::ZERO,
            },
            Expr::ValidUnion(u) => match self.union(pkt, params, u) {
                Some(id) => {
                    Val::from(self.prog.unions[id as usize].headers.iter().any(|h| pkt.phv.valid[*h as usize]))
                }
                None => Val::ZERO,
            },
            Expr::Param(i) => params.get(*i as usize).cloned().unwrap_or_default(),
            Expr::Lookahead { off, width } => {
                let start = pkt.cursor * 8 + *off as usize;
                if *width <= 128 {
                    Val::from_u128(bits::read_bits(&pkt.data, start, *width))
                } else {
                    let mut buf = vec![0u8; ((*width + 7) / 8) as usize];
                    bits::read_bits_wide(&pkt.data, start, *width, &mut buf);
                    Val::from_be_bytes(&buf)
                }
            }
            Expr::Unary(op, a) => ops::unary(*op, &self.eval(pkt, params, a)),
            Expr::Binary(op, a, b) => {
                // short-circuit the boolean operators
                match op {
                    BinOp::And => {
                        let x = self.eval(pkt, params, a);
                        if !x.truthy() {
                            return Val::ZERO;
                        }
                        Val::from(self.eval(pkt, params, b).truthy())
                    }
                    BinOp::Or => {
                        let x = self.eval(pkt, params, a);
                        if x.truthy() {
                            return Val::S(1);
                        }
                        Val::from(self.eval(pkt, params, b).truthy())
                    }
                    _ => ops::binary(*op, &self.eval(pkt, params, a), &self.eval(pkt, params, b)),
                }
            }
            Expr::Cond(c, a, b) => {
                if self.eval(pkt, params, c).truthy() {
                    self.eval(pkt, params, a)
                } else {
                    self.eval(pkt, params, b)
                }
            }
            Expr::TwoCompMod(a, w) => self.eval(pkt, params, a).two_comp_mod(*w),
            Expr::SatCast(a, w) => self.eval(pkt, params, a).sat_cast(*w),
            Expr::USatCast(a, w) => self.eval(pkt, params, a).usat_cast(*w),
            Expr::LastStackIndex(s) => {
                Val::S(pkt.phv.stack_next[*s as usize] as i128 - 1)
            }
            Expr::SizeStack(s) => Val::S(self.prog.stacks[*s as usize].headers.len() as i128),
            Expr::Narrow(n) => Val::S(self.eval_n(pkt, n)),
        }
    }

    /// Whether `e` is non-zero (conditions, jumps).
    #[inline]
    pub fn truthy(&self, pkt: &Packet, params: &[Val], e: &Expr) -> bool {
        match e {
            Expr::Narrow(n) => match **n {
                // `isValid()`, the most common condition, without a call
                NExpr::Valid(h) => pkt.phv.valid.get(h as usize).copied().unwrap_or(false),
                _ => self.eval_n(pkt, n) != 0,
            },
            _ => self.eval(pkt, params, e).truthy(),
        }
    }

    fn lvalue(&self, pkt: &Packet, params: &[Val], l: &LValue) -> Option<FieldId> {
        match l {
            LValue::Field(f) => Some(*f),
            LValue::HdrField(h, off) => self.hdr_field(pkt, params, h, *off),
        }
    }

    fn assign(&self, pkt: &mut Packet, params: &[Val], l: &LValue, v: &Val) {
        if let Some(f) = self.lvalue(pkt, params, l) {
            pkt.phv.set(self.prog, f, v);
        }
    }

    // ----- actions -------------------------------------------------------

    /// Runs an action's primitives with the given parameters.
    pub fn run_action(&mut self, pkt: &mut Packet, action: u32, params: &[Val]) {
        let prog = self.prog;
        self.run_prims(pkt, &prog.actions[action as usize].prims, params);
    }

    /// Runs primitives, following `_jump`/`_jump_if_zero`; `exit` stops.
    pub(crate) fn run_prims(&mut self, pkt: &mut Packet, prims: &'a [Prim], params: &[Val]) {
        let mut pc = 0usize;
        let mut steps = 0usize;
        while pc < prims.len() {
            steps += 1;
            if steps > 1_000_000 {
                self.rt.log("action loop did not terminate; stopped".into());
                break;
            }
            match &prims[pc] {
                Prim::Jump(t) => {
                    pc = *t as usize;
                    continue;
                }
                Prim::JumpIfZero(c, t) => {
                    if !self.truthy(pkt, params, c) {
                        pc = *t as usize;
                        continue;
                    }
                }
                // the common cases, without a call into the big `prim`
                Prim::SetField { dst, mask, src } => self.set_field(pkt, params, *dst, *mask, src),
                Prim::Assign(LValue::Field(f), e) if self.assign_narrow(pkt, params, *f, e) => {}
                p => {
                    if let Flow::Stop = self.prim(pkt, params, p) {
                        break;
                    }
                }
            }
            pc += 1;
        }
    }

    /// Executes one primitive (also used by the parser's `primitive` op).
    fn prim(&mut self, pkt: &mut Packet, params: &[Val], p: &Prim) -> Flow {
        let prog = self.prog;
        match p {
            Prim::Assign(l, e) => {
                if let LValue::Field(f) = l {
                    if self.assign_narrow(pkt, params, *f, e) {
                        return Flow::Next;
                    }
                }
                let v = self.eval(pkt, params, e);
                self.assign(pkt, params, l, &v);
            }
            Prim::SetField { dst, mask, src } => self.set_field(pkt, params, *dst, *mask, src),
            Prim::AssignVL(dst, src) => {
                if let (Some(d), Some(s)) = (self.lvalue(pkt, params, dst), self.lvalue(pkt, params, src)) {
                    let v = pkt.phv.get(prog, s);
                    pkt.phv.set(prog, d, &v);
                    let (hd, hs) = (prog.fields[d as usize].hdr, prog.fields[s as usize].hdr);
                    pkt.phv.vl_bits[hd as usize] = pkt.phv.vl_bits[hs as usize];
                }
            }
            Prim::AssignHeader(dst, src) => {
                if let (Some(d), Some(s)) = (self.hdr(pkt, params, dst), self.hdr(pkt, params, src)) {
                    self.assign_header(pkt, d, s);
                }
            }
            Prim::AssignUnion(dst, src) => {
                if let (Some(d), Some(s)) = (self.union(pkt, params, dst), self.union(pkt, params, src)) {
                    let (dh, sh) = (&prog.unions[d as usize].headers, &prog.unions[s as usize].headers);
                    for (a, b) in dh.iter().zip(sh) {
                        self.assign_header(pkt, *a, *b);
                    }
                }
            }
            Prim::AssignHeaderStack(d, s) => {
                let (dh, sh) = (&prog.stacks[*d as usize].headers, &prog.stacks[*s as usize].headers);
                for (a, b) in dh.iter().zip(sh) {
                    self.assign_header(pkt, *a, *b);
                }
                pkt.phv.stack_next[*d as usize] = pkt.phv.stack_next[*s as usize];
            }
            Prim::AssignUnionStack(d, s) => {
                let (du, su) = (&prog.union_stacks[*d as usize].unions, &prog.union_stacks[*s as usize].unions);
                for (a, b) in du.iter().zip(su) {
                    let (dh, sh) = (&prog.unions[*a as usize].headers, &prog.unions[*b as usize].headers);
                    for (x, y) in dh.iter().zip(sh) {
                        self.assign_header(pkt, *x, *y);
                    }
                }
                pkt.phv.ustack_next[*d as usize] = pkt.phv.ustack_next[*s as usize];
            }
            Prim::Push { stack, count } => {
                let n = self.eval(pkt, params, count).to_usize_sat();
                self.push_front(pkt, *stack, n);
            }
            Prim::Pop { stack, count } => {
                let n = self.eval(pkt, params, count).to_usize_sat();
                self.pop_front(pkt, *stack, n);
            }
            Prim::Jump(_) | Prim::JumpIfZero(..) => {}
            Prim::Exit => {
                pkt.exit = true;
                return Flow::Stop;
            }
            Prim::Assert(e) | Prim::Assume(e) => {
                if !self.eval(pkt, params, e).truthy() {
                    self.rt.assert_failures += 1;
                    self.rt.log("assert/assume failed (BMv2 would abort)".into());
                }
            }
            Prim::LogMsg(fmt, args) => {
                let vals: Vec<Val> = args.iter().map(|a| self.eval(pkt, params, a)).collect();
                let s = format_log(fmt, &vals);
                self.rt.log(s);
            }
            Prim::MarkToDrop => super::actions::mark_to_drop(prog, pkt, self.rt.drop_port),
            Prim::AddHeader(h) => {
                if let Some(id) = self.hdr(pkt, params, h) {
                    super::actions::add_header(prog, pkt, id);
                }
            }
            Prim::RemoveHeader(h) => {
                if let Some(id) = self.hdr(pkt, params, h) {
                    super::actions::remove_header(prog, pkt, id);
                }
            }
            Prim::CloneI2E { session, field_list } | Prim::CloneE2E { session, field_list } => {
                let s = self.eval(pkt, params, session).low_u64() as u32 & 0xffff;
                let fl = self.eval(pkt, params, field_list).low_u64() as u32 & 0xffff;
                pkt.clone = Some((s, fl));
            }
            Prim::Resubmit(fl) => pkt.resubmit_fl = self.eval(pkt, params, fl).low_u64() as u32 & 0xffff,
            Prim::Recirculate(fl) => pkt.recirc_fl = self.eval(pkt, params, fl).low_u64() as u32 & 0xffff,
            Prim::GenerateDigest { receiver: _, learn_id } => {
                pkt.learn_id = self.eval(pkt, params, learn_id).low_u64() as u32 & 0xffff;
            }
            Prim::HashOffset { dst, base, calc, max } => {
                let b = self.eval(pkt, params, base).low_u64();
                let mut m = self.eval(pkt, params, max).low_u64();
                if m == 0 {
                    m = 1;
                }
                let h = self.calculate(pkt, *calc);
                let v = (h % m).wrapping_add(b);
                self.assign(pkt, params, dst, &Val::from(v));
            }
            Prim::RngUniform { dst, lo, hi } => {
                let (l, h) = (self.eval(pkt, params, lo).low_u64(), self.eval(pkt, params, hi).low_u64());
                if l <= h {
                    let span = h - l;
                    let r = self.rt.random_u64();
                    let v = if span == u64::MAX { r } else { l + r % (span + 1) };
                    self.assign(pkt, params, dst, &Val::from(v));
                }
            }
            Prim::Count { counter, index } => {
                let i = self.eval(pkt, params, index).to_usize_sat();
                let rt = &mut *self.rt;
                action_ctx!(rt).count(prog, *counter, i, pkt.ingress_len);
            }
            Prim::ExecuteMeter { meter, index, dst } => {
                let i = self.eval(pkt, params, index).to_usize_sat();
                let now = self.rt.now_ns;
                let units = pkt.ingress_len as u64;
                let arr: &mut MeterArray = &mut self.rt.ext.meters[*meter as usize];
                let u = if arr.mtype == MeterType::Packets { 1 } else { units };
                if let Some(m) = arr.cells.get_mut(i) {
                    let colour = m.execute(u, now);
                    self.assign(pkt, params, dst, &Val::from(colour as u64));
                }
            }
            Prim::RegisterRead { dst, reg, index } => {
                let i = self.eval(pkt, params, index).to_usize_sat();
                let rt = &mut *self.rt;
                if let Some(v) = action_ctx!(rt).register_read(prog, *reg, i).cloned() {
                    self.assign(pkt, params, dst, &v);
                }
            }
            Prim::RegisterWrite { reg, index, src } => {
                let i = self.eval(pkt, params, index).to_usize_sat();
                let v = self.eval(pkt, params, src).trunc(prog.registers[*reg as usize].width);
                let rt = &mut *self.rt;
                action_ctx!(rt).register_write(prog, *reg, i, v);
            }
            Prim::Truncate(e) => {
                let n = self.eval(pkt, params, e).to_usize_sat();
                pkt.truncate_to = pkt.truncate_to.min(n);
            }
            Prim::NoOp => {}
        }
        Flow::Next
    }

    /// The common assignments to a field of at most 128 bits — from an
    /// action parameter, another unsigned field or a constant — without
    /// going through `Val`: the low bits are what truncation keeps.
    #[inline(always)]
    fn assign_narrow(&self, pkt: &mut Packet, params: &[Val], f: FieldId, e: &Expr) -> bool {
        let fd = self.prog.fmeta[f as usize];
        if fd.wide {
            return false;
        }
        let m = crate::value::mask_u128(fd.width as u32);
        let v = match e {
            Expr::Param(i) => match params.get(*i as usize) {
                Some(p) => p.low_u128(),
                None => 0,
            },
            Expr::Field(g) => {
                let gd = self.prog.fmeta[*g as usize];
                if gd.wide || (gd.signed && gd.width < fd.width) {
                    return false;
                }
                pkt.phv.vals[*g as usize]
            }
            Expr::Const(c) => c.low_u128(),
            Expr::Narrow(n) => self.eval_n(pkt, n) as u128,
            _ => return false,
        };
        pkt.phv.vals[f as usize] = v & m;
        true
    }

    /// Executes a `SetField` (see `assign_narrow` for why the low bits are
    /// the value).
    #[inline(always)]
    fn set_field(&self, pkt: &mut Packet, params: &[Val], dst: FieldId, mask: u128, src: &SetSrc) {
        let v = match src {
            SetSrc::Param(i) => params.get(*i as usize).map(Val::low_u128).unwrap_or(0),
            SetSrc::Field(g) => pkt.phv.vals.get(*g as usize).copied().unwrap_or(0),
            SetSrc::Const(c) => *c,
            SetSrc::Narrow(n) => self.eval_n(pkt, n) as u128,
        };
        if let Some(slot) = pkt.phv.vals.get_mut(dst as usize) {
            *slot = v & mask;
        }
    }

    /// BMv2's assign_header: an invalid source invalidates the destination.
    fn assign_header(&self, pkt: &mut Packet, d: HdrId, s: HdrId) {
        if !pkt.phv.valid[s as usize] {
            pkt.phv.valid[d as usize] = false;
            return;
        }
        pkt.phv.set_valid(self.prog, d);
        pkt.phv.copy_header(self.prog, d, s);
    }

    fn stack_elems(&self, s: StackRef) -> Vec<HdrId> {
        match s {
            StackRef::Headers(i) => self.prog.stacks[i as usize].headers.clone(),
            StackRef::Unions(i) => self.prog.union_stacks[i as usize].unions.clone(),
        }
    }

    fn swap_elems(&self, pkt: &mut Packet, s: StackRef, a: u32, b: u32) {
        match s {
            StackRef::Headers(_) => pkt.phv.swap_headers(self.prog, a, b),
            StackRef::Unions(_) => {
                let (ha, hb) = (&self.prog.unions[a as usize].headers, &self.prog.unions[b as usize].headers);
                for (x, y) in ha.iter().zip(hb) {
                    pkt.phv.swap_headers(self.prog, *x, *y);
                }
            }
        }
    }

    fn invalidate_elem(&self, pkt: &mut Packet, s: StackRef, e: u32) {
        match s {
            StackRef::Headers(_) => pkt.phv.valid[e as usize] = false,
            StackRef::Unions(_) => {
                for h in &self.prog.unions[e as usize].headers {
                    pkt.phv.valid[*h as usize] = false;
                }
            }
        }
    }

    fn next_mut<'p>(&self, pkt: &'p mut Packet, s: StackRef) -> &'p mut u32 {
        match s {
            StackRef::Headers(i) => &mut pkt.phv.stack_next[i as usize],
            StackRef::Unions(i) => &mut pkt.phv.ustack_next[i as usize],
        }
    }

    /// P4_16 push_front: shift up by n, the first n elements become invalid.
    fn push_front(&self, pkt: &mut Packet, s: StackRef, n: usize) {
        if n == 0 {
            return;
        }
        let elems = self.stack_elems(s);
        let size = elems.len();
        let next = self.next_mut(pkt, s);
        *next = (*next as usize + n).min(size) as u32;
        if size == 0 {
            return;
        }
        let mut i = size - 1;
        while i >= n && i > 0 {
            self.swap_elems(pkt, s, elems[i], elems[i - n]);
            i -= 1;
        }
        for e in elems.iter().take(n.min(size)) {
            self.invalidate_elem(pkt, s, *e);
        }
    }

    /// P4_16 pop_front: shift down by n, the last n elements become invalid.
    fn pop_front(&self, pkt: &mut Packet, s: StackRef, n: usize) {
        if n == 0 {
            return;
        }
        let elems = self.stack_elems(s);
        let size = elems.len();
        let next = self.next_mut(pkt, s);
        *next = next.saturating_sub(n as u32);
        let mut i = 0usize;
        if n < size {
            while i < size - n {
                self.swap_elems(pkt, s, elems[i], elems[i + n]);
                i += 1;
            }
        }
        for e in elems.iter().skip(i) {
            self.invalidate_elem(pkt, s, *e);
        }
    }

    // ----- calculations --------------------------------------------------

    /// Packs a calculation's inputs at bit level (invalid headers skipped,
    /// zero padding only at the end) and hashes them.
    #[inline]
    pub fn calculate(&mut self, pkt: &Packet, calc: u32) -> u64 {
        match self.planned_csum16(pkt, calc) {
            Some(v) => v,
            None => self.calculate_general(pkt, calc),
        }
    }

    /// A csum16 calculation straight from the field values (see
    /// `CsumPlan`), when it has that plan and its headers are valid.
    #[inline(always)]
    fn planned_csum16(&self, pkt: &Packet, calc: u32) -> Option<u64> {
        let plan = self.prog.calc_plans[calc as usize].as_ref()?;
        let c = plan.csum.as_ref()?;
        if !plan.headers.iter().all(|h| pkt.phv.valid[*h as usize]) {
            return None;
        }
        let payload = if plan.payload { Some(pkt.data.get(pkt.payload_off..).unwrap_or(&[])) } else { None };
        Some(c.csum16(&pkt.phv.vals, payload))
    }

    /// `calculate` through the word plan or bit by bit.
    #[inline(never)]
    fn calculate_general(&mut self, pkt: &Packet, calc: u32) -> u64 {
        let prog = self.prog;
        if let Some(plan) = &prog.calc_plans[calc as usize] {
            if plan.headers.iter().all(|h| pkt.phv.valid[*h as usize]) {
                let mut buf = std::mem::take(&mut self.rt.calc_buf);
                buf.clear();
                plan.words.emit(&pkt.phv.vals, &mut buf);
                if plan.payload {
                    buf.extend_from_slice(pkt.data.get(pkt.payload_off..).unwrap_or(&[]));
                }
                let h = self.rt.hashers[calc as usize].hash(&buf);
                self.rt.calc_buf = buf;
                return h;
            }
        }
        let mut buf = std::mem::take(&mut self.rt.calc_buf);
        buf.clear();
        let mut w = bits::BitWriter::new(&mut buf);
        for inp in &prog.calcs[calc as usize].inputs {
            match inp {
                CalcInput::Field(f) => {
                    let fm = prog.fmeta[*f as usize];
                    if !fm.wide {
                        let hdr = prog.fields[*f as usize].hdr;
                        if !pkt.phv.valid[hdr as usize] {
                            continue;
                        }
                        let v = pkt.phv.vals[*f as usize];
                        let width = fm.width as u32;
                        w.put_u128(v, width);
                        continue;
                    }
                    let fd = &prog.fields[*f as usize];
                    if !pkt.phv.valid[fd.hdr as usize] {
                        continue;
                    }
                    match fd.wide {
                        None => {
                            let v = pkt.phv.vals[*f as usize];
                            w.put_u128(v, fd.width);
                        }
                        Some(x) => {
                            let src = &pkt.phv.wide[x as usize];
                            let width = if fd.varbit { pkt.phv.vl_bits[fd.hdr as usize] } else { fd.width };
                            let nb = ((width + 7) / 8) as usize;
                            w.put_wide(&src[src.len() - nb..], width);
                        }
                    }
                }
                CalcInput::Const { value, width } => {
                    let nb = ((*width + 7) / 8) as usize;
                    let mut tmp = vec![0u8; nb];
                    value.write_be(*width, &mut tmp);
                    w.put_wide(&tmp, *width);
                }
                CalcInput::Payload => {
                    let payload = pkt.data.get(pkt.payload_off..).unwrap_or(&[]);
                    w.put_bytes(payload);
                }
            }
        }
        w.flush();
        let h = self.rt.hashers[calc as usize].hash(&buf);
        self.rt.calc_buf = buf;
        h
    }

    /// Verifies the program's checksums after parsing (sets checksum_error).
    #[inline]
    pub fn verify_checksums(&mut self, pkt: &mut Packet) {
        let prog = self.prog;
        for c in &prog.checksums {
            if c.verify {
                self.verify_checksum(pkt, c);
            }
        }
    }

    /// One verify checksum (out of line: the loop above stays a scan, its
    /// body's set-up is not paid by programs that verify nothing).
    #[inline(never)]
    fn verify_checksum(&mut self, pkt: &mut Packet, c: &ChecksumDef) {
        let prog = self.prog;
        let hdr = prog.fields[c.target as usize].hdr;
        if !pkt.phv.valid[hdr as usize] {
            return;
        }
        if let Some(cond) = &c.cond {
            if !self.truthy(pkt, &[], cond) {
                return;
            }
        }
        let v = self.calculate(pkt, c.calc);
        let w = prog.calcs[c.calc as usize].out_width;
        let v = if w < 64 { v & ((1u64 << w) - 1) } else { v };
        if pkt.phv.get(prog, c.target).low_u64() != v {
            pkt.checksum_error = true;
        }
    }

    /// Updates checksums before deparsing.
    #[inline]
    pub fn update_checksums(&mut self, pkt: &mut Packet) {
        let prog = self.prog;
        for c in &prog.checksums {
            if !c.update {
                continue;
            }
            if let Some(cond) = &c.cond {
                if !self.truthy(pkt, &[], cond) {
                    continue;
                }
            }
            let v = self.calculate(pkt, c.calc);
            pkt.phv.set_u(prog, c.target, v as u128);
        }
    }

    // ----- tables and control graphs ---------------------------------------

    fn build_key(&self, pkt: &Packet, t: &TableDef, out: &mut Vec<u8>) {
        out.clear();
        for k in &t.keys {
            let start = out.len();
            match &k.src {
                KeyPart::Field(f) => pkt.phv.append_bytes(self.prog, *f, out),
                KeyPart::Valid(h) => {
                    let v = self.hdr(pkt, &[], h).map(|id| pkt.phv.valid[id as usize]).unwrap_or(false);
                    out.push(v as u8);
                }
                _ => out.resize(start + k.nbytes as usize, 0),
            }
            if let Some(m) = &k.mask {
                for (b, m) in out[start..].iter_mut().zip(m) {
                    *b &= m;
                }
            }
        }
    }

    /// The key as a big-endian integer when every part is a field of at
    /// most 128 bits or a validity bit (the same bytes build_key makes).
    #[inline]
    fn key_u128(&self, pkt: &Packet, t: &TableDef) -> Option<u128> {
        let mut acc: u128 = 0;
        for k in &t.keys {
            let nb = k.nbytes;
            let mut v = match &k.src {
                KeyPart::Field(f) => {
                    if self.prog.fmeta[*f as usize].wide {
                        return None;
                    }
                    pkt.phv.vals[*f as usize]
                }
                KeyPart::Valid(h) => self.hdr(pkt, &[], h).map(|id| pkt.phv.valid[id as usize]).unwrap_or(false) as u128,
                _ => return None,
            };
            if let Some(m) = &k.mask {
                v &= be_u128(m);
            }
            acc = if nb >= 16 { v } else { (acc << (8 * nb)) | v };
        }
        Some(acc)
    }

    /// Applies a table; returns the next node. The common hit, a direct
    /// entry whose action has a plan and whose data are words, without a
    /// direct meter, runs here; anything else in `apply_table_rest`, out of
    /// line, so that this function's code stays small in the instruction
    /// cache.
    pub fn apply_table(&mut self, pkt: &mut Packet, ti: u32) -> Option<NodeRef> {
        let prog = self.prog;
        let t = &prog.tables[ti as usize];
        let ts = &self.rt.tables[ti as usize];
        let fixed_next = ts.fixed_next;
        let hit = match prog.table_key_fields[ti as usize] {
            Some(f) => ts.lookup_u128(pkt.phv.vals[f as usize]),
            // a table without entries misses whatever its key: p4c's keyless
            // tbl_* for straight-line code, an ACL or watch list left empty
            None if ts.is_empty() => return self.apply_default(pkt, ti),
            None => self.lookup_key(pkt, ti),
        };
        let Some(h) = hit else { return self.apply_default(pkt, ti) };
        if t.direct_meter.is_none() {
            let now = self.rt.now_ns;
            let len = pkt.ingress_len;
            let rt = &mut *self.rt;
            if let Some(e) = rt.tables[ti as usize].entries[h as usize].as_mut() {
                if let (Ref::Direct, Some(plan), Some(words)) = (e.indirect, &prog.action_plans[e.action as usize], e.args()) {
                    plan.run(prog, words, pkt, &mut action_ctx!(rt));
                    e.counter.hit(len);
                    e.last_hit_ns = now;
                    e.idle_notified = false;
                    let a = e.action;
                    return fixed_next.unwrap_or_else(|| next_of(t, Some(a), true));
                }
            }
        }
        self.apply_table_rest(pkt, ti, hit)
    }

    /// A miss: the default action's plan, in a frame smaller than
    /// `apply_table_rest`'s, which takes any other default action.
    #[inline(never)]
    fn apply_default(&mut self, pkt: &mut Packet, ti: u32) -> Option<NodeRef> {
        let fixed_next = self.rt.tables[ti as usize].fixed_next;
        match self.run_default_plan(pkt, ti) {
            Some(a) => fixed_next.unwrap_or_else(|| next_of(&self.prog.tables[ti as usize], Some(a), false)),
            None => self.apply_table_rest(pkt, ti, None),
        }
    }

    /// Runs table `ti`'s default action when it has a plan; returns it,
    /// None when it has no plan (or there is none).
    #[inline(always)]
    fn run_default_plan(&mut self, pkt: &mut Packet, ti: u32) -> Option<u32> {
        let prog = self.prog;
        let rt = &mut *self.rt;
        let ts = &rt.tables[ti as usize];
        let a = ts.default_action?;
        let plan = prog.action_plans[a as usize].as_ref()?;
        plan.run(prog, &ts.default_data[..], pkt, &mut action_ctx!(rt));
        Some(a)
    }

    /// `f` with what an action's operations use (for the control flow's
    /// machine code, which calls them one by one).
    pub(crate) fn with_action_ctx(&mut self, pkt: &mut Packet, f: impl FnOnce(&Program, &mut Packet, &mut ActionCtx)) {
        let prog = self.prog;
        let rt = &mut *self.rt;
        f(prog, pkt, &mut action_ctx!(rt));
    }

    /// A lookup whose key is not one field: as an integer when it fits,
    /// else as bytes.
    #[inline(never)]
    fn lookup_key(&mut self, pkt: &Packet, ti: u32) -> Option<u32> {
        let t = &self.prog.tables[ti as usize];
        match self.rt.tables[ti as usize].small_key.then(|| self.key_u128(pkt, t)).flatten() {
            Some(k) => self.rt.tables[ti as usize].lookup_u128(k),
            None => self.lookup_bytes(pkt, ti),
        }
    }

    /// `apply_table` once `hit` is known, for what its common hit does not
    /// cover: a miss, a direct meter, an indirect entry, an action without
    /// a plan or with more parameters than the entry keeps as words.
    #[inline(never)]
    fn apply_table_rest(&mut self, pkt: &mut Packet, ti: u32, hit: Option<u32>) -> Option<NodeRef> {
        let prog = self.prog;
        let t = &prog.tables[ti as usize];
        let fixed_next = self.rt.tables[ti as usize].fixed_next;
        let action = match hit {
            Some(h) => {
                if let Some(m) = t.direct_meter {
                    self.direct_meter(pkt, ti, h, m);
                }
                let now = self.rt.now_ns;
                let len = pkt.ingress_len;
                let rt = &mut *self.rt;
                let (action, data, via) = {
                    let e = rt.tables[ti as usize].entries[h as usize].as_mut().expect("hit entry exists");
                    e.counter.hit(len);
                    e.last_hit_ns = now;
                    e.idle_notified = false;
                    match e.indirect {
                        Ref::Direct => {
                            let a = e.action;
                            // a straight-line plan runs on the entry's data in place
                            if let Some(plan) = &prog.action_plans[a as usize] {
                                match e.args() {
                                    Some(words) => plan.run(prog, words, pkt, &mut action_ctx!(rt)),
                                    None => plan.run(prog, e.data(), pkt, &mut action_ctx!(rt)),
                                }
                                return fixed_next.unwrap_or_else(|| next_of(t, Some(a), true));
                            }
                            (a, e.take_data(), None)
                        }
                        r => (0, vec![], Some(r)),
                    }
                };
                match via {
                    None => {
                        self.run_action(pkt, action, &data);
                        if let Some(e) = self.rt.tables[ti as usize].entries[h as usize].as_mut() {
                            e.put_back_data(data);
                        }
                        Some(action)
                    }
                    Some(r) => self.run_indirect(pkt, t, r),
                }
            }
            None => match self.rt.tables[ti as usize].default_action {
                Some(a) if prog.action_plans[a as usize].is_some() => self.run_default_plan(pkt, ti),
                Some(a) => {
                    let data = std::mem::take(&mut self.rt.tables[ti as usize].default_data);
                    self.run_action(pkt, a, &data);
                    self.rt.tables[ti as usize].default_data = data;
                    Some(a)
                }
                None => None,
            },
        };
        fixed_next.unwrap_or_else(|| next_of(t, action, hit.is_some()))
    }

    /// A table lookup with the key as bytes (keys wider than 16 bytes,
    /// range tables).
    #[inline(never)]
    fn lookup_bytes(&mut self, pkt: &Packet, ti: u32) -> Option<u32> {
        let t = &self.prog.tables[ti as usize];
        let mut key = std::mem::take(&mut self.rt.key_buf);
        self.build_key(pkt, t, &mut key);
        let rt = &mut *self.rt;
        let ts = &mut rt.tables[ti as usize];
        ts.prepare_lookup(t);
        let h = ts.lookup(&key, &mut rt.scratch);
        self.rt.key_buf = key;
        h
    }

    /// Executes the direct meter of entry `h` of table `ti` and writes its
    /// colour to the meter's result field, before the entry's action runs.
    #[inline(never)]
    fn direct_meter(&mut self, pkt: &mut Packet, ti: u32, h: u32, m: u32) {
        let prog = self.prog;
        let now = self.rt.now_ns;
        let len = pkt.ingress_len;
        let units = if prog.meters[m as usize].mtype == MeterType::Packets { 1 } else { len as u64 };
        let Some(e) = self.rt.tables[ti as usize].entries[h as usize].as_mut() else { return };
        let colour = e.meter.execute(units, now);
        if let Some(f) = prog.meters[m as usize].result {
            pkt.phv.set_u(prog, f, colour as u128);
        }
    }

    /// Runs the member an indirect entry points at (for a group, the one
    /// the selector's hash picks). None when there is none to run.
    fn run_indirect(&mut self, pkt: &mut Packet, t: &TableDef, r: Ref) -> Option<u32> {
        let p = t.profile? as usize;
        let member = match r {
            Ref::Direct => return None,
            Ref::Member(m) => m,
            Ref::Group(g) => {
                let hash = match self.prog.profiles.get(p).and_then(|d| d.selector) {
                    Some(calc) => self.calculate(pkt, calc),
                    None => 0,
                };
                let rt = &mut *self.rt;
                rt.profiles.get_mut(p)?.select(g, hash, &rt.ports)?
            }
        };
        let (action, data) = {
            let m = self.rt.profiles.get_mut(p)?.member_mut(member)?;
            (m.action, std::mem::take(&mut m.data))
        };
        self.run_action(pkt, action, &data);
        if let Some(m) = self.rt.profiles[p].member_mut(member) {
            m.data = data;
        }
        Some(action)
    }

    /// Runs a control graph from `init`; `exit` stops it.
    pub fn apply_pipeline(&mut self, pkt: &mut Packet, init: Option<NodeRef>) {
        let prog = self.prog;
        let mut node = match prog.native_control(init) {
            Some(native) => native.run(self, pkt),
            None => init,
        };
        let mut steps = 0usize;
        while let Some(n) = node {
            steps += 1;
            if steps > 100_000 {
                self.rt.log("control graph did not terminate; stopped".into());
                break;
            }
            node = self.step(pkt, n);
            if pkt.exit {
                break;
            }
        }
        pkt.exit = false;
    }

    /// Applies node `n` (a table or a conditional); returns the next.
    #[inline(always)]
    pub fn step(&mut self, pkt: &mut Packet, n: NodeRef) -> Option<NodeRef> {
        match n {
            NodeRef::Table(t) => self.apply_table(pkt, t),
            NodeRef::Cond(c) => {
                let cd = &self.prog.conds[c as usize];
                let yes = match &self.prog.cond_tests[c as usize] {
                    Some(t) => t.eval(pkt),
                    None => self.truthy(pkt, &[], &cd.expr),
                };
                if yes {
                    cd.true_next
                } else {
                    cd.false_next
                }
            }
        }
    }

    /// Collects the digest requested by `generate_digest`, if any.
    pub fn take_digest(&mut self, pkt: &Packet) -> Option<Digest> {
        if pkt.learn_id == 0 {
            return None;
        }
        let list = self.prog.learn_lists.get(pkt.learn_id as usize)?.as_ref()?;
        let mut values = Vec::with_capacity(list.fields.len());
        for f in &list.fields {
            let mut b = vec![];
            pkt.phv.append_bytes(self.prog, *f, &mut b);
            values.push(b);
        }
        Some(Digest { learn_id: pkt.learn_id, values, time_ns: self.rt.now_ns })
    }

    /// Copies a field list's fields from `src` into `dst` (clone, resubmit,
    /// recirculate).
    pub fn copy_field_list(&self, fl: u32, src: &Packet, dst: &mut Packet) {
        if let Some(Some(fields)) = self.prog.field_lists.get(fl as usize) {
            for f in fields {
                if self.prog.fmeta[*f as usize].wide {
                    let v = src.phv.get(self.prog, *f);
                    dst.phv.set(self.prog, *f, &v);
                } else {
                    // the same field on both sides: its stored bits
                    dst.phv.vals[*f as usize] = src.phv.vals[*f as usize];
                }
            }
        }
    }
}

/// BMv2's log_msg formatting: each `{}` takes the next argument.
fn format_log(fmt: &str, vals: &[Val]) -> String {
    let mut out = String::new();
    let mut it = vals.iter();
    let mut rest = fmt;
    while let Some(pos) = rest.find("{}") {
        out.push_str(&rest[..pos]);
        match it.next() {
            Some(v) => out.push_str(&v.to_string_dec()),
            None => out.push_str("{}"),
        }
        rest = &rest[pos + 2..];
    }
    out.push_str(rest);
    out
}

/// The node after table `t` once `action` ran (None: no action), on a hit
/// or a miss.
#[inline]
pub(crate) fn next_of(t: &TableDef, action: Option<u32>, hit: bool) -> Option<NodeRef> {
    if let Some((h, m)) = t.next_hit_miss {
        return if hit { h } else { m };
    }
    match action.and_then(|a| t.next_list.iter().find(|x| x.0 == a)) {
        Some(n) => n.1,
        None => t.base_default_next,
    }
}
