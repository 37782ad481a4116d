//! The discrete-event engine: a deterministic event queue and a seeded RNG.
//!
//! This module owns ordering and randomness only. It knows nothing about
//! NICs, hosts or packets: the event payload type is a parameter. Event order
//! is total and written down: events are popped by `(time, origin, seq)`,
//! where `origin` is the simulated component that scheduled the event (a
//! host, a NIC, the network) and `seq` is a counter incremented at every
//! push. Because `seq` grows monotonically it orders the events of each
//! origin in push order (the per-origin sequence of STYLE rule 4), and two
//! runs with the same inputs pop events in the same order on any machine.
//! Pushing an event earlier than the current time is a bug and asserts.

use crate::time::Instant;
use rand::{Rng as _, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Who scheduled an event: the tie-breaker after time.
pub type Origin = u32;

/// One queued event. The key `(time, origin, seq)` is packed into two
/// words: time in picoseconds, then origin (24 bits) above seq (40 bits).
struct Entry<E> {
    time: u64,
    tie: u64,
    event: E,
}

/// Origins fit in 24 bits, sequence numbers in 40 (10^12 events per run).
const SEQ_BITS: u32 = 40;
const ORIGIN_BITS: u32 = 24;

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.tie) == (other.time, other.tie)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // BinaryHeap is a max-heap: reverse so the earliest key pops first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.time.cmp(&self.time).then(other.tie.cmp(&self.tie))
    }
}

/// A deterministic priority queue of timed events.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    now: Instant,
    seq: u64,
    popped: u64,
    peak: usize,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), now: Instant::ZERO, seq: 0, popped: 0, peak: 0 }
    }

    /// The time of the event most recently popped.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Number of events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Most events ever waiting at once (memory is bounded by this).
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Number of events waiting.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedules `event` at `time`. Panics if `time` is in the past: that is a
    /// modelling bug, never a user error.
    pub fn push(&mut self, time: Instant, origin: Origin, event: E) {
        assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        debug_assert!(origin < 1 << ORIGIN_BITS && self.seq < 1 << SEQ_BITS);
        self.seq += 1;
        let tie = ((origin as u64 & ((1 << ORIGIN_BITS) - 1)) << SEQ_BITS) | (self.seq & ((1 << SEQ_BITS) - 1));
        self.heap.push(Entry { time: time.as_ps(), tie, event });
        self.peak = self.peak.max(self.heap.len());
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<Instant> {
        self.heap.peek().map(|e| Instant::from_ps(e.time))
    }

    /// Pops the next event and advances `now` to its time.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let e = self.heap.pop()?;
        let time = Instant::from_ps(e.time);
        debug_assert!(time >= self.now, "time went backwards");
        self.now = time;
        self.popped += 1;
        Some((time, e.event))
    }

    /// Pops the next event only if it is at or before `until`.
    pub fn pop_until(&mut self, until: Instant) -> Option<(Instant, E)> {
        match self.peek_time() {
            Some(t) if t <= until => self.pop(),
            _ => None,
        }
    }
}

/// The simulator's seeded random number generator (PCG 64-bit MCG: small
/// state, fast, and stable across platforms and `rand_pcg` versions).
pub struct SimRng(Pcg64Mcg);

impl SimRng {
    pub fn new(seed: u64) -> Self {
        // Spread the user's seed so that seeds 0, 1, 2 give unrelated streams.
        SimRng(Pcg64Mcg::seed_from_u64(seed ^ 0x6e69_6373_696d_0001))
    }
    /// A uniform float in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.0.gen::<f64>()
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.unit() < p
    }
    /// A uniform integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.0.gen_range(0..n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    #[test]
    fn pops_by_time_then_origin_then_push_order() {
        let mut q = EventQueue::new();
        let t = Instant::ZERO + Duration::from_ns(5);
        q.push(t, 2, "b2");
        q.push(t, 1, "a1");
        q.push(t, 1, "a1-second");
        q.push(Instant::ZERO + Duration::from_ns(1), 9, "early");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["early", "a1", "a1-second", "b2"]);
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn pushing_into_the_past_asserts() {
        let mut q = EventQueue::new();
        q.push(Instant::ZERO + Duration::from_ns(10), 0, ());
        q.pop();
        q.push(Instant::ZERO + Duration::from_ns(9), 0, ());
    }

    #[test]
    fn rng_is_seeded() {
        let a: Vec<u64> = {
            let mut r = SimRng::new(7);
            (0..5).map(|_| r.below(1000)).collect()
        };
        let b: Vec<u64> = {
            let mut r = SimRng::new(7);
            (0..5).map(|_| r.below(1000)).collect()
        };
        let c: Vec<u64> = {
            let mut r = SimRng::new(8);
            (0..5).map(|_| r.below(1000)).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
