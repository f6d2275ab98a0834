//! One egress queue: its packets (a FIFO, or per-ingress sub-queues behind
//! an arbiter), its occupancy in packets, bytes and buffer cells, what each
//! ingress port holds in it, its shapers and its statistics.

use super::arbiter::Arbiter;
use super::config::{ArbMode, QueueCfg};
use crate::pipeline::Packet;
use std::collections::VecDeque;

/// Why the traffic manager dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    QueuePackets = 0,
    QueueBytes = 1,
    IngressPackets = 2,
    IngressBytes = 3,
    BufferFull = 4,
    QueueThreshold = 5,
    IngressThreshold = 6,
    /// A lossless priority's headroom was full (its sender ignored PFC).
    Headroom = 7,
}

pub const DROP_REASONS: [&str; 8] = [
    "queue_packets",
    "queue_bytes",
    "ingress_packets",
    "ingress_bytes",
    "buffer_full",
    "queue_threshold",
    "ingress_threshold",
    "headroom",
];

/// What one ingress port holds in a queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InOcc {
    pub port: u32,
    pub pkts: u32,
    pub bytes: u64,
    pub cells: u64,
}

#[derive(Clone, Debug, Default)]
pub struct QueueStats {
    pub enq_pkts: u64,
    pub enq_bytes: u64,
    pub deq_pkts: u64,
    pub deq_bytes: u64,
    pub drops: [u64; 8],
    pub drop_bytes: u64,
    pub ecn_marked: u64,
    pub peak_pkts: u32,
    pub peak_bytes: u64,
    /// Integral of the occupancy over time (bytes x ns, packets x ns).
    pub area_bytes_ns: u128,
    pub area_pkts_ns: u128,
    pub since_ns: u64,
    pub last_ns: u64,
}

