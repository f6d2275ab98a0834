//! A packet socket's receive ring mapped into the process.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::ptr::NonNull;

use crate::sys::os_error;

/// The mapping of the ring the kernel allocated for a socket
/// (PACKET_RX_RING); unmapped once, on drop. It stays valid after the
/// socket is closed.
pub(crate) struct RingMap {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping belongs to this value alone (no other copy of the
// pointer exists); moving it to another thread moves that ownership.
unsafe impl Send for RingMap {}

impl RingMap {
    /// Maps `len` bytes of socket `fd`'s ring. With `locked` the pages are
    /// locked in memory when the memlock limit allows (no page faults on
    /// first touch), else mapped plainly.
    pub(crate) fn new(fd: impl AsFd, len: usize, locked: bool) -> io::Result<RingMap> {
        let fd = fd.as_fd().as_raw_fd();
        let map = |flags: libc::c_int| {
            // SAFETY: maps the ring the kernel allocated for `fd`, of the
            // size it was asked for; the kernel checks both.
            unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, fd, 0) }
        };
        let mut p = if locked { map(libc::MAP_SHARED | libc::MAP_LOCKED) } else { libc::MAP_FAILED };
        if p == libc::MAP_FAILED {
            p = map(libc::MAP_SHARED);
        }
        if p == libc::MAP_FAILED {
            return Err(os_error("mmap of the receive ring"));
        }
        let base = NonNull::new(p as *mut u8).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(RingMap { base, len })
    }

    /// The mapping's first byte.
    pub(crate) fn base(&self) -> *mut u8 {
        self.base.as_ptr()
    }
}

impl Drop for RingMap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, once; the rings
        // hand out no reference that outlives them.
        unsafe {
            libc::munmap(self.base.as_ptr() as *mut libc::c_void, self.len);
        }
    }
}
