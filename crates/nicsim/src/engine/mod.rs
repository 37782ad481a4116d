//! The discrete-event engine: a deterministic event queue, a seeded RNG,
//! and the slab of the values events name by index ([`slab`]).
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

pub mod slab;

use crate::time::Instant;
use rand::{Rng as _, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Who scheduled an event: the tie-breaker after time.
pub type Origin = u32;

/// One queued event. The key `(time, origin, seq)` is packed into two
/// words: time in picoseconds, then origin (24 bits) above seq (40 bits).
/// An entry pops before another whose `(time, tie)` is greater. Keys are
/// unique (`seq` is), so this is a total order and the pop order does not
/// depend on the queue's layout.
#[derive(Clone, Copy)]
struct Entry<E> {
    time: u64,
    tie: u64,
    event: E,
}

/// Origins fit in 24 bits, sequence numbers in 40 (10^12 events per run).
const SEQ_BITS: u32 = 40;
const ORIGIN_BITS: u32 = 24;

/// While at most this many events wait, the queue is a sorted array;
/// beyond, a radix heap (see `EventQueue`).
const SORTED_MAX: usize = 24;
/// A radix heap that shrinks to this many events goes back to a sorted
/// array (the gap to `SORTED_MAX` keeps a queue hovering at one size from
/// converting back and forth).
const SORTED_AGAIN: usize = 8;
const _: () = assert!(SORTED_AGAIN < SORTED_MAX);

/// A deterministic priority queue of timed events.
///
/// Two layouts, chosen by size. Few events wait in most runs (a ping-pong
/// keeps at most nine), and then they are one array kept sorted latest
/// first: a pop takes the last entry with no comparison at all, and a push
/// is one step of insertion sort from the end (new events are mostly among
/// the earliest, so it moves few entries). More than `SORTED_MAX` events
/// go to a `Radix` heap: a push is an append, and a pop moves entries
/// between buckets by sequential reads and appends, about 0.5 more moves
/// per doubling of the events waiting (4.9 per pop at 256, 6.4 at 2,048,
/// 7.9 at 16,384 in a hold model with delays up to 1 µs), where a binary
/// heap's pop walks log2 of them as a chain of dependent loads (that made
/// the queue a third of the time per event at 1,024 ranks). Keys are unique, so both layouts pop the same events in
/// the same order. This is the simulator's hottest code (about 20 pushes
/// and pops per simulated round trip).
pub struct EventQueue<E> {
    /// The sorted layout, latest first: its first `sorted_len` entries (the
    /// rest are stale); none in the radix layout. An array in the queue
    /// itself: a push or a pop reads no vector's pointer and capacity, and
    /// the insertion's indices below `SORTED_MAX` need no bounds check.
    sorted: [Entry<E>; SORTED_MAX],
    sorted_len: usize,
    radix: Radix<E>,
    /// Which layout holds the events.
    small: bool,
    now: Instant,
    seq: u64,
    popped: u64,
    peak: usize,
}

impl<E: Copy + Default> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// `E::default()` fills the sorted array's unused slots (never popped).
impl<E: Copy + Default> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            sorted: [Entry { time: 0, tie: 0, event: E::default() }; SORTED_MAX],
            sorted_len: 0,
            radix: Radix::new(),
            small: true,
            now: Instant::ZERO,
            seq: 0,
            popped: 0,
            peak: 0,
        }
    }

    /// The time of the event most recently popped.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Number of events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Number of events pushed so far.
    pub fn pushed(&self) -> u64 {
        self.seq
    }

    /// Most events ever waiting at once (memory is bounded by this).
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Number of events waiting.
    pub fn len(&self) -> usize {
        self.sorted_len + self.radix.len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedules `event` at `time`. Panics if `time` is in the past: that is a
    /// modelling bug, never a user error.
    pub fn push(&mut self, time: Instant, origin: Origin, event: E) {
        self.push_inline(time, origin, event);
    }

    /// [`EventQueue::push`] inlined where it is called: for the one caller
    /// that pushes most events (a core's segment end, `sim::kernel`), whose
    /// call and spills cost more than the sorted insertion itself.
    #[inline(always)]
    pub fn push_inline(&mut self, time: Instant, origin: Origin, event: E) {
        assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        debug_assert!(origin < 1 << ORIGIN_BITS && self.seq < 1 << SEQ_BITS);
        self.seq += 1;
        let tie = ((origin as u64 & ((1 << ORIGIN_BITS) - 1)) << SEQ_BITS) | (self.seq & ((1 << SEQ_BITS) - 1));
        let time = time.as_ps();
        if !self.small {
            return self.push_radix(time, tie, event);
        }
        let n = self.sorted_len;
        if n >= SORTED_MAX {
            return self.push_slow(Entry { time, tie, event });
        }
        // Insertion from the end: earlier entries move up one slot. Kept
        // apart from the rare cases and written from scalars, this needs
        // few registers and never copies the new entry through the stack
        // (whose 16-byte reload of two 8-byte stores would stall).
        // The loop runs on an array of known length (`n` is below it: no
        // bounds check per step) and compares keys as one 128-bit number
        // (no branch between the time and the tie).
        self.sorted_len = n + 1;
        let key = (time as u128) << 64 | tie as u128;
        let s = &mut self.sorted;
        let mut i = n;
        while i > 0 && ((s[i - 1].time as u128) << 64 | s[i - 1].tie as u128) < key {
            s[i] = s[i - 1];
            i -= 1;
        }
        let slot = &mut s[i];
        slot.time = time;
        slot.tie = tie;
        slot.event = event;
        // The most waiting so far: a branch taken only while the queue
        // grows past its peak (a store every push where `max` is kept).
        if n >= self.peak {
            self.peak = n + 1;
        }
    }

    /// A push in the radix layout, out of line (the sorted layout's path
    /// stays small), with the key and the event passed in registers.
    #[inline(never)]
    fn push_radix(&mut self, time: u64, tie: u64, event: E) {
        self.radix.push(time, tie, event);
        self.peak = self.peak.max(self.radix.len);
    }

    /// Moves to the radix layout when the sorted array is full (its
    /// `SORTED_MAX` entries) and pushes `e` there. (The sorted array's
    /// capacity, 1,024 from the start, is never reached: its `push` grows
    /// it if it were.)
    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, e: Entry<E>) {
        debug_assert!(self.small && self.sorted_len >= SORTED_MAX);
        self.radix.last = self.now.as_ps();
        for old in &self.sorted[..self.sorted_len] {
            self.radix.push(old.time, old.tie, old.event);
        }
        self.sorted_len = 0;
        self.small = false;
        self.radix.push(e.time, e.tie, e.event);
        self.peak = self.peak.max(self.len());
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<Instant> {
        let t = if self.small {
            self.sorted_len.checked_sub(1).map(|i| self.sorted[i].time)
        } else {
            self.radix.min_time()
        };
        t.map(Instant::from_ps)
    }

    /// Pops the next event and advances `now` to its time.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let top = if self.small { self.sorted_pop()? } else { self.radix_pop()? };
        let time = Instant::from_ps(top.time);
        debug_assert!(time >= self.now, "time went backwards");
        self.now = time;
        self.popped += 1;
        Some((time, top.event))
    }

    /// Pops the sorted layout's last entry: one compare for the empty
    /// queue and the array's bound (an empty queue's index wraps past it).
    #[inline(always)]
    fn sorted_pop(&mut self) -> Option<Entry<E>> {
        let i = self.sorted_len.wrapping_sub(1);
        let top = *self.sorted.get(i)?;
        self.sorted_len = i;
        Some(top)
    }

    /// Pops from the radix layout; back to the sorted layout once few
    /// events are left.
    fn radix_pop(&mut self) -> Option<Entry<E>> {
        let top = self.radix.pop()?;
        if self.radix.len <= SORTED_AGAIN {
            let n = self.radix.drain_into(&mut self.sorted);
            self.sorted_len = n;
            self.sorted[..n].sort_unstable_by(|a, b| b.time.cmp(&a.time).then(b.tie.cmp(&a.tie)));
            self.small = true;
        }
        Some(top)
    }
}

