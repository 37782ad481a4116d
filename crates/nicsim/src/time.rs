//! Simulated time: integer picoseconds, typed.
//!
//! This module owns the two time types of the core, [`Instant`] (a point on
//! the simulated clock) and [`Duration`] (a span). There is no floating-point
//! time anywhere in the simulator; conversion to `f64` happens only when a
//! metric is reported, with the unit in the function name (`as_us_f64`).
//! Picoseconds give 1 ps resolution and ~213.5 days of range in a `u64`.
//!
//! Time cannot overflow: the simulator takes no input time nor span
//! beyond [`Instant::LIMIT`] (100 days; a replayed frame's time, a
//! configured delay or compute step, each refused by name with the range
//! allowed where it is converted: [`Duration::checked_from_ns`] and
//! [`Duration::checked_from_ns_f64`] say whether a value fits), and a run
//! whose clock passes [`Instant::RUN_LIMIT`] (110 days: ten days after the
//! latest input) stops with an error (`sim::World::run_checked`). As every
//! span added to a time is at most 100 days, a sum that would pass the
//! `u64`'s end (213.5 days) is made at a time past the run's limit, so the
//! run ends with that error: the saturating additions below never decide a
//! result unseen. The unchecked constructors (`from_ns`, `from_us`,
//! `from_ms`, `from_ns_f64`) are for constants and for values whose range
//! the configuration checked.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(u64);

/// A point on the simulated clock, in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

/// Picoseconds in a day.
const DAY_PS: u64 = 86_400 * 1_000_000_000_000;

/// The largest input time or span, in nanoseconds: [`Instant::LIMIT`]
/// (100 days).
pub const MAX_TIME_NS: u64 = Duration::LIMIT.0 / 1_000;

