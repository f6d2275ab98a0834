//! Per-packet traces of the real-time loop (the switch's --log-console
//! lines): what became of each packet, recorded while the loop runs the
//! switch one event at a time, and handed to Python in batches.
//!
//! Each event (an arrival's ingress, a port's egress service, a
//! recirculation) is one `Switch` step; what the step did — log_msg lines,
//! digests, drops, packets that left — belongs to the packet the step ran
//! (`Switch::packet_id`). A packet that went nowhere (no copy left, none was
//! dropped or queued) is said so once its arrival's events at that instant
//! are done, as the in-process path says it after running the packet.
//! Traced, each arrival runs with everything due at its instant (its egress
//! on a free port) before the next frame of the batch enters, as the
//! in-process path runs traced packets one at a time; untraced, a batch's
//! ingresses come first.

use super::rt::Event;
use crate::engine::{Stats, Switch};
use std::collections::HashMap;

/// What the loop records (set from Python with `rt_trace`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceCfg {
    /// One record per packet event (arrival, drops, departures...).
    pub packets: bool,
    /// log_msg lines and run-time warnings (without `packets`, under id 0).
    pub log: bool,
    /// Bytes of each arriving and departing frame kept (--dump-packet-data).
    pub dump: usize,
}

impl TraceCfg {
    pub fn any(&self) -> bool {
        self.packets || self.log
    }
}

/// Where the switch dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropAt {
    /// End of ingress: egress_spec is the drop port (or too many loops).
    Ingress,
    /// End of egress: egress_spec is the drop port.
    Egress,
    /// The traffic manager: queue or buffer full, bad priority.
    Queue,
}

