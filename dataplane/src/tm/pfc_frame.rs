//! Priority-based flow control frames (IEEE 802.1Qbb): a MAC Control frame
//! to 01:80:C2:00:00:01, EtherType 0x8808, opcode 0x0101, a priority-enable
//! vector (one bit per priority) and eight pause times in quanta of 512 bit
//! times at the link's speed; 0 is XON (resume now). Padded to the minimum
//! frame (60 bytes here: the engine's frames carry no FCS).

pub const PFC_DST: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
pub const MAC_CONTROL: u16 = 0x8808;
pub const PFC_OPCODE: u16 = 0x0101;
/// The frame's length without the FCS.
pub const PFC_FRAME_LEN: usize = 60;

/// What a PFC frame says: the priorities it names (bit i: priority i) and
/// their pause times in quanta.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pause {
    pub enable: u8,
    pub quanta: [u16; 8],
}

impl Pause {
    /// Pause (or, with 0 quanta, resume) one priority.
    pub fn one(prio: u8, quanta: u16) -> Pause {
        let mut p = Pause { enable: 1 << (prio & 7), quanta: [0; 8] };
        p.quanta[(prio & 7) as usize] = quanta;
        p
    }
}

/// Writes a PFC frame from `src_mac` (48 bits) into `out` (cleared first).
pub fn encode(out: &mut Vec<u8>, src_mac: u64, p: &Pause) {
    out.clear();
    out.extend_from_slice(&PFC_DST);
    out.extend_from_slice(&src_mac.to_be_bytes()[2..8]);
    out.extend_from_slice(&MAC_CONTROL.to_be_bytes());
    out.extend_from_slice(&PFC_OPCODE.to_be_bytes());
    out.extend_from_slice(&[0, p.enable]);
    for q in p.quanta {
        out.extend_from_slice(&q.to_be_bytes());
    }
    out.resize(PFC_FRAME_LEN, 0);
}

/// The pause a frame carries, if it is a PFC frame.
pub fn decode(frame: &[u8]) -> Option<Pause> {
    if frame.len() < 34 || frame[12..14] != MAC_CONTROL.to_be_bytes() || frame[14..16] != PFC_OPCODE.to_be_bytes() {
        return None;
    }
    let mut quanta = [0u16; 8];
    for (i, q) in quanta.iter_mut().enumerate() {
        *q = u16::from_be_bytes([frame[18 + 2 * i], frame[19 + 2 * i]]);
    }
    Some(Pause { enable: frame[17], quanta })
}

/// How long `quanta` pause a link of `rate_bps` (ps): 512 bit times each.
pub fn quanta_ps(quanta: u16, rate_bps: f64) -> u64 {
    (quanta as f64 * 512.0 / rate_bps * 1e12).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_layout() {
        let mut f = vec![];
        encode(&mut f, 0x0250_4643_0003, &Pause::one(3, 0xffff));
        assert_eq!(f.len(), 60);
        assert_eq!(&f[0..6], &PFC_DST);
        assert_eq!(&f[6..12], &[0x02, 0x50, 0x46, 0x43, 0x00, 0x03]);
        assert_eq!(&f[12..18], &[0x88, 0x08, 0x01, 0x01, 0x00, 0x08]);
        assert_eq!(&f[24..26], &[0xff, 0xff], "priority 3's time is the fourth");
        assert_eq!(decode(&f), Some(Pause::one(3, 0xffff)));
        let mut ip = f.clone();
        ip[12..14].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(decode(&ip), None);
        // 802.3x PAUSE (opcode 1) is not PFC
        f[15] = 0x01;
        f[14] = 0x00;
        assert_eq!(decode(&f), None);
    }

    #[test]
    fn a_quantum_is_512_bit_times() {
        assert_eq!(quanta_ps(1, 100e9), 5_120);
        assert_eq!(quanta_ps(0xffff, 100e9), 335_539_200);
    }
}
