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

/// Every standard-metadata field the engine reads or writes.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct StdSlots {
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
        let at = |f: Option<FieldId>| StdSlot::new(prog, f);
        StdSlots {
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
        }
    }
}

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
}
