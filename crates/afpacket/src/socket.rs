//! A raw AF_PACKET socket: opening, the options p4scope uses, binding to
//! one interface, and its counters.

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

use crate::sys::{cvt, get_int_option, os_error, set_option};

/// Every protocol: what a socket bound with it receives.
pub const ETH_P_ALL: u16 = 0x0003;
pub(crate) const PACKET_RX_RING: libc::c_int = 5;
const PACKET_STATISTICS: libc::c_int = 6;
pub(crate) const PACKET_VERSION: libc::c_int = 10;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// A raw packet socket, not bound yet (protocol 0: it receives nothing
/// until `bind` names a protocol, so a ring set up in between sees no
/// frame of another interface).
pub fn open(nonblocking: bool) -> io::Result<OwnedFd> {
    let flags = libc::SOCK_RAW | libc::SOCK_CLOEXEC | if nonblocking { libc::SOCK_NONBLOCK } else { 0 };
    // SAFETY: plain system call with integer arguments.
    let fd = unsafe { libc::socket(libc::AF_PACKET, flags, 0) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        let hint = if e.raw_os_error() == Some(libc::EPERM) { " (raw sockets need root or CAP_NET_RAW)" } else { "" };
        return Err(io::Error::new(e.kind(), format!("AF_PACKET socket: {e}{hint}")));
    }
    // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Binds the socket to interface `ifindex`, receiving `protocol` (host
/// order; [`ETH_P_ALL`] for every frame, 0 to send only).
pub fn bind(fd: impl AsFd, ifindex: u32, protocol: u16) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol.to_be();
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: the pointer and length describe `sll`, alive during the call.
    let r = unsafe {
        libc::bind(
            fd.as_fd().as_raw_fd(),
            &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(os_error("bind"));
    }
    Ok(())
}

/// Frames the interface itself sends are not received (Linux >= 4.20).
pub fn ignore_outgoing(fd: impl AsFd) -> io::Result<()> {
    set_option(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &1, "PACKET_IGNORE_OUTGOING")
}

/// Frames sent skip the interface's qdisc (faster; no shaping applies and
/// the kernel's taps do not see them).
pub fn bypass_qdisc(fd: impl AsFd) -> io::Result<()> {
    set_option(fd, libc::SOL_PACKET, PACKET_QDISC_BYPASS, &1, "PACKET_QDISC_BYPASS")
}

/// Received frames are cut to their first `snaplen` bytes by a socket
/// filter (`ret #snaplen`): less to copy into the ring.
pub fn cut_frames(fd: impl AsFd, snaplen: u32) -> io::Result<()> {
    let ret = [libc::sock_filter { code: 0x06, jt: 0, jf: 0, k: snaplen }];
    let prog = libc::sock_fprog { len: 1, filter: ret.as_ptr() as *mut libc::sock_filter };
    // the kernel copies the program (`ret` outlives the call)
    set_option(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &prog, "SO_ATTACH_FILTER")
}

/// Asks for a send buffer of `bytes` as the kernel counts it (it doubles
/// what it is asked for, for its bookkeeping): SO_SNDBUFFORCE, past
/// net.core.wmem_max (needs CAP_NET_ADMIN), else SO_SNDBUF (capped there).
pub fn set_send_buffer(fd: impl AsFd, bytes: usize) -> io::Result<()> {
    let size = (bytes / 2).clamp(1, i32::MAX as usize) as libc::c_int;
    if set_option(fd.as_fd(), libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &size, "SO_SNDBUFFORCE").is_ok() {
        return Ok(());
    }
    set_option(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, &size, "SO_SNDBUF")
}

/// The socket's send buffer in bytes (what the kernel counts its queued
/// frames against, overhead included).
pub fn send_buffer(fd: impl AsFd) -> io::Result<usize> {
    Ok(get_int_option(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, "SO_SNDBUF")?.max(0) as usize)
}

/// Bytes the kernel counts against the socket's send buffer now (SIOCOUTQ:
/// the frames it took that have not left yet, overhead included). The
/// kernel refuses a frame (EAGAIN) exactly when this is at least the send
/// buffer's size.
pub fn send_queued(fd: impl AsFd) -> io::Result<usize> {
    let mut v: libc::c_int = 0;
    // SAFETY: SIOCOUTQ writes one int into `v`, alive during the call.
    cvt(unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), libc::TIOCOUTQ, &mut v as *mut libc::c_int) })
        .map_err(|_| os_error("SIOCOUTQ"))?;
    Ok(v.max(0) as usize)
}

/// A receive ring's counters since they were last read (PACKET_STATISTICS
/// resets them in the kernel).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Statistics {
    /// Frames received, dropped ones included.
    pub packets: u64,
    /// Frames dropped because the ring was full.
    pub drops: u64,
    /// Times the ring froze because it was full (TPACKET_V3 only; else 0).
    pub freezes: u64,
}

pub fn statistics(fd: impl AsFd) -> io::Result<Statistics> {
    // tpacket_stats_v3: packets, drops, freeze_q_cnt; before V3 the kernel
    // writes the first two only
    let mut st = [0u32; 3];
    let mut len = std::mem::size_of_val(&st) as libc::socklen_t;
    // SAFETY: the pointer and length describe `st` and `len`, alive during
    // the call; the kernel writes at most `len` bytes.
    let r = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            libc::SOL_PACKET,
            PACKET_STATISTICS,
            st.as_mut_ptr() as *mut libc::c_void,
            &mut len,
        )
    };
    if r < 0 {
        return Err(os_error("PACKET_STATISTICS"));
    }
    Ok(Statistics { packets: st[0] as u64, drops: st[1] as u64, freezes: st[2] as u64 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_send_buffer_is_what_was_asked_for() {
        // needs CAP_NET_RAW (root): a packet socket, not bound
        if let Ok(fd) = open(true) {
            set_send_buffer(&fd, 212_992).unwrap();
            assert_eq!(send_buffer(&fd).unwrap(), 212_992, "the kernel's count, overhead included");
            assert_eq!(send_queued(&fd).unwrap(), 0);
        }
    }

    #[test]
    fn binding_to_a_missing_interface_is_an_error() {
        if let Ok(fd) = open(false) {
            let e = bind(&fd, u32::MAX >> 1, ETH_P_ALL).unwrap_err();
            assert!(e.to_string().starts_with("bind: "), "{e}");
        }
    }
}
