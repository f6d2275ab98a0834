//! Per-stream receive statistics, as a hardware tester's analyzer keeps
//! them: frames and bytes, sequence checking (loss, reordering,
//! duplicates), latency min/avg/max/stddev, jitter and a histogram, and a
//! time series of frames and bytes per interval.
//!
//! Sequence checking follows RFC 4737's idea of a reordered packet: one
//! whose sequence number is below the highest seen so far. Duplicates are
//! found with a bitmap of the last WINDOW sequence numbers; a frame older
//! than that counts as reordered ("late") and cannot be checked for
//! duplication. Jitter is reported twice: the mean absolute difference of
//! consecutive latencies (what testers call jitter / IPDV) and RFC 3550's
//! smoothed interarrival jitter.

use crate::json::J;
use crate::runs::LossRuns;

pub const WINDOW: u64 = 1 << 16;

pub struct Histogram {
    /// Upper bucket edges in ns, ascending: bucket k holds [edges[k-1], edges[k]).
    pub edges: Vec<u64>,
    pub counts: Vec<u64>,
}

impl Histogram {
    pub fn new(edges: Vec<u64>) -> Histogram {
        let n = edges.len() + 1;
        Histogram { edges, counts: vec![0; n] }
    }

    pub fn add(&mut self, v: i64) {
        let v = v.max(0) as u64;
        let k = self.edges.partition_point(|e| *e <= v);
        self.counts[k] += 1;
    }
}

/// 1-2-5 steps from 1 us to 1 s.
pub fn default_edges_ns() -> Vec<u64> {
    let mut v = Vec::new();
    let mut decade = 1_000u64;
    while decade <= 1_000_000_000 {
        for m in [1, 2, 5] {
            if decade * m <= 1_000_000_000 {
                v.push(decade * m);
            }
        }
        decade *= 10;
    }
    v
}

pub struct RxStream {
    pub id: u16,
    pub packets: u64,
    /// Frame bytes including the 4-byte FCS a wire would carry.
    pub bytes: u64,
    pub first_rx_ns: u64,
    pub last_rx_ns: u64,
    max_seq: Option<u64>,
    /// Send time of the frame with the highest sequence number.
    max_seq_tx_ns: u64,
    /// Runs of missing sequence numbers, with the send times around them.
    pub runs: LossRuns,
    pub reordered: u64,
    pub late: u64,
    pub max_reorder_distance: u64,
    pub duplicates: u64,
    seen: Vec<u64>,
    lat_n: u64,
    lat_min: i64,
    lat_max: i64,
    lat_mean: f64,
    lat_m2: f64,
    prev_lat: Option<i64>,
    ipdv_sum: f64,
    ipdv_n: u64,
    rfc3550: f64,
    hist: Histogram,
    interval_ns: u64,
    origin_ns: u64,
    series_packets: Vec<u64>,
    series_bytes: Vec<u64>,
}

impl RxStream {
    pub fn new(id: u16, edges: Vec<u64>, origin_ns: u64, interval_ns: u64) -> RxStream {
        RxStream {
            id, packets: 0, bytes: 0, first_rx_ns: 0, last_rx_ns: 0, max_seq: None,
            max_seq_tx_ns: 0, runs: LossRuns::default(),
            reordered: 0, late: 0, max_reorder_distance: 0, duplicates: 0,
            seen: vec![0; (WINDOW / 64) as usize],
            lat_n: 0, lat_min: i64::MAX, lat_max: i64::MIN, lat_mean: 0.0, lat_m2: 0.0,
            prev_lat: None, ipdv_sum: 0.0, ipdv_n: 0, rfc3550: 0.0,
            hist: Histogram::new(edges), interval_ns, origin_ns,
            series_packets: Vec::new(), series_bytes: Vec::new(),
        }
    }

    fn bit(&mut self, seq: u64) -> (usize, u64) {
        let slot = (seq % WINDOW) as usize;
        (slot / 64, 1u64 << (slot % 64))
    }

