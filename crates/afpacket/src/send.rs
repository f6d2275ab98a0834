//! Batched transmit: several frames in one sendmmsg(2).

use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// Sends `frames` in order with one sendmmsg call (`flags`, e.g.
/// MSG_DONTWAIT); returns how many the kernel took. An error is the call's
/// (none taken): what EAGAIN, ENOBUFS or EINTR mean is the caller's
/// policy.
pub fn send_batch(fd: impl AsFd, frames: &[&[u8]], flags: libc::c_int) -> io::Result<usize> {
    let n = frames.len().min(libc::c_uint::MAX as usize);
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
    // SAFETY: `msgs` and `iov` are alive during the call and point into
    // `frames`; the kernel only reads the frames (the `*mut` in iovec is
    // the C type, nothing is written through it).
    let r = unsafe { libc::sendmmsg(fd.as_fd().as_raw_fd(), msgs.as_mut_ptr(), n as libc::c_uint, flags) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as usize)
}
