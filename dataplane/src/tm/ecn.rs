//! ECN marking: the decision at enqueue, and setting CE in the bytes that
//! leave (IPv4 or IPv6 after Ethernet and up to two VLAN tags), as a
//! switch's MAC would. Packets that are not ECN-capable (ECT) are left alone.

use super::config::{Cost, EcnCfg};

/// Whether to mark, given the queue's bytes and packets before this packet
/// and a uniform random number in [0, 1).
pub fn decide(cfg: &EcnCfg, bytes: u64, pkts: u32, uniform: f64) -> bool {
    let q = match cfg.unit {
        Cost::Bytes => bytes,
        Cost::Packets => pkts as u64,
    };
    if cfg.min == cfg.max {
        return q >= cfg.min;
    }
    if q < cfg.min {
        return false;
    }
    if q >= cfg.max {
        return true;
    }
    let p = cfg.pmax * (q - cfg.min) as f64 / (cfg.max - cfg.min) as f64;
    uniform < p
}

/// Sets ECN to CE in an Ethernet frame if it carries ECN-capable IP.
/// Returns true when the frame was changed.
pub fn mark_ce(frame: &mut [u8]) -> bool {
    let mut off = 12usize;
    let mut et = match frame.get(off..off + 2) {
        Some(b) => u16::from_be_bytes([b[0], b[1]]),
        None => return false,
    };
    let mut tags = 0;
    while (et == 0x8100 || et == 0x88a8) && tags < 2 {
        off += 4;
        et = match frame.get(off..off + 2) {
            Some(b) => u16::from_be_bytes([b[0], b[1]]),
            None => return false,
        };
        tags += 1;
    }
    let ip = off + 2;
    match et {
        0x0800 => {
            if frame.len() < ip + 20 || frame[ip] >> 4 != 4 {
                return false;
            }
            let tos = frame[ip + 1];
            let ecn = tos & 3;
            if ecn == 0 || ecn == 3 {
                return false;
            }
            let old = u16::from_be_bytes([frame[ip], tos]);
            frame[ip + 1] = tos | 3;
            let new = u16::from_be_bytes([frame[ip], frame[ip + 1]]);
            // RFC 1624: HC' = ~(~HC + ~m + m')
            let hc = u16::from_be_bytes([frame[ip + 10], frame[ip + 11]]);
            let mut sum = (!hc as u32) + (!old as u32) + new as u32;
            while sum > 0xffff {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            let hc2 = !(sum as u16);
            frame[ip + 10..ip + 12].copy_from_slice(&hc2.to_be_bytes());
            true
        }
        0x86dd => {
            if frame.len() < ip + 40 || frame[ip] >> 4 != 6 {
                return false;
            }
            let ecn = (frame[ip + 1] >> 4) & 3;
            if ecn == 0 || ecn == 3 {
                return false;
            }
            frame[ip + 1] |= 0x30;
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(tos: u8) -> Vec<u8> {
        let mut f = vec![0u8; 14];
        f[12] = 8;
        let mut ip = vec![0x45, tos, 0, 20, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        let ck = checksum(&ip);
        ip[10..12].copy_from_slice(&ck.to_be_bytes());
        f.extend(ip);
        f
    }

    fn checksum(h: &[u8]) -> u16 {
        let mut s = 0u32;
        for c in h.chunks(2) {
            s += u16::from_be_bytes([c[0], c[1]]) as u32;
        }
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    #[test]
    fn ipv4_ect_becomes_ce_with_a_valid_checksum() {
        let mut f = ipv4(0xb8 | 1);
        assert!(mark_ce(&mut f));
        assert_eq!(f[15], 0xbb);
        assert_eq!(checksum(&f[14..34]), 0, "checksum still verifies");
        let mut g = ipv4(0xb8);
        assert!(!mark_ce(&mut g), "not ECN-capable");
        assert!(!mark_ce(&mut [0u8; 10]), "short frames are left alone");
    }

    #[test]
    fn vlan_and_ipv6() {
        let mut f = vec![0u8; 12];
        f.extend([0x81, 0x00, 0, 1, 0x86, 0xdd]);
        let mut ip = vec![0u8; 40];
        ip[0] = 0x60;
        ip[1] = 0x20; // ECT(0)
        f.extend(ip);
        assert!(mark_ce(&mut f));
        assert_eq!((f[19] >> 4) & 3, 3);
    }

    #[test]
    fn ramp() {
        let c = EcnCfg { unit: Cost::Bytes, min: 100, max: 200, pmax: 0.5 };
        assert!(!decide(&c, 99, 0, 0.0));
        assert!(decide(&c, 150, 0, 0.2));
        assert!(!decide(&c, 150, 0, 0.3));
        assert!(decide(&c, 200, 0, 0.99));
        let t = EcnCfg { unit: Cost::Packets, min: 5, max: 5, pmax: 1.0 };
        assert!(decide(&t, 0, 5, 0.99) && !decide(&t, 0, 4, 0.0));
    }
}
