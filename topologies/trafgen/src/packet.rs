//! Frame layout of the probe packets, built by the sender and found again by
//! the analyzer.
//!
//! After the Ethernet header (proto=eth, type 0x88b5) or the IPv4 + UDP
//! headers (proto=udp) comes an 18-byte probe:
//!
//! ```text
//! 0      2        4                 10                      18
//! | 0x7053 | stream | sequence (48 b) | tx time (64 b, ns)    |
//! ```
//!
//! All big-endian. 18 bytes is what a 64-byte frame (60 on a veth) leaves
//! after Ethernet, IPv4 and UDP. The transmit time is CLOCK_REALTIME, the
//! clock the kernel stamps received frames with, and the same in every
//! network namespace of the machine. The rest of the frame is zeros.

pub type MacAddr = [u8; 6];

pub const PROBE_MAGIC: u16 = 0x7053;
pub const PROBE_LEN: usize = 18;
pub const ETH_HLEN: usize = 14;
pub const IPV4_HLEN: usize = 20;
pub const UDP_HLEN: usize = 8;
pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_PROBE: u16 = 0x88b5;
const FCS: usize = 4;
pub const MIN_FRAME_UDP: u16 = (ETH_HLEN + IPV4_HLEN + UDP_HLEN + PROBE_LEN + FCS) as u16;
/// Shorter frames are runts to any switch; keep probes valid Ethernet.
pub const MIN_FRAME_ETH: u16 = 64;

use crate::stream::{Proto, StreamSpec};

/// The constant headers of one stream; per frame only lengths, checksum,
/// the varying fields and the probe change.
pub struct Template {
    pub hdr: Vec<u8>,
    pub proto: Proto,
}

/// Per-frame changes to a template: source port, and offsets added to
/// the source MAC (its low 32 bits) and the IPv4 addresses.
#[derive(Clone, Copy, Default)]
pub struct Vary {
    pub sport: u16,
    pub src_mac_add: u32,
    pub ip_src_add: u32,
    pub ip_dst_add: u32,
}

fn add32(b: &mut [u8], add: u32) {
    let v = u32::from_be_bytes([b[0], b[1], b[2], b[3]]).wrapping_add(add);
    b.copy_from_slice(&v.to_be_bytes());
}

impl Template {
    pub fn new(s: &StreamSpec, src_mac: MacAddr) -> Template {
        let mut h = Vec::with_capacity(ETH_HLEN + IPV4_HLEN + UDP_HLEN);
        h.extend_from_slice(&s.dst);
        h.extend_from_slice(&s.src.unwrap_or(src_mac));
        match s.proto {
            Proto::Eth => h.extend_from_slice(&ETHERTYPE_PROBE.to_be_bytes()),
            Proto::Udp => {
                h.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
                h.push(0x45);
                h.push(s.dscp << 2);
                h.extend_from_slice(&[0, 0]); // total length
                h.extend_from_slice(&[0, 0]); // identification
                h.extend_from_slice(&0x4000u16.to_be_bytes()); // don't fragment
                h.push(s.ttl);
                h.push(17);
                h.extend_from_slice(&[0, 0]); // header checksum
                h.extend_from_slice(&s.ip_src);
                h.extend_from_slice(&s.ip_dst);
                h.extend_from_slice(&s.sport.to_be_bytes());
                h.extend_from_slice(&s.dport.to_be_bytes());
                h.extend_from_slice(&[0, 0]); // UDP length
                h.extend_from_slice(&[0, 0]); // no UDP checksum (allowed over IPv4)
            }
        }
        Template { hdr: h, proto: s.proto }
    }

    /// Writes headers and probe into `buf` (whose tail beyond must be zero)
    /// for a frame of `frame_size` bytes including FCS; returns the number of
    /// bytes to send.
    pub fn write(&self, buf: &mut [u8], frame_size: u16, stream: u16, seq: u64, vary: Vary, tx_ns: u64) -> usize {
        let len = frame_size as usize - FCS;
        let h = self.hdr.len();
        buf[..h].copy_from_slice(&self.hdr);
        if vary.src_mac_add != 0 {
            add32(&mut buf[8..12], vary.src_mac_add);
        }
        if self.proto == Proto::Udp {
            let ip = &mut buf[ETH_HLEN..ETH_HLEN + IPV4_HLEN];
            ip[2..4].copy_from_slice(&((len - ETH_HLEN) as u16).to_be_bytes());
            add32(&mut ip[12..16], vary.ip_src_add);
            add32(&mut ip[16..20], vary.ip_dst_add);
            let c = ipv4_checksum(ip);
            ip[10..12].copy_from_slice(&c.to_be_bytes());
            let udp = ETH_HLEN + IPV4_HLEN;
            buf[udp..udp + 2].copy_from_slice(&vary.sport.to_be_bytes());
            buf[udp + 4..udp + 6].copy_from_slice(&((len - udp) as u16).to_be_bytes());
        }
        encode_probe(&mut buf[h..h + PROBE_LEN], stream, seq, tx_ns);
        len
    }
}

