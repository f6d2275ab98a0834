//! The programmable pipeline: parser, verify checksum, controls (tables,
//! conditionals, actions), update checksum, deparser.
//!
//! [`Packet`] is one packet in flight with its PHV and the per-packet
//! "registers" simple_switch keeps (clone/resubmit/recirculate requests,
//! digest id, truncation). [`Runtime`] is the program's mutable state
//! (table entries, externs, hash state) plus reusable scratch buffers, so
//! that processing a packet allocates nothing in the common case.

pub mod actions;
pub mod bits;
pub mod cond;
pub mod csum_fuse;
mod deparser;
mod exec;
pub mod jit;
pub mod narrow;
pub mod native_actions;
pub mod native_control;
pub mod native_deparser;
pub mod native_parser;
pub mod park;
pub mod parser;
pub mod phv;
pub mod words;

use crate::externs::Externs;
use crate::hash::Hasher;
use crate::program::Program;
use crate::tables::profile::{PortStatus, ProfileState};
use crate::tables::TableState;
use phv::Phv;

pub use exec::Exec;

/// One packet in flight.
#[derive(Clone, Debug)]
pub struct Packet {
    pub phv: Phv,
    /// The bytes as received (before parsing) or as deparsed (after egress).
    pub data: Vec<u8>,
    /// Where the unparsed payload starts in `data` after parsing.
    pub payload_off: usize,
    /// The parser's cursor in bytes (lookahead is relative to it).
    pub cursor: usize,
    pub ingress_port: u32,
    /// Length when the packet entered ingress (counters count this).
    pub ingress_len: usize,
    /// simple_switch's packet-length register: adjusted by add/remove_header.
    pub len_reg: usize,
    pub truncate_to: usize,
    /// Clone request: (session, field list) — session valid when Some.
    pub clone: Option<(u32, u32)>,
    /// Resubmit / recirculate field-list ids; 0 means not requested.
    pub resubmit_fl: u32,
    pub recirc_fl: u32,
    pub learn_id: u32,
    pub exit: bool,
    pub parser_error: u32,
    pub checksum_error: bool,
    /// Time the packet was enqueued in the traffic manager (ns).
    pub enq_ns: u64,
    /// Length the traffic manager accounts for it, and its buffer cells.
    pub tm_len: u32,
    pub tm_cells: u32,
    /// Its cells are in a lossless priority's PFC headroom.
    pub tm_hdrm: bool,
    /// simple_switch's rate limiter: earliest time it may leave (ns).
    pub send_ns: u64,
    /// The traffic manager decided to mark it ECN CE.
    pub ecn_mark: bool,
    /// Identifier for traces (copies share it).
    pub id: u64,
    /// Resubmit/recirculate passes so far (bounded by the engine).
    pub loops: u32,
    /// The PHV and bytes in compact form while the packet waits in a deep
    /// queue (`phv` and `data` are then empty; see `park`).
    pub parked: Option<park::Parked>,
}

impl Packet {
    pub fn new(p: &Program) -> Packet {
        Packet::with_storage(Phv::new(p), Vec::with_capacity(2048))
    }

    /// A new packet in a PHV of the program (reset) and an empty buffer
    /// that some other packet held.
    pub fn with_storage(phv: Phv, data: Vec<u8>) -> Packet {
        Packet {
            phv,
            data,
            payload_off: 0,
            cursor: 0,
            ingress_port: 0,
            ingress_len: 0,
            len_reg: 0,
            truncate_to: usize::MAX,
            clone: None,
            resubmit_fl: 0,
            recirc_fl: 0,
            learn_id: 0,
            exit: false,
            parser_error: 0,
            checksum_error: false,
            enq_ns: 0,
            tm_len: 0,
            tm_cells: 0,
            tm_hdrm: false,
            send_ns: 0,
            ecn_mark: false,
            id: 0,
            loops: 0,
            parked: None,
        }
    }

    /// Hints the packet itself into the caches.
    #[inline]
    pub fn prefetch(&self) {
        crate::prefetch::prefetch(self, std::mem::size_of::<Packet>());
    }

    /// Clears the per-packet registers (simple_switch's `clear_all`).
    pub fn clear_registers(&mut self) {
        self.clone = None;
        self.resubmit_fl = 0;
        self.recirc_fl = 0;
        self.learn_id = 0;
        self.exit = false;
    }

    /// Copies everything from `o` reusing this packet's buffers.
    pub fn copy_from(&mut self, o: &Packet) {
        debug_assert!(!o.is_parked() && !self.is_parked());
        self.phv.copy_from(&o.phv);
        self.copy_rest_from(o);
    }

