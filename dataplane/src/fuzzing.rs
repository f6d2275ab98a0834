//! The bodies of the fuzz targets (dataplane/fuzz), kept in the library so
//! a unit test can run them on a quick pseudo-random corpus with the stable
//! toolchain, and cargo-fuzz can run them for long with libFuzzer. Each must
//! return normally for every input: a panic is the bug they look for.

use crate::engine::Switch;

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