/// A whole number of `unit` picoseconds, or a panic naming the overflow:
/// the unchecked constructors take constants and checked values only (a
/// constant that overflows does not compile).
const fn scaled(n: u64, unit: u64) -> u64 {
    match n.checked_mul(unit) {
        Some(ps) => ps,
        None => panic!("a time beyond the u64 of picoseconds (use the checked constructors for inputs)"),
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    /// The saturation value of sums ("never"); not a span an input gives.
    pub const MAX: Duration = Duration(u64::MAX);
    /// The longest span an input may give, and the latest time it may name
    /// ([`Instant::LIMIT`]): 100 days.
    pub const LIMIT: Duration = Duration(100 * DAY_PS);

    pub const fn from_ps(ps: u64) -> Self {
        Duration(ps)
    }
    pub const fn from_ns(ns: u64) -> Self {
        Duration(scaled(ns, 1_000))
    }
    pub const fn from_us(us: u64) -> Self {
        Duration(scaled(us, 1_000_000))
    }
    pub const fn from_ms(ms: u64) -> Self {
        Duration(scaled(ms, 1_000_000_000))
    }
    /// `ns` nanoseconds if at most [`Duration::LIMIT`], else `None`.
    pub const fn checked_from_ns(ns: u64) -> Option<Self> {
        if ns <= MAX_TIME_NS {
            Some(Duration(ns * 1_000))
        } else {
            None
        }
    }
    /// `ns` nanoseconds (may be fractional), rounded to the nearest ps, if
    /// a number from 0 to [`Duration::LIMIT`]; `None` for a negative
    /// number, a NaN, an infinity or a longer span.
    pub fn checked_from_ns_f64(ns: f64) -> Option<Self> {
        let ps = (ns * 1_000.0).round();
        // `!(x <= y)` and not `x > y`: a NaN fails the comparison.
        if !(ps >= 0.0 && ps <= Duration::LIMIT.0 as f64) {
            return None;
        }
        Some(Duration((ps as u64).min(Duration::LIMIT.0)))
    }
    /// Converts a configuration value given in nanoseconds (may be
    /// fractional) whose key's range the configuration checked (every
    /// such range lies within [`Duration::LIMIT`]); rounds to the nearest ps.
    /// Input from elsewhere goes through [`Duration::checked_from_ns_f64`].
    pub fn from_ns_f64(ns: f64) -> Self {
        debug_assert!(Self::checked_from_ns_f64(ns).is_some(), "{ns} ns unchecked");
        Duration((ns * 1_000.0).round() as u64)
    }
    /// Time to move `bytes` at `bytes_per_s`, rounded up to the next ps
    /// (saturating at [`Duration::MAX`]: the configured rates and sizes
    /// keep it to hours).
    pub fn for_bytes(bytes: u64, bytes_per_s: u64) -> Self {
        debug_assert!(bytes_per_s > 0);
        // Every frame fits the 64-bit product (bytes < 1.8e7), which avoids
        // a 128-bit division per hop; bigger transfers take the wide path.
        // Both compute the same exact ceiling.
        let ps = match bytes.checked_mul(1_000_000_000_000) {
            Some(n) => n.div_ceil(bytes_per_s),
            None => {
                let ps = (bytes as u128 * 1_000_000_000_000u128).div_ceil(bytes_per_s as u128);
                u64::try_from(ps).unwrap_or(u64::MAX)
            }
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
    /// `n` times the span, saturating at [`Duration::MAX`] (a run that
    /// reaches it passes [`Instant::LIMIT`] and ends with that error).
    pub fn times(self, n: u64) -> Duration {
        Duration(self.0.saturating_mul(n))
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
    /// The saturation value of sums, and the sentinel of "no deadline".
    pub const MAX: Instant = Instant(u64::MAX);
    /// The latest time an input may name: 100 days.
    pub const LIMIT: Instant = Instant(Duration::LIMIT.0);
    /// The latest time a run may reach: 110 days, ten days after the latest
    /// input, so that a time within it plus a span within
    /// [`Duration::LIMIT`] stays below the `u64`'s end (213.5 days).
    pub const RUN_LIMIT: Instant = Instant(110 * DAY_PS);

    pub const fn from_ps(ps: u64) -> Self {
        Instant(ps)
    }
    /// `ns` nanoseconds after the start if at most [`Instant::LIMIT`],
    /// else `None`.
    pub const fn checked_from_ns(ns: u64) -> Option<Self> {
        match Duration::checked_from_ns(ns) {
            Some(d) => Some(Instant(d.0)),
            None => None,
        }
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

/// `a + b`, or `u64::MAX` if that passes the `u64`'s end: what
/// `saturating_add` gives, with the carry taken as a branch to a cold path
/// (see the module's documentation: no run within its limit takes it)
/// where `saturating_add` selects the result with a conditional move and a
/// constant at every sum, one instruction more on the simulator's hottest
/// arithmetic.
#[inline(always)]
fn sat_add(a: u64, b: u64) -> u64 {
    match a.checked_add(b) {
        Some(s) => s,
        None => saturated(u64::MAX),
    }
}

/// `a - b`, or 0 if `b` is greater: `saturating_sub` for the differences
/// that are never negative in a correct run (asserted in debug builds), the
/// borrow taken as a branch to a cold path as in [`sat_add`].
#[inline(always)]
fn sat_sub(a: u64, b: u64) -> u64 {
    match a.checked_sub(b) {
        Some(d) => d,
        None => saturated(0),
    }
}

/// The saturated value `v` of [`sat_add`] or [`sat_sub`], out of line and
/// opaque to the optimiser (which would otherwise fold the branch back into
/// a select).
#[cold]
#[inline(never)]
fn saturated(v: u64) -> u64 {
    std::hint::black_box(v)
}

impl Add<Duration> for Instant {
    type Output = Instant;
    #[inline(always)]
    fn add(self, d: Duration) -> Instant {
        Instant(sat_add(self.0, d.0))
    }
}
impl AddAssign<Duration> for Instant {
    #[inline(always)]
    fn add_assign(&mut self, d: Duration) {
        self.0 = sat_add(self.0, d.0);
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Panics in debug builds if `rhs` is later than `self`.
    #[inline(always)]
    fn sub(self, rhs: Instant) -> Duration {
        debug_assert!(self.0 >= rhs.0, "time went backwards: {self} - {rhs}");
        Duration(sat_sub(self.0, rhs.0))
    }
}
impl Add for Duration {
    type Output = Duration;
    #[inline(always)]
    fn add(self, d: Duration) -> Duration {
        Duration(sat_add(self.0, d.0))
    }
}
impl AddAssign for Duration {
    #[inline(always)]
    fn add_assign(&mut self, d: Duration) {
        self.0 = sat_add(self.0, d.0);
    }
}
impl Sub for Duration {
    type Output = Duration;
    #[inline(always)]
    fn sub(self, d: Duration) -> Duration {
        debug_assert!(self.0 >= d.0, "negative duration");
        Duration(sat_sub(self.0, d.0))
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
    fn the_limit_is_100_days_within_the_clock() {
        assert_eq!(MAX_TIME_NS, 8_640_000_000_000_000);
        assert_eq!(Instant::LIMIT.as_ps(), MAX_TIME_NS * 1_000);
        assert_eq!(Duration::LIMIT.as_s_f64(), 100.0 * 86_400.0);
        // A time within the run's limit plus a span within the inputs'
        // stays below the end.
        assert!(Instant::RUN_LIMIT > Instant::LIMIT);
        assert!(Instant::RUN_LIMIT.as_ps().checked_add(Duration::LIMIT.as_ps()).is_some());
    }

    #[test]
    fn integer_nanoseconds_are_checked_at_the_edges() {
        let max = MAX_TIME_NS;
        for ns in [0, 1, max - 1, max] {
            assert_eq!(Duration::checked_from_ns(ns), Some(Duration::from_ps(ns * 1_000)), "{ns}");
            assert_eq!(Instant::checked_from_ns(ns), Some(Instant::from_ps(ns * 1_000)), "{ns}");
        }
        assert_eq!(Instant::checked_from_ns(max), Some(Instant::LIMIT));
        // Past the limit, past the u64 of picoseconds, the largest u64.
        for ns in [max + 1, u64::MAX / 1_000, u64::MAX / 1_000 + 1, u64::MAX] {
            assert_eq!(Duration::checked_from_ns(ns), None, "{ns}");
            assert_eq!(Instant::checked_from_ns(ns), None, "{ns}");
        }
    }

    #[test]
    fn fractional_nanoseconds_are_checked_at_the_edges() {
        let max = MAX_TIME_NS as f64;
        assert_eq!(Duration::checked_from_ns_f64(0.0), Some(Duration::ZERO));
        assert_eq!(Duration::checked_from_ns_f64(-0.0), Some(Duration::ZERO));
        assert_eq!(Duration::checked_from_ns_f64(1.2345), Some(Duration::from_ps(1_235)));
        assert_eq!(Duration::checked_from_ns_f64(max), Some(Duration::LIMIT));
        // A microsecond below the limit (the f64 product rounds to some ps).
        assert!(Duration::checked_from_ns_f64(max - 1e3).is_some_and(|d| d < Duration::LIMIT));
        assert_eq!(Duration::checked_from_ns_f64(max / 2.0), Some(Duration::from_ps(Duration::LIMIT.as_ps() / 2)));
        for ns in
            [max + 1e3, max * 2.0, u64::MAX as f64, f64::MAX, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -1.0, -1e-3]
        {
            assert_eq!(Duration::checked_from_ns_f64(ns), None, "{ns}");
        }
        assert_eq!(Duration::from_ns_f64(1e9), Duration::from_ms(1_000));
    }

    #[test]
    fn products_saturate_and_never_wrap() {
        assert_eq!(Duration::from_us(1).times(u64::MAX), Duration::MAX);
        assert_eq!(Duration::for_bytes(u64::MAX, 1), Duration::MAX);
        assert_eq!(Instant::LIMIT + Duration::MAX, Instant::MAX);
    }

    #[test]
    fn sums_and_differences_saturate_as_the_standard_library_does() {
        let edges = [0, 1, 2, u64::MAX / 2, u64::MAX / 2 + 1, u64::MAX - 1, u64::MAX];
        for a in edges {
            for b in edges {
                assert_eq!(sat_add(a, b), a.saturating_add(b), "{a} + {b}");
                assert_eq!(sat_sub(a, b), a.saturating_sub(b), "{a} - {b}");
            }
        }
        let (mut i, mut d) = (Instant::MAX, Duration::MAX);
        i += Duration::from_ps(1);
        d += Duration::from_ps(1);
        assert_eq!((i, d), (Instant::MAX, Duration::MAX));
        assert_eq!(Duration::MAX + Duration::from_ps(1), Duration::MAX);
    }

    #[test]
    #[should_panic(expected = "beyond the u64 of picoseconds")]
    fn an_unchecked_constructor_never_wraps() {
        let ns = std::hint::black_box(u64::MAX / 1_000 + 1);
        let _ = Duration::from_ns(ns);
    }

    #[test]
    fn pcap_timestamps() {
        let t = Instant::from_ps(2_500_001_000_000);
        assert_eq!(t.to_secs_micros(), (2, 500_001));
        assert_eq!(t.to_secs_nanos(), (2, 500_001_000));
    }
}
