//! A header checksum computed while the header is deparsed.
//!
//! The usual IPv4 update (`update_checksum(hdr.ipv4.isValid(), {every
//! field but hdrChecksum}, hdr.ipv4.hdrChecksum, csum16)`) sums the very
//! image the deparser writes, minus a 16-bit field at a 16-bit boundary.
//! The one's complement sum of an image with that field zeroed is the same
//! (its following words keep their alignment), so the deparser writes the
//! header with the field at zero, sums the 64-bit words it wrote (2^32 = 1
//! modulo 0xffff: a word adds its two halves), and writes the checksum into
//! the field and its two bytes: one pass over the header instead of two.

use crate::program::{CalcInput, FieldId, HashAlgo, HdrId, Program};

/// The program's update checksum that the deparser computes (see the
/// module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FusedCsum {
    /// Index in `Program::checksums`.
    pub checksum: u32,
    pub hdr: HdrId,
    pub target: FieldId,
    /// Byte offset of the target in the header's image.
    pub byte: u32,
}

/// The fused checksum of a program, when it has exactly one update
/// checksum and that one is a csum16 over the fields of one fixed header
/// (with a deparse plan) in their order, all but its 16-bit target at a
/// 16-bit boundary of the header, which the deparser emits. With more update checksums the order of
/// their updates matters, and they are left to `update_checksums`.
pub fn fused_csum(p: &Program) -> Option<FusedCsum> {
    let mut updates = p.checksums.iter().enumerate().filter(|(_, c)| c.update);
    let (ci, c) = updates.next()?;
    if updates.next().is_some() {
        return None;
    }
    let calc = &p.calcs[c.calc as usize];
    if calc.algo != HashAlgo::Csum16 {
        return None;
    }
    let hdr = p.fields[c.target as usize].hdr;
    let hd = &p.headers[hdr as usize];
    // the header is written by the deparser, from its plan (else the
    // deparser would not compute the checksum)
    p.deparse_plans.get(hdr as usize)?.as_ref()?;
    if !p.deparser.contains(&hdr) {
        return None;
    }
    let tf = &p.fields[c.target as usize];
    if tf.width != 16 || tf.bit_off % 16 != 0 || tf.wide.is_some() || tf.signed {
        return None;
    }
    let want = (hd.first_field..hd.first_field + hd.nfields).filter(|f| *f != c.target);
    let inputs = calc.inputs.iter().map(|i| match i {
        CalcInput::Field(f) => Some(*f),
        _ => None,
    });
    if !inputs.eq(want.map(Some)) {
        return None;
    }
    Some(FusedCsum { checksum: ci as u32, hdr, target: c.target, byte: tf.bit_off / 8 })
}

/// Adds a 64-bit image word to a one's complement sum (its halves: 2^32 =
/// 1 modulo 0xffff). A sum of fewer than 2^31 words cannot overflow.
#[inline(always)]
pub fn add_word(sum: u64, w: u64) -> u64 {
    sum + (w >> 32) + (w & 0xffff_ffff)
}

/// The checksum of a sum of words: folded to 16 bits, complemented.
#[inline(always)]
pub fn finish(mut sum: u64) -> u64 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !sum & 0xffff
}

#[cfg(test)]
mod tests {
    use crate::json;
    use crate::pipeline::{Exec, Packet, Runtime};
    use serde_json::{json, Value};

    const IPV4: [(&str, u32); 12] = [("version", 4), ("ihl", 4), ("diffserv", 8), ("totalLen", 16), ("identification", 16),
        ("flags", 3), ("fragOffset", 13), ("ttl", 8), ("protocol", 8), ("hdrChecksum", 16), ("srcAddr", 32), ("dstAddr", 32)];

    fn f(h: &str, n: &str) -> Value {
        json!({"type": "field", "value": [h, n]})
    }

