//! Real time: the switch's ports are Linux interfaces, and one thread moves
//! packets between them and the engine, driven by the wall clock.
//!
//! Each port's received frames land in a ring mapped from the kernel
//! (PACKET_RX_RING): the loop takes them without a system call, and waits
//! (ppoll) only when every ring is empty, until a port has frames, another
//! thread wakes it, or the switch's next event is due. It runs each frame
//! through the same `Switch` the simulator uses, at the wall-clock time,
//! and after each frame lets the switch process everything due (egress
//! services, line-rate shaping), then sends what left the switch in
//! batches (sendmmsg). Frames
//! for the CPU port and digests become events another thread takes; frames
//! for ports without an interface are dropped and counted (as BMv2 does). The engine lock is held only while the
//! switch runs, so control-plane calls interleave with traffic.
//!
//! Egress back-pressure, as on BMv2 (whose blocking send on a socket with
//! the kernel's default send buffer waits while a shaped link is backed
//! up): each port's socket has a send buffer of [`SNDBUF`] bytes (about 90
//! full-size frames). When the kernel refuses a port's frames (the buffer
//! is full: a shaped link or a slow peer), the refused frames wait in the
//! loop and the port stops dequeuing ([`Switch::set_tx_credit`] 0): its
//! packets stay in the traffic manager's queues, which fill, mark and drop
//! as the program and the configuration say. The loop never waits for one
//! port: it retries the refused frames each round, and when idle it also
//! wakes when the socket is writable (POLLOUT). Once they are taken the
//! port dequeues [`RESUME_WINDOW`] packets a round, twice as many each round
//! the kernel takes them all, and runs free again once its queue empties
//! within a round's window or the window reaches [`MAX_WINDOW`]. A frame
//! the kernel refuses for another reason (its qdisc full: ENOBUFS; longer
//! than the MTU; the interface down) is dropped and counted (tx_errors),
//! as BMv2 ignores a failed send; it is never sent again.
//!
//! The loop's thread runs at real-time priority (SCHED_FIFO, when the
//! process may) while it keeps up: woken host processes no longer preempt
//! it in the middle of a batch. A loop busy for longer than
//! [`RT_BUSY_LIMIT`] without going idle (a flood it cannot keep up with, a
//! broadcast storm between switches) steps down to normal scheduling until
//! it next goes idle, so it never starves the machine's other processes.
//!
//! With traces on ([`super::trace`]), the switch runs one event at a time
//! and each packet's records (arrival, log_msg lines, drops, departures)
//! queue for another thread, as events do; with traces off the loop runs
//! as if there were none (one flag read per wake-up).

use super::pcap::PcapWriter;
use super::sys;
use super::trace::{TraceCfg, TraceEv, Tracer};
use crate::engine::{Output, Switch};
use crate::tm::TX_UNLIMITED;
use std::collections::{BTreeMap, VecDeque};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Frames taken from one port per round before the others get a turn.
pub const BATCH: usize = 64;
/// Each port's receive ring (slots hold the interface's MTU; bigger,
/// offloaded frames are cut and counted as truncated).
pub const RING_BYTES: usize = 4 << 20;
/// Each port's send buffer as the kernel counts it (frames with their
/// overhead: about 2.3 KB for a full-size frame): the kernel's default,
/// which BMv2's sockets keep, so a shaped link pushes back as soon.
pub const SNDBUF: usize = 212_992;
/// Packets a port that the kernel pushed back may dequeue in the round
/// after its refused frames were taken.
pub const RESUME_WINDOW: u32 = 8;
/// A window this large means the port runs free again.
pub const MAX_WINDOW: u32 = 1024;
/// How often the kernel's count of frames a full ring lost is read.
const RX_DROPS_EVERY_NS: u64 = 100_000_000;
const MAX_EVENTS: usize = 65536;
const MAX_TRACES: usize = 262144;
const MAX_WAIT_NS: u64 = 20_000_000;
/// How long the loop may stay busy at real-time priority.
pub const RT_BUSY_LIMIT: Duration = Duration::from_millis(500);

/// Whatever owns the switch (the Python engine object owns more).
pub trait HostSwitch: Send + 'static {
    fn switch(&mut self) -> &mut Switch;
}