/// Buckets of a [`Radix`] heap: bucket `b` holds the entries whose time
/// differs from `last` first in bit `b - 1` (from the top), bucket 0 those
/// at `last` itself.
const RADIX_BUCKETS: usize = 65;

/// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for
/// the shortest path problem", J. ACM 37(2), 1990) on event times, for a
/// queue whose keys never go below the last popped one: a simulator never
/// schedules into the past.
///
/// An entry waits in the bucket of the highest bit in which its time
/// differs from `last`, the time of the event popped last, so a push is one
/// bit scan and an append. Bucket 0 holds the entries at `last` itself,
/// sorted by `tie`, latest first; a pop takes its end. When it is empty,
/// the lowest non-empty bucket is emptied into lower ones around its
/// earliest time, which becomes `last`: an entry only ever moves to a lower
/// bucket, and each move is a sequential read and append rather than a
/// heap's dependent loads.
struct Radix<E> {
    /// Boxed: the sorted layout's fields stay on one cache line.
    buckets: Box<[Vec<Entry<E>>; RADIX_BUCKETS]>,
    /// Bit `b - 1` set: bucket `b` (from 1) holds entries.
    nonempty: u64,
    /// The time of the last popped entry; no entry is earlier.
    last: u64,
    len: usize,
}

impl<E: Copy> Radix<E> {
    fn new() -> Self {
        Radix { buckets: Box::new(std::array::from_fn(|_| Vec::new())), nonempty: 0, last: 0, len: 0 }
    }

    /// The bucket of an entry at `time`: the bit length of `time ^ last`.
    #[inline(always)]
    fn bucket(&self, time: u64) -> usize {
        (u64::BITS - (time ^ self.last).leading_zeros()) as usize
    }

