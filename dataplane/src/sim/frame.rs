//! Frames a traffic source sends: a header template, fields that vary from
//! frame to frame, lengths and checksums fixed for each size, and the
//! instrumentation tag at the end of the frame.
//!
//! The tag is what a hardware tester puts in its payload ("signature"):
//! magic, stream id, sequence number and transmit timestamp, 16 bytes at
//! the very end of the frame, so headers added or removed at the front do
//! not move it:
//!
//! ```text
//! | magic "p4sT" (4) | stream (2) | sequence (4) | tx time, ns (6) |
//! ```
//!
//! Sizes are Ethernet frame sizes as testers count them, FCS included: a
//! 64-byte frame is 60 bytes of data in the engine.

pub const TAG_LEN: usize = 16;
pub const MAGIC: [u8; 4] = *b"p4sT";
pub const FCS: usize = 4;

/// One tagged frame as a sink reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    pub stream: u16,
    pub seq: u32,
    pub tx_ns: u64,
}

pub fn write_tag(frame: &mut [u8], t: Tag) {
    let n = frame.len();
    if n < TAG_LEN {
        return;
    }
    frame[n - TAG_LEN..].copy_from_slice(&tag_bytes(t));
}

/// The tag's 16 bytes.
#[inline]
fn tag_bytes(t: Tag) -> [u8; TAG_LEN] {
    let mut b = [0u8; TAG_LEN];
    b[0..4].copy_from_slice(&MAGIC);
    b[4..6].copy_from_slice(&t.stream.to_be_bytes());
    b[6..10].copy_from_slice(&t.seq.to_be_bytes());
    b[10..16].copy_from_slice(&t.tx_ns.to_be_bytes()[2..8]);
    b
}

pub fn read_tag(frame: &[u8]) -> Option<Tag> {
    let n = frame.len();
    if n < TAG_LEN {
        return None;
    }
    let b = &frame[n - TAG_LEN..];
    if b[0..4] != MAGIC {
        return None;
    }
    let mut ts = [0u8; 8];
    ts[2..8].copy_from_slice(&b[10..16]);
    Some(Tag {
        stream: u16::from_be_bytes([b[4], b[5]]),
        seq: u32::from_be_bytes([b[6], b[7], b[8], b[9]]),
        tx_ns: u64::from_be_bytes(ts),
    })
}

/// A field that changes from frame to frame: `count` values starting at
/// `start`, `step` apart, cycling (frame k gets start + step * (k % count)),
/// written big-endian in `width` bytes at `offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vary {
    pub offset: usize,
    pub width: usize,
    pub start: u64,
    pub step: u64,
    pub count: u64,
}

/// Where the IP and UDP headers of the template are, to fix their
/// lengths and checksum for each frame size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Layout {
    ipv4: Option<usize>,
    ipv6: Option<usize>,
    udp: Option<usize>,
}

fn layout(t: &[u8]) -> Layout {
    let mut l = Layout::default();
    let mut off = 12;
    let mut et = match t.get(off..off + 2) {
        Some(b) => u16::from_be_bytes([b[0], b[1]]),
        None => return l,
    };
    let mut tags = 0;
    while (et == 0x8100 || et == 0x88a8) && tags < 2 {
        off += 4;
        et = match t.get(off..off + 2) {
            Some(b) => u16::from_be_bytes([b[0], b[1]]),
            None => return l,
        };
        tags += 1;
    }
    let ip = off + 2;
    if et == 0x0800 && t.len() >= ip + 20 && t[ip] >> 4 == 4 {
        l.ipv4 = Some(ip);
        let ihl = (t[ip] & 0xf) as usize * 4;
        if t[ip + 9] == 17 && t.len() >= ip + ihl + 8 {
            l.udp = Some(ip + ihl);
        }
    } else if et == 0x86dd && t.len() >= ip + 40 && t[ip] >> 4 == 6 {
        l.ipv6 = Some(ip);
        if t[ip + 6] == 17 && t.len() >= ip + 48 {
            l.udp = Some(ip + 40);
        }
    }
    l
}

