//! The gap a sink sees between frames on one port: from the end of a
//! frame's FCS to the first bit of the next frame's preamble, from the
//! exact times (ps) the frames' first bits left the switch and the port's
//! line rate. RFC 2889's forward pressure fails when it is below 96 bits
//! (the switch sends faster than the line allows).

/// Preamble, start delimiter and FCS around a frame's bytes (the engine's
/// frames have no FCS).
const PREAMBLE_FCS_BYTES: f64 = 12.0;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GapMeter {
    /// When the last frame's FCS ended (ps).
    last_end_ps: Option<f64>,
    /// The smallest gap seen (bits), if two frames came.
    pub min_gap_bits: Option<f64>,
    /// Frames measured.
    pub frames: u64,
}

impl GapMeter {
    /// A frame of `len` bytes (without FCS) whose preamble's first bit
    /// came at `start_ps` on a port of `rate_bps`.
    pub fn frame(&mut self, start_ps: u64, len: usize, rate_bps: u64) {
        let rate = rate_bps as f64;
        let start = start_ps as f64;
        if let Some(end) = self.last_end_ps {
            let gap = (start - end) * rate / 1e12;
            self.min_gap_bits = Some(self.min_gap_bits.map_or(gap, |m| m.min(gap)));
        }
        self.last_end_ps = Some(start + (len as f64 + PREAMBLE_FCS_BYTES) * 8.0 * 1e12 / rate);
        self.frames += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_to_back_frames_at_100g_keep_96_bits() {
        let mut g = GapMeter::default();
        // 64-byte frames (60 bytes of data): 84 bytes of wire = 6720 ps
        for k in 0..10u64 {
            g.frame(k * 6720, 60, 100_000_000_000);
        }
        assert!((g.min_gap_bits.unwrap() - 96.0).abs() < 1e-6, "{:?}", g.min_gap_bits);
        // one frame 88 bits after the previous one's FCS: 83 bytes = 6640 ps
        g.frame(9 * 6720 + 6640, 60, 100_000_000_000);
        assert!((g.min_gap_bits.unwrap() - 88.0).abs() < 1e-6);
        assert_eq!(g.frames, 11);
    }

    #[test]
    fn one_frame_has_no_gap() {
        let mut g = GapMeter::default();
        g.frame(0, 1514, 1_000_000_000);
        assert_eq!(g.min_gap_bits, None);
    }
}
