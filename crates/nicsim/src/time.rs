//! Simulated time: integer picoseconds, typed.
//!
//! This module owns the two time types of the core, [`Instant`] (a point on
//! the simulated clock) and [`Duration`] (a span). There is no floating-point
//! time anywhere in the simulator; conversion to `f64` happens only when a
//! metric is reported, with the unit in the function name (`as_us_f64`).
//! Picoseconds give 1 ps resolution and ~213 days of range in a `u64`.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(u64);

/// A point on the simulated clock, in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);

    pub const fn from_ps(ps: u64) -> Self {
        Duration(ps)
    }
    pub const fn from_ns(ns: u64) -> Self {
        Duration(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Self {
        Duration(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> Self {
        Duration(ms * 1_000_000_000)
    }
    /// Converts a configuration value given in nanoseconds (may be fractional).
    /// Used only at the configuration boundary; rounds to the nearest ps.
    pub fn from_ns_f64(ns: f64) -> Self {
        debug_assert!(ns >= 0.0 && ns.is_finite());
        Duration((ns * 1_000.0).round() as u64)
    }
    /// Time to move `bytes` at `bytes_per_s`, rounded up to the next ps.
    pub fn for_bytes(bytes: u64, bytes_per_s: u64) -> Self {
        debug_assert!(bytes_per_s > 0);
        // Every frame fits the 64-bit product (bytes < 1.8e7), which avoids
        // a 128-bit division per hop; bigger transfers take the wide path.
        // Both compute the same exact ceiling.
        let ps = match bytes.checked_mul(1_000_000_000_000) {
            Some(n) => n.div_ceil(bytes_per_s),
            None => (bytes as u128 * 1_000_000_000_000u128).div_ceil(bytes_per_s as u128) as u64,
        };
        Duration(ps)
    }
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_s_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    pub fn saturating_sub(self, other: Duration) -> Duration {
        Duration(self.0.saturating_sub(other.0))
    }
    pub fn times(self, n: u64) -> Duration {
        Duration(self.0 * n)
    }
}

/// A fixed transfer rate that remembers its last answer. The frames of one
/// path mostly have a single length, and [`Duration::for_bytes`] divides
/// (tens of cycles, several times per simulated message); a repeated length
/// gets the same value back without dividing.
#[derive(Clone, Copy, Debug)]
pub struct Rate {
    bytes_per_s: u64,
    last: Option<(u64, Duration)>,
}

impl Rate {
    pub fn new(bytes_per_s: u64) -> Self {
        Rate { bytes_per_s, last: None }
    }
    /// `Duration::for_bytes(bytes, bytes_per_s)`.
    #[inline]
    pub fn time(&mut self, bytes: u64) -> Duration {
        match self.last {
            Some((b, d)) if b == bytes => d,
            _ => {
                let d = Duration::for_bytes(bytes, self.bytes_per_s);
                self.last = Some((bytes, d));
                d
            }
        }
    }
}

impl Instant {
    pub const ZERO: Instant = Instant(0);
    pub const MAX: Instant = Instant(u64::MAX);

    pub const fn from_ps(ps: u64) -> Self {
        Instant(ps)
    }
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_s_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }
    /// Time elapsed since `earlier`; zero if `earlier` is later.
    pub fn since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// Seconds and microseconds, as pcap timestamps want them.
    pub fn to_secs_micros(self) -> (u32, u32) {
        let us = self.0 / 1_000_000;
        ((us / 1_000_000) as u32, (us % 1_000_000) as u32)
    }
    /// Seconds and nanoseconds (nanosecond-resolution pcap).
    pub fn to_secs_nanos(self) -> (u32, u32) {
        let ns = self.0 / 1_000;
        ((ns / 1_000_000_000) as u32, (ns % 1_000_000_000) as u32)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Panics in debug builds if `rhs` is later than `self`.
    fn sub(self, rhs: Instant) -> Duration {
        debug_assert!(self.0 >= rhs.0, "time went backwards: {self} - {rhs}");
        Duration(self.0.saturating_sub(rhs.0))
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, d: Duration) -> Duration {
        debug_assert!(self.0 >= d.0, "negative duration");
        Duration(self.0.saturating_sub(d.0))
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}us", self.as_us_f64())
    }
}
impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={:.3}us", self.as_us_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_compose() {
        assert_eq!(Duration::from_us(1), Duration::from_ns(1_000));
        assert_eq!(Duration::from_ns(1), Duration::from_ps(1_000));
        let t = Instant::ZERO + Duration::from_us(75);
        assert_eq!(t.since(Instant::ZERO), Duration::from_us(75));
    }

    #[test]
    fn bytes_at_rate_rounds_up() {
        // 1500 B at 10 Gb/s = 1.2 us
        assert_eq!(Duration::for_bytes(1500, 1_250_000_000), Duration::from_ns(1200));
        assert_eq!(Duration::for_bytes(1, 3), Duration::from_ps(333_333_333_334));
        // Past the 64-bit product: the 128-bit path, same rounding.
        let big = 40_000_000u64;
        assert_eq!(Duration::for_bytes(big, 3).as_ps(), (big as u128 * 1_000_000_000_000).div_ceil(3) as u64);
        assert_eq!(Duration::for_bytes(18_000_000, 7).as_ps(), (18_000_000u128 * 1_000_000_000_000).div_ceil(7) as u64);
    }

    #[test]
    fn pcap_timestamps() {
        let t = Instant::from_ps(2_500_001_000_000);
        assert_eq!(t.to_secs_micros(), (2, 500_001));
        assert_eq!(t.to_secs_nanos(), (2, 500_001_000));
    }
}
