//! Error and socket-option helpers of the crate's system calls.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// A system call's result: negative is the thread's errno.
pub(crate) fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// The thread's errno as an error that says which call failed (same kind).
pub(crate) fn os_error(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Plain old data a socket option is set from: C structs and integers
/// whose every byte the kernel may read.
pub(crate) trait OptionValue: Copy {}
impl OptionValue for libc::c_int {}
impl OptionValue for libc::tpacket_req {}
impl OptionValue for libc::tpacket_req3 {}
impl OptionValue for libc::sock_fprog {}

pub(crate) fn set_option<T: OptionValue>(fd: impl AsFd, level: libc::c_int, name: libc::c_int, v: &T, what: &str) -> io::Result<()> {
    // SAFETY: the pointer and length describe `v`, alive during the call;
    // the kernel only reads it.
    let r = unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
            level,
            name,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(os_error(what));
    }
    Ok(())
}

/// An integer socket option's value.
pub(crate) fn get_int_option(fd: impl AsFd, level: libc::c_int, name: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the pointer and length describe `v` and `len`, alive during
    // the call; the kernel writes at most `len` bytes.
    let r = unsafe { libc::getsockopt(fd.as_fd().as_raw_fd(), level, name, &mut v as *mut libc::c_int as *mut libc::c_void, &mut len) };
    if r < 0 {
        return Err(os_error(what));
    }
    Ok(v)
}
