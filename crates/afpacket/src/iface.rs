//! What a network interface is, asked in the caller's network namespace:
//! its index by name, and its MTU and hardware address by ioctls on a
//! socket (/sys shows another namespace's view under Mininet's mnexec).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd};

use crate::sys::{cvt, os_error};

/// The index of interface `name`.
pub fn index(name: &str) -> io::Result<u32> {
    let c = CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name has a NUL byte"))?;
    // SAFETY: `c` is a valid NUL-terminated string for the call's duration.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(io::ErrorKind::NotFound, format!("no interface '{name}' in this network namespace ({e})")));
    }
    Ok(i)
}

/// An ifreq naming interface `name` (the rest zero).
fn request(name: &str) -> io::Result<libc::ifreq> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('\0') {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad interface name '{name}'")));
    }
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(req)
}

/// The MTU of interface `name`, asked through socket `fd`.
pub fn mtu(fd: impl AsFd, name: &str) -> io::Result<u32> {
    let mut req = request(name)?;
    // SAFETY: `req` is a live ifreq with a NUL-terminated name; the kernel
    // writes the MTU into its union.
    cvt(unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), libc::SIOCGIFMTU, &mut req as *mut libc::ifreq) })
        .map_err(|_| os_error("SIOCGIFMTU"))?;
    // SAFETY: SIOCGIFMTU filled the union's int member.
    Ok(unsafe { req.ifr_ifru.ifru_mtu }.max(0) as u32)
}

/// The hardware (MAC) address of interface `name`, asked through socket `fd`.
pub fn hwaddr(fd: impl AsFd, name: &str) -> io::Result<[u8; 6]> {
    let mut req = request(name)?;
    // SAFETY: as in `mtu`; the kernel writes a sockaddr into the union.
    cvt(unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), libc::SIOCGIFHWADDR, &mut req as *mut libc::ifreq) })
        .map_err(|_| os_error("SIOCGIFHWADDR"))?;
    // SAFETY: SIOCGIFHWADDR filled the union's sockaddr member.
    let sa = unsafe { req.ifr_ifru.ifru_hwaddr };
    let mut mac = [0u8; 6];
    for (m, d) in mac.iter_mut().zip(sa.sa_data.iter()) {
        *m = *d as u8;
    }
    Ok(mac)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_or_bad_names_are_errors() {
        let e = index("no-such-if0").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("no-such-if0"), "{e}");
        assert_eq!(index("a\0b").unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(request("").unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(request("sixteen-bytes-xx").unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn loopback_is_known() {
        // any socket will do for the ioctls (a UDP one needs no privilege)
        // SAFETY: plain system call with integer arguments.
        let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        assert!(raw >= 0);
        // SAFETY: `raw` was just returned by socket() and is owned by nobody else.
        let fd = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) };
        assert!(index("lo").unwrap() > 0);
        assert!(mtu(&fd, "lo").unwrap() >= 1500);
        assert_eq!(hwaddr(&fd, "lo").unwrap(), [0; 6]);
    }
}
