//! The switch: simple_switch's packet flow in virtual time.
//!
//! Packets are injected with a time; `run_until_idle` processes events in
//! time order: recirculated/resubmitted packets first, then arrivals and
//! egress-port services. Ingress ends as simple_switch's ingress thread
//! does (clone, digest, resubmit, multicast, drop, enqueue), egress as its
//! egress thread (E2E clone, drop, deparse, recirculate, transmit).
//! Timestamps given to the program are microseconds of the caller's clock.
//!
//! Time is the caller's: `inject` queues a packet with its arrival time,
//! `deliver` runs one at once at a given time (drivers that keep their own
//! event order: the simulator, the real-time loop); `next_event_at` (or
//! `next_event` and `run_event`) and `advance` let a driver interleave its
//! events with the switch's. Egress services are scheduled per port when
//! the traffic manager says a packet may leave (at once without a line
//! rate, as simple_switch; when the wire is free with one).

mod control;
mod link;
mod mac;
mod pause;
mod pre;
mod profiles;
mod stdmeta;

use crate::json::{self, LoadError};
use crate::pipeline::phv::Phv;
use crate::pipeline::{Digest, Exec, Packet, Runtime};
use crate::program::*;
use crate::tables::TableError;
use crate::tm::{self, TrafficManager};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::fmt;

pub use link::{LinkDrops, PortEvent};
pub use mac::{max_frame as mac_max_frame, MacCfg, MacStats};
pub use pre::Pre;
use stdmeta::{write_std, Fit, StdSlot, StdSlots};

pub const INSTANCE_NORMAL: u64 = 0;
pub const INSTANCE_INGRESS_CLONE: u64 = 1;
pub const INSTANCE_EGRESS_CLONE: u64 = 2;
pub const INSTANCE_RECIRC: u64 = 4;
pub const INSTANCE_REPLICATION: u64 = 5;
pub const INSTANCE_RESUBMIT: u64 = 6;

/// Resubmit/recirculate passes allowed per packet. BMv2 has no limit (a
/// program that always resubmits spins forever); the engine drops the
/// packet instead and logs it, so a run always ends.
pub const MAX_LOOPS: u32 = 1000;

/// Errors of the engine's control API.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineError {
    Load(LoadError),
    UnknownName { kind: &'static str, name: String },
    Table { table: String, err: TableError },
    OutOfRange { what: String, index: usize, size: usize },
    Invalid(String),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Load(e) => write!(f, "{e}"),
            EngineError::UnknownName { kind, name } => write!(f, "no {kind} named '{name}'"),
            EngineError::Table { table, err } => write!(f, "table '{table}': {err}"),
            EngineError::OutOfRange { what, index, size } => {
                write!(f, "{what}: index {index} is out of range (size {size})")
            }
            EngineError::Invalid(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for EngineError {}

impl From<LoadError> for EngineError {
    fn from(e: LoadError) -> Self {
        EngineError::Load(e)
    }
}

/// A packet that left the switch: when its first bit left (with a line
/// rate, the start of its transmission).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    pub port: u32,
    pub data: Vec<u8>,
    pub time_ns: u64,
}

/// Spare buffers kept for packets and outputs (no allocation per packet
/// once warm).
const POOL_MAX: usize = 4096;
/// The capacity of a packet buffer: any frame up to a jumbo's header
/// room without growing. Buffers that came back smaller (an unparked
/// packet keeps its parked bytes, of its frame's size) are not reused.
const BUFFER: usize = 2048;
/// Keeps `buf` (emptied) among the spare buffers, unless they are full or
/// it is smaller than a packet buffer.
fn keep_spare(spare: &mut Vec<Vec<u8>>, mut buf: Vec<u8>) {
    if spare.len() < POOL_MAX && buf.capacity() >= BUFFER {
        buf.clear();
        spare.push(buf);
    }
}

/// A packet joining a port with at least this many packets queued is
/// parked (its PHV and bytes kept compact until it leaves, see
/// `pipeline::park`); shallower queues keep packets whole.
const PARK_DEPTH: u32 = 256;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MirrorSession {
    pub port: Option<u32>,
    pub mgid: Option<u32>,
}

/// Counts of what happened to packets, for tests and reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub received: u64,
    pub transmitted: u64,
    pub dropped_ingress: u64,
    pub dropped_egress: u64,
    pub dropped_queue: u64,
    /// Packets whose IP header got ECN CE on the way out.
    pub ecn_marked: u64,
}

