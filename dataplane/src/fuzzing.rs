//! The bodies of the fuzz targets (dataplane/fuzz), kept in the library so
//! a unit test can run them on a quick pseudo-random corpus with the stable
//! toolchain, and cargo-fuzz can run them for long with libFuzzer. Each must
//! return normally for every input: a panic is the bug they look for.

use crate::engine::Switch;
use crate::pipeline::{Exec, Packet, Runtime};
use crate::program::Program;

/// A small L2/L3 program (parse Ethernet/IPv4, lpm + exact tables, TTL,
/// checksum update, a range table) used by the packet-path target.
pub const PROGRAM: &str = include_str!("../fuzz/programs/l3.json");

/// Loads arbitrary bytes as BMv2 JSON: an error is fine, a panic is not.
pub fn json_load(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(mut sw) = Switch::from_json(text) {
            // a loaded program must also survive a few packets
            for p in [vec![], vec![0u8; 14], vec![0xffu8; 64]] {
                sw.inject(1, p, 0);
            }
            sw.run_until_idle();
        }
    }
}

/// A switch with the packet-path program and a few entries.
pub fn packet_switch() -> Switch {
    use crate::program::MatchValue;
    use crate::value::Val;
    let mut sw = Switch::from_json(PROGRAM).expect("the fuzz program loads");
    for i in 0..8u32 {
        let k = (10u32 << 24) | (i << 16);
        let _ = sw.table_add("ingress.route", &[MatchValue::Lpm(k.to_be_bytes().to_vec(), 16)], "ingress.set_nhop", &[Val::from(i as u64), Val::from(1 + i as u64)], 0);
        let _ = sw.table_add("ingress.nhop", &[MatchValue::Exact(i.to_be_bytes().to_vec())], "ingress.set_dmac", &[Val::from(0x0200_0000_0000u64 + i as u64)], 0);
    }
    let _ = sw.table_add(
        "ingress.acl",
        &[MatchValue::Range(vec![0, 0], vec![0x03, 0xff])],
        "ingress.deny",
        &[],
        1,
    );
    sw
}

/// Runs arbitrary bytes through the pipeline: byte 0 picks the port, the
/// rest is the frame.
pub fn packet_path(sw: &mut Switch, data: &[u8]) {
    let Some((&port, frame)) = data.split_first() else { return };
    let t = sw.now_ns() + 1;
    sw.deliver(port as u32, t, frame);
    sw.run_until_idle();
    for o in sw.take_outputs() {
        sw.recycle(o.data);
    }
}

/// A small xorshift generator: the same frames for the same seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// Frames that lead `p`'s parser down its transitions: random bytes, then
/// a random walk from the first state that, in each state whose plan
/// extracts the key's field, writes a chosen transition's value where that
/// field is read. Each frame is then cut to a random length (half of them
/// within 64 bytes), so some end in the middle of a header.
pub fn parser_walk_frames(p: &Program, seed: u64, n: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let mut f: Vec<u8> = (0..256).map(|_| rng.next_u64() as u8).collect();
            walk(p, &mut rng, &mut f);
            let len = if rng.below(2) == 0 { rng.below(65) } else { rng.below(f.len() + 1) };
            f.truncate(len);
            f
        })
        .collect()
}

fn walk(p: &Program, rng: &mut Rng, f: &mut [u8]) {
    let mut state = p.parser.init;
    let mut cursor = 0usize;
    for _ in 0..32 {
        let Some(s) = state else { return };
        let st = &p.parser.states[s as usize];
        let Some(plan) = &p.state_plans[s as usize] else { return };
        if st.transitions.is_empty() {
            return;
        }
        let t = &st.transitions[rng.below(st.transitions.len())];
        let mut off = cursor;
        for &(h, bytes) in &plan.extracts {
            let loads = p.extract_plans[h as usize].as_ref().and_then(|x| x.loads());
            if let (Some((takes, _)), Some(k), Some((v, _))) = (loads, plan.key_field, t.small) {
                if let Some(tk) = takes.iter().find(|tk| tk.field == k) {
                    let width = 64 - tk.r as usize;
                    let at = (off + tk.byte as usize) * 8 + tk.l as usize;
                    for i in 0..width {
                        let (byte, bit) = ((at + i) / 8, 7 - (at + i) % 8);
                        if byte < f.len() {
                            let one = (v >> (width - 1 - i)) & 1 == 1;
                            f[byte] = (f[byte] & !(1 << bit)) | ((one as u8) << bit);
                        }
                    }
                }
            }
            off += bytes as usize;
        }
        cursor = off;
        state = t.next;
    }
}

