//! Sources obeying priority flow control (IEEE 802.1Qbb): a PFC frame that
//! leaves the switch on a tester port pauses that port's sources of the
//! priorities it names, as a NIC does.
//!
//! The pause starts when the frame is complete at the tester port (its
//! first bit out of the switch plus its time on the wire); a frame already
//! started is finished. The source then sends nothing until the pause
//! time (quanta of 512 bit times at the port's line rate) has passed or an
//! XON (0 quanta) came; a later XOFF extends the pause from its own
//! arrival. After a pause the source goes on at its rate from where it
//! stopped: it sends later, not more. A source that does not obey (no
//! PFC priority, `obey_pause=False` in Python) keeps sending: the headroom
//! it overruns is what a lossless class cannot survive.

use super::frame::FCS;
use super::Tester;
use crate::tm::pfc_frame::{self, quanta_ps, Pause};

/// Preamble and start delimiter before a frame on the wire.
const PREAMBLE: usize = 8;

/// One source's side of PFC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PauseState {
    /// The priority whose pause frames the source obeys (None: it ignores them).
    pub priority: Option<u8>,
    /// The current (or last) pause: no frame starts in [from_ps, until_ps).
    from_ps: u64,
    until_ps: u64,
    /// Earlier pauses' total.
    closed_ps: u64,
    /// Pause frames for its priority that reached it (XOFF and XON).
    pub frames: u64,
}

impl PauseState {
    /// When a frame due to start at `t_ps` may start.
    #[inline]
    pub fn hold(&self, t_ps: u64) -> u64 {
        if t_ps >= self.from_ps && t_ps < self.until_ps {
            self.until_ps
        } else {
            t_ps
        }
    }

    /// A pause of `dur_ps` from `at_ps` (0: resume at `at_ps`).
    pub fn apply(&mut self, at_ps: u64, dur_ps: u64) {
        self.frames += 1;
        if self.until_ps > self.from_ps && at_ps <= self.until_ps {
            self.until_ps = at_ps + dur_ps;
        } else {
            self.closed_ps += self.until_ps - self.from_ps;
            self.from_ps = at_ps;
            self.until_ps = at_ps + dur_ps;
        }
    }

    /// Time paused up to `now_ps`.
    pub fn paused_ps(&self, now_ps: u64) -> u64 {
        self.closed_ps + self.until_ps.min(now_ps).saturating_sub(self.from_ps)
    }
}

impl Tester {
    /// Takes a PFC frame that left the switch on `port` (first bit at
    /// `time_ns`); false if the frame is not one.
    pub(super) fn pause_frame(&mut self, port: u32, data: &[u8], time_ns: u64) -> bool {
        let Some(p) = pfc_frame::decode(data) else { return false };
        self.obey(port, time_ns, &p);
        true
    }