/// Per egress port: the one pending service event (older ones are stale).
#[derive(Clone, Copy, Debug, Default)]
struct Svc {
    gen: u32,
    at: Option<u64>,
}

/// An event key: time, then arrival order.
type Key = Reverse<(u64, u64)>;

/// The switch's next event: its time, and where it waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextEvent {
    pub at: u64,
    due: Due,
}

/// Which of the switch's event sources holds its next event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Due {
    /// A scheduled link change.
    Link,
    /// A resubmitted or recirculated packet (due now).
    Recirc,
    /// A packet arriving (`inject`).
    Input,
    /// A port service due at the current time.
    Lane,
    /// A port service from the heap.
    Service,
}

pub struct Switch {
    pub prog: Program,
    pub rt: Runtime,
    pub tm: TrafficManager,
    pub pre: Pre,
    pub mirror: HashMap<u32, MirrorSession>,
    pub stats: Stats,
    inputs: BinaryHeap<(Key, u32, Vec<u8>)>,
    services: BinaryHeap<(Key, u32, u32)>,
    /// Services due at the current time, in order (no heap needed):
    /// ((time, seq), port, generation).
    lane: VecDeque<((u64, u64), u32, u32)>,
    svc: Vec<Svc>,
    recirc: VecDeque<Box<Packet>>,
    outputs: Vec<Output>,
    digests: Vec<Digest>,
    pool: Vec<Box<Packet>>,
    spare: Vec<Vec<u8>>,
    /// PHVs parked packets left behind, for new and unparked packets.
    spare_phvs: Vec<Phv>,
    deparse_buf: Vec<u8>,
    /// A parking packet's compact PHV on its way (see `Packet::park`).
    park_buf: Vec<u8>,
    repl_buf: Vec<(u32, u32)>,
    now: u64,
    seq: u64,
    next_id: u64,
    /// The packet the last ingress or egress pass ran (for traces).
    last_id: u64,
    with_queueing_metadata: bool,
    /// The standard-metadata fields resolved to their PHV slots.
    std: StdSlots,
    /// Link status changes: scheduled, reported, and the frames they cost.
    links: link::Links,
    /// The ports' MACs on the virtual wires; exact transmit times.
    mac: mac::Macs,
}

impl Switch {
    /// Loads a BMv2 JSON document.
    pub fn from_json(text: &str) -> Result<Switch, EngineError> {
        Ok(Switch::new(json::load_again(text)?))
    }

    pub fn new(prog: Program) -> Switch {
        let rt = Runtime::new(&prog, 0);
        let s = &prog.std;
        let wq = s.enq_timestamp.is_some() && s.enq_qdepth.is_some() && s.deq_timedelta.is_some() && s.deq_qdepth.is_some();
        Switch {
            rt,
            tm: TrafficManager::new(1),
            pre: Pre::default(),
            mirror: HashMap::new(),
            stats: Stats::default(),
            inputs: BinaryHeap::new(),
            services: BinaryHeap::new(),
            lane: VecDeque::new(),
            svc: vec![],
            recirc: VecDeque::new(),
            outputs: vec![],
            digests: vec![],
            pool: vec![],
            spare: vec![],
            spare_phvs: vec![],
            deparse_buf: Vec::with_capacity(BUFFER),
            park_buf: vec![],
            repl_buf: vec![],
            now: 0,
            seq: 0,
            next_id: 0,
            last_id: 0,
            with_queueing_metadata: wq,
            std: StdSlots::new(&prog),
            links: link::Links::default(),
            mac: mac::Macs::default(),
            prog,
        }
    }

    pub fn now_ns(&self) -> u64 {
        self.now
    }

    /// The id of the packet the last ingress or egress pass ran (received
    /// packets are numbered from 1; clones, copies and recirculations keep
    /// their original's): lets a driver stepping the switch say which
    /// packet a step's logs, drops and outputs belong to.
    pub fn packet_id(&self) -> u64 {
        self.last_id
    }