/// `data` as a packet of `p`, parsed.
pub fn parsed(p: &Program, data: &[u8]) -> Packet {
    let mut rt = Runtime::new(p, 0);
    let mut pkt = Packet::new(p);
    pkt.data = data.to_vec();
    Exec::new(p, &mut rt).parse(&mut pkt);
    pkt
}

/// Parses `data` (with the interpreter), changes the PHV the same way in
/// two copies (some headers' validity flipped, some fields given random
/// values, as `rng` says), then deparses one copy with `native`'s native
/// deparser and the other with `interpreted` (no native code): None when
/// both give the same bytes and PHV, else what differs.
pub fn native_deparse_mismatch(native: &Program, interpreted: &Program, data: &[u8], rng: &mut Rng) -> Option<String> {
    let mut a = parsed(interpreted, data);
    perturb(interpreted, &mut a, rng, (3, 4), false);
    let mut b = Packet::new(interpreted);
    b.data = a.data.clone();
    b.payload_off = a.payload_off;
    b.cursor = a.cursor;
    b.phv.copy_from(&a.phv);
    let mut out = vec![];
    let mut rt = Runtime::new(interpreted, 0);
    Exec::new(native, &mut rt).deparse(&mut a, &mut out);
    Exec::new(interpreted, &mut rt).deparse(&mut b, &mut out);
    let what = [
        ("bytes", a.data != b.data),
        ("payload offset", a.payload_off != b.payload_off),
        ("field values", a.phv.vals != b.phv.vals),
    ];
    let differ: Vec<&str> = what.iter().filter(|(_, d)| *d).map(|(n, _)| *n).collect();
    (!differ.is_empty()).then(|| format!("{} differ after deparsing frame {:02x?}", differ.join(", "), data))
}

/// The packet-path program with its native code, and without (see
/// [`native_parse_mismatch`]).
pub fn native_and_interpreted() -> (Program, Program) {
    let native = crate::json::load(PROGRAM).expect("the fuzz program loads");
    (native.clone(), interpreted(native))
}

/// Flips the validity of fewer than `counts.0` headers (not metadata) and
/// sets fewer than `counts.1` narrow fields to random values (a third of
/// them below 4 when `small`, so that comparisons with constants vary).
fn perturb(p: &Program, pkt: &mut Packet, rng: &mut Rng, counts: (usize, usize), small: bool) {
    for _ in 0..rng.below(counts.0) {
        let h = rng.below(pkt.phv.valid.len());
        if !p.headers[h].metadata {
            pkt.phv.valid[h] = !pkt.phv.valid[h];
        }
    }
    for _ in 0..rng.below(counts.1) {
        let f = rng.below(pkt.phv.vals.len());
        let m = p.fmeta[f];
        if !m.wide {
            let v = if small && rng.below(3) == 0 {
                rng.below(4) as u128
            } else {
                (rng.next_u64() as u128) << 64 | rng.next_u64() as u128
            };
            pkt.phv.vals[f] = v & crate::value::mask_u128(m.width as u32);
        }
    }
}

/// `p` without its native code: the interpreter alone.
pub fn interpreted(mut p: Program) -> Program {
    p.native_parser = None;
    p.native_deparser = None;
    p.native_controls.clear();
    for plan in p.action_plans.iter_mut().flatten() {
        plan.drop_native();
    }
    p
}