impl DropAt {
    pub fn name(self) -> &'static str {
        match self {
            DropAt::Ingress => "ingress",
            DropAt::Egress => "egress",
            DropAt::Queue => "queue",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// Arrived on `port`: its length and first `dump` bytes.
    Received { port: u32, len: usize, data: Vec<u8> },
    Log(String),
    Digest { learn_id: u32 },
    Dropped { at: DropAt, n: u64 },
    /// Nothing left the switch, nothing dropped or queued (no copy, an
    /// empty or unknown multicast group).
    NoOutput,
    /// Copy number `copy` of the packet left on `port` (the CPU port too).
    Sent { copy: u32, port: u32, len: usize, data: Vec<u8> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEv {
    /// The switch's packet id (0: not tied to a packet).
    pub id: u64,
    pub time_ns: u64,
    pub kind: TraceKind,
}

/// Copies numbered per packet for this many recent packets.
const COPY_IDS: usize = 4096;

/// The loop's recorder: runs the switch step by step and writes the records.
#[derive(Default)]
pub struct Tracer {
    pub cfg: TraceCfg,
    pub out: Vec<TraceEv>,
    copies: HashMap<u64, u32>,
    newest: u64,
}

/// What one step did, for the "went nowhere" verdict.
struct Step {
    id: u64,
    went: bool,
}

impl Tracer {
    pub fn new(cfg: TraceCfg) -> Tracer {
        Tracer { cfg, ..Tracer::default() }
    }

    fn push(&mut self, id: u64, time_ns: u64, kind: TraceKind) {
        self.out.push(TraceEv { id, time_ns, kind });
    }

    /// log_msg lines not tied to a packet (written before tracing began, or
    /// with `packets` off).
    pub fn loose_log(&mut self, sw: &mut Switch) {
        let now = sw.now_ns();
        for l in sw.take_log() {
            if self.cfg.log {
                self.push(0, now, TraceKind::Log(l));
            }
        }
    }

    /// Runs `f` (one step of the switch) and records what it did; digests
    /// also become loop events.
    fn observe(&mut self, sw: &mut Switch, events: &mut Vec<Event>, f: impl FnOnce(&mut Switch)) -> Step {
        let before: Stats = sw.stats;
        let n_out = sw.outputs().len();
        let queued = sw.tm.total();
        f(sw);
        let id = sw.packet_id();
        let now = sw.now_ns();
        for l in sw.take_log() {
            if self.cfg.log {
                self.push(id, now, TraceKind::Log(l));
            }
        }
        for d in sw.take_digests() {
            self.push(id, now, TraceKind::Digest { learn_id: d.learn_id });
            events.push(Event::Digest { learn_id: d.learn_id, values: d.values, time_ns: d.time_ns });
        }
        let after = sw.stats;
        let drops = [
            (DropAt::Ingress, after.dropped_ingress - before.dropped_ingress),
            (DropAt::Egress, after.dropped_egress - before.dropped_egress),
            (DropAt::Queue, after.dropped_queue - before.dropped_queue),
        ];
        let mut went = sw.tm.total() > queued;
        for (at, n) in drops {
            if n > 0 {
                went = true;
                self.push(id, now, TraceKind::Dropped { at, n });
            }
        }
        let dump = self.cfg.dump;
        let sent: Vec<(u32, usize, Vec<u8>, u64)> = sw.outputs()[n_out..]
            .iter()
            .map(|o| (o.port, o.data.len(), o.data[..o.data.len().min(dump)].to_vec(), o.time_ns))
            .collect();
        for (port, len, data, t) in sent {
            went = true;
            let copy = self.next_copy(id);
            self.push(id, t, TraceKind::Sent { copy, port, len, data });
        }
        Step { id, went }
    }

    fn next_copy(&mut self, id: u64) -> u32 {
        if id > self.newest {
            self.newest = id;
            if self.copies.len() >= COPY_IDS {
                let keep = self.newest.saturating_sub(COPY_IDS as u64 / 2);
                self.copies.retain(|k, _| *k >= keep);
            }
        }
        let c = self.copies.entry(id).or_insert(0);
        *c += 1;
        *c - 1
    }

    /// Processes the switch's events up to `now`, one step at a time.
    /// Returns whether packet `id` did anything in them.
    pub fn advance(&mut self, sw: &mut Switch, now: u64, events: &mut Vec<Event>, id: u64) -> bool {
        let mut went = false;
        while let Some(t) = sw.next_event_at() {
            if t > now {
                break;
            }
            let s = self.observe(sw, events, |sw| {
                sw.step_once();
            });
            went |= s.id == id && s.went;
        }
        sw.advance(now); // nothing left: moves the clock
        went
    }

    /// A frame arriving on `port` at `now`: its ingress, then every event
    /// due by `now` (its egress where the port is free), recorded.
    pub fn deliver(&mut self, sw: &mut Switch, port: u32, now: u64, frame: &[u8], events: &mut Vec<Event>) {
        self.advance(sw, now, events, 0);
        let keep = frame[..frame.len().min(self.cfg.dump)].to_vec();
        let mark = self.out.len();
        let s = self.observe(sw, events, |sw| sw.deliver(port, now, frame));
        let id = s.id;
        // the arrival's record goes before what its ingress did
        self.out.insert(mark, TraceEv { id, time_ns: now, kind: TraceKind::Received { port, len: frame.len(), data: keep } });
        let went = self.advance(sw, now, events, id) | s.went;
        if !went {
            self.push(id, now, TraceKind::NoOutput);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ethernet in, out on the port in the first byte of the destination
    /// (511: drop), with a log_msg in ingress.
    const PROGRAM: &str = r#"{
      "header_types": [
        {"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
          ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false],
          ["mcast_grp", 16, false], ["egress_rid", 16, false], ["priority", 3, false], ["_padding", 5, false]]},
        {"name": "ethernet_t", "id": 1, "fields": [["dst", 48, false], ["src", 48, false], ["type", 16, false]]}],
      "headers": [
        {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
        {"name": "ethernet", "id": 1, "header_type": "ethernet_t", "metadata": false}],
      "header_stacks": [], "errors": [["NoError", 0], ["PacketTooShort", 1]],
      "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
        {"name": "start", "id": 0, "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}],
         "transition_key": [], "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}]}],
      "deparsers": [{"name": "deparser", "id": 0, "order": ["ethernet"]}],
      "actions": [{"name": "go", "id": 0, "runtime_data": [], "primitives": [
        {"op": "assign", "parameters": [{"type": "field", "value": ["standard_metadata", "egress_spec"]},
          {"type": "expression", "value": {"op": ">>", "left": {"type": "field", "value": ["ethernet", "dst"]},
            "right": {"type": "hexstr", "value": "0x28"}}}]},
        {"op": "log_msg", "parameters": [{"type": "string", "value": "to {}"},
          {"type": "parameters_vector", "value": [{"type": "field", "value": ["standard_metadata", "egress_spec"]}]}]}]}],
      "pipelines": [
        {"name": "ingress", "id": 0, "init_table": "t", "tables": [
          {"name": "t", "id": 0, "key": [], "match_type": "exact", "type": "simple", "max_size": 1,
           "with_counters": false, "support_timeout": false, "direct_meters": null, "action_ids": [0],
           "actions": ["go"], "base_default_next": null, "next_tables": {"go": null},
           "default_entry": {"action_id": 0, "action_const": true, "action_data": [], "action_entry_const": true}}],
         "conditionals": []},
        {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
    }"#;

    /// A frame for `port` (the program sends to the destination's first byte).
    fn frame(port: u8) -> Vec<u8> {
        let mut f = vec![0u8; 60];
        f[0] = port;
        f
    }

    fn kinds(t: &Tracer, id: u64) -> Vec<TraceKind> {
        t.out.iter().filter(|e| e.id == id).map(|e| e.kind.clone()).collect()
    }

    #[test]
    fn a_forwarded_packet_is_received_logged_and_sent() {
        let mut sw = Switch::from_json(PROGRAM).unwrap();
        let mut t = Tracer::new(TraceCfg { packets: true, log: true, dump: 4 });
        let mut ev = vec![];
        let f = frame(4);
        t.deliver(&mut sw, 1, 1000, &f, &mut ev);
        let k = kinds(&t, 1);
        assert_eq!(k[0], TraceKind::Received { port: 1, len: 60, data: f[..4].to_vec() });
        assert!(matches!(&k[1], TraceKind::Log(l) if l.starts_with("to ")), "{k:?}");
        assert_eq!(k[2], TraceKind::Sent { copy: 0, port: 4, len: 60, data: f[..4].to_vec() });
        assert_eq!(k.len(), 3);
        assert_eq!(sw.take_outputs().len(), 1, "outputs stay for the loop to send");
    }

    #[test]
    fn a_dropped_packet_says_where() {
        let mut sw = Switch::from_json(PROGRAM).unwrap();
        sw.set_drop_port(0);
        let mut t = Tracer::new(TraceCfg { packets: true, log: false, dump: 0 });
        t.deliver(&mut sw, 1, 10, &frame(0), &mut vec![]);
        let k = kinds(&t, 1);
        assert_eq!(k, vec![TraceKind::Received { port: 1, len: 60, data: vec![] }, TraceKind::Dropped { at: DropAt::Ingress, n: 1 }]);
    }

    #[test]
    fn a_packet_to_an_unknown_multicast_group_went_nowhere() {
        // the action sets mcast_grp (group 9: none) instead of egress_spec
        let json = PROGRAM.replacen(r#"["standard_metadata", "egress_spec"]}"#, r#"["standard_metadata", "mcast_grp"]}"#, 1);
        assert_ne!(json, PROGRAM);
        let mut sw = Switch::from_json(&json).unwrap();
        let mut t = Tracer::new(TraceCfg { packets: true, log: false, dump: 0 });
        t.deliver(&mut sw, 1, 10, &frame(9), &mut vec![]);
        assert_eq!(kinds(&t, 1), vec![TraceKind::Received { port: 1, len: 60, data: vec![] }, TraceKind::NoOutput]);
        // a packet that only waits in a queue is not said to have gone nowhere
        let mut sw = Switch::from_json(PROGRAM).unwrap();
        sw.tm.set_port_rate(2, Some(8_000_000));
        t.deliver(&mut sw, 1, 10, &frame(2), &mut vec![]);
        t.deliver(&mut sw, 1, 11, &frame(2), &mut vec![]);
        assert!(!kinds(&t, 2).contains(&TraceKind::NoOutput));
    }

    #[test]
    fn a_digest_is_traced_and_still_an_event() {
        let json = PROGRAM
            .replacen(r#""header_stacks": [],"#, r#""header_stacks": [], "learn_lists": [{"id": 1, "name": "learn_t",
                "elements": [{"type": "field", "value": ["ethernet", "src"]}]}],"#, 1)
            .replacen(r#"{"op": "log_msg""#, r#"{"op": "generate_digest", "parameters": [{"type": "hexstr", "value": "0x1"},
                {"type": "hexstr", "value": "0x1"}]}, {"op": "log_msg""#, 1);
        let mut sw = Switch::from_json(&json).unwrap();
        let mut t = Tracer::new(TraceCfg { packets: true, log: false, dump: 0 });
        let mut ev = vec![];
        t.deliver(&mut sw, 1, 10, &frame(2), &mut ev);
        assert!(kinds(&t, 1).contains(&TraceKind::Digest { learn_id: 1 }), "{:?}", kinds(&t, 1));
        assert!(matches!(&ev[..], [Event::Digest { learn_id: 1, values, .. }] if values.len() == 1), "{ev:?}");
    }

    #[test]
    fn a_queued_packet_is_sent_later_under_its_own_id() {
        let mut sw = Switch::from_json(PROGRAM).unwrap();
        sw.tm.set_port_rate(2, Some(8_000_000)); // 84-byte wire frame: 84 us
        let mut t = Tracer::new(TraceCfg { packets: true, log: false, dump: 0 });
        let mut ev = vec![];
        t.deliver(&mut sw, 1, 1000, &frame(2), &mut ev);
        t.deliver(&mut sw, 1, 1001, &frame(2), &mut ev);
        assert!(kinds(&t, 2).iter().all(|k| !matches!(k, TraceKind::Sent { .. } | TraceKind::NoOutput)),
                "the second waits for the wire: {:?}", kinds(&t, 2));
        t.advance(&mut sw, 200_000, &mut ev, 0);
        let sent2: Vec<_> = t.out.iter().filter(|e| e.id == 2 && matches!(e.kind, TraceKind::Sent { .. })).collect();
        assert_eq!(sent2.len(), 1);
        assert!(sent2[0].time_ns >= 1000 + 84_000, "left when the wire was free: {}", sent2[0].time_ns);
    }
}