impl HostSwitch for Switch {
    fn switch(&mut self) -> &mut Switch {
        self
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A packet the switch sent to the CPU port.
    PacketIn { port: u32, data: Vec<u8>, time_ns: u64 },
    /// A digest: learn list id, field values.
    Digest { learn_id: u32, values: Vec<Vec<u8>>, time_ns: u64 },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    pub rx_frames: u64,
    pub rx_bytes: u64,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub rx_truncated: u64,
    /// Frames the kernel dropped because the port's ring was full.
    pub rx_dropped: u64,
    /// Frames the kernel failed to send (an error other than a full send
    /// buffer), or that still waited when their port was removed.
    pub tx_errors: u64,
    /// Times the kernel refused the port's frames (send buffer full) and
    /// the port stopped dequeuing until it took them.
    pub tx_blocked: u64,
}

pub struct PortIo {
    pub port: u32,
    pub iface: String,
    ring: sys::RxRing,
    fd: OwnedFd,
    /// The socket's send buffer as the kernel counts it.
    sndbuf: usize,
    /// At least what the kernel counts against the send buffer now (it
    /// only shrinks between the loop's sends): read back when the next
    /// frames might not fit.
    queued: usize,
    pcap_in: Option<PcapWriter>,
    pcap_out: Option<PcapWriter>,
    tx: TxState,
}

/// A port's egress back-pressure (see the module's doc).
#[derive(Debug)]
struct TxState {
    /// Frames that left the switch but the kernel refused, oldest first:
    /// sent before anything newer, and the port dequeues nothing meanwhile.
    held: VecDeque<Output>,
    /// Packets the port may dequeue a round (TX_UNLIMITED: runs free).
    window: u32,
    /// Frames the switch emitted for the port this round.
    emitted: u32,
    /// The credit to hand the switch at the start of the next round.
    credit: Option<u32>,
    /// Whether frames were held at the start of this round's sends.
    was_held: bool,
}

impl TxState {
    fn new() -> TxState {
        TxState { held: VecDeque::new(), window: TX_UNLIMITED, emitted: 0, credit: None, was_held: false }
    }

    /// After the round's sends: the port's next credit (frames still held:
    /// the kernel's buffer is full). Returns whether the port just became
    /// blocked.
    fn after_send(&mut self) -> bool {
        let emitted = std::mem::take(&mut self.emitted);
        let was_held = std::mem::take(&mut self.was_held);
        if !self.held.is_empty() {
            if was_held {
                return false;
            }
            self.window = RESUME_WINDOW;
            self.credit = Some(0);
            return true;
        }
        if was_held {
            self.credit = Some(self.window);
        } else if self.window != TX_UNLIMITED {
            self.window = if emitted < self.window || self.window >= MAX_WINDOW / 2 { TX_UNLIMITED } else { self.window * 2 };
            self.credit = Some(self.window);
        }
        false
    }
}

impl PortIo {
    /// Opens the interface now (errors are the caller's to report).
    pub fn open(port: u32, iface: &str, pcap_in: Option<&str>, pcap_out: Option<&str>) -> std::io::Result<PortIo> {
        let (fd, ring) = sys::packet_socket(iface, RING_BYTES, SNDBUF)?;
        let sndbuf = sys::send_buffer(&fd).unwrap_or(SNDBUF);
        Ok(PortIo {
            port,
            iface: iface.to_string(),
            ring,
            fd,
            sndbuf,
            queued: 0,
            pcap_in: pcap_in.map(PcapWriter::create).transpose()?,
            pcap_out: pcap_out.map(PcapWriter::create).transpose()?,
            tx: TxState::new(),
        })
    }

    /// How many of `frames` the send buffer takes for certain, counting
    /// `queued` as what it holds: the kernel refuses a frame only when it
    /// already holds at least its size.
    fn fitting(&self, frames: &[&[u8]]) -> usize {
        let mut q = self.queued;
        let mut n = 0;
        for f in frames {
            if q >= self.sndbuf {
                break;
            }
            q += sys::send_charge_bound(f.len());
            n += 1;
        }
        n
    }

