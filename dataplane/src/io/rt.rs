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
//! sending thread and the port stops dequeuing ([`Switch::set_tx_credit`]
//! 0): its packets stay in the traffic manager's queues, which fill, mark
//! and drop as the program and the configuration say. Neither thread waits
//! for one port: the refused frames are retried each round, and when idle
//! when the socket is writable (POLLOUT). Once they are taken the
//! port dequeues [`RESUME_WINDOW`] packets a round, twice as many each round
//! the kernel takes them all, and runs free again once its queue empties
//! within a round's window or the window reaches [`MAX_WINDOW`]. A frame
//! the kernel refuses for another reason (its qdisc full: ENOBUFS; longer
//! than the MTU; the interface down) is dropped and counted (tx_errors),
//! as BMv2 ignores a failed send; it is never sent again.
//!
//! While frames pile up in its rings the loop hands its sends to sending
//! threads ([`super::tx`], a port's frames always to the same one), as
//! BMv2's egress threads transmit while its ingress thread takes the next
//! packets: a send into a veth runs the receiving host's stack in the
//! sender's context, and the loop takes and processes the next frames
//! meanwhile. While it keeps up, or at normal scheduling, it sends itself.
//!
//! The threads run at real-time priority (SCHED_FIFO, when the process
//! may) while the switch keeps up: woken host processes no longer preempt
//! them in the middle of a batch. A switch busy for longer than
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
use super::tx::{threads_wanted, Clock, PortTx, Returned, SendHow, Sender};
use crate::engine::{Output, Switch};
use crate::tm::TX_UNLIMITED;
use std::collections::{BTreeMap, VecDeque};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Frames taken from one port per round before the others get a turn.
pub const BATCH: usize = 64;
/// Frames waiting in a ring after a round that make the loop hand the
/// round's sends over (fewer: it sends them itself, no hand-over).
pub const HAND_OVER_BEHIND: usize = 32;
/// Each port's receive ring (slots hold the interface's MTU; bigger,
/// offloaded frames are cut and counted as truncated).
pub const RING_BYTES: usize = 4 << 20;
/// Each port's send buffer as the kernel counts it (frames with their
/// overhead: about 2.3 KB for a full-size frame): the kernel's default,
/// which BMv2's sockets keep, so a shaped link pushes back as soon.
pub const SNDBUF: usize = 212_992;
pub use super::tx::{MAX_WINDOW, RESUME_WINDOW};
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
    ring: afpacket::FrameRing,
    fd: OwnedFd,
    pcap_in: Option<PcapWriter>,
    /// The sending half (with the sending thread while the loop runs).
    tx: Option<PortTx>,
}

