//! The simulator end to end on a tiny program (everything to port 9).

use super::frame::{udp_template, FrameBuilder, Vary};
use super::stream::{Burst, Rate, Sizes, StreamCfg};
use super::*;
use crate::tm::TmConfig;
use serde_json::json;

/// Forwards every packet to port 9.
pub(crate) fn to_port_9() -> String {
    crate::engine::tests::MINIMAL.replace(
        r#""pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},"#,
        r#""actions": [{"name": "f", "id": 0, "runtime_data": [], "primitives": [
      {"op": "assign", "parameters": [{"type": "field", "value": ["standard_metadata", "egress_spec"]},
                                      {"type": "hexstr", "value": "0x9"}]}]}],
  "pipelines": [{"name": "ingress", "id": 0, "init_table": "t", "conditionals": [], "tables": [
      {"name": "t", "id": 0, "key": [], "match_type": "exact", "type": "simple", "max_size": 1,
       "action_ids": [0], "actions": ["f"], "next_tables": {"f": null},
       "default_entry": {"action_id": 0, "action_const": true, "action_data": [], "action_entry_const": true}}]},"#,
    )
}

fn switch(tm: serde_json::Value) -> Switch {
    let mut sw = Switch::from_json(&to_port_9()).unwrap();
    let cfg = TmConfig::parse(&tm, &sw.tm.cfg).unwrap();
    sw.configure_tm(cfg).unwrap();
    sw
}

fn stream(port: u32, sizes: Sizes, rate: Rate) -> StreamCfg {
    let tpl = udp_template(0x02, 0x0a00_0000_0000 + port as u64, 0x0a00_0001, 0x0a00_0002, 1, 2, 0);
    let vary = vec![Vary { offset: 6, width: 6, start: 0x0a00_0000_0000, step: 1, count: 100 }];
    StreamCfg {
        name: format!("p{port}"),
        port,
        rate,
        line_rate_bps: 100e9,
        sizes,
        burst: None,
        start_ns: 0,
        duration_ns: Some(20_000),
        frames: None,
        builder: FrameBuilder::new(tpl, vary, true).unwrap(),
    }
}

#[test]
fn one_to_one_at_line_rate_loses_nothing() {
    let mut sw = switch(json!({"defaults": {"rate_bps": "100G"}}));
    let mut t = Tester::new(1);
    t.add_stream(stream(1, Sizes::Fixed(64), Rate::Percent(100.0))).unwrap();
    t.run(&mut sw, 20_000, true);
    let src = &t.sources[0];
    let rx = &t.rx[&(0, 9)];
    assert_eq!(rx.frames, src.tx_frames);
    assert_eq!(rx.out_of_order + rx.seq_gaps, 0);
    // store and forward: the 72 bytes of the frame at 100G, then out at once
    assert!(rx.lat_min >= 5 && rx.lat_max <= 7, "{} {}", rx.lat_min, rx.lat_max);
    assert_eq!(sw.stats.dropped_queue, 0);
}

#[test]
fn two_to_one_overload_halves_and_queue_fills() {
    let mut sw = switch(json!({"defaults": {"rate_bps": "100G"}, "queue_depth": 100}));
    let mut t = Tester::new(1);
    t.add_stream(stream(1, Sizes::Fixed(1518), Rate::Percent(100.0))).unwrap();
    t.add_stream(stream(2, Sizes::Fixed(1518), Rate::Percent(100.0))).unwrap();
    t.run(&mut sw, 20_000, true);
    let tx: u64 = t.sources.iter().map(|s| s.tx_frames).sum();
    let rx = t.rx_frames(0) + t.rx_frames(1);
    let p = t.ports[&9];
    assert_eq!(p.frames, rx);
    // the port carried its line rate while congested: about half of what came
    // in, plus the 100 frames the queue held
    assert!(rx > tx / 2 + 90 && rx < tx / 2 + 110, "rx {rx} of {tx}");
    let q = &sw.tm.port(9).unwrap().queues[0];
    assert_eq!(q.stats.peak_pkts, 100);
}