/// Builds the frames of one stream.
#[derive(Clone, Debug)]
pub struct FrameBuilder {
    template: Vec<u8>,
    vary: Vec<Vary>,
    layout: Layout,
    pub tag: bool,
}

impl FrameBuilder {
    pub fn new(template: Vec<u8>, vary: Vec<Vary>, tag: bool) -> Result<FrameBuilder, String> {
        for (i, v) in vary.iter().enumerate() {
            if v.width == 0 || v.width > 8 {
                return Err(format!("vary[{i}]: width must be 1..8 bytes"));
            }
            if v.count == 0 {
                return Err(format!("vary[{i}]: count must be positive"));
            }
        }
        let layout = layout(&template);
        Ok(FrameBuilder { template, vary, layout, tag })
    }

    /// The smallest frame size (FCS included) that holds the template and tag.
    pub fn min_size(&self) -> usize {
        let mut need = self.template.len();
        for v in &self.vary {
            need = need.max(v.offset + v.width);
        }
        need + if self.tag { TAG_LEN } else { 0 } + FCS
    }

    /// Writes frame `k` of `size` bytes (FCS included, so size - 4 bytes of
    /// data) into `out`.
    pub fn build(&self, out: &mut Vec<u8>, size: usize, k: u64, tag: Tag) {
        let len = size.saturating_sub(FCS).max(self.template.len().min(size));
        out.clear();
        let t = self.template.len().min(len);
        out.extend_from_slice(&self.template[..t]);
        out.resize(len, 0);
        for v in &self.vary {
            if v.offset + v.width <= len {
                let val = v.start.wrapping_add(v.step.wrapping_mul(k % v.count));
                let b = val.to_be_bytes();
                out[v.offset..v.offset + v.width].copy_from_slice(&b[8 - v.width..]);
            }
        }
        if let Some(ip) = self.layout.ipv4 {
            if len >= ip + 20 {
                let tl = ((len - ip).min(0xffff)) as u16;
                out[ip + 2..ip + 4].copy_from_slice(&tl.to_be_bytes());
                out[ip + 10] = 0;
                out[ip + 11] = 0;
                let ihl = ((out[ip] & 0xf) as usize * 4).clamp(20, 60).min(len - ip);
                let ck = ipv4_checksum(&out[ip..ip + ihl]);
                out[ip + 10..ip + 12].copy_from_slice(&ck.to_be_bytes());
            }
        }
        if let Some(ip) = self.layout.ipv6 {
            if len >= ip + 40 {
                let pl = ((len - ip - 40).min(0xffff)) as u16;
                out[ip + 4..ip + 6].copy_from_slice(&pl.to_be_bytes());
            }
        }
        if let Some(u) = self.layout.udp {
            if len >= u + 8 {
                let ul = ((len - u).min(0xffff)) as u16;
                out[u + 4..u + 6].copy_from_slice(&ul.to_be_bytes());
                out[u + 6] = 0;
                out[u + 7] = 0;
            }
        }
        if self.tag {
            write_tag(out, tag);
        }
    }
}

/// The bytes before the payload of every frame of one size: the template
/// with the lengths and checksums `build` gives that size. A frame is then
/// this header, zeros, its varying fields and its tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizedHeader {
    /// Frame length without FCS.
    len: usize,
    bytes: Box<[u8]>,
}

