//! The traffic manager: what happens to a packet between the ingress and
//! egress pipelines.
//!
//! By default it is simple_switch's: per egress port `nb_queues` priority
//! queues (`--priority-queues`), 64 packets each, tail drop, no rate limit,
//! the highest queue number served first, `set_queue_depth` (packets) and
//! `set_queue_rate` (packets per second, simple_switch's rate limiter with
//! send times fixed at enqueue). A P4 program reads the same numbers as on
//! BMv2: enq_qdepth and deq_qdepth count the packets of all the port's
//! queues, as simple_switch's `egress_buffers.size(port)` does.
//!
//! Beyond BMv2 (see [`config`] for the document that sets it all):
//! * a port line rate in bit/s; each packet occupies the wire for its
//!   length plus a wire overhead (preamble, inter-frame gap and FCS, 24
//!   bytes by default) — rates come out as a tester measures them; times
//!   on the wire are kept in picoseconds so 6.72 ns frames do not drift;
//! * per-queue limits in packets and bytes, per-queue shapers (bit/s),
//!   schedulers between a port's queues (strict, rr, wrr, drr);
//! * a shared buffer with per-port reserved space, cells, and dynamic
//!   thresholds for queues and ingress ports ([`buffer`]);
//! * ingress arbitration inside a queue (fifo, fair, port groups) and
//!   per-ingress limits ([`arbiter`]);
//! * ECN marking at enqueue ([`ecn`]), always above a threshold or
//!   RED-like between two;
//! * strict-priority queues above the scheduler (`"strict": true`);
//! * priority flow control: lossless priorities on ingress accounting,
//!   with headroom and pause frames sent upstream ([`pfc`]);
//! * statistics per queue (drops by reason, peaks, time-weighted
//!   averages) and the ground-truth occupancy trace ([`trace`]).
//!
//! The traffic manager never reads a clock: every call takes `now`.

pub mod arbiter;
pub mod buffer;
pub mod config;
pub mod ecn;
pub mod pfc;
pub mod pfc_frame;
pub mod queue;
pub mod srr;
pub mod trace;

use crate::pipeline::Packet;
use buffer::{Buffer, BufferRefusal};
pub use config::{TmConfig, DEFAULT_QUEUE_DEPTH};
use config::{Cost, PortCfg, SchedKind, MAX_QUEUES};
pub use queue::{DropReason, Queue, DROP_REASONS};
use srr::Srr;
use trace::{Rec, Trace, TraceCfg};

const PS_PER_S: u128 = 1_000_000_000_000;

/// `n / d` and `n % d`, on 64 bits when `n` fits (a frame's wire time:
/// one hardware division instead of two 128-bit library calls).
#[inline]
fn div_rem(n: u128, d: u64) -> (u128, u128) {
    match u64::try_from(n) {
        Ok(n) => ((n / d) as u128, (n % d) as u128),
        Err(_) => (n / d as u128, n % d as u128),
    }
}

#[inline]
fn ceil_ns(ps: u64) -> u64 {
    ps.div_ceil(1000)
}

/// One egress port: its queues, scheduler and wire.
#[derive(Debug)]
pub struct PortTm {
    pub queues: Vec<Queue>,
    pub cfg: PortCfg,
    srr: Srr,
    pub pkts: u32,
    pub bytes: u64,
    pub cells: u64,
    /// When the wire is free again (ps).
    pub busy_until_ps: u64,
    rem: u128,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    pub tx_wire_bytes: u64,
    pub busy_ps: u128,
    /// Packets the port may still dequeue before its interface takes more
    /// ([`TX_UNLIMITED`]: no limit). The real-time loop sets 0 while the
    /// kernel refuses the port's frames, so they wait in the queues.
    pub tx_credit: u32,
    /// Some queue is strict (served before the scheduler's).
    any_strict: bool,
}

/// A port's dequeues limited by nothing but the traffic manager itself.
pub const TX_UNLIMITED: u32 = u32::MAX;

