//! The fabric end to end on chains of the tiny program that sends every
//! packet to port 9.

use super::*;
use crate::sim::frame::{udp_template, FrameBuilder};
use crate::sim::stream::{Rate, Sizes};
use crate::sim::tests::to_port_9;
use crate::sim::RxRecords;
use crate::tm::TmConfig;
use serde_json::json;

fn switch(tm: serde_json::Value, seed: u64) -> Switch {
    let mut sw = Switch::from_json(&to_port_9()).unwrap();
    let cfg = TmConfig::parse(&tm, &sw.tm.cfg).unwrap();
    sw.configure_tm(cfg).unwrap();
    sw.set_seed(seed);
    sw
}

fn stream(sizes: Sizes, rate: Rate, line_rate_bps: f64) -> StreamCfg {
    let tpl = udp_template(0x02, 0x0a00_0000_0001, 0x0a00_0001, 0x0a00_0002, 1, 2, 0);
    StreamCfg {
        name: "s".into(),
        port: 0,
        rate,
        line_rate_bps,
        sizes,
        burst: None,
        start_ns: 0,
        duration_ns: None,
        frames: None,
        builder: FrameBuilder::new(tpl, vec![], true).unwrap(),
    }
}

/// Two switches at 1 Gb/s, switch 0's port 9 linked to switch 1's port 1
/// with `delay_ns`; the tester sends into switch 0's port 1.
fn chain_of_two(delay_ns: u64) -> (Fabric, Vec<Switch>) {
    let mut sws = vec![switch(json!({"defaults": {"rate_bps": "1G"}}), 1), switch(json!({"defaults": {"rate_bps": "1G"}}), 1)];
    let mut f = Fabric::new(2, 1);
    f.link(&mut refs(&mut sws), (0, 9), (1, 1), None, delay_ns).unwrap();
    (f, sws)
}

fn refs(sws: &mut [Switch]) -> Vec<&mut Switch> {
    sws.iter_mut().collect()
}

#[test]
fn arrival_is_first_bit_plus_wire_time_plus_delay() {
    // 64-byte frame (60 bytes + FCS) + 8 of preamble at 1 Gb/s: 576 ns
    assert_eq!(arrival_ns(100, 60, Some(1_000_000_000), 1000), 100 + 576 + 1000);
    // at 100 Gb/s 5.76 ns, rounded up to the nanosecond
    assert_eq!(arrival_ns(0, 60, Some(100_000_000_000), 0), 6);
    assert_eq!(arrival_ns(7, 60, None, 3), 10, "an unlimited port sends in no time");
}

#[test]
fn chain_of_two_exact_arrival_times() {
    let (mut f, mut sws) = chain_of_two(1000);
    for sw in &mut sws {
        sw.tm.trace_start(Default::default());
    }
    let mut s = stream(Sizes::Fixed(64), Rate::Percent(10.0), 1e9);
    s.frames = Some(3);
    f.add_stream((0, 1), s).unwrap();
    f.tester.record = Some(RxRecords::default());
    f.run(&mut refs(&mut sws), u64::MAX, true).unwrap();
    // frame k: first bit at 6720k, complete at switch 0 576 ns later and out
    // at once, complete at switch 1 after 576 ns on the wire + 1000 ns
    let rec = f.tester.record.as_ref().unwrap();
    assert_eq!(rec.tx_ns, vec![0, 6720, 13440]);
    assert_eq!(rec.rx_ns, vec![2152, 8872, 15592]);
    let edge = f.edge_id((1, 9)).unwrap();
    assert_eq!(f.edge_ports[edge as usize], (1, 9));
    assert!(rec.port.iter().all(|p| *p as u32 == edge));
    let rx = &f.tester.rx[&(0, edge)];
    assert_eq!((rx.frames, rx.lat_min, rx.lat_max), (3, 2152, 2152));
    assert_eq!((f.links[0].frames, f.links[0].bytes, f.links[1].frames), (3, 192, 0));
    // each switch's own ground truth: enqueued when complete, out at once
    let t0 = sws[0].tm.trace_take().unwrap();
    let t1 = sws[1].tm.trace_take().unwrap();
    assert_eq!(t0.time_ns, vec![576, 576, 7296, 7296, 14016, 14016]);
    assert_eq!(t1.time_ns, vec![2152, 2152, 8872, 8872, 15592, 15592]);
    assert_eq!(f.in_flight(), 0);
}

