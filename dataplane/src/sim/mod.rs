//! Virtual time: a tester attached to the switch's ports.
//!
//! Sources ([`stream`]) generate tagged frames ([`frame`]) at exact times;
//! sinks ([`sink`]) read every frame that leaves the switch. [`Tester::run`]
//! is the discrete-event loop: it repeatedly takes the earliest of the next
//! frame arrival and the switch's next event (arrivals first on a tie, as
//! the switch itself orders them), so time advances event by event and the
//! results depend only on the inputs and the seed — never on the machine.
//! The switch is the same object the real-time driver runs.

pub mod capture;
pub mod fabric;
pub mod frame;
pub mod gap;
pub mod pause;
pub mod queue;
pub mod sink;
pub mod stream;
pub mod wire;

use crate::engine::{Output, Switch};
use capture::Captures;
use frame::{read_tag, FCS};
use gap::GapMeter;
use queue::SourceQueue;
use sink::{PortRx, RxStats, DEFAULT_EDGES_NS};
use std::collections::BTreeMap;
use stream::{Source, StreamCfg};

/// Per-frame receive records (optional): columns.
#[derive(Clone, Debug, Default)]
pub struct RxRecords {
    pub stream: Vec<u16>,
    pub seq: Vec<u32>,
    pub port: Vec<u16>,
    pub size: Vec<u32>,
    pub tx_ns: Vec<u64>,
    pub rx_ns: Vec<u64>,
}

pub struct Tester {
    pub sources: Vec<Source>,
    /// Receive statistics per (stream, egress port).
    pub rx: BTreeMap<(u16, u32), RxStats>,
    pub ports: BTreeMap<u32, PortRx>,
    pub edges: Vec<u64>,
    pub seed: u64,
    pub record: Option<RxRecords>,
    /// A running hash of every frame that left the switch (port, time,
    /// bytes): two runs agree on it only if they agree on everything.
    pub digest: u64,
    /// Frames kept from the captured ports (none unless asked for).
    pub captures: Captures,
    /// The smallest gap between frames per egress port.
    pub gaps: BTreeMap<u32, GapMeter>,
    /// Exact first-bit times (ps) of the outputs being sunk.
    tx_ps: Vec<(usize, u64)>,
    /// The sources' next frames in time order.
    queue: SourceQueue,
    outs: Vec<Output>,
    /// Events processed by the last runs (arrivals + switch events).
    pub events: u64,
}

impl Default for Tester {
    fn default() -> Self {
        Tester::new(0)
    }
}

impl Tester {
    pub fn new(seed: u64) -> Tester {
        Tester {
            sources: vec![],
            rx: BTreeMap::new(),
            ports: BTreeMap::new(),
            edges: DEFAULT_EDGES_NS.to_vec(),
            seed,
            record: None,
            digest: 0xcbf2_9ce4_8422_2325,
            captures: Captures::default(),
            gaps: BTreeMap::new(),
            tx_ps: vec![],
            queue: SourceQueue::default(),
            outs: vec![],
            events: 0,
        }
    }

    /// Adds a stream; returns its id (the tag's stream number).
    pub fn add_stream(&mut self, cfg: StreamCfg) -> Result<u16, String> {
        if self.sources.len() >= u16::MAX as usize {
            return Err("too many streams".into());
        }
        if cfg.sizes.min() < cfg.builder.min_size() as u32 {
            return Err(format!(
                "stream '{}': frames of {} bytes cannot hold the {}-byte header template and the tag (at least {} bytes)",
                cfg.name,
                cfg.sizes.min(),
                cfg.builder.min_size() - frame::TAG_LEN - FCS,
                cfg.builder.min_size()
            ));
        }
        let id = self.sources.len() as u16;
        let src = Source::new(cfg, id, self.seed);
        self.queue.set(id, src.next_arrival_ns());
        self.sources.push(src);
        Ok(id)
    }

    pub fn clear_streams(&mut self) {
        self.sources.clear();
        self.queue.clear();
        self.reset_stats();
    }

    pub fn reset_stats(&mut self) {
        self.rx.clear();
        self.ports.clear();
        self.digest = 0xcbf2_9ce4_8422_2325;
        self.events = 0;
        self.captures.reset();
        self.gaps.clear();
        if let Some(r) = self.record.as_mut() {
            *r = RxRecords::default();
        }
    }

