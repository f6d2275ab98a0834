//! Packets per second of the engine on one core, without Python: the
//! L2/L3 program of `p4scope.bench.engine` (its JSON in the file given, or
//! /tmp/l2l3.json), a few hundred routes and next hops, packets delivered
//! in batches of 256 and their outputs recycled.
//!
//!     .venv/bin/python -m p4scope.bench.engine --write-json /tmp/l2l3.json
//!     cargo run --release --example bench_engine -- [JSON] [PACKETS]
use p4scope_dataplane::program::MatchValue;
use p4scope_dataplane::value::Val;
use p4scope_dataplane::Switch;

/// Says what is wrong with the command line and exits 2, as a bad option does.
fn usage_error(what: String) -> ! {
    eprintln!("bench_engine: {what}");
    eprintln!("usage: cargo run --release --example bench_engine -- [JSON] [PACKETS]");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).cloned().unwrap_or_else(|| "/tmp/l2l3.json".into());
    let total: usize = match args.get(2) {
        None => 2_000_000,
        Some(s) => match s.parse() {
            Ok(n) if n > 0 => n,
            _ => usage_error(format!("PACKETS {s:?}: give a positive whole number")),
        },
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        usage_error(format!(
            "JSON {path}: {e} (write the program's with `.venv/bin/python -m p4scope.bench.engine --write-json {path}`)"
        ))
    });
    let mut sw = Switch::from_json(&text).unwrap_or_else(|e| usage_error(format!("JSON {path}: {e}")));
    let n = 300u32;
    for i in 0..n {
        let k = (10u32 << 24) | (i << 8);
        sw.table_add("ingress.ipv4_lpm", &[MatchValue::Lpm(k.to_be_bytes().to_vec(), 24)], "ingress.set_nhop",
                     &[Val::from(i as u64), Val::from((1 + i % 8) as u64)], 0).unwrap();
        sw.table_add("ingress.forward", &[MatchValue::Exact(i.to_be_bytes().to_vec())], "ingress.set_dmac",
                     &[Val::from(0x0200_0000_0000u64 + i as u64)], 0).unwrap();
    }
    let pkts: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let mut p = vec![0, 0, 0, 0, 0, 0xa, 0, 0, 0, 0, 0, 0xb, 8, 0, 0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 5];
            p[31] = (i >> 8) as u8;
            p[32] = i as u8;
            p.extend_from_slice(&[0u8; 26]);
            p
        })
        .collect();
    let mut outs = Vec::with_capacity(512);
    let mut run = |count: usize, sw: &mut Switch| -> usize {
        let mut t = sw.now_ns();
        let mut out = 0;
        let mut k = 0;
        while k < count {
            for _ in 0..256 {
                t += 1;
                sw.deliver(0, t, &pkts[k % pkts.len()]);
                k += 1;
            }
            sw.run_until_idle();
            sw.drain_outputs(&mut outs);
            out += outs.len();
            for o in outs.drain(..) {
                sw.recycle(o.data);
            }
        }
        out
    };
    run(100_000, &mut sw);
    let t0 = std::time::Instant::now();
    let out = run(total, &mut sw);
    let dt = t0.elapsed().as_secs_f64();
    println!("{out} packets out, {:.0} packets/s, {:.0} ns/packet (1 core, batches of 256)", out as f64 / dt, dt * 1e9 / out as f64);
}
