//! Link events: a port's link goes down or up, at once or at a virtual time.
//!
//! While a port is down, frames the switch would transmit on it are dropped
//! after the egress pipeline (its queue drains at once: nothing is on the
//! wire) and frames arriving on it are dropped before ingress; both are
//! counted per port. Selector watch ports follow the same status. Every
//! change is kept as a port-status event (time, port, up) until a driver
//! takes it, so a controller in the same run learns of it, as PI's port
//! status callback tells the P4Runtime server.
//!
//! A scheduled change is one of the switch's own events: arrivals at the
//! same time come first (as for every switch event), then the change, then
//! the egress services due then.

use super::{EngineError, Switch};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// A port's link changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortEvent {
    pub time_ns: u64,
    pub port: u32,
    pub up: bool,
}

/// Frames lost to a down link on one port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkDrops {
    /// Arrived on the port while it was down.
    pub rx_down: u64,
    /// Would have left by the port while it was down.
    pub tx_down: u64,
}

#[derive(Debug, Default)]
pub struct Links {
    /// (time, order, port, up), earliest first.
    scheduled: BinaryHeap<Reverse<(u64, u64, u32, bool)>>,
    seq: u64,
    events: Vec<PortEvent>,
    drops: BTreeMap<u32, LinkDrops>,
}

impl Links {
    pub fn next_at(&self) -> Option<u64> {
        self.scheduled.peek().map(|Reverse((t, ..))| *t)
    }
}

impl Switch {
    /// The port's link goes down or up now: watch ports follow (every port
    /// is up until said otherwise), frames to and from it are dropped while
    /// it is down, and the change (if it is one) becomes a port event.
    pub fn set_port_status(&mut self, port: u32, up: bool) {
        if self.rt.ports.is_up(port) == up {
            return;
        }
        self.rt.ports.set(port, up);
        self.links.events.push(PortEvent { time_ns: self.now, port, up });
        // a port coming up may have packets waiting for a service event
        self.schedule(port);
    }

    /// The port's link goes down or up at virtual time `at_ns` (not before
    /// the switch's current time); changes at the same time apply in the
    /// order they were scheduled.
    pub fn schedule_port_status(&mut self, port: u32, up: bool, at_ns: u64) -> Result<(), EngineError> {
        if at_ns < self.now {
            return Err(EngineError::Invalid(format!(
                "port {port}: a link change at {at_ns} ns is before the switch's time ({} ns)",
                self.now
            )));
        }
        self.links.seq += 1;
        self.links.scheduled.push(Reverse((at_ns, self.links.seq, port, up)));
        Ok(())
    }

    /// When the next scheduled link change is due, if any.
    pub fn next_link_event_at(&self) -> Option<u64> {
        self.links.next_at()
    }

    /// The link changes since the last call, in time order.
    pub fn take_port_events(&mut self) -> Vec<PortEvent> {
        std::mem::take(&mut self.links.events)
    }

    pub fn port_is_up(&self, port: u32) -> bool {
        self.rt.ports.is_up(port)
    }

    /// Frames lost to down links, per port that lost any.
    pub fn link_drops(&self) -> &BTreeMap<u32, LinkDrops> {
        &self.links.drops
    }

    /// Applies the earliest scheduled link change.
    pub(super) fn apply_link_event(&mut self) {
        if let Some(Reverse((t, _, port, up))) = self.links.scheduled.pop() {
            self.now = self.now.max(t);
            self.set_port_status(port, up);
        }
    }

    /// A frame arriving on `port`: false (and counted) if its link is down.
    #[inline]
    pub(super) fn link_takes_rx(&mut self, port: u32) -> bool {
        if self.rt.ports.is_up(port) {
            return true;
        }
        self.links.drops.entry(port).or_default().rx_down += 1;
        false
    }