    /// Records a sequence number sent at `tx_ns`; false when it is a duplicate.
    fn check_seq(&mut self, seq: u64, tx_ns: u64) -> bool {
        match self.max_seq {
            Some(m) if seq <= m => {
                let dist = m - seq;
                if dist >= WINDOW {
                    self.late += 1;
                    self.reordered += 1;
                    self.max_reorder_distance = self.max_reorder_distance.max(dist);
                    self.runs.filled(seq);
                    return true;
                }
                let (w, b) = self.bit(seq);
                if self.seen[w] & b != 0 {
                    self.duplicates += 1;
                    return false;
                }
                self.seen[w] |= b;
                self.runs.filled(seq);
                self.reordered += 1;
                self.max_reorder_distance = self.max_reorder_distance.max(dist);
                true
            }
            prev => {
                let next = prev.map(|m| m + 1).unwrap_or(0);
                let before = if prev.is_some() { self.max_seq_tx_ns } else { 0 };
                self.runs.gap(next, seq - next, before, tx_ns);
                // moving the window forward forgets what falls out of it
                let from = prev.map(|m| m + 1).unwrap_or(seq);
                if seq - from >= WINDOW {
                    self.seen.iter_mut().for_each(|x| *x = 0);
                } else {
                    for s in from..seq {
                        let (w, b) = self.bit(s);
                        self.seen[w] &= !b;
                    }
                }
                let (w, b) = self.bit(seq);
                self.seen[w] |= b;
                self.max_seq = Some(seq);
                self.max_seq_tx_ns = tx_ns;
                true
            }
        }
    }

    pub fn add(&mut self, seq: u64, tx_ns: u64, rx_ns: u64, wire_len: u32) {
        let frame = wire_len as u64 + 4;
        if self.packets == 0 {
            self.first_rx_ns = rx_ns;
        }
        self.packets += 1;
        self.bytes += frame;
        self.last_rx_ns = self.last_rx_ns.max(rx_ns);
        let k = (rx_ns.saturating_sub(self.origin_ns) / self.interval_ns) as usize;
        if k >= self.series_packets.len() {
            self.series_packets.resize(k + 1, 0);
            self.series_bytes.resize(k + 1, 0);
        }
        self.series_packets[k] += 1;
        self.series_bytes[k] += frame;
        if !self.check_seq(seq, tx_ns) {
            return;
        }
        let lat = rx_ns as i64 - tx_ns as i64;
        self.lat_n += 1;
        self.lat_min = self.lat_min.min(lat);
        self.lat_max = self.lat_max.max(lat);
        let d = lat as f64 - self.lat_mean;
        self.lat_mean += d / self.lat_n as f64;
        self.lat_m2 += d * (lat as f64 - self.lat_mean);
        if let Some(p) = self.prev_lat {
            let dv = (lat - p).unsigned_abs() as f64;
            self.ipdv_sum += dv;
            self.ipdv_n += 1;
            self.rfc3550 += (dv - self.rfc3550) / 16.0;
        }
        self.prev_lat = Some(lat);
        self.hist.add(lat);
    }

    pub fn unique(&self) -> u64 {
        self.packets - self.duplicates
    }

    /// Frames missing below the highest sequence number seen (the sender's
    /// count is needed to also see loss at the tail).
    pub fn missing(&self) -> u64 {
        self.max_seq.map(|m| (m + 1).saturating_sub(self.unique())).unwrap_or(0)
    }

