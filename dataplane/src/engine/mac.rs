//! The ports' Ethernet MACs on the virtual wires.
//!
//! Receive: a frame that reaches a port over a virtual wire (the tester's
//! sources, [`Switch::deliver_frame`]) passes the port's MAC before the
//! parser, as on a real switch: frames shorter than 64 bytes or longer
//! than the port's maximum frame, and frames whose FCS is bad, are counted
//! (RMON's etherStats classes) and dropped, unless the port is configured
//! to pass errored frames (then they are counted as passed and go on to the
//! parser). Sizes count the FCS, as the wire carries it; the engine's
//! packets do not hold it (a 64-byte frame is 60 bytes of data), so the
//! FCS's verdict comes with the frame. The maximum frame is the port's MTU
//! plus the Ethernet header and FCS (18 bytes), plus 4 for each VLAN tag
//! (802.1Q/802.1ad, at most two) as IEEE 802.3 allows tagged frames.
//!
//! Frames handed to `deliver`/`inject` (STF, packet I/O, the real-time
//! AF_PACKET ports, which never see an FCS) are past any MAC, as BMv2's
//! are: they are not checked.
//!
//! Transmit: the exact time (ps) each transmitted frame's first bit left,
//! kept beside the outputs until they are taken, so a sink on the wire can
//! measure the gaps between frames below a nanosecond.

use super::{Output, Switch};

/// A port's MTU unless configured: a 9216-byte untagged frame, the largest
/// frame the experiments send.
pub const DEFAULT_MTU: u32 = 9198;
/// The smallest legal frame (FCS included).
pub const MIN_FRAME: u32 = 64;
/// Ethernet header and FCS around the MTU.
const FRAME_OVERHEAD: u32 = 18;
const VLAN_TAG: u32 = 4;

/// A port's receive MAC: its MTU and whether it passes errored frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacCfg {
    pub mtu: u32,
    pub pass_errored: bool,
}

impl Default for MacCfg {
    fn default() -> Self {
        MacCfg { mtu: DEFAULT_MTU, pass_errored: false }
    }
}

/// Per-port receive counters (RMON etherStats classes; sizes with FCS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MacStats {
    /// Legal frames handed to the parser.
    pub frames_ok: u64,
    /// Shorter than 64 bytes, good FCS.
    pub undersize: u64,
    /// Shorter than 64 bytes, bad FCS.
    pub fragments: u64,
    /// Longer than the maximum frame, good FCS.
    pub oversize: u64,
    /// Longer than the maximum frame, bad FCS.
    pub jabbers: u64,
    /// A legal length with a bad FCS.
    pub fcs_errors: u64,
    /// Errored frames (any of the above) the port passed to the parser.
    pub passed_errored: u64,
}

impl MacStats {
    /// Errored frames dropped by the MAC.
    pub fn dropped(&self) -> u64 {
        self.undersize + self.fragments + self.oversize + self.jabbers + self.fcs_errors - self.passed_errored
    }
}

/// What is wrong with a frame, if anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    Undersize,
    Fragment,
    Oversize,
    Jabber,
    Fcs,
}

