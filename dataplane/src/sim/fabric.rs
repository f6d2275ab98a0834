//! Several switches in one virtual-time run: a fabric.
//!
//! Each switch is a whole [`Switch`] (its own program, tables and traffic
//! manager). Links join two (switch, port) ends, full duplex, each with a
//! propagation delay; a link's line rate is its ends' port rate in the
//! traffic manager, which already spaces the frames a port sends. A frame
//! whose first bit leaves a linked port at `t` is complete at the peer
//! port (store and forward, as the tester's sources deliver) at
//!
//! ```text
//! t + (frame bytes + FCS + preamble and start delimiter) * 8 / rate + delay
//! ```
//!
//! in exact picoseconds, rounded up to the nanosecond. The tester's sources
//! and sinks (one [`Tester`]) attach to the other ports, the *edges*: a
//! stream enters the fabric on an edge, and every frame that leaves an
//! unlinked port reaches the sinks. The tester numbers the edges (its
//! streams' and sinks' ports are edge ids; [`Fabric::edge_ports`] maps them back).
//!
//! [`Fabric::run`] is one discrete-event loop over all of it: it repeatedly
//! takes the earliest of the next link arrival, the next source frame and
//! every switch's next event; on a tie, link arrivals first (in the order
//! they were sent), then sources, then the switches by index — arrivals
//! before a switch's own events, as one switch orders them. Nothing else
//! decides the order, so the results depend only on the inputs and seeds.
//! Each switch keeps its own ground truth (its traffic manager's trace and
//! counters), read from it as for a switch alone.

use super::frame::FCS;
use super::stream::StreamCfg;
use super::{hash_bytes, mix, Tester};
use crate::engine::{NextEvent, Output, Switch};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Preamble and start-of-frame delimiter: on the wire before the frame.
pub const PREAMBLE: usize = 8;
/// Ports a link or a stream may use (the tester's records keep 16 bits).
pub const MAX_PORT: u32 = u16::MAX as u32;
/// Marks a link's frames in the digest (apart from the edges' ids).
const LINK_MARK: u64 = 1 << 40;

/// One direction of a link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    pub from: (usize, u32),
    pub to: (usize, u32),
    pub delay_ns: u64,
    /// Frames and bytes (FCS included) sent over it.
    pub frames: u64,
    pub bytes: u64,
}

/// What a switch port is attached to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Attach {
    Nothing,
    Edge(u32),
    Link(u32),
}

/// A frame on a link, due at the peer at `at`.
struct InFlight {
    at: u64,
    seq: u64,
    link: u32,
    data: Vec<u8>,
}

impl InFlight {
    fn key(&self) -> (u64, u64) {
        (self.at, self.seq)
    }
}

impl PartialEq for InFlight {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for InFlight {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key().cmp(&o.key())
    }
}

/// What the loop does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Wire,
    Source,
    Switch(usize),
}

/// When a frame of `len` bytes (no FCS) whose first bit left at
/// `first_bit_ns` is complete at the far end of a link.
pub fn arrival_ns(first_bit_ns: u64, len: usize, rate_bps: Option<u64>, delay_ns: u64) -> u64 {
    let wire_ps = match rate_bps {
        Some(r) if r > 0 => {
            let bits = (len + FCS + PREAMBLE) as u128 * 8;
            ((bits * 1_000_000_000_000 + r as u128 / 2) / r as u128) as u64
        }
        _ => 0,
    };
    first_bit_ns.saturating_mul(1000).saturating_add(wire_ps).saturating_add(delay_ns.saturating_mul(1000)).div_ceil(1000)
}

/// The nanosecond a frame leaves on its link: the one its switch
/// dequeued it in, as the switch's trace records the departure (the first
/// bit's exact time `ps`, rounded up; `time_ns` for an untimed output such
/// as a pause frame). The egress starts a frame at its exact picosecond,
/// up to 999 ps before that nanosecond; counting the link from the
/// nanosecond below would put a frame at the peer before the switch that
/// sent it records it gone (a tap beside the link sees the queue shrink a
/// nanosecond early).
pub fn departure_ns(time_ns: u64, ps: Option<u64>) -> u64 {
    ps.map_or(time_ns, |ps| ps.div_ceil(1000))
}

pub struct Fabric {
    /// Sources and sinks; its port numbers are edge ids.
    pub tester: Tester,
    /// Edge id -> (switch, port).
    pub edge_ports: Vec<(usize, u32)>,
    /// Both directions of every link: link k is 2k (a to b) and 2k + 1.
    pub links: Vec<Link>,
    ports: Vec<Vec<Attach>>,
    wire: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    outs: Vec<Output>,
    /// The exact first-bit times (ps) of `outs`, by index (the egress's).
    tx_ps: Vec<(usize, u64)>,
    /// Each switch's next event while `run` goes (a step changes
    /// one switch only: the one it delivered to or stepped).
    due: Vec<Option<NextEvent>>,
}

