//! The analyzer: reads every frame of an interface from a TPACKET_V3 ring,
//! finds the probes and keeps per-stream statistics (stats.rs). Frames that
//! are not probes are only counted. The ring's own drop counter is
//! reported, so loss inside the analyzer is never mistaken for loss in the
//! network.

use crate::json::J;
use crate::sock::{monotonic_ns, realtime_ns, stop_requested, RxRing};
use crate::packet::find_probe;
use crate::stats::RxStream;

pub struct RecvConfig {
    pub iface: String,
    pub duration: Option<f64>,
    /// Stop after this many seconds without a probe, once one was seen.
    pub idle: Option<f64>,
    /// Stop after this many probes.
    pub count: Option<u64>,
    pub interval_ns: u64,
    pub hist_edges_ns: Vec<u64>,
    pub ring_mb: usize,
    pub snaplen: u32,
    pub outgoing: bool,
}

pub fn run(cfg: &RecvConfig, ready: impl FnOnce()) -> Result<J, String> {
    let block = 1 << 20;
    let blocks = cfg.ring_mb.max(2);
    let mut ring = RxRing::open(&cfg.iface, block, blocks, cfg.snaplen, cfg.outgoing)
        .map_err(|e| format!("{}: {e}", cfg.iface))?;
    let origin = realtime_ns();
    let t0 = monotonic_ns();
    ready();
    let mut table: Vec<Option<Box<RxStream>>> = (0..=u16::MAX as usize).map(|_| None).collect();
    let (mut matched, mut other) = (0u64, 0u64);
    let mut last_probe = t0;
    loop {
        if stop_requested() {
            break;
        }
        let now = monotonic_ns();
        let el = (now - t0) as f64 / 1e9;
        if cfg.duration.map_or(false, |d| el >= d) {
            break;
        }
        if matched > 0 && cfg.idle.map_or(false, |i| (now - last_probe) as f64 / 1e9 >= i) {
            break;
        }
        if cfg.count.map_or(false, |c| matched >= c) {
            break;
        }
        let before = matched;
        ring.poll_block(50, |f| match find_probe(f.data) {
            Some(p) => {
                matched += 1;
                let st = table[p.stream as usize].get_or_insert_with(|| {
                    Box::new(RxStream::new(p.stream, cfg.hist_edges_ns.clone(), origin, cfg.interval_ns))
                });
                st.add(p.seq, p.tx_ns, f.ts_ns, f.wire_len);
            }
            None => other += 1,
        })
        .map_err(|e| format!("{}: {e}", cfg.iface))?;
        if matched > before {
            last_probe = monotonic_ns();
        }
    }
    let rs = ring.stats();
    let streams: Vec<J> = table.iter().flatten().map(|s| s.to_json()).collect();
    Ok(J::obj(vec![
        ("tool", J::S("p4scope-trafgen".into())),
        ("mode", J::S("recv".into())),
        ("iface", J::S(cfg.iface.clone())),
        ("origin_ns", J::U(origin)),
        ("end_ns", J::U(realtime_ns())),
        ("elapsed_s", J::F((monotonic_ns() - t0) as f64 / 1e9)),
        ("interval_ns", J::U(cfg.interval_ns)),
        ("hist_edges_ns", J::us(&cfg.hist_edges_ns)),
        ("probes", J::U(matched)),
        ("other_frames", J::U(other)),
        ("ring", J::obj(vec![
            ("packets", J::U(rs.packets)),
            ("drops", J::U(rs.drops)),
            ("freezes", J::U(rs.freezes)),
        ])),
        ("interrupted", J::Bool(stop_requested())),
        ("streams", J::A(streams)),
    ]))
}
