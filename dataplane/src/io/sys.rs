//! The engine's only unsafe code: the Linux system calls of the real-time
//! ports (AF_PACKET sockets with batched receive and send, ppoll, an
//! eventfd to wake the loop). Each call is wrapped in a safe function;
//! buffers handed to the kernel are borrowed for the duration of the call
//! only, and their lengths come from the slices themselves.
//!
//! Review notes: every pointer passed below points into a live Rust slice
//! or struct of the right size for the call; no pointer is kept after the
//! call returns; file descriptors are owned by `OwnedFd` and closed once.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const ETH_P_ALL: u16 = 0x0003;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// The index of a network interface.
pub fn if_index(name: &str) -> io::Result<u32> {
    let c = CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name has a NUL byte"))?;
    // SAFETY: `c` is a valid NUL-terminated string for the call's duration.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(i)
    }
}

/// A raw AF_PACKET socket bound to one interface (non-blocking; its own
/// transmissions are not looped back to it).
pub fn packet_socket(ifname: &str, bufsize: usize) -> io::Result<OwnedFd> {
    let idx = if_index(ifname)?;
    let proto = ETH_P_ALL.to_be() as libc::c_int;
    // SAFETY: plain system call with integer arguments.
    let fd = cvt(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, proto) })?;
    // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = ETH_P_ALL.to_be();
    sll.sll_ifindex = idx as i32;
    // SAFETY: the pointer and length describe `sll`, alive during the call.
    cvt(unsafe {
        libc::bind(
            fd,
            &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })?;
    let one: libc::c_int = 1;
    // Older kernels lack the option; outgoing frames are then filtered by
    // their packet type, which recvmmsg does not report: accept the error.
    let _ = setsockopt_int(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, one);
    let size = bufsize.min(i32::MAX as usize) as libc::c_int;
    let _ = setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, size);
    let _ = setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, size);
    Ok(owned)
}

fn setsockopt_int(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: the pointer and length describe `v`, alive during the call.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// Receives up to `bufs.len()` frames at once; `lens[i]` gets the length
/// of frame i (a frame longer than its buffer is reported with its full
/// length, its tail cut). Returns how many frames came (0: none waiting).
pub fn recv_batch(fd: &OwnedFd, bufs: &mut [Vec<u8>], lens: &mut [usize]) -> io::Result<usize> {
    let n = bufs.len().min(lens.len()).min(1024);
    if n == 0 {
        return Ok(0);
    }
    let mut iov: Vec<libc::iovec> = bufs[..n]
        .iter_mut()
        .map(|b| libc::iovec { iov_base: b.as_mut_ptr() as *mut libc::c_void, iov_len: b.len() })
        .collect();
    // SAFETY: mmsghdr is plain old data; all-zero is a valid value.
    let mut msgs: Vec<libc::mmsghdr> = (0..n).map(|_| unsafe { std::mem::zeroed() }).collect();
    for (m, v) in msgs.iter_mut().zip(iov.iter_mut()) {
        m.msg_hdr.msg_iov = v as *mut libc::iovec;
        m.msg_hdr.msg_iovlen = 1;
    }
    // SAFETY: `msgs` holds n headers, each pointing at one iovec of `iov`,
    // each describing a buffer of `bufs` with its true length; all outlive
    // the call and nothing keeps the pointers afterwards.
    let r = unsafe {
        libc::recvmmsg(fd.as_raw_fd(), msgs.as_mut_ptr(), n as libc::c_uint, libc::MSG_DONTWAIT | libc::MSG_TRUNC, std::ptr::null_mut())
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(e);
    }
    for i in 0..r as usize {
        lens[i] = msgs[i].msg_len as usize;
    }
    Ok(r as usize)
}

/// Sends the frames; returns how many the kernel took.
pub fn send_batch(fd: &OwnedFd, frames: &[&[u8]]) -> io::Result<usize> {
    let n = frames.len().min(1024);
    if n == 0 {
        return Ok(0);
    }
    let mut iov: Vec<libc::iovec> = frames[..n]
        .iter()
        .map(|f| libc::iovec { iov_base: f.as_ptr() as *mut libc::c_void, iov_len: f.len() })
        .collect();
    // SAFETY: mmsghdr is plain old data; all-zero is a valid value.
    let mut msgs: Vec<libc::mmsghdr> = (0..n).map(|_| unsafe { std::mem::zeroed() }).collect();
    for (m, v) in msgs.iter_mut().zip(iov.iter_mut()) {
        m.msg_hdr.msg_iov = v as *mut libc::iovec;
        m.msg_hdr.msg_iovlen = 1;
    }
    // SAFETY: as in recv_batch; the kernel only reads the frames (the
    // `*mut` in iovec is the C type, nothing is written through it).
    let r = unsafe { libc::sendmmsg(fd.as_raw_fd(), msgs.as_mut_ptr(), n as libc::c_uint, libc::MSG_DONTWAIT) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(e);
    }
    Ok(r as usize)
}

/// Waits until one of `fds` is readable or `timeout_ns` passes; fills
/// `ready` with the readable ones' positions.
pub fn poll_readable(fds: &[RawFd], timeout_ns: u64, ready: &mut Vec<usize>) -> io::Result<()> {
    ready.clear();
    let mut pfds: Vec<libc::pollfd> = fds.iter().map(|fd| libc::pollfd { fd: *fd, events: libc::POLLIN, revents: 0 }).collect();
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `pfds` and `ts` are alive during the call and of the right
    // size; the signal mask pointer is null (unchanged).
    let r = unsafe { libc::ppoll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(());
        }
        return Err(e);
    }
    for (i, p) in pfds.iter().enumerate() {
        if p.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0 {
            ready.push(i);
        }
    }
    Ok(())
}

/// An eventfd to wake the real-time loop from other threads.
pub fn event_fd() -> io::Result<OwnedFd> {
    // SAFETY: plain system call with integer arguments.
    let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) })?;
    // SAFETY: `fd` was just created and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn event_signal(fd: &OwnedFd) {
    let one: u64 = 1;
    // SAFETY: writes the 8 bytes of `one`, alive during the call.
    let _ = unsafe { libc::write(fd.as_raw_fd(), &one as *const u64 as *const libc::c_void, 8) };
}

pub fn event_clear(fd: &OwnedFd) {
    let mut v: u64 = 0;
    // SAFETY: reads 8 bytes into `v`, alive during the call.
    let _ = unsafe { libc::read(fd.as_raw_fd(), &mut v as *mut u64 as *mut libc::c_void, 8) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_interface_is_an_error() {
        assert!(if_index("no-such-if0").is_err());
        assert!(packet_socket("no-such-if0", 1 << 20).is_err());
        assert!(if_index("a\0b").is_err());
    }

    #[test]
    fn eventfd_wakes_poll() {
        let e = event_fd().unwrap();
        let mut ready = vec![];
        poll_readable(&[e.as_raw_fd()], 0, &mut ready).unwrap();
        assert!(ready.is_empty());
        event_signal(&e);
        poll_readable(&[e.as_raw_fd()], 1_000_000_000, &mut ready).unwrap();
        assert_eq!(ready, vec![0]);
        event_clear(&e);
        poll_readable(&[e.as_raw_fd()], 0, &mut ready).unwrap();
        assert!(ready.is_empty());
    }
}
