//! The switch: simple_switch's packet flow in virtual time.
//!
//! Packets are injected with a time; `run_until_idle` processes events in
//! time order: recirculated/resubmitted packets first, then arrivals and
//! egress-port services. Ingress ends as simple_switch's ingress thread
//! does (clone, digest, resubmit, multicast, drop, enqueue), egress as its
//! egress thread (E2E clone, drop, deparse, recirculate, transmit).
//! Timestamps given to the program are microseconds of the caller's clock.

use crate::json::{self, LoadError};
use crate::pipeline::{Digest, Exec, Packet, Runtime};
use crate::program::*;
use crate::tables::TableError;
use crate::tm::TrafficManager;
use crate::value::Val;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::fmt;

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

/// A packet that left the switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    pub port: u32,
    pub data: Vec<u8>,
    pub time_ns: u64,
}

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
}

/// The packet replication engine (simple_pre): groups of L1 nodes (rid),
/// each with a set of ports.
#[derive(Clone, Debug, Default)]
pub struct Pre {
    groups: BTreeMap<u32, Vec<u32>>,
    nodes: Vec<Option<(u32, Vec<u32>)>>,
}

impl Pre {
    pub fn group_create(&mut self, mgid: u32) -> u32 {
        self.groups.entry(mgid).or_default();
        mgid
    }

    pub fn group_destroy(&mut self, mgid: u32) {
        self.groups.remove(&mgid);
    }

    pub fn node_create(&mut self, rid: u32, ports: &[u32]) -> u32 {
        let mut p: Vec<u32> = ports.to_vec();
        p.sort_unstable();
        p.dedup();
        self.nodes.push(Some((rid, p)));
        self.nodes.len() as u32 - 1
    }

    pub fn node_update(&mut self, node: u32, ports: &[u32]) -> bool {
        match self.nodes.get_mut(node as usize) {
            Some(Some(n)) => {
                let mut p: Vec<u32> = ports.to_vec();
                p.sort_unstable();
                p.dedup();
                n.1 = p;
                true
            }
            _ => false,
        }
    }

    pub fn node_associate(&mut self, mgid: u32, node: u32) -> bool {
        if !matches!(self.nodes.get(node as usize), Some(Some(_))) {
            return false;
        }
        match self.groups.get_mut(&mgid) {
            Some(g) => {
                g.push(node);
                true
            }
            None => false,
        }
    }

    pub fn node_dissociate(&mut self, mgid: u32, node: u32) -> bool {
        match self.groups.get_mut(&mgid) {
            Some(g) => {
                g.retain(|n| *n != node);
                true
            }
            None => false,
        }
    }

    /// (rid, port) copies for a group, in BMv2's order.
    fn replicate(&self, mgid: u32, out: &mut Vec<(u32, u32)>) {
        out.clear();
        if let Some(g) = self.groups.get(&mgid) {
            for n in g {
                if let Some(Some((rid, ports))) = self.nodes.get(*n as usize) {
                    for p in ports {
                        out.push((*rid, *p));
                    }
                }
            }
        }
    }
}

/// An event key: time, then arrival order.
type Key = Reverse<(u64, u64)>;

pub struct Switch {
    pub prog: Program,
    pub rt: Runtime,
    pub tm: TrafficManager,
    pub pre: Pre,
    pub mirror: HashMap<u32, MirrorSession>,
    pub stats: Stats,
    inputs: BinaryHeap<(Key, u32, Vec<u8>)>,
    services: BinaryHeap<(Key, u32)>,
    recirc: VecDeque<Box<Packet>>,
    outputs: Vec<Output>,
    digests: Vec<Digest>,
    pool: Vec<Box<Packet>>,
    deparse_buf: Vec<u8>,
    repl_buf: Vec<(u32, u32)>,
    now: u64,
    seq: u64,
    next_id: u64,
    with_queueing_metadata: bool,
}

