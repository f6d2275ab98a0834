//! Standard metadata as the engine writes it on every packet: each field
//! resolved at load to its PHV slot and value mask, so a write is one
//! masked store (no `Option`, no per-write lookup of the field's layout).

use crate::pipeline::Packet;
use crate::program::{FieldId, Program, StdMeta};

/// One standard-metadata field of the program.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct StdSlot {
    /// 2^width - 1 (at most u64::MAX: the engine writes 64-bit values)
    /// when the field is a narrow unsigned PHV slot; 0 when the program
    /// has no such field or it is stored otherwise (`field` then says
    /// which, for the general path).
    mask: u64,
    slot: u32,
    field: Option<FieldId>,
}

impl StdSlot {
    fn new(prog: &Program, field: Option<FieldId>) -> StdSlot {
        let Some(f) = field else { return StdSlot::default() };
        let fm = prog.fmeta[f as usize];
        let narrow = !(fm.wide || fm.signed || fm.width == 0 || fm.width > 128);
        let mask = if narrow { crate::value::mask_u128(fm.width.min(64) as u32) as u64 } else { 0 };
        StdSlot { mask, slot: f, field }
    }

    /// Writes `v` truncated to the field's width (nothing without the field).
    #[inline(always)]
    pub(super) fn set(self, prog: &Program, pkt: &mut Packet, v: u64) {
        if self.mask != 0 {
            pkt.phv.vals[self.slot as usize] = (v & self.mask) as u128;
        } else if let Some(f) = self.field {
            pkt.phv.set_u(prog, f, v as u128);
        }
    }

    /// Writes `v` saturated at the field's largest value (p4scope's queue
    /// fields: a count too large reads as the maximum, not wrapped).
    #[inline(always)]
    pub(super) fn set_sat(self, prog: &Program, pkt: &mut Packet, v: u64) {
        if self.mask != 0 {
            pkt.phv.vals[self.slot as usize] = v.min(self.mask) as u128;
        } else if let Some(f) = self.field {
            let w = prog.fmeta[f as usize].width;
            let max = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
            pkt.phv.set_u(prog, f, v.min(max) as u128);
        }
    }

    /// `set` or `set_sat` (by `fit`) into the PHV's values: only for a
    /// field that is a narrow slot or absent (`StdSlots::narrow`).
    #[inline(always)]
    pub(super) fn put(self, vals: &mut [u128], v: u64, fit: Fit) {
        if self.mask != 0 {
            vals[self.slot as usize] = match fit {
                Fit::Cut => v & self.mask,
                Fit::Saturate => v.min(self.mask),
            } as u128;
        }
    }

    /// `set` or `set_sat` by `fit`.
    #[inline(always)]
    pub(super) fn set_fit(self, prog: &Program, pkt: &mut Packet, v: u64, fit: Fit) {
        match fit {
            Fit::Cut => self.set(prog, pkt, v),
            Fit::Saturate => self.set_sat(prog, pkt, v),
        }
    }

    /// Whether the field is a narrow unsigned slot or absent (a write is
    /// then a masked store or nothing).
    fn narrow_or_absent(self) -> bool {
        self.mask != 0 || self.field.is_none()
    }

    /// The field's value as an unsigned number (0 without the field).
    #[inline(always)]
    pub(super) fn get(self, prog: &Program, pkt: &Packet) -> u64 {
        if self.mask != 0 {
            // unsigned and narrow: the stored bits are the value
            return pkt.phv.vals[self.slot as usize] as u64;
        }
        match self.field {
            Some(f) => pkt.phv.get(prog, f).low_u64(),
            None => 0,
        }
    }

}

/// How a write of `write_std!` fits its value to the field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fit {
    /// Cut to the field's width (`StdSlot::set`).
    Cut,
    /// The field's largest value where it does not fit (`StdSlot::set_sat`).
    Saturate,
}