impl FrameBuilder {
    /// The header of frames of `size` bytes (FCS included), if `build_on`
    /// writes them as `build` does: every varying field and the tag fit, and
    /// no varying field touches a byte the lengths and checksums cover or
    /// are written to (so one header holds for every frame of the size).
    pub fn sized_header(&self, size: usize) -> Option<SizedHeader> {
        let len = size.checked_sub(FCS)?;
        let head = self.vary.iter().map(|v| v.offset + v.width).fold(self.template.len(), usize::max);
        if head + if self.tag { TAG_LEN } else { 0 } > len {
            return None;
        }
        let mut fixed = vec![];
        if let Some(ip) = self.layout.ipv4 {
            let ihl = ((self.template[ip] & 0xf) as usize * 4).clamp(20, 60);
            fixed.push(ip..ip + ihl);
        }
        if let Some(ip) = self.layout.ipv6 {
            fixed.push(ip + 4..ip + 6);
        }
        if let Some(u) = self.layout.udp {
            fixed.push(u + 4..u + 8);
        }
        let overlaps = |v: &Vary| fixed.iter().any(|r| v.offset < r.end && r.start < v.offset + v.width);
        if self.vary.iter().any(overlaps) {
            return None;
        }
        let mut frame = Vec::with_capacity(len);
        self.build(&mut frame, size, 0, Tag { stream: 0, seq: 0, tx_ns: 0 });
        frame.truncate(head);
        Some(SizedHeader { len, bytes: frame.into_boxed_slice() })
    }

    /// Writes frame `k` of `header`'s size into `out`, as `build` would.
    #[inline]
    pub fn build_on(&self, header: &SizedHeader, out: &mut Vec<u8>, k: u64, tag: Tag) {
        out.clear();
        out.extend_from_slice(&header.bytes);
        let body = if self.tag { header.len - TAG_LEN } else { header.len };
        out.resize(body, 0);
        for v in &self.vary {
            let val = v.start.wrapping_add(v.step.wrapping_mul(k % v.count));
            out[v.offset..v.offset + v.width].copy_from_slice(&val.to_be_bytes()[8 - v.width..]);
        }
        if self.tag {
            out.extend_from_slice(&tag_bytes(tag));
        }
    }
}

