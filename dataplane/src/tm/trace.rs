//! The ground-truth occupancy trace: one record per change of any queue's
//! occupancy (enqueue, dequeue, and optionally drops), with the queue's
//! packets and bytes after the change, what the packet's ingress port holds
//! in that queue, and the shared buffer's use. Replaying the records gives
//! every queue's exact occupancy at any time, per ingress port — what
//! telemetry is scored against. Stored as columns, ready to hand over as
//! arrays.

pub const ENQ: u8 = 0;
pub const DEQ: u8 = 1;
pub const DROP: u8 = 2;

#[derive(Clone, Debug, Default)]
pub struct TraceCfg {
    pub drops: bool,
    /// Only these egress ports (all when empty).
    pub ports: Vec<u32>,
    /// Stop recording after this many records (0: no limit).
    pub max_records: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub cfg: TraceCfg,
    pub time_ns: Vec<u64>,
    pub port: Vec<u16>,
    pub queue: Vec<u8>,
    pub ingress: Vec<u16>,
    pub kind: Vec<u8>,
    pub len: Vec<u32>,
    pub q_pkts: Vec<u32>,
    pub q_bytes: Vec<u64>,
    pub in_pkts: Vec<u32>,
    pub in_bytes: Vec<u64>,
    pub buffer_bytes: Vec<u64>,
    /// Records not kept because max_records was reached.
    pub overflow: u64,
}

/// One occupancy change.
#[derive(Clone, Copy, Debug)]
pub struct Rec {
    pub time_ns: u64,
    pub port: u32,
    pub queue: u8,
    pub ingress: u32,
    pub kind: u8,
    pub len: u32,
    pub q_pkts: u32,
    pub q_bytes: u64,
    pub in_pkts: u32,
    pub in_bytes: u64,
    pub buffer_bytes: u64,
}

impl Trace {
    pub fn new(cfg: TraceCfg) -> Trace {
        Trace { cfg, ..Default::default() }
    }

    #[inline]
    pub fn wants(&self, port: u32, kind: u8) -> bool {
        (kind != DROP || self.cfg.drops) && (self.cfg.ports.is_empty() || self.cfg.ports.contains(&port))
    }

    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    pub fn push(&mut self, r: Rec) {
        if self.cfg.max_records != 0 && self.time_ns.len() >= self.cfg.max_records {
            self.overflow += 1;
            return;
        }
        self.time_ns.push(r.time_ns);
        self.port.push(r.port as u16);
        self.queue.push(r.queue);
        self.ingress.push(r.ingress as u16);
        self.kind.push(r.kind);
        self.len.push(r.len);
        self.q_pkts.push(r.q_pkts);
        self.q_bytes.push(r.q_bytes);
        self.in_pkts.push(r.in_pkts);
        self.in_bytes.push(r.in_bytes);
        self.buffer_bytes.push(r.buffer_bytes);
    }

    /// Hands the records over and starts afresh with the same settings.
    pub fn take(&mut self) -> Trace {
        let cfg = self.cfg.clone();
        std::mem::replace(self, Trace::new(cfg))
    }

    /// Shows the records to `f`, then starts afresh keeping the columns'
    /// memory: a caller that copies them out (as the Python face does)
    /// does not make the next records grow new columns, page by page.
    pub fn drain<R>(&mut self, f: impl FnOnce(&Trace) -> R) -> R {
        let r = f(self);
        self.time_ns.clear();
        self.port.clear();
        self.queue.clear();
        self.ingress.clear();
        self.kind.clear();
        self.len.clear();
        self.q_pkts.clear();
        self.q_bytes.clear();
        self.in_pkts.clear();
        self.in_bytes.clear();
        self.buffer_bytes.clear();
        self.overflow = 0;
        r
    }
}