/// Parses `data` (with the interpreter), changes the PHV as
/// [`native_deparse_mismatch`] does (more often, so that conditionals go
/// both ways), then runs the ingress and the egress pipeline on one copy
/// with `native`'s native code and on the other with `interpreted`, each
/// with fresh tables (keyed tables miss): None when both leave the same
/// PHV, requests and externs, else what differs.
pub fn native_pipeline_mismatch(native: &Program, interpreted: &Program, data: &[u8], rng: &mut Rng) -> Option<String> {
    let mut a = parsed(interpreted, data);
    perturb(interpreted, &mut a, rng, (4, 24), true);
    let mut b = a.clone();
    let (mut ra, mut rb) = (Runtime::new(native, 0), Runtime::new(interpreted, 0));
    for (prog, rt, pkt) in [(native, &mut ra, &mut a), (interpreted, &mut rb, &mut b)] {
        let mut ex = Exec::new(prog, rt);
        ex.apply_pipeline(pkt, prog.ingress.init);
        ex.apply_pipeline(pkt, prog.egress.init);
    }
    let what = [
        ("field values", a.phv.vals != b.phv.vals || a.phv.wide != b.phv.wide),
        ("validity", a.phv.valid != b.phv.valid),
        ("stack indexes", a.phv.stack_next != b.phv.stack_next),
        ("length", a.len_reg != b.len_reg),
        ("requests", (a.clone, a.truncate_to, a.learn_id) != (b.clone, b.truncate_to, b.learn_id)),
        ("registers", ra.ext.registers != rb.ext.registers),
        ("counters", ra.ext.counters != rb.ext.counters),
        ("log", ra.log != rb.log),
    ];
    let differ: Vec<&str> = what.iter().filter(|(_, d)| *d).map(|(n, _)| *n).collect();
    (!differ.is_empty()).then(|| format!("{} differ after the pipelines for frame {:02x?}", differ.join(", "), data))
}

/// Parses `data` with `native` (a program with its native parser) and
/// with `interpreted` (the same program without): None when both give the
/// same PHV, error, cursor and payload offset, else what differs.
pub fn native_parse_mismatch(native: &Program, interpreted: &Program, data: &[u8]) -> Option<String> {
    let (a, b) = (parsed(native, data), parsed(interpreted, data));
    let what = [
        ("parser_error", a.parser_error != b.parser_error),
        ("checksum_error", a.checksum_error != b.checksum_error),
        ("cursor", a.cursor != b.cursor),
        ("payload offset", a.payload_off != b.payload_off),
        ("field values", a.phv.vals != b.phv.vals || a.phv.wide != b.phv.wide),
        ("validity", a.phv.valid != b.phv.valid),
        ("varbit lengths", a.phv.vl_bits != b.phv.vl_bits),
        ("stack indexes", a.phv.stack_next != b.phv.stack_next || a.phv.ustack_next != b.phv.ustack_next),
    ];
    let differ: Vec<&str> = what.iter().filter(|(_, d)| *d).map(|(n, _)| *n).collect();
    (!differ.is_empty()).then(|| format!("{} differ for frame {:02x?}", differ.join(", "), data))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mutations(seed: u64, base: &[u8], n: usize) -> Vec<Vec<u8>> {
        let mut x = seed | 1;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|_| {
                let mut v = base.to_vec();
                let len = (rnd() % (base.len() as u64 + 40)) as usize;
                v.resize(len, (rnd() & 0xff) as u8);
                for _ in 0..(rnd() % 6) {
                    if !v.is_empty() {
                        let i = (rnd() as usize) % v.len();
                        v[i] = (rnd() & 0xff) as u8;
                    }
                }
                v
            })
            .collect()
    }

    #[test]
    fn packet_path_survives_mutated_frames() {
        let mut sw = packet_switch();
        let mut base = vec![1u8];
        base.extend_from_slice(&[2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 8, 0]);
        base.extend_from_slice(&[0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 3, 0, 2]);
        base.extend_from_slice(&[0, 80, 1, 0]);
        base.extend_from_slice(&[0u8; 22]);
        for m in mutations(42, &base, 3000) {
            packet_path(&mut sw, &m);
        }
        assert!(sw.stats.received >= 2900);
    }

    #[test]
    fn native_parser_agrees_on_mutated_frames() {
        let (native, interpreted) = native_and_interpreted();
        let mut base = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 8, 0];
        base.extend_from_slice(&[0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 3, 0, 2]);
        base.extend_from_slice(&[0, 80, 1, 0]);
        base.extend_from_slice(&[0u8; 22]);
        for m in mutations(43, &base, 3000) {
            assert_eq!(native_parse_mismatch(&native, &interpreted, &m), None);
        }
    }

    #[test]
    fn json_load_survives_mutated_documents() {
        let base = PROGRAM.as_bytes();
        for m in mutations(7, base, 200) {
            json_load(&m);
        }
        // truncations of a valid document
        for cut in (0..base.len()).step_by(97) {
            json_load(&base[..cut]);
        }
    }
}
