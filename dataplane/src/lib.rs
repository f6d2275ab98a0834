//! p4scope's switch engine.
//!
//! It loads BMv2 JSON (as produced by p4c-bm2-ss or `p4scope compile`) and
//! runs it with the semantics of BMv2's simple_switch, v1model.
//!
//! Layers, bottom up:
//!
//! * `value` — unbounded integers with an `i128` fast path: BMv2 computes
//!   without overflow and truncates only on field writes.
//! * `json` — the loader. It compiles the JSON once into a [`program::Program`]:
//!   every name resolved to an index, every field reference to a slot with its
//!   width, constants folded. Unsupported or invalid input is rejected with a
//!   path into the document.
//! * `pipeline` — parser, checksums, control graphs (tables, conditionals,
//!   actions), deparser, over a flat packet header vector. A short packet is
//!   a P4 parser error, never a panic.
//! * `tables` — entries and lookup indexes (hash for exact, per-prefix hash
//!   for lpm, per-mask hash for ternary).
//! * `externs`, `hash` — counters, meters, registers, value sets; the hash
//!   algorithms of BMv2's calculations.
//! * `tm` — the traffic manager (simple_switch's queues by default).
//! * `engine` — the switch: ingress, PRE (multicast), clone/resubmit/
//!   recirculate, traffic manager, egress, in virtual time.
//! * `sim` — virtual time: traffic sources and sinks around the switch,
//!   a discrete-event loop.
//! * `io` — real time: Linux interfaces through AF_PACKET (the sockets and
//!   rings of crates/afpacket; `io::sys` and `prefetch`, the CPU's cache
//!   hints, are the only modules with unsafe code besides
//!   `pipeline::native_parser`, which runs generated code), pcap files.
//! * `p4rt_wire` — the common P4Runtime table writes read from a
//!   WriteRequest's bytes (prost), for the switch's Python P4Runtime server.
//! * `py` — the only PyO3 module (feature `python`).
#![deny(unsafe_code)]

pub mod engine;
pub mod fuzzing;
pub mod externs;
pub mod hash;
pub mod io;
pub mod json;
pub mod ops;
pub mod p4rt_wire;
pub mod pipeline;
mod prefetch;
pub mod program;
pub mod sim;
pub mod source_hash;
pub mod tables;
pub mod tm;
pub mod value;

#[cfg(feature = "python")]
mod py;

pub use engine::{EngineError, Switch};
