//! A TPACKET_V2 receive ring: fixed-size slots, one frame each, that the
//! kernel fills in order and user space hands back in order, frame by
//! frame (no system call per frame). The engine's real-time ports.

use std::io;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::mapping::RingMap;
use crate::socket::{PACKET_RX_RING, PACKET_VERSION};
use crate::sys::set_option;

const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
/// Where the kernel puts a frame's Ethernet header in a ring slot:
/// TPACKET_ALIGN(sizeof(tpacket2_hdr) + sizeof(sockaddr_ll) + 16) - 14.
const RING_MAC_OFFSET: usize = 66;
const RING_BLOCK: usize = 1 << 17;

/// Slots the kernel fills (status TP_STATUS_USER, read with acquire
/// order) and this process hands back (TP_STATUS_KERNEL, stored with
/// release order); it reads only inside slots it owns.
pub struct FrameRing {
    map: RingMap,
    slot: usize,
    slots: usize,
    head: usize,
}

impl FrameRing {
    /// Makes socket `fd` a TPACKET_V2 socket and sets up and maps its ring
    /// (before the socket is bound, so no frame ever waits elsewhere):
    /// slots for frames of `frame` bytes, about `bytes` in all (at least
    /// one block of 128 KiB).
    pub fn new(fd: impl AsFd, frame: usize, bytes: usize) -> io::Result<FrameRing> {
        let fd = fd.as_fd();
        set_option(fd, libc::SOL_PACKET, PACKET_VERSION, &TPACKET_V2, "PACKET_VERSION")?;
        let slot = (RING_MAC_OFFSET + frame + 2).next_power_of_two().max(2048);
        let block = RING_BLOCK.max(slot);
        let per_block = block / slot;
        let blocks = (bytes / block).max(1);
        let req = libc::tpacket_req {
            tp_block_size: block as libc::c_uint,
            tp_block_nr: blocks as libc::c_uint,
            tp_frame_size: slot as libc::c_uint,
            tp_frame_nr: (blocks * per_block) as libc::c_uint,
        };
        set_option(fd, libc::SOL_PACKET, PACKET_RX_RING, &req, "PACKET_RX_RING")?;
        let map = RingMap::new(fd, block * blocks, false)?;
        // Slots never straddle blocks: block is a multiple of slot (both
        // powers of two), so slot i starts at i * slot.
        Ok(FrameRing { map, slot, slots: blocks * per_block, head: 0 })
    }

    /// Bytes of one slot's frame at most (longer frames arrive cut).
    pub fn max_frame(&self) -> usize {
        self.slot - RING_MAC_OFFSET
    }

    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: slot i lies inside the mapping (i < slots, slots * slot
        // <= its length) and starts with the 4-byte, 16-aligned tp_status
        // the kernel and this process both access atomically.
        unsafe { &*(self.map.base().add(i * self.slot) as *const AtomicU32) }
    }

    /// Whether the next frame is ready (no system call).
    pub fn ready(&self) -> bool {
        self.status(self.head).load(Ordering::Acquire) & TP_STATUS_USER != 0
    }

    /// Whether at least `n` frames are ready (the kernel fills slots in
    /// order: the n-th from the head is enough to look at).
    pub fn has(&self, n: usize) -> bool {
        let i = (self.head + n.clamp(1, self.slots) - 1) % self.slots;
        self.status(i).load(Ordering::Acquire) & TP_STATUS_USER != 0
    }

