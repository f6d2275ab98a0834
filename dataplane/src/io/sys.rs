//! The engine's only unsafe code: the Linux system calls of the real-time
//! ports (AF_PACKET sockets with a memory-mapped receive ring and batched
//! send, ppoll, an eventfd to wake the loop, the loop thread's scheduling
//! class). Each call is wrapped in a safe
//! function; buffers handed to the kernel are borrowed for the duration of
//! the call only, and their lengths come from the slices themselves.
//!
//! Review notes: every pointer passed below points into a live Rust slice
//! or struct of the right size for the call; no pointer is kept after the
//! call returns, except the receive ring's mapping, which `RxRing` owns
//! (unmapped once, on drop) and reads only inside frames the kernel has
//! handed to user space (status TP_STATUS_USER, read with acquire order)
//! until it hands them back (status TP_STATUS_KERNEL, stored with release
//! order); file descriptors are owned by `OwnedFd` and closed once.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

const ETH_P_ALL: u16 = 0x0003;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_VERSION: libc::c_int = 10;
const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
/// Where the kernel puts a frame's Ethernet header in a ring slot:
/// TPACKET_ALIGN(sizeof(tpacket2_hdr) + sizeof(sockaddr_ll) + 16) - 14.
const RING_MAC_OFFSET: usize = 66;
const RING_BLOCK: usize = 1 << 17;

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

/// The MTU of interface `name`, asked through socket `fd`.
fn if_mtu(fd: RawFd, name: &str) -> io::Result<usize> {
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    let bytes = name.as_bytes();
    if bytes.len() >= req.ifr_name.len() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "interface name too long"));
    }
    for (d, s) in req.ifr_name.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    // SAFETY: `req` is a live ifreq with a NUL-terminated name; the kernel
    // writes the MTU into its union.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFMTU, &mut req as *mut libc::ifreq) })?;
    // SAFETY: SIOCGIFMTU filled the union's int member.
    Ok(unsafe { req.ifr_ifru.ifru_mtu }.max(0) as usize)
}

/// A raw AF_PACKET socket bound to one interface (non-blocking; its own
/// transmissions are not looped back to it; a send buffer of `sndbuf`
/// bytes as the kernel counts them) whose received frames land in
/// a ring of about `ring_bytes` mapped into the process (TPACKET_V2: no
/// system call per frame; the ring is set up before the socket is bound,
/// so no frame ever waits elsewhere). Ring slots hold the interface's MTU
/// at opening (at least 1500 bytes); longer frames arrive cut.
pub fn packet_socket(ifname: &str, ring_bytes: usize, sndbuf: usize) -> io::Result<(OwnedFd, RxRing)> {
    let idx = if_index(ifname)?;
    // SAFETY: plain system call with integer arguments (protocol 0: nothing
    // is received before bind).
    let fd = cvt(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    setsockopt_int(fd, libc::SOL_PACKET, PACKET_VERSION, TPACKET_V2)?;
    let mtu = if_mtu(fd, ifname)?.max(1500);
    let ring = RxRing::new(&owned, mtu + 14, ring_bytes)?;
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
    // Older kernels lack the option; outgoing frames would then show in
    // the ring too: accept the error.
    let _ = setsockopt_int(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1);
    // The kernel doubles what it is asked for (bookkeeping overhead), and
    // caps SO_SNDBUF at net.core.wmem_max unless forced (root).
    let size = (sndbuf / 2).clamp(1, i32::MAX as usize) as libc::c_int;
    if setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, size).is_err() {
        let _ = setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, size);
    }
    Ok((owned, ring))
}

/// The socket's send buffer in bytes (what the kernel counts its queued
/// frames against, overhead included).
pub fn send_buffer(fd: &OwnedFd) -> io::Result<usize> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the pointer and length describe `v` and `len`, alive during
    // the call; the kernel writes at most `len` bytes.
    cvt(unsafe {
        libc::getsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, &mut v as *mut libc::c_int as *mut libc::c_void, &mut len)
    })?;
    Ok(v.max(0) as usize)
}

