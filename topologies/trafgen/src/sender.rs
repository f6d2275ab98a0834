//! The generator: paces every stream on its own schedule and sends the
//! frames that are due in batches with sendmmsg.
//!
//! Each stream has a due time for its next frame. A burst of B frames is
//! due at once; the next burst is due after the time those B frames take at
//! the stream's rate, so bursts keep the average rate. Streams at `max`
//! take turns. When the socket pushes back (the interface's qdisc is full,
//! e.g. under htb shaping) the unsent frames wait and are stamped again
//! when they go. If the sender falls more than `max_lag` behind a
//! schedule, it does not try to catch up with a burst: the slip is counted
//! in the report (`schedule_slips`) and the schedule restarts from now.

use crate::json::J;
use crate::packet::{Template, Vary, PROBE_LEN};
use crate::sock::{monotonic_ns, realtime_ns, sleep_ns, stop_requested, TxSocket};
use crate::stream::{frame_interval_ns, Rate, SizeGen, StreamSpec};

pub struct SendConfig {
    pub iface: String,
    pub streams: Vec<StreamSpec>,
    pub duration: Option<f64>,
    pub batch: usize,
    pub seed: u64,
    pub qdisc_bypass: bool,
    pub max_lag_ns: f64,
    /// Waits shorter than this spin instead of sleeping (precise spacing,
    /// one busy core); 0 always sleeps.
    pub spin_ns: f64,
}

struct TxStream {
    spec: StreamSpec,
    tmpl: Template,
    sizes: SizeGen,
    next_size: u16,
    seq: u64,
    due: f64,
    burst_pos: u32,
    burst_time: f64,
    end: Option<f64>,
    done: bool,
    sent: u64,
    bytes: u64,
    first_tx: u64,
    last_tx: u64,
}

impl TxStream {
    /// Moves the schedule past one frame of `size` bytes.
    fn advance(&mut self, size: u16) {
        let iv = match self.spec.rate {
            Rate::Max => 1.0, // round robin among max-rate streams
            ref r => frame_interval_ns(r, size),
        };
        self.seq += 1;
        self.burst_time += iv;
        self.burst_pos += 1;
        if self.burst_pos >= self.spec.burst {
            self.due += self.burst_time;
            self.burst_pos = 0;
            self.burst_time = 0.0;
        }
        self.next_size = self.sizes.next_size();
        if let Some(c) = self.spec.count {
            if self.seq >= c {
                self.done = true;
            }
        }
    }
}

/// Where the probe sits in a frame of this template (its timestamp is
/// rewritten when a frame is retried).
fn probe_offset(t: &Template) -> usize {
    t.hdr.len()
}