/// Every standard-metadata field the engine reads or writes.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct StdSlots {
    /// Every field below a narrow slot or absent (v1model's, p4c's): a
    /// run of writes then stores into the PHV's values, whose place the
    /// compiler keeps in registers across them (`write_std!`).
    narrow: bool,
    pub ingress_port: StdSlot,
    pub egress_spec: StdSlot,
    pub egress_port: StdSlot,
    pub instance_type: StdSlot,
    pub packet_length: StdSlot,
    pub enq_timestamp: StdSlot,
    pub enq_qdepth: StdSlot,
    pub deq_timedelta: StdSlot,
    pub deq_qdepth: StdSlot,
    pub ingress_global_timestamp: StdSlot,
    pub egress_global_timestamp: StdSlot,
    pub mcast_grp: StdSlot,
    pub egress_rid: StdSlot,
    pub checksum_error: StdSlot,
    pub parser_error: StdSlot,
    pub priority: StdSlot,
    pub qid: StdSlot,
    pub p4s_enq_qbytes: StdSlot,
    pub p4s_deq_qbytes: StdSlot,
    pub p4s_buffer_bytes: StdSlot,
    pub p4s_deq_timedelta_ns: StdSlot,
    pub p4s_ingress_timestamp_ns: StdSlot,
    pub p4s_egress_timestamp_ns: StdSlot,
}

impl StdSlots {
    pub(super) fn new(prog: &Program) -> StdSlots {
        let s: &StdMeta = &prog.std;
        let mut narrow = true;
        let mut at = |f: Option<FieldId>| {
            let slot = StdSlot::new(prog, f);
            narrow &= slot.narrow_or_absent();
            slot
        };
        let slots = StdSlots {
            narrow: false,
            ingress_port: at(s.ingress_port),
            egress_spec: at(s.egress_spec),
            egress_port: at(s.egress_port),
            instance_type: at(s.instance_type),
            packet_length: at(s.packet_length),
            enq_timestamp: at(s.enq_timestamp),
            enq_qdepth: at(s.enq_qdepth),
            deq_timedelta: at(s.deq_timedelta),
            deq_qdepth: at(s.deq_qdepth),
            ingress_global_timestamp: at(s.ingress_global_timestamp),
            egress_global_timestamp: at(s.egress_global_timestamp),
            mcast_grp: at(s.mcast_grp),
            egress_rid: at(s.egress_rid),
            checksum_error: at(s.checksum_error),
            parser_error: at(s.parser_error),
            priority: at(s.priority),
            qid: at(s.qid),
            p4s_enq_qbytes: at(s.p4s_enq_qbytes),
            p4s_deq_qbytes: at(s.p4s_deq_qbytes),
            p4s_buffer_bytes: at(s.p4s_buffer_bytes),
            p4s_deq_timedelta_ns: at(s.p4s_deq_timedelta_ns),
            p4s_ingress_timestamp_ns: at(s.p4s_ingress_timestamp_ns),
            p4s_egress_timestamp_ns: at(s.p4s_egress_timestamp_ns),
        };
        StdSlots { narrow, ..slots }
    }

    /// Whether every field is a narrow slot or absent.
    #[inline(always)]
    pub(super) fn narrow(&self) -> bool {
        self.narrow
    }
}