    /// `copy_from` with the metadata zeroed instead of copied (what
    /// `copy_from` then `Phv::reset_metadata` leave).
    pub fn copy_headers_from(&mut self, o: &Packet, p: &Program) {
        debug_assert!(!o.is_parked() && !self.is_parked());
        self.phv.copy_headers_from(&o.phv, p);
        self.copy_rest_from(o);
    }

    /// Copies all but the PHV.
    fn copy_rest_from(&mut self, o: &Packet) {
        self.data.clear();
        self.data.extend_from_slice(&o.data);
        self.payload_off = o.payload_off;
        self.cursor = o.cursor;
        self.ingress_port = o.ingress_port;
        self.ingress_len = o.ingress_len;
        self.len_reg = o.len_reg;
        self.truncate_to = o.truncate_to;
        self.clone = o.clone;
        self.resubmit_fl = o.resubmit_fl;
        self.recirc_fl = o.recirc_fl;
        self.learn_id = o.learn_id;
        self.exit = o.exit;
        self.parser_error = o.parser_error;
        self.checksum_error = o.checksum_error;
        self.enq_ns = o.enq_ns;
        self.tm_len = o.tm_len;
        self.tm_cells = o.tm_cells;
        self.send_ns = o.send_ns;
        self.ecn_mark = o.ecn_mark;
        self.id = o.id;
        self.loops = o.loops;
    }
}

/// A digest (learn list) generated by a packet: field values as bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digest {
    pub learn_id: u32,
    pub values: Vec<Vec<u8>>,
    pub time_ns: u64,
}

/// Appends to a run-time log while it holds fewer than `limit` lines.
pub(crate) fn log_bounded(log: &mut Vec<String>, limit: usize, s: String) {
    if log.len() < limit {
        log.push(s);
    }
}

/// Mutable state of a loaded program.
#[derive(Clone, Debug)]
pub struct Runtime {
    pub tables: Vec<TableState>,
    /// Action profiles' members and groups, and the port status their
    /// watch ports follow.
    pub profiles: Vec<ProfileState>,
    pub ports: PortStatus,
    pub ext: Externs,
    pub hashers: Vec<Hasher>,
    pub rng: u64,
    pub now_ns: u64,
    pub drop_port: u32,
    /// log_msg output and run-time warnings, oldest first (bounded).
    pub log: Vec<String>,
    pub log_limit: usize,
    /// Number of assert/assume failures (BMv2 aborts; we count and go on).
    pub assert_failures: u64,
    key_buf: Vec<u8>,
    pub(crate) parse_key: Vec<u8>,
    scratch: Vec<u8>,
    calc_buf: Vec<u8>,
}

impl Runtime {
    pub fn new(p: &Program, seed: u64) -> Runtime {
        let mut rt = Runtime {
            tables: p.tables.iter().map(TableState::new).collect(),
            profiles: p.profiles.iter().map(|a| ProfileState::new(a.max_size)).collect(),
            ports: PortStatus::default(),
            ext: Externs::new(p),
            hashers: p.calcs.iter().map(|c| Hasher::new(c.algo)).collect(),
            rng: seed ^ 0x9e37_79b9_7f4a_7c15,
            now_ns: 0,
            drop_port: 511,
            log: vec![],
            log_limit: 10_000,
            assert_failures: 0,
            key_buf: Vec::with_capacity(64),
            parse_key: Vec::with_capacity(64),
            scratch: Vec::with_capacity(64),
            calc_buf: Vec::with_capacity(2048),
        };
        rt.install_const_entries(p);
        rt
    }

    fn install_const_entries(&mut self, p: &Program) {
        for (ti, t) in p.tables.iter().enumerate() {
            for e in &t.const_entries {
                // const entries were checked at load; a failure here (e.g. a
                // duplicate) is logged rather than fatal, as BMv2 does
                if let Err(er) = self.tables[ti].add(t, &e.key, e.priority, e.action, e.data.clone()) {
                    self.log(format!("table '{}': const entry not added: {er}", t.name));
                }
            }
        }
    }

    pub fn log(&mut self, s: String) {
        log_bounded(&mut self.log, self.log_limit, s);
    }

    /// xorshift64*: deterministic per seed.
    pub fn random_u64(&mut self) -> u64 {
        crate::hash::xorshift64star(&mut self.rng)
    }
}

#[cfg(test)]
pub(crate) mod tests;
