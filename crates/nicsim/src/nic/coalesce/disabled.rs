//! The `disabled` coalescing policy (SPEC §2.2): one interrupt per DMA
//! completion.
//!
//! This file owns only that decision. It keeps no state and never uses its
//! timer; masking the line between a raise and the host's re-arm is the NIC
//! queue's job (`crate::nic`), so "one interrupt per frame" holds only while
//! the host keeps up.

use super::{Coalescer, Decision, DmaCompletion};
use crate::time::{Duration, Instant};

/// Raise the interrupt on every DMA completion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Disabled;

impl Coalescer for Disabled {
    fn name(&self) -> &'static str {
        "disabled"
    }
    fn on_dma_complete(&mut self, _now: Instant, _dma: DmaCompletion) -> Decision {
        Decision::RAISE
    }
    fn on_timer(&mut self, _now: Instant) -> Decision {
        Decision::NONE
    }
    fn on_irq_raised(&mut self, _now: Instant) -> Decision {
        Decision::NONE
    }
    fn current_delay(&self) -> Option<Duration> {
        Some(Duration::ZERO)
    }
}
