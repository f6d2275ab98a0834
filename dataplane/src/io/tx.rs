//! The real-time loop's sending side: threads of their own (p4scope-tx),
//! one per CPU up to 4, port p sent by thread p mod n, as BMv2's egress
//! threads transmit (port p by thread p mod 4) while its ingress thread
//! works on the next packets. A send into a veth runs the receiving host's
//! network stack in the sender's context: under TCP most of the work, the
//! data's receiver on one port and the sender's ACK processing on the
//! other; here it overlaps the loop's own work and each other.
//!
//! The loop sends a round itself while it keeps up (no hand-over, no
//! wake-up) and hands it over while frames pile up in its rings, in the
//! order the switch emitted them; it takes back spent buffers and each
//! port's dequeue credit ([`super::rt`]'s egress back-pressure, kept per
//! port here). What it handed over and the threads have not sent yet is
//! bounded ([`BACKLOG`]): beyond that the loop leaves further frames in
//! the receive rings, as when it sent them itself, so a receive ring stays
//! the buffer in front of a slow sender and memory stays bounded. The
//! threads follow the loop's scheduling (real-time priority or not).

use super::pcap::PcapWriter;
use super::rt::{PortStats, Shared};
use super::sys;
use crate::engine::Output;
use crate::tm::TX_UNLIMITED;
use std::collections::{BTreeMap, VecDeque};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Packets a port that the kernel pushed back may dequeue in the round
/// after its refused frames were taken.
pub const RESUME_WINDOW: u32 = 8;
/// A window this large means the port runs free again.
pub const MAX_WINDOW: u32 = 1024;
/// Frames handed to the sending thread and not sent yet, at most, before
/// the loop stops taking frames from the receive rings.
pub const BACKLOG: usize = 512;
const MAX_WAIT_NS: u64 = 20_000_000;

fn lk<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A port's egress back-pressure (see [`super::rt`]'s module doc).
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

    /// Whether the port is (or was, this round) held back.
    fn in_play(&self) -> bool {
        self.window != TX_UNLIMITED || !self.held.is_empty() || self.was_held
    }
}

/// The sending half of a real-time port.
pub struct PortTx {
    pub port: u32,
    /// The port's socket (a duplicate of the loop's descriptor).
    fd: OwnedFd,
    /// The socket's send buffer as the kernel counts it.
    sndbuf: usize,
    /// At least what the kernel counts against the send buffer now (it
    /// only shrinks between our sends): read back when the next frames
    /// might not fit.
    queued: usize,
    pcap_out: Option<PcapWriter>,
    tx: TxState,
}

/// Engine time to the pcap files' wall-clock time (ns since the epoch).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub epoch0: u64,
    pub eng0: u64,
}

impl Clock {
    fn wall(&self, t: u64) -> u64 {
        self.epoch0 + t.saturating_sub(self.eng0)
    }
}

