//! The tester against the ports' MACs: errored frames from the sources,
//! a gap below 96 bits, and the gap the sink measures.

use super::frame::{udp_template, FrameBuilder};
use super::stream::{Rate, Sizes, StreamCfg};
use super::tests::to_port_9;
use super::wire::WireOpts;
use super::*;
use crate::engine::MacCfg;
use crate::tm::TmConfig;
use serde_json::json;

fn switch(tm: serde_json::Value) -> Switch {
    let mut sw = Switch::from_json(&to_port_9()).unwrap();
    let cfg = TmConfig::parse(&tm, &sw.tm.cfg).unwrap();
    sw.configure_tm(cfg).unwrap();
    sw
}

/// `size`-byte frames from port 1 at `pct` of 100G for 10 us; `tpl_len`
/// bytes of the UDP template (34: Ethernet and IPv4 only, room for runts).
fn stream(size: u32, pct: f64, tpl_len: usize) -> StreamCfg {
    let mut tpl = udp_template(0x02, 0x0a00_0000_0001, 0x0a00_0001, 0x0a00_0002, 1, 2, 0);
    tpl.truncate(tpl_len);
    StreamCfg {
        name: format!("{size}"),
        port: 1,
        rate: Rate::Percent(pct),
        line_rate_bps: 100e9,
        sizes: Sizes::Fixed(size),
        burst: None,
        start_ns: 0,
        duration_ns: Some(10_000),
        frames: None,
        builder: FrameBuilder::new(tpl, vec![], true).unwrap(),
    }
}

fn add(t: &mut Tester, cfg: StreamCfg, wire: WireOpts) -> u16 {
    let id = t.add_stream(cfg).unwrap();
    t.sources[id as usize].wire = wire;
    id
}

#[test]
fn a_source_with_an_88_bit_gap_offers_more_than_line_rate_and_the_switch_keeps_96() {
    let mut sw = switch(json!({"defaults": {"rate_bps": "100G"}}));
    let mut t = Tester::new(1);
    add(&mut t, stream(64, 100.0, 42), WireOpts { ifg_bits: 88, bad_fcs: false });
    t.run(&mut sw, 10_000, true);
    // 83 bytes of wire per 64-byte frame: 6.64 ns instead of 6.72, so the
    // frames complete at the switch within 10 us are 1506 instead of 1488
    assert_eq!(t.sources[0].tx_frames, 1506);
    let g = t.gaps[&9];
    assert!((g.min_gap_bits.unwrap() - 96.0).abs() < 0.01, "{:?}", g.min_gap_bits);
    assert_eq!(g.frames, t.rx_frames(0));
}

#[test]
fn a_switch_that_sends_with_a_short_gap_is_measured() {
    // 23 bytes of wire overhead: the switch's own gap is 88 bits
    let mut sw = switch(json!({"defaults": {"rate_bps": "100G"}, "wire_overhead_bytes": 23}));
    let mut t = Tester::new(1);
    add(&mut t, stream(64, 100.0, 42), WireOpts { ifg_bits: 88, bad_fcs: false });
    t.run(&mut sw, 10_000, true);
    assert!((t.gaps[&9].min_gap_bits.unwrap() - 88.0).abs() < 0.01);
}

#[test]
fn errored_frames_from_the_sources_are_dropped_at_the_mac_unless_passed() {
    for pass in [false, true] {
        let mut sw = switch(json!({"defaults": {"rate_bps": "100G"}}));
        sw.set_port_mac(1, MacCfg { mtu: 1500, pass_errored: pass });
        let mut t = Tester::new(1);
        let valid = add(&mut t, stream(512, 10.0, 42), WireOpts::default());
        let runt = add(&mut t, stream(60, 10.0, 34), WireOpts::default());
        let over = add(&mut t, stream(1522, 10.0, 42), WireOpts::default());
        let bad = add(&mut t, stream(512, 10.0, 42), WireOpts { ifg_bits: 96, bad_fcs: true });
        t.run(&mut sw, 10_000, true);
        let tx = |s: u16| t.sources[s as usize].tx_frames;
        assert!(tx(runt) > 0 && tx(over) > 0 && tx(bad) > 0);
        assert_eq!(t.rx_frames(valid), tx(valid), "valid frames are forwarded");
        let m = *sw.mac_stats().find(|(p, _)| *p == 1).unwrap().1;
        assert_eq!((m.frames_ok, m.undersize, m.oversize, m.fcs_errors), (tx(valid), tx(runt), tx(over), tx(bad)));
        for s in [runt, over, bad] {
            assert_eq!(t.rx_frames(s), if pass { tx(s) } else { 0 }, "stream {s}, pass_errored {pass}");
        }
        assert_eq!(m.passed_errored, if pass { tx(runt) + tx(over) + tx(bad) } else { 0 });
    }
}