impl Fabric {
    /// A fabric of `switches` switches (given to `run`, in this order).
    pub fn new(switches: usize, seed: u64) -> Fabric {
        Fabric {
            tester: Tester::new(seed),
            edge_ports: vec![],
            links: vec![],
            ports: vec![vec![]; switches],
            wire: BinaryHeap::new(),
            seq: 0,
            outs: vec![],
            tx_ps: vec![],
            due: vec![],
        }
    }

    pub fn switches(&self) -> usize {
        self.ports.len()
    }

    fn check_end(&self, (sw, port): (usize, u32)) -> Result<(), String> {
        if sw >= self.ports.len() {
            return Err(format!("switch {sw}: the fabric has switches 0..{}", self.ports.len().saturating_sub(1)));
        }
        if port > MAX_PORT {
            return Err(format!("port {port}: ports are 0..{MAX_PORT}"));
        }
        Ok(())
    }

    fn attach(&self, sw: usize, port: u32) -> Attach {
        self.ports[sw].get(port as usize).copied().unwrap_or(Attach::Nothing)
    }

    fn set_attach(&mut self, sw: usize, port: u32, a: Attach) {
        let v = &mut self.ports[sw];
        if v.len() <= port as usize {
            v.resize(port as usize + 1, Attach::Nothing);
        }
        v[port as usize] = a;
    }

    /// The edge id of an unlinked port (numbered when first used).
    fn edge_of(&mut self, sw: usize, port: u32) -> u32 {
        match self.attach(sw, port) {
            Attach::Edge(e) => e,
            _ => {
                let e = self.edge_ports.len() as u32;
                self.edge_ports.push((sw, port));
                self.set_attach(sw, port, Attach::Edge(e));
                e
            }
        }
    }

    /// The edge id of `(switch, port)` for a stream or a capture; refused
    /// on a linked port.
    pub fn edge(&mut self, end: (usize, u32)) -> Result<u32, String> {
        self.check_end(end)?;
        if let Attach::Link(_) = self.attach(end.0, end.1) {
            return Err(format!("switch {} port {} is linked: the tester attaches to unlinked ports", end.0, end.1));
        }
        Ok(self.edge_of(end.0, end.1))
    }

    /// The edge id of `(switch, port)` if it has one.
    pub fn edge_id(&self, end: (usize, u32)) -> Option<u32> {
        if end.0 >= self.ports.len() {
            return None;
        }
        match self.attach(end.0, end.1) {
            Attach::Edge(e) => Some(e),
            _ => None,
        }
    }

    /// Joins `a` and `b` (switch, port) with a full-duplex link of
    /// `delay_ns` propagation delay. With `rate_bps`, both ends' ports run
    /// at that line rate; without, each end's port must have one already.
    /// A port carries one link and no tester stream.
    pub fn link(&mut self, sws: &mut [&mut Switch], a: (usize, u32), b: (usize, u32), rate_bps: Option<u64>, delay_ns: u64) -> Result<(), String> {
        self.check_switches(sws)?;
        self.check_end(a)?;
        self.check_end(b)?;
        if a == b {
            return Err(format!("switch {} port {}: a link joins two different ports", a.0, a.1));
        }
        for (sw, port) in [a, b] {
            match self.attach(sw, port) {
                Attach::Link(_) => return Err(format!("switch {sw} port {port} is linked already")),
                Attach::Edge(e) if self.tester.sources.iter().any(|s| s.cfg.port == e) => {
                    return Err(format!("switch {sw} port {port} has a tester stream: link it before adding streams"))
                }
                _ => {}
            }
        }
        match rate_bps {
            Some(0) => return Err("a link's rate must be positive".into()),
            Some(r) => {
                sws[a.0].tm.set_port_rate(a.1, Some(r));
                sws[b.0].tm.set_port_rate(b.1, Some(r));
            }
            None => {
                for (sw, port) in [a, b] {
                    if sws[sw].tm.cfg.port(port).rate_bps.is_none() {
                        return Err(format!("switch {sw} port {port} has no line rate: give the link's rate"));
                    }
                }
            }
        }
        let k = self.links.len() as u32;
        for (from, to, id) in [(a, b, k), (b, a, k + 1)] {
            self.links.push(Link { from, to, delay_ns, frames: 0, bytes: 0 });
            self.set_attach(from.0, from.1, Attach::Link(id));
        }
        Ok(())
    }

    /// Adds a stream entering the fabric at `(switch, port)` (an unlinked
    /// port); returns its id. `cfg.port` is replaced by the edge's id.
    pub fn add_stream(&mut self, end: (usize, u32), mut cfg: StreamCfg) -> Result<u16, String> {
        cfg.port = self.edge(end)?;
        self.tester.add_stream(cfg)
    }

    fn check_switches(&self, sws: &[&mut Switch]) -> Result<(), String> {
        if sws.len() != self.ports.len() {
            return Err(format!("the fabric has {} switches, not {}", self.ports.len(), sws.len()));
        }
        Ok(())
    }

    /// The fabric's time: the furthest any switch's clock has gone.
    pub fn now_ns(sws: &[&mut Switch]) -> u64 {
        sws.iter().map(|s| s.now_ns()).max().unwrap_or(0)
    }

