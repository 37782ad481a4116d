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

/// Who scheduled an event: the tie-breaker after time.
pub type Origin = u32;

/// One queued event. The key `(time, origin, seq)` is packed into two
/// words: time in picoseconds, then origin (24 bits) above seq (40 bits).
#[derive(Clone, Copy)]
struct Entry<E> {
    time: u64,
    tie: u64,
    event: E,
}

impl<E> Entry<E> {
    /// Pops before `other`. Keys are unique (`seq` is), so this is a total
    /// order and the pop order does not depend on the heap's layout.
    #[inline]
    fn before(&self, other: &Self) -> bool {
        (self.time, self.tie) < (other.time, other.tie)
    }
}

/// Origins fit in 24 bits, sequence numbers in 40 (10^12 events per run).
const SEQ_BITS: u32 = 40;
const ORIGIN_BITS: u32 = 24;

/// While at most this many events wait, the queue is a sorted array;
/// beyond, a binary heap (see `EventQueue`).
const SORTED_MAX: usize = 24;
/// A heap that shrinks to this many events goes back to a sorted array (the
/// gap to `SORTED_MAX` keeps a queue hovering at one size from converting
/// back and forth).
const SORTED_AGAIN: usize = 8;

/// A deterministic priority queue of timed events.
///
/// Two layouts of one array, chosen by size. Few events wait in most runs (a
/// ping-pong keeps at most nine), and then the array is kept sorted latest
/// first: a pop takes the last entry with no comparison at all, and a push
/// is one step of insertion sort from the end (new events are mostly among
/// the earliest, so it moves few entries). More than `SORTED_MAX` events
/// make it a binary min-heap on `(time, tie)`, written out here rather than
/// using `std::collections::BinaryHeap`: the sift loops move each entry once
/// (a "hole" walks down or up), which avoids the swap-then-reread pattern of
/// the standard pop that stalls store-to-load forwarding on 24-byte entries.
/// Keys are unique, so both layouts pop the same events in the same order.
/// This is the simulator's hottest code (about 20 pushes and pops per
/// simulated round trip).
pub struct EventQueue<E> {
    /// Sorted latest first (`sorted`), else a min-heap.
    heap: Vec<Entry<E>>,
    sorted: bool,
    now: Instant,
    seq: u64,
    popped: u64,
    peak: usize,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: Vec::with_capacity(1024), sorted: true, now: Instant::ZERO, seq: 0, popped: 0, peak: 0 }
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
        let time = time.as_ps();
        let n = self.heap.len();
        if !self.sorted || n >= SORTED_MAX || n == self.heap.capacity() {
            return self.push_slow(Entry { time, tie, event });
        }
        // Insertion from the end: earlier entries move up one slot. Kept
        // apart from the rare cases and written from scalars, this needs
        // few registers and never copies the new entry through the stack
        // (whose 16-byte reload of two 8-byte stores would stall).
        self.heap.push(Entry { time, tie, event });
        let mut i = n;
        while i > 0 && (self.heap[i - 1].time, self.heap[i - 1].tie) < (time, tie) {
            self.heap[i] = self.heap[i - 1];
            i -= 1;
        }
        let slot = &mut self.heap[i];
        slot.time = time;
        slot.tie = tie;
        slot.event = event;
        self.peak = self.peak.max(n + 1);
    }

    /// Pushes into the heap layout (switching to it when the sorted array
    /// is full), or grows the array.
    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, e: Entry<E>) {
        if self.sorted && self.heap.len() >= SORTED_MAX {
            // Latest first reversed is earliest first: a valid min-heap.
            self.heap.reverse();
            self.sorted = false;
        }
        let mut i = self.heap.len();
        self.heap.push(e);
        if self.sorted {
            while i > 0 && self.heap[i - 1].before(&e) {
                self.heap[i] = self.heap[i - 1];
                i -= 1;
            }
        } else {
            i = self.sift_up(i, &e);
        }
        self.heap[i] = e;
        self.peak = self.peak.max(self.heap.len());
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<Instant> {
        let next = if self.sorted { self.heap.last() } else { self.heap.first() };
        next.map(|e| Instant::from_ps(e.time))
    }

    /// Pops the next event and advances `now` to its time.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let top = if self.sorted { self.heap.pop()? } else { self.heap_pop()? };
        let time = Instant::from_ps(top.time);
        debug_assert!(time >= self.now, "time went backwards");
        self.now = time;
        self.popped += 1;
        Some((time, top.event))
    }

    /// Pops the root of the heap layout; back to the sorted layout once
    /// few events are left.
    fn heap_pop(&mut self) -> Option<Entry<E>> {
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else { return Some(last) };
        // Bottom-up (as `BinaryHeap` does): the root's hole walks down to a
        // leaf, the earlier child moving up at each level (one comparison
        // per level), then `last` sifts up from there; it usually belongs
        // near the bottom.
        let n = self.heap.len();
        let mut i = 0;
        let mut c = 1;
        while c + 1 < n {
            // Branch-free choice of the earlier child (it is a coin flip
            // the predictor cannot learn).
            c += self.heap[c + 1].before(&self.heap[c]) as usize;
            self.heap[i] = self.heap[c];
            i = c;
            c = 2 * i + 1;
        }
        if c + 1 == n {
            self.heap[i] = self.heap[c];
            i = c;
        }
        i = self.sift_up(i, &last);
        self.heap[i] = last;
        if self.heap.len() <= SORTED_AGAIN {
            self.heap.sort_unstable_by(|a, b| b.time.cmp(&a.time).then(b.tie.cmp(&a.tie)));
            self.sorted = true;
        }
        Some(top)
    }

    /// Heap layout: walks the hole at `i` up while its parent is later than
    /// `e` (each parent moves down once); returns where `e` belongs.
    #[inline(always)]
    fn sift_up(&mut self, mut i: usize, e: &Entry<E>) -> usize {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !e.before(&self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        i
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
    fn heap_pops_in_key_order_under_interleaved_pushes() {
        // Against a sorted reference: (time, origin, push index).
        let mut q = EventQueue::new();
        let mut reference = Vec::new();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut pushed = 0u32;
        let mut popped = Vec::new();
        for round in 0..2000 {
            for _ in 0..(next() % 4) {
                let t = q.now() + Duration::from_ps(next() % 50);
                let origin = (next() % 3) as u32;
                q.push(t, origin, pushed);
                reference.push((t, origin, pushed));
                pushed += 1;
            }
            if round % 3 != 0 {
                if let Some((_, e)) = q.pop() {
                    popped.push(e);
                }
            }
            // Everything pushed so far is at or after `now`; check the
            // popped prefix against the reference once at the end.
        }
        while let Some((_, e)) = q.pop() {
            popped.push(e);
        }
        assert_eq!(popped.len(), reference.len());
        // Replaying pops on a sorted copy of what was pending gives the
        // same sequence: simulate with a naive queue.
        let mut naive: Vec<(Instant, u32, u32)> = Vec::new();
        let mut expect = Vec::new();
        let mut it = reference.iter().copied().peekable();
        let mut x2: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next2 = || {
            x2 ^= x2 << 13;
            x2 ^= x2 >> 7;
            x2 ^= x2 << 17;
            x2
        };
        for round in 0..2000 {
            for _ in 0..(next2() % 4) {
                let _ = (next2(), next2());
                naive.push(it.next().unwrap());
            }
            if round % 3 != 0 && !naive.is_empty() {
                let i = (0..naive.len()).min_by_key(|&i| naive[i]).unwrap();
                expect.push(naive.remove(i).2);
            }
        }
        naive.sort();
        expect.extend(naive.iter().map(|e| e.2));
        assert_eq!(popped, expect);
    }

    #[test]
    fn pop_order_holds_across_layout_switches() {
        // Grow past SORTED_MAX and shrink below SORTED_AGAIN several times,
        // checking every pop against a naive queue keyed (time, origin, n).
        let mut q = EventQueue::new();
        let mut naive: Vec<(Instant, u32, u32)> = Vec::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut n = 0u32;
        for round in 0..6 {
            let (pushes, pops) = if round % 2 == 0 { (3 * SORTED_MAX, 2 * SORTED_MAX) } else { (4, 3 * SORTED_MAX) };
            for _ in 0..pushes {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let t = q.now() + Duration::from_ps(x % 64);
                let origin = (x >> 32) as u32 % 3;
                q.push(t, origin, n);
                naive.push((t, origin, n));
                n += 1;
            }
            for _ in 0..pops {
                let Some(i) = (0..naive.len()).min_by_key(|&i| naive[i]) else { break };
                let (t, _, e) = naive.remove(i);
                assert_eq!(q.pop(), Some((t, e)));
            }
        }
        assert!(q.is_empty() == naive.is_empty());
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
