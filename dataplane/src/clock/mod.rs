//! Time as the caller gives it. The engine never reads a clock: the
//! virtual-time driver and the real-time driver both pass `Instant`s in.

use std::ops::{Add, Sub};

/// Nanoseconds since an origin chosen by the caller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(pub u64);

/// A span of nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

impl Instant {
    pub const ZERO: Instant = Instant(0);

    pub fn from_nanos(ns: u64) -> Instant {
        Instant(ns)
    }

    pub fn nanos(self) -> u64 {
        self.0
    }

    /// Microseconds, the unit of BMv2's timestamps.
    pub fn micros(self) -> u64 {
        self.0 / 1000
    }
}

impl Duration {
    pub fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }

    pub fn nanos(self) -> u64 {
        self.0
    }

    pub fn micros(self) -> u64 {
        self.0 / 1000
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}

impl Sub for Instant {
    type Output = Duration;
    fn sub(self, o: Instant) -> Duration {
        Duration(self.0.saturating_sub(o.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Instant(5) - Instant(7), Duration(0));
        assert_eq!(Instant(u64::MAX) + Duration(1), Instant(u64::MAX));
        assert_eq!(Instant(2_500).micros(), 2);
    }
}