#[test]
fn same_seed_same_results_other_seed_differs() {
    let run = |seed: u64| {
        let mut sw = switch(json!({"defaults": {"rate_bps": "100G"}, "buffer": {"size_bytes": 200000, "alpha": 1}}));
        sw.set_seed(seed);
        let mut t = Tester::new(seed);
        for p in 1..=4 {
            t.add_stream(stream(p, Sizes::imix(), Rate::Percent(100.0))).unwrap();
        }
        t.run(&mut sw, 10_000, false);
        (t.digest, t.ports[&9].frames)
    };
    assert_eq!(run(5), run(5));
    assert_ne!(run(5).0, run(6).0);
}

#[test]
fn bursts_are_absorbed_by_the_buffer() {
    let mut sw = switch(json!({"defaults": {"rate_bps": "100G"}, "buffer": {"size_bytes": 1000000}}));
    let mut t = Tester::new(1);
    for p in 1..=2 {
        let mut s = stream(p, Sizes::Fixed(1518), Rate::Percent(100.0));
        s.burst = Some(Burst { frames: 200, gap_ns: 0, count: Some(1) });
        s.duration_ns = None;
        t.add_stream(s).unwrap();
    }
    t.run(&mut sw, 1_000_000, true);
    // 400 frames of 1518 bytes need 607 KB of buffer at the peak (200 of them
    // leave while the burst comes in): all forwarded
    assert_eq!(t.ports[&9].frames, 400);
    let q = &sw.tm.port(9).unwrap().queues[0];
    assert!(q.stats.peak_pkts >= 195 && q.stats.peak_pkts <= 201, "{}", q.stats.peak_pkts);
}

#[test]
fn frames_too_small_for_the_tag_are_refused() {
    let mut t = Tester::new(1);
    let mut s = stream(1, Sizes::Fixed(60), Rate::Percent(10.0));
    s.sizes = Sizes::Fixed(60);
    assert!(t.add_stream(s).unwrap_err().contains("cannot hold"));
}

#[test]
fn capture_keeps_departing_frames_with_their_times() {
    let run = |capture: Option<usize>| {
        let mut sw = switch(json!({"defaults": {"rate_bps": "100G"}}));
        let mut t = Tester::new(1);
        t.add_stream(stream(1, Sizes::Fixed(128), Rate::Percent(50.0))).unwrap();
        t.record = Some(Default::default());
        if let Some(l) = capture {
            t.captures.start(9, Some(l));
            t.captures.start(10, None); // nothing leaves port 10
        }
        t.run(&mut sw, 20_000, true);
        t
    };
    let mut all = run(Some(usize::MAX));
    let frames = all.ports[&9].frames;
    assert!(frames > 50);
    let got = all.captures.ports.get_mut(&9).unwrap().take();
    assert_eq!(got.len() as u64, frames);
    let rec = all.record.as_ref().unwrap();
    let times: Vec<u64> = got.iter().map(|(t, _)| *t).collect();
    assert_eq!(times, rec.rx_ns, "departure times are the sink's receive times");
    for (i, (_, data)) in got.iter().enumerate() {
        assert_eq!(data.len() + FCS, 128);
        assert_eq!(read_tag(data).unwrap().seq, rec.seq[i]);
    }
    assert_eq!(all.captures.ports[&10].held(), 0);
    // capturing changes nothing the switch does
    let none = run(None);
    assert_eq!(none.digest, all.digest);
    // a limit keeps the first frames and counts the others
    let mut few = run(Some(10));
    let c = few.captures.ports.get_mut(&9).unwrap();
    assert_eq!((c.held(), c.kept, c.not_kept), (10, 10, frames - 10));
    assert_eq!(c.take()[..], got[..10]);
}