/// The IPv4 header checksum over `ip` (whose checksum field is zero).
pub fn ipv4_checksum(ip: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for (i, pair) in ip.chunks(2).enumerate() {
        if i != 5 {
            sum += u16::from_be_bytes([pair[0], pair[1]]) as u32;
        }
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

pub fn encode_probe(p: &mut [u8], stream: u16, seq: u64, tx_ns: u64) {
    p[0..2].copy_from_slice(&PROBE_MAGIC.to_be_bytes());
    p[2..4].copy_from_slice(&stream.to_be_bytes());
    p[4..10].copy_from_slice(&seq.to_be_bytes()[2..8]);
    p[10..18].copy_from_slice(&tx_ns.to_be_bytes());
}

#[derive(Debug, PartialEq)]
pub struct Probe {
    pub stream: u16,
    pub seq: u64,
    pub tx_ns: u64,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Finds the probe in a received frame (Ethernet, up to two VLAN tags, then
/// either our EtherType or IPv4/UDP with any header length). None when the
/// frame is not a probe or is too short to hold one.
pub fn find_probe(f: &[u8]) -> Option<Probe> {
    let mut off = 12;
    if f.len() < off + 2 {
        return None;
    }
    let mut etype = be16(f, off);
    let mut tags = 0;
    while (etype == 0x8100 || etype == 0x88a8) && tags < 2 {
        off += 4;
        if f.len() < off + 2 {
            return None;
        }
        etype = be16(f, off);
        tags += 1;
    }
    off += 2;
    let at = match etype {
        ETHERTYPE_PROBE => off,
        ETHERTYPE_IPV4 => {
            if f.len() < off + IPV4_HLEN {
                return None;
            }
            let ihl = (f[off] & 0x0f) as usize * 4;
            let frag = be16(f, off + 6) & 0x1fff;
            if f[off] >> 4 != 4 || ihl < IPV4_HLEN || f[off + 9] != 17 || frag != 0 {
                return None;
            }
            off + ihl + UDP_HLEN
        }
        _ => return None,
    };
    if f.len() < at + PROBE_LEN || be16(f, at) != PROBE_MAGIC {
        return None;
    }
    let p = &f[at..at + PROBE_LEN];
    let mut seq = [0u8; 8];
    seq[2..8].copy_from_slice(&p[4..10]);
    Some(Probe {
        stream: be16(p, 2),
        seq: u64::from_be_bytes(seq),
        tx_ns: u64::from_be_bytes(p[10..18].try_into().unwrap()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::parse_stream;

    #[test]
    fn udp_frame_round_trip() {
        let s = parse_stream("id=9,dst=02:00:00:00:00:02,ip_src=10.0.0.1,ip_dst=10.0.0.2,dscp=46").unwrap();
        let t = Template::new(&s, [2, 0, 0, 0, 0, 1]);
        let mut buf = vec![0xa5u8; 128];
        for b in buf[t.hdr.len() + PROBE_LEN..].iter_mut() {
            *b = 0;
        }
        let n = t.write(&mut buf, 64, 9, 0x0102_0304_0506, Vary { sport: 49153, ..Vary::default() }, 123_456_789);
        assert_eq!(n, 60);
        let f = &buf[..n];
        assert_eq!(be16(f, 12), 0x0800);
        assert_eq!(f[15], 46 << 2);
        assert_eq!(be16(f, 16), 46); // IP total length
        assert_eq!(ipv4_checksum(&f[14..34]), be16(f, 24));
        assert_eq!(be16(f, 34), 49153);
        assert_eq!(be16(f, 38), 26); // UDP length
        assert_eq!(find_probe(f), Some(Probe { stream: 9, seq: 0x0102_0304_0506, tx_ns: 123_456_789 }));
    }

    #[test]
    fn varying_fields() {
        let s = parse_stream("id=1,src=02:00:00:00:00:ff,ip_src=10.0.0.255,ip_dst=10.0.1.1").unwrap();
        let t = Template::new(&s, [0; 6]);
        let mut buf = vec![0u8; 80];
        let v = Vary { sport: 7, src_mac_add: 2, ip_src_add: 1, ip_dst_add: 3 };
        let n = t.write(&mut buf, 64, 1, 0, v, 0);
        assert_eq!(&buf[6..12], &[2, 0, 0, 0, 1, 1]);
        assert_eq!(&buf[26..34], &[10, 0, 1, 0, 10, 0, 1, 4]);
        assert_eq!(be16(&buf, 34), 7);
        assert_eq!(ipv4_checksum(&buf[14..34]), be16(&buf, 24));
        assert!(find_probe(&buf[..n]).is_some());
    }

    #[test]
    fn known_checksum() {
        // a classic example header: 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7
        let ip = [0x45, 0, 0, 0x73, 0, 0, 0x40, 0, 0x40, 0x11, 0, 0, 0xc0, 0xa8, 0, 1, 0xc0, 0xa8, 0, 0xc7];
        assert_eq!(ipv4_checksum(&ip), 0xb861);
    }

    #[test]
    fn eth_frame_and_vlan() {
        let s = parse_stream("id=1,proto=eth").unwrap();
        let t = Template::new(&s, [0; 6]);
        let mut buf = vec![0u8; 80];
        let n = t.write(&mut buf, 64, 1, 5, Vary::default(), 7);
        let mut tagged = buf[..12].to_vec();
        tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        tagged.extend_from_slice(&buf[12..n]);
        assert_eq!(find_probe(&tagged), Some(Probe { stream: 1, seq: 5, tx_ns: 7 }));
    }

    #[test]
    fn not_probes() {
        assert_eq!(find_probe(&[]), None);
        assert_eq!(find_probe(&[0u8; 13]), None);
        let mut arp = vec![0u8; 60];
        arp[12] = 0x08;
        arp[13] = 0x06;
        assert_eq!(find_probe(&arp), None);
        // truncated probe
        let s = parse_stream("id=1").unwrap();
        let t = Template::new(&s, [0; 6]);
        let mut buf = vec![0u8; 80];
        let n = t.write(&mut buf, 64, 1, 5, Vary::default(), 7);
        assert_eq!(find_probe(&buf[..n - 1]), None);
        // TCP instead of UDP
        buf[23] = 6;
        assert_eq!(find_probe(&buf[..n]), None);
    }
}