    /// Runs the switches, links and sources until `until_ns` (sources stop
    /// there; with `drain`, the switches and links then run until idle).
    pub fn run(&mut self, sws: &mut [&mut Switch], until_ns: u64, drain: bool) -> Result<(), String> {
        self.check_switches(sws)?;
        let mut outs = std::mem::take(&mut self.outs);
        // the switches may have changed since the last run (tables, rates)
        self.due = sws.iter().map(|s| s.next_event()).collect();
        while let Some((t, what)) = self.next(sws, true) {
            if t > until_ns {
                break;
            }
            self.step(sws, what, &mut outs);
        }
        if drain {
            while let Some((_, what)) = self.next(sws, false) {
                self.step(sws, what, &mut outs);
            }
        } else {
            // nothing is due by `until_ns` any more: this only moves the clocks
            for sw in sws.iter_mut() {
                sw.advance(until_ns);
                if !sw.outputs().is_empty() {
                    sw.drain_outputs(&mut outs);
                }
            }
            debug_assert!(outs.is_empty());
            outs.clear();
        }
        self.outs = outs;
        Ok(())
    }

    /// The earliest pending event (ties: link arrivals, sources, switches
    /// by index).
    fn next(&self, sws: &[&mut Switch], sources: bool) -> Option<(u64, Next)> {
        debug_assert!(sws.iter().zip(&self.due).all(|(s, d)| s.next_event() == *d));
        let mut best = self.wire.peek().map(|Reverse(f)| (f.at, Next::Wire));
        let mut consider = |t: u64, what: Next| {
            if best.map_or(true, |(b, _)| t < b) {
                best = Some((t, what));
            }
        };
        if sources {
            if let Some((t, _)) = self.tester.next_source() {
                consider(t, Next::Source);
            }
        }
        for (i, due) in self.due.iter().enumerate() {
            if let Some(e) = *due {
                consider(e.at, Next::Switch(i));
            }
        }
        best
    }

    fn step(&mut self, sws: &mut [&mut Switch], what: Next, outs: &mut Vec<Output>) {
        self.tester.events += 1;
        let i = match what {
            Next::Wire => {
                let Some(Reverse(f)) = self.wire.pop() else { return };
                let link = &self.links[f.link as usize];
                let ((j, port), from) = (link.to, link.from.0);
                sws[j].deliver(port, f.at, &f.data);
                sws[from].recycle(f.data);
                j
            }
            Next::Source => {
                let Some((_, id)) = self.tester.next_source() else { return };
                let edge = self.tester.sources[id as usize].cfg.port;
                let (j, port) = self.edge_ports[edge as usize];
                // a source comes before every switch's event at its time
                self.tester.send_next(sws[j], port);
                j
            }
            Next::Switch(j) => {
                if let Some(e) = self.due[j] {
                    sws[j].run_event(e);
                }
                j
            }
        };
        if !sws[i].outputs().is_empty() {
            sws[i].drain_outputs_timed(outs, &mut self.tx_ps);
            self.dispatch(i, sws[i], outs);
        }
        self.due[i] = sws[i].next_event();
    }

    /// Frames that left switch `i`: onto their link, or to the sinks.
    fn dispatch(&mut self, i: usize, sw: &mut Switch, outs: &mut Vec<Output>) {
        let exact = std::mem::take(&mut self.tx_ps);
        let mut timed = exact.iter().copied().peekable();
        for (k, o) in outs.drain(..).enumerate() {
            let ps = timed.next_if(|(j, _)| *j == k).map(|(_, ps)| ps);
            match self.attach(i, o.port) {
                Attach::Link(l) => {
                    let rate = sw.tm.cfg.port(o.port).rate_bps;
                    let link = &mut self.links[l as usize];
                    let at = arrival_ns(departure_ns(o.time_ns, ps), o.data.len(), rate, link.delay_ns);
                    link.frames += 1;
                    link.bytes += (o.data.len() + FCS) as u64;
                    let d = mix(mix(self.tester.digest, LINK_MARK | l as u64), o.time_ns);
                    self.tester.digest = hash_bytes(d, &o.data);
                    self.seq += 1;
                    self.wire.push(Reverse(InFlight { at, seq: self.seq, link: l, data: o.data }));
                }
                _ => {
                    let e = self.edge_of(i, o.port);
                    self.tester.receive(e, &o.data, o.time_ns);
                    sw.recycle(o.data);
                }
            }
        }
        let mut exact = exact;
        exact.clear();
        self.tx_ps = exact;
    }

    /// Frames on the links now (sent, not yet arrived).
    pub fn in_flight(&self) -> usize {
        self.wire.len()
    }

    /// Removes every stream and its results (links stay; frames on the
    /// links stay on their way).
    pub fn clear_streams(&mut self) {
        self.tester.clear_streams();
    }

    /// Forgets the receive results and the links' counters.
    pub fn reset_stats(&mut self) {
        self.tester.reset_stats();
        for l in &mut self.links {
            l.frames = 0;
            l.bytes = 0;
        }
    }
}

#[cfg(test)]
#[path = "fabric_tests.rs"]
mod tests;
