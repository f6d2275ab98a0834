//! pcap files: a writer (nanosecond timestamps, Ethernet) used as a tracer
//! at the ports, and a reader for either byte order and either timestamp
//! resolution. Malformed files are errors, never panics.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};

const MAGIC_US: u32 = 0xa1b2_c3d4;
const MAGIC_NS: u32 = 0xa1b2_3c4d;
const LINKTYPE_ETHERNET: u32 = 1;
pub const SNAPLEN: u32 = 262_144;

pub struct PcapWriter {
    w: BufWriter<File>,
    pub packets: u64,
}

impl PcapWriter {
    pub fn create(path: &str) -> io::Result<PcapWriter> {
        let mut w = BufWriter::new(File::create(path)?);
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&MAGIC_NS.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&SNAPLEN.to_le_bytes());
        h.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter { w, packets: 0 })
    }

    /// One packet at `time_ns` (nanoseconds since the epoch or since any
    /// origin the caller chooses).
    pub fn write(&mut self, time_ns: u64, data: &[u8]) -> io::Result<()> {
        let cap = data.len().min(SNAPLEN as usize);
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((time_ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((time_ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(cap as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(data.len() as u32).to_le_bytes());
        self.w.write_all(&h)?;
        self.w.write_all(&data[..cap])?;
        self.packets += 1;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

impl Drop for PcapWriter {
    fn drop(&mut self) {
        let _ = self.w.flush();
    }
}

/// The packets of a pcap file as (time in ns, bytes).
pub fn read(path: &str) -> io::Result<Vec<(u64, Vec<u8>)>> {
    let mut data = vec![];
    File::open(path)?.read_to_end(&mut data)?;
    parse(&data).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{path}: {e}")))
}

pub fn parse(data: &[u8]) -> Result<Vec<(u64, Vec<u8>)>, String> {
    if data.len() < 24 {
        return Err("not a pcap file (too short)".into());
    }
    let m = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    let (le, ns) = match m {
        MAGIC_US => (true, false),
        MAGIC_NS => (true, true),
        _ if m.swap_bytes() == MAGIC_US => (false, false),
        _ if m.swap_bytes() == MAGIC_NS => (false, true),
        _ => return Err(format!("not a pcap file (magic 0x{m:08x}; pcapng is not read)")),
    };
    let u32_at = |b: &[u8]| -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let mut out = vec![];
    let mut i = 24;
    while i < data.len() {
        if i + 16 > data.len() {
            return Err(format!("truncated record header at byte {i}"));
        }
        let sec = u32_at(&data[i..]) as u64;
        let frac = u32_at(&data[i + 4..]) as u64;
        let incl = u32_at(&data[i + 8..]) as usize;
        i += 16;
        if incl > data.len() - i {
            return Err(format!("truncated packet at byte {i}"));
        }
        let t = sec * 1_000_000_000 + if ns { frac } else { frac * 1000 };
        out.push((t, data[i..i + incl].to_vec()));
        i += incl;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_then_read_and_reject_garbage() {
        let path = std::env::temp_dir().join(format!("p4scope-pcap-{}.pcap", std::process::id()));
        let p = path.to_str().unwrap();
        {
            let mut w = PcapWriter::create(p).unwrap();
            w.write(1_500_000_001, &[1, 2, 3]).unwrap();
            w.write(2_000_000_000, &[4; 70]).unwrap();
        }
        let pk = read(p).unwrap();
        assert_eq!(pk.len(), 2);
        assert_eq!(pk[0], (1_500_000_001, vec![1, 2, 3]));
        assert_eq!(pk[1].1.len(), 70);
        std::fs::remove_file(p).unwrap();
        assert!(parse(b"short").is_err());
        assert!(parse(&[0u8; 24]).is_err());
        let mut us = vec![];
        us.extend_from_slice(&MAGIC_US.to_be_bytes());
        us.extend_from_slice(&[0; 20]);
        us.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0, 2, 9, 9]);
        assert_eq!(parse(&us).unwrap(), vec![(1_000_005_000, vec![9, 9])]);
        us.pop();
        assert!(parse(&us).unwrap_err().contains("truncated"));
    }
}