/// Bytes the kernel counts against the socket's send buffer now (SIOCOUTQ:
/// the frames it took that have not left yet, overhead included). The
/// kernel refuses a frame (EAGAIN) exactly when this is at least the send
/// buffer's size; only the loop's own sends make it grow.
pub fn send_queued(fd: &OwnedFd) -> io::Result<usize> {
    let mut v: libc::c_int = 0;
    // SAFETY: SIOCOUTQ writes one int into `v`, alive during the call.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCOUTQ, &mut v as *mut libc::c_int) })?;
    Ok(v.max(0) as usize)
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
    let mut st = libc::tpacket_stats { tp_packets: 0, tp_drops: 0 };
    let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
    // SAFETY: the pointer and length describe `st` and `len`, alive during
    // the call; the kernel writes at most `len` bytes.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            PACKET_STATISTICS,
            &mut st as *mut libc::tpacket_stats as *mut libc::c_void,
            &mut len,
        )
    };
    if r < 0 {
        0
    } else {
        st.tp_drops as u64
    }
}

/// A TPACKET_V2 receive ring mapped from a packet socket: fixed-size
/// slots the kernel fills in order and user space hands back in order.
pub struct RxRing {
    base: std::ptr::NonNull<u8>,
    map_len: usize,
    slot: usize,
    slots: usize,
    head: usize,
}

// SAFETY: the mapping belongs to this value alone (no other copy of the
// pointer exists); moving it to another thread moves that ownership.
unsafe impl Send for RxRing {}

impl RxRing {
    /// Sets up and maps the ring of socket `fd` (before it is bound): slots
    /// for frames of `frame` bytes, about `bytes` in all.
    fn new(fd: &OwnedFd, frame: usize, bytes: usize) -> io::Result<RxRing> {
        let slot = (RING_MAC_OFFSET + frame + 2).next_power_of_two().max(2048);
        let block = RING_BLOCK.max(slot);
        let per_block = block / slot;
        let blocks = (bytes / block).max(1);
        let req = libc::tpacket_req {
            tp_block_size: block as libc::c_uint,
            tp_block_nr: blocks as libc::c_uint,
            tp_frame_size: slot as libc::c_uint,
            tp_frame_nr: (blocks * per_block) as libc::c_uint,
        };
        // SAFETY: the pointer and length describe `req`, alive during the call.
        cvt(unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_PACKET,
                PACKET_RX_RING,
                &req as *const libc::tpacket_req as *const libc::c_void,
                std::mem::size_of::<libc::tpacket_req>() as libc::socklen_t,
            )
        })?;
        let map_len = block * blocks;
        // SAFETY: maps the ring the kernel just allocated for `fd`, of the
        // size it was asked for; the kernel checks both.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), map_len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd.as_raw_fd(), 0)
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = std::ptr::NonNull::new(p as *mut u8).ok_or_else(|| io::Error::other("mmap returned null"))?;
        // Slots never straddle blocks: block is a multiple of slot (both
        // powers of two), so slot i starts at i * slot.
        Ok(RxRing { base, map_len, slot, slots: blocks * per_block, head: 0 })
    }

    /// Bytes of one slot's frame at most (longer frames arrive cut).
    pub fn max_frame(&self) -> usize {
        self.slot - RING_MAC_OFFSET
    }

    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: slot i lies inside the mapping (i < slots, slots * slot
        // <= map_len) and starts with the 4-byte, 16-aligned tp_status the
        // kernel and this process both access atomically.
        unsafe { &*(self.base.as_ptr().add(i * self.slot) as *const AtomicU32) }
    }

    /// Whether the next frame is ready (no system call).
    pub fn ready(&self) -> bool {
        self.status(self.head).load(Ordering::Acquire) & TP_STATUS_USER != 0
    }

    /// Whether at least `n` frames are ready (the kernel fills slots in
    /// order: the n-th from the head is enough to look at).
    pub fn has(&self, n: usize) -> bool {
        let i = (self.head + n.clamp(1, self.slots) - 1) % self.slots;
        self.status(i).load(Ordering::Acquire) & TP_STATUS_USER != 0
    }

    /// The next frame the kernel has handed over, if any; it goes back to
    /// the kernel when the returned value is dropped.
    pub fn take(&mut self) -> Option<RxFrame<'_>> {
        let st = self.status(self.head).load(Ordering::Acquire);
        if st & TP_STATUS_USER == 0 {
            return None;
        }
        // SAFETY: the slot is user-owned now (status read with acquire
        // after the kernel's release): the kernel does not write it until
        // the status is set back; tpacket2_hdr fits at the slot's start.
        let h = unsafe { std::ptr::read(self.base.as_ptr().add(self.head * self.slot) as *const libc::tpacket2_hdr) };
        let off = (h.tp_mac as usize).min(self.slot);
        let cap = (h.tp_snaplen as usize).min(self.slot - off);
        let vlan = (st & TP_STATUS_VLAN_VALID != 0).then(|| {
            let tpid = if st & TP_STATUS_VLAN_TPID_VALID != 0 { h.tp_vlan_tpid } else { 0x8100 };
            (tpid, h.tp_vlan_tci)
        });
        Some(RxFrame { ring: self, off, cap, len: h.tp_len as usize, vlan })
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, once; no frame
        // borrows the ring any more (RxFrame holds `&mut self`).
        unsafe {
            libc::munmap(self.base.as_ptr() as *mut libc::c_void, self.map_len);
        }
    }
}