impl PortTx {
    pub fn new(port: u32, fd: OwnedFd, sndbuf: usize, pcap_out: Option<PcapWriter>) -> PortTx {
        PortTx { port, fd, sndbuf, queued: 0, pcap_out, tx: TxState::new() }
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
    fn flush_held(&mut self, clock: Clock, st: &mut PortStats, spent: &mut Vec<Vec<u8>>) {
        let held = std::mem::take(&mut self.tx.held);
        let frames: Vec<&[u8]> = held.iter().map(|o| o.data.as_slice()).collect();
        let done = self.send(&frames, |k| clock.wall(held[k].time_ns), st);
        drop(frames);
        let mut held = held;
        spent.extend(held.drain(..done).map(|o| o.data));
        self.tx.held = held;
    }

    /// Sends one round's frames for this port (`group`, in order) behind
    /// any held ones; what the kernel refuses is held.
    fn send_group(&mut self, group: &mut [Output], clock: Clock, st: &mut PortStats, spent: &mut Vec<Vec<u8>>) {
        self.tx.emitted += group.len() as u32;
        let done = if self.tx.held.is_empty() {
            let frames: Vec<&[u8]> = group.iter().map(|o| o.data.as_slice()).collect();
            let g = &*group;
            self.send(&frames, |k| clock.wall(g[k].time_ns), st)
        } else {
            0
        };
        for o in group[..done].iter_mut() {
            spent.push(std::mem::take(&mut o.data));
        }
        for o in group[done..].iter_mut() {
            self.tx.held.push_back(Output { port: o.port, data: std::mem::take(&mut o.data), time_ns: o.time_ns });
        }
    }

    /// The port goes away: frames still held are lost (counted), and the
    /// switch must no longer hold its queue back.
    fn retire(self, st: &mut PortStats, credits: &mut Vec<(u32, u32)>) {
        st.tx_errors += self.tx.held.len() as u64;
        if self.tx.window != TX_UNLIMITED || !self.tx.held.is_empty() {
            credits.push((self.port, TX_UNLIMITED));
        }
    }

    /// The loop stopped: the switch runs free while it is stopped, and a
    /// restart hands the port's credit back first.
    pub fn park(&mut self) -> bool {
        if !self.tx.in_play() {
            return false;
        }
        self.tx.credit = Some(if self.tx.held.is_empty() { self.tx.window } else { 0 });
        true
    }

    /// The credit to hand the switch when the loop starts (see `park`).
    pub fn take_credit(&mut self) -> Option<u32> {
        self.tx.credit.take()
    }

    pub fn flush_pcap(&mut self) {
        if let Some(w) = self.pcap_out.as_mut() {
            let _ = w.flush();
        }
    }
}

enum Item {
    Outs(Vec<Output>),
    Add(PortTx),
    Remove(u32),
}

/// What the thread gives back to the loop.
#[derive(Default)]
pub struct Returned {
    /// Buffers of frames sent (or dropped), for the switch to reuse.
    pub spent: Vec<Vec<u8>>,
    /// (port, credit) to hand the switch, oldest first.
    pub credits: Vec<(u32, u32)>,
    /// Emptied hand-over vectors, for the loop's next rounds.
    pub vecs: Vec<Vec<Output>>,
}

/// The ports' sending halves and what their sends counted, used by
/// whoever sends: the thread, or the loop itself when the thread has
/// nothing left to do.
struct Core {
    ports: Vec<PortTx>,
    stats: BTreeMap<u32, PortStats>,
    no_port: u64,
    back: Returned,
}

impl Core {
    /// Carries out `items` in order; returns the frames they handed over.
    fn apply(&mut self, items: &mut Vec<Item>, clock: Clock) -> usize {
        let mut handed = 0;
        let mut rounds = 0;
        for item in items.drain(..) {
            match item {
                Item::Add(p) => {
                    if let Some(i) = self.ports.iter().position(|x| x.port == p.port) {
                        let old = self.ports.swap_remove(i);
                        old.retire(self.stats.entry(p.port).or_default(), &mut self.back.credits);
                    }
                    self.ports.push(p);
                }
                Item::Remove(port) => {
                    if let Some(i) = self.ports.iter().position(|x| x.port == port) {
                        let old = self.ports.swap_remove(i);
                        old.retire(self.stats.entry(port).or_default(), &mut self.back.credits);
                    }
                }
                Item::Outs(mut outs) => {
                    handed += outs.len();
                    self.round(&mut outs, clock);
                    rounds += 1;
                    outs.clear();
                    self.back.vecs.push(outs);
                }
            }
        }
        if rounds == 0 {
            // woken by a socket with room: the held frames go now
            self.round(&mut [], clock);
        }
        handed
    }

    /// One round: frames held before go first, then the round's frames
    /// port by port in the order the switch emitted them; each port's
    /// credit after.
    fn round(&mut self, outs: &mut [Output], clock: Clock) {
        let Core { ports, stats, no_port, back } = self;
        for p in ports.iter_mut().filter(|p| !p.tx.held.is_empty()) {
            p.tx.was_held = true;
            p.flush_held(clock, stats.entry(p.port).or_default(), &mut back.spent);
        }
        outs.sort_by_key(|o| o.port); // stable: per-port order kept
        let mut i = 0;
        while i < outs.len() {
            let port = outs[i].port;
            let j = i + outs[i..].iter().take_while(|o| o.port == port).count();
            match ports.iter_mut().find(|p| p.port == port) {
                Some(p) => p.send_group(&mut outs[i..j], clock, stats.entry(port).or_default(), &mut back.spent),
                None => {
                    *no_port += (j - i) as u64;
                    back.spent.extend(outs[i..j].iter_mut().map(|o| std::mem::take(&mut o.data)));
                }
            }
            i = j;
        }
        for p in ports.iter_mut() {
            if !p.tx.in_play() {
                p.tx.emitted = 0;
                continue;
            }
            if p.tx.after_send() {
                stats.entry(p.port).or_default().tx_blocked += 1;
            }
            if let Some(c) = p.tx.credit.take() {
                back.credits.push((p.port, c));
            }
        }
        back.spent.retain(|b| b.capacity() > 0);
    }

