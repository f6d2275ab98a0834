//! What the tester's receive side measures per stream: frames and bytes,
//! sequence errors, latency (first bit out minus first bit in: FIFO
//! latency, as the seed reports measure it) with min/avg/max, jitter (mean
//! absolute difference of consecutive latencies) and a histogram.

use super::frame::Tag;

/// Latency histogram edges (ns), a 1-2-5 series; the last bin is open.
pub const DEFAULT_EDGES_NS: [u64; 17] = [
    0, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000,
    5_000_000, 10_000_000,
];

#[derive(Clone, Debug)]
pub struct RxStats {
    pub frames: u64,
    /// Frame sizes as testers count them (FCS included).
    pub bytes: u64,
    pub first_ns: Option<u64>,
    pub last_ns: u64,
    pub max_seq: Option<u32>,
    /// Frames that came after a higher sequence number had.
    pub out_of_order: u64,
    /// Frames that skipped ahead (a gap in the sequence when they came).
    pub seq_gaps: u64,
    pub lat_min: u64,
    pub lat_max: u64,
    pub lat_sum: u128,
    pub jitter_sum: u128,
    last_lat: Option<u64>,
    pub hist: Vec<u64>,
}

impl RxStats {
    pub fn new(nbins: usize) -> RxStats {
        RxStats {
            frames: 0,
            bytes: 0,
            first_ns: None,
            last_ns: 0,
            max_seq: None,
            out_of_order: 0,
            seq_gaps: 0,
            lat_min: u64::MAX,
            lat_max: 0,
            lat_sum: 0,
            jitter_sum: 0,
            last_lat: None,
            hist: vec![0; nbins],
        }
    }

    pub fn record(&mut self, tag: &Tag, size: u64, rx_ns: u64, edges: &[u64]) {
        self.frames += 1;
        self.bytes += size;
        self.first_ns.get_or_insert(rx_ns);
        self.last_ns = rx_ns;
        match self.max_seq {
            Some(m) if tag.seq <= m => self.out_of_order += 1,
            Some(m) => {
                if tag.seq != m + 1 {
                    self.seq_gaps += 1;
                }
                self.max_seq = Some(tag.seq);
            }
            None => {
                if tag.seq != 0 {
                    self.seq_gaps += 1;
                }
                self.max_seq = Some(tag.seq);
            }
        }
        let lat = rx_ns.saturating_sub(tag.tx_ns);
        self.lat_min = self.lat_min.min(lat);
        self.lat_max = self.lat_max.max(lat);
        self.lat_sum += lat as u128;
        if let Some(l) = self.last_lat {
            self.jitter_sum += l.abs_diff(lat) as u128;
        }
        self.last_lat = Some(lat);
        let bin = edges.partition_point(|e| *e <= lat).saturating_sub(1);
        if let Some(h) = self.hist.get_mut(bin) {
            *h += 1;
        }
    }

    pub fn lat_avg(&self) -> f64 {
        if self.frames == 0 {
            0.0
        } else {
            self.lat_sum as f64 / self.frames as f64
        }
    }

    pub fn jitter(&self) -> f64 {
        if self.frames < 2 {
            0.0
        } else {
            self.jitter_sum as f64 / (self.frames - 1) as f64
        }
    }
}

/// Per-port receive counters (all frames, tagged or not).
#[derive(Clone, Copy, Debug, Default)]
pub struct PortRx {
    pub frames: u64,
    pub bytes: u64,
    pub untagged: u64,
    pub first_ns: Option<u64>,
    pub last_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_jitter_histogram_and_order() {
        let mut s = RxStats::new(DEFAULT_EDGES_NS.len());
        let t = |seq, tx| Tag { stream: 0, seq, tx_ns: tx };
        s.record(&t(0, 0), 64, 150, &DEFAULT_EDGES_NS);
        s.record(&t(2, 10), 64, 1010, &DEFAULT_EDGES_NS);
        s.record(&t(1, 5), 64, 2005, &DEFAULT_EDGES_NS);
        assert_eq!((s.lat_min, s.lat_max), (150, 2000));
        assert_eq!(s.lat_avg(), 3150.0 / 3.0);
        assert_eq!(s.jitter(), (850.0 + 1000.0) / 2.0);
        assert_eq!((s.out_of_order, s.seq_gaps), (1, 1));
        assert_eq!(s.hist[1], 1, "150 ns in [100, 200)");
        assert_eq!(s.hist[4], 1, "1000 ns in [1000, 2000)");
        assert_eq!(s.hist[5], 1, "2000 ns in [2000, 5000)");
    }
}
