//! AF_PACKET on Linux for p4scope's two real-time users: the engine's
//! ports (dataplane/src/io) and the traffic generator (topologies/trafgen).
//! The mechanism lives here, each user's policy (ring sizes, send buffers,
//! what a refused send means) in its own crate.
//!
//! * [`iface`]: an interface's index, MTU and hardware address.
//! * [`socket`]: open, options, bind to an interface, counters.
//! * [`FrameRing`]: a TPACKET_V2 receive ring (one frame per slot, handed
//!   back frame by frame: the engine's ports).
//! * [`BlockRing`]: a TPACKET_V3 receive ring (blocks of frames with kernel
//!   timestamps: the traffic analyzer).
//! * [`send`]: batched transmit with sendmmsg(2); [`poll`]: ppoll(2).
//!
//! Every `unsafe` block is a system call or a read of ring memory the
//! kernel has handed to user space; each says why it holds. No pointer is
//! kept after a call returns except the rings' mappings, which the ring
//! values own and unmap once, on drop.

pub mod block_ring;
pub mod frame_ring;
pub mod iface;
mod mapping;
pub mod poll;
pub mod send;
pub mod socket;
mod sys;

pub use block_ring::{BlockFrame, BlockRing};
pub use frame_ring::{FrameRing, RingFrame};

/// What the ring tests share: a network namespace of the test thread's own
/// (its loopback device sends frames back in), and a socket on it.
#[cfg(test)]
mod test_net {
    use std::os::fd::{BorrowedFd, OwnedFd};

    /// Runs `f` in a new thread in a network namespace of its own (gone
    /// with the thread), its lo up; does nothing without root (unshare or
    /// ip refused).
    pub fn in_own_netns(f: impl FnOnce() + Send + 'static) {
        std::thread::spawn(move || {
            // SAFETY: plain system call; affects the calling thread only.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                return;
            }
            let up = std::process::Command::new("ip").args(["link", "set", "lo", "up"]).output();
            if up.is_ok_and(|o| o.status.success()) {
                f();
            }
        })
        .join()
        .unwrap();
    }

    /// A non-blocking packet socket on lo with a ring set up by `ring`,
    /// bound to every protocol, not seeing its own sends (as the engine's
    /// ports).
    pub fn lo_socket<R>(ring: impl FnOnce(BorrowedFd) -> std::io::Result<R>) -> (OwnedFd, R) {
        use std::os::fd::AsFd;
        let fd = crate::socket::open(true).unwrap();
        let r = ring(fd.as_fd()).unwrap();
        crate::socket::bind(&fd, crate::iface::index("lo").unwrap(), crate::socket::ETH_P_ALL).unwrap();
        crate::socket::ignore_outgoing(&fd).unwrap();
        (fd, r)
    }
}
