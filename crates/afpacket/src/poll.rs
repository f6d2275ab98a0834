//! Waiting for sockets (and other descriptors) with ppoll(2).

use std::io;
use std::os::fd::RawFd;

/// Waits until one of `fds` is ready or `timeout_ns` passes; fills `ready`
/// with the ready ones' positions (none when a signal interrupted the
/// wait). Each fd is watched for reading, and also for writing when its
/// flag is set (a packet socket is writable once its send buffer is less
/// than half full).
pub fn poll_ready(fds: &[(RawFd, bool)], timeout_ns: u64, ready: &mut Vec<usize>) -> io::Result<()> {
    ready.clear();
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|(fd, w)| libc::pollfd { fd: *fd, events: libc::POLLIN | if *w { libc::POLLOUT } else { 0 }, revents: 0 })
        .collect();
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
        return Err(io::Error::new(e.kind(), format!("ppoll: {e}")));
    }
    for (i, p) in pfds.iter().enumerate() {
        if p.revents & (p.events | libc::POLLERR | libc::POLLHUP) != 0 {
            ready.push(i);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_is_ready_to_read_once_written() {
        let mut p = [0 as libc::c_int; 2];
        // SAFETY: `p` holds the two descriptors pipe() writes.
        assert_eq!(unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        let mut ready = vec![7];
        poll_ready(&[(p[0], false)], 0, &mut ready).unwrap();
        assert!(ready.is_empty());
        // the write end is writable: asked for, reported; not asked, not
        poll_ready(&[(p[0], false), (p[1], true)], 0, &mut ready).unwrap();
        assert_eq!(ready, vec![1]);
        // SAFETY: writes one byte from a live buffer.
        assert_eq!(unsafe { libc::write(p[1], b"x".as_ptr() as *const libc::c_void, 1) }, 1);
        poll_ready(&[(p[1], false), (p[0], false)], 1_000_000_000, &mut ready).unwrap();
        assert_eq!(ready, vec![1]);
        // SAFETY: closes the two descriptors made above, once.
        unsafe {
            libc::close(p[0]);
            libc::close(p[1]);
        }
    }
}