/// A received frame, still in the ring.
pub struct RxFrame<'a> {
    ring: &'a mut RxRing,
    off: usize,
    cap: usize,
    len: usize,
    vlan: Option<(u16, u16)>,
}

impl RxFrame<'_> {
    /// The bytes captured (all of them unless `cut`); without the VLAN tag
    /// the kernel took out of the frame (see `vlan`).
    pub fn data(&self) -> &[u8] {
        // SAFETY: off + cap <= slot (clamped in `next`), inside the slot this
        // frame owns until drop; the kernel does not write a user-owned slot.
        unsafe { std::slice::from_raw_parts(self.ring.base.as_ptr().add(self.ring.head * self.ring.slot + self.off), self.cap) }
    }

    /// Whether the frame was longer than its slot (its tail is missing).
    pub fn cut(&self) -> bool {
        self.cap < self.len
    }

    /// The VLAN tag (TPID, TCI) the kernel moved out of the frame, to be
    /// put back after the MAC addresses (as libpcap does).
    pub fn vlan(&self) -> Option<(u16, u16)> {
        self.vlan
    }
}

impl Drop for RxFrame<'_> {
    fn drop(&mut self) {
        let r = &mut *self.ring;
        r.status(r.head).store(TP_STATUS_KERNEL, Ordering::Release);
        r.head = (r.head + 1) % r.slots;
    }
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

/// Frames one `send_batch` call sends at most.
pub const MAX_SEND: usize = 1024;

/// Sends the frames in order; returns how many the kernel took before its
/// send buffer was full (0: none fit now) or an error stopped it: the
/// frame after those taken could not be sent (the error, when none was
/// taken; otherwise the next call reports it).
pub fn send_batch(fd: &OwnedFd, frames: &[&[u8]]) -> io::Result<usize> {
    let n = frames.len().min(MAX_SEND);
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

/// Waits until one of `fds` is ready or `timeout_ns` passes; fills `ready`
/// with the ready ones' positions. Each fd is watched for reading, and
/// also for writing when its flag is set (a packet socket is writable
/// once its send buffer is less than half full).
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
        return Err(e);
    }
    for (i, p) in pfds.iter().enumerate() {
        if p.revents & (p.events | libc::POLLERR | libc::POLLHUP) != 0 {
            ready.push(i);
        }
    }
    Ok(())
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
        assert!(if_index("no-such-if0").is_err());
        assert!(packet_socket("no-such-if0", 1 << 20, 1 << 20).is_err());
        assert!(if_index("a\0b").is_err());
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
    fn the_ring_says_how_many_frames_wait() {
        // needs root: lo in a network namespace of this thread's own, whose
        // sends come back in on it
        std::thread::spawn(|| {
            // SAFETY: plain system call; affects the calling thread only.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                return;
            }
            let up = std::process::Command::new("ip").args(["link", "set", "lo", "up"]).output();
            if !up.is_ok_and(|o| o.status.success()) {
                return;
            }
            let (fd, mut ring) = packet_socket("lo", 1 << 20, 212_992).unwrap();
            assert!(!ring.ready() && !ring.has(1));
            let frame = [0u8; 60];
            for _ in 0..5 {
                assert_eq!(send_batch(&fd, &[&frame]).unwrap(), 1);
            }
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
            while !ring.has(5) && std::time::Instant::now() < deadline {
                std::thread::yield_now();
            }
            assert!(ring.ready() && ring.has(1) && ring.has(5) && !ring.has(6));
            drop(ring.take());
            assert!(ring.has(4) && !ring.has(5), "one taken");
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
