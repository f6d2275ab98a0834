//! The engine's system calls: its real-time ports' AF_PACKET policy over
//! the shared crates/afpacket (which holds those calls and the receive
//! ring: a ring sized for the interface's MTU, the send buffer the loop
//! counts against, non-blocking batched sends), and the crate's only
//! unsafe code: an eventfd to wake the loop, the loop thread's scheduling
//! class. Each call is wrapped in a safe function; buffers handed to the
//! kernel are borrowed for the duration of the call only; file
//! descriptors are owned by `OwnedFd` and closed once.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use afpacket::{iface, send, socket, FrameRing};

pub use afpacket::poll::poll_ready;
pub use afpacket::socket::{send_buffer, send_queued};

/// A raw AF_PACKET socket bound to one interface (non-blocking; its own
/// transmissions are not looped back to it; a send buffer of `sndbuf`
/// bytes as the kernel counts them) whose received frames land in
/// a ring of about `ring_bytes` mapped into the process (TPACKET_V2: no
/// system call per frame; the ring is set up before the socket is bound,
/// so no frame ever waits elsewhere). Ring slots hold the interface's MTU
/// at opening (at least 1500 bytes); longer frames arrive cut.
pub fn packet_socket(ifname: &str, ring_bytes: usize, sndbuf: usize) -> io::Result<(OwnedFd, FrameRing)> {
    let idx = iface::index(ifname)?;
    let fd = socket::open(true)?;
    let mtu = (iface::mtu(&fd, ifname)? as usize).max(1500);
    let ring = FrameRing::new(&fd, mtu + 14, ring_bytes)?;
    socket::bind(&fd, idx, socket::ETH_P_ALL)?;
    // Older kernels lack the option; outgoing frames would then show in
    // the ring too: accept the error.
    let _ = socket::ignore_outgoing(&fd);
    // capped at net.core.wmem_max unless forced (root)
    let _ = socket::set_send_buffer(&fd, sndbuf);
    Ok((fd, ring))
}

/// At most what the kernel charges a packet socket's send buffer for a
/// frame of `len` bytes: the skb's truesize, its data (with headroom and
/// the 320-byte shared info) rounded up to a kmalloc size, or page
/// fragments for long frames, plus the sk_buff itself.
pub fn send_charge_bound(len: usize) -> usize {
    if len + 768 <= 4096 {
        (len + 768).next_power_of_two() + 512
    } else {
        len + 8192
    }
}

/// Frames the kernel dropped since the last call because the socket's
/// ring was full (PACKET_STATISTICS, which resets the kernel's counters).
pub fn rx_dropped(fd: &OwnedFd) -> u64 {
    socket::statistics(fd).map_or(0, |st| st.drops)
}

/// Frames one `send_batch` call sends at most.
pub const MAX_SEND: usize = 1024;

