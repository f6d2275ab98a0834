//! Cache prefetch hints (the one other module with unsafe code besides
//! `io::sys`). A packet behind a deep queue has left the caches by the time
//! it leaves: the queue hints the next ones in while the engine handles the
//! packets arriving meanwhile. A prefetch never faults and never changes
//! what a program computes, whatever the address.
#![allow(unsafe_code)]

/// Asks the CPU to bring the `bytes` bytes at `p` into its caches.
#[inline(always)]
pub fn prefetch<T: ?Sized>(p: &T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let base = p as *const T as *const i8;
        let mut off = 0;
        while off < bytes {
            // SAFETY: a prefetch is a hint; it reads nothing the program
            // sees and cannot fault, whatever the address
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(off)) };
            off += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}