pub fn run(cfg: &SendConfig) -> Result<J, String> {
    let sock = TxSocket::open(&cfg.iface, cfg.qdisc_bypass).map_err(|e| format!("{}: {e}", cfg.iface))?;
    let mut streams: Vec<TxStream> = Vec::new();
    for s in &cfg.streams {
        let mut sizes = SizeGen::new(s.sizes.clone(), cfg.seed ^ ((s.id as u64) << 32) ^ 0x9e37_79b9);
        let max = sizes.max_size() as u32;
        if max - 4 > sock.info.mtu + 14 {
            return Err(format!(
                "stream {}: {max}-byte frames do not fit the MTU of {} ({}); raise it with `ip link set {} mtu N`",
                s.id, cfg.iface, sock.info.mtu, cfg.iface));
        }
        let first = sizes.next_size();
        streams.push(TxStream {
            tmpl: Template::new(s, sock.info.mac),
            sizes,
            next_size: first,
            seq: 0,
            due: s.start * 1e9,
            burst_pos: 0,
            burst_time: 0.0,
            end: s.duration.map(|d| (s.start + d) * 1e9),
            done: s.count == Some(0),
            sent: 0,
            bytes: 0,
            first_tx: 0,
            last_tx: 0,
            spec: s.clone(),
        });
    }
    let max_frame = streams.iter().map(|s| s.sizes.max_size() as usize).max().unwrap_or(64);
    let mut slots: Vec<Vec<u8>> = (0..cfg.batch).map(|_| vec![0u8; max_frame]).collect();
    let mut lens = vec![0usize; cfg.batch];
    let mut owner = vec![0usize; cfg.batch];
    let mut probe_at = vec![0usize; cfg.batch];
    let mut sizes = vec![0u16; cfg.batch];
    let (mut slips, mut waits, mut batches) = (0u64, 0u64, 0u64);

    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
    let start_rt = realtime_ns();
    let t0 = monotonic_ns();
    let end = cfg.duration.map(|d| d * 1e9);
    'run: loop {
        if stop_requested() {
            break;
        }
        let now = (monotonic_ns() - t0) as f64;
        if end.map_or(false, |e| now >= e) {
            break;
        }
        for s in streams.iter_mut() {
            if !s.done && s.end.map_or(false, |e| now >= e) {
                s.done = true;
            }
        }
        if streams.iter().all(|s| s.done) {
            break;
        }
        let mut n = 0;
        while n < cfg.batch {
            let mut best: Option<usize> = None;
            for (i, s) in streams.iter().enumerate() {
                if !s.done && s.due <= now && best.map_or(true, |b| s.due < streams[b].due) {
                    best = Some(i);
                }
            }
            let Some(i) = best else { break };
            let s = &mut streams[i];
            if s.spec.rate != Rate::Max && now - s.due > cfg.max_lag_ns && s.burst_pos == 0 {
                slips += 1;
                s.due = now;
            }
            let size = s.next_size;
            let sp = &s.spec;
            let vary = Vary {
                sport: sp.sport.wrapping_add((s.seq % sp.sport_span as u64) as u16),
                src_mac_add: (s.seq % sp.src_span as u64) as u32,
                ip_src_add: (s.seq % sp.ip_src_span as u64) as u32,
                ip_dst_add: (s.seq % sp.ip_dst_span as u64) as u32,
            };
            let buf = &mut slots[n];
            let clear = (s.tmpl.hdr.len() + PROBE_LEN).max(60).min(buf.len());
            buf[..clear].iter_mut().for_each(|b| *b = 0);
            lens[n] = s.tmpl.write(buf, size, s.spec.id, s.seq, vary, realtime_ns());
            owner[n] = i;
            probe_at[n] = probe_offset(&s.tmpl);
            sizes[n] = size;
            s.advance(size);
            n += 1;
        }
        if n == 0 {
            let next = streams.iter().filter(|s| !s.done).map(|s| s.due).fold(f64::INFINITY, f64::min);
            let mut wait = next - now;
            if let Some(e) = end {
                wait = wait.min(e - now);
            }
            if wait > cfg.spin_ns {
                // sleeping overshoots by tens of us; frames due meanwhile go
                // out together in the next batch, stamped when they leave
                sleep_ns((wait - cfg.spin_ns).min(100e6) as u64);
            } else {
                std::hint::spin_loop();
            }
            continue;
        }
        batches += 1;
        let mut sent = 0;
        while sent < n {
            let frames: Vec<&[u8]> = slots[sent..n].iter().zip(&lens[sent..n]).map(|(b, l)| &b[..*l]).collect();
            let r = sock.send_batch(&frames).map_err(|e| format!("{}: {e}", cfg.iface))?;
            let now_rt = realtime_ns();
            for k in sent..sent + r {
                let s = &mut streams[owner[k]];
                if s.sent == 0 {
                    s.first_tx = now_rt;
                }
                s.sent += 1;
                s.bytes += sizes[k] as u64;
                s.last_tx = now_rt;
            }
            sent += r;
            if sent < n {
                // pushed back: wait for the queue to drain, then restamp
                waits += 1;
                if stop_requested() {
                    break 'run;
                }
                sleep_ns(20_000);
                let ts = realtime_ns();
                for k in sent..n {
                    let p = probe_at[k] + 10;
                    slots[k][p..p + 8].copy_from_slice(&ts.to_be_bytes());
                }
            }
        }
    }
    let elapsed = (monotonic_ns() - t0) as f64 / 1e9;
    let end_rt = realtime_ns();
    let (mut tp, mut tb) = (0u64, 0u64);
    let per: Vec<J> = streams
        .iter()
        .map(|s| {
            tp += s.sent;
            tb += s.bytes;
            let span = (s.last_tx.saturating_sub(s.first_tx)) as f64 / 1e9;
            J::obj(vec![
                ("id", J::U(s.spec.id as u64)),
                ("tx_packets", J::U(s.sent)),
                ("tx_bytes", J::U(s.bytes)),
                ("first_tx_ns", J::U(s.first_tx)),
                ("last_tx_ns", J::U(s.last_tx)),
                ("rate_pps", J::F(if span > 0.0 { (s.sent - 1) as f64 / span } else { 0.0 })),
            ])
        })
        .collect();
    Ok(J::obj(vec![
        ("tool", J::S("p4scope-trafgen".into())),
        ("mode", J::S("send".into())),
        ("iface", J::S(cfg.iface.clone())),
        ("start_ns", J::U(start_rt)),
        ("end_ns", J::U(end_rt)),
        ("elapsed_s", J::F(elapsed)),
        ("batch", J::U(cfg.batch as u64)),
        ("qdisc_bypass", J::Bool(cfg.qdisc_bypass)),
        ("batches", J::U(batches)),
        ("backpressure_waits", J::U(waits)),
        ("schedule_slips", J::U(slips)),
        ("interrupted", J::Bool(stop_requested())),
        ("tx_packets", J::U(tp)),
        ("tx_bytes", J::U(tb)),
        ("tx_pps", J::F(tp as f64 / elapsed.max(1e-9))),
        ("streams", J::A(per)),
    ]))
}