impl PortTm {
    fn new(cfg: &PortCfg, nb_queues: usize, now_ns: u64) -> PortTm {
        let mut p = PortTm {
            queues: (0..nb_queues).map(|i| Queue::new(&cfg.queues[i], &cfg.arb, now_ns)).collect(),
            cfg: cfg.clone(),
            srr: Srr::new(1),
            pkts: 0,
            bytes: 0,
            cells: 0,
            busy_until_ps: 0,
            rem: 0,
            tx_pkts: 0,
            tx_bytes: 0,
            tx_wire_bytes: 0,
            busy_ps: 0,
            tx_credit: TX_UNLIMITED,
            any_strict: false,
        };
        p.set_sched_quanta();
        p
    }

    fn set_sched_quanta(&mut self) {
        self.any_strict = self.queues.iter().any(|q| q.cfg.strict);
        for (i, q) in self.queues.iter().enumerate() {
            let quantum = match self.cfg.sched {
                SchedKind::Drr => q.cfg.weight.saturating_mul(config::DEFAULT_QUANTUM),
                SchedKind::Wrr => q.cfg.weight,
                _ => 1,
            };
            self.srr.set_quantum(i as u16, quantum);
        }
    }

    /// Applies new settings, keeping queued packets.
    fn apply(&mut self, cfg: &PortCfg, nb_queues: usize, now_ns: u64) {
        while self.queues.len() < nb_queues {
            let i = self.queues.len();
            self.queues.push(Queue::new(&cfg.queues[i], &cfg.arb, now_ns));
        }
        for (i, q) in self.queues.iter_mut().enumerate() {
            q.cfg = cfg.queues[i].clone();
            q.set_arbitration(&cfg.arb);
        }
        self.cfg = cfg.clone();
        self.srr = Srr::new(1);
        self.set_sched_quanta();
        for (i, q) in self.queues.iter().enumerate() {
            if !q.is_empty() && !q.cfg.strict {
                self.srr.activate(i as u16);
            }
        }
    }

    #[inline]
    fn eligible(q: &Queue, now_ns: u64) -> bool {
        !q.is_empty() && q.pps_ready_ns() <= now_ns && ceil_ns(q.bps_next_ps) <= now_ns && q.paused_until_ns <= now_ns
    }

    fn pick(&mut self, now_ns: u64) -> Option<usize> {
        if self.any_strict {
            let qs = &self.queues;
            if let Some(i) = (0..qs.len()).rev().find(|i| qs[*i].cfg.strict && Self::eligible(&qs[*i], now_ns)) {
                return Some(i);
            }
        }
        match self.cfg.sched {
            SchedKind::Strict => (0..self.queues.len()).rev().find(|i| Self::eligible(&self.queues[*i], now_ns)),
            _ => {
                let qs = &self.queues;
                self.srr.pick(|i| Self::eligible(&qs[i as usize], now_ns)).map(|i| i as usize)
            }
        }
    }
}

/// What enqueue tells the pipeline (BMv2's enq_qdepth and p4scope's bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnqInfo {
    /// Packets in all the port's queues before this one.
    pub port_pkts: u32,
    pub port_bytes: u64,
    /// The shared buffer's use before this packet (0 without a buffer).
    pub buffer_bytes: u64,
}

/// A dequeued packet and what is left behind (deq_qdepth).
#[derive(Debug)]
pub struct DeqInfo {
    pub pkt: Box<Packet>,
    pub prio: usize,
    pub port_pkts: u32,
    pub port_bytes: u64,
}

#[derive(Debug)]
pub struct TrafficManager {
    pub cfg: TmConfig,
    ports: Vec<Option<Box<PortTm>>>,
    pub buffer: Option<Buffer>,
    pub trace: Option<Trace>,
    /// Priority flow control, when configured.
    pub pfc: Option<pfc::Pfc>,
    rng: u64,
}

