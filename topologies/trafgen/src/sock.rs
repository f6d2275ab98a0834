//! The only module with `unsafe`: AF_PACKET sockets, batched transmit with
//! sendmmsg(2), a TPACKET_V3 receive ring, interface queries (done with
//! ioctls on the socket, so they see the caller's network namespace; /sys
//! does not under Mininet's mnexec), clocks and the stop signal.

use std::ffi::CString;
use std::io;
use std::sync::atomic::{fence, AtomicBool, Ordering};

use crate::packet::MacAddr;

const ETH_P_ALL: u16 = 0x0003;
const SOL_PACKET: libc::c_int = 263;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const TPACKET_V3: libc::c_int = 2;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;

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

fn last_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

fn ifreq_for(name: &str) -> io::Result<libc::ifreq> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad interface name '{name}'")));
    }
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (i, b) in name.bytes().enumerate() {
        req.ifr_name[i] = b as libc::c_char;
    }
    Ok(req)
}

/// Index, hardware address and MTU of an interface in this namespace.
pub struct IfInfo {
    pub index: i32,
    pub mac: MacAddr,
    pub mtu: u32,
}

pub fn if_info(fd: libc::c_int, name: &str) -> io::Result<IfInfo> {
    let cname = CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in name"))?;
    let index = unsafe { libc::if_nametoindex(cname.as_ptr()) };
    if index == 0 {
        return Err(io::Error::new(io::ErrorKind::NotFound, format!("no interface '{name}' in this network namespace")));
    }
    let mut req = ifreq_for(name)?;
    if unsafe { libc::ioctl(fd, libc::SIOCGIFHWADDR, &mut req) } < 0 {
        return Err(last_err("SIOCGIFHWADDR"));
    }
    let mut mac = [0u8; 6];
    let sa = unsafe { req.ifr_ifru.ifru_hwaddr };
    for (i, m) in mac.iter_mut().enumerate() {
        *m = sa.sa_data[i] as u8;
    }
    let mut req = ifreq_for(name)?;
    if unsafe { libc::ioctl(fd, libc::SIOCGIFMTU, &mut req) } < 0 {
        return Err(last_err("SIOCGIFMTU"));
    }
    let mtu = unsafe { req.ifr_ifru.ifru_mtu } as u32;
    Ok(IfInfo { index: index as i32, mac, mtu })
}

fn packet_socket() -> io::Result<libc::c_int> {
    // protocol 0: receives nothing until bound with a protocol
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        let hint = if e.raw_os_error() == Some(libc::EPERM) { " (raw sockets need root or CAP_NET_RAW)" } else { "" };
        return Err(io::Error::new(e.kind(), format!("AF_PACKET socket: {e}{hint}")));
    }
    Ok(fd)
}

fn setsockopt<T>(fd: libc::c_int, level: libc::c_int, name: libc::c_int, v: &T, what: &str) -> io::Result<()> {
    let r = unsafe {
        libc::setsockopt(fd, level, name, v as *const T as *const libc::c_void, std::mem::size_of::<T>() as u32)
    };
    if r < 0 {
        return Err(last_err(what));
    }
    Ok(())
}

fn bind(fd: libc::c_int, ifindex: i32, proto: u16) -> io::Result<()> {
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = proto.to_be();
    sll.sll_ifindex = ifindex;
    let r = unsafe {
        libc::bind(fd, &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                   std::mem::size_of::<libc::sockaddr_ll>() as u32)
    };
    if r < 0 {
        return Err(last_err("bind"));
    }
    Ok(())
}

pub struct TxSocket {
    fd: libc::c_int,
    pub info: IfInfo,
}