    /// Sends `frames` (this port's, in order) until the send buffer is
    /// full; returns how many were consumed: sent, or failed and dropped.
    ///
    /// As BMv2 (a blocking pcap_sendpacket per frame, its failure ignored):
    /// a frame waits while the send buffer is full, and a frame the kernel
    /// refuses for any other reason (a full qdisc: ENOBUFS; too long; the
    /// interface down) is dropped, counted in tx_errors, never sent again.
    /// sendmmsg does not say why it stopped part-way, so each call carries
    /// only frames the buffer certainly takes: a frame refused among them
    /// failed for another reason.
    fn send(&mut self, frames: &[&[u8]], times: impl Fn(usize) -> u64, st: &mut PortStats) -> usize {
        let mut done = 0;
        while done < frames.len() {
            let next = &frames[done..frames.len().min(done + sys::MAX_SEND)];
            let mut fit = self.fitting(next);
            if fit < next.len() {
                if let Ok(q) = sys::send_queued(&self.fd) {
                    self.queued = q;
                    fit = self.fitting(next);
                }
            }
            if fit == 0 {
                break; // full: the rest wait
            }
            match sys::send_batch(&self.fd, &frames[done..done + fit]) {
                Ok(0) => break, // refused after all (or interrupted): wait
                Ok(k) => {
                    let sent = &frames[done..done + k];
                    st.tx_frames += k as u64;
                    st.tx_bytes += sent.iter().map(|f| f.len() as u64).sum::<u64>();
                    self.queued += sent.iter().map(|f| sys::send_charge_bound(f.len())).sum::<usize>();
                    done += k;
                    if k < fit {
                        st.tx_errors += 1; // the next one failed: dropped
                        done += 1;
                    }
                }
                Err(_) => {
                    st.tx_errors += 1;
                    done += 1;
                }
            }
        }
        if let Some(w) = self.pcap_out.as_mut() {
            for (k, f) in frames[..done].iter().enumerate() {
                let _ = w.write(times(k), f);
            }
        }
        done
    }

    /// Sends the frames the kernel refused before, as many as it takes now.
    fn flush_held(&mut self, epoch: impl Fn(u64) -> u64, st: &mut PortStats, spent: &mut Vec<Vec<u8>>) {
        let held = std::mem::take(&mut self.tx.held);
        let frames: Vec<&[u8]> = held.iter().map(|o| o.data.as_slice()).collect();
        let done = self.send(&frames, |k| epoch(held[k].time_ns), st);
        drop(frames);
        let mut held = held;
        spent.extend(held.drain(..done).map(|o| o.data));
        self.tx.held = held;
    }
}

enum Cmd {
    Add(Box<PortIo>),
    Remove(u32),
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// Frames sent to a port without an interface.
    pub no_port: u64,
    /// Events dropped because nobody took them.
    pub events_dropped: u64,
    /// Trace records dropped because nobody took them.
    pub traces_dropped: u64,
    pub wakeups: u64,
    /// The loop thread's SCHED_FIFO priority now (0: normal scheduling).
    pub priority: i32,
    /// Times the loop stepped down from real-time priority (busy too long).
    pub demotions: u64,
}

/// The loop thread's scheduling: real-time priority `want` while the loop
/// keeps up, normal scheduling once it has been busy (not gone idle) for
/// `limit`, real-time again when it next goes idle.
pub struct Priority {
    want: i32,
    limit: Duration,
    on: bool,
    busy_since: Option<Instant>,
    pub demotions: u64,
}

impl Priority {
    pub fn new(want: i32, limit: Duration) -> Priority {
        Priority { want: want.max(0), limit, on: false, busy_since: None, demotions: 0 }
    }

    /// After each round, whether the loop goes idle (waits) at `now`: the
    /// priority to switch to, if it changes.
    pub fn after_round(&mut self, idle: bool, now: Instant) -> Option<i32> {
        if self.want == 0 {
            return None;
        }
        if idle {
            self.busy_since = None;
            if !self.on {
                self.on = true;
                return Some(self.want);
            }
            return None;
        }
        let since = *self.busy_since.get_or_insert(now);
        if self.on && now.duration_since(since) >= self.limit {
            self.on = false;
            self.demotions += 1;
            return Some(0);
        }
        None
    }