    /// Runs the switch and the sources until `until_ns` (sources stop
    /// there; with `drain`, the switch then runs until idle).
    pub fn run(&mut self, sw: &mut Switch, until_ns: u64, drain: bool) {
        let mut buf_out = std::mem::take(&mut self.outs);
        loop {
            let ts = self.queue.first().map(|(t, _)| t);
            let next = sw.next_event();
            let source_first = match (ts, next) {
                (Some(a), Some(e)) => a <= e.at,
                (Some(_), None) => true,
                (None, _) => false,
            };
            let t = if source_first { ts } else { next.map(|e| e.at) };
            let Some(t) = t else { break };
            if t > until_ns {
                break;
            }
            self.events += 1;
            match next {
                Some(e) if !source_first => sw.run_event(e),
                _ => {
                    let Some((_, id)) = self.next_source() else { break };
                    let port = self.sources[id as usize].cfg.port;
                    self.send_next(sw, port);
                }
            }
            if !sw.outputs().is_empty() {
                sw.drain_outputs_timed(&mut buf_out, &mut self.tx_ps);
                self.sink(sw, &mut buf_out);
            }
        }
        if drain {
            while sw.step_once() {
                self.events += 1;
                if !sw.outputs().is_empty() {
                    sw.drain_outputs_timed(&mut buf_out, &mut self.tx_ps);
                    self.sink(sw, &mut buf_out);
                }
            }
        } else {
            sw.advance(until_ns);
            sw.drain_outputs_timed(&mut buf_out, &mut self.tx_ps);
            self.sink(sw, &mut buf_out);
        }
        self.outs = buf_out;
    }

    /// The next source frame due: (arrival time, stream id).
    #[inline]
    pub(crate) fn next_source(&self) -> Option<(u64, u16)> {
        self.queue.first()
    }

    /// Delivers the frame `next_source` names to `sw` on `port` (the
    /// stream's own port, or where a fabric attached it) and schedules the
    /// stream's next frame. The caller just saw that no event of `sw` comes
    /// before the frame (`Switch::next_event`; arrivals first on a tie).
    #[inline]
    pub(crate) fn send_next(&mut self, sw: &mut Switch, port: u32) {
        let Some((t, id)) = self.queue.first() else { return };
        let src = &mut self.sources[id as usize];
        let (seq, shape, tx_ns) = src.take_shape();
        let tag = frame::Tag { stream: id, seq: seq as u32, tx_ns };
        let src = &*src;
        sw.deliver_frame_now(port, t, !src.wire.bad_fcs, |buf| src.write_frame(buf, shape, seq, tag));
        self.queue.set(id, src.next_arrival_ns());
    }

    fn sink(&mut self, sw: &mut Switch, outs: &mut Vec<Output>) {
        let mut exact = std::mem::take(&mut self.tx_ps);
        let mut timed = exact.iter().copied().peekable();
        for (i, o) in outs.drain(..).enumerate() {
            self.receive(o.port, &o.data, o.time_ns);
            if let Some((_, ps)) = timed.next_if(|(j, _)| *j == i) {
                if let Some(rate) = sw.tm.cfg.port(o.port).rate_bps {
                    self.gaps.entry(o.port).or_default().frame(ps, o.data.len(), rate);
                }
            }
            sw.recycle(o.data);
        }
        exact.clear();
        self.tx_ps = exact;
    }

    /// A frame leaving the switch on `port` (first bit at `time_ns`).
    pub fn receive(&mut self, port: u32, data: &[u8], time_ns: u64) {
        self.digest = mix(self.digest, port as u64);
        self.digest = mix(self.digest, time_ns);
        self.digest = hash_bytes(self.digest, data);
        self.captures.offer(port, time_ns, data);
        if self.pause_frame(port, data, time_ns) {
            return;
        }
        let size = (data.len() + FCS) as u64;
        let p = self.ports.entry(port).or_default();
        p.frames += 1;
        p.bytes += size;
        p.first_ns.get_or_insert(time_ns);
        p.last_ns = time_ns;
        let Some(tag) = read_tag(data) else {
            p.untagged += 1;
            return;
        };
        if tag.stream as usize >= self.sources.len() {
            p.untagged += 1;
            return;
        }
        let nb = self.edges.len();
        let edges = &self.edges;
        self.rx.entry((tag.stream, port)).or_insert_with(|| RxStats::new(nb)).record(&tag, size, time_ns, edges);
        if let Some(r) = self.record.as_mut() {
            r.stream.push(tag.stream);
            r.seq.push(tag.seq);
            r.port.push(port as u16);
            r.size.push(size as u32);
            r.tx_ns.push(tag.tx_ns);
            r.rx_ns.push(time_ns);
        }
    }

    /// Frames received from a stream on every port.
    pub fn rx_frames(&self, stream: u16) -> u64 {
        self.rx.range((stream, 0)..=(stream, u32::MAX)).map(|(_, s)| s.frames).sum()
    }
}

#[inline]
pub(crate) fn mix(h: u64, v: u64) -> u64 {
    let x = (h ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^ (x >> 29)
}

pub(crate) fn hash_bytes(mut h: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        h = mix(h, u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
    }
    let mut last = [0u8; 8];
    let r = chunks.remainder();
    last[..r.len()].copy_from_slice(r);
    mix(h, u64::from_le_bytes(last) ^ ((data.len() as u64) << 56))
}

#[cfg(test)]
mod mac_tests;
#[cfg(test)]
mod tests;
