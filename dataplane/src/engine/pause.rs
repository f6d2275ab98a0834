//! Priority flow control frames: those the traffic manager decided to send
//! (built and sent out of the ingress port they stop, at once — a MAC
//! sends control frames ahead of queued traffic), and those a switch with
//! PFC configured receives from downstream (its MAC takes them: they pause
//! that port's egress queues of the priorities they name; a switch without
//! PFC, as BMv2, hands them to the program like any frame).

use super::{Output, Switch};
use crate::tm::pfc::DEFAULT_LINK_BPS;
use crate::tm::pfc_frame::{self, quanta_ps};

/// The source MAC of a port's pause frames: 02:50:46:43 ("PFC") and the
/// port number (a switch's port MAC; the receiver does not look at it).
pub fn pause_src_mac(port: u32) -> u64 {
    0x0250_4643_0000 | (port as u64 & 0xffff)
}

impl Switch {
    /// Sends the pause frames the traffic manager has ready.
    pub(super) fn send_pauses(&mut self) {
        for p in self.tm.take_pauses() {
            let mut data = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(64));
            pfc_frame::encode(&mut data, pause_src_mac(p.port), &p.pause);
            self.outputs.push(Output { port: p.port, data, time_ns: self.now });
        }
    }

    /// A frame received on `port`: if it is PFC, its egress queues obey it
    /// (from now, in 512-bit-time quanta at the port's rate); true then.
    pub(super) fn pause_received(&mut self, port: u32, data: &[u8]) -> bool {
        let Some(p) = pfc_frame::decode(data) else { return false };
        let rate = self.tm.cfg.port(port).rate_bps.unwrap_or(DEFAULT_LINK_BPS) as f64;
        for prio in 0..8 {
            if p.enable & (1 << prio) != 0 {
                let until = self.now + quanta_ps(p.quanta[prio], rate).div_ceil(1000);
                self.tm.pause_egress(self.now, port, prio, until);
            }
        }
        self.schedule(port);
        true
    }
}
