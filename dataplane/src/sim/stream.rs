//! A traffic source: when each frame of a stream starts on the wire and how
//! long it is, in exact picoseconds (a 64-byte frame at 100 Gb/s takes
//! 6.72 ns; rounding to ns would be 4% off).
//!
//! Rates are layer-1 rates, as testers give them: a frame of S bytes (FCS
//! included) occupies S + 20 bytes of wire (preamble, start delimiter and
//! the minimum inter-frame gap). The frame reaches the switch when its last
//! bit has (store and forward): S + 8 bytes after its first preamble bit at
//! the tester port's line rate.

use super::frame::FrameBuilder;
use super::pause::PauseState;
use super::wire::WireOpts;

const PS: f64 = 1e12;

/// Frame-size law (sizes include the FCS).
#[derive(Clone, Debug, PartialEq)]
pub enum Sizes {
    Fixed(u32),
    /// Cycled in order.
    List(Vec<u32>),
    /// Drawn at random with these weights (seeded, so reproducible).
    Weighted(Vec<(u32, u32)>),
}

impl Sizes {
    /// Tolly/IxNetwork's iMIX: 64:55, 78:5, 576:17, 1518:23.
    pub fn imix() -> Sizes {
        Sizes::Weighted(vec![(64, 55), (78, 5), (576, 17), (1518, 23)])
    }

