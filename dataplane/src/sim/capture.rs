//! Capture: the frames that leave chosen ports in virtual time, kept with
//! their departure time (first bit out, ns) until the caller takes them.
//!
//! Memory is bounded: each captured port holds at most `limit` frames
//! between two takes; frames past the limit are counted, not kept. Ports
//! not captured cost one check of an empty map per frame.

use std::collections::BTreeMap;

/// Frames held per port between two takes when no limit is given.
pub const DEFAULT_LIMIT: usize = 1 << 20;

#[derive(Clone, Debug, Default)]
pub struct PortCapture {
    /// The most frames held at once (between two takes).
    pub limit: usize,
    /// The held frames in departure order, as one block: no allocation per
    /// frame (a microburst's collector port takes 10^5 reports).
    held: Block,
    /// Frames kept since capture started (taken or still held).
    pub kept: u64,
    /// Frames that left the port while `limit` frames were held.
    pub not_kept: u64,
}

/// Frames as columns: departure times (first bit out, ns), lengths, and
/// the frames' bytes (without FCS) one after the other.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub times: Vec<u64>,
    pub lengths: Vec<u32>,
    pub bytes: Vec<u8>,
}

impl Block {
    pub fn len(&self) -> usize {
        self.times.len()
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The frames as (departure time, bytes), in departure order.
    pub fn frames(&self) -> Vec<(u64, Vec<u8>)> {
        let mut at = 0;
        self.times.iter().zip(&self.lengths).map(|(&t, &n)| {
            let f = (t, self.bytes[at..at + n as usize].to_vec());
            at += n as usize;
            f
        }).collect()
    }
}

impl PortCapture {
    pub fn new(limit: usize) -> PortCapture {
        PortCapture { limit, ..Default::default() }
    }

    #[inline]
    pub fn push(&mut self, time_ns: u64, data: &[u8]) {
        if self.held.len() < self.limit {
            self.held.times.push(time_ns);
            self.held.lengths.push(data.len() as u32);
            self.held.bytes.extend_from_slice(data);
            self.kept += 1;
        } else {
            self.not_kept += 1;
        }
    }

    /// Frames held now.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// The held frames (the port stays captured).
    pub fn take(&mut self) -> Vec<(u64, Vec<u8>)> {
        self.take_block().frames()
    }

    /// The held frames as one block (the port stays captured).
    pub fn take_block(&mut self) -> Block {
        std::mem::take(&mut self.held)
    }

    /// Shows the held frames to `f`, then forgets them keeping the block's
    /// memory (see `Trace::drain`).
    pub fn drain_block<R>(&mut self, f: impl FnOnce(&Block) -> R) -> R {
        let r = f(&self.held);
        self.held.times.clear();
        self.held.lengths.clear();
        self.held.bytes.clear();
        r
    }
}

/// The captured ports.
#[derive(Clone, Debug, Default)]
pub struct Captures {
    pub ports: BTreeMap<u32, PortCapture>,
}

impl Captures {
    /// Starts capturing `port` (or changes its limit, keeping what it holds:
    /// frames beyond a lowered limit stay until taken).
    pub fn start(&mut self, port: u32, limit: Option<usize>) {
        let limit = limit.unwrap_or(DEFAULT_LIMIT);
        self.ports.entry(port).or_insert_with(|| PortCapture::new(limit)).limit = limit;
    }

    /// Stops capturing `port`; returns what it still held.
    pub fn stop(&mut self, port: u32) -> Option<PortCapture> {
        self.ports.remove(&port)
    }

    #[inline]
    pub fn offer(&mut self, port: u32, time_ns: u64, data: &[u8]) {
        if self.ports.is_empty() {
            return;
        }
        if let Some(c) = self.ports.get_mut(&port) {
            c.push(time_ns, data);
        }
    }

    /// Forgets held frames and counters (ports stay captured).
    pub fn reset(&mut self) {
        for c in self.ports.values_mut() {
            let limit = c.limit;
            *c = PortCapture::new(limit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drained_block_shows_its_frames_then_empties_in_the_same_memory() {
        let mut c = PortCapture::new(8);
        c.push(5, b"ab");
        c.push(7, b"cde");
        let seen = c.drain_block(|b| b.frames());
        assert_eq!(seen, vec![(5, b"ab".to_vec()), (7, b"cde".to_vec())]);
        assert_eq!((c.held(), c.kept), (0, 2));
        assert!(c.held.bytes.capacity() >= 5 && c.held.times.capacity() >= 2, "the block's memory kept");
        c.push(9, b"f");
        assert_eq!(c.take(), vec![(9, b"f".to_vec())]);
    }

    #[test]
    fn keeps_up_to_the_limit_and_counts_the_rest() {
        let mut c = Captures::default();
        c.offer(1, 5, b"x"); // nothing captured: ignored
        c.start(3, Some(2));
        for t in 0..5u64 {
            c.offer(3, t, &[t as u8]);
            c.offer(4, t, b"other");
        }
        let p = &c.ports[&3];
        assert_eq!((p.kept, p.not_kept), (2, 3));
        assert!(!c.ports.contains_key(&4));
        let got = c.ports.get_mut(&3).unwrap().take();
        assert_eq!(got, vec![(0, vec![0]), (1, vec![1])]);
        c.offer(3, 7, b"ab");
        c.offer(3, 8, b"");
        let block = c.ports.get_mut(&3).unwrap().take_block();
        assert_eq!(block, Block { times: vec![7, 8], lengths: vec![2, 0], bytes: b"ab".to_vec() });
        assert_eq!(block.frames(), vec![(7, b"ab".to_vec()), (8, vec![])]);
        // a take frees room for the next frames
        c.offer(3, 9, b"y");
        let p = &c.ports[&3];
        assert_eq!((p.kept, p.not_kept, p.held()), (5, 3, 1));
        c.reset();
        assert_eq!((c.ports[&3].kept, c.ports[&3].held(), c.ports[&3].limit), (0, 0, 2));
        assert_eq!(c.stop(3).map(|p| p.limit), Some(2));
        assert!(c.ports.is_empty());
    }
}
