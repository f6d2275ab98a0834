//! A traffic source: when each frame of a stream starts on the wire and how
//! long it is, in exact picoseconds (a 64-byte frame at 100 Gb/s takes
//! 6.72 ns; rounding to ns would be 4% off).
//!
//! Rates are layer-1 rates, as testers give them: a frame of S bytes (FCS
//! included) occupies S + 20 bytes of wire (preamble, start delimiter and
//! the minimum inter-frame gap). The frame reaches the switch when its last
//! bit has (store and forward): S + 8 bytes after its first preamble bit at
//! the tester port's line rate.

use super::frame::{FrameBuilder, SizedHeader, Tag};
use super::pause::PauseState;
use super::wire::WireOpts;

const PS: f64 = 1e12;
/// Total weights up to this draw sizes from a table (of 2 bytes a weight
/// unit: 200 bytes for iMIX, at most 512 a stream).
const PICK_MAX: u64 = 256;

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

/// One of a stream's frame sizes, worked out once: its times on the wire
/// (exact ps, rounded as each frame's would be) and its header bytes.
#[derive(Clone, Debug)]
struct Shape {
    /// FCS included.
    size: u32,
    /// From the first preamble bit to the last bit at the switch.
    rx_ps: u64,
    /// The frame's own time on the wire at line rate, gap included.
    wire_ps: u64,
    /// From one frame's start to the next one's at the stream's rate.
    slot_ps: u64,
    /// The header written into each frame of this size (None: the
    /// builder writes every frame whole).
    header: Option<SizedHeader>,
}

/// A running source.
#[derive(Clone, Debug)]
pub struct Source {
    pub cfg: StreamCfg,
    pub id: u16,
    /// Start of the next frame's first bit (ps).
    next_ps: u64,
    /// Its shape (size).
    next_shape: usize,
    pub seq: u64,
    in_burst: u64,
    bursts: u64,
    pub done: bool,
    rng: u64,
    list_pos: usize,
    /// The distinct sizes.
    shapes: Vec<Shape>,
    /// Listed sizes as shapes, in order.
    list: Vec<usize>,
    /// Weighted sizes as (cumulative weight, shape).
    cum: Vec<(u64, usize)>,
    /// The shape of each draw below the total weight, when it is small
    /// (what a search of `cum` finds, looked up).
    pick: Vec<u16>,
    /// What an empty list or table of weights sends (64 bytes).
    fallback: usize,
    /// The wire options `shapes`' times were worked out for.
    timed_for: WireOpts,
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

/// The distinct sizes of a stream, as they are first named.
#[derive(Default)]
struct ShapeIndex {
    shapes: Vec<Shape>,
    by_size: std::collections::HashMap<u32, usize>,
}

impl ShapeIndex {
    /// The shape of `size`, added if new.
    fn of(&mut self, size: u32) -> usize {
        *self.by_size.entry(size).or_insert_with(|| {
            self.shapes.push(Shape { size, rx_ps: 0, wire_ps: 0, slot_ps: 0, header: None });
            self.shapes.len() - 1
        })
    }
}

impl Source {
    pub fn new(cfg: StreamCfg, id: u16, seed: u64) -> Source {
        let start = cfg.start_ns.saturating_mul(1000);
        let end = match cfg.duration_ns {
            Some(d) => start.saturating_add(d.saturating_mul(1000)),
            None => u64::MAX,
        };
        let mut index = ShapeIndex::default();
        let mut list = vec![];
        let mut cum = vec![];
        match &cfg.sizes {
            Sizes::Fixed(s) => {
                index.of(*s);
            }
            Sizes::List(l) => list = l.iter().map(|s| index.of(*s)).collect(),
            Sizes::Weighted(w) => {
                let mut acc = 0u64;
                for (size, weight) in w {
                    acc += *weight as u64;
                    cum.push((acc, index.of(*size)));
                }
            }
        }
        let fallback = index.of(64);
        let mut shapes = index.shapes;
        let total = cum.last().map_or(0, |c| c.0);
        let pick = if total <= PICK_MAX && shapes.len() <= u16::MAX as usize {
            (0..total).map(|r| cum[cum.partition_point(|c| c.0 <= r)].1 as u16).collect()
        } else {
            vec![]
        };
        for shape in &mut shapes {
            shape.header = cfg.builder.sized_header(shape.size as usize);
        }
        let wire = WireOpts::default();
        let mut s = Source {
            shapes,
            list,
            cum,
            pick,
            fallback,
            timed_for: wire,
            cfg,
            id,
            next_ps: start,
            next_shape: 0,
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
            wire,
        };
        s.time_shapes();
        s.next_shape = s.draw_shape();
        s.check_done();
        s
    }

