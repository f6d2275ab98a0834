//! Stateful externs: counters, two-rate three-colour meters, registers,
//! parse value sets. Time is passed in by the caller (nanoseconds).

use crate::program::{MeterType, Program};
use crate::value::Val;
use std::collections::HashSet;

/// Bytes and packets of one counter cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    pub bytes: u64,
    pub packets: u64,
}

impl Count {
    #[inline]
    pub fn hit(&mut self, bytes: usize) {
        self.bytes = self.bytes.wrapping_add(bytes as u64);
        self.packets = self.packets.wrapping_add(1);
    }
}

pub const GREEN: u32 = 0;
pub const YELLOW: u32 = 1;
pub const RED: u32 = 2;

/// RFC 2698 trTCM, colour-blind, as BMv2's meters.cpp: rates are in units
/// (bytes or packets) per microsecond, buckets start full.
#[derive(Clone, Copy, Debug, Default)]
pub struct Meter {
    configured: bool,
    /// committed and peak: (rate per ns, burst size)
    cir: f64,
    cbs: u64,
    pir: f64,
    pbs: u64,
    tc: f64,
    tp: f64,
    /// When it last ran, if `ran` since its rates were set (a flag, not an
    /// `Option<u64>`: table entries hold a meter, and the option's tag would
    /// become `Option<Entry>`'s, out of the entry's first cache line).
    last_ns: u64,
    ran: bool,
}

impl Meter {
    /// `rates`: [(committed units/us, burst), (peak units/us, burst)], as
    /// simple_switch_CLI's meter_set_rates takes them.
    pub fn set_rates(&mut self, cir_per_us: f64, cbs: u64, pir_per_us: f64, pbs: u64) {
        self.configured = true;
        self.cir = cir_per_us / 1000.0;
        self.cbs = cbs;
        self.pir = pir_per_us / 1000.0;
        self.pbs = pbs;
        self.tc = cbs as f64;
        self.tp = pbs as f64;
        self.ran = false;
    }

    pub fn rates(&self) -> Option<[(f64, u64); 2]> {
        if self.configured {
            Some([(self.cir * 1000.0, self.cbs), (self.pir * 1000.0, self.pbs)])
        } else {
            None
        }
    }

    pub fn execute(&mut self, units: u64, now_ns: u64) -> u32 {
        if !self.configured {
            return GREEN;
        }
        if self.ran {
            let dt = now_ns.saturating_sub(self.last_ns) as f64;
            self.tc = (self.tc + dt * self.cir).min(self.cbs as f64);
            self.tp = (self.tp + dt * self.pir).min(self.pbs as f64);
        }
        self.last_ns = now_ns;
        self.ran = true;
        let u = units as f64;
        if self.tp < u {
            RED
        } else if self.tc < u {
            self.tp -= u;
            YELLOW
        } else {
            self.tp -= u;
            self.tc -= u;
            GREEN
        }
    }
}

#[derive(Clone, Debug)]
pub struct MeterArray {
    pub mtype: MeterType,
    pub cells: Vec<Meter>,
}

/// All extern state of one loaded program.
#[derive(Clone, Debug)]
pub struct Externs {
    pub counters: Vec<Vec<Count>>,
    pub meters: Vec<MeterArray>,
    pub registers: Vec<Vec<Val>>,
    pub vsets: Vec<HashSet<Vec<u8>>>,
}

impl Externs {
    pub fn new(p: &Program) -> Externs {
        Externs {
            counters: p
                .counters
                .iter()
                .map(|c| if c.is_direct { vec![] } else { vec![Count::default(); c.size as usize] })
                .collect(),
            meters: p
                .meters
                .iter()
                .map(|m| MeterArray {
                    mtype: m.mtype,
                    cells: if m.is_direct { vec![] } else { vec![Meter::default(); m.size as usize] },
                })
                .collect(),
            registers: p.registers.iter().map(|r| vec![Val::ZERO; r.size as usize]).collect(),
            vsets: p.vsets.iter().map(|_| HashSet::new()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unconfigured_meter_is_green() {
        let mut m = Meter::default();
        assert_eq!(m.execute(1000, 0), GREEN);
    }

    #[test]
    fn trtcm_colours() {
        let mut m = Meter::default();
        // 1 packet/us committed, burst 2; 2 packets/us peak, burst 3
        m.set_rates(1.0, 2, 2.0, 3);
        let t = 1_000_000;
        assert_eq!(m.execute(1, t), GREEN);
        assert_eq!(m.execute(1, t), GREEN);
        assert_eq!(m.execute(1, t), YELLOW);
        assert_eq!(m.execute(1, t), RED);
        // 1 us later: one committed token, two peak tokens back
        assert_eq!(m.execute(1, t + 1000), GREEN);
    }
}
