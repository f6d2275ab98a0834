//! Ports outside the process: Linux interfaces in real time ([`rt`], its
//! sending thread [`tx`], over the system calls of [`sys`], the crate's
//! only unsafe module, and the AF_PACKET code of crates/afpacket, with
//! per-packet traces from [`trace`]) and pcap files ([`pcap`]).

pub mod pcap;
pub mod rt;
pub mod sys;
pub mod trace;
pub mod tx;
