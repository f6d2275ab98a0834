//! What a source puts on its wire besides the frames' bytes: the gap it
//! keeps between frames (96 bits, Ethernet's minimum, unless told: a
//! shorter one is RFC 2889's forward pressure) and whether the frames'
//! FCS is good (a bad one is an errored frame the port's MAC must drop).

/// Ethernet's minimum inter-frame gap (bits).
pub const MIN_IFG_BITS: u32 = 96;
/// Preamble and start-of-frame delimiter (bits).
const PREAMBLE_BITS: f64 = 64.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireOpts {
    /// The gap after each frame (bits).
    pub ifg_bits: u32,
    /// Every frame carries a bad FCS.
    pub bad_fcs: bool,
}

impl Default for WireOpts {
    fn default() -> Self {
        WireOpts { ifg_bits: MIN_IFG_BITS, bad_fcs: false }
    }
}

impl WireOpts {
    /// Bits a frame of `size` bytes (FCS included) takes on the wire with
    /// its preamble and gap: (size + 20) x 8 with the standard gap.
    #[inline]
    pub fn wire_bits(&self, size: u32) -> f64 {
        size as f64 * 8.0 + PREAMBLE_BITS + self.ifg_bits as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_gap_is_twenty_bytes_with_the_preamble() {
        let w = WireOpts::default();
        for size in [60u32, 64, 1518, 9216] {
            assert_eq!(w.wire_bits(size), ((size + 20) * 8) as f64);
        }
        assert_eq!(WireOpts { ifg_bits: 88, bad_fcs: false }.wire_bits(64), 83.0 * 8.0);
    }
}