    pub fn min(&self) -> u32 {
        match self {
            Sizes::Fixed(s) => *s,
            Sizes::List(l) => l.iter().copied().min().unwrap_or(64),
            Sizes::Weighted(w) => w.iter().map(|x| x.0).min().unwrap_or(64),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    /// Percent of the tester port's line rate.
    Percent(f64),
    /// Layer-1 bits per second.
    Bps(f64),
    /// Frames per second.
    Fps(f64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Burst {
    pub frames: u64,
    /// Silence after each burst (from the end of its last frame).
    pub gap_ns: u64,
    /// Number of bursts (None: until the stream ends).
    pub count: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct StreamCfg {
    pub name: String,
    pub port: u32,
    pub rate: Rate,
    /// The tester port's speed (bit/s).
    pub line_rate_bps: f64,
    pub sizes: Sizes,
    pub burst: Option<Burst>,
    pub start_ns: u64,
    pub duration_ns: Option<u64>,
    pub frames: Option<u64>,
    pub builder: FrameBuilder,
}

/// A running source.
#[derive(Clone, Debug)]
pub struct Source {
    pub cfg: StreamCfg,
    pub id: u16,
    /// Start of the next frame's first bit (ps).
    next_ps: u64,
    /// Its size (FCS included).
    next_size: u32,
    pub seq: u64,
    in_burst: u64,
    bursts: u64,
    pub done: bool,
    rng: u64,
    list_pos: usize,
    /// Weighted sizes as (cumulative weight, size).
    cum: Vec<(u64, u32)>,
    end_ps: u64,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub first_tx_ns: Option<u64>,
    /// End of the last frame on the wire (with its gap) (ps).
    pub last_end_ps: u64,
    /// Priority flow control: what it obeys, when it is paused.
    pub pause: PauseState,
    /// Its inter-frame gap and FCS.
    pub wire: WireOpts,
}

impl Source {
    pub fn new(cfg: StreamCfg, id: u16, seed: u64) -> Source {
        let start = cfg.start_ns.saturating_mul(1000);
        let end = match cfg.duration_ns {
            Some(d) => start.saturating_add(d.saturating_mul(1000)),
            None => u64::MAX,
        };
        let mut cum = vec![];
        if let Sizes::Weighted(w) = &cfg.sizes {
            let mut acc = 0u64;
            for (size, weight) in w {
                acc += *weight as u64;
                cum.push((acc, *size));
            }
        }
        let mut s = Source {
            cum,
            cfg,
            id,
            next_ps: start,
            next_size: 0,
            seq: 0,
            in_burst: 0,
            bursts: 0,
            done: false,
            rng: (seed ^ (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1,
            list_pos: 0,
            end_ps: end,
            tx_frames: 0,
            tx_bytes: 0,
            first_tx_ns: None,
            last_end_ps: start,
            pause: PauseState::default(),
            wire: WireOpts::default(),
        };
        s.next_size = s.draw_size();
        s.check_done();
        s
    }

    fn random(&mut self) -> u64 {
        crate::hash::xorshift64star(&mut self.rng)
    }

    fn draw_size(&mut self) -> u32 {
        match &self.cfg.sizes {
            Sizes::Fixed(s) => *s,
            Sizes::List(l) => {
                let s = l[self.list_pos % l.len()];
                self.list_pos += 1;
                s
            }
            Sizes::Weighted(_) => {
                let total = self.cum.last().map(|c| c.0).unwrap_or(1).max(1);
                let r = self.random() % total;
                let i = self.cum.partition_point(|c| c.0 <= r);
                self.cum.get(i).map(|c| c.1).unwrap_or(64)
            }
        }
    }

    fn check_done(&mut self) {
        if self.next_ps >= self.end_ps || self.cfg.frames.map(|n| self.seq >= n).unwrap_or(false) {
            self.done = true;
        }
        if let Some(b) = self.cfg.burst {
            if b.count.map(|c| self.bursts >= c).unwrap_or(false) {
                self.done = true;
            }
        }
    }

    /// Wire time of a frame of `size` bytes (FCS included) with its
    /// preamble and gap, ps.
    fn slot_ps(&self, size: u32) -> f64 {
        let wire_bits = self.wire.wire_bits(size);
        match self.cfg.rate {
            Rate::Percent(p) => wire_bits / (self.cfg.line_rate_bps * p / 100.0) * PS,
            Rate::Bps(b) => wire_bits / b * PS,
            Rate::Fps(f) => PS / f,
        }
    }

    /// When the next frame starts: when due, or when a pause ends (ps).
    #[inline]
    fn start_ps(&self) -> u64 {
        self.pause.hold(self.next_ps)
    }

    /// When the next frame is complete at the switch (ns), if any.
    pub fn next_arrival_ns(&self) -> Option<u64> {
        let start = self.start_ps();
        if self.done || start >= self.end_ps {
            return None;
        }
        let rx_ps = (self.next_size as f64 + 8.0) * 8.0 / self.cfg.line_rate_bps * PS;
        Some((start + rx_ps.round() as u64).div_ceil(1000))
    }

    /// The frame that is due: (seq, size, first-bit time in ns); advances
    /// the source to the next one.
    pub fn take(&mut self) -> (u64, u32, u64) {
        let (seq, size, start_ps) = (self.seq, self.next_size, self.start_ps());
        let tx_ns = start_ps / 1000;
        self.first_tx_ns.get_or_insert(tx_ns);
        self.tx_frames += 1;
        self.tx_bytes += size as u64;
        let slot = self.slot_ps(size).round() as u64;
        // the frame's own time on the wire at line rate (plus the gap)
        let wire = (self.wire.wire_bits(size) / self.cfg.line_rate_bps * PS).round() as u64;
        self.last_end_ps = start_ps + wire;
        self.seq += 1;
        let mut next = start_ps + slot.max(1);
        if let Some(b) = self.cfg.burst {
            self.in_burst += 1;
            if self.in_burst >= b.frames {
                self.in_burst = 0;
                self.bursts += 1;
                next = (start_ps + wire).max(start_ps + slot) + b.gap_ns.saturating_mul(1000);
            }
        }
        self.next_ps = next;
        self.next_size = self.draw_size();
        self.check_done();
        (seq, size, tx_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::frame::{udp_template, FrameBuilder};

    fn cfg(rate: Rate, sizes: Sizes) -> StreamCfg {
        StreamCfg {
            name: "s".into(),
            port: 1,
            rate,
            line_rate_bps: 100e9,
            sizes,
            burst: None,
            start_ns: 0,
            duration_ns: Some(10_000),
            frames: None,
            builder: FrameBuilder::new(udp_template(1, 2, 3, 4, 5, 6, 0), vec![], true).unwrap(),
        }
    }

    #[test]
    fn line_rate_64_byte_frames() {
        let mut s = Source::new(cfg(Rate::Percent(100.0), Sizes::Fixed(64)), 0, 1);
        // 84 bytes of wire at 100 Gb/s = 6.72 ns; complete after 72 bytes = 5.76 ns
        assert_eq!(s.next_arrival_ns(), Some(6));
        let mut n = 0;
        while !s.done {
            s.take();
            n += 1;
        }
        assert_eq!(n, 1489, "10 us / 6.72 ns");
    }

    #[test]
    fn imix_mean_and_rates() {
        let mut s = Source::new(cfg(Rate::Percent(50.0), Sizes::imix()), 0, 7);
        let mut bytes = 0u64;
        let mut n = 0u64;
        s.cfg.duration_ns = None;
        s.end_ps = u64::MAX;
        for _ in 0..100_000 {
            let (_, size, _) = s.take();
            bytes += size as u64;
            n += 1;
        }
        let mean = bytes as f64 / n as f64;
        assert!((mean - 486.16).abs() < 5.0, "{mean}");
        // 50% of 100G in layer-1 bits
        let l1 = (bytes + 20 * n) as f64 * 8.0 / (s.next_ps as f64 / 1e12);
        assert!((l1 / 50e9 - 1.0).abs() < 0.001);
    }

    #[test]
    fn bursts_and_frame_counts() {
        let mut c = cfg(Rate::Percent(100.0), Sizes::Fixed(1518));
        c.burst = Some(Burst { frames: 3, gap_ns: 1000, count: Some(2) });
        c.duration_ns = None;
        let mut s = Source::new(c, 0, 1);
        let mut starts = vec![];
        while !s.done {
            starts.push(s.take().2);
        }
        // 1538 bytes of wire at 100G = 123.04 ns
        assert_eq!(starts, vec![0, 123, 246, 1369, 1492, 1615]);
        let mut c = cfg(Rate::Fps(1e6), Sizes::List(vec![64, 128]));
        c.frames = Some(3);
        let mut s = Source::new(c, 0, 1);
        let v: Vec<(u64, u32, u64)> = (0..3).map(|_| s.take()).collect();
        assert_eq!(v, vec![(0, 64, 0), (1, 128, 1000), (2, 64, 2000)]);
        assert!(s.done);
    }
}
