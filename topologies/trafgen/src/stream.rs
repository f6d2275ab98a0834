//! Stream descriptions as given on the command line:
//! `--stream id=1,dst=02:00:00:00:00:02,ip_dst=10.0.0.2,size=imix:64:7/570:4/1518:1,rate=100Mbps,burst=8`.
//!
//! Conventions are a hardware tester's: a frame size counts the 4-byte FCS
//! (a 64-byte frame is 60 bytes on a veth, which carries no FCS), and a bit
//! rate counts each frame as (size + 20) * 8 bits, the 20 bytes being the
//! preamble, start delimiter and inter-frame gap. So `rate=50%,line=10Gbps`
//! offers what a tester calls 50 % load on a 10 GbE port.

use crate::packet::{MacAddr, MIN_FRAME_ETH, MIN_FRAME_UDP};

pub const MAX_FRAME: u16 = 16384;
/// Preamble (7) + start delimiter (1) + minimum inter-frame gap (12).
pub const L1_OVERHEAD: u64 = 20;

#[derive(Clone, Debug, PartialEq)]
pub enum Rate {
    /// As fast as the socket takes them.
    Max,
    /// Frames per second.
    Pps(f64),
    /// Layer-1 bits per second (see module docs).
    Bps(f64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum SizeLaw {
    Fixed(u16),
    /// Cycled through in order.
    List(Vec<u16>),
    /// (size, weight): drawn at random with a seeded generator, so a run
    /// is reproducible and the order is mixed as in a tester's iMIX.
    Weighted(Vec<(u16, u32)>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Proto {
    /// Ethernet + IPv4 + UDP + probe payload (routable).
    Udp,
    /// Ethernet (type 0x88b5, local experimental) + probe payload.
    Eth,
}

#[derive(Clone, Debug)]
pub struct StreamSpec {
    pub id: u16,
    pub dst: MacAddr,
    /// None: the sending interface's own address.
    pub src: Option<MacAddr>,
    pub ip_src: [u8; 4],
    pub ip_dst: [u8; 4],
    pub sport: u16,
    /// Source ports used in turn: sport, sport+1, ..., sport+span-1
    /// (span > 1 spreads one stream over LAG/ECMP hash buckets).
    pub sport_span: u16,
    /// Source MAC addresses used in turn: src, src+1, ... (address
    /// learning and caching tests; needs `src`).
    pub src_span: u32,
    /// Source and destination IPv4 addresses used in turn (ECMP/LAG spread).
    pub ip_src_span: u32,
    pub ip_dst_span: u32,
    pub dport: u16,
    pub dscp: u8,
    pub ttl: u8,
    pub proto: Proto,
    pub sizes: SizeLaw,
    pub rate: Rate,
    /// Frames sent back to back; the average rate stays `rate`.
    pub burst: u32,
    /// Stop after this many frames (None: until the run ends).
    pub count: Option<u64>,
    /// Seconds after the run's start before the first frame.
    pub start: f64,
    /// Seconds this stream lasts (None: until the run ends).
    pub duration: Option<f64>,
}

fn parse_mac(s: &str, key: &str) -> Result<MacAddr, String> {
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() != 6 {
        return Err(format!("{key}: '{s}' is not a MAC address (aa:bb:cc:dd:ee:ff)"));
    }
    let mut m = [0u8; 6];
    for (i, p) in parts.iter().enumerate() {
        m[i] = u8::from_str_radix(p, 16).map_err(|_| format!("{key}: '{s}' is not a MAC address"))?;
    }
    Ok(m)
}

fn parse_ip(s: &str, key: &str) -> Result<[u8; 4], String> {
    let a: std::net::Ipv4Addr = s.parse().map_err(|_| format!("{key}: '{s}' is not an IPv4 address"))?;
    Ok(a.octets())
}

fn parse_num<T: std::str::FromStr>(s: &str, key: &str) -> Result<T, String> {
    s.parse().map_err(|_| format!("{key}: '{s}' is not a valid number"))
}

fn parse_size(s: &str, min: u16) -> Result<u16, String> {
    let v: u16 = parse_num(s, "size")?;
    if v < min || v > MAX_FRAME {
        return Err(format!("size: {v} is outside {min}..{MAX_FRAME} bytes (frame sizes include the 4-byte FCS)"));
    }
    Ok(v)
}

/// `64`, `list:64/128/1518` or `imix:64:7/570:4/1518:1`.
pub fn parse_size_law(s: &str, min: u16) -> Result<SizeLaw, String> {
    if let Some(rest) = s.strip_prefix("list:") {
        let v = rest.split('/').map(|x| parse_size(x, min)).collect::<Result<Vec<_>, _>>()?;
        if v.is_empty() {
            return Err("size: empty list".into());
        }
        Ok(SizeLaw::List(v))
    } else if let Some(rest) = s.strip_prefix("imix:") {
        let mut v = Vec::new();
        for item in rest.split('/') {
            let (sz, w) = item
                .split_once(':')
                .ok_or_else(|| format!("size: iMIX item '{item}' must be SIZE:WEIGHT"))?;
            let w: u32 = parse_num(w, "size weight")?;
            v.push((parse_size(sz, min)?, w));
        }
        if v.iter().map(|x| x.1 as u64).sum::<u64>() == 0 {
            return Err("size: iMIX weights add up to 0".into());
        }
        Ok(SizeLaw::Weighted(v))
    } else {
        Ok(SizeLaw::Fixed(parse_size(s, min)?))
    }
}

/// `max`, `1000pps`, `1.5Mpps`, `100Mbps`, `10Gbps`, `50%` (with `line`).
pub fn parse_rate(s: &str, line_bps: Option<f64>) -> Result<Rate, String> {
    if s == "max" {
        return Ok(Rate::Max);
    }
    const UNITS: &[(&str, f64, bool)] = &[
        ("Mpps", 1e6, true), ("kpps", 1e3, true), ("pps", 1.0, true),
        ("Gbps", 1e9, false), ("Mbps", 1e6, false), ("kbps", 1e3, false), ("bps", 1.0, false),
    ];
    if let Some(p) = s.strip_suffix('%') {
        let pct: f64 = parse_num(p, "rate")?;
        let line = line_bps.ok_or("rate: a percentage needs line=<bit rate> (e.g. line=10Gbps)")?;
        if !(pct > 0.0 && pct <= 100.0) {
            return Err(format!("rate: {pct}% is outside (0, 100]"));
        }
        return Ok(Rate::Bps(line * pct / 100.0));
    }
    for (suffix, mult, is_pps) in UNITS {
        if let Some(n) = s.strip_suffix(suffix) {
            let v: f64 = parse_num(n, "rate")?;
            if !(v > 0.0 && v.is_finite()) {
                return Err(format!("rate: '{s}' must be positive"));
            }
            return Ok(if *is_pps { Rate::Pps(v * mult) } else { Rate::Bps(v * mult) });
        }
    }
    Err(format!("rate: '{s}' needs a unit (pps, kpps, Mpps, bps, kbps, Mbps, Gbps, %) or 'max'"))
}

fn parse_bps(s: &str) -> Result<f64, String> {
    match parse_rate(s, None)? {
        Rate::Bps(b) => Ok(b),
        _ => Err(format!("line: '{s}' must be a bit rate such as 10Gbps")),
    }
}

const KEYS: &[&str] = &[
    "id", "dst", "src", "ip_src", "ip_dst", "sport", "sport_span", "src_span", "ip_src_span",
    "ip_dst_span", "dport", "dscp", "ttl",
    "proto", "size", "rate", "line", "burst", "count", "start", "duration",
];

pub fn parse_stream(spec: &str) -> Result<StreamSpec, String> {
    let mut kv = Vec::new();
    for item in spec.split(',').filter(|x| !x.is_empty()) {
        let (k, v) = item.split_once('=').ok_or_else(|| format!("'{item}' must be key=value"))?;
        if !KEYS.contains(&k) {
            return Err(format!("unknown stream key '{k}' (known: {})", KEYS.join(", ")));
        }
        kv.push((k, v));
    }
    let get = |k: &str| kv.iter().rev().find(|(a, _)| *a == k).map(|(_, v)| *v);
    let id: u16 = parse_num(get("id").ok_or("id= is required")?, "id")?;
    let proto = match get("proto").unwrap_or("udp") {
        "udp" => Proto::Udp,
        "eth" => Proto::Eth,
        p => return Err(format!("proto: '{p}' is not udp or eth")),
    };
    let min = if proto == Proto::Udp { MIN_FRAME_UDP } else { MIN_FRAME_ETH };
    let line = get("line").map(parse_bps).transpose()?;
    let s = StreamSpec {
        id,
        dst: parse_mac(get("dst").unwrap_or("ff:ff:ff:ff:ff:ff"), "dst")?,
        src: get("src").map(|s| parse_mac(s, "src")).transpose()?,
        ip_src: parse_ip(get("ip_src").unwrap_or("10.0.0.1"), "ip_src")?,
        ip_dst: parse_ip(get("ip_dst").unwrap_or("10.0.0.2"), "ip_dst")?,
        sport: parse_num(get("sport").unwrap_or("49152"), "sport")?,
        sport_span: parse_num(get("sport_span").unwrap_or("1"), "sport_span")?,
        src_span: parse_num(get("src_span").unwrap_or("1"), "src_span")?,
        ip_src_span: parse_num(get("ip_src_span").unwrap_or("1"), "ip_src_span")?,
        ip_dst_span: parse_num(get("ip_dst_span").unwrap_or("1"), "ip_dst_span")?,
        dport: parse_num(get("dport").unwrap_or("7053"), "dport")?,
        dscp: parse_num(get("dscp").unwrap_or("0"), "dscp")?,
        ttl: parse_num(get("ttl").unwrap_or("64"), "ttl")?,
        proto,
        sizes: parse_size_law(get("size").unwrap_or("64"), min)?,
        rate: parse_rate(get("rate").unwrap_or("max"), line)?,
        burst: parse_num(get("burst").unwrap_or("1"), "burst")?,
        count: get("count").map(|c| parse_num(c, "count")).transpose()?,
        start: parse_num(get("start").unwrap_or("0"), "start")?,
        duration: get("duration").map(|d| parse_num(d, "duration")).transpose()?,
    };
    if s.dscp > 63 {
        return Err(format!("dscp: {} is outside 0..63", s.dscp));
    }
    if s.burst == 0 {
        return Err("burst: must be at least 1".into());
    }
    for (k, v) in [("sport_span", s.sport_span as u32), ("src_span", s.src_span),
                   ("ip_src_span", s.ip_src_span), ("ip_dst_span", s.ip_dst_span)] {
        if v == 0 {
            return Err(format!("{k}: must be at least 1"));
        }
    }
    if s.src_span > 1 && s.src.is_none() {
        return Err("src_span: needs src= (the first source MAC)".into());
    }
    if !(s.start >= 0.0 && s.start.is_finite()) {
        return Err("start: must be >= 0 seconds".into());
    }
    if let Some(d) = s.duration {
        if !(d > 0.0 && d.is_finite()) {
            return Err("duration: must be > 0 seconds".into());
        }
    }
    Ok(s)
}

/// Deterministic frame sizes for one stream.
pub struct SizeGen {
    law: SizeLaw,
    idx: usize,
    rng: u64,
    total: u64,
}

impl SizeGen {
    pub fn new(law: SizeLaw, seed: u64) -> SizeGen {
        let total = match &law {
            SizeLaw::Weighted(v) => v.iter().map(|x| x.1 as u64).sum(),
            _ => 0,
        };
        // xorshift must not start at 0
        SizeGen { law, idx: 0, rng: seed | 1, total }
    }

    fn next_rand(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn next_size(&mut self) -> u16 {
        match &self.law {
            SizeLaw::Fixed(s) => *s,
            SizeLaw::List(v) => {
                let s = v[self.idx % v.len()];
                self.idx += 1;
                s
            }
            SizeLaw::Weighted(_) => {
                let mut r = self.next_rand() % self.total;
                if let SizeLaw::Weighted(v) = &self.law {
                    for (s, w) in v {
                        if r < *w as u64 {
                            return *s;
                        }
                        r -= *w as u64;
                    }
                }
                unreachable!("weights sum to total")
            }
        }
    }

    pub fn max_size(&self) -> u16 {
        match &self.law {
            SizeLaw::Fixed(s) => *s,
            SizeLaw::List(v) => *v.iter().max().unwrap(),
            SizeLaw::Weighted(v) => v.iter().map(|x| x.0).max().unwrap(),
        }
    }
}

/// Nanoseconds one frame of `size` bytes occupies at `rate` (0 for Max).
pub fn frame_interval_ns(rate: &Rate, size: u16) -> f64 {
    match rate {
        Rate::Max => 0.0,
        Rate::Pps(p) => 1e9 / p,
        Rate::Bps(b) => (size as u64 + L1_OVERHEAD) as f64 * 8.0 * 1e9 / b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_spec() {
        let s = parse_stream("id=3,dst=02:00:00:00:00:02,ip_dst=10.0.1.2,size=imix:64:7/570:4/1518:1,rate=50%,line=10Gbps,burst=8,count=100,dscp=46").unwrap();
        assert_eq!(s.id, 3);
        assert_eq!(s.dst, [2, 0, 0, 0, 0, 2]);
        assert_eq!(s.ip_dst, [10, 0, 1, 2]);
        assert_eq!(s.rate, Rate::Bps(5e9));
        assert_eq!(s.burst, 8);
        assert_eq!(s.count, Some(100));
        assert_eq!(s.sizes, SizeLaw::Weighted(vec![(64, 7), (570, 4), (1518, 1)]));
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("1.5Mpps", None).unwrap(), Rate::Pps(1.5e6));
        assert_eq!(parse_rate("100Mbps", None).unwrap(), Rate::Bps(1e8));
        assert_eq!(parse_rate("max", None).unwrap(), Rate::Max);
        assert!(parse_rate("50%", None).unwrap_err().contains("line="));
        assert!(parse_rate("100", None).unwrap_err().contains("unit"));
        assert!(parse_rate("-5pps", None).is_err());
    }

    #[test]
    fn errors_name_the_key() {
        assert!(parse_stream("dst=1:2").unwrap_err().contains("id="));
        assert!(parse_stream("id=1,size=40").unwrap_err().starts_with("size"));
        assert!(parse_stream("id=1,colour=red").unwrap_err().contains("colour"));
        assert!(parse_stream("id=1,dst=zz").unwrap_err().starts_with("dst"));
        assert!(parse_stream("id=1,size=imix:64").unwrap_err().contains("SIZE:WEIGHT"));
        assert!(parse_stream("id=1,dscp=64").unwrap_err().starts_with("dscp"));
        assert!(parse_stream("id=1,src_span=4").unwrap_err().contains("needs src="));
        assert!(parse_stream("id=1,ip_dst_span=0").unwrap_err().starts_with("ip_dst_span"));
    }

    #[test]
    fn size_laws() {
        let mut g = SizeGen::new(SizeLaw::List(vec![64, 128, 256]), 1);
        let v: Vec<u16> = (0..4).map(|_| g.next_size()).collect();
        assert_eq!(v, vec![64, 128, 256, 64]);
        let mut g = SizeGen::new(SizeLaw::Weighted(vec![(64, 3), (1518, 1)]), 7);
        let n = 40000;
        let small = (0..n).filter(|_| g.next_size() == 64).count();
        let share = small as f64 / n as f64;
        assert!((share - 0.75).abs() < 0.01, "share {share}");
    }

    #[test]
    fn l1_interval() {
        // 64-byte frames at 10 Gbit/s: 84 bytes each, 67.2 ns
        let i = frame_interval_ns(&Rate::Bps(1e10), 64);
        assert!((i - 67.2).abs() < 1e-9);
        assert_eq!(frame_interval_ns(&Rate::Pps(1e6), 1500), 1000.0);
    }
}