    /// Hands credits, buffers and counts over; returns whether there were
    /// credits (the loop must apply them soon).
    fn report(&mut self, common: &Common, sh: &Shared) -> bool {
        let credits = !self.back.credits.is_empty();
        {
            let mut b = lk(&common.back);
            b.spent.append(&mut self.back.spent);
            b.credits.append(&mut self.back.credits);
            b.vecs.append(&mut self.back.vecs);
        }
        if !self.stats.is_empty() {
            sh.add_stats(&mut self.stats);
        }
        if self.no_port > 0 {
            sh.count_no_port(std::mem::take(&mut self.no_port));
        }
        credits
    }

    fn held(&self) -> bool {
        self.ports.iter().any(|p| !p.tx.held.is_empty())
    }
}

/// What the loop and all sending threads share.
struct Common {
    /// Frames handed over and not sent (or held) yet, all threads.
    backlog: AtomicUsize,
    /// The loop waits for the backlog to shrink (woken when it has).
    loop_waits: AtomicBool,
    /// The loop waits for frames (its rings were empty).
    loop_waits_input: AtomicBool,
    /// A thread went idle with the others while the loop waited for
    /// frames and none had come: the whole switch was idle for a moment.
    went_idle: AtomicBool,
    /// The loop's scheduling, followed (SCHED_FIFO priority, 0: normal).
    priority: AtomicI32,
    /// Each port's socket (duplicates), to see whether frames came in.
    rx_fds: Mutex<Vec<(u32, OwnedFd)>>,
    back: Mutex<Returned>,
}

impl Common {
    /// Whether no frame waits in any port's ring (no system call per port:
    /// one poll with no wait).
    fn rings_empty(&self) -> bool {
        let fds: Vec<(RawFd, bool)> = lk(&self.rx_fds).iter().map(|(_, f)| (f.as_raw_fd(), false)).collect();
        let mut ready = vec![];
        sys::poll_ready(&fds, 0, &mut ready).is_ok() && ready.is_empty()
    }
}

/// One sending thread: the ports whose number is its index modulo the
/// number of threads, as BMv2 maps ports to egress threads.
struct Inner {
    wake: OwnedFd,
    stop: AtomicBool,
    /// Taken with `items` held only by a sender: whoever holds it has
    /// nothing older to send.
    core: Mutex<Core>,
    items: Mutex<Vec<Item>>,
    /// The thread waits (a hand-over must wake it).
    waiting: AtomicBool,
}

/// How the loop sends a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendHow {
    /// In the loop's thread, after anything handed over before.
    Here,
    /// In the loop's thread if the sending thread has nothing to do, else
    /// handed over.
    HereIfFree,
    /// Handed to the sending thread.
    HandOver,
}

struct Worker {
    inner: Arc<Inner>,
    thread: Option<JoinHandle<Vec<PortTx>>>,
}

/// The sending threads, owned by the loop.
pub struct Sender {
    workers: Vec<Worker>,
    common: Arc<Common>,
    sh: Arc<Shared>,
    clock: Clock,
    /// Emptied vectors for the rounds' parts.
    pool: Vec<Vec<Output>>,
    parts: Vec<Vec<Output>>,
}

/// Sending threads: one per CPU, at most 4 (BMv2's egress threads).
pub fn threads_wanted() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).clamp(1, 4)
}

impl Sender {
    pub fn start(sh: Arc<Shared>, clock: Clock, threads: usize) -> std::io::Result<Sender> {
        let common = Arc::new(Common {
            backlog: AtomicUsize::new(0),
            loop_waits: AtomicBool::new(false),
            loop_waits_input: AtomicBool::new(false),
            went_idle: AtomicBool::new(false),
            priority: AtomicI32::new(0),
            rx_fds: Mutex::new(vec![]),
            back: Mutex::new(Returned::default()),
        });
        let mut sender = Sender { workers: vec![], common, sh, clock, pool: vec![], parts: vec![] };
        for _ in 0..threads.max(1) {
            let inner = Arc::new(Inner {
                wake: sys::event_fd()?,
                stop: AtomicBool::new(false),
                core: Mutex::new(Core { ports: vec![], stats: BTreeMap::new(), no_port: 0, back: Returned::default() }),
                items: Mutex::new(vec![]),
                waiting: AtomicBool::new(false),
            });
            let (i2, c2, sh2) = (inner.clone(), sender.common.clone(), sender.sh.clone());
            let thread = std::thread::Builder::new().name("p4scope-tx".into()).spawn(move || run(i2, c2, sh2, clock))?;
            sender.workers.push(Worker { inner, thread: Some(thread) });
            sender.parts.push(vec![]);
        }
        Ok(sender)
    }

