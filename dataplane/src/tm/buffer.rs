//! The shared packet buffer: total size, per-port reserved space, dynamic
//! thresholds (Choudhury and Hahne's alpha) for queues and ingress ports.
//!
//! Space is taken in cells. A port first fills its reserved space; beyond
//! it, packets take shared space, which is the buffer less the reserves of
//! the ports the configuration names (carved when it is applied, not on a
//! port's first packet). A queue (or an ingress port, with
//! `ingress_alpha`) may hold at most alpha times the shared space still
//! free: with one congested queue it settles at alpha/(1+alpha) of it, with
//! N at alpha/(1+N*alpha) each.

use super::config::{BufferCfg, MAX_PORT};

#[derive(Clone, Debug)]
pub struct Buffer {
    pub cfg: BufferCfg,
    /// Buffer less the configured ports' reserves.
    pub shared_size: u64,
    pub shared_used: u64,
    /// Everything held, reserved and shared (cells, in bytes).
    pub used: u64,
    pub peak_used: u64,
    /// What each ingress port holds (cells, in bytes).
    pub ingress_used: Vec<u64>,
}

/// Why the buffer refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferRefusal {
    Full,
    QueueThreshold,
    IngressThreshold,
}

impl Buffer {
    pub fn new(cfg: BufferCfg) -> Buffer {
        Buffer {
            shared_size: cfg.size_bytes,
            cfg,
            shared_used: 0,
            used: 0,
            peak_used: 0,
            ingress_used: vec![0; MAX_PORT as usize + 1],
        }
    }

    /// Bytes of buffer a packet of `len` bytes takes.
    #[inline]
    pub fn cells(&self, len: u32) -> u64 {
        let c = self.cfg.cell_bytes.max(1) as u64;
        (len as u64).div_ceil(c) * c
    }

    /// Sets aside `reserved` bytes, all the configured ports' reserves
    /// together: the shared pool is what is left.
    pub fn carve(&mut self, reserved: u64) {
        self.shared_size = self.cfg.size_bytes.saturating_sub(reserved);
    }

    /// A port holding `port_used` bytes had its reserve changed from `old`
    /// to `new`: what it holds beyond the reserve moves in or out of the
    /// shared pool's use. (The pool itself is re-carved by `carve`.)
    pub fn re_reserve(&mut self, port_used: u64, old: u64, new: u64) {
        let before = port_used.saturating_sub(old);
        let after = port_used.saturating_sub(new);
        self.shared_used = (self.shared_used + after).saturating_sub(before);
    }

    fn free_shared(&self) -> u64 {
        self.shared_size.saturating_sub(self.shared_used)
    }

    /// Checks whether `cells` more bytes fit: `port_used`/`reserved` of the
    /// egress port, `queue_used` of the queue (with its alpha), and the
    /// ingress port. Returns the shared bytes the packet would take.
    pub fn admit(
        &self,
        cells: u64,
        port_used: u64,
        reserved: u64,
        queue_used: u64,
        alpha: Option<f64>,
        ingress: u32,
    ) -> Result<u64, BufferRefusal> {
        let before = port_used.saturating_sub(reserved);
        let after = (port_used + cells).saturating_sub(reserved);
        let shared = after - before;
        if shared > 0 {
            if self.shared_used + shared > self.shared_size {
                return Err(BufferRefusal::Full);
            }
            if let Some(a) = alpha.or(self.cfg.alpha) {
                if (queue_used + cells) as f64 > a * self.free_shared() as f64 {
                    return Err(BufferRefusal::QueueThreshold);
                }
            }
        }
        if let Some(a) = self.cfg.ingress_alpha {
            let i = ingress.min(MAX_PORT) as usize;
            if (self.ingress_used[i] + cells) as f64 > a * self.free_shared() as f64 {
                return Err(BufferRefusal::IngressThreshold);
            }
        }
        Ok(shared)
    }

    /// Whether `cells` more bytes fit in the shared pool alone (a lossless
    /// packet: no dynamic thresholds); Ok(the shared bytes it would take).
    pub fn admit_pool(&self, cells: u64, port_used: u64, reserved: u64) -> Result<u64, BufferRefusal> {
        let shared = (port_used + cells).saturating_sub(reserved) - port_used.saturating_sub(reserved);
        if self.shared_used + shared > self.shared_size {
            return Err(BufferRefusal::Full);
        }
        Ok(shared)
    }

    pub fn take(&mut self, cells: u64, shared: u64, ingress: u32) {
        self.shared_used += shared;
        self.used += cells;
        self.peak_used = self.peak_used.max(self.used);
        self.ingress_used[ingress.min(MAX_PORT) as usize] += cells;
    }

    /// Frees a packet's cells; `port_used` is the egress port's use before.
    pub fn give(&mut self, cells: u64, port_used: u64, reserved: u64, ingress: u32) {
        let before = port_used.saturating_sub(reserved);
        let after = port_used.saturating_sub(cells).saturating_sub(reserved);
        self.shared_used = self.shared_used.saturating_sub(before - after);
        self.used = self.used.saturating_sub(cells);
        let i = ingress.min(MAX_PORT) as usize;
        self.ingress_used[i] = self.ingress_used[i].saturating_sub(cells);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(alpha: Option<f64>) -> Buffer {
        Buffer::new(BufferCfg { size_bytes: 1000, alpha, cell_bytes: 100, ingress_alpha: None })
    }

    #[test]
    fn cells_round_up() {
        let b = buf(None);
        assert_eq!(b.cells(1), 100);
        assert_eq!(b.cells(100), 100);
        assert_eq!(b.cells(101), 200);
    }

    #[test]
    fn dynamic_threshold_settles_at_alpha_over_one_plus_alpha() {
        let mut b = buf(Some(1.0));
        let mut q = 0u64;
        while let Ok(s) = b.admit(100, q, 0, q, None, 1) {
            b.take(100, s, 1);
            q += 100;
        }
        assert_eq!(q, 500, "alpha 1: half of the buffer");
        assert_eq!(b.admit(100, q, 0, q, None, 1), Err(BufferRefusal::QueueThreshold));
    }

    #[test]
    fn reserve_is_used_first_and_full_buffer_refuses() {
        let mut b = buf(None);
        b.carve(300);
        assert_eq!(b.shared_size, 700);
        // the first 300 bytes of the port come from its reserve
        assert_eq!(b.admit(100, 0, 300, 0, None, 1), Ok(0));
        assert_eq!(b.admit(100, 250, 300, 250, None, 1), Ok(50));
        let mut used = 300;
        b.take(300, 0, 1);
        while let Ok(s) = b.admit(100, used, 300, used, None, 1) {
            b.take(100, s, 1);
            used += 100;
        }
        assert_eq!(used, 1000);
        assert_eq!(b.admit(100, used, 300, used, None, 1), Err(BufferRefusal::Full));
        b.give(100, used, 300, 1);
        assert_eq!(b.shared_used, 600);
    }
}
