//! A TPACKET_V3 receive ring: blocks the kernel fills with frames (each
//! with its receive time) and hands over whole, when full or after a
//! timeout. The traffic analyzer's ring: one block per wake-up at high
//! rates.

use std::io;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::mapping::RingMap;
use crate::socket::{PACKET_RX_RING, PACKET_VERSION};
use crate::sys::set_option;

const TPACKET_V3: libc::c_int = 2;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
/// The frame size the kernel checks the ring's geometry against (V3
/// packs frames of any length into blocks).
const FRAME_SIZE: usize = 2048;
/// Offsets in a block's descriptor (tpacket_block_desc: version,
/// offset_to_priv, then tpacket_hdr_v1 from byte 8).
const BLOCK_STATUS: usize = 8;
const BLOCK_NUM_PKTS: usize = 12;
const BLOCK_FIRST_PKT: usize = 16;

/// Blocks the kernel fills in order (block status TP_STATUS_USER, read
/// with acquire order) and this process hands back in order
/// (TP_STATUS_KERNEL, stored with release order).
pub struct BlockRing {
    map: RingMap,
    block_size: usize,
    block_nr: usize,
    next: usize,
}

/// One received frame: the kernel's receive time (CLOCK_REALTIME ns), its
/// length on the wire, and its bytes as captured (cut to the socket's
/// snap length).
pub struct BlockFrame<'a> {
    pub ts_ns: u64,
    pub wire_len: u32,
    pub data: &'a [u8],
}

impl BlockRing {
    /// Makes socket `fd` a TPACKET_V3 socket and sets up and maps its ring
    /// (before the socket is bound): `block_nr` blocks of `block_size`
    /// bytes (a multiple of the page size), a partly filled block handed
    /// over after `retire_ms`. Its pages are locked in memory when the
    /// memlock limit allows.
    pub fn new(fd: impl AsFd, block_size: usize, block_nr: usize, retire_ms: u32) -> io::Result<BlockRing> {
        let fd = fd.as_fd();
        set_option(fd, libc::SOL_PACKET, PACKET_VERSION, &TPACKET_V3, "PACKET_VERSION")?;
        let req = libc::tpacket_req3 {
            tp_block_size: block_size as u32,
            tp_block_nr: block_nr as u32,
            tp_frame_size: FRAME_SIZE as u32,
            tp_frame_nr: (block_size / FRAME_SIZE * block_nr) as u32,
            tp_retire_blk_tov: retire_ms,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        set_option(fd, libc::SOL_PACKET, PACKET_RX_RING, &req, "PACKET_RX_RING")?;
        let map = RingMap::new(fd, block_size * block_nr, true)?;
        Ok(BlockRing { map, block_size, block_nr, next: 0 })
    }

    fn block(&self, i: usize) -> *mut u8 {
        // SAFETY: block i < block_nr lies inside the mapping.
        unsafe { self.map.base().add(i * self.block_size) }
    }

    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: the block's 4-byte, 8-aligned status word lies inside the
        // mapping; the kernel and this process both access it atomically.
        unsafe { &*(self.block(i).add(BLOCK_STATUS) as *const AtomicU32) }
    }

    /// Whether the next block is ready (no system call).
    pub fn ready(&self) -> bool {
        self.status(self.next).load(Ordering::Acquire) & TP_STATUS_USER != 0
    }

    /// Calls `f` for each frame of the next block, if it is ready, then
    /// hands the block back to the kernel. Returns the number of frames
    /// (None: no block ready).
    pub fn take<F: FnMut(BlockFrame)>(&mut self, mut f: F) -> Option<usize> {
        if !self.ready() {
            return None;
        }
        let b = self.block(self.next);
        let end = self.block_size;
        let rd = |off: usize| -> u32 {
            // SAFETY: callers pass offsets inside the block (checked
            // against its size), which is user-owned until handed back.
            unsafe { std::ptr::read(b.add(off) as *const u32) }
        };
        let n = rd(BLOCK_NUM_PKTS) as usize;
        let mut at = rd(BLOCK_FIRST_PKT) as usize;
        let mut seen = 0;
        let hdr = std::mem::size_of::<libc::tpacket3_hdr>();
        while seen < n && at + hdr <= end {
            // SAFETY: the header lies inside the block (checked above) at a
            // 16-aligned offset the kernel chose (TPACKET_ALIGN).
            let h = unsafe { std::ptr::read(b.add(at) as *const libc::tpacket3_hdr) };
            let mac = at + h.tp_mac as usize;
            let snap = (h.tp_snaplen as usize).min(end.saturating_sub(mac));
            // SAFETY: mac + snap <= the block's end (clamped above); the
            // kernel does not write a user-owned block.
            let data = unsafe { std::slice::from_raw_parts(b.add(mac.min(end)), snap) };
            f(BlockFrame { ts_ns: h.tp_sec as u64 * 1_000_000_000 + h.tp_nsec as u64, wire_len: h.tp_len, data });
            seen += 1;
            if h.tp_next_offset == 0 {
                break;
            }
            at += h.tp_next_offset as usize;
        }
        self.status(self.next).store(TP_STATUS_KERNEL, Ordering::Release);
        self.next = (self.next + 1) % self.block_nr;
        Some(seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_net::{in_own_netns, lo_socket};

    #[test]
    fn the_blocks_hold_the_frames_cut_and_stamped() {
        // needs root: lo in a network namespace of this thread's own
        in_own_netns(|| {
            let (fd, mut ring) = lo_socket(|fd| {
                crate::socket::cut_frames(fd, 80)?;
                BlockRing::new(fd, 1 << 16, 4, 10)
            });
            assert!(!ring.ready() && ring.take(|_| ()).is_none());
            let frames: Vec<Vec<u8>> = (0..3u8).map(|i| vec![i; 60 + 100 * i as usize]).collect();
            let refs: Vec<&[u8]> = frames.iter().map(|f| f.as_slice()).collect();
            let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
            assert_eq!(crate::send::send_batch(&fd, &refs, libc::MSG_DONTWAIT).unwrap(), 3);
            // a block is handed over when the kernel's retire timer (every
            // 10 ms) finds frames in it: all three in one block, or in two
            // when it fires between two arrivals
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
            let mut got = vec![];
            while got.len() < 3 && std::time::Instant::now() < deadline {
                if ring.take(|f| got.push((f.ts_ns, f.wire_len, f.data.to_vec()))).is_none() {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            assert_eq!(got.len(), 3, "every frame, in order");
            for ((ts, wire, data), sent) in got.iter().zip(&frames) {
                assert!(*ts >= before - 1_000_000, "stamped {ts}, sent after {before}");
                assert_eq!(*wire as usize, sent.len());
                assert_eq!(data[..], sent[..sent.len().min(80)], "cut to 80 bytes");
            }
            assert!(!ring.ready(), "the blocks went back to the kernel");
            let st = crate::socket::statistics(&fd).unwrap();
            assert_eq!((st.packets, st.drops), (3, 0));
        });
    }
}