    /// Inlined where the entry is made (`EventQueue::push_radix`), its
    /// key and event passed as scalars, here and to the cold path: an
    /// `Entry` passed by reference anywhere here made LLVM build it on the
    /// stack as 8-byte words and copy it into the bucket as 16 bytes, a
    /// store-forwarding stall on every push (a tenth of the time of a
    /// 1,024-rank exchange went to it).
    #[inline(always)]
    fn push(&mut self, time: u64, tie: u64, event: E) {
        debug_assert!(time >= self.last, "radix heap: key below the last popped one");
        let b = self.bucket(time);
        let v = &mut self.buckets[b];
        if b == 0 || v.len() == v.capacity() {
            return self.push_slow(b, time, tie, event);
        }
        v.push(Entry { time, tie, event });
        self.len += 1;
        self.nonempty |= 1 << (b - 1);
    }

    /// An entry at `last` itself (into bucket 0, kept sorted by `tie`), or
    /// into a bucket that must grow first.
    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, b: usize, time: u64, tie: u64, event: E) {
        let e = Entry { time, tie, event };
        self.len += 1;
        let v = &mut self.buckets[b];
        if b > 0 {
            v.push(e);
            self.nonempty |= 1 << (b - 1);
            return;
        }
        let mut i = v.len();
        v.push(e);
        while i > 0 && v[i - 1].tie < e.tie {
            v[i] = v[i - 1];
            i -= 1;
        }
        v[i] = e;
    }

    #[inline]
    fn pop(&mut self) -> Option<Entry<E>> {
        if self.buckets[0].is_empty() {
            if self.nonempty == 0 {
                return None;
            }
            self.refill();
        }
        self.len -= 1;
        self.buckets[0].pop()
    }

    /// Empties the lowest non-empty bucket around its earliest time.
    #[inline(never)]
    fn refill(&mut self) {
        let b = self.nonempty.trailing_zeros() as usize + 1;
        let mut from = std::mem::take(&mut self.buckets[b]);
        self.nonempty &= !(1 << (b - 1));
        self.last = from.iter().map(|e| e.time).min().expect("a non-empty bucket");
        for e in from.drain(..) {
            let to = self.bucket(e.time);
            self.buckets[to].push(e);
            // `to` < `b` <= 64: the shift stays inside the word.
            self.nonempty |= (1 << to) >> 1;
        }
        // Kept for its capacity: the queue allocates only while it grows.
        self.buckets[b] = from;
        let z = &mut self.buckets[0];
        if z.len() > 1 {
            z.sort_unstable_by_key(|e| std::cmp::Reverse(e.tie));
        }
    }

    /// The earliest time waiting, if any.
    fn min_time(&self) -> Option<u64> {
        if !self.buckets[0].is_empty() {
            return Some(self.last);
        }
        let b = self.nonempty.trailing_zeros() as usize + 1;
        self.buckets.get(b)?.iter().map(|e| e.time).min()
    }

    /// Moves every entry into the front of `out`, in no particular order
    /// (at most `out.len()` wait: `SORTED_AGAIN` is below `SORTED_MAX`);
    /// returns how many.
    fn drain_into(&mut self, out: &mut [Entry<E>]) -> usize {
        let mut n = 0;
        for bucket in self.buckets.iter_mut() {
            for e in bucket.drain(..) {
                out[n] = e;
                n += 1;
            }
        }
        (self.nonempty, self.len) = (0, 0);
        n
    }
}

/// The simulator's seeded random number generator (PCG 64-bit MCG: small
/// state, fast, and stable across platforms and `rand_pcg` versions).
#[derive(Clone, Debug)]
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
    fn radix_layout_pops_in_key_order_at_every_scale_of_delay() {
        // Thousands waiting (the radix layout), delays from 0 (ties at
        // `now`, with origins below the last popped one) to seconds, and
        // runs that drain to the sorted layout and grow back; every pop is
        // checked against an ordered map keyed (time, origin, push index).
        let mut q = EventQueue::new();
        let mut reference = std::collections::BTreeMap::new();
        let mut x: u64 = 0xD1B5_4A32_D192_ED03;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut n = 0u32;
        let mut largest = 0;
        for round in 0..40 {
            let (pushes, pops) = if round % 4 == 3 { (10, 6000) } else { (3000, 2000) };
            for _ in 0..pushes {
                let r = next();
                let delay = match r % 4 {
                    0 => 0,
                    1 => r >> 2 & 0xff,
                    2 => r >> 2 & 0xf_ffff,
                    _ => r >> 2 & 0xff_ffff_ffff,
                };
                let t = q.now() + Duration::from_ps(delay);
                let origin = (r >> 50) as u32 % 5;
                q.push(t, origin, n);
                reference.insert((t, origin, n), n);
                n += 1;
            }
            largest = largest.max(q.len());
            for _ in 0..pops {
                let Some((&(t, _, _), &e)) = reference.iter().next() else { break };
                reference.pop_first();
                assert_eq!(q.pop(), Some((t, e)));
                assert_eq!(q.len(), reference.len());
            }
        }
        assert!(largest > 10 * SORTED_MAX, "the radix layout was exercised");
        while let Some((&(t, _, _), &e)) = reference.iter().next() {
            reference.pop_first();
            assert_eq!(q.pop(), Some((t, e)));
        }
        assert!(q.pop().is_none());
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