#[test]
fn a_slower_last_hop_queues_exactly() {
    let (mut f, mut sws) = chain_of_two(1000);
    sws[1].tm.set_port_rate(9, Some(500_000_000));
    let mut s = stream(Sizes::Fixed(64), Rate::Percent(100.0), 1e9);
    s.frames = Some(2);
    f.add_stream((0, 1), s).unwrap();
    f.tester.record = Some(RxRecords::default());
    f.run(&mut refs(&mut sws), u64::MAX, true).unwrap();
    let rec = f.tester.record.as_ref().unwrap();
    // frame 1 (first bit at 672) is at switch 1 at 2824, while frame 0
    // (out at 2152) holds its 0.5 Gb/s port for 84 bytes: 1344 ns
    assert_eq!(rec.tx_ns, vec![0, 672]);
    assert_eq!(rec.rx_ns, vec![2152, 2152 + 1344]);
    assert_eq!(sws[1].tm.port(9).unwrap().queues[0].stats.peak_pkts, 1);
}

#[test]
fn a_frame_is_on_its_link_from_the_nanosecond_its_switch_records_it_gone() {
    // 64-byte frames back to back at 100 Gb/s (6.72 ns each): switch 0
    // starts most of them within a nanosecond, at an exact picosecond; the
    // link counts from the nanosecond switch 0's trace dequeues it in, so
    // each is at switch 1 exactly the wire time (5.76 ns, rounded up) later
    let rate = json!({"defaults": {"rate_bps": "100G"}});
    let mut sws = vec![switch(rate.clone(), 1), switch(rate, 1)];
    let mut f = Fabric::new(2, 1);
    f.link(&mut refs(&mut sws), (0, 9), (1, 1), None, 0).unwrap();
    for sw in &mut sws {
        sw.tm.trace_start(Default::default());
    }
    let mut s = stream(Sizes::Fixed(64), Rate::Percent(100.0), 100e9);
    s.frames = Some(100);
    f.add_stream((0, 1), s).unwrap();
    f.run(&mut refs(&mut sws), u64::MAX, true).unwrap();
    let at = |t: &crate::tm::trace::Trace, kind: u8| -> Vec<u64> {
        t.time_ns.iter().zip(&t.kind).filter(|(_, k)| **k == kind).map(|(t, _)| *t).collect()
    };
    let t0 = sws[0].tm.trace_take().unwrap();
    let t1 = sws[1].tm.trace_take().unwrap();
    let out0 = at(&t0, crate::tm::trace::DEQ);
    let in1 = at(&t1, crate::tm::trace::ENQ);
    assert_eq!(out0.len(), 100);
    assert_eq!(in1, out0.iter().map(|t| t + 6).collect::<Vec<_>>());
    assert_eq!(departure_ns(7, Some(7_001)), 8, "a first bit within the 8th nanosecond");
    assert_eq!(departure_ns(7, Some(7_000)), 7);
    assert_eq!(departure_ns(7, None), 7, "an untimed output (a pause frame) leaves at its time");
}

fn congested_run(seed: u64, pieces: &[u64]) -> (u64, Vec<u64>, u64) {
    let tm = json!({"defaults": {"rate_bps": "100G"}, "buffer": {"size_bytes": 100000, "alpha": 1}});
    let mut sws = vec![switch(tm.clone(), seed), switch(tm, seed)];
    let mut f = Fabric::new(2, seed);
    f.link(&mut refs(&mut sws), (0, 9), (1, 1), None, 50).unwrap();
    for p in [1, 2] {
        let mut s = stream(Sizes::imix(), Rate::Percent(100.0), 100e9);
        s.duration_ns = Some(20_000);
        f.add_stream((0, p), s).unwrap();
    }
    f.tester.record = Some(RxRecords::default());
    for (i, until) in pieces.iter().enumerate() {
        f.run(&mut refs(&mut sws), *until, i + 1 == pieces.len()).unwrap();
    }
    let rx = f.tester.record.take().unwrap().rx_ns;
    (f.tester.digest, rx, sws[0].stats.dropped_queue)
}

