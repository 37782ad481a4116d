//! The claims of a queue's line on their way to the NIC: myri10ge's posted
//! PIO writes of `irq_claim` (the receive claim, at the end of
//! `myri10ge_poll`) and `irq_claim + 1` (the interrupt claim, at the end of
//! `myri10ge_intr`), which the firmware acts on `nic.claim_latency_ns`
//! after the write (M8 in docs/design.md). Until a claim lands its part of
//! the line stays masked.
//!
//! A claim whose landing would only re-arm the line (nothing to report,
//! no raise wanted that it would let out, no timer the policy would arm)
//! needs no event: the queue keeps it and lands it, at its instant, in the
//! first of its own methods that runs then or later (a frame, a transmit
//! completion, a timer, a busy poll, the other claim's event):
//! that method first lands the kept claims whose instant has come
//! (`settle`). Once a method has acted, a kept claim still on its way that
//! the action gave work to do at its landing (a frame to report, a raise
//! wanted) is handed to the world as an event at the claim's instant
//! (`Outcome::claim`, [`RxQueue::claim_to_schedule`]), so that its raise
//! happens then, as it would from an event scheduled at the write. The
//! claims land in the order they were written, whichever way each comes
//! (an event lands every claim due up to its own). The kernel's reads of
//! the ring (`take`, `take_tx_done`, `restock`) only remove work, which
//! leaves a kept claim's landing as quiet as it was: they need no instant.

use super::{Outcome, RxQueue};
use crate::time::Instant;

/// No claim (an instant no claim lands at: past `Instant::RUN_LIMIT`).
const NONE: Instant = Instant::MAX;

/// The two claims of a queue on their way to the NIC.
#[derive(Clone, Copy, Debug)]
pub(super) struct Claims {
    /// When the receive claim and the interrupt claim land ([`NONE`]: not
    /// on its way).
    rx: Instant,
    irq: Instant,
    /// Each has an `Ev::ClaimLands` scheduled (the queue does not keep it).
    rx_event: bool,
    irq_event: bool,
    /// The receive claim was written before the interrupt claim (both on
    /// their way).
    rx_first: bool,
    /// The earlier instant of the kept claims ([`NONE`]: none kept): the
    /// one compare a method of the queue makes when none is due.
    kept: Instant,
}

impl Default for Claims {
    fn default() -> Self {
        Claims { rx: NONE, irq: NONE, rx_event: false, irq_event: false, rx_first: false, kept: NONE }
    }
}

impl Claims {
    /// Which claim lands first (`true`: the receive claim): the earlier,
    /// or at equal instants the one written first.
    #[inline]
    fn rx_next(&self) -> bool {
        self.rx < self.irq || (self.rx == self.irq && self.rx_first)
    }

    /// `kept` after a claim lands or gets its event.
    #[inline]
    fn rekeep(&mut self) {
        let rx = if self.rx_event { NONE } else { self.rx };
        let irq = if self.irq_event { NONE } else { self.irq };
        self.kept = rx.min(irq);
    }
}

impl RxQueue {
    /// The host wrote a claim that reaches the NIC at `at` (`rx`: the
    /// receive claim, else the interrupt claim). True when its landing has
    /// work to do and the world must schedule `Ev::ClaimLands` at `at`;
    /// false when the queue keeps it (see the module's doc). A kept claim
    /// due by the write is left for the queue's next method: it lands
    /// before this one (its instant is earlier), and its landing leaves
    /// this one's verdict as it is (it was quiet: nothing to report).
    #[inline]
    pub fn claim_written(&mut self, at: Instant, rx: bool) -> bool {
        let event = !self.claim_quiet(rx);
        let c = &mut self.claims;
        if rx {
            debug_assert!(c.rx == NONE, "two receive claims on their way");
            (c.rx, c.rx_event, c.rx_first) = (at, event, c.irq == NONE);
        } else {
            debug_assert!(c.irq == NONE, "two interrupt claims on their way");
            (c.irq, c.irq_event, c.rx_first) = (at, event, c.rx != NONE);
        }
        if !event && at < c.kept {
            c.kept = at;
        }
        event
    }

