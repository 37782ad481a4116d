//! Busy polling's interrupt suspension of one receive queue (Linux's
//! per-NAPI `irq_suspend_timeout`, 6.13, Documentation/networking/napi.rst,
//! "IRQ suspension"): while an application busy polls the queue and keeps
//! finding work, its interrupt stays masked; a timeout without that ends
//! the suspension.
//!
//! This module owns the suspension's state and the decisions of its timer,
//! sans-I/O: each call takes `now` and the timeout and returns when the
//! timer must fire, if a new timer event is needed. It does not own the
//! queue's interrupt line nor its ring (`RxQueue`, which re-enables the
//! line when a suspension ends), nor the busy poller (`crate::sim`).

use crate::time::{Duration, Instant};

/// What the suspension's timer decided ([`Suspension::on_timer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// No suspension is in force: a timer left over from one that ended.
    Stale,
    /// The suspension lasts; its timer fires again at this instant.
    Again(Instant),
    /// A process busy polls the empty queue and sees each new descriptor:
    /// the suspension lasts with no timer until it polls again.
    Parked,
    /// The suspension ended: the interrupt is to be enabled again.
    Over,
}

/// The interrupt suspension of one receive queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Suspension {
    /// The interrupt is suspended by a busy-polling application.
    active: bool,
    /// When the suspension ends unless the application polls again; `Some`
    /// exactly while a timer event is pending.
    until: Option<Instant>,
}

impl Suspension {
    /// Whether the interrupt is suspended (a re-arm leaves it masked).
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// A busy poll of the queue with no NAPI scheduled: the interrupt is
    /// suspended until `now + timeout`. The timer event to schedule, if
    /// none is pending.
    pub fn busy_poll(&mut self, now: Instant, timeout: Duration) -> Option<Instant> {
        self.active = true;
        self.push_on(now + timeout)
    }

    /// A busy poller found work on the queue: a suspension in force lasts
    /// `timeout` from now. The timer event to schedule, if none is pending.
    pub fn found_work(&mut self, now: Instant, timeout: Duration) -> Option<Instant> {
        if !self.active {
            return None;
        }
        self.push_on(now + timeout)
    }

    fn push_on(&mut self, at: Instant) -> Option<Instant> {
        self.until.replace(at).is_none().then_some(at)
    }

    /// The timer fired. `napi_sched`: a NAPI poll of the queue is in
    /// progress (the suspension lasts another `timeout`); `parked`: the
    /// queue is empty and a process busy polls it. A deadline a later poll
    /// pushed on is kept; otherwise frames left in the ring for a whole
    /// timeout, or no poller, end the suspension, so that a poller that
    /// stops (its program ended, it computes, it waits for acks without
    /// polling) never leaves frames stranded.
    pub fn on_timer(&mut self, now: Instant, timeout: Duration, napi_sched: bool, parked: bool) -> Expiry {
        if !self.active {
            return Expiry::Stale;
        }
        let until = self.until.unwrap_or(now);
        let at = if until > now {
            until
        } else if napi_sched {
            now + timeout
        } else if parked {
            self.until = None;
            return Expiry::Parked;
        } else {
            self.active = false;
            self.until = None;
            return Expiry::Over;
        };
        self.until = Some(at);
        Expiry::Again(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Duration = Duration::from_us(20);

    fn us(n: u64) -> Instant {
        Instant::ZERO + Duration::from_us(n)
    }

    #[test]
    fn a_busy_poll_suspends_and_starts_one_timer() {
        let mut s = Suspension::default();
        assert!(!s.is_active());
        assert_eq!(s.busy_poll(us(0), TIMEOUT), Some(us(20)));
        assert!(s.is_active());
        // A second poll pushes the deadline on; the pending timer stays.
        assert_eq!(s.busy_poll(us(5), TIMEOUT), None);
        assert_eq!(s.on_timer(us(20), TIMEOUT, false, false), Expiry::Again(us(25)));
    }

    #[test]
    fn work_found_extends_only_a_suspension_in_force() {
        let mut s = Suspension::default();
        assert_eq!(s.found_work(us(0), TIMEOUT), None);
        s.busy_poll(us(0), TIMEOUT);
        assert_eq!(s.found_work(us(10), TIMEOUT), None);
        assert_eq!(s.on_timer(us(20), TIMEOUT, false, false), Expiry::Again(us(30)));
    }

    #[test]
    fn a_running_poll_keeps_it_a_parked_poller_holds_it_without_a_timer() {
        let mut s = Suspension::default();
        s.busy_poll(us(0), TIMEOUT);
        assert_eq!(s.on_timer(us(20), TIMEOUT, true, false), Expiry::Again(us(40)));
        assert_eq!(s.on_timer(us(40), TIMEOUT, false, true), Expiry::Parked);
        assert!(s.is_active());
        // The next poll starts a timer again.
        assert_eq!(s.busy_poll(us(50), TIMEOUT), Some(us(70)));
    }

    #[test]
    fn a_timeout_without_polls_ends_it_and_later_timers_are_stale() {
        let mut s = Suspension::default();
        s.busy_poll(us(0), TIMEOUT);
        assert_eq!(s.on_timer(us(20), TIMEOUT, false, false), Expiry::Over);
        assert!(!s.is_active());
        assert_eq!(s.on_timer(us(30), TIMEOUT, false, false), Expiry::Stale);
    }
}