    fn obey(&mut self, port: u32, time_ns: u64, p: &Pause) {
        let mut moved = false;
        for s in self.sources.iter_mut().filter(|s| s.cfg.port == port) {
            let Some(prio) = s.pause.priority else { continue };
            if p.enable & (1 << (prio & 7)) == 0 {
                continue;
            }
            let rate = s.cfg.line_rate_bps;
            let wire_ps = ((pfc_frame::PFC_FRAME_LEN + FCS + PREAMBLE) as f64 * 8.0 / rate * 1e12).round() as u64;
            s.pause.apply(time_ns * 1000 + wire_ps, quanta_ps(p.quanta[(prio & 7) as usize], rate));
            moved = true;
        }
        if !moved {
            return;
        }
        // the port's sources' next frames moved: schedule them again
        for s in self.sources.iter().filter(|s| s.cfg.port == port) {
            self.queue.set(s.id, s.next_arrival_ns());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_holds_frames_until_it_ends_or_an_xon() {
        let mut s = PauseState { priority: Some(3), ..Default::default() };
        assert_eq!(s.hold(50), 50);
        s.apply(100, 1000);
        assert_eq!((s.hold(99), s.hold(100), s.hold(1099), s.hold(1100)), (99, 1100, 1100, 1100));
        s.apply(600, 1000);
        assert_eq!(s.hold(1500), 1600, "a later XOFF extends from its arrival");
        s.apply(700, 0);
        assert_eq!(s.hold(650), 700, "XON: resume at once");
        assert_eq!(s.paused_ps(10_000), 600);
        s.apply(2000, 100);
        assert_eq!(s.paused_ps(10_000), 700);
        assert_eq!(s.frames, 4);
    }

    use crate::engine::Switch;
    use crate::sim::frame::{udp_template, FrameBuilder};
    use crate::sim::stream::{Rate, Sizes, StreamCfg};
    use crate::tm::TmConfig;
    use serde_json::json;

    /// 16 ports at line rate into port 9 (everything goes there), 1518-byte
    /// frames, priority 0 lossless with PFC; sources obey or not.
    fn incast(obey: bool) -> (Switch, Tester) {
        let mut sw = Switch::from_json(&crate::sim::tests::to_port_9()).unwrap();
        let doc = json!({
            "buffer": {"size_bytes": 1_000_000, "cell_bytes": 256},
            "defaults": {"rate_bps": "100G"},
            "pfc": {"priorities": [0], "ports": "1-16", "xoff_bytes": 32768, "xon_bytes": 16384,
                    "headroom_bytes": 8192}
        });
        let cfg = TmConfig::parse(&doc, &sw.tm.cfg).unwrap();
        sw.configure_tm(cfg).unwrap();
        let mut t = Tester::new(1);
        for port in 1..=16u32 {
            let tpl = udp_template(0x02, 0x0a00_0000_0000 + port as u64, 0x0a00_0001, 0x0a00_0002, 1, 2, 0);
            let id = t
                .add_stream(StreamCfg {
                    name: format!("p{port}"),
                    port,
                    rate: Rate::Percent(100.0),
                    line_rate_bps: 100e9,
                    sizes: Sizes::Fixed(1518),
                    burst: None,
                    start_ns: 0,
                    duration_ns: None,
                    frames: Some(400),
                    builder: FrameBuilder::new(tpl, vec![], true).unwrap(),
                })
                .unwrap();
            t.sources[id as usize].pause.priority = obey.then_some(0);
        }
        t.run(&mut sw, u64::MAX, true);
        (sw, t)
    }

    #[test]
    fn sources_that_obey_pause_lose_nothing_in_a_16_to_1_incast() {
        let (sw, t) = incast(true);
        assert_eq!(sw.stats.dropped_queue, 0);
        for (i, s) in t.sources.iter().enumerate() {
            assert_eq!(s.tx_frames, 400);
            assert_eq!(t.rx_frames(i as u16), 400, "stream {i}");
            assert!(s.pause.frames > 0 && s.pause.paused_ps(u64::MAX) > 0, "stream {i} was paused");
        }
        let pf = sw.tm.pfc.as_ref().unwrap();
        let g = pf.group(1, 0);
        assert!(g.xoff_frames > 0 && g.peak_headroom <= 8192 && g.drops == 0);
        // 6400 frames of 1538 wire bytes leave one 100G port back to back
        let last = t.ports[&9].last_ns;
        assert!((787_000..800_000).contains(&last), "{last}");
    }

    #[test]
    fn sources_that_ignore_pause_make_the_lossless_class_lose() {
        let (sw, t) = incast(false);
        assert!(sw.stats.dropped_queue > 1000, "{}", sw.stats.dropped_queue);
        let pf = sw.tm.pfc.as_ref().unwrap();
        assert!((1..=16).map(|p| pf.group(p, 0).drops).sum::<u64>() == sw.stats.dropped_queue);
        assert!(t.sources.iter().all(|s| s.pause.frames == 0));
    }

    #[test]
    fn a_switch_with_pfc_obeys_a_pause_frame_it_receives() {
        let frame = |port: u32| {
            let mut f = udp_template(0x02, 0x0a00_0000_0000 + port as u64, 1, 2, 1, 2, 0);
            f.resize(100, 0);
            f
        };
        let mut pause = vec![];
        pfc_frame::encode(&mut pause, 0x02, &Pause::one(0, 1000));
        // 1000 quanta at 100G: 5.12 us
        let mut sw = Switch::from_json(&crate::sim::tests::to_port_9()).unwrap();
        let doc = json!({"buffer": {"size_bytes": 100_000}, "defaults": {"rate_bps": "100G"},
                         "pfc": {"priorities": [0], "ports": "1", "xoff_bytes": 10000, "headroom_bytes": 5000}});
        sw.configure_tm(TmConfig::parse(&doc, &sw.tm.cfg).unwrap()).unwrap();
        sw.deliver(9, 0, &pause);
        sw.deliver(1, 10, &frame(1));
        sw.run_until_idle();
        let outs = sw.take_outputs();
        assert_eq!(outs.len(), 1, "the pause frame was taken by the MAC");
        assert_eq!(outs[0].time_ns, 5120);
        // without PFC the frame is the program's, as on BMv2
        let mut sw = Switch::from_json(&crate::sim::tests::to_port_9()).unwrap();
        sw.deliver(9, 0, &pause);
        sw.run_until_idle();
        assert_eq!(sw.take_outputs().len(), 1);
    }
}