impl TxSocket {
    /// A transmit-only socket on `iface`. With `qdisc_bypass` frames skip
    /// the interface's qdisc (faster, but no htb shaping applies).
    pub fn open(iface: &str, qdisc_bypass: bool) -> io::Result<TxSocket> {
        let fd = packet_socket()?;
        let s = TxSocket { fd, info: if_info(fd, iface)? };
        let buf: libc::c_int = 8 << 20;
        // best effort: SO_SNDBUFFORCE passes net.core.wmem_max as root
        let _ = setsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &buf, "SO_SNDBUFFORCE");
        if qdisc_bypass {
            let one: libc::c_int = 1;
            setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, "PACKET_QDISC_BYPASS")?;
        }
        bind(fd, s.info.index, 0)?;
        Ok(s)
    }

    /// Sends frames with as few sendmmsg calls as it takes. Returns how many
    /// were sent before an error that stopped it: ENOBUFS/EAGAIN (the qdisc
    /// or socket buffer is full) return the count so far, the caller retries
    /// the rest later; other errors are returned.
    pub fn send_batch(&self, frames: &mut [(&mut [u8], usize)]) -> io::Result<usize> {
        let n = frames.len();
        let mut iov: Vec<libc::iovec> = frames
            .iter_mut()
            .map(|(b, len)| libc::iovec { iov_base: b.as_mut_ptr() as *mut libc::c_void, iov_len: *len })
            .collect();
        let mut msgs: Vec<libc::mmsghdr> = (0..n)
            .map(|i| {
                let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
                m.msg_hdr.msg_iov = &mut iov[i];
                m.msg_hdr.msg_iovlen = 1;
                m
            })
            .collect();
        let mut done = 0;
        while done < n {
            let r = unsafe { libc::sendmmsg(self.fd, msgs[done..].as_mut_ptr(), (n - done) as u32, 0) };
            if r < 0 {
                let e = io::Error::last_os_error();
                return match e.raw_os_error() {
                    Some(libc::ENOBUFS) | Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(done),
                    Some(libc::EMSGSIZE) => Err(io::Error::new(e.kind(),
                        format!("frame longer than the interface MTU ({}) allows: {e}", self.info.mtu))),
                    _ => Err(io::Error::new(e.kind(), format!("sendmmsg: {e}"))),
                };
            }
            done += r as usize;
        }
        Ok(done)
    }
}

impl Drop for TxSocket {
    fn drop(&mut self) {
        unsafe { libc::close(self.fd) };
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
    fd: libc::c_int,
    map: *mut u8,
    block_size: usize,
    block_nr: usize,
    next: usize,
    stats: RingStats,
    pub info: IfInfo,
}

/// One received frame: kernel timestamp (CLOCK_REALTIME ns), its length on
/// the wire, and its first bytes (up to the snap length).
pub struct Frame<'a> {
    pub ts_ns: u64,
    pub wire_len: u32,
    pub data: &'a [u8],
}