impl Switch {
    /// Loads a BMv2 JSON document.
    pub fn from_json(text: &str) -> Result<Switch, EngineError> {
        Ok(Switch::new(json::load(text)?))
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
            recirc: VecDeque::new(),
            outputs: vec![],
            digests: vec![],
            pool: vec![],
            deparse_buf: Vec::with_capacity(2048),
            repl_buf: vec![],
            now: 0,
            seq: 0,
            next_id: 0,
            with_queueing_metadata: wq,
            prog,
        }
    }

    pub fn now_ns(&self) -> u64 {
        self.now
    }

    pub fn set_drop_port(&mut self, port: u32) {
        self.rt.drop_port = port;
    }

    pub fn set_seed(&mut self, seed: u64) {
        self.rt.rng = seed ^ 0x9e37_79b9_7f4a_7c15;
    }

    /// Queues a packet arriving on `port` at `time_ns` (not before the
    /// switch's current time).
    pub fn inject(&mut self, port: u32, data: Vec<u8>, time_ns: u64) {
        self.seq += 1;
        self.inputs.push((Reverse((time_ns, self.seq)), port, data));
    }

    /// Packets that left the switch since the last call, in time order.
    pub fn take_outputs(&mut self) -> Vec<Output> {
        std::mem::take(&mut self.outputs)
    }

    pub fn take_digests(&mut self) -> Vec<Digest> {
        std::mem::take(&mut self.digests)
    }

    /// The time of the next pending event, if any.
    pub fn next_event_at(&self) -> Option<u64> {
        if !self.recirc.is_empty() {
            return Some(self.now);
        }
        let a = self.inputs.peek().map(|(Reverse((t, _)), _, _)| *t);
        let b = self.services.peek().map(|(Reverse((t, _)), _)| *t);
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }

    /// Processes every event up to and including `until_ns`.
    pub fn advance(&mut self, until_ns: u64) {
        while let Some(t) = self.next_event_at() {
            if t > until_ns {
                break;
            }
            self.step();
        }
        self.now = self.now.max(until_ns);
    }

    /// Processes events until nothing is pending.
    pub fn run_until_idle(&mut self) {
        while self.next_event_at().is_some() {
            self.step();
        }
    }

    fn step(&mut self) {
        if let Some(p) = self.recirc.pop_front() {
            self.ingress(p);
            return;
        }
        let ti = self.inputs.peek().map(|(Reverse(k), _, _)| *k);
        let ts = self.services.peek().map(|(Reverse(k), _)| *k);
        let take_input = match (ti, ts) {
            (Some(a), Some(b)) => a.0 <= b.0,
            (Some(_), None) => true,
            _ => false,
        };
        if take_input {
            if let Some((Reverse((t, _)), port, data)) = self.inputs.pop() {
                self.now = self.now.max(t);
                self.receive(port, data);
            }
        } else if let Some((Reverse((t, _)), port)) = self.services.pop() {
            self.now = self.now.max(t);
            self.service(port);
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
                p
            }
            None => Box::new(Packet::new(&self.prog)),
        }
    }

    fn free(&mut self, p: Box<Packet>) {
        if self.pool.len() < 1024 {
            self.pool.push(p);
        }
    }

    fn set_std(&self, pkt: &mut Packet, f: Option<FieldId>, v: u64) {
        if let Some(f) = f {
            pkt.phv.set_u(&self.prog, f, v as u128);
        }
    }

    fn get_std(&self, pkt: &Packet, f: Option<FieldId>) -> u64 {
        f.map(|f| pkt.phv.get(&self.prog, f).low_u64()).unwrap_or(0)
    }

    fn receive(&mut self, port: u32, data: Vec<u8>) {
        self.stats.received += 1;
        let mut p = self.alloc();
        p.data = data;
        p.ingress_port = port;
        p.ingress_len = p.data.len();
        p.len_reg = p.data.len();
        self.next_id += 1;
        p.id = self.next_id;
        let s = self.prog.std.clone();
        self.set_std(&mut p, s.ingress_port, port as u64);
        let len = p.data.len() as u64;
        self.set_std(&mut p, s.packet_length, len);
        self.set_std(&mut p, s.instance_type, INSTANCE_NORMAL);
        self.set_std(&mut p, s.ingress_global_timestamp, self.now / 1000);
        self.ingress(p);
    }

    fn ingress(&mut self, mut pkt: Box<Packet>) {
        self.rt.now_ns = self.now;
        let s = self.prog.std.clone();
        let ingress_len = pkt.len_reg;
        {
            let mut ex = Exec::new(&self.prog, &mut self.rt);
            ex.parse(&mut pkt);
        }
        let (pe, ce) = (pkt.parser_error as u64, pkt.checksum_error as u64);
        self.set_std(&mut pkt, s.parser_error, pe);
        self.set_std(&mut pkt, s.checksum_error, ce);
        {
            let mut ex = Exec::new(&self.prog, &mut self.rt);
            ex.apply_pipeline(&mut pkt, self.prog.ingress.init);
        }
        let egress_spec = self.get_std(&pkt, s.egress_spec) as u32;
        let mgid = self.get_std(&pkt, s.mcast_grp) as u32;

        if let Some((session, fl)) = pkt.clone.take() {
            if let Some(cfg) = self.mirror.get(&session).copied() {
                let mut c = self.alloc();
                c.data.extend_from_slice(&pkt.data);
                c.id = pkt.id;
                c.ingress_port = pkt.ingress_port;
                c.ingress_len = ingress_len;
                c.len_reg = ingress_len;
                self.set_std(&mut c, s.ingress_port, pkt.ingress_port as u64);
                {
                    let mut ex = Exec::new(&self.prog, &mut self.rt);
                    ex.parse(&mut c);
                }
                c.phv.reset_metadata(&self.prog);
                Exec::new(&self.prog, &mut self.rt).copy_field_list(fl, &pkt, &mut c);
                self.set_std(&mut c, s.instance_type, INSTANCE_INGRESS_CLONE);
                self.emit_copies(c, cfg);
            }
        }
        if let Some(d) = Exec::new(&self.prog, &mut self.rt).take_digest(&pkt) {
            self.digests.push(d);
        }
        pkt.learn_id = 0;
        if pkt.resubmit_fl != 0 {
            let fl = pkt.resubmit_fl;
            let mut c = self.alloc();
            c.data.extend_from_slice(&pkt.data);
            c.id = pkt.id;
            c.ingress_port = pkt.ingress_port;
            c.ingress_len = ingress_len;
            c.len_reg = ingress_len;
            c.phv.reset_metadata(&self.prog);
            Exec::new(&self.prog, &mut self.rt).copy_field_list(fl, &pkt, &mut c);
            self.set_std(&mut c, s.instance_type, INSTANCE_RESUBMIT);
            self.set_std(&mut c, s.packet_length, ingress_len as u64);
            c.loops = pkt.loops + 1;
            self.free(pkt);
            self.requeue(c);
            return;
        }
        if mgid != 0 {
            self.set_std(&mut pkt, s.instance_type, INSTANCE_REPLICATION);
            self.multicast(&mut pkt, mgid);
            self.free(pkt);
            return;
        }
        if egress_spec == self.rt.drop_port {
            self.stats.dropped_ingress += 1;
            self.free(pkt);
            return;
        }
        self.set_std(&mut pkt, s.instance_type, INSTANCE_NORMAL);
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
    fn emit_copies(&mut self, mut c: Box<Packet>, cfg: MirrorSession) {
        if let Some(g) = cfg.mgid {
            self.multicast(&mut c, g);
        }
        match cfg.port {
            Some(port) => self.enqueue(port, c),
            None => self.free(c),
        }
    }

    fn multicast(&mut self, pkt: &mut Packet, mgid: u32) {
        let mut out = std::mem::take(&mut self.repl_buf);
        self.pre.replicate(mgid, &mut out);
        let rid_f = self.prog.std.egress_rid;
        for (rid, port) in out.iter().copied() {
            self.set_std(pkt, rid_f, rid as u64);
            let mut c = self.alloc();
            c.copy_from(pkt);
            c.clear_registers();
            self.enqueue(port, c);
        }
        self.repl_buf = out;
    }

    fn enqueue(&mut self, port: u32, mut pkt: Box<Packet>) {
        let s = self.prog.std.clone();
        let prio = self.get_std(&pkt, s.priority) as usize;
        if prio >= self.tm.nb_queues {
            self.rt.log(format!("priority {prio} out of range, dropping packet"));
            self.stats.dropped_queue += 1;
            self.free(pkt);
            return;
        }
        let depth = self.tm.depth(port, prio);
        if self.with_queueing_metadata {
            self.set_std(&mut pkt, s.enq_timestamp, self.now / 1000);
            self.set_std(&mut pkt, s.enq_qdepth, depth as u64);
        }
        pkt.enq_ns = self.now;
        match self.tm.enqueue(port, prio, pkt) {
            Ok(_) => {
                if let Some(t) = self.tm.next_ready(port) {
                    self.seq += 1;
                    self.services.push((Reverse((t.max(self.now), self.seq)), port));
                }
            }
            Err(p) => {
                self.stats.dropped_queue += 1;
                self.free(p);
            }
        }
    }

    fn service(&mut self, port: u32) {
        let Some((mut pkt, prio, left)) = self.tm.dequeue(port, self.now) else {
            // rate-limited: come back when allowed
            if let Some(t) = self.tm.next_ready(port) {
                if t > self.now {
                    self.seq += 1;
                    self.services.push((Reverse((t, self.seq)), port));
                }
            }
            return;
        };
        self.egress(port, prio, left, &mut pkt);
        self.free(pkt);
        if let Some(t) = self.tm.next_ready(port) {
            self.seq += 1;
            self.services.push((Reverse((t.max(self.now), self.seq)), port));
        }
    }

    fn egress(&mut self, port: u32, prio: usize, left: usize, pkt: &mut Box<Packet>) {
        self.rt.now_ns = self.now;
        let s = self.prog.std.clone();
        let now_us = self.now / 1000;
        self.set_std(pkt, s.egress_global_timestamp, now_us);
        if self.with_queueing_metadata {
            let enq = self.get_std(pkt, s.enq_timestamp);
            self.set_std(pkt, s.deq_timedelta, now_us.wrapping_sub(enq));
            self.set_std(pkt, s.deq_qdepth, left as u64);
            self.set_std(pkt, s.qid, prio as u64);
        }
        self.set_std(pkt, s.egress_port, port as u64);
        self.set_std(pkt, s.egress_spec, self.rt.drop_port as u64 + 1);
        self.set_std(pkt, s.packet_length, pkt.len_reg as u64);
        {
            let mut ex = Exec::new(&self.prog, &mut self.rt);
            ex.apply_pipeline(pkt, self.prog.egress.init);
        }
        if let Some((session, fl)) = pkt.clone.take() {
            if let Some(cfg) = self.mirror.get(&session).copied() {
                let mut c = self.alloc();
                c.copy_from(pkt);
                c.phv.reset_metadata(&self.prog);
                Exec::new(&self.prog, &mut self.rt).copy_field_list(fl, pkt, &mut c);
                self.set_std(&mut c, s.instance_type, INSTANCE_EGRESS_CLONE);
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
        if self.get_std(pkt, s.egress_spec) as u32 == self.rt.drop_port {
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
            self.set_std(&mut c, s.instance_type, INSTANCE_RECIRC);
            let len = c.data.len();
            c.len_reg = len;
            c.ingress_len = len;
            self.set_std(&mut c, s.packet_length, len as u64);
            c.loops = pkt.loops + 1;
            self.requeue(c);
            return;
        }
        self.stats.transmitted += 1;
        self.outputs.push(Output { port, data: std::mem::take(&mut pkt.data), time_ns: self.now });
        pkt.data = Vec::with_capacity(2048);
    }

    // ----- control API ---------------------------------------------------

    pub fn table_id(&self, name: &str) -> Result<u32, EngineError> {
        if let Some(t) = self.prog.names.tables.get(name) {
            return Ok(*t);
        }
        // p4c-style suffix match ("t" for "ingress.t"), if unambiguous
        let mut found = None;
        for (n, t) in &self.prog.names.tables {
            if n.ends_with(&format!(".{name}")) {
                if found.is_some() {
                    return Err(EngineError::Invalid(format!("table name '{name}' is ambiguous")));
                }
                found = Some(*t);
            }
        }
        found.ok_or_else(|| EngineError::UnknownName { kind: "table", name: name.to_string() })
    }

    pub fn action_id(&self, table: u32, name: &str) -> Result<u32, EngineError> {
        let t = &self.prog.tables[table as usize];
        let mut found = None;
        for a in &t.actions {
            let an = &self.prog.actions[*a as usize].name;
            if an == name {
                return Ok(*a);
            }
            if an.ends_with(&format!(".{name}")) || (found.is_none() && an.ends_with(name) && name.contains('.')) {
                found = Some(*a);
            }
        }
        found.ok_or_else(|| EngineError::Table { table: t.name.clone(), err: TableError::ActionNotInTable(name.to_string()) })
    }

    fn action_data(&self, table: u32, action: u32, args: &[Val]) -> Result<Vec<Val>, EngineError> {
        let a = &self.prog.actions[action as usize];
        if args.len() != a.params.len() {
            return Err(EngineError::Table {
                table: self.prog.tables[table as usize].name.clone(),
                err: TableError::WrongArgCount { action: a.name.clone(), expected: a.params.len(), found: args.len() },
            });
        }
        Ok(args.iter().zip(&a.params).map(|(v, p)| v.trunc(p.width)).collect())
    }

    pub fn table_add(
        &mut self,
        table: &str,
        key: &[MatchValue],
        action: &str,
        args: &[Val],
        priority: i32,
    ) -> Result<u32, EngineError> {
        // Indirect (action profile) tables take direct entries here: the
        // switch layer resolves members and groups into (action, data).
        let t = self.table_id(table)?;
        let a = self.action_id(t, action)?;
        let data = self.action_data(t, a, args)?;
        let td = &self.prog.tables[t as usize];
        self.rt.tables[t as usize]
            .add(td, key, priority, a, data)
            .map_err(|err| EngineError::Table { table: td.name.clone(), err })
    }

    pub fn table_modify(&mut self, table: &str, handle: u32, action: &str, args: &[Val]) -> Result<(), EngineError> {
        let t = self.table_id(table)?;
        let a = self.action_id(t, action)?;
        let data = self.action_data(t, a, args)?;
        let name = self.prog.tables[t as usize].name.clone();
        self.rt.tables[t as usize].modify(handle, a, data).map_err(|err| EngineError::Table { table: name, err })
    }

    pub fn table_delete(&mut self, table: &str, handle: u32) -> Result<(), EngineError> {
        let t = self.table_id(table)?;
        let td = &self.prog.tables[t as usize];
        self.rt.tables[t as usize].delete(td, handle).map_err(|err| EngineError::Table { table: td.name.clone(), err })
    }

    pub fn table_clear(&mut self, table: &str) -> Result<(), EngineError> {
        let t = self.table_id(table)?;
        self.rt.tables[t as usize].clear();
        Ok(())
    }

    /// Removes every entry of every table (STF `remove all`).
    pub fn clear_all_tables(&mut self) {
        for t in &mut self.rt.tables {
            t.clear();
        }
    }

    pub fn table_set_default(&mut self, table: &str, action: &str, args: &[Val]) -> Result<(), EngineError> {
        let t = self.table_id(table)?;
        let a = self.action_id(t, action)?;
        let data = self.action_data(t, a, args)?;
        let td = &self.prog.tables[t as usize];
        if let Some(d) = &td.default {
            if d.action_const && d.action != a {
                return Err(EngineError::Table { table: td.name.clone(), err: TableError::ConstDefault });
            }
        }
        let st = &mut self.rt.tables[t as usize];
        st.default_action = Some(a);
        st.default_data = data;
        Ok(())
    }

    pub fn table_entry_count(&mut self, table: &str) -> Result<usize, EngineError> {
        let t = self.table_id(table)?;
        Ok(self.rt.tables[t as usize].len())
    }

    /// Direct counter of an entry: (bytes, packets).
    pub fn direct_counter(&self, table: &str, handle: u32) -> Result<(u64, u64), EngineError> {
        let t = self.table_id(table)?;
        match self.rt.tables[t as usize].entries.get(handle as usize).and_then(|e| e.as_ref()) {
            Some(e) => Ok((e.counter.bytes, e.counter.packets)),
            None => Err(EngineError::Table {
                table: self.prog.tables[t as usize].name.clone(),
                err: TableError::NoSuchEntry(handle),
            }),
        }
    }

    fn lookup_name(map: &HashMap<String, u32>, kind: &'static str, name: &str) -> Result<u32, EngineError> {
        if let Some(i) = map.get(name) {
            return Ok(*i);
        }
        let mut found = None;
        for (n, i) in map {
            if n.ends_with(&format!(".{name}")) {
                if found.is_some() {
                    return Err(EngineError::Invalid(format!("{kind} name '{name}' is ambiguous")));
                }
                found = Some(*i);
            }
        }
        found.ok_or_else(|| EngineError::UnknownName { kind, name: name.to_string() })
    }

    pub fn counter_read(&self, name: &str, index: usize) -> Result<(u64, u64), EngineError> {
        let c = Self::lookup_name(&self.prog.names.counters, "counter", name)?;
        let cells = &self.rt.ext.counters[c as usize];
        match cells.get(index) {
            Some(x) => Ok((x.bytes, x.packets)),
            None => Err(EngineError::OutOfRange { what: format!("counter '{name}'"), index, size: cells.len() }),
        }
    }

    pub fn counter_write(&mut self, name: &str, index: usize, bytes: u64, packets: u64) -> Result<(), EngineError> {
        let c = Self::lookup_name(&self.prog.names.counters, "counter", name)?;
        let cells = &mut self.rt.ext.counters[c as usize];
        let size = cells.len();
        match cells.get_mut(index) {
            Some(x) => {
                x.bytes = bytes;
                x.packets = packets;
                Ok(())
            }
            None => Err(EngineError::OutOfRange { what: format!("counter '{name}'"), index, size }),
        }
    }

    pub fn register_read(&self, name: &str, index: usize) -> Result<Val, EngineError> {
        let r = Self::lookup_name(&self.prog.names.registers, "register", name)?;
        let cells = &self.rt.ext.registers[r as usize];
        cells
            .get(index)
            .cloned()
            .ok_or(EngineError::OutOfRange { what: format!("register '{name}'"), index, size: cells.len() })
    }

    pub fn register_write(&mut self, name: &str, index: usize, v: &Val) -> Result<(), EngineError> {
        let r = Self::lookup_name(&self.prog.names.registers, "register", name)?;
        let w = self.prog.registers[r as usize].width;
        let cells = &mut self.rt.ext.registers[r as usize];
        let size = cells.len();
        match cells.get_mut(index) {
            Some(x) => {
                *x = v.trunc(w);
                Ok(())
            }
            None => Err(EngineError::OutOfRange { what: format!("register '{name}'"), index, size }),
        }
    }

    pub fn register_reset(&mut self, name: &str) -> Result<(), EngineError> {
        let r = Self::lookup_name(&self.prog.names.registers, "register", name)?;
        self.rt.ext.registers[r as usize].iter_mut().for_each(|x| *x = Val::ZERO);
        Ok(())
    }

    /// Sets a meter's rates: [(committed units/us, burst), (peak units/us, burst)];
    /// index None sets every cell.
    pub fn meter_set_rates(&mut self, name: &str, index: Option<usize>, rates: [(f64, u64); 2]) -> Result<(), EngineError> {
        let m = Self::lookup_name(&self.prog.names.meters, "meter", name)?;
        let cells = &mut self.rt.ext.meters[m as usize].cells;
        let size = cells.len();
        let range: Vec<usize> = match index {
            Some(i) if i < size => vec![i],
            Some(i) => return Err(EngineError::OutOfRange { what: format!("meter '{name}'"), index: i, size }),
            None => (0..size).collect(),
        };
        for i in range {
            cells[i].set_rates(rates[0].0, rates[0].1, rates[1].0, rates[1].1);
        }
        Ok(())
    }

    pub fn vset_add(&mut self, name: &str, value: &[u8]) -> Result<(), EngineError> {
        let v = Self::lookup_name(&self.prog.names.vsets, "value set", name)?;
        let width = self.prog.vsets[v as usize].width;
        let n = ((width + 7) / 8) as usize;
        let mut b = vec![0u8; n];
        let k = value.len().min(n);
        b[n - k..].copy_from_slice(&value[value.len() - k..]);
        self.rt.ext.vsets[v as usize].insert(b);
        Ok(())
    }

    pub fn mirroring_add(&mut self, session: u32, port: Option<u32>, mgid: Option<u32>) -> Result<(), EngineError> {
        if session > 32767 {
            return Err(EngineError::Invalid(format!("clone session {session} out of range 0..32767")));
        }
        let e = self.mirror.entry(session).or_default();
        if port.is_some() {
            e.port = port;
        }
        if mgid.is_some() {
            e.mgid = mgid;
        }
        Ok(())
    }

    pub fn mirroring_delete(&mut self, session: u32) {
        self.mirror.remove(&session);
    }

    /// Lines written by log_msg and run-time warnings.
    pub fn take_log(&mut self) -> Vec<String> {
        std::mem::take(&mut self.rt.log)
    }
}

#[cfg(test)]
pub(crate) mod tests;