impl QueueStats {
    pub fn drop_pkts(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// Ingress ports up to this number find their record in a queue by
/// index (the configuration's largest port).
const OCC_INDEXED: u32 = super::config::MAX_PORT;

#[derive(Debug)]
pub enum Store {
    Fifo(VecDeque<Box<Packet>>),
    Arb(Box<Arbiter>),
}

#[derive(Debug)]
pub struct Queue {
    pub store: Store,
    pub pkts: u32,
    pub bytes: u64,
    /// Buffer cells held (in bytes).
    pub cells: u64,
    pub cfg: QueueCfg,
    /// simple_switch's rate limiter: send time of the last packet admitted.
    pub pps_last_ns: Option<u64>,
    /// With an arbiter, the rate limiter works at dequeue instead.
    pub pps_next_ns: u64,
    /// Bit-rate shaper: earliest start of the next transmission (ps).
    pub bps_next_ps: u64,
    /// What each ingress port holds, in the order the ports first came.
    pub occ: Vec<InOcc>,
    /// Ingress port -> 1 + its index in `occ` (0: none yet), for ports up
    /// to [`OCC_INDEXED`]; larger port numbers are searched for.
    occ_at: Vec<u32>,
    pub stats: QueueStats,
    /// Held by a PFC frame the port received for this priority (ns).
    pub paused_until_ns: u64,
}

impl Queue {
    pub fn new(cfg: &QueueCfg, arb: &super::config::ArbCfg, now_ns: u64) -> Queue {
        Queue {
            store: new_store(arb),
            pkts: 0,
            bytes: 0,
            cells: 0,
            cfg: cfg.clone(),
            pps_last_ns: None,
            pps_next_ns: 0,
            bps_next_ps: 0,
            occ: vec![],
            occ_at: vec![],
            stats: QueueStats { since_ns: now_ns, last_ns: now_ns, ..Default::default() },
            paused_until_ns: 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.pkts == 0
    }

    /// With an arbiter each ingress port's sub-queue is admitted as a queue
    /// of its own (a virtual output queue).
    pub fn per_ingress(&self) -> bool {
        matches!(self.store, Store::Arb(_))
    }

    /// Changes how ingress ports are arbitrated, keeping the packets (in
    /// the order the old arbitration would have sent them).
    pub fn set_arbitration(&mut self, arb: &super::config::ArbCfg) {
        let same = match &self.store {
            Store::Fifo(_) => arb.mode == ArbMode::Fifo,
            Store::Arb(a) => a.cfg() == arb,
        };
        if same {
            return;
        }
        let mut new = new_store(arb);
        while let Some(p) = self.store_pop() {
            match &mut new {
                Store::Fifo(f) => f.push_back(p),
                Store::Arb(a) => a.push(p),
            }
        }
        self.store = new;
    }

    fn store_pop(&mut self) -> Option<Box<Packet>> {
        match &mut self.store {
            Store::Fifo(f) => {
                let pkt = f.pop_front();
                prefetch_next(f);
                pkt
            }
            Store::Arb(a) => a.pop(),
        }
    }

    /// The occupancy record of an ingress port (created on first use).
    #[inline]
    pub fn ingress(&mut self, port: u32) -> &mut InOcc {
        let i = match self.occ_index(port) {
            Some(i) => i,
            None => self.add_ingress(port),
        };
        &mut self.occ[i]
    }

    /// Where `port`'s record is in `occ`.
    #[inline]
    fn occ_index(&self, port: u32) -> Option<usize> {
        if port <= OCC_INDEXED {
            return match self.occ_at.get(port as usize) {
                Some(&i) if i != 0 => Some(i as usize - 1),
                _ => None,
            };
        }
        self.occ.iter().position(|o| o.port == port)
    }

    #[cold]
    fn add_ingress(&mut self, port: u32) -> usize {
        self.occ.push(InOcc { port, ..Default::default() });
        let n = self.occ.len() - 1;
        if port <= OCC_INDEXED {
            let p = port as usize;
            if p >= self.occ_at.len() {
                self.occ_at.resize(p + 1, 0);
            }
            self.occ_at[p] = n as u32 + 1;
        }
        n
    }

    pub fn ingress_occ(&self, port: u32) -> InOcc {
        match self.occ_index(port) {
            Some(i) => self.occ[i],
            None => InOcc { port, ..Default::default() },
        }
    }

    /// Accumulates the time-weighted occupancy up to `now`.
    #[inline]
    pub fn tick(&mut self, now_ns: u64) {
        let s = &mut self.stats;
        if now_ns > s.last_ns {
            let dt = (now_ns - s.last_ns) as u128;
            s.area_bytes_ns += self.bytes as u128 * dt;
            s.area_pkts_ns += self.pkts as u128 * dt;
            s.last_ns = now_ns;
        }
    }

    /// Adds an admitted packet (its `tm_cells` set: its buffer space).
    pub fn push(&mut self, now_ns: u64, pkt: Box<Packet>) {
        self.tick(now_ns);
        let len = pkt.tm_len as u64;
        let cells = pkt.tm_cells as u64;
        let ing = pkt.ingress_port;
        match &mut self.store {
            Store::Fifo(f) => f.push_back(pkt),
            Store::Arb(a) => a.push(pkt),
        }
        self.pkts += 1;
        self.bytes += len;
        self.cells += cells;
        let o = self.ingress(ing);
        o.pkts += 1;
        o.bytes += len;
        o.cells += cells;
        let s = &mut self.stats;
        s.enq_pkts += 1;
        s.enq_bytes += len;
        s.peak_pkts = s.peak_pkts.max(self.pkts);
        s.peak_bytes = s.peak_bytes.max(self.bytes);
    }

    /// Takes the next packet (arbitration order); the caller frees its
    /// cells in the shared buffer.
    pub fn pop(&mut self, now_ns: u64) -> Option<Box<Packet>> {
        self.tick(now_ns);
        let pkt = self.store_pop()?;
        let len = pkt.tm_len as u64;
        self.pkts -= 1;
        self.bytes -= len;
        self.cells = self.cells.saturating_sub(pkt.tm_cells as u64);
        let o = self.ingress(pkt.ingress_port);
        o.pkts = o.pkts.saturating_sub(1);
        o.bytes = o.bytes.saturating_sub(len);
        o.cells = o.cells.saturating_sub(pkt.tm_cells as u64);
        self.stats.deq_pkts += 1;
        self.stats.deq_bytes += len;
        Some(pkt)
    }

    /// Earliest time (ns) the head may leave as far as the queue's packet
    /// rate limiter is concerned.
    pub fn pps_ready_ns(&self) -> u64 {
        match &self.store {
            // a queue never paced has no packet with a send time: its head
            // (cold, behind a deep queue) is not read
            Store::Fifo(_) if self.pps_last_ns.is_none() => 0,
            Store::Fifo(f) => f.front().map(|p| p.send_ns).unwrap_or(0),
            Store::Arb(_) => {
                if self.cfg.rate_pps.is_some() {
                    self.pps_next_ns
                } else {
                    0
                }
            }
        }
    }
}

/// Hints the next two packets of a FIFO just popped into the caches: the
/// next one's parked bytes (its packet was hinted at the last pop), the
/// packet after it.
#[inline]
pub(super) fn prefetch_next(f: &VecDeque<Box<Packet>>) {
    if let Some(n) = f.front() {
        n.prefetch_parked();
    }
    if let Some(n) = f.get(1) {
        n.prefetch();
    }
}

fn new_store(arb: &super::config::ArbCfg) -> Store {
    match arb.mode {
        ArbMode::Fifo => Store::Fifo(VecDeque::new()),
        _ => Store::Arb(Box::new(Arbiter::new(arb))),
    }
}