/// The largest legal frame (FCS included) for `data` on a port of `mtu`:
/// 4 bytes more for each VLAN tag it carries (at most two).
pub fn max_frame(mtu: u32, data: &[u8]) -> u32 {
    let tpid = |off: usize| data.get(off..off + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    let is_tag = |t: Option<u16>| matches!(t, Some(0x8100 | 0x88a8 | 0x9100));
    let mut tags = 0;
    if is_tag(tpid(12)) {
        tags += 1;
        if is_tag(tpid(16)) {
            tags += 1;
        }
    }
    mtu.saturating_add(FRAME_OVERHEAD + VLAN_TAG * tags)
}

/// Classifies a frame of `len` bytes (FCS included) against `max_len`.
pub fn classify(len: u32, fcs_ok: bool, max_len: u32) -> Option<FrameError> {
    match (len < MIN_FRAME, len > max_len, fcs_ok) {
        (true, _, true) => Some(FrameError::Undersize),
        (true, _, false) => Some(FrameError::Fragment),
        (_, true, true) => Some(FrameError::Oversize),
        (_, true, false) => Some(FrameError::Jabber),
        (_, _, false) => Some(FrameError::Fcs),
        _ => None,
    }
}

#[derive(Debug, Default)]
pub struct Macs {
    cfg: Vec<MacCfg>,
    stats: Vec<MacStats>,
    /// (index among the outputs not yet taken, first bit out in ps).
    pub(super) tx_ps: Vec<(usize, u64)>,
}

impl Macs {
    pub fn cfg(&self, port: u32) -> MacCfg {
        self.cfg.get(port as usize).copied().unwrap_or_default()
    }

    /// Counts a frame arriving on `port`; whether it goes on to the parser.
    #[inline]
    pub fn admit(&mut self, port: u32, data: &[u8], fcs_ok: bool) -> bool {
        let cfg = self.cfg(port);
        let len = (data.len() + crate::sim::frame::FCS) as u32;
        let i = port as usize;
        if i >= self.stats.len() {
            self.stats.resize(i + 1, MacStats::default());
        }
        let s = &mut self.stats[i];
        let err = if len > cfg.mtu.saturating_add(FRAME_OVERHEAD) || len < MIN_FRAME || !fcs_ok {
            classify(len, fcs_ok, max_frame(cfg.mtu, data))
        } else {
            None
        };
        match err {
            None => s.frames_ok += 1,
            Some(e) => {
                match e {
                    FrameError::Undersize => s.undersize += 1,
                    FrameError::Fragment => s.fragments += 1,
                    FrameError::Oversize => s.oversize += 1,
                    FrameError::Jabber => s.jabbers += 1,
                    FrameError::Fcs => s.fcs_errors += 1,
                }
                if !cfg.pass_errored {
                    return false;
                }
                s.passed_errored += 1;
            }
        }
        true
    }
}

impl Switch {
    /// Configures `port`'s receive MAC.
    pub fn set_port_mac(&mut self, port: u32, cfg: MacCfg) {
        let i = port as usize;
        if i >= self.mac.cfg.len() {
            self.mac.cfg.resize(i + 1, MacCfg::default());
        }
        self.mac.cfg[i] = cfg;
    }

    pub fn port_mac(&self, port: u32) -> MacCfg {
        self.mac.cfg(port)
    }

    /// Receive counters per port that saw a frame over a virtual wire.
    pub fn mac_stats(&self) -> impl Iterator<Item = (u32, &MacStats)> {
        self.mac.stats.iter().enumerate().filter(|(_, s)| **s != MacStats::default()).map(|(p, s)| (p as u32, s))
    }

    /// As `deliver_with`, for a frame that comes over a wire to `port`'s
    /// MAC: its bytes (without FCS) written by `fill`, `fcs_ok` the FCS's
    /// verdict. An errored frame is counted and, unless the port passes
    /// them, dropped before the parser.
    pub fn deliver_frame(&mut self, port: u32, time_ns: u64, fcs_ok: bool, fill: impl FnOnce(&mut Vec<u8>)) {
        self.run_before(time_ns);
        self.deliver_frame_now(port, time_ns, fcs_ok, fill);
    }

    /// As `deliver_frame`, for a caller that just saw no event due before
    /// `time_ns` (`next_event`).
    #[inline]
    pub(crate) fn deliver_frame_now(&mut self, port: u32, time_ns: u64, fcs_ok: bool, fill: impl FnOnce(&mut Vec<u8>)) {
        debug_assert!(self.next_event_at().is_none_or(|t| t >= time_ns), "an event is due before the frame");
        self.now = self.now.max(time_ns);
        let mut p = self.alloc();
        fill(&mut p.data);
        if self.mac.admit(port, &p.data, fcs_ok) {
            self.receive_pkt(port, p);
        } else {
            self.free(p);
        }
    }

    /// As `drain_outputs`, with the exact time (ps) each transmitted
    /// frame's first bit left, as (index in `out`, ps); outputs the egress
    /// did not time (pause frames) have none.
    pub fn drain_outputs_timed(&mut self, out: &mut Vec<Output>, ps: &mut Vec<(usize, u64)>) {
        let base = out.len();
        ps.extend(self.mac.tx_ps.drain(..).map(|(i, t)| (base + i, t)));
        out.append(&mut self.outputs);
    }

    /// Notes the exact start of the output about to be pushed.
    #[inline]
    pub(super) fn note_tx_ps(&mut self, ps: u64) {
        self.mac.tx_ps.push((self.outputs.len(), ps));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tests::MINIMAL;

    fn forward_all() -> Switch {
        // MINIMAL sends every packet to port 0
        Switch::from_json(MINIMAL).unwrap()
    }

    fn frame(len_with_fcs: usize) -> Vec<u8> {
        vec![0u8; len_with_fcs - 4]
    }

    #[test]
    fn classes_follow_rmon() {
        assert_eq!(classify(64, true, 1518), None);
        assert_eq!(classify(1518, true, 1518), None);
        assert_eq!(classify(63, true, 1518), Some(FrameError::Undersize));
        assert_eq!(classify(63, false, 1518), Some(FrameError::Fragment));
        assert_eq!(classify(1519, true, 1518), Some(FrameError::Oversize));
        assert_eq!(classify(1519, false, 1518), Some(FrameError::Jabber));
        assert_eq!(classify(512, false, 1518), Some(FrameError::Fcs));
    }

    #[test]
    fn vlan_tags_raise_the_maximum_frame() {
        let mut f = frame(1522);
        assert_eq!(max_frame(1500, &f), 1518);
        f[12..14].copy_from_slice(&[0x81, 0x00]);
        assert_eq!(max_frame(1500, &f), 1522);
        f[16..18].copy_from_slice(&[0x81, 0x00]);
        assert_eq!(max_frame(1500, &f), 1526, "QinQ: two tags");
        assert_eq!(max_frame(1500, &[0x81]), 1518, "too short to carry a tag");
    }

    fn deliver(sw: &mut Switch, port: u32, len: usize, fcs_ok: bool) {
        let t = sw.now_ns() + 1;
        sw.deliver_frame(port, t, fcs_ok, |b| b.extend_from_slice(&frame(len)));
        sw.run_until_idle();
    }

    #[test]
    fn errored_frames_are_counted_and_dropped_before_the_parser() {
        let mut sw = forward_all();
        sw.set_port_mac(1, MacCfg { mtu: 1500, pass_errored: false });
        for (len, ok) in [(64, true), (60, true), (60, false), (1519, true), (1600, false), (100, false), (1518, true)] {
            deliver(&mut sw, 1, len, ok);
        }
        let s = *sw.mac_stats().find(|(p, _)| *p == 1).unwrap().1;
        assert_eq!(
            s,
            MacStats { frames_ok: 2, undersize: 1, fragments: 1, oversize: 1, jabbers: 1, fcs_errors: 1, passed_errored: 0 }
        );
        assert_eq!(s.dropped(), 5);
        assert_eq!(sw.stats.received, 2, "only legal frames reach ingress");
        assert_eq!(sw.take_outputs().len(), 2);
    }

    #[test]
    fn a_port_that_passes_errored_frames_forwards_them_and_counts_them() {
        let mut sw = forward_all();
        sw.set_port_mac(2, MacCfg { mtu: 1500, pass_errored: true });
        for (len, ok) in [(60, true), (2000, true), (128, false)] {
            deliver(&mut sw, 2, len, ok);
        }
        let s = *sw.mac_stats().find(|(p, _)| *p == 2).unwrap().1;
        assert_eq!((s.undersize, s.oversize, s.fcs_errors, s.passed_errored, s.dropped()), (1, 1, 1, 3, 0));
        assert_eq!(sw.take_outputs().len(), 3);
    }

    #[test]
    fn the_default_mtu_takes_jumbo_frames_and_deliver_is_not_checked() {
        let mut sw = forward_all();
        assert_eq!(sw.port_mac(5), MacCfg::default());
        deliver(&mut sw, 5, 9216, true);
        deliver(&mut sw, 5, 9217, true);
        assert_eq!(sw.mac_stats().find(|(p, _)| *p == 5).unwrap().1.oversize, 1);
        // packets handed to deliver (STF, packet I/O, AF_PACKET) skip the MAC
        sw.deliver(6, sw.now_ns() + 1, &[0u8; 20]);
        sw.run_until_idle();
        assert!(sw.mac_stats().all(|(p, _)| p != 6));
        assert_eq!(sw.take_outputs().len(), 2);
    }
}