#[test]
fn same_seed_same_run_in_any_pieces_other_seed_differs() {
    let (d, rx, dropped) = congested_run(5, &[20_000]);
    assert!(dropped > 0, "two 100G sources into one 100G port overflow its buffer");
    assert!(rx.len() > 400, "{}", rx.len());
    assert_eq!(congested_run(5, &[20_000]), (d, rx.clone(), dropped));
    assert_eq!(congested_run(5, &[3_000, 3_001, 11_000, 20_000]), (d, rx, dropped), "stepping changes nothing");
    assert_ne!(congested_run(6, &[20_000]).0, d);
}

#[test]
fn one_switch_without_links_is_the_tester_alone() {
    let tm = json!({"defaults": {"rate_bps": "100G"}, "queue_depth": 50});
    let mut cfgs = vec![];
    for _ in 0..2 {
        let mut s = stream(Sizes::imix(), Rate::Percent(100.0), 100e9);
        s.duration_ns = Some(10_000);
        cfgs.push(s);
    }
    let mut alone = switch(tm.clone(), 3);
    let mut t = Tester::new(3);
    for (p, c) in [1u32, 2].iter().zip(&cfgs) {
        t.add_stream(StreamCfg { port: *p, ..c.clone() }).unwrap();
    }
    t.record = Some(RxRecords::default());
    t.run(&mut alone, 10_000, true);
    let mut sws = vec![switch(tm, 3)];
    let mut f = Fabric::new(1, 3);
    for (p, c) in [1u32, 2].iter().zip(&cfgs) {
        f.add_stream((0, *p), c.clone()).unwrap();
    }
    f.tester.record = Some(RxRecords::default());
    f.run(&mut refs(&mut sws), 10_000, true).unwrap();
    let (a, b) = (t.record.as_ref().unwrap(), f.tester.record.as_ref().unwrap());
    assert!(a.rx_ns.len() > 100);
    assert_eq!((&a.stream, &a.seq, &a.tx_ns, &a.rx_ns, &a.size), (&b.stream, &b.seq, &b.tx_ns, &b.rx_ns, &b.size));
    assert_eq!(t.events, f.tester.events);
    assert_eq!(alone.stats.dropped_queue, sws[0].stats.dropped_queue);
}

#[test]
fn refuses_what_cannot_be_wired() {
    let (mut f, mut sws) = chain_of_two(0);
    let mut r = refs(&mut sws);
    let s = stream(Sizes::Fixed(64), Rate::Percent(10.0), 1e9);
    assert!(f.add_stream((0, 9), s.clone()).unwrap_err().contains("is linked"));
    assert!(f.add_stream((2, 1), s.clone()).unwrap_err().contains("switch 2"));
    assert!(f.link(&mut r, (0, 9), (1, 2), None, 0).unwrap_err().contains("linked already"));
    assert!(f.link(&mut r, (0, 3), (0, 3), None, 0).unwrap_err().contains("two different ports"));
    assert!(f.link(&mut r, (0, 3), (1, 70_000), None, 0).unwrap_err().contains("ports are 0.."));
    f.add_stream((0, 1), s).unwrap();
    assert!(f.link(&mut r, (0, 1), (1, 5), None, 0).unwrap_err().contains("has a tester stream"));
    let mut bare = vec![Switch::from_json(&to_port_9()).unwrap(), Switch::from_json(&to_port_9()).unwrap()];
    let mut g = Fabric::new(2, 0);
    assert!(g.link(&mut refs(&mut bare), (0, 1), (1, 1), None, 0).unwrap_err().contains("no line rate"));
    g.link(&mut refs(&mut bare), (0, 1), (1, 1), Some(25_000_000_000), 0).unwrap();
    assert_eq!(bare[1].tm.cfg.port(1).rate_bps, Some(25_000_000_000), "the link sets its ends' rate");
    assert!(g.run(&mut refs(&mut bare[..1]), 10, true).unwrap_err().contains("2 switches, not 1"));
}