/// Sends the frames in order; returns how many the kernel took before its
/// send buffer was full (0: none fit now) or an error stopped it: the
/// frame after those taken could not be sent (the error, when none was
/// taken; otherwise the next call reports it).
pub fn send_batch(fd: &OwnedFd, frames: &[&[u8]]) -> io::Result<usize> {
    match send::send_batch(fd, &frames[..frames.len().min(MAX_SEND)], libc::MSG_DONTWAIT) {
        Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => Ok(0),
        r => r,
    }
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Puts the calling thread in the real-time class (SCHED_FIFO at
/// `priority`, 1..=99), or back in normal scheduling (SCHED_OTHER) with 0.
/// Needs CAP_SYS_NICE (or an RLIMIT_RTPRIO) for the real-time class.
pub fn set_thread_priority(priority: i32) -> io::Result<()> {
    let param = libc::sched_param { sched_priority: priority.clamp(0, 99) };
    let policy = if priority > 0 { libc::SCHED_FIFO } else { libc::SCHED_OTHER };
    // SAFETY: `param` is alive during the call; pid 0 is the calling thread.
    cvt(unsafe { libc::sched_setscheduler(0, policy, &param) }).map(|_| ())
}

/// The calling thread's SCHED_FIFO priority (0: not in that class).
pub fn thread_priority() -> i32 {
    // SAFETY: plain system call; pid 0 is the calling thread.
    let policy = unsafe { libc::sched_getscheduler(0) };
    if policy != libc::SCHED_FIFO {
        return 0;
    }
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is alive during the call and written by it.
    if unsafe { libc::sched_getparam(0, &mut param) } < 0 {
        return 0;
    }
    param.sched_priority
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
        let e = packet_socket("no-such-if0", 1 << 20, 1 << 20).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("no-such-if0"), "{e}");
        assert!(packet_socket("a\0b", 1 << 20, 1 << 20).is_err());
    }

    #[test]
    fn the_send_buffer_is_what_was_asked_for() {
        // needs CAP_NET_RAW (root): a packet socket on the loopback device
        if let Ok((fd, _ring)) = packet_socket("lo", 1 << 20, 212_992) {
            assert_eq!(send_buffer(&fd).unwrap(), 212_992, "the kernel's count, overhead included");
        }
    }

    #[test]
    fn the_kernel_refuses_a_frame_exactly_when_the_send_buffer_holds_its_size() {
        // needs root, ip and tc: lo in a network namespace of this thread's
        // own (gone with it), shaped so that the frames wait in its qdisc
        std::thread::spawn(|| {
            // SAFETY: plain system call; affects the calling thread only.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                return;
            }
            let run = |a: &[&str]| std::process::Command::new(a[0]).args(&a[1..]).output().is_ok_and(|o| o.status.success());
            let tbf = ["tc", "qdisc", "replace", "dev", "lo", "root", "tbf", "rate", "8kbit", "burst", "10000", "limit", "100000000"];
            if !run(&["ip", "link", "set", "lo", "up"]) || !run(&tbf) {
                return;
            }
            for len in [60usize, 1514, 9000] {
                let (fd, _ring) = packet_socket("lo", 1 << 20, 212_992).unwrap();
                let sndbuf = send_buffer(&fd).unwrap();
                let frame = vec![0u8; len];
                let mut sent = 0;
                loop {
                    let before = send_queued(&fd).unwrap();
                    if send_batch(&fd, &[&frame]).unwrap() == 0 {
                        assert!(before >= sndbuf, "{len} B: refused while holding {before} of {sndbuf}");
                        break;
                    }
                    assert!(before < sndbuf, "{len} B: taken while holding {before} of {sndbuf}");
                    let charged = send_queued(&fd).unwrap().saturating_sub(before);
                    assert!(charged <= send_charge_bound(len), "{len} B charged {charged}");
                    sent += 1;
                }
                assert!(sent >= sndbuf / send_charge_bound(len), "{len} B: {sent} frames taken");
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn normal_priority_is_always_allowed() {
        std::thread::spawn(|| {
            set_thread_priority(0).unwrap();
            assert_eq!(thread_priority(), 0);
            // root may enter the real-time class; anyone else is refused
            if set_thread_priority(3).is_ok() {
                assert_eq!(thread_priority(), 3);
                set_thread_priority(0).unwrap();
                assert_eq!(thread_priority(), 0);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn eventfd_wakes_poll() {
        let e = event_fd().unwrap();
        let mut ready = vec![];
        poll_ready(&[(e.as_raw_fd(), false)], 0, &mut ready).unwrap();
        assert!(ready.is_empty());
        event_signal(&e);
        poll_ready(&[(e.as_raw_fd(), false)], 1_000_000_000, &mut ready).unwrap();
        assert_eq!(ready, vec![0]);
        event_clear(&e);
        poll_ready(&[(e.as_raw_fd(), false)], 0, &mut ready).unwrap();
        assert!(ready.is_empty());
        // an eventfd below its maximum count is writable: asked for, reported
        poll_ready(&[(e.as_raw_fd(), true)], 0, &mut ready).unwrap();
        assert_eq!(ready, vec![0]);
    }
}