    fn worker_of(&self, port: u32) -> usize {
        port as usize % self.workers.len()
    }

    fn push(w: &Inner, item: Item) {
        lk(&w.items).push(item);
        if w.waiting.load(Ordering::SeqCst) {
            sys::event_signal(&w.wake);
        }
    }

    /// Sends a round's frames (emptying `outs`), each port's with its
    /// thread. Returns how many were handed over.
    pub fn send(&mut self, outs: &mut Vec<Output>, how: SendHow) -> usize {
        if outs.is_empty() {
            return 0;
        }
        let n = self.workers.len();
        let first = self.worker_of(outs[0].port);
        if outs.iter().all(|o| o.port as usize % n == first) {
            return self.send_part(first, outs, how);
        }
        for o in outs.drain(..) {
            let k = o.port as usize % n;
            self.parts[k].push(o);
        }
        let mut handed = 0;
        for k in 0..n {
            let mut part = std::mem::take(&mut self.parts[k]);
            handed += self.send_part(k, &mut part, how);
            self.parts[k] = part;
        }
        handed
    }

    /// Sends one thread's part of a round (emptying `outs`, refilled with a
    /// spare vector when handed over); returns how many were handed over.
    fn send_part(&mut self, k: usize, outs: &mut Vec<Output>, how: SendHow) -> usize {
        if outs.is_empty() {
            return 0;
        }
        let w = self.workers[k].inner.clone();
        let core = match how {
            SendHow::Here => Some(lk(&w.core)),
            SendHow::HereIfFree => w.core.try_lock().ok(),
            SendHow::HandOver => None,
        };
        if let Some(mut core) = core {
            let mut items = std::mem::take(&mut *lk(&w.items));
            if items.is_empty() || how == SendHow::Here {
                // older frames the thread has not taken yet go first
                let handed = core.apply(&mut items, self.clock);
                core.round(outs, self.clock);
                outs.clear();
                core.report(&self.common, &self.sh);
                if core.held() {
                    sys::event_signal(&w.wake); // to wait for room to send
                }
                drop(core);
                self.common.backlog.fetch_sub(handed, Ordering::SeqCst);
                return 0;
            }
            *lk(&w.items) = items; // nothing was added meanwhile: the core was held
        }
        let handed = outs.len();
        self.common.backlog.fetch_add(handed, Ordering::SeqCst);
        let v = std::mem::replace(outs, self.pool.pop().unwrap_or_default());
        Self::push(&w, Item::Outs(v));
        handed
    }

    /// A port's sending half: taken at once when nothing handed over waits
    /// for its thread (no hand-over to wait for), else after what waits.
    pub fn add(&mut self, p: PortTx) {
        if let Ok(fd) = p.fd.try_clone() {
            let mut fds = lk(&self.common.rx_fds);
            fds.retain(|(q, _)| *q != p.port);
            fds.push((p.port, fd));
        }
        let k = self.worker_of(p.port);
        self.change(k, Item::Add(p));
    }

    pub fn remove(&mut self, port: u32) {
        lk(&self.common.rx_fds).retain(|(q, _)| *q != port);
        let k = self.worker_of(port);
        self.change(k, Item::Remove(port));
    }

    fn change(&self, k: usize, item: Item) {
        let w = &self.workers[k].inner;
        let mut core = lk(&w.core);
        if lk(&w.items).is_empty() {
            core.apply(&mut vec![item], self.clock);
            core.report(&self.common, &self.sh);
        } else {
            drop(core);
            Self::push(w, item);
        }
    }

    /// Whether the loop may take more frames from its rings; if not, a
    /// thread wakes the loop (`Shared::wake`) once it may.
    pub fn room(&self) -> bool {
        if self.common.backlog.load(Ordering::SeqCst) < BACKLOG {
            return true;
        }
        self.common.loop_waits.store(true, Ordering::SeqCst);
        // sent meanwhile: a thread may have looked before the flag was up
        self.common.backlog.load(Ordering::SeqCst) < BACKLOG
    }