pub fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut s = 0u32;
    let mut i = 0;
    while i + 1 < h.len() {
        s += u16::from_be_bytes([h[i], h[i + 1]]) as u32;
        i += 2;
    }
    if i < h.len() {
        s += (h[i] as u32) << 8;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// An Ethernet/IPv4/UDP header (42 bytes) — the default template.
pub fn udp_template(dst_mac: u64, src_mac: u64, src_ip: u32, dst_ip: u32, sport: u16, dport: u16, dscp: u8) -> Vec<u8> {
    let mut t = Vec::with_capacity(42);
    t.extend_from_slice(&dst_mac.to_be_bytes()[2..]);
    t.extend_from_slice(&src_mac.to_be_bytes()[2..]);
    t.extend_from_slice(&[0x08, 0x00]);
    t.extend_from_slice(&[0x45, dscp << 2, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0]);
    t.extend_from_slice(&src_ip.to_be_bytes());
    t.extend_from_slice(&dst_ip.to_be_bytes());
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 0]);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_roundtrip_at_the_end() {
        let mut f = vec![0xa5u8; 60];
        let t = Tag { stream: 7, seq: 123_456, tx_ns: 0x1234_5678_9abc };
        write_tag(&mut f, t);
        assert_eq!(read_tag(&f), Some(t));
        assert_eq!(f[43], 0xa5, "bytes before the tag are untouched");
        f[45] ^= 1;
        assert_eq!(read_tag(&f), None, "bad magic");
        assert_eq!(read_tag(&[0; 15]), None);
    }

    #[test]
    fn sizes_lengths_checksums_and_varying_macs() {
        let tpl = udp_template(0x02, 0x0a00_0000_0000, 0x0a00_0001, 0x0a00_0002, 1, 2, 0);
        let vary = vec![Vary { offset: 6, width: 6, start: 0x0a00_0000_0000, step: 1, count: 100 }];
        let b = FrameBuilder::new(tpl, vary, true).unwrap();
        assert_eq!(b.min_size(), 42 + 16 + 4);
        let mut f = vec![];
        b.build(&mut f, 64, 101, Tag { stream: 1, seq: 101, tx_ns: 5 });
        assert_eq!(f.len(), 60);
        assert_eq!(&f[6..12], &[0x0a, 0, 0, 0, 0, 1], "frame 101 of 100 MACs uses the second");
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), 46, "IPv4 total length");
        assert_eq!(ipv4_checksum(&f[14..34]), 0, "header checksum verifies");
        assert_eq!(u16::from_be_bytes([f[38], f[39]]), 26, "UDP length");
        assert_eq!(read_tag(&f).unwrap().seq, 101);
        b.build(&mut f, 1518, 0, Tag { stream: 1, seq: 0, tx_ns: 0 });
        assert_eq!(f.len(), 1514);
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), 1500);
        assert!(FrameBuilder::new(vec![], vec![Vary { offset: 0, width: 9, start: 0, step: 1, count: 1 }], true).is_err());
    }

    #[test]
    fn a_sized_header_builds_the_same_bytes() {
        let v4 = udp_template(0x02, 0x0a00_0000_0000, 0x0a00_0001, 0x0a00_0002, 1, 2, 5);
        let mut qinq_v6 = v4[..12].to_vec();
        qinq_v6.extend_from_slice(&[0x88, 0xa8, 0, 7, 0x81, 0, 0, 9, 0x86, 0xdd, 0x60, 0, 0, 0, 0, 0, 17, 64]);
        qinq_v6.resize(qinq_v6.len() + 32 + 8, 0x11);
        let mac = Vary { offset: 6, width: 6, start: 0x0a00_0000_0000, step: 1, count: 100 };
        let port = Vary { offset: 34, width: 2, start: 1000, step: 3, count: 7 };
        let past = Vary { offset: 60, width: 3, start: 1, step: 0x10001, count: 1000 };
        for (template, vary) in [
            (v4.clone(), vec![mac.clone(), port.clone()]),
            (v4.clone(), vec![past.clone(), mac.clone()]),
            (v4.clone(), vec![]),
            (qinq_v6, vec![mac.clone()]),
        ] {
            for tag in [true, false] {
                let b = FrameBuilder::new(template.clone(), vary.clone(), tag).unwrap();
                for size in [b.min_size(), 64, 78, 576, 1518, 9216] {
                    if size < b.min_size() {
                        continue;
                    }
                    let h = b.sized_header(size).unwrap();
                    let (mut slow, mut fast) = (vec![], vec![0xee; 3]);
                    for k in [0, 1, 99, 100, 1001, u32::MAX as u64 + 5] {
                        let t = Tag { stream: 3, seq: k as u32, tx_ns: k * 7 };
                        b.build(&mut slow, size, k, t);
                        b.build_on(&h, &mut fast, k, t);
                        assert_eq!(fast, slow, "size {size} frame {k} tag {tag}");
                    }
                }
            }
        }
    }

    #[test]
    fn no_sized_header_where_frames_differ_in_more_than_their_fields() {
        let tpl = udp_template(0x02, 0x0a00_0000_0000, 0x0a00_0001, 0x0a00_0002, 1, 2, 0);
        let with = |vary: Vec<Vary>| FrameBuilder::new(tpl.clone(), vary, true).unwrap();
        let field = |offset, width| Vary { offset, width, start: 1, step: 1, count: 9 };
        // the source address is in the IPv4 header: its checksum changes
        assert_eq!(with(vec![field(26, 4)]).sized_header(64), None);
        // the UDP length, and the IPv4 version and header length
        assert_eq!(with(vec![field(38, 2)]).sized_header(64), None);
        assert_eq!(with(vec![field(13, 2)]).sized_header(64), None);
        assert!(with(vec![field(34, 4)]).sized_header(64).is_some(), "UDP ports");
        // too small for the header and the tag
        assert_eq!(with(vec![]).sized_header(61), None);
        assert_eq!(with(vec![]).sized_header(2), None);
    }
}