    /// The process may not use real-time priority: stay at normal.
    pub fn refused(&mut self) {
        self.want = 0;
        self.on = false;
    }
}

/// State shared by the loop and the threads that control it.
pub struct Shared {
    stop: AtomicBool,
    wake: OwnedFd,
    cmds: Mutex<Vec<Cmd>>,
    inject: Mutex<Vec<(u32, Vec<u8>)>>,
    events: Mutex<VecDeque<Event>>,
    events_cv: Condvar,
    tracing: AtomicBool,
    /// The SCHED_FIFO priority the loop asks for (0: normal scheduling).
    pub priority: AtomicI32,
    trace_cfg: Mutex<TraceCfg>,
    traces: Mutex<VecDeque<TraceEv>>,
    pub cpu_port: Mutex<Option<u32>>,
    pub stats: Mutex<BTreeMap<u32, PortStats>>,
    pub counters: Mutex<Counters>,
    pub ifaces: Mutex<BTreeMap<u32, String>>,
}

fn lk<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    pub fn new() -> std::io::Result<Arc<Shared>> {
        Ok(Arc::new(Shared {
            stop: AtomicBool::new(false),
            wake: sys::event_fd()?,
            cmds: Mutex::new(vec![]),
            inject: Mutex::new(vec![]),
            events: Mutex::new(VecDeque::new()),
            events_cv: Condvar::new(),
            tracing: AtomicBool::new(false),
            priority: AtomicI32::new(0),
            trace_cfg: Mutex::new(TraceCfg::default()),
            traces: Mutex::new(VecDeque::new()),
            cpu_port: Mutex::new(None),
            stats: Mutex::new(BTreeMap::new()),
            counters: Mutex::new(Counters::default()),
            ifaces: Mutex::new(BTreeMap::new()),
        }))
    }

    pub fn wake(&self) {
        sys::event_signal(&self.wake);
    }

    pub fn add_port(&self, p: PortIo) {
        lk(&self.ifaces).insert(p.port, p.iface.clone());
        lk(&self.cmds).push(Cmd::Add(Box::new(p)));
        self.wake();
    }

    pub fn remove_port(&self, port: u32) -> bool {
        let had = lk(&self.ifaces).remove(&port).is_some();
        lk(&self.cmds).push(Cmd::Remove(port));
        self.wake();
        had
    }

    /// A frame entering the switch on `port` now (e.g. a packet-out on the
    /// CPU port).
    pub fn inject(&self, port: u32, data: Vec<u8>) {
        lk(&self.inject).push((port, data));
        self.wake();
    }

    /// Up to `max` events, waiting up to `timeout` for the first.
    pub fn take_events(&self, max: usize, timeout: Duration) -> Vec<Event> {
        let mut q = lk(&self.events);
        if q.is_empty() && !timeout.is_zero() {
            let deadline = Instant::now() + timeout;
            while q.is_empty() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() || self.stop.load(Ordering::Relaxed) {
                    break;
                }
                q = self.events_cv.wait_timeout(q, left).map(|r| r.0).unwrap_or_else(|e| e.into_inner().0);
            }
        }
        let n = q.len().min(max);
        q.drain(..n).collect()
    }

    /// Waits up to `timeout` until events or trace records are waiting;
    /// returns whether some are (false: timeout or stop). Takes nothing.
    pub fn wait_pending(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut q = lk(&self.events);
        loop {
            // lock order: events, then traces (push_traces takes events
            // only after releasing traces)
            if !q.is_empty() || !lk(&self.traces).is_empty() {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.stop.load(Ordering::Relaxed) {
                return false;
            }
            q = self.events_cv.wait_timeout(q, left).map(|r| r.0).unwrap_or_else(|e| e.into_inner().0);
        }
    }

    fn push_events(&self, evs: &mut Vec<Event>) {
        if evs.is_empty() {
            return;
        }
        let mut q = lk(&self.events);
        for e in evs.drain(..) {
            if q.len() >= MAX_EVENTS {
                lk(&self.counters).events_dropped += 1;
                continue;
            }
            q.push_back(e);
        }
        drop(q);
        self.events_cv.notify_all();
    }

    /// What the loop records (nothing: traces off), from the round the
    /// wake-up this sends starts.
    pub fn set_trace(&self, cfg: TraceCfg) {
        *lk(&self.trace_cfg) = cfg;
        self.tracing.store(cfg.any(), Ordering::Release);
        self.wake();
    }

    pub fn trace_cfg(&self) -> TraceCfg {
        *lk(&self.trace_cfg)
    }

    /// Up to `max` trace records, oldest first (never waits).
    pub fn take_traces(&self, max: usize) -> Vec<TraceEv> {
        let mut q = lk(&self.traces);
        let n = q.len().min(max);
        q.drain(..n).collect()
    }

    fn push_traces(&self, recs: &mut Vec<TraceEv>) {
        if recs.is_empty() {
            return;
        }
        let mut q = lk(&self.traces);
        let room = MAX_TRACES.saturating_sub(q.len());
        if recs.len() > room {
            lk(&self.counters).traces_dropped += (recs.len() - room) as u64;
            recs.truncate(room);
        }
        q.extend(recs.drain(..));
        drop(q);
        // a waiter checks both queues holding the events lock: taking it
        // here means it either sees these records or is waiting already
        drop(lk(&self.events));
        self.events_cv.notify_all();
    }

    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.wake();
        self.events_cv.notify_all();
    }

    pub fn reset_stop(&self) {
        self.stop.store(false, Ordering::Relaxed);
    }
}

