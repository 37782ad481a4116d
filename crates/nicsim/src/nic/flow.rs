//! Link-level back-pressure at a NIC's ingress (`nic.flow_control`):
//! Myrinet's stop/go flow control, or 802.3x PAUSE honoured by the link
//! partner. A frame that finds its receive ring full is not dropped: it
//! waits, with every later frame for this NIC behind it (the link is
//! stopped: a stop holds the whole link, whatever queue a frame is bound
//! for), until ring space frees; the waiting frames then enter the NIC in
//! arrival order.
//!
//! This module owns the waiting frames (a FIFO preallocated to its bound,
//! `nic.flow_control_frames`: the NIC's packet buffer and what the stopped
//! upstream holds), the decision to hold, admit or overflow, and the
//! counts. It is sans-I/O: it takes `now` and answers. It does not own ring
//! space (`Nic::ring_full`), the frames themselves (the world's slab), nor
//! when space frees (the world asks [`FlowControl::head`] after a take, a
//! restock or a DMA completion, `crate::sim::nic_path`). It does not
//! propagate the stop upstream: the senders' transmit path is not delayed.

use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// A frame waiting for ring space: its slab id, its queue, its ring class
/// (small ring, or the big-ring buffers it fills) and when it arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    pub frame: u32,
    pub q: u8,
    pub small: bool,
    pub bufs: u32,
    pub since: Instant,
}

/// What became of a frame that had to wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// It is the first to wait: the link stops now.
    Stopped,
    /// It waits behind others (the link was already stopped).
    Queued,
    /// The bound is reached: the frame is dropped.
    Overflow,
}

/// Counts of a run (the `flow_control_*` metrics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    /// Frames that waited.
    pub held: u64,
    /// Frames dropped at a full FIFO.
    pub overflow: u64,
    /// Times the link stopped (a first frame waited).
    pub stops: u64,
    /// Longest wait, and the sum over the frames admitted.
    pub wait_max: Duration,
    pub wait_sum: Duration,
    /// Frames admitted after waiting.
    pub admitted: u64,
}

/// The waiting frames of one NIC.
pub struct FlowControl {
    fifo: VecDeque<Held>,
    bound: usize,
    /// An admission attempt is scheduled (at most one at a time).
    resume_pending: bool,
    pub stats: FlowStats,
}

impl FlowControl {
    /// A FIFO of at most `bound` frames (at least one), allocated whole.
    pub fn new(bound: u32) -> Self {
        let bound = bound.max(1) as usize;
        FlowControl { fifo: VecDeque::with_capacity(bound), bound, resume_pending: false, stats: FlowStats::default() }
    }

    /// Frames waiting.
    #[inline]
    pub fn waiting(&self) -> usize {
        self.fifo.len()
    }

    /// A frame must wait (its ring is full, or frames wait before it).
    pub fn hold(&mut self, h: Held) -> Hold {
        if self.fifo.len() >= self.bound {
            self.stats.overflow += 1;
            return Hold::Overflow;
        }
        let first = self.fifo.is_empty();
        self.fifo.push_back(h);
        self.stats.held += 1;
        if first {
            self.stats.stops += 1;
            Hold::Stopped
        } else {
            Hold::Queued
        }
    }

    /// The frame at the head of the FIFO.
    #[inline]
    pub fn head(&self) -> Option<&Held> {
        self.fifo.front()
    }

    /// The head enters the NIC at `now` (the caller checked its ring has
    /// space): its wait is counted. `None` if nothing waits.
    pub fn admit(&mut self, now: Instant) -> Option<Held> {
        let h = self.fifo.pop_front()?;
        let wait = now.since(h.since);
        self.stats.wait_max = self.stats.wait_max.max(wait);
        self.stats.wait_sum += wait;
        self.stats.admitted += 1;
        Some(h)
    }

    /// Ring space may have freed: true if an admission attempt must be
    /// scheduled (frames wait and none is scheduled yet).
    #[inline]
    pub fn want_resume(&mut self) -> bool {
        if self.fifo.is_empty() || self.resume_pending {
            return false;
        }
        self.resume_pending = true;
        true
    }

    /// The scheduled admission attempt runs.
    #[inline]
    pub fn resume_fired(&mut self) {
        self.resume_pending = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ns: u64) -> Instant {
        Instant::ZERO + Duration::from_ns(ns)
    }

    fn held(frame: u32, at_ns: u64) -> Held {
        Held { frame, q: 0, small: true, bufs: 1, since: at(at_ns) }
    }

    #[test]
    fn fifo_order_wait_and_bound() {
        let mut f = FlowControl::new(2);
        assert_eq!(f.hold(held(7, 100)), Hold::Stopped);
        assert_eq!(f.hold(held(8, 200)), Hold::Queued);
        assert_eq!(f.hold(held(9, 300)), Hold::Overflow);
        assert!(f.want_resume());
        assert!(!f.want_resume(), "one attempt at a time");
        f.resume_fired();
        assert_eq!(f.admit(at(1_100)).map(|h| h.frame), Some(7));
        assert_eq!(f.admit(at(1_300)).map(|h| h.frame), Some(8));
        assert_eq!(f.admit(at(1_400)), None);
        assert!(!f.want_resume(), "nothing waits");
        let s = f.stats;
        assert_eq!((s.held, s.overflow, s.stops, s.admitted), (2, 1, 1, 2));
        assert_eq!(s.wait_max, Duration::from_ns(1_100));
        assert_eq!(s.wait_sum, Duration::from_ns(2_100));
    }
}