    /// A frame leaving by `port`: false (and counted) if its link is down.
    #[inline]
    pub(super) fn link_takes_tx(&mut self, port: u32) -> bool {
        if self.rt.ports.is_up(port) {
            return true;
        }
        self.links.drops.entry(port).or_default().tx_down += 1;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tests::MINIMAL;
    use crate::sim::frame::{udp_template, FrameBuilder};
    use crate::sim::stream::{Rate, Sizes, StreamCfg};
    use crate::sim::Tester;
    use crate::value::Val;

    #[test]
    fn a_scheduled_down_drops_frames_to_and_from_the_port_and_counts_them() {
        // MINIMAL sends every packet to port 0
        let mut sw = Switch::from_json(MINIMAL).unwrap();
        sw.schedule_port_status(0, false, 1000).unwrap();
        sw.schedule_port_status(0, true, 3000).unwrap();
        sw.schedule_port_status(5, false, 2000).unwrap();
        for t in [500u64, 1500, 2500, 3500] {
            sw.inject(1, vec![t as u8; 20], t);
        }
        sw.inject(5, vec![9; 20], 2500); // arrives on a down port
        sw.run_until_idle();
        let out: Vec<u64> = sw.take_outputs().iter().map(|o| o.time_ns).collect();
        assert_eq!(out, vec![500, 3500], "frames while port 0 was down are lost");
        assert_eq!(sw.link_drops()[&0], LinkDrops { rx_down: 0, tx_down: 2 });
        assert_eq!(sw.link_drops()[&5], LinkDrops { rx_down: 1, tx_down: 0 });
        let ev = sw.take_port_events();
        let want = [(1000, 0, false), (2000, 5, false), (3000, 0, true)];
        assert_eq!(ev, want.map(|(time_ns, port, up)| PortEvent { time_ns, port, up }).to_vec());
        assert!(sw.take_port_events().is_empty(), "taken once");
        assert!(!sw.port_is_up(5) && sw.port_is_up(0));
        assert_eq!(sw.stats.received, 4, "the frame on the down port never reached ingress");
    }

    #[test]
    fn scheduling_in_the_past_is_refused_and_repeats_are_no_events() {
        let mut sw = Switch::from_json(MINIMAL).unwrap();
        sw.advance(5000);
        assert!(sw.schedule_port_status(1, false, 4999).is_err());
        sw.schedule_port_status(1, false, 5000).unwrap();
        sw.schedule_port_status(1, false, 6000).unwrap();
        assert_eq!(sw.next_link_event_at(), Some(5000));
        sw.advance(7000);
        assert_eq!(sw.take_port_events().len(), 1, "already down: no second event");
        assert_eq!(sw.next_link_event_at(), None);
    }

    /// MINIMAL with table `t` running selector `ap` (identity hash of the
    /// ingress port) over members `fwd(port)`.
    fn selector_prog() -> String {
        MINIMAL.replace(
            r#""pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},"#,
            r#""actions": [{"name": "fwd", "id": 0, "runtime_data": [{"name": "p", "bitwidth": 9}], "primitives": [
      {"op": "assign", "parameters": [{"type": "field", "value": ["standard_metadata", "egress_spec"]},
                                      {"type": "runtime_data", "value": 0}]}]}],
  "pipelines": [{"name": "ingress", "id": 0, "init_table": "t", "conditionals": [],
    "action_profiles": [{"name": "ap", "id": 0, "max_size": 16,
                         "selector": {"algo": "identity", "input": [{"type": "field", "value": ["standard_metadata", "ingress_port"]}]}}],
    "tables": [
      {"name": "t", "id": 0, "key": [], "match_type": "exact", "type": "indirect_ws", "action_profile": "ap",
       "max_size": 4, "action_ids": [0], "actions": ["fwd"], "next_tables": {"fwd": null}}]},"#,
        )
    }

    #[test]
    fn watch_ports_follow_scheduled_events() {
        let mut sw = Switch::from_json(&selector_prog()).unwrap();
        let a = sw.act_prof_create_member("ap", "fwd", &[Val::from(10u64)]).unwrap();
        let b = sw.act_prof_create_member("ap", "fwd", &[Val::from(20u64)]).unwrap();
        let g = sw.act_prof_create_group("ap").unwrap();
        // weights 2 and 1: the identity hash (port << 7) modulo 3 picks both
        sw.act_prof_add_member_to_group("ap", a, g, 2, Some(10)).unwrap();
        sw.act_prof_add_member_to_group("ap", b, g, 1, Some(20)).unwrap();
        sw.table_indirect_add_with_group("t", &[], g, 0).unwrap();
        sw.schedule_port_status(20, false, 1000).unwrap();
        // ingress ports 0..8 at 100..107 ns (before) and 2000..2007 ns (after)
        for (i, p) in (0..8u32).enumerate() {
            sw.inject(p, vec![0; 20], 100 + i as u64);
            sw.inject(p, vec![0; 20], 2000 + i as u64);
        }
        sw.run_until_idle();
        let out = sw.take_outputs();
        let before: Vec<u32> = out.iter().filter(|o| o.time_ns < 1000).map(|o| o.port).collect();
        let after: Vec<u32> = out.iter().filter(|o| o.time_ns >= 1000).map(|o| o.port).collect();
        assert!(before.contains(&20) && before.contains(&10));
        assert_eq!(after, vec![10; 8], "the selector skips member 20 at once: nothing lost");
        assert!(sw.link_drops().is_empty());
    }

    #[test]
    fn the_tester_loses_what_a_down_link_would_carry() {
        let mut sw = Switch::from_json(MINIMAL).unwrap();
        let mut t = Tester::new(1);
        t.add_stream(StreamCfg {
            name: "s".into(),
            port: 1,
            rate: Rate::Fps(1e9 / 100.0), // a frame every 100 ns
            line_rate_bps: 100e9,
            sizes: Sizes::Fixed(100),
            burst: None,
            start_ns: 0,
            duration_ns: Some(10_000),
            frames: None,
            builder: FrameBuilder::new(udp_template(1, 2, 3, 4, 5, 6, 0), vec![], true).unwrap(),
        })
        .unwrap();
        sw.schedule_port_status(0, false, 2_000).unwrap();
        sw.schedule_port_status(0, true, 5_000).unwrap();
        t.run(&mut sw, 20_000, true);
        let tx = t.sources[0].tx_frames;
        assert_eq!(tx, 100);
        assert_eq!(sw.link_drops()[&0].tx_down, 30, "3 us of frames every 100 ns");
        assert_eq!(t.rx_frames(0), tx - 30);
        let ev = sw.take_port_events();
        assert_eq!(ev.iter().map(|e| e.time_ns).collect::<Vec<_>>(), vec![2_000, 5_000]);
    }
}
