//! The protocol-timer queue of an endpoint ([`Timers`]): (deadline, peer)
//! entries taken earliest first. It owns the order of the entries only;
//! which of them are live is [`super::Endpoint`]'s bookkeeping.

use crate::time::Instant;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A deadline and the peer it belongs to.
pub(crate) type Entry = (Instant, u16);

/// A min-queue of [`Entry`]s in two parts: the entries pushed in order (each
/// at or after the last one of the run, [`Timers::push_in_order`]) in a
/// first-in first-out run, the others in a binary heap. Taking the earliest
/// compares the two fronts.
///
/// Most deadlines an endpoint pushes are a resend round one resend delay
/// after a send (`now + resend`, Open-MX's 0.5 s): each is at or after the
/// one pushed before it, so they go to the run, which is read and written
/// at its ends. The heap keeps the rest (delayed acks, deadlines pushed
/// again as they come up, backed-off resend rounds up to 32 s out), few and
/// short-lived. With every entry in one heap, an endpoint talking to a
/// thousand peers kept a thousand of them there, and each pop walked ten
/// levels of a heap out of the simulator's caches. Only the caller knows
/// which pushes come in order: a far deadline in the run would send every
/// later one to the heap until it came up.
#[derive(Clone, Debug, Default)]
pub(crate) struct Timers {
    /// Entries in the order pushed, which is their order.
    run: VecDeque<Entry>,
    /// The other entries.
    heap: BinaryHeap<Reverse<Entry>>,
}

impl Timers {
    /// An entry in no particular order.
    #[inline(always)]
    pub fn push(&mut self, e: Entry) {
        self.heap.push(Reverse(e));
    }

    /// An entry that is usually at or after the last one pushed this way
    /// (one that is not goes to the heap).
    #[inline(always)]
    pub fn push_in_order(&mut self, e: Entry) {
        match self.run.back() {
            Some(&last) if e < last => self.heap.push(Reverse(e)),
            _ => self.run.push_back(e),
        }
    }

    /// The earliest entry.
    #[inline(always)]
    pub fn peek(&self) -> Option<Entry> {
        match (self.run.front(), self.heap.peek()) {
            (Some(&a), Some(&Reverse(b))) => Some(a.min(b)),
            (Some(&a), None) => Some(a),
            (None, Some(&Reverse(b))) => Some(b),
            (None, None) => None,
        }
    }

    /// Takes the earliest entry.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Entry> {
        let from_run = match (self.run.front(), self.heap.peek()) {
            (Some(a), Some(Reverse(b))) => a <= b,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if from_run {
            self.run.pop_front()
        } else {
            self.heap.pop().map(|Reverse(e)| e)
        }
    }

    pub fn len(&self) -> usize {
        self.run.len() + self.heap.len()
    }

    /// Keeps the entries `keep` accepts, each once, each in the part it was
    /// in (an entry in both stays in the run). Reuses the parts' buffers.
    pub fn retain_unique(&mut self, mut keep: impl FnMut(&Entry) -> bool) {
        // The run stays in order, so its duplicates are neighbours.
        self.run.retain(|e| keep(e));
        let run = self.run.make_contiguous();
        let mut w = 0;
        for r in 0..run.len() {
            if w == 0 || run[r] != run[w - 1] {
                run[w] = run[r];
                w += 1;
            }
        }
        self.run.truncate(w);
        let mut heap = std::mem::take(&mut self.heap).into_vec();
        heap.retain(|Reverse(e)| keep(e) && self.run.binary_search(e).is_err());
        heap.sort_unstable();
        heap.dedup();
        self.heap = BinaryHeap::from(heap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against one binary heap, through pushes in and out of order, pops and
    /// a retain: the same entries come out in the same order.
    #[test]
    fn takes_entries_in_the_order_of_one_heap() {
        let mut t = Timers::default();
        let mut h: BinaryHeap<Reverse<Entry>> = BinaryHeap::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut now = 0u64;
        for k in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 8 {
                // Mostly in order (a resend round after each send), some
                // earlier (a delayed ack), some at the same time.
                0..=3 => {
                    now += x % 5;
                    let e = (Instant::from_ps(now + 500), (x >> 8) as u16 % 64);
                    t.push_in_order(e);
                    h.push(Reverse(e));
                }
                4 => {
                    let e = (Instant::from_ps(now + x % 50), (x >> 8) as u16 % 64);
                    if x & 1 == 0 {
                        t.push(e);
                    } else {
                        t.push_in_order(e);
                    }
                    h.push(Reverse(e));
                }
                _ => {
                    assert_eq!(t.peek(), h.peek().map(|r| r.0));
                    assert_eq!(t.pop(), h.pop().map(|r| r.0));
                }
            }
            if k % 5_000 == 4_999 {
                let keep = |e: &Entry| e.1 % 3 != 0;
                t.retain_unique(keep);
                let mut v: Vec<Entry> = h.drain().map(|r| r.0).filter(keep).collect();
                v.sort_unstable();
                v.dedup();
                h = v.into_iter().map(Reverse).collect();
            }
            assert_eq!(t.len(), h.len());
        }
        while let Some(e) = h.pop() {
            assert_eq!(t.pop(), Some(e.0));
        }
        assert_eq!(t.pop(), None);
    }
}