    /// Works out each shape's times for the current wire options.
    fn time_shapes(&mut self) {
        self.timed_for = self.wire;
        for i in 0..self.shapes.len() {
            let size = self.shapes[i].size;
            let rx_ps = ((size as f64 + 8.0) * 8.0 / self.cfg.line_rate_bps * PS).round() as u64;
            let wire_ps = (self.wire.wire_bits(size) / self.cfg.line_rate_bps * PS).round() as u64;
            let slot_ps = self.slot_ps(size).round() as u64;
            let shape = &mut self.shapes[i];
            (shape.rx_ps, shape.wire_ps, shape.slot_ps) = (rx_ps, wire_ps, slot_ps);
        }
    }

    fn random(&mut self) -> u64 {
        crate::hash::xorshift64star(&mut self.rng)
    }

    fn draw_shape(&mut self) -> usize {
        match &self.cfg.sizes {
            Sizes::Fixed(_) => 0,
            Sizes::List(_) => {
                let Some(n) = std::num::NonZeroUsize::new(self.list.len()) else { return self.fallback };
                let s = self.list[self.list_pos % n];
                self.list_pos += 1;
                s
            }
            Sizes::Weighted(_) => {
                let total = self.cum.last().map(|c| c.0).unwrap_or(1).max(1);
                let r = self.random() % total;
                if let Some(&shape) = self.pick.get(r as usize) {
                    return shape as usize;
                }
                let i = self.cum.partition_point(|c| c.0 <= r);
                self.cum.get(i).map(|c| c.1).unwrap_or(self.fallback)
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
    #[inline]
    pub fn next_arrival_ns(&self) -> Option<u64> {
        let start = self.start_ps();
        if self.done || start >= self.end_ps {
            return None;
        }
        Some((start + self.shapes[self.next_shape].rx_ps).div_ceil(1000))
    }

    /// The frame that is due: (seq, size, first-bit time in ns); advances
    /// the source to the next one.
    pub fn take(&mut self) -> (u64, u32, u64) {
        let (seq, shape, tx_ns) = self.take_shape();
        (seq, self.shapes[shape].size, tx_ns)
    }

    /// As `take`, the frame's shape for `write_frame` instead of its size.
    #[inline]
    pub(crate) fn take_shape(&mut self) -> (u64, usize, u64) {
        if self.wire != self.timed_for {
            self.time_shapes();
        }
        let (seq, shape, start_ps) = (self.seq, self.next_shape, self.start_ps());
        let Shape { size, wire_ps: wire, slot_ps: slot, .. } = self.shapes[shape];
        let tx_ns = start_ps / 1000;
        self.first_tx_ns.get_or_insert(tx_ns);
        self.tx_frames += 1;
        self.tx_bytes += size as u64;
        // the frame's own time on the wire at line rate (plus the gap)
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
        self.next_shape = self.draw_shape();
        self.check_done();
        (seq, shape, tx_ns)
    }

    /// Writes frame `seq` of `shape` (from `take_shape`) into `out`.
    #[inline]
    pub(crate) fn write_frame(&self, out: &mut Vec<u8>, shape: usize, seq: u64, tag: Tag) {
        let s = &self.shapes[shape];
        match &s.header {
            Some(h) => self.cfg.builder.build_on(h, out, seq, tag),
            None => self.cfg.builder.build(out, s.size as usize, seq, tag),
        }
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
    fn wire_options_set_after_the_start_time_the_frames() {
        let mut s = Source::new(cfg(Rate::Percent(100.0), Sizes::List(vec![64, 64, 1518])), 0, 1);
        s.take();
        // a shorter gap (forward pressure): 64-byte frames 8 bits closer
        s.wire = WireOpts { ifg_bits: 88, bad_fcs: false };
        assert_eq!(s.take().2, 6, "the frame after the first 6.72 ns");
        assert_eq!(s.next_ps, 6720 + 6640);
        assert_eq!(s.take(), (2, 1518, 13));
        assert_eq!(s.next_ps, 13_360 + 1537 * 8 * 10);
        assert_eq!(s.last_end_ps, 13_360 + 1537 * 8 * 10);
    }

    #[test]
    fn the_size_table_draws_what_the_weights_search_draws() {
        for w in [vec![(64, 55), (78, 5), (576, 17), (1518, 23)], vec![(64, 0), (128, 3), (64, 2), (9000, 0), (256, 1)]] {
            let mut table = Source::new(cfg(Rate::Percent(100.0), Sizes::Weighted(w.clone())), 3, 9);
            let mut search = table.clone();
            assert!(!table.pick.is_empty());
            search.pick.clear();
            let draws = |s: &mut Source| (0..2000).map(|_| s.take().1).collect::<Vec<u32>>();
            assert_eq!(draws(&mut table), draws(&mut search), "{w:?}");
        }
        // a total weight past the table's: searched
        let s = Source::new(cfg(Rate::Percent(100.0), Sizes::Weighted(vec![(64, 5000), (128, 1)])), 0, 1);
        assert!(s.pick.is_empty());
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
