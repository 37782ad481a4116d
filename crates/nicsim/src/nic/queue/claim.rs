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
//! completion, a timer, a busy poll, the other claim's write or landing):
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

/// The two claims of a queue on their way to the NIC.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Claims {
    /// When the receive claim and the interrupt claim land, if written
    /// and not landed yet.
    rx: Option<Instant>,
    irq: Option<Instant>,
    /// Each has an `Ev::ClaimLands` scheduled (the queue does not keep it).
    rx_event: bool,
    irq_event: bool,
    /// The receive claim was written before the interrupt claim (both on
    /// their way).
    rx_first: bool,
}

impl Claims {
    /// The claim that lands first (its instant, `true` for the receive
    /// claim): the earlier, or at equal instants the one written first.
    fn first(&self) -> Option<(Instant, bool)> {
        match (self.rx, self.irq) {
            (Some(r), Some(i)) => Some(if r < i || (r == i && self.rx_first) { (r, true) } else { (i, false) }),
            (Some(r), None) => Some((r, true)),
            (None, Some(i)) => Some((i, false)),
            (None, None) => None,
        }
    }

    fn event(&self, rx: bool) -> bool {
        if rx {
            self.rx_event
        } else {
            self.irq_event
        }
    }

    /// The claim lands: it is no longer on its way.
    fn landed(&mut self, rx: bool) {
        if rx {
            (self.rx, self.rx_event) = (None, false);
        } else {
            (self.irq, self.irq_event) = (None, false);
        }
    }
}

impl RxQueue {
    /// The host wrote a claim at `now` that reaches the NIC at `at`
    /// (`rx`: the receive claim, else the interrupt claim). True when its
    /// landing has work to do and the world must schedule `Ev::ClaimLands`
    /// at `at`; false when the queue keeps it (see the module's doc).
    pub fn claim_written(&mut self, now: Instant, at: Instant, rx: bool) -> bool {
        self.settle(now);
        let event = !self.claim_quiet(rx);
        let c = &mut self.claims;
        if rx {
            debug_assert!(c.rx.is_none(), "two receive claims on their way");
            (c.rx, c.rx_event, c.rx_first) = (Some(at), event, c.irq.is_none());
        } else {
            debug_assert!(c.irq.is_none(), "two interrupt claims on their way");
            (c.irq, c.irq_event, c.rx_first) = (Some(at), event, c.rx.is_some());
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
        let (at, rx) = self.claims.first().filter(|&(at, _)| at <= now)?;
        self.claims.landed(rx);
        let mut out = if rx { self.napi_done_now(at) } else { self.rearm_claim_now(at) };
        self.claims_recheck(&mut out);
        Some(out)
    }

    /// A claim the queue kept that the last method gave work to do at its
    /// landing (`Outcome::claim`): its instant, now the world's to
    /// schedule as `Ev::ClaimLands`. `None` once there is none.
    pub fn claim_to_schedule(&mut self) -> Option<Instant> {
        for rx in [false, true] {
            let at = if rx { self.claims.rx } else { self.claims.irq };
            if let Some(at) = at {
                if !self.claims.event(rx) && !self.claim_quiet(rx) {
                    *(if rx { &mut self.claims.rx_event } else { &mut self.claims.irq_event }) = true;
                    return Some(at);
                }
            }
        }
        None
    }

    /// Whether a claim is on its way to the NIC.
    #[inline]
    pub fn claim_on_its_way(&self) -> bool {
        self.claims.rx.is_some() || self.claims.irq.is_some()
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
        if self.claim_on_its_way() {
            self.settle_kept(now);
        }
    }

    #[inline(never)]
    fn settle_kept(&mut self, now: Instant) {
        while let Some((at, rx)) = self.claims.first() {
            if at > now || self.claims.event(rx) {
                return;
            }
            self.claims.landed(rx);
            let out = if rx { self.napi_done_now(at) } else { self.rearm_claim_now(at) };
            debug_assert!(out == Outcome::default(), "a kept claim's landing did something: {out:?}");
        }
    }

    /// After a method acted: a kept claim that now has work to do at its
    /// landing is flagged for the world (`out.claim`,
    /// [`RxQueue::claim_to_schedule`]).
    #[inline(always)]
    pub(super) fn claims_recheck(&mut self, out: &mut Outcome) {
        if self.claim_on_its_way() {
            out.claim |= self.claims_busy();
        }
    }

    #[inline(never)]
    fn claims_busy(&self) -> bool {
        let c = &self.claims;
        (c.rx.is_some() && !c.rx_event && !self.claim_quiet(true))
            || (c.irq.is_some() && !c.irq_event && !self.claim_quiet(false))
    }
}