    pub fn to_json(&self) -> J {
        let has = self.lat_n > 0;
        let stddev = if self.lat_n > 1 { (self.lat_m2 / (self.lat_n - 1) as f64).sqrt() } else { 0.0 };
        J::obj(vec![
            ("id", J::U(self.id as u64)),
            ("rx_packets", J::U(self.packets)),
            ("rx_bytes", J::U(self.bytes)),
            ("unique", J::U(self.unique())),
            ("duplicates", J::U(self.duplicates)),
            ("reordered", J::U(self.reordered)),
            ("late", J::U(self.late)),
            ("max_reorder_distance", J::U(self.max_reorder_distance)),
            ("max_seq", J::opt_u(self.max_seq)),
            ("missing", J::U(self.missing())),
            ("first_rx_ns", J::U(self.first_rx_ns)),
            ("last_rx_ns", J::U(self.last_rx_ns)),
            ("latency_ns", if has {
                J::obj(vec![
                    ("count", J::U(self.lat_n)),
                    ("min", J::I(self.lat_min)),
                    ("avg", J::F(self.lat_mean)),
                    ("max", J::I(self.lat_max)),
                    ("stddev", J::F(stddev)),
                    ("jitter", J::F(if self.ipdv_n > 0 { self.ipdv_sum / self.ipdv_n as f64 } else { 0.0 })),
                    ("rfc3550_jitter", J::F(self.rfc3550)),
                ])
            } else {
                J::Null
            }),
            ("histogram", J::us(&self.hist.counts)),
            ("series_packets", J::us(&self.series_packets)),
            ("series_bytes", J::us(&self.series_bytes)),
            ("loss_runs", self.runs.to_json()),
            ("loss_runs_dropped", J::U(self.runs.dropped)),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s() -> RxStream {
        RxStream::new(1, vec![1000, 2000], 0, 1_000_000)
    }

    #[test]
    fn in_order_no_loss() {
        let mut r = s();
        for q in 0..10 {
            r.add(q, 100 * q, 100 * q + 1500, 60);
        }
        assert_eq!((r.packets, r.unique(), r.missing(), r.reordered, r.duplicates), (10, 10, 0, 0, 0));
        assert_eq!(r.bytes, 640);
        assert_eq!(r.hist.counts, vec![0, 10, 0]);
        assert_eq!((r.lat_min, r.lat_max), (1500, 1500));
    }

    #[test]
    fn gaps_reorder_duplicates() {
        let mut r = s();
        for q in [0, 1, 3, 2, 2, 5] {
            r.add(q, 0, 10, 60);
        }
        assert_eq!(r.packets, 6);
        assert_eq!(r.duplicates, 1);
        assert_eq!(r.reordered, 1);
        assert_eq!(r.max_reorder_distance, 1);
        assert_eq!(r.missing(), 1); // 4
        // 3 arrived after 2's gap opened: only 4's run still misses a frame
        assert_eq!(r.runs.to_json().render(), "[[4,1,1,0,0]]");
    }

    #[test]
    fn loss_runs_carry_the_send_times_around_them() {
        let mut r = s();
        for q in [0u64, 1, 2, 6, 7, 9] {
            r.add(q, 1000 * q, 1000 * q + 50, 60);
        }
        assert_eq!(r.runs.to_json().render(), "[[3,3,3,2000,6000],[8,1,1,7000,9000]]");
        assert!(r.to_json().render().contains("\"loss_runs\":[[3,3,3,2000,6000],[8,1,1,7000,9000]]"));
    }

    #[test]
    fn window_forgets_and_late_frames() {
        let mut r = s();
        r.add(0, 0, 1, 60);
        r.add(WINDOW + 10, 0, 1, 60);
        r.add(0, 0, 1, 60); // too old to check: late, not a duplicate
        assert_eq!((r.late, r.duplicates), (1, 0));
        // a slot reused by a newer sequence number is not a duplicate
        r.add(WINDOW + 11, 0, 1, 60);
        r.add(2 * WINDOW + 11, 0, 1, 60);
        assert_eq!(r.duplicates, 0);
    }

    #[test]
    fn latency_and_jitter() {
        let mut r = s();
        for (q, l) in [(0u64, 1000u64), (1, 3000), (2, 1000)] {
            r.add(q, 0, l, 60);
        }
        let j = r.to_json().render();
        assert!(j.contains("\"min\":1000"), "{j}");
        assert!(j.contains("\"max\":3000"));
        assert!(j.contains("\"jitter\":2000"));
        assert_eq!(r.hist.counts, vec![0, 2, 1]);
    }

    #[test]
    fn series_by_interval() {
        let mut r = RxStream::new(1, vec![], 1_000, 100);
        r.add(0, 0, 1_050, 60);
        r.add(1, 0, 1_250, 60);
        assert_eq!(r.series_packets, vec![1, 0, 1]);
    }

    #[test]
    fn edges() {
        let e = default_edges_ns();
        assert_eq!(e[0], 1_000);
        assert_eq!(*e.last().unwrap(), 1_000_000_000);
        assert_eq!(e.len(), 19);
    }
}
