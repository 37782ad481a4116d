//! The `openmx` coalescing policy: [OMX-COAL] Algorithm 1, "latency-sensitive
//! packets raise the interrupt at once".
//!
//! This file owns only the marker rule. The marker itself is set by the sender
//! (`crate::proto` decides which message classes are marked) and copied into
//! the receive descriptor by the NIC when the frame arrives (Algorithm 1,
//! line 2; it reaches this policy as [`DmaCompletion::marked`]). Unmarked
//! frames fall back to the timeout policy ([`Timeout`], normally absolute
//! with the Myri-10G 75 µs default).

use super::{Coalescer, Decision, DmaCompletion, Timeout, TimeoutSpec};
use crate::time::{Duration, Instant};

/// [OMX-COAL] Algorithm 1: on DMA completion, a marked descriptor raises the
/// interrupt now; otherwise the fallback timeout decides.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenMx {
    fallback: Timeout,
}

impl OpenMx {
    pub fn new(fallback: TimeoutSpec) -> Self {
        OpenMx { fallback: Timeout::new(fallback) }
    }
}

impl Coalescer for OpenMx {
    fn name(&self) -> &'static str {
        "openmx"
    }

    fn on_dma_complete(&mut self, now: Instant, dma: DmaCompletion) -> Decision {
        // The frame counts as unreported either way (frame threshold, and the
        // state on_irq_raised resets).
        let timeout = self.fallback.on_dma_complete(now, dma);
        if dma.marked {
            self.fallback.raise_now()
        } else {
            timeout
        }
    }

    fn on_timer(&mut self, now: Instant) -> Decision {
        self.fallback.on_timer(now)
    }

    fn on_irq_raised(&mut self, now: Instant) -> Decision {
        self.fallback.on_irq_raised(now)
    }

    fn on_rearm(&mut self, now: Instant, ring_pending: u32) -> Decision {
        self.fallback.on_rearm(now, ring_pending)
    }

    fn current_delay(&self) -> Option<Duration> {
        self.fallback.current_delay()
    }
}