    /// The next frame the kernel has handed over, if any; it goes back to
    /// the kernel when the returned value is dropped.
    pub fn take(&mut self) -> Option<RingFrame<'_>> {
        let st = self.status(self.head).load(Ordering::Acquire);
        if st & TP_STATUS_USER == 0 {
            return None;
        }
        // SAFETY: the slot is user-owned now (status read with acquire
        // after the kernel's release): the kernel does not write it until
        // the status is set back; tpacket2_hdr fits at the slot's start.
        let h = unsafe { std::ptr::read(self.map.base().add(self.head * self.slot) as *const libc::tpacket2_hdr) };
        let off = (h.tp_mac as usize).min(self.slot);
        let cap = (h.tp_snaplen as usize).min(self.slot - off);
        let vlan = (st & TP_STATUS_VLAN_VALID != 0).then(|| {
            let tpid = if st & TP_STATUS_VLAN_TPID_VALID != 0 { h.tp_vlan_tpid } else { 0x8100 };
            (tpid, h.tp_vlan_tci)
        });
        Some(RingFrame { ring: self, off, cap, len: h.tp_len as usize, vlan })
    }
}

/// A received frame, still in the ring.
pub struct RingFrame<'a> {
    ring: &'a mut FrameRing,
    off: usize,
    cap: usize,
    len: usize,
    vlan: Option<(u16, u16)>,
}

impl RingFrame<'_> {
    /// The bytes captured (all of them unless `cut`); without the VLAN tag
    /// the kernel took out of the frame (see `vlan`).
    pub fn data(&self) -> &[u8] {
        let r = &*self.ring;
        // SAFETY: off + cap <= slot (clamped in `take`), inside the slot
        // this frame owns until drop; the kernel does not write a
        // user-owned slot.
        unsafe { std::slice::from_raw_parts(r.map.base().add(r.head * r.slot + self.off), self.cap) }
    }

    /// Whether the frame was longer than its slot (its tail is missing).
    pub fn cut(&self) -> bool {
        self.cap < self.len
    }

    /// The VLAN tag (TPID, TCI) the kernel moved out of the frame, to be
    /// put back after the MAC addresses (as libpcap does).
    pub fn vlan(&self) -> Option<(u16, u16)> {
        self.vlan
    }
}

impl Drop for RingFrame<'_> {
    fn drop(&mut self) {
        let r = &mut *self.ring;
        r.status(r.head).store(TP_STATUS_KERNEL, Ordering::Release);
        r.head = (r.head + 1) % r.slots;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_net::{in_own_netns, lo_socket};

    #[test]
    fn the_ring_says_how_many_frames_wait() {
        // needs root: lo in a network namespace of this thread's own,
        // whose sends come back in on it
        in_own_netns(|| {
            let (fd, mut ring) = lo_socket(|fd| FrameRing::new(fd, 1514, 1 << 20));
            assert!(!ring.ready() && !ring.has(1));
            let frame = [0u8; 60];
            for _ in 0..5 {
                assert_eq!(crate::send::send_batch(&fd, &[&frame], libc::MSG_DONTWAIT).unwrap(), 1);
            }
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
            while !ring.has(5) && std::time::Instant::now() < deadline {
                std::thread::yield_now();
            }
            assert!(ring.ready() && ring.has(1) && ring.has(5) && !ring.has(6));
            drop(ring.take());
            assert!(ring.has(4) && !ring.has(5), "one taken");
        });
    }

    #[test]
    fn frames_longer_than_a_slot_arrive_cut() {
        in_own_netns(|| {
            let (fd, mut ring) = lo_socket(|fd| FrameRing::new(fd, 1514, 1 << 20));
            let max = ring.max_frame();
            let short: Vec<u8> = (0..100u8).collect();
            let long = vec![7u8; max + 100];
            assert_eq!(crate::send::send_batch(&fd, &[&short, &long], libc::MSG_DONTWAIT).unwrap(), 2);
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
            while !ring.has(2) && std::time::Instant::now() < deadline {
                std::thread::yield_now();
            }
            let f = ring.take().expect("the short frame");
            assert_eq!((f.data(), f.cut(), f.vlan()), (&short[..], false, None));
            drop(f);
            let f = ring.take().expect("the long frame");
            assert!(f.cut());
            assert_eq!(f.data().len(), max);
            drop(f);
            assert!(ring.take().is_none());
        });
    }
}