    /// Ethernet then IPv4 with the usual update checksum; `inputs` and
    /// `target` as given, and a second update checksum when `two`.
    fn prog(inputs: &[&str], target: &str, two: bool) -> crate::program::Program {
        let mut checksums = vec![json!({"name": "c", "id": 0, "target": ["ipv4", target], "type": "generic",
            "calculation": "calc", "verify": false, "update": true,
            "if_cond": {"type": "expression", "value": {"op": "d2b", "left": null, "right": f("ipv4", "$valid$")}}})];
        if two {
            checksums.push(json!({"name": "c2", "id": 1, "target": ["ipv4", "identification"], "type": "generic",
                "calculation": "calc", "verify": false, "update": true, "if_cond": null}));
        }
        let doc = json!({
            "header_types": [
                {"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
                    ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false], ["_p", 5, false]]},
                {"name": "e_t", "id": 1, "fields": [["dst", 48, false], ["src", 48, false], ["type", 16, false]]},
                {"name": "ipv4_t", "id": 2, "fields": IPV4.iter().map(|(n, w)| json!([n, w, false])).collect::<Vec<_>>()}],
            "headers": [
                {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
                {"name": "e", "id": 1, "header_type": "e_t", "metadata": false},
                {"name": "ipv4", "id": 2, "header_type": "ipv4_t", "metadata": false}],
            "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
                {"name": "start", "id": 0, "parser_ops": [
                    {"op": "extract", "parameters": [{"type": "regular", "value": "e"}]},
                    {"op": "extract", "parameters": [{"type": "regular", "value": "ipv4"}]}],
                 "transition_key": [], "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}]}],
            "deparsers": [{"name": "deparser", "id": 0, "order": ["e", "ipv4"]}],
            "calculations": [{"name": "calc", "id": 0, "algo": "csum16",
                              "input": inputs.iter().map(|n| f("ipv4", n)).collect::<Vec<_>>()}],
            "checksums": checksums,
            "pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
                          {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
        });
        json::load_value(&doc).unwrap()
    }

    fn all_but_checksum() -> Vec<&'static str> {
        IPV4.iter().map(|(n, _)| *n).filter(|n| *n != "hdrChecksum").collect()
    }

    #[test]
    fn only_the_plain_header_checksum_is_fused() {
        let inputs = all_but_checksum();
        let p = prog(&inputs, "hdrChecksum", false);
        let fc = p.fused_csum.expect("the IPv4 checksum is fused");
        assert_eq!((fc.byte, fc.target), (10, p.field_by_name("ipv4", "hdrChecksum").unwrap()));
        assert!(prog(&inputs, "hdrChecksum", true).fused_csum.is_none(), "two update checksums");
        assert!(prog(&inputs[1..], "hdrChecksum", false).fused_csum.is_none(), "a field left out");
        let mut swapped = inputs.clone();
        swapped.swap(0, 1);
        assert!(prog(&swapped, "hdrChecksum", false).fused_csum.is_none(), "fields out of order");
        let no_ttl: Vec<&str> = IPV4.iter().map(|(n, _)| *n).filter(|n| *n != "ttl").collect();
        assert!(prog(&no_ttl, "ttl", false).fused_csum.is_none(), "an 8-bit target");
    }

    /// Deparsing with the fused checksum gives the bytes and the PHV that
    /// update_checksums then deparse give: random headers, in place, with
    /// Ethernet removed (not in place), with IPv4 removed.
    #[test]
    fn fused_checksum_deparses_as_update_then_deparse() {
        let fused = prog(&all_but_checksum(), "hdrChecksum", false);
        let mut plain = fused.clone();
        plain.fused_csum = None;
        let (mut rt1, mut rt2) = (Runtime::new(&fused, 0), Runtime::new(&plain, 0));
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..300 {
            let mut data: Vec<u8> = (0..34 + round % 5).map(|_| next() as u8).collect();
            if round % 7 == 0 {
                data[14..34].fill(0);
            }
            let (mut a, mut b) = (Packet::new(&fused), Packet::new(&plain));
            a.data = data.clone();
            b.data = data.clone();
            Exec::new(&fused, &mut rt1).parse(&mut a);
            Exec::new(&plain, &mut rt2).parse(&mut b);
            for pkt in [&mut a, &mut b] {
                match round % 4 {
                    1 => pkt.phv.valid[1] = false,
                    2 => pkt.phv.valid[2] = false,
                    _ => {}
                }
            }
            let (mut o1, mut o2) = (vec![], vec![]);
            Exec::new(&fused, &mut rt1).deparse(&mut a, &mut o1);
            Exec::new(&plain, &mut rt2).deparse(&mut b, &mut o2);
            assert_eq!(a.data, b.data, "round {round}");
            assert_eq!(a.phv.vals, b.phv.vals, "round {round}");
            if round % 4 == 0 {
                assert_eq!(crate::hash::csum16(&a.data[14..34]), 0, "a valid IPv4 header sums to zero");
            }
        }
    }
}
