//! A receive queue's busy polling: a process polls the ring itself
//! (`napi_busy_loop`, net/core/dev.c), with the interrupt suspended
//! meanwhile (`irq_suspend_timeout`), and the suspension's timer.

use super::{BusyPhase, BusyPoll, BusyStep, Outcome, RingEntry, RxQueue};
use crate::nic::suspend;
use crate::time::{Duration, Instant};

impl RxQueue {
    /// Process `by` busy polls the queue (`suspend`: irq_suspend_timeout,
    /// zero for none) with a poll of `budget` entries, as `napi_busy_loop`
    /// calls the driver's poll with `BUSY_POLL_BUDGET` or the socket's
    /// `SO_BUSY_POLL_BUDGET` (net/core/dev.c). Nothing while NAPI is
    /// scheduled (`None`); otherwise the interrupt is suspended (with a
    /// timeout), the first entry is taken and the rings are restocked; the
    /// poll goes on with [`RxQueue::busy_poll_more`].
    #[inline]
    pub fn busy_poll(&mut self, now: Instant, suspend: Duration, budget: u16, by: u16) -> Option<BusyPoll> {
        if self.napi_sched {
            return None;
        }
        let suspend = self.irq_suspend(suspend);
        let suspend_timer = if suspend.is_zero() { None } else { self.busy_poll_suspend(now, suspend) };
        let entry = self.take();
        self.restock();
        self.busy_by = by;
        self.busy_budget = budget;
        (self.busy_left, self.busy_phase) = match entry {
            Some(e) => (budget.saturating_sub(1), BusyPhase::Loop { rx: matches!(e, RingEntry::Rx(_)) }),
            None => (0, BusyPhase::Off),
        };
        Some(BusyPoll { suspend_timer, entry })
    }

    /// The next step of process `by`'s busy poll in progress (the driver's
    /// poll loop): its next entry while its budget lasts and the ring
    /// holds one. When a poll that took a received frame is over (the
    /// socket has data: `sk_busy_loop_end`), the loop ends with
    /// `busy_poll_stop` (net/core/dev.c): one more driver poll with the
    /// same budget, "to re-enable device interrupts", whose entries come
    /// next, and its end ([`BusyStep::Stop`]): fewer entries than the
    /// budget, `napi_complete_done` re-arms the interrupt; the whole
    /// budget, `__busy_poll_stop` schedules NAPI; with the interrupt
    /// suspended (`irq_suspend_timeout`) neither, the suspension's timer
    /// deciding (`skip_schedule`). `None`: nothing more, no poll of `by`
    /// in progress, or NAPI scheduled by an interrupt meanwhile (it owns
    /// the queue, and re-arms it).
    #[inline]
    pub fn busy_poll_more(&mut self, by: u16) -> Option<BusyStep> {
        if self.busy_by != by || self.busy_phase == BusyPhase::Off {
            return None;
        }
        if self.napi_sched {
            self.busy_phase = BusyPhase::Off;
            return None;
        }
        match self.busy_phase {
            BusyPhase::Loop { rx } => {
                if self.busy_left > 0 {
                    if let Some(entry) = self.take() {
                        self.busy_left -= 1;
                        self.busy_phase = BusyPhase::Loop { rx: rx | matches!(entry, RingEntry::Rx(_)) };
                        self.restock();
                        return Some(BusyStep::Entry { entry, poll: false });
                    }
                    self.restock();
                }
                if !rx {
                    // No data for the socket: the loop goes on (its next
                    // poll is the process's next wait).
                    self.busy_phase = BusyPhase::Off;
                    return None;
                }
                self.busy_phase = BusyPhase::Stop;
                self.busy_left = self.busy_budget;
                self.busy_stop_step(true)
            }
            _ => self.busy_stop_step(false),
        }
    }

    /// A step of `busy_poll_stop`'s poll (`first`: its driver poll begins).
    fn busy_stop_step(&mut self, first: bool) -> Option<BusyStep> {
        let suspended = self.suspension.is_active();
        if self.busy_left > 0 {
            let entry = self.take();
            self.restock();
            if let Some(entry) = entry {
                self.busy_left -= 1;
                return Some(BusyStep::Entry { entry, poll: first });
            }
            self.busy_phase = BusyPhase::Off;
            return (first || !suspended).then_some(BusyStep::Stop { poll: first, rearm: !suspended, napi: false });
        }
        self.busy_phase = BusyPhase::Off;
        if suspended {
            return None;
        }
        // rc == budget: NAPI is scheduled, the interrupt stays masked
        // until its poll completes.
        self.irq_enabled = false;
        self.napi_sched = true;
        Some(BusyStep::Stop { poll: false, rearm: false, napi: true })
    }

    /// A busy poller found work: the suspension lasts `timeout` (the
    /// host's; the queue's own if it has one) from now
    /// (`Suspension::found_work`); its timer event to schedule, if none is
    /// pending.
    pub fn poller_found_work(&mut self, now: Instant, timeout: Duration) -> Option<Instant> {
        let timeout = self.irq_suspend(timeout);
        self.suspension.found_work(now, timeout)
    }

    /// A busy poll of the queue with no NAPI scheduled masks the interrupt
    /// and suspends it until `now + timeout` (`Suspension::busy_poll`): the
    /// suspension's timer event to schedule, if none is pending.
    pub fn busy_poll_suspend(&mut self, now: Instant, timeout: Duration) -> Option<Instant> {
        self.irq_enabled = false;
        self.suspension.busy_poll(now, timeout)
    }

    /// The suspension's timer fired (`Suspension::on_timer`; `polled`: a
    /// process busy polls this queue): its next event, and the outcome of
    /// the interrupt enabled again if the suspension ended.
    pub fn suspend_timer(&mut self, now: Instant, timeout: Duration, polled: bool) -> (Option<Instant>, Outcome) {
        let timeout = self.irq_suspend(timeout);
        let parked = self.pending() == 0 && polled;
        match self.suspension.on_timer(now, timeout, self.napi_sched, parked) {
            suspend::Expiry::Stale | suspend::Expiry::Parked => (None, Outcome::default()),
            suspend::Expiry::Again(at) => (Some(at), Outcome::default()),
            suspend::Expiry::Over => (None, self.rearm(now)),
        }
    }
}