    /// A scheduled claim's event (`Ev::ClaimLands`) at `now`: the next
    /// claim due, in the order written, lands and its outcome is returned;
    /// the receive claim re-arms the line as the end of a poll does
    /// ([`RxQueue::napi_done`]), the interrupt claim as the end of a hard
    /// handler does ([`RxQueue::rearm_claim`]). `None` once none is due (a
    /// claim an earlier event landed with its own).
    pub fn claim_lands(&mut self, now: Instant) -> Option<Outcome> {
        let rx = self.claims.rx_next();
        let at = if rx { self.claims.rx } else { self.claims.irq };
        if at > now {
            return None;
        }
        let mut out = self.land(rx, at);
        self.claims_recheck(&mut out);
        Some(out)
    }

    /// Claim `rx` lands at `at`.
    #[inline]
    fn land(&mut self, rx: bool, at: Instant) -> Outcome {
        let c = &mut self.claims;
        if rx {
            (c.rx, c.rx_event) = (NONE, false);
        } else {
            (c.irq, c.irq_event) = (NONE, false);
        }
        c.rekeep();
        if rx {
            self.napi_done_now(at)
        } else {
            self.rearm_claim_now(at)
        }
    }

    /// A claim the queue kept that the last method gave work to do at its
    /// landing (`Outcome::claim`): its instant, now the world's to
    /// schedule as `Ev::ClaimLands`. `None` once there is none.
    pub fn claim_to_schedule(&mut self) -> Option<Instant> {
        let c = self.claims;
        let rx = if c.irq != NONE && !c.irq_event && !self.claim_quiet(false) {
            false
        } else if c.rx != NONE && !c.rx_event && !self.claim_quiet(true) {
            true
        } else {
            return None;
        };
        let c = &mut self.claims;
        *(if rx { &mut c.rx_event } else { &mut c.irq_event }) = true;
        c.rekeep();
        Some(if rx { c.rx } else { c.irq })
    }

    /// Whether a claim is on its way to the NIC.
    #[inline]
    pub fn claim_on_its_way(&self) -> bool {
        self.claims.rx != NONE || self.claims.irq != NONE
    }

    /// Whether the claim's landing now would only re-arm the line: no
    /// raise, no timer. The interrupt claim ([`RxQueue::rearm_claim`])
    /// raises only for a raise wanted with something to report. The
    /// receive claim ([`RxQueue::napi_done`]) leaves the line masked under
    /// a busy poller's suspension; otherwise it re-arms with nothing
    /// pending, where no policy raises or arms its timer
    /// (`Coalescer::on_rearm`), owed frames and a wanted raise need a frame
    /// in the ring, and the watchdog holds nothing.
    fn claim_quiet(&self, rx: bool) -> bool {
        if rx {
            self.suspension.is_active() || self.pending() == 0
        } else {
            !(self.fire_wanted && (self.tx_done > 0 || (self.irq_enabled && !self.ring.is_empty())))
        }
    }

    /// Lands the kept claims whose instant has come (at their instants,
    /// in the order written), before a method acts at `now`. A scheduled
    /// claim first in line stops it: its event lands it and those behind.
    #[inline(always)]
    pub(super) fn settle(&mut self, now: Instant) {
        if now >= self.claims.kept {
            self.settle_kept(now);
        }
    }

    #[inline(never)]
    fn settle_kept(&mut self, now: Instant) {
        loop {
            let c = &self.claims;
            let rx = c.rx_next();
            let (at, event) = if rx { (c.rx, c.rx_event) } else { (c.irq, c.irq_event) };
            if at > now || event {
                return;
            }
            let out = self.land(rx, at);
            debug_assert!(out == Outcome::default(), "a kept claim's landing did something: {out:?}");
        }
    }

    /// After a method acted: a kept claim that now has work to do at its
    /// landing is flagged for the world (`out.claim`,
    /// [`RxQueue::claim_to_schedule`]).
    #[inline(always)]
    pub(super) fn claims_recheck(&mut self, out: &mut Outcome) {
        if self.claims.kept != NONE {
            out.claim |= self.claims_busy();
        }
    }

    #[inline(never)]
    fn claims_busy(&self) -> bool {
        let c = &self.claims;
        (c.rx != NONE && !c.rx_event && !self.claim_quiet(true))
            || (c.irq != NONE && !c.irq_event && !self.claim_quiet(false))
    }
}