    /// Whether everything handed over has been sent (or held). A frame
    /// sent into a veth reaches the other end's socket during the send, so
    /// a loop that finds this true and then its rings empty was idle with
    /// the threads.
    pub fn idle(&self) -> bool {
        self.common.backlog.load(Ordering::SeqCst) == 0
    }

    /// The loop is about to wait for frames (true) or has stopped waiting.
    pub fn loop_waits_input(&self, on: bool) {
        self.common.loop_waits_input.store(on, Ordering::SeqCst);
    }

    /// Whether the threads went idle while the loop waited for frames and
    /// none had come, since the last call: the switch was idle for a moment
    /// although the loop never saw the threads idle.
    pub fn took_idle(&self) -> bool {
        self.common.went_idle.swap(false, Ordering::SeqCst)
    }

    /// What was given back since the last call, swapped into `into` (the
    /// emptied vectors are kept for the next rounds).
    pub fn take_back(&mut self, into: &mut Returned) {
        std::mem::swap(&mut *lk(&self.common.back), into);
        self.pool.append(&mut into.vecs);
    }

    pub fn set_priority(&self, p: i32) {
        self.common.priority.store(p, Ordering::Relaxed);
        for w in &self.workers {
            sys::event_signal(&w.inner.wake);
        }
    }

    /// Sends everything handed over, then ends the threads; returns the
    /// ports (frames the kernel refused still held).
    pub fn stop(mut self) -> Vec<PortTx> {
        for w in &self.workers {
            w.inner.stop.store(true, Ordering::SeqCst);
            sys::event_signal(&w.inner.wake);
        }
        let mut ports = vec![];
        for w in self.workers.iter_mut() {
            if let Some(t) = w.thread.take() {
                ports.extend(t.join().unwrap_or_default());
            }
        }
        ports
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        for w in &self.workers {
            w.inner.stop.store(true, Ordering::SeqCst);
            sys::event_signal(&w.inner.wake);
        }
        for w in self.workers.iter_mut() {
            if let Some(t) = w.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// A thread: takes what the loop handed over, sends it port by port,
/// reports credits and spent buffers, and waits for more work or for a
/// socket holding refused frames to take more.
fn run(inner: Arc<Inner>, common: Arc<Common>, sh: Arc<Shared>, clock: Clock) -> Vec<PortTx> {
    let mut items: Vec<Item> = vec![];
    let mut fds: Vec<(RawFd, bool)> = vec![];
    let mut ready = vec![];
    let mut priority = 0;
    loop {
        sys::event_clear(&inner.wake);
        let p = common.priority.load(Ordering::Relaxed);
        if p != priority {
            let _ = sys::set_thread_priority(p); // refused: normal scheduling
            priority = p;
        }
        let stopping = inner.stop.load(Ordering::SeqCst);
        let writable = ready.iter().any(|&i| i > 0);
        let mut core = lk(&inner.core);
        std::mem::swap(&mut *lk(&inner.items), &mut items);
        if !items.is_empty() || writable {
            ready.clear();
            let handed = core.apply(&mut items, clock);
            let credits = core.report(&common, &sh);
            drop(core);
            let left = common.backlog.fetch_sub(handed, Ordering::SeqCst) - handed;
            let wanted = left < BACKLOG && common.loop_waits.swap(false, Ordering::SeqCst);
            if credits || wanted {
                sh.wake();
            }
            continue;
        }
        if stopping {
            for p in core.ports.iter_mut() {
                p.flush_pcap();
            }
            return std::mem::take(&mut core.ports);
        }
        fds.clear();
        fds.push((inner.wake.as_raw_fd(), false));
        // a port holding refused frames also waits for room to send
        fds.extend(core.ports.iter().filter(|p| !p.tx.held.is_empty()).map(|p| (p.fd.as_raw_fd(), true)));
        drop(core);
        // idle with the loop and the other threads, unless what was just
        // sent came back in
        if common.loop_waits_input.load(Ordering::SeqCst)
            && common.backlog.load(Ordering::SeqCst) == 0
            && common.rings_empty()
        {
            common.went_idle.store(true, Ordering::SeqCst);
        }
        inner.waiting.store(true, Ordering::SeqCst);
        if lk(&inner.items).is_empty() && sys::poll_ready(&fds, MAX_WAIT_NS, &mut ready).is_err() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        inner.waiting.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
