//! The `stream` coalescing policy: [OMX-COAL] Algorithm 2, "stream-aware"
//! marking with a *DeferredInterrupt* flag.
//!
//! This file owns the deferral rule: a marked frame whose DMA completes while
//! other frames the NIC has received are still in its firmware or DMA does
//! not interrupt at once; the interrupt is deferred to the next DMA
//! completion that finds no other DMA pending. The count of pending DMAs is
//! the NIC's ([`DmaCompletion::other_pending`]): frames received whole, so
//! the deferral reaches the next frame only if it arrives within the marked
//! frame's own firmware + DMA time, i.e. back to back ([OMX-COAL] IV-C4:
//! "it fails to do so as soon a small delay between packets appears"); the
//! fallback timer is a [`Timeout`].
//! Invariant: the deferred flag never survives an interrupt, whatever raised
//! it (marker, deferral, timeout, or the NIC at re-arm).

use super::{Coalescer, Decision, DmaCompletion, Timeout, TimeoutSpec};
use crate::time::{Duration, Instant};

/// [OMX-COAL] Algorithm 2.
#[derive(Clone, Debug, PartialEq)]
pub struct Stream {
    fallback: Timeout,
    /// DeferredInterrupt: a marked frame completed while other DMAs were
    /// pending and has not been reported yet.
    deferred: bool,
}

impl Stream {
    pub fn new(fallback: TimeoutSpec) -> Self {
        Stream { fallback: Timeout::new(fallback), deferred: false }
    }

    /// Whether an interrupt is currently deferred.
    pub fn deferred(&self) -> bool {
        self.deferred
    }
}

impl Coalescer for Stream {
    fn name(&self) -> &'static str {
        "stream"
    }

    fn on_dma_complete(&mut self, now: Instant, dma: DmaCompletion) -> Decision {
        let timeout = self.fallback.on_dma_complete(now, dma);
        if dma.other_pending == 0 {
            if dma.marked || self.deferred {
                self.deferred = false;
                return self.fallback.raise_now();
            }
        } else if dma.marked {
            self.deferred = true;
        }
        if timeout.raise {
            // "The timeout still applies and clears the deferred flag."
            self.deferred = false;
        }
        timeout
    }

    fn on_timer(&mut self, now: Instant) -> Decision {
        let d = self.fallback.on_timer(now);
        if d.raise {
            self.deferred = false;
        }
        d
    }

    fn on_irq_raised(&mut self, now: Instant) -> Decision {
        self.deferred = false;
        self.fallback.on_irq_raised(now)
    }

    fn on_rearm(&mut self, now: Instant, ring_pending: u32) -> Decision {
        if ring_pending == 0 {
            // The host has seen the marked frame already.
            self.deferred = false;
        }
        self.fallback.on_rearm(now, ring_pending)
    }

    fn current_delay(&self) -> Option<Duration> {
        self.fallback.current_delay()
    }
}