/// Writes standard-metadata fields of `$pkt` in a run, as `set` (`Cut`)
/// and `set_sat` (`Saturate`) one by one would, the values computed
/// beforehand (they may not borrow the packet):
/// `write_std!(slots, prog, pkt; field = value, Cut; ...)`. Where every
/// field is narrow or absent the run stores into the PHV's values, whose
/// place the compiler then keeps in registers across the stores.
macro_rules! write_std {
    ($s:expr, $prog:expr, $pkt:expr; $($f:ident = $v:expr, $fit:ident);+ $(;)?) => {{
        let s: &StdSlots = $s;
        if s.narrow() {
            let vals = &mut $pkt.phv.vals[..];
            $( s.$f.put(vals, $v, Fit::$fit); )+
        } else {
            $( s.$f.set_fit($prog, $pkt, $v, Fit::$fit); )+
        }
    }};
}
pub(super) use write_std;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    /// standard_metadata with an ordinary narrow field, a signed one and
    /// one wider than 128 bits: the last two take the general path.
    fn prog() -> Program {
        let doc = crate::engine::tests::MINIMAL.replace(
            r#"["packet_length", 32, false], ["_p", 5, false]"#,
            r#"["packet_length", 32, false], ["enq_qdepth", 5, true], ["deq_qdepth", 136, false], ["_p", 3, false]"#,
        );
        json::load(&doc).unwrap()
    }

    #[test]
    fn narrow_fields_truncate_or_saturate_others_take_the_general_path() {
        let p = prog();
        let s = StdSlots::new(&p);
        let mut pkt = Packet::new(&p);
        s.ingress_port.set(&p, &mut pkt, 0x3ff);
        assert_eq!(s.ingress_port.get(&p, &pkt), 0x1ff, "9 bits: truncated");
        s.ingress_port.set_sat(&p, &mut pkt, 0x3ff);
        assert_eq!(s.ingress_port.get(&p, &pkt), 0x1ff, "9 bits: saturated");
        s.ingress_port.set_sat(&p, &mut pkt, 0x1e);
        assert_eq!(s.ingress_port.get(&p, &pkt), 0x1e);
        // a signed field is stored as its two's complement bits
        s.enq_qdepth.set(&p, &mut pkt, 0x3f);
        let f = p.std.enq_qdepth.unwrap();
        assert_eq!(pkt.phv.vals[f as usize], 0x1f);
        s.enq_qdepth.set_sat(&p, &mut pkt, 100);
        assert_eq!(pkt.phv.vals[f as usize], 0x1f, "saturated at the field's bits");
        // wider than 128 bits: in wide storage, read back as written
        s.deq_qdepth.set(&p, &mut pkt, u64::MAX);
        assert_eq!(s.deq_qdepth.get(&p, &pkt), u64::MAX);
        // a field the program does not have reads 0 and ignores writes
        s.qid.set(&p, &mut pkt, 5);
        assert_eq!(s.qid.get(&p, &pkt), 0);
    }

    /// A run of writes gives what the writes one by one give, in a program
    /// whose fields are all narrow (stored as a run) and in one with a
    /// signed and a wide field (written one by one).
    #[test]
    fn a_run_of_writes_is_the_writes_one_by_one() {
        let plain = json::load(crate::engine::tests::MINIMAL).unwrap();
        for p in [plain, prog()] {
            let s = StdSlots::new(&p);
            assert_eq!(s.narrow, p.std.enq_qdepth.is_none(), "the test program has the odd fields");
            let writes = [(s.ingress_port, 0x3ff, Fit::Cut), (s.enq_qdepth, 100, Fit::Saturate),
                          (s.deq_qdepth, u64::MAX, Fit::Cut), (s.packet_length, 1 << 40, Fit::Saturate),
                          (s.qid, 5, Fit::Cut), (s.ingress_port, 0x1e, Fit::Saturate)];
            let (mut run, mut one_by_one) = (Packet::new(&p), Packet::new(&p));
            write_std!(&s, &p, &mut run; ingress_port = 0x3ff, Cut; enq_qdepth = 100, Saturate;
                       deq_qdepth = u64::MAX, Cut; packet_length = 1 << 40, Saturate; qid = 5, Cut;
                       ingress_port = 0x1e, Saturate);
            for (f, v, fit) in writes {
                f.set_fit(&p, &mut one_by_one, v, fit);
            }
            assert_eq!((run.phv.vals, run.phv.wide), (one_by_one.phv.vals, one_by_one.phv.wide));
        }
    }
}