impl PortIo {
    /// Opens the interface now (errors are the caller's to report).
    pub fn open(port: u32, iface: &str, pcap_in: Option<&str>, pcap_out: Option<&str>) -> std::io::Result<PortIo> {
        let (fd, ring) = sys::packet_socket(iface, RING_BYTES, SNDBUF)?;
        let sndbuf = sys::send_buffer(&fd).unwrap_or(SNDBUF);
        let tx = PortTx::new(port, fd.try_clone()?, sndbuf, pcap_out.map(PcapWriter::create).transpose()?);
        Ok(PortIo {
            port,
            iface: iface.to_string(),
            ring,
            fd,
            pcap_in: pcap_in.map(PcapWriter::create).transpose()?,
            tx: Some(tx),
        })
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
    /// Frames the loop handed to its sending thread (the rest it sent
    /// itself).
    pub handed_over: u64,
    /// Rounds that ended with frames to send while frames waited in a ring
    /// (the rounds a hand-over is for, at any priority).
    pub behind_rounds: u64,
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

    /// Adds per-port counts (taken from `d`) to the ports' statistics.
    pub fn add_stats(&self, d: &mut BTreeMap<u32, PortStats>) {
        let mut s = lk(&self.stats);
        for (p, d) in std::mem::take(d) {
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

    /// Frames sent to ports without an interface.
    pub fn count_no_port(&self, n: u64) {
        lk(&self.counters).no_port += n;
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
    let Ok(mut sender) = Sender::start(sh.clone(), Clock { epoch0, eng0 }, threads_wanted()) else {
        return; // no thread to send with: the ports stay queued for a start
    };
    let mut ports: Vec<PortIo> = vec![];
    let mut bound: Vec<bool> = vec![]; // by port number: has an interface
    let mut outs: Vec<Output> = vec![];
    let mut back = Returned::default();
    let mut credits: Vec<(u32, u32)> = vec![];
    let mut spent: Vec<Vec<u8>> = vec![];
    let mut events: Vec<Event> = vec![];
    let mut ready = vec![];
    let mut fds: Vec<(RawFd, bool)> = vec![];
    let mut tagged: Vec<u8> = vec![]; // a frame with its VLAN tag put back
    let mut pending_stats: BTreeMap<u32, PortStats> = BTreeMap::new();
    let mut tracer: Option<Tracer> = None;
    let mut drops_read_at = 0u64;
    let mut prio = Priority::new(sh.priority.load(Ordering::Relaxed), RT_BUSY_LIMIT);
    let mut real_time = sys::thread_priority() > 0;
    lk(&sh.counters).priority = sys::thread_priority();
    while !sh.stop.load(Ordering::Relaxed) {
        for c in std::mem::take(&mut *lk(&sh.cmds)) {
            match c {
                Cmd::Add(mut p) => {
                    if let Some(mut tx) = p.tx.take() {
                        credits.extend(tx.take_credit().map(|c| (p.port, c))); // a restart's
                        sender.add(tx);
                    }
                    ports.retain(|x| x.port != p.port);
                    set_bound(&mut bound, p.port, true);
                    ports.push(*p);
                }
                Cmd::Remove(port) => {
                    for p in ports.iter().filter(|p| p.port == port) {
                        pending_stats.entry(port).or_default().rx_dropped += sys::rx_dropped(&p.fd);
                    }
                    ports.retain(|x| x.port != port);
                    set_bound(&mut bound, port, false);
                    sender.remove(port); // its held frames are counted lost there
                }
            }
        }
        sender.take_back(&mut back);
        credits.append(&mut back.credits);
        let cpu = *lk(&sh.cpu_port);
        let wall = Instant::now();
        let timeout = {
            let mut h = lk(&host);
            let sw = h.switch();
            for b in spent.drain(..).chain(back.spent.drain(..)) {
                if b.capacity() > 0 {
                    sw.recycle(b);
                }
            }
            for (port, c) in credits.drain(..) {
                sw.set_tx_credit(port, c);
            }
            let now = now_eng(wall);
            match sw.next_event_at() {
                Some(t) if t <= now => 0,
                Some(t) => (t - now).min(MAX_WAIT_NS),
                None => MAX_WAIT_NS,
            }
        };
        // the sending thread far behind: frames stay in the rings meanwhile
        let room = sender.room();
        // the switch is idle when the sending thread is too (a frame
        // circling between two ports keeps one of them busy at any time);
        // asked before the rings are looked at
        let sender_idle = sender.idle();
        // frames waiting in a ring or a packet-out: no wait, no system call
        let busy = !lk(&sh.inject).is_empty() || (room && ports.iter().any(|p| p.ring.ready()));
        let idle = timeout > 0 && !busy;
        let demotions = prio.demotions;
        if let Some(p) = prio.after_round((idle && sender_idle) || sender.took_idle(), wall) {
            if sys::set_thread_priority(p).is_err() {
                prio.refused();
            } else {
                sender.set_priority(p);
            }
            let mut c = lk(&sh.counters);
            c.priority = sys::thread_priority();
            real_time = c.priority > 0;
            c.demotions += prio.demotions - demotions;
        }
        if idle {
            fds.clear();
            fds.push((sh.wake.as_raw_fd(), false));
            if room {
                fds.extend(ports.iter().map(|p| (p.fd.as_raw_fd(), false)));
            }
            sender.loop_waits_input(room);
            if sys::poll_ready(&fds, timeout, &mut ready).is_err() {
                std::thread::sleep(Duration::from_millis(1));
            }
            sender.loop_waits_input(false);
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
        let room = room || sender.room();
        // take a batch from every port's ring, running each frame at once
        let mut h = lk(&host);
        let sw = h.switch();
        let now = now_eng(Instant::now());
        advance(sw, now, tracer.as_mut(), &mut events);
        for (port, data) in injected {
            deliver(sw, port, now, &data, tracer.as_mut(), &mut events);
        }
        for p in ports.iter_mut().filter(|p| room && p.ring.ready()) {
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
        // frames for the CPU port become events, frames for ports without
        // an interface are counted; the sending thread takes the rest
        let mut no_port = 0u64;
        outs.retain_mut(|o| {
            if Some(o.port) == cpu {
                events.push(Event::PacketIn { port: o.port, data: std::mem::take(&mut o.data), time_ns: o.time_ns });
                false
            } else if !bound.get(o.port as usize).copied().unwrap_or(false) {
                no_port += 1;
                spent.push(std::mem::take(&mut o.data));
                false
            } else {
                true
            }
        });
        // sent here while the loop keeps up (no hand-over, no wake-up), or
        // at normal scheduling (a hand-over would wait for the scheduler to
        // run the thread); handed over while frames wait in the rings
        let behind = !outs.is_empty() && ports.iter().any(|p| p.ring.has(HAND_OVER_BEHIND));
        let how = if !real_time {
            SendHow::Here
        } else if behind {
            SendHow::HandOver
        } else {
            SendHow::HereIfFree
        };
        let handed = sender.send(&mut outs, how) as u64;
        if no_port > 0 || handed > 0 || behind {
            let mut c = lk(&sh.counters);
            c.no_port += no_port;
            c.handed_over += handed;
            c.behind_rounds += behind as u64;
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
            sh.add_stats(&mut pending_stats);
        }
        sh.push_events(&mut events);
        if let Some(t) = tracer.as_mut() {
            sh.push_traces(&mut t.out);
        }
    }
    // what was handed over is sent; the switch runs free while the loop
    // is stopped (virtual time may drive it); a restart hands the ports'
    // credits back first
    let mut txs = sender.stop();
    sender_leftovers(&host, &mut txs, &mut back);
    let mut s = lk(&sh.stats);
    for p in ports.iter_mut() {
        s.entry(p.port).or_default().rx_dropped += sys::rx_dropped(&p.fd);
        if let Some(w) = p.pcap_in.as_mut() {
            let _ = w.flush();
        }
    }
    drop(s);
    // ports that were open stay usable for a restart
    let mut cmds = lk(&sh.cmds);
    for mut p in ports.into_iter().rev() {
        if let Some(i) = txs.iter().position(|t| t.port == p.port) {
            p.tx = Some(txs.swap_remove(i));
        }
        cmds.insert(0, Cmd::Add(Box::new(p)));
    }
}

/// After the sending thread ended: the credits it gave back last, then each
/// port it held back set free (its credit kept for a restart).
fn sender_leftovers<H: HostSwitch>(host: &Mutex<H>, txs: &mut [PortTx], back: &mut Returned) {
    let mut h = lk(host);
    let sw = h.switch();
    for (port, c) in back.credits.drain(..) {
        sw.set_tx_credit(port, c);
    }
    for b in back.spent.drain(..) {
        sw.recycle(b);
    }
    for t in txs.iter_mut() {
        if t.park() {
            sw.set_tx_credit(t.port, TX_UNLIMITED);
        }
    }
}

fn set_bound(bound: &mut Vec<bool>, port: u32, on: bool) {
    let i = port as usize;
    if i >= bound.len() {
        bound.resize(i + 1, false);
    }
    bound[i] = on;
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