impl RxRing {
    /// A TPACKET_V3 ring of `block_nr` blocks of `block_size` bytes on
    /// `iface`. Frames are cut to `snaplen` bytes by a socket filter (the
    /// probe is near the start; copying less keeps big frames cheap).
    /// Frames the interface itself sends are ignored unless `outgoing`.
    pub fn open(iface: &str, block_size: usize, block_nr: usize, snaplen: u32, outgoing: bool) -> io::Result<RxRing> {
        let fd = packet_socket()?;
        let info = match if_info(fd, iface) {
            Ok(i) => i,
            Err(e) => {
                unsafe { libc::close(fd) };
                return Err(e);
            }
        };
        let mut ring = RxRing { fd, map: std::ptr::null_mut(), block_size, block_nr, next: 0,
                                stats: RingStats::default(), info };
        setsockopt(fd, SOL_PACKET, PACKET_VERSION, &TPACKET_V3, "PACKET_VERSION")?;
        let ret = [libc::sock_filter { code: 0x06, jt: 0, jf: 0, k: snaplen }];
        let prog = libc::sock_fprog { len: 1, filter: ret.as_ptr() as *mut libc::sock_filter };
        setsockopt(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &prog, "SO_ATTACH_FILTER")?;
        if !outgoing {
            let one: libc::c_int = 1;
            setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, "PACKET_IGNORE_OUTGOING")?;
        }
        let req = libc::tpacket_req3 {
            tp_block_size: block_size as u32,
            tp_block_nr: block_nr as u32,
            tp_frame_size: 2048,
            tp_frame_nr: (block_size / 2048 * block_nr) as u32,
            tp_retire_blk_tov: 10, // ms: hand over a partly filled block after this
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, "PACKET_RX_RING")?;
        let len = block_size * block_nr;
        let map = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE,
                       libc::MAP_SHARED | libc::MAP_LOCKED, fd, 0)
        };
        let map = if map == libc::MAP_FAILED {
            // MAP_LOCKED can fail under a low memlock limit; try without
            let m = unsafe {
                libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0)
            };
            if m == libc::MAP_FAILED {
                return Err(last_err("mmap of the receive ring"));
            }
            m
        } else {
            map
        };
        ring.map = map as *mut u8;
        bind(fd, ring.info.index, ETH_P_ALL)?;
        Ok(ring)
    }

    fn block(&self, i: usize) -> *mut u8 {
        unsafe { self.map.add(i * self.block_size) }
    }

    fn block_status(&self, i: usize) -> u32 {
        let s = unsafe { std::ptr::read_volatile(self.block(i).add(8) as *const u32) };
        fence(Ordering::Acquire);
        s
    }

    /// Waits up to `timeout_ms` for the next filled block and calls `f` for
    /// each frame in it. Returns the number of frames seen (0 on timeout).
    pub fn poll_block<F: FnMut(Frame)>(&mut self, timeout_ms: i32, mut f: F) -> io::Result<usize> {
        let i = self.next;
        if self.block_status(i) & TP_STATUS_USER == 0 {
            let mut pfd = libc::pollfd { fd: self.fd, events: libc::POLLIN | libc::POLLERR, revents: 0 };
            let r = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    return Ok(0);
                }
                return Err(io::Error::new(e.kind(), format!("poll: {e}")));
            }
            if self.block_status(i) & TP_STATUS_USER == 0 {
                return Ok(0);
            }
        }
        let b = self.block(i);
        let n;
        unsafe {
            n = std::ptr::read_volatile(b.add(12) as *const u32) as usize;
            let mut p = b.add(std::ptr::read_volatile(b.add(16) as *const u32) as usize);
            for _ in 0..n {
                let rd = |off: usize| std::ptr::read_volatile(p.add(off) as *const u32);
                let next = rd(0) as usize;
                let ts_ns = rd(4) as u64 * 1_000_000_000 + rd(8) as u64;
                let snap = rd(12) as usize;
                let wire_len = rd(16);
                let mac = std::ptr::read_volatile(p.add(24) as *const u16) as usize;
                let data = std::slice::from_raw_parts(p.add(mac), snap);
                f(Frame { ts_ns, wire_len, data });
                if next == 0 {
                    break;
                }
                p = p.add(next);
            }
            fence(Ordering::Release);
            std::ptr::write_volatile(b.add(8) as *mut u32, TP_STATUS_KERNEL);
        }
        self.next = (i + 1) % self.block_nr;
        Ok(n)
    }

    /// Ring counters since opening (the kernel resets them on each read).
    pub fn stats(&mut self) -> RingStats {
        let mut st = [0u32; 3]; // tpacket_stats_v3: packets, drops, freeze_q_cnt
        let mut len = std::mem::size_of_val(&st) as libc::socklen_t;
        let r = unsafe {
            libc::getsockopt(self.fd, SOL_PACKET, PACKET_STATISTICS, st.as_mut_ptr() as *mut libc::c_void, &mut len)
        };
        if r == 0 {
            self.stats.packets += st[0] as u64;
            self.stats.drops += st[1] as u64;
            self.stats.freezes += st[2] as u64;
        }
        self.stats
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        unsafe {
            if !self.map.is_null() {
                libc::munmap(self.map as *mut libc::c_void, self.block_size * self.block_nr);
            }
            libc::close(self.fd);
        }
    }
}