/// One frame into the switch, then what is due by `now` (its egress, where
/// the port is free): the traffic manager's queues see each frame of a
/// batch dequeued before the next arrives, as BMv2's egress threads take a
/// packet while ingress works on the next, not a whole batch queued at
/// once. Straight in, or recorded step by step.
#[inline]
fn deliver(sw: &mut Switch, port: u32, now: u64, frame: &[u8], tracer: Option<&mut Tracer>, events: &mut Vec<Event>) {
    match tracer {
        Some(t) if t.cfg.packets => t.deliver(sw, port, now, frame, events),
        _ => {
            sw.deliver(port, now, frame);
            sw.advance(now);
        }
    }
}

/// The switch's events due by `now`: at once, or recorded step by step.
#[inline]
fn advance(sw: &mut Switch, now: u64, tracer: Option<&mut Tracer>, events: &mut Vec<Event>) {
    match tracer {
        Some(t) if t.cfg.packets => {
            t.advance(sw, now, events, 0);
        }
        _ => sw.advance(now),
    }
}

/// The loop; returns when `request_stop` is called. Ports stay open in
/// `ports` across restarts only if the caller keeps them; here they are
/// closed when the loop ends.
pub fn run<H: HostSwitch>(host: Arc<Mutex<H>>, sh: Arc<Shared>) {
    let wall0 = Instant::now();
    let epoch0 = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    let eng0 = lk(&host).switch().now_ns();
    let now_eng = |w: Instant| eng0 + w.duration_since(wall0).as_nanos() as u64;
    let mut ports: Vec<PortIo> = vec![];
    let mut outs: Vec<Output> = vec![];
    let mut spent: Vec<Vec<u8>> = vec![];
    let mut events: Vec<Event> = vec![];
    let mut ready = vec![];
    let mut fds: Vec<(RawFd, bool)> = vec![];
    let mut tagged: Vec<u8> = vec![]; // a frame with its VLAN tag put back
    let mut pending_stats: BTreeMap<u32, PortStats> = BTreeMap::new();
    let mut tracer: Option<Tracer> = None;
    let mut drops_read_at = 0u64;
    let mut released: Vec<u32> = vec![]; // removed ports the switch must not hold back
    let mut prio = Priority::new(sh.priority.load(Ordering::Relaxed), RT_BUSY_LIMIT);
    lk(&sh.counters).priority = sys::thread_priority();
    while !sh.stop.load(Ordering::Relaxed) {
        for c in std::mem::take(&mut *lk(&sh.cmds)) {
            match c {
                Cmd::Add(p) => {
                    if ports.iter().any(|x| x.port == p.port && x.tx.window != TX_UNLIMITED) {
                        released.push(p.port);
                    }
                    ports.retain(|x| x.port != p.port);
                    ports.push(*p);
                }
                Cmd::Remove(port) => {
                    for p in ports.iter().filter(|p| p.port == port) {
                        let st = pending_stats.entry(port).or_default();
                        st.rx_dropped += sys::rx_dropped(&p.fd);
                        st.tx_errors += p.tx.held.len() as u64;
                    }
                    if ports.iter().any(|p| p.port == port && p.tx.window != TX_UNLIMITED) {
                        released.push(port);
                    }
                    ports.retain(|x| x.port != port)
                }
            }
        }
        let cpu = *lk(&sh.cpu_port);
        let wall = Instant::now();
        let timeout = {
            let mut h = lk(&host);
            let sw = h.switch();
            for b in spent.drain(..) {
                if b.capacity() > 0 {
                    sw.recycle(b);
                }
            }
            for port in released.drain(..) {
                sw.set_tx_credit(port, TX_UNLIMITED);
            }
            for p in ports.iter_mut() {
                if let Some(c) = p.tx.credit.take() {
                    sw.set_tx_credit(p.port, c);
                }
            }
            let now = now_eng(wall);
            match sw.next_event_at() {
                Some(t) if t <= now => 0,
                Some(t) => (t - now).min(MAX_WAIT_NS),
                None => MAX_WAIT_NS,
            }
        };
        // frames waiting in a ring or a packet-out: no wait, no system call
        let busy = !lk(&sh.inject).is_empty() || ports.iter().any(|p| p.ring.ready());
        let idle = timeout > 0 && !busy;
        let demotions = prio.demotions;
        if let Some(p) = prio.after_round(idle, wall) {
            if sys::set_thread_priority(p).is_err() {
                prio.refused();
            }
            let mut c = lk(&sh.counters);
            c.priority = sys::thread_priority();
            c.demotions += prio.demotions - demotions;
        }
        if idle {
            fds.clear();
            fds.push((sh.wake.as_raw_fd(), false));
            // a port holding refused frames also waits for room to send
            fds.extend(ports.iter().map(|p| (p.fd.as_raw_fd(), !p.tx.held.is_empty())));
            if sys::poll_ready(&fds, timeout, &mut ready).is_err() {
                std::thread::sleep(Duration::from_millis(1));
            }
            if ready.first() == Some(&0) {
                sys::event_clear(&sh.wake);
            }
        }
        lk(&sh.counters).wakeups += 1;
        // after the wait: a set_trace that woke us applies to what it read
        if sh.tracing.load(Ordering::Acquire) {
            let cfg = sh.trace_cfg();
            match tracer.as_mut() {
                Some(t) => t.cfg = cfg,
                None => tracer = Some(Tracer::new(cfg)),
            }
        } else {
            tracer = None;
        }
        let injected = std::mem::take(&mut *lk(&sh.inject));
        // take a batch from every port's ring, running each frame at once
        let mut h = lk(&host);
        let sw = h.switch();
        let now = now_eng(Instant::now());
        advance(sw, now, tracer.as_mut(), &mut events);
        for (port, data) in injected {
            deliver(sw, port, now, &data, tracer.as_mut(), &mut events);
        }
        for p in ports.iter_mut() {
            if !p.ring.ready() {
                continue;
            }
            let st = pending_stats.entry(p.port).or_default();
            for _ in 0..BATCH {
                let Some(f) = p.ring.take() else { break };
                if f.cut() {
                    st.rx_truncated += 1;
                    continue;
                }
                let frame = match f.vlan() {
                    None => f.data(),
                    Some((tpid, tci)) => {
                        let d = f.data();
                        let mac = d.len().min(12);
                        tagged.clear();
                        tagged.extend_from_slice(&d[..mac]);
                        tagged.extend_from_slice(&tpid.to_be_bytes());
                        tagged.extend_from_slice(&tci.to_be_bytes());
                        tagged.extend_from_slice(&d[mac..]);
                        &tagged[..]
                    }
                };
                st.rx_frames += 1;
                st.rx_bytes += frame.len() as u64;
                if let Some(w) = p.pcap_in.as_mut() {
                    let _ = w.write(epoch0 + (now - eng0), frame);
                }
                deliver(sw, p.port, now, frame, tracer.as_mut(), &mut events);
            }
        }
        advance(sw, now, tracer.as_mut(), &mut events);
        if let Some(t) = tracer.as_mut() {
            t.loose_log(sw);
        }
        sw.drain_outputs(&mut outs);
        for d in sw.take_digests() {
            events.push(Event::Digest { learn_id: d.learn_id, values: d.values, time_ns: d.time_ns });
        }
        drop(h);
        // send, port by port, in the order the switch emitted; frames the
        // kernel refused before go first
        let mut no_port = 0u64;
        let at = |t: u64| epoch0 + t.saturating_sub(eng0);
        for p in ports.iter_mut() {
            if !p.tx.held.is_empty() {
                p.tx.was_held = true;
                let st = pending_stats.entry(p.port).or_default();
                p.flush_held(at, st, &mut spent);
            }
        }
        outs.sort_by_key(|o| o.port); // stable: per-port order kept
        let mut i = 0;
        while i < outs.len() {
            let port = outs[i].port;
            let mut j = i;
            while j < outs.len() && outs[j].port == port {
                j += 1;
            }
            if Some(port) == cpu {
                for o in &outs[i..j] {
                    events.push(Event::PacketIn { port, data: o.data.clone(), time_ns: o.time_ns });
                }
            } else if let Some(pi) = ports.iter().position(|p| p.port == port) {
                let p = &mut ports[pi];
                p.tx.emitted += (j - i) as u32;
                let done = if p.tx.held.is_empty() {
                    let frames: Vec<&[u8]> = outs[i..j].iter().map(|o| o.data.as_slice()).collect();
                    let st = pending_stats.entry(port).or_default();
                    let group = &outs[i..j];
                    p.send(&frames, |k| at(group[k].time_ns), st)
                } else {
                    0
                };
                for o in &mut outs[i + done..j] {
                    p.tx.held.push_back(Output { port, data: std::mem::take(&mut o.data), time_ns: o.time_ns });
                }
            } else {
                no_port += (j - i) as u64;
            }
            i = j;
        }
        for o in outs.drain(..) {
            if o.data.capacity() > 0 {
                spent.push(o.data);
            }
        }
        for p in ports.iter_mut() {
            if p.tx.window == TX_UNLIMITED && p.tx.held.is_empty() && !p.tx.was_held {
                p.tx.emitted = 0;
                continue;
            }
            if p.tx.after_send() {
                pending_stats.entry(p.port).or_default().tx_blocked += 1;
            }
        }
        if no_port > 0 {
            lk(&sh.counters).no_port += no_port;
        }
        if now >= drops_read_at + RX_DROPS_EVERY_NS {
            drops_read_at = now;
            for p in &ports {
                let d = sys::rx_dropped(&p.fd);
                if d > 0 {
                    pending_stats.entry(p.port).or_default().rx_dropped += d;
                }
            }
        }
        if !pending_stats.is_empty() {
            let mut s = lk(&sh.stats);
            for (p, d) in std::mem::take(&mut pending_stats) {
                let e = s.entry(p).or_default();
                e.rx_frames += d.rx_frames;
                e.rx_bytes += d.rx_bytes;
                e.tx_frames += d.tx_frames;
                e.tx_bytes += d.tx_bytes;
                e.rx_truncated += d.rx_truncated;
                e.rx_dropped += d.rx_dropped;
                e.tx_errors += d.tx_errors;
                e.tx_blocked += d.tx_blocked;
            }
        }
        sh.push_events(&mut events);
        if let Some(t) = tracer.as_mut() {
            sh.push_traces(&mut t.out);
        }
    }
    // the switch runs free while the loop is stopped (virtual time may
    // drive it); a restart hands the ports' credits back first
    if ports.iter().any(|p| p.tx.window != TX_UNLIMITED || !p.tx.held.is_empty()) {
        let mut h = lk(&host);
        let sw = h.switch();
        for p in ports.iter_mut().filter(|p| p.tx.window != TX_UNLIMITED || !p.tx.held.is_empty()) {
            sw.set_tx_credit(p.port, TX_UNLIMITED);
            p.tx.credit = Some(if p.tx.held.is_empty() { p.tx.window } else { 0 });
        }
    }
    let mut s = lk(&sh.stats);
    for p in ports.iter_mut() {
        s.entry(p.port).or_default().rx_dropped += sys::rx_dropped(&p.fd);
        if let Some(w) = p.pcap_in.as_mut() {
            let _ = w.flush();
        }
        if let Some(w) = p.pcap_out.as_mut() {
            let _ = w.flush();
        }
    }
    drop(s);
    // ports that were open stay usable for a restart
    let mut cmds = lk(&sh.cmds);
    for p in ports.into_iter().rev() {
        cmds.insert(0, Cmd::Add(Box::new(p)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_steps_down_when_busy_too_long_and_back_when_idle() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut p = Priority::new(5, Duration::from_millis(100));
        assert_eq!(p.after_round(false, ms(0)), None, "starts at normal priority, busy");
        assert_eq!(p.after_round(true, ms(1)), Some(5), "real time once idle");
        assert_eq!(p.after_round(true, ms(2)), None);
        assert_eq!(p.after_round(false, ms(10)), None);
        assert_eq!(p.after_round(false, ms(109)), None, "busy for 99 ms");
        assert_eq!(p.after_round(false, ms(110)), Some(0), "busy for 100 ms: normal");
        assert_eq!(p.after_round(false, ms(500)), None);
        assert_eq!(p.demotions, 1);
        assert_eq!(p.after_round(true, ms(501)), Some(5), "idle again: real time");
        assert_eq!(p.after_round(false, ms(502)), None);
        assert_eq!(p.after_round(true, ms(550)), None, "an idle round restarts the count");
        assert_eq!(p.after_round(false, ms(600)), None);
        assert_eq!(p.after_round(false, ms(649)), None);
        assert_eq!(p.after_round(false, ms(700)), Some(0));
    }

    #[test]
    fn a_port_the_kernel_pushes_back_stops_then_ramps_up_then_runs_free() {
        let held = |t: &mut TxState, n: usize| {
            t.held.clear();
            t.held.extend((0..n).map(|_| Output { port: 1, data: vec![0], time_ns: 0 }));
        };
        let mut t = TxState::new();
        t.emitted = 40;
        assert!(!t.after_send());
        assert_eq!((t.window, t.credit), (TX_UNLIMITED, None), "all taken: runs free");
        held(&mut t, 5);
        t.emitted = 40;
        assert!(t.after_send(), "refused: blocked");
        assert_eq!((t.window, t.credit.take()), (RESUME_WINDOW, Some(0)), "stops dequeuing");
        t.was_held = true;
        assert!(!t.after_send(), "still refused: still blocked, counted once");
        assert_eq!(t.credit, None);
        held(&mut t, 0);
        t.was_held = true;
        assert!(!t.after_send());
        assert_eq!(t.credit.take(), Some(RESUME_WINDOW), "taken: a small window");
        t.emitted = RESUME_WINDOW;
        t.after_send();
        assert_eq!(t.credit.take(), Some(2 * RESUME_WINDOW), "window used and taken: doubles");
        t.emitted = 2 * RESUME_WINDOW;
        held(&mut t, 3);
        assert!(t.after_send(), "refused again");
        assert_eq!((t.window, t.credit.take()), (RESUME_WINDOW, Some(0)));
        held(&mut t, 0);
        t.was_held = true;
        t.after_send();
        t.emitted = 2;
        t.credit = None;
        t.after_send();
        assert_eq!((t.window, t.credit), (TX_UNLIMITED, Some(TX_UNLIMITED)), "queue emptied: runs free");
    }

    #[test]
    fn priority_zero_or_refused_never_changes() {
        let t0 = Instant::now();
        let mut p = Priority::new(0, Duration::from_millis(1));
        for i in 0..10 {
            assert_eq!(p.after_round(i % 3 == 0, t0 + Duration::from_millis(i * 10)), None);
        }
        let mut p = Priority::new(2, Duration::from_millis(1));
        assert_eq!(p.after_round(true, t0), Some(2));
        p.refused();
        assert_eq!(p.after_round(true, t0), None);
        assert_eq!(p.after_round(false, t0 + Duration::from_secs(1)), None);
    }
}
