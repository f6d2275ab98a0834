//! The generator's sockets, clocks and stop signal: its AF_PACKET policy
//! (send buffer, qdisc bypass, what a refused send means; ring geometry,
//! snap length) over the shared crates/afpacket, which holds the system
//! calls and the ring code (interface queries are ioctls on the socket, so
//! they see the caller's network namespace; /sys does not under Mininet's
//! mnexec).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use afpacket::{iface, poll, send, socket, BlockRing};

use crate::packet::MacAddr;

/// The transmit socket's send buffer, as the kernel counts it.
const SEND_BUFFER: usize = 16 << 20;
/// A partly filled receive block is handed over after this (ms).
const RETIRE_MS: u32 = 10;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// SIGINT and SIGTERM end the run cleanly (the report is still written).
pub fn install_stop_handler() {
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall-clock time: what probes carry and what the kernel stamps on receive.
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// Monotonic time: what pacing and durations use.
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

pub fn sleep_ns(ns: u64) {
    let ts = libc::timespec { tv_sec: (ns / 1_000_000_000) as _, tv_nsec: (ns % 1_000_000_000) as _ };
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// Index, hardware address and MTU of an interface in this namespace.
pub struct IfInfo {
    pub index: u32,
    pub mac: MacAddr,
    pub mtu: u32,
}

pub fn if_info(fd: &OwnedFd, name: &str) -> io::Result<IfInfo> {
    let index = iface::index(name)?;
    Ok(IfInfo { index, mac: iface::hwaddr(fd, name)?, mtu: iface::mtu(fd, name)? })
}

pub struct TxSocket {
    fd: OwnedFd,
    pub info: IfInfo,
}

impl TxSocket {
    /// A transmit-only socket on `iface`. With `qdisc_bypass` frames skip
    /// the interface's qdisc (faster, but no htb shaping applies).
    pub fn open(iface: &str, qdisc_bypass: bool) -> io::Result<TxSocket> {
        let fd = socket::open(false)?;
        let info = if_info(&fd, iface)?;
        // best effort: past net.core.wmem_max as root
        let _ = socket::set_send_buffer(&fd, SEND_BUFFER);
        if qdisc_bypass {
            socket::bypass_qdisc(&fd)?;
        }
        socket::bind(&fd, info.index, 0)?;
        Ok(TxSocket { fd, info })
    }

    /// Sends frames with as few sendmmsg calls as it takes. Returns how many
    /// were sent before an error that stopped it: ENOBUFS/EAGAIN (the qdisc
    /// or socket buffer is full) return the count so far, the caller retries
    /// the rest later; other errors are returned.
    pub fn send_batch(&self, frames: &[&[u8]]) -> io::Result<usize> {
        let mut done = 0;
        while done < frames.len() {
            match send::send_batch(&self.fd, &frames[done..], 0) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) => {
                    return match e.raw_os_error() {
                        Some(libc::ENOBUFS) | Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(done),
                        Some(libc::EMSGSIZE) => Err(io::Error::new(
                            e.kind(),
                            format!("frame longer than the interface MTU ({}) allows: {e}", self.info.mtu),
                        )),
                        _ => Err(io::Error::new(e.kind(), format!("sendmmsg: {e}"))),
                    };
                }
            }
        }
        Ok(done)
    }
}

/// Counters of a receive ring since it was opened (PACKET_STATISTICS).
#[derive(Default, Clone, Copy)]
pub struct RingStats {
    pub packets: u64,
    pub drops: u64,
    pub freezes: u64,
}

pub struct RxRing {
    fd: OwnedFd,
    ring: BlockRing,
    stats: RingStats,
}

impl RxRing {
    /// A TPACKET_V3 ring of `block_nr` blocks of `block_size` bytes on
    /// `iface`. Frames are cut to `snaplen` bytes by a socket filter (the
    /// probe is near the start; copying less keeps big frames cheap).
    /// Frames the interface itself sends are ignored unless `outgoing`.
    pub fn open(iface: &str, block_size: usize, block_nr: usize, snaplen: u32, outgoing: bool) -> io::Result<RxRing> {
        let fd = socket::open(false)?;
        let index = afpacket::iface::index(iface)?;
        socket::cut_frames(&fd, snaplen)?;
        if !outgoing {
            socket::ignore_outgoing(&fd)?;
        }
        let ring = BlockRing::new(&fd, block_size, block_nr, RETIRE_MS)?;
        socket::bind(&fd, index, socket::ETH_P_ALL)?;
        Ok(RxRing { fd, ring, stats: RingStats::default() })
    }

    /// Waits up to `timeout_ms` for the next filled block and calls `f` for
    /// each frame in it. Returns the number of frames seen (0 on timeout).
    pub fn poll_block<F: FnMut(afpacket::BlockFrame)>(&mut self, timeout_ms: i32, f: F) -> io::Result<usize> {
        if !self.ring.ready() {
            let mut ready = Vec::with_capacity(1);
            poll::poll_ready(&[(self.fd.as_raw_fd(), false)], timeout_ms.max(0) as u64 * 1_000_000, &mut ready)?;
        }
        Ok(self.ring.take(f).unwrap_or(0))
    }

    /// Ring counters since opening (the kernel resets them on each read).
    pub fn stats(&mut self) -> RingStats {
        if let Ok(st) = socket::statistics(&self.fd) {
            self.stats.packets += st.packets;
            self.stats.drops += st.drops;
            self.stats.freezes += st.freezes;
        }
        self.stats
    }
}