    pub fn set_drop_port(&mut self, port: u32) {
        self.rt.drop_port = port;
    }

    pub fn set_seed(&mut self, seed: u64) {
        self.rt.rng = seed ^ 0x9e37_79b9_7f4a_7c15;
        self.tm.set_seed(seed);
    }

    /// Replaces the traffic manager's configuration (queued packets stay).
    pub fn configure_tm(&mut self, cfg: tm::TmConfig) -> Result<(), EngineError> {
        self.tm.configure(cfg, self.now).map_err(EngineError::Invalid)?;
        let ports: Vec<u32> = self.tm.ports().map(|(p, _)| p).collect();
        for p in ports {
            self.schedule(p);
        }
        Ok(())
    }

    /// How many more packets `port` may dequeue before its interface takes
    /// more (`tm::TX_UNLIMITED`: no limit; 0: its packets wait in the
    /// queues). The real-time loop's back-pressure.
    pub fn set_tx_credit(&mut self, port: u32, credit: u32) {
        self.tm.set_tx_credit(port, credit, self.now);
        self.schedule(port);
    }

    /// Gives an output's buffer back for reuse.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        keep_spare(&mut self.spare, buf);
    }

    /// Queues a packet arriving on `port` at `time_ns` (not before the
    /// switch's current time).
    pub fn inject(&mut self, port: u32, data: Vec<u8>, time_ns: u64) {
        self.seq += 1;
        self.inputs.push((Reverse((time_ns, self.seq)), port, data));
    }

    /// Packets that left the switch since the last call, in time order.
    pub fn take_outputs(&mut self) -> Vec<Output> {
        self.mac.tx_ps.clear();
        std::mem::take(&mut self.outputs)
    }

    /// Moves the outputs into `out` (keeping both vectors' capacity).
    pub fn drain_outputs(&mut self, out: &mut Vec<Output>) {
        self.mac.tx_ps.clear();
        out.append(&mut self.outputs);
    }

    /// Outputs waiting to be taken.
    pub fn outputs(&self) -> &[Output] {
        &self.outputs
    }

    /// Runs a packet arriving on `port` at `time_ns` through ingress now
    /// (the caller keeps time order; time never goes back). The bytes are
    /// copied into a pooled buffer.
    pub fn deliver(&mut self, port: u32, time_ns: u64, data: &[u8]) {
        self.run_before(time_ns);
        self.now = self.now.max(time_ns);
        let mut p = self.alloc();
        p.data.extend_from_slice(data);
        self.receive_pkt(port, p);
    }

    /// As `deliver`, the bytes written by `fill` into the pooled buffer.
    pub fn deliver_with(&mut self, port: u32, time_ns: u64, fill: impl FnOnce(&mut Vec<u8>)) {
        self.run_before(time_ns);
        self.now = self.now.max(time_ns);
        let mut p = self.alloc();
        fill(&mut p.data);
        self.receive_pkt(port, p);
    }

    pub fn take_digests(&mut self) -> Vec<Digest> {
        std::mem::take(&mut self.digests)
    }

    /// The time of the next pending event, if any.
    pub fn next_event_at(&self) -> Option<u64> {
        self.next_due().map(|(t, _)| t)
    }

    /// The next event and its time: the event sources compared once, so
    /// that running it needs no second look (`run_due`). A link change
    /// due at the same time as a packet event comes first; then a looping
    /// packet (due now), then the earlier of the next arrival and the next
    /// service (an arrival first on a tie in time).
    #[inline]
    fn next_due(&self) -> Option<(u64, Due)> {
        let packet = if !self.recirc.is_empty() {
            Some((self.now, Due::Recirc))
        } else {
            let ti = self.inputs.peek().map(|(Reverse(k), _, _)| *k);
            let th = self.services.peek().map(|(Reverse(k), _, _)| *k);
            let tl = self.lane.front().map(|(k, _, _)| *k);
            let (ts, service) = match (th, tl) {
                (Some(h), Some(l)) if l < h => (Some(l), Due::Lane),
                (None, Some(l)) => (Some(l), Due::Lane),
                (h, _) => (h, Due::Service),
            };
            match (ti, ts) {
                (Some(a), Some(b)) if a.0 <= b.0 => Some((a.0, Due::Input)),
                (Some(a), None) => Some((a.0, Due::Input)),
                (_, Some(b)) => Some((b.0, service)),
                (None, None) => None,
            }
        };
        match (self.links.next_at(), packet) {
            (Some(l), Some((p, _))) if l <= p => Some((l, Due::Link)),
            (Some(l), None) => Some((l, Due::Link)),
            (_, packet) => packet,
        }
    }

    /// Processes the events due strictly before `t` (an arrival at `t`
    /// comes before the switch's own events at `t`, as `inject`ed ones do).
    #[inline]
    fn run_before(&mut self, t: u64) {
        while let Some((e, due)) = self.next_due() {
            if e >= t {
                break;
            }
            self.run_due(due);
        }
    }

    /// Processes every event up to and including `until_ns`.
    pub fn advance(&mut self, until_ns: u64) {
        while let Some((t, due)) = self.next_due() {
            if t > until_ns {
                break;
            }
            self.run_due(due);
        }
        self.now = self.now.max(until_ns);
    }

    /// Processes events until nothing is pending.
    pub fn run_until_idle(&mut self) {
        while let Some((_, due)) = self.next_due() {
            self.run_due(due);
        }
    }

    /// Runs the event `next_due` chose.
    fn run_due(&mut self, due: Due) {
        match due {
            Due::Link => self.apply_link_event(),
            Due::Recirc => {
                if let Some(p) = self.recirc.pop_front() {
                    self.ingress(p);
                }
            }
            Due::Input => {
                if let Some((Reverse((t, _)), port, data)) = self.inputs.pop() {
                    self.now = self.now.max(t);
                    self.receive(port, data);
                }
            }
            Due::Lane => {
                if let Some(((t, _), port, gen)) = self.lane.pop_front() {
                    self.service_due(t, port, gen);
                }
            }
            Due::Service => {
                if let Some((Reverse((t, _)), port, gen)) = self.services.pop() {
                    self.service_due(t, port, gen);
                }
            }
        }
    }

    /// A service event of `port` comes due (stale generations do nothing).
    #[inline]
    fn service_due(&mut self, t: u64, port: u32, gen: u32) {
        self.now = self.now.max(t);
        let s = &mut self.svc[port as usize];
        if s.gen == gen {
            s.at = None;
            self.service(port);
        }
    }

    /// The next pending event, for `run_event` (a driver that compares its
    /// time with events of its own looks once, not twice).
    #[inline]
    pub fn next_event(&self) -> Option<NextEvent> {
        self.next_due().map(|(at, due)| NextEvent { at, due })
    }

    /// Runs the event `next_event` returned, the switch unchanged since.
    #[inline]
    pub fn run_event(&mut self, e: NextEvent) {
        self.run_due(e.due);
    }

    /// Processes the next pending event, if any (for drivers).
    pub fn step_once(&mut self) -> bool {
        match self.next_due() {
            Some((_, due)) => {
                self.run_due(due);
                true
            }
            None => false,
        }
    }

    /// Makes sure a service event is pending for `port` at the earliest
    /// time the traffic manager allows a packet out.
    fn schedule(&mut self, port: u32) {
        if let Some(Svc { at: Some(at), .. }) = self.svc.get(port as usize) {
            if *at <= self.now {
                // due now already: the traffic manager cannot say earlier
                return;
            }
        }
        let Some(t) = self.tm.next_ready(port) else { return };
        let t = t.max(self.now);
        let i = port as usize;
        if i >= self.svc.len() {
            self.svc.resize(i + 1, Svc::default());
        }
        let s = &mut self.svc[i];
        if let Some(at) = s.at {
            if at <= t {
                return;
            }
        }
        s.gen = s.gen.wrapping_add(1);
        s.at = Some(t);
        let gen = s.gen;
        self.seq += 1;
        if t == self.now {
            self.lane.push_back(((t, self.seq), port, gen));
        } else {
            self.services.push((Reverse((t, self.seq)), port, gen));
        }
    }

    fn alloc(&mut self) -> Box<Packet> {
        match self.pool.pop() {
            Some(mut p) => {
                p.phv.reset(&self.prog);
                p.data.clear();
                p.payload_off = 0;
                p.cursor = 0;
                p.truncate_to = usize::MAX;
                p.clear_registers();
                p.parser_error = 0;
                p.checksum_error = false;
                p.loops = 0;
                p.ecn_mark = false;
                p.send_ns = 0;
                p
            }
            None => {
                let mut p = self.unpooled();
                p.phv.reset(&self.prog);
                p
            }
        }
    }

    /// A packet of a spare PHV (as it was left) and buffer, or a new one.
    fn unpooled(&mut self) -> Box<Packet> {
        match self.spare_phvs.pop() {
            Some(phv) => {
                let data = self.spare_buffer();
                Box::new(Packet::with_storage(phv, data))
            }
            None => Box::new(Packet::new(&self.prog)),
        }
    }

    /// A copy of `o` in a pooled packet (not reset first: the copy
    /// writes everything a reset would).
    fn alloc_copy(&mut self, o: &Packet) -> Box<Packet> {
        let mut c = self.pool.pop().unwrap_or_else(|| self.unpooled());
        c.copy_from(o);
        c
    }

    /// `alloc_copy` with the metadata zeroed (simple_switch's copy of a
    /// packet cloned egress to egress): the headers copied, the metadata
    /// not, in one pass.
    fn alloc_copy_headers(&mut self, o: &Packet) -> Box<Packet> {
        let mut c = self.pool.pop().unwrap_or_else(|| self.unpooled());
        c.copy_headers_from(o, &self.prog);
        c
    }

    /// Keeps a packet for reuse: whole in the pool, else (the pool full)
    /// its PHV and buffer for the parked packets still to leave.
    fn free(&mut self, mut p: Box<Packet>) {
        if p.is_parked() {
            return;
        }
        if self.pool.len() < POOL_MAX {
            if p.data.capacity() < BUFFER {
                p.data = self.spare_buffer();
            }
            self.pool.push(p);
            return;
        }
        let Packet { phv, data, .. } = *p;
        if self.spare_phvs.len() < POOL_MAX {
            self.spare_phvs.push(phv);
        }
        self.recycle(data);
    }

    /// Brings a packet leaving its queue back whole (when it was parked):
    /// into a spare PHV, else that of a packet in the pool (a queue
    /// draining moves PHVs from the spares to the pool, packet by packet,
    /// until the spares run out), else a new one.
    fn unpark(&mut self, pkt: &mut Packet) {
        if pkt.is_parked() {
            let phv = match self.spare_phvs.pop() {
                Some(phv) => phv,
                None => match self.pool.pop() {
                    Some(p) => {
                        let Packet { phv, data, .. } = *p;
                        self.recycle(data);
                        phv
                    }
                    None => Phv::new(&self.prog),
                },
            };
            pkt.unpark(phv);
        }
    }

    /// An empty packet buffer: a spare one, else a new one.
    fn spare_buffer(&mut self) -> Vec<u8> {
        self.spare.pop().unwrap_or_else(|| Vec::with_capacity(BUFFER))
    }

    #[inline(always)]
    fn set_std(&self, pkt: &mut Packet, f: StdSlot, v: u64) {
        f.set(&self.prog, pkt, v);
    }

    #[inline(always)]
    fn get_std(&self, pkt: &Packet, f: StdSlot) -> u64 {
        f.get(&self.prog, pkt)
    }

    fn receive(&mut self, port: u32, data: Vec<u8>) {
        let mut p = self.alloc();
        let old = std::mem::replace(&mut p.data, data);
        if self.spare.len() < POOL_MAX && old.capacity() > 0 {
            self.spare.push(old);
        }
        self.receive_pkt(port, p);
    }

    fn receive_pkt(&mut self, port: u32, mut p: Box<Packet>) {
        if !self.link_takes_rx(port) {
            self.free(p);
            return;
        }
        self.stats.received += 1;
        p.ingress_port = port;
        p.ingress_len = p.data.len();
        p.len_reg = p.data.len();
        self.next_id += 1;
        p.id = self.next_id;
        let (len, now, now_us) = (p.data.len() as u64, self.now, self.now / 1000);
        write_std!(&self.std, &self.prog, &mut p;
            ingress_port = port as u64, Cut;
            packet_length = len, Cut;
            instance_type = INSTANCE_NORMAL, Cut;
            ingress_global_timestamp = now_us, Cut;
            p4s_ingress_timestamp_ns = now, Saturate);
        if self.tm.pfc.is_some() && self.pause_received(port, &p.data) {
            self.free(p);
            return;
        }
        self.ingress(p);
    }

    /// A new packet holding `pkt` as it was received (I2E clone, resubmit):
    /// its bytes, id, ingress port and length; the PHV is the caller's.
    fn received_copy(&mut self, pkt: &Packet, ingress_len: usize) -> Box<Packet> {
        let mut c = self.alloc();
        c.data.extend_from_slice(&pkt.data);
        c.id = pkt.id;
        c.ingress_port = pkt.ingress_port;
        c.ingress_len = ingress_len;
        c.len_reg = ingress_len;
        c
    }

    fn ingress(&mut self, mut pkt: Box<Packet>) {
        self.rt.now_ns = self.now;
        self.last_id = pkt.id;
        let ingress_len = pkt.len_reg;
        {
            let mut ex = Exec::new(&self.prog, &mut self.rt);
            ex.parse(&mut pkt);
        }
        let (pe, ce) = (pkt.parser_error as u64, pkt.checksum_error as u64);
        self.set_std(&mut pkt, self.std.parser_error, pe);
        self.set_std(&mut pkt, self.std.checksum_error, ce);
        {
            let mut ex = Exec::new(&self.prog, &mut self.rt);
            ex.apply_pipeline(&mut pkt, self.prog.ingress.init);
        }
        let egress_spec = self.get_std(&pkt, self.std.egress_spec) as u32;
        let mgid = self.get_std(&pkt, self.std.mcast_grp) as u32;

        if let Some((session, fl)) = pkt.clone.take() {
            if let Some(cfg) = self.mirror.get(&session).copied() {
                let mut c = self.received_copy(&pkt, ingress_len);
                self.set_std(&mut c, self.std.ingress_port, pkt.ingress_port as u64);
                {
                    let mut ex = Exec::new(&self.prog, &mut self.rt);
                    ex.parse(&mut c);
                }
                c.phv.reset_metadata(&self.prog);
                Exec::new(&self.prog, &mut self.rt).copy_field_list(fl, &pkt, &mut c);
                self.set_std(&mut c, self.std.instance_type, INSTANCE_INGRESS_CLONE);
                self.emit_copies(c, cfg);
            }
        }
        if pkt.learn_id != 0 {
            if let Some(d) = Exec::new(&self.prog, &mut self.rt).take_digest(&pkt) {
                self.digests.push(d);
            }
        }
        pkt.learn_id = 0;
        if pkt.resubmit_fl != 0 {
            let fl = pkt.resubmit_fl;
            let mut c = self.received_copy(&pkt, ingress_len);
            c.phv.reset_metadata(&self.prog);
            Exec::new(&self.prog, &mut self.rt).copy_field_list(fl, &pkt, &mut c);
            self.set_std(&mut c, self.std.instance_type, INSTANCE_RESUBMIT);
            self.set_std(&mut c, self.std.packet_length, ingress_len as u64);
            c.loops = pkt.loops + 1;
            self.free(pkt);
            self.requeue(c);
            return;
        }
        if mgid != 0 {
            self.set_std(&mut pkt, self.std.instance_type, INSTANCE_REPLICATION);
            self.multicast(pkt, mgid, false);
            return;
        }
        if egress_spec == self.rt.drop_port {
            self.stats.dropped_ingress += 1;
            self.free(pkt);
            return;
        }
        self.set_std(&mut pkt, self.std.instance_type, INSTANCE_NORMAL);
        self.enqueue(egress_spec, pkt);
    }

    /// Queues a resubmitted or recirculated packet for ingress (bounded).
    fn requeue(&mut self, c: Box<Packet>) {
        if c.loops > MAX_LOOPS {
            self.rt.log(format!("packet {} resubmitted/recirculated more than {MAX_LOOPS} times; dropped", c.id));
            self.stats.dropped_ingress += 1;
            self.free(c);
            return;
        }
        self.recirc.push_back(c);
    }

    /// Sends a clone to its session's port and/or multicast group.
    fn emit_copies(&mut self, c: Box<Packet>, cfg: MirrorSession) {
        let c = match cfg.mgid {
            Some(g) => self.multicast(c, g, cfg.port.is_some()),
            None => Some(c),
        };
        match (c, cfg.port) {
            (Some(c), Some(port)) => self.enqueue(port, c),
            (Some(c), None) => self.free(c),
            (None, _) => {}
        }
    }

    /// Queues a copy of `pkt` for each replica of group `mgid`, its
    /// egress_rid set on `pkt` first (as simple_switch does: `pkt` is left
    /// with the last replica's). Returns `pkt` when `keep`; else `pkt`
    /// itself is the last replica (the copy would be its equal, and the
    /// original would be dropped).
    fn multicast(&mut self, mut pkt: Box<Packet>, mgid: u32, keep: bool) -> Option<Box<Packet>> {
        let mut out = std::mem::take(&mut self.repl_buf);
        self.pre.replicate(mgid, &mut out);
        let rid_f = self.std.egress_rid;
        let last = if keep { None } else { out.pop() };
        for &(rid, port) in &out {
            self.set_std(&mut pkt, rid_f, rid as u64);
            let mut c = self.alloc_copy(&pkt);
            c.clear_registers();
            self.enqueue(port, c);
        }
        self.repl_buf = out;
        match last {
            Some((rid, port)) => {
                self.set_std(&mut pkt, rid_f, rid as u64);
                pkt.clear_registers();
                self.enqueue(port, pkt);
                None
            }
            None if keep => Some(pkt),
            None => {
                self.free(pkt);
                None
            }
        }
    }

    fn enqueue(&mut self, port: u32, mut pkt: Box<Packet>) {
        let prio = self.get_std(&pkt, self.std.priority) as usize;
        if prio >= self.tm.nb_queues() {
            self.rt.log(format!("priority {prio} out of range, dropping packet"));
            self.stats.dropped_queue += 1;
            self.free(pkt);
            return;
        }
        pkt.enq_ns = self.now;
        pkt.tm_len = pkt.len_reg.min(u32::MAX as usize) as u32;
        let (prog, s, now, wq) = (&self.prog, &self.std, self.now, self.with_queueing_metadata);
        let (spare_phvs, spare, scratch) = (&mut self.spare_phvs, &mut self.spare, &mut self.park_buf);
        // the queue's occupancy as the packet found it, written as the
        // traffic manager admits it (one look at the port); behind a deep
        // queue the packet then waits parked
        let stamp = |pkt: &mut Packet, at: tm::EnqInfo| {
            if wq {
                let (now_us, depth) = (now / 1000, at.port_pkts as u64);
                write_std!(s, prog, pkt; enq_timestamp = now_us, Cut; enq_qdepth = depth, Cut);
            }
            write_std!(s, prog, pkt;
                p4s_enq_qbytes = at.port_bytes, Saturate;
                p4s_buffer_bytes = at.buffer_bytes, Saturate);
            if at.port_pkts >= PARK_DEPTH {
                let (phv, data) = pkt.park(scratch);
                if spare_phvs.len() < POOL_MAX {
                    spare_phvs.push(phv);
                }
                keep_spare(spare, data);
            }
        };
        match self.tm.enqueue_with(now, port, prio, pkt, stamp) {
            Ok(_) => self.schedule(port),
            Err((p, _why)) => {
                self.stats.dropped_queue += 1;
                self.free(p);
            }
        }
        if self.tm.pauses_pending() {
            self.send_pauses();
        }
    }

    fn service(&mut self, port: u32) {
        if let Some(d) = self.tm.dequeue(self.now, port) {
            if self.tm.pauses_pending() {
                self.send_pauses();
            }
            let mut pkt = d.pkt;
            self.unpark(&mut pkt);
            self.egress(port, d.prio, d.port_pkts, d.port_bytes, &mut pkt);
            self.free(pkt);
            if d.port_pkts == 0 {
                // the port is empty: nothing to schedule (a packet egress
                // queued on it since was scheduled by its enqueue)
                return;
            }
        }
        self.schedule(port);
    }

    fn egress(&mut self, port: u32, prio: usize, left: u32, left_bytes: u64, pkt: &mut Box<Packet>) {
        self.rt.now_ns = self.now;
        self.last_id = pkt.id;
        let (now, now_us, s) = (self.now, self.now / 1000, &self.std);
        if self.with_queueing_metadata {
            let (waited_us, depth) = (now_us.wrapping_sub(self.get_std(pkt, s.enq_timestamp)), left as u64);
            write_std!(s, &self.prog, pkt; deq_timedelta = waited_us, Cut; deq_qdepth = depth, Cut;
                       qid = prio as u64, Cut);
        }
        let (queued_ns, len, drop_next) = (now.saturating_sub(pkt.enq_ns), pkt.len_reg as u64,
                                           self.rt.drop_port as u64 + 1);
        write_std!(s, &self.prog, pkt;
            egress_global_timestamp = now_us, Cut;
            p4s_egress_timestamp_ns = now, Saturate;
            p4s_deq_qbytes = left_bytes, Saturate;
            p4s_deq_timedelta_ns = queued_ns, Saturate;
            egress_port = port as u64, Cut;
            egress_spec = drop_next, Cut;
            packet_length = len, Cut);
        {
            let mut ex = Exec::new(&self.prog, &mut self.rt);
            ex.apply_pipeline(pkt, self.prog.egress.init);
        }
        if let Some((session, fl)) = pkt.clone.take() {
            if let Some(cfg) = self.mirror.get(&session).copied() {
                let mut c = self.alloc_copy_headers(pkt);
                Exec::new(&self.prog, &mut self.rt).copy_field_list(fl, pkt, &mut c);
                self.set_std(&mut c, self.std.instance_type, INSTANCE_EGRESS_CLONE);
                c.clear_registers();
                c.len_reg = pkt.len_reg;
                c.loops = pkt.loops + 1;
                if c.loops > MAX_LOOPS {
                    self.rt.log(format!("packet {} cloned egress-to-egress more than {MAX_LOOPS} times; dropped", c.id));
                    self.free(c);
                } else {
                    self.emit_copies(c, cfg);
                }
            }
        }
        if self.get_std(pkt, self.std.egress_spec) as u32 == self.rt.drop_port {
            self.stats.dropped_egress += 1;
            return;
        }
        {
            let mut buf = std::mem::take(&mut self.deparse_buf);
            let mut ex = Exec::new(&self.prog, &mut self.rt);
            ex.deparse(pkt, &mut buf);
            self.deparse_buf = buf;
        }
        if pkt.recirc_fl != 0 {
            let fl = pkt.recirc_fl;
            let mut c = self.alloc();
            c.data.extend_from_slice(&pkt.data);
            c.id = pkt.id;
            c.phv.reset_metadata(&self.prog);
            Exec::new(&self.prog, &mut self.rt).copy_field_list(fl, pkt, &mut c);
            self.set_std(&mut c, self.std.instance_type, INSTANCE_RECIRC);
            let len = c.data.len();
            c.len_reg = len;
            c.ingress_len = len;
            self.set_std(&mut c, self.std.packet_length, len as u64);
            c.loops = pkt.loops + 1;
            self.requeue(c);
            return;
        }
        if !self.link_takes_tx(port) {
            return;
        }
        if pkt.ecn_mark && tm::ecn::mark_ce(&mut pkt.data) {
            self.stats.ecn_marked += 1;
        }
        let wire = pkt.data.len() as u64 + self.tm.cfg.wire_overhead as u64;
        let start_ps = self.tm.transmitted(self.now, port, prio, wire);
        self.stats.transmitted += 1;
        let buf = self.spare_buffer();
        let data = std::mem::replace(&mut pkt.data, buf);
        self.note_tx_ps(start_ps);
        self.outputs.push(Output { port, data, time_ns: start_ps / 1000 });
    }
}

#[cfg(test)]
pub(crate) mod tests;