impl TrafficManager {
    pub fn new(nb_queues: usize) -> TrafficManager {
        let cfg = TmConfig { nb_queues: nb_queues.clamp(1, MAX_QUEUES), ..TmConfig::default() };
        TrafficManager { cfg, ports: vec![], buffer: None, trace: None, pfc: None, rng: 0x853c_49e6_748f_ea9b }
    }

    pub fn nb_queues(&self) -> usize {
        self.cfg.nb_queues
    }

    pub fn set_seed(&mut self, seed: u64) {
        self.rng = seed ^ 0x853c_49e6_748f_ea9b;
        if self.rng == 0 {
            self.rng = 1;
        }
    }

    fn uniform(&mut self) -> f64 {
        (crate::hash::xorshift64star(&mut self.rng) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Replaces the configuration. Queued packets stay; a new buffer starts
    /// from the occupancy the ports already have. Changing the number of
    /// queues needs an empty traffic manager.
    pub fn configure(&mut self, cfg: TmConfig, now_ns: u64) -> Result<(), String> {
        if cfg.nb_queues != self.cfg.nb_queues && self.total() != 0 {
            return Err("the number of priority queues can only change while no packet is queued".into());
        }
        if cfg.nb_queues < self.cfg.nb_queues {
            for p in self.ports.iter_mut().flatten() {
                p.queues.truncate(cfg.nb_queues);
            }
        }
        self.cfg = cfg;
        // PFC's counts stay while its settings do (packets queued under
        // other settings are released against fresh counts)
        if self.pfc.as_ref().map(|p| &p.cfg) != self.cfg.pfc.as_ref() {
            self.pfc = self.cfg.pfc.clone().map(pfc::Pfc::new);
        }
        for (i, slot) in self.ports.iter_mut().enumerate() {
            if let Some(p) = slot {
                let pc = self.cfg.live_port(i as u32);
                p.apply(&pc, self.cfg.nb_queues, now_ns);
            }
        }
        self.rebuild_buffer();
        Ok(())
    }

    /// A new buffer: the configured ports' reserves carved out now, and
    /// what the live ports already hold taken.
    fn rebuild_buffer(&mut self) {
        let reserved = self.cfg.carved_total();
        let headroom_held: u64 = self.pfc.iter().flat_map(|p| p.groups().map(|(_, _, g)| g.headroom)).sum();
        self.buffer = self.cfg.buffer.clone().map(|bc| {
            let mut b = Buffer::new(bc);
            b.carve(reserved);
            for p in self.ports.iter().flatten() {
                let shared = p.cells.saturating_sub(p.cfg.reserved_bytes);
                b.shared_used += shared;
                b.used += p.cells;
                for q in &p.queues {
                    for o in &q.occ {
                        b.ingress_used[o.port.min(config::MAX_PORT) as usize] += o.bytes;
                    }
                }
            }
            b.used += headroom_held;
            b.peak_used = b.used;
            b
        });
    }

    /// Re-applies the stored settings of one port to its live state, and
    /// re-carves the reserves (the port may have just been named).
    fn refresh_port(&mut self, port: u32, now_ns: u64) {
        let nb = self.cfg.nb_queues;
        let pc = self.cfg.live_port(port);
        let reserved = self.cfg.carved_total();
        let mut held = None;
        if let Some(Some(p)) = self.ports.get_mut(port as usize) {
            held = Some((p.cells, p.cfg.reserved_bytes));
            p.apply(&pc, nb, now_ns);
        }
        if let Some(b) = self.buffer.as_mut() {
            b.carve(reserved);
            if let Some((cells, old)) = held {
                b.re_reserve(cells, old, pc.reserved_bytes);
            }
        }
    }

    #[inline]
    fn port_mut(&mut self, port: u32, now_ns: u64) -> &mut PortTm {
        let i = port as usize;
        if !matches!(self.ports.get(i), Some(Some(_))) {
            self.add_port(port, now_ns);
        }
        self.ports[i].as_mut().expect("created above")
    }

    /// Creates the live state of a port on its first packet. Its reserve,
    /// if it has one, left the shared pool when it was configured.
    #[cold]
    fn add_port(&mut self, port: u32, now_ns: u64) {
        let i = port as usize;
        if i >= self.ports.len() {
            self.ports.resize_with(i + 1, || None);
        }
        let pc = self.cfg.live_port(port);
        self.ports[i] = Some(Box::new(PortTm::new(&pc, self.cfg.nb_queues, now_ns)));
    }

    pub fn port(&self, port: u32) -> Option<&PortTm> {
        self.ports.get(port as usize).and_then(|p| p.as_deref())
    }

    /// The ports that have (or had) traffic.
    pub fn ports(&self) -> impl Iterator<Item = (u32, &PortTm)> {
        self.ports.iter().enumerate().filter_map(|(i, p)| p.as_deref().map(|p| (i as u32, p)))
    }

    // ----- simple_switch's runtime calls and direct settings -----------

    /// set_queue_depth: one queue, all queues of a port, or (port None)
    /// every queue of every port.
    pub fn set_queue_depth(&mut self, port: Option<u32>, prio: Option<usize>, depth: usize) {
        let d = Some(depth.min(u32::MAX as usize) as u32);
        match port {
            None => {
                self.cfg.defaults.queues.iter_mut().for_each(|q| q.limit_pkts = d);
                for p in self.cfg.ports.values_mut() {
                    p.queues.iter_mut().for_each(|q| q.limit_pkts = d);
                }
                let ports: Vec<u32> = self.ports().map(|(i, _)| i).collect();
                for p in ports {
                    self.refresh_port(p, 0);
                }
            }
            Some(p) => {
                let pc = self.cfg.port_mut(p);
                for (i, q) in pc.queues.iter_mut().enumerate() {
                    if prio.map(|x| x == i).unwrap_or(true) {
                        q.limit_pkts = d;
                    }
                }
                self.refresh_port(p, 0);
            }
        }
    }

    /// set_queue_rate in packets per second (None or 0: unlimited).
    pub fn set_queue_rate(&mut self, port: u32, prio: Option<usize>, pps: Option<u64>) {
        let pc = self.cfg.port_mut(port);
        for (i, q) in pc.queues.iter_mut().enumerate() {
            if prio.map(|x| x == i).unwrap_or(true) {
                q.rate_pps = pps.filter(|r| *r > 0);
            }
        }
        self.refresh_port(port, 0);
    }

    /// The port's line rate in bit/s (None: unlimited, as BMv2).
    pub fn set_port_rate(&mut self, port: u32, bps: Option<u64>) {
        self.cfg.port_mut(port).rate_bps = bps.filter(|r| *r > 0);
        self.refresh_port(port, 0);
    }

    /// How many more packets `port` may dequeue ([`TX_UNLIMITED`]: no
    /// limit; 0: none until raised). Queued packets stay while it is 0, as
    /// on BMv2 behind an interface whose blocking send waits.
    pub fn set_tx_credit(&mut self, port: u32, credit: u32, now_ns: u64) {
        self.port_mut(port, now_ns).tx_credit = credit;
    }

    /// What `set_tx_credit` left of the port's credit.
    pub fn tx_credit(&self, port: u32) -> u32 {
        self.port(port).map(|p| p.tx_credit).unwrap_or(TX_UNLIMITED)
    }

    // ----- the packet path --------------------------------------------

    /// Packets in one queue.
    pub fn depth(&self, port: u32, prio: usize) -> usize {
        self.port(port).and_then(|p| p.queues.get(prio)).map(|q| q.pkts as usize).unwrap_or(0)
    }

    /// (packets, bytes) in all queues of a port, and the shared buffer's
    /// use — what a packet enqueued now is told.
    pub fn occupancy(&self, port: u32) -> (u32, u64, u64) {
        let buf = self.buffer.as_ref().map(|b| b.used).unwrap_or(0);
        match self.port(port) {
            Some(p) => (p.pkts, p.bytes, buf),
            None => (0, 0, buf),
        }
    }

    /// All packets queued on all ports.
    pub fn total(&self) -> usize {
        self.ports.iter().flatten().map(|p| p.pkts as usize).sum()
    }

    fn record(&mut self, now: u64, port: u32, prio: usize, pkt: &Packet, kind: u8) {
        let buf = self.buffer.as_ref().map(|b| b.used).unwrap_or(0);
        let Some(t) = self.trace.as_mut() else { return };
        if !t.wants(port, kind) {
            return;
        }
        let (qp, qb, io) = match self.ports.get(port as usize).and_then(|p| p.as_deref()).and_then(|p| p.queues.get(prio)) {
            Some(q) => (q.pkts, q.bytes, q.ingress_occ(pkt.ingress_port)),
            None => (0, 0, Default::default()),
        };
        t.push(Rec {
            time_ns: now,
            port,
            queue: prio as u8,
            ingress: pkt.ingress_port,
            kind,
            len: pkt.tm_len,
            q_pkts: qp,
            q_bytes: qb,
            in_pkts: io.pkts,
            in_bytes: io.bytes,
            buffer_bytes: buf,
        });
    }

    /// Admits a packet (`pkt.tm_len` set) to queue `prio` of `port`, or
    /// returns it with the reason it was dropped.
    pub fn enqueue(&mut self, now: u64, port: u32, prio: usize, pkt: Box<Packet>) -> Result<EnqInfo, (Box<Packet>, DropReason)> {
        self.enqueue_with(now, port, prio, pkt, |_, _| {})
    }

    /// `enqueue`, calling `stamp` with an admitted packet and what it
    /// found (before it joins its queue): the engine writes the queueing
    /// metadata without asking for the occupancy separately.
    #[inline]
    pub fn enqueue_with(
        &mut self,
        now: u64,
        port: u32,
        prio: usize,
        mut pkt: Box<Packet>,
        stamp: impl FnOnce(&mut Packet, EnqInfo),
    ) -> Result<EnqInfo, (Box<Packet>, DropReason)> {
        let cells = match &self.buffer {
            Some(b) => b.cells(pkt.tm_len),
            None => pkt.tm_len as u64,
        };
        let lossless = self.pfc.as_ref().is_some_and(|p| p.cfg.lossless(pkt.ingress_port, prio));
        let verdict = if lossless {
            self.admit_lossless(now, port, prio, &pkt, cells)
        } else {
            self.admit(now, port, prio, &pkt, cells).map(|s| (s, false))
        };
        if let Err(reason) = verdict {
            if let (true, Some(pf)) = (lossless, self.pfc.as_mut()) {
                pf.dropped(pkt.ingress_port, prio);
            }
            let p = self.port_mut(port, now);
            if let Some(q) = p.queues.get_mut(prio) {
                q.stats.drops[reason as usize] += 1;
                q.stats.drop_bytes += pkt.tm_len as u64;
            }
            if self.trace.is_some() {
                self.record(now, port, prio, &pkt, trace::DROP);
            }
            return Err((pkt, reason));
        }
        let (shared, headroom) = verdict.unwrap_or((0, false));
        pkt.tm_hdrm = headroom;
        let buffer_before = self.buffer.as_ref().map(|b| b.used).unwrap_or(0);
        if let Some(b) = self.buffer.as_mut() {
            b.take(cells, shared, pkt.ingress_port);
        }
        let mark = match self.port_mut(port, now).queues[prio].cfg.ecn {
            Some(c) => self.ecn_decide(port, prio, &c, now),
            None => false,
        };
        pkt.ecn_mark = mark;
        pkt.tm_cells = cells.min(u32::MAX as u64) as u32;
        let ingress = pkt.ingress_port;
        let p = self.port_mut(port, now);
        let info = EnqInfo { port_pkts: p.pkts, port_bytes: p.bytes, buffer_bytes: buffer_before };
        let q = &mut p.queues[prio];
        if mark {
            q.stats.ecn_marked += 1;
        }
        pkt.send_ns = 0;
        if let (Some(r), queue::Store::Fifo(_)) = (q.cfg.rate_pps, &q.store) {
            // simple_switch: send = max(now, last send + 1/rate), fixed now
            let delay = 1_000_000_000 / r;
            let send = match q.pps_last_ns {
                Some(last) => now.max(last + delay),
                None => now,
            };
            q.pps_last_ns = Some(send);
            pkt.send_ns = send;
        }
        let len = pkt.tm_len as u64;
        let strict = q.cfg.strict;
        stamp(&mut pkt, info);
        q.push(now, pkt);
        p.pkts += 1;
        p.bytes += len;
        if !headroom {
            // headroom is outside the egress port's reserve and shared use
            p.cells += cells;
        }
        if p.cfg.sched != SchedKind::Strict && !strict {
            p.srr.activate(prio as u16);
        }
        if lossless {
            self.pfc_charge(now, ingress, prio, cells, headroom);
        }
        if self.trace.is_some() {
            // the record needs the packet; rebuild its identity cheaply
            let buf = self.buffer.as_ref().map(|b| b.used).unwrap_or(0);
            let p = self.port(port).expect("port exists");
            let q = &p.queues[prio];
            let io = q.ingress_occ(ingress);
            let rec = Rec {
                time_ns: now,
                port,
                queue: prio as u8,
                ingress,
                kind: trace::ENQ,
                len: len as u32,
                q_pkts: q.pkts,
                q_bytes: q.bytes,
                in_pkts: io.pkts,
                in_bytes: io.bytes,
                buffer_bytes: buf,
            };
            if let Some(t) = self.trace.as_mut() {
                if t.wants(port, trace::ENQ) {
                    t.push(rec);
                }
            }
        }
        Ok(info)
    }

    /// The pause time of an XOFF sent out of `port` (its line rate).
    fn pause_ns(&self, port: u32) -> u64 {
        self.pfc.as_ref().map(|p| p.pause_ns(self.cfg.port(port).rate_bps)).unwrap_or(0)
    }

    #[inline(never)]
    fn pfc_charge(&mut self, now: u64, ingress: u32, prio: usize, cells: u64, headroom: bool) {
        let pause = self.pause_ns(ingress);
        if let Some(p) = self.pfc.as_mut() {
            p.charge(ingress, prio, cells, headroom, now, pause);
        }
    }

    #[inline(never)]
    fn pfc_release(&mut self, now: u64, ingress: u32, prio: usize, cells: u64, headroom: bool) {
        let pause = self.pause_ns(ingress);
        if let Some(p) = self.pfc.as_mut() {
            p.release(ingress, prio, cells, headroom, now, pause);
        }
    }

    /// A PFC frame received on `port` holds its egress queue `prio` until
    /// `until_ns` (an XON: until now).
    pub fn pause_egress(&mut self, now: u64, port: u32, prio: usize, until_ns: u64) {
        if let Some(q) = self.port_mut(port, now).queues.get_mut(prio) {
            q.paused_until_ns = until_ns;
        }
    }

    /// Whether pause frames wait to be sent (`take_pauses`).
    #[inline]
    pub fn pauses_pending(&self) -> bool {
        self.pfc.as_ref().is_some_and(|p| !p.outbox.is_empty())
    }

    /// The pause frames to send now, in the order they were decided.
    pub fn take_pauses(&mut self) -> Vec<pfc::PauseOut> {
        self.pfc.as_mut().map(|p| std::mem::take(&mut p.outbox)).unwrap_or_default()
    }

    /// A lossless packet: in the shared pool up to its group's xoff, then
    /// in the group's headroom; Ok((shared bytes, in headroom)).
    fn admit_lossless(
        &mut self,
        now: u64,
        port: u32,
        prio: usize,
        pkt: &Packet,
        cells: u64,
    ) -> Result<(u64, bool), DropReason> {
        let p = self.port_mut(port, now);
        let (port_cells, reserved) = (p.cells, p.cfg.reserved_bytes);
        let pool = self.buffer.as_ref().map(|b| b.admit_pool(cells, port_cells, reserved));
        let Some(pf) = self.pfc.as_ref() else { return Err(DropReason::Headroom) };
        let fits = matches!(pool, Some(Ok(_)));
        match pf.place(pkt.ingress_port, prio, cells, fits) {
            pfc::Place::Shared => Ok((pool.and_then(|r| r.ok()).unwrap_or(0), false)),
            pfc::Place::Headroom => Ok((0, true)),
            pfc::Place::Drop => Err(DropReason::Headroom),
        }
    }

    #[inline(never)]
    fn ecn_decide(&mut self, port: u32, prio: usize, c: &config::EcnCfg, now: u64) -> bool {
        let u = self.uniform();
        let q = &self.port_mut(port, now).queues[prio];
        ecn::decide(c, q.bytes, q.pkts, u)
    }

    /// Whether the packet fits; Ok(shared buffer bytes it takes).
    fn admit(&mut self, now: u64, port: u32, prio: usize, pkt: &Packet, cells: u64) -> Result<u64, DropReason> {
        let len = pkt.tm_len as u64;
        let ingress = pkt.ingress_port;
        let p = self.port_mut(port, now);
        let (port_cells, reserved) = (p.cells, p.cfg.reserved_bytes);
        let q = &p.queues[prio];
        // With ingress arbitration the limits and the dynamic threshold apply
        // to the packet's virtual output queue (its ingress port's share).
        let o = q.ingress_occ(ingress);
        let (qpkts, qbytes, qcells) = if q.per_ingress() { (o.pkts, o.bytes, o.cells) } else { (q.pkts, q.bytes, q.cells) };
        if let Some(l) = q.cfg.limit_pkts {
            if qpkts >= l {
                return Err(DropReason::QueuePackets);
            }
        }
        if let Some(l) = q.cfg.limit_bytes {
            if qbytes + len > l {
                return Err(DropReason::QueueBytes);
            }
        }
        if let Some(l) = q.cfg.ingress_limit_pkts {
            if o.pkts >= l {
                return Err(DropReason::IngressPackets);
            }
        }
        if let Some(l) = q.cfg.ingress_limit_bytes {
            if o.bytes + len > l {
                return Err(DropReason::IngressBytes);
            }
        }
        let alpha = q.cfg.alpha;
        match &self.buffer {
            None => Ok(0),
            Some(b) => b.admit(cells, port_cells, reserved, qcells, alpha, ingress).map_err(|r| match r {
                BufferRefusal::Full => DropReason::BufferFull,
                BufferRefusal::QueueThreshold => DropReason::QueueThreshold,
                BufferRefusal::IngressThreshold => DropReason::IngressThreshold,
            }),
        }
    }

    /// The earliest time a packet of `port` may start to leave, if any is
    /// queued: the wire must be free and the queue's rate limiters allow it.
    pub fn next_ready(&self, port: u32) -> Option<u64> {
        let p = self.port(port)?;
        if p.pkts == 0 || p.tx_credit == 0 {
            return None;
        }
        let mut best = u64::MAX;
        for q in &p.queues {
            if !q.is_empty() {
                best = best.min(q.pps_ready_ns().max(ceil_ns(q.bps_next_ps)).max(q.paused_until_ns));
            }
        }
        Some(best.max(ceil_ns(p.busy_until_ps)))
    }

    /// Dequeues the packet the scheduler picks at `now`, if the wire is
    /// free and some queue may send.
    pub fn dequeue(&mut self, now: u64, port: u32) -> Option<DeqInfo> {
        let p = self.ports.get_mut(port as usize)?.as_deref_mut()?;
        if p.pkts == 0 || p.tx_credit == 0 || ceil_ns(p.busy_until_ps) > now {
            return None;
        }
        let prio = p.pick(now)?;
        let q = &mut p.queues[prio];
        let pkt = q.pop(now)?;
        if p.tx_credit != TX_UNLIMITED {
            p.tx_credit -= 1;
        }
        if let (Some(r), queue::Store::Arb(_)) = (q.cfg.rate_pps, &q.store) {
            q.pps_next_ns = now.max(q.pps_next_ns) + 1_000_000_000 / r;
        }
        let more = !q.is_empty();
        let len = pkt.tm_len;
        let cells = pkt.tm_cells as u64;
        match p.cfg.sched {
            _ if q.cfg.strict => {}
            SchedKind::Strict => {}
            SchedKind::Drr => p.srr.charge(prio as u16, len, more),
            _ => p.srr.charge(prio as u16, 1, more),
        }
        let headroom = pkt.tm_hdrm;
        let port_cells_before = if headroom { 0 } else { p.cells };
        p.pkts -= 1;
        p.bytes -= len as u64;
        if !headroom {
            p.cells = p.cells.saturating_sub(cells);
        }
        let reserved = if headroom { 0 } else { p.cfg.reserved_bytes };
        let (left_pkts, left_bytes) = (p.pkts, p.bytes);
        if let Some(b) = self.buffer.as_mut() {
            b.give(cells, port_cells_before, reserved, pkt.ingress_port);
        }
        if self.pfc.as_ref().is_some_and(|p| p.cfg.lossless(pkt.ingress_port, prio)) {
            self.pfc_release(now, pkt.ingress_port, prio, cells, headroom);
        }
        if self.trace.is_some() {
            self.record(now, port, prio, &pkt, trace::DEQ);
        }
        Some(DeqInfo { pkt, prio, port_pkts: left_pkts, port_bytes: left_bytes })
    }

    /// The packet just dequeued from `prio` starts to leave at `now` and is
    /// `wire_bytes` long on the wire; returns when (ps) it starts. With a
    /// line rate the wire is then busy; shapers are charged.
    pub fn transmitted(&mut self, now: u64, port: u32, prio: usize, wire_bytes: u64) -> u64 {
        let now_ps = now.saturating_mul(1000);
        let Some(p) = self.ports.get_mut(port as usize).and_then(|p| p.as_deref_mut()) else {
            return now_ps;
        };
        let q_next = p.queues.get(prio).map(|q| q.bps_next_ps).unwrap_or(0);
        // Back to back: the service ran at the ceiling of the exact time the
        // wire (or the shaper) allowed; start at that exact time.
        let bound = p.busy_until_ps.max(q_next);
        let start = if bound + 1000 > now_ps { bound.max(now_ps.saturating_sub(999)) } else { now_ps };
        p.tx_pkts += 1;
        p.tx_bytes += wire_bytes.saturating_sub(self.cfg.wire_overhead as u64);
        p.tx_wire_bytes += wire_bytes;
        if let Some(rate) = p.cfg.rate_bps {
            let num = wire_bytes as u128 * 8 * PS_PER_S + p.rem;
            let (dur, rem) = div_rem(num, rate);
            p.rem = rem;
            p.busy_until_ps = start + dur as u64;
            p.busy_ps += dur;
        }
        if let Some(q) = p.queues.get_mut(prio) {
            if let Some(r) = q.cfg.rate_bps {
                let (dur, _) = div_rem(wire_bytes as u128 * 8 * PS_PER_S, r);
                q.bps_next_ps = start + dur as u64;
            }
        }
        start
    }

    // ----- the ground-truth trace ---------------------------------------

    pub fn trace_start(&mut self, cfg: TraceCfg) {
        self.trace = Some(Trace::new(cfg));
    }

    pub fn trace_stop(&mut self) -> Option<Trace> {
        self.trace.take()
    }

    pub fn trace_take(&mut self) -> Option<Trace> {
        self.trace.as_mut().map(|t| t.take())
    }

    /// Cost unit helper for reports.
    pub fn cost_name(c: Cost) -> &'static str {
        match c {
            Cost::Bytes => "bytes",
            Cost::Packets => "packets",
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod pfc_tests;
