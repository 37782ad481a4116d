//! The ixgbe-style ITR policy (`nic.adaptive = "itr"`): the interrupt gap
//! chosen per interrupt from the bytes per microsecond it reported, in
//! three latency classes.
//!
//! Re-implemented from drivers/net/ethernet/intel/ixgbe/ixgbe_main.c
//! (`ixgbe_update_itr`, `ixgbe_set_itr`, the `lowest/low/bulk_latency`
//! ranges, before the 4.15 rewrite) and ixgbe.h (`IXGBE_100K_ITR`,
//! `IXGBE_20K_ITR`, `IXGBE_8K_ITR`); the interrupt decision is a [`Timeout`]
//! in throttle mode whose gap this file changes.

use super::{Coalescer, Decision, DmaCompletion, Timeout, TimeoutSpec};
use crate::time::{Duration, Instant};
use std::fmt;

/// ixgbe `enum latency_range`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItrClass {
    LowestLatency,
    LowLatency,
    BulkLatency,
}

impl fmt::Display for ItrClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ItrClass::LowestLatency => "lowest_latency",
            ItrClass::LowLatency => "low_latency",
            ItrClass::BulkLatency => "bulk_latency",
        })
    }
}

/// EITR interval values in 0.25 µs units ("microsecond values for various ITR
/// rates shifted by 2"), ixgbe.h: `IXGBE_100K_ITR` = 40 (10 µs, 100 000
/// ints/s), `IXGBE_20K_ITR` = 200 (50 µs), `IXGBE_8K_ITR` = 500 (125 µs).
pub const IXGBE_100K_ITR: u32 = 40;
pub const IXGBE_20K_ITR: u32 = 200;
pub const IXGBE_8K_ITR: u32 = 500;

/// ixgbe_update_itr thresholds in bytes per µs of the current interval
/// ("0-10MB/s lowest, 10-20MB/s low, 20-1249MB/s bulk").
const ITR_LOW_BYTES_PER_US: u64 = 10;
const ITR_BULK_BYTES_PER_US: u64 = 20;

/// ixgbe-style adaptive throttling: per interrupt, classify the traffic since
/// the previous one by bytes per µs of the current interval, move one class
/// at a time, and smooth the throttle gap toward that class's rate
/// (`ixgbe_set_itr`: new = 10·target·old / (9·target + old), i.e. the
/// interrupt *rate* moves 1/10 of the way to the target).
#[derive(Clone, Debug, PartialEq)]
pub struct Itr {
    class: ItrClass,
    /// Current gap, in 0.25 µs EITR units.
    itr: u32,
    bytes: u64,
    packets: u64,
    throttle: Timeout,
}

impl Default for Itr {
    fn default() -> Self {
        Itr::new()
    }
}

fn itr_to_duration(itr: u32) -> Duration {
    Duration::from_ns(u64::from(itr) * 250)
}

impl Itr {
    /// Dynamic mode (ixgbe `rx_itr_setting == 1`) starts at `IXGBE_20K_ITR`;
    /// the ring's class starts zeroed, i.e. `lowest_latency`.
    pub fn new() -> Self {
        Itr {
            class: ItrClass::LowestLatency,
            itr: IXGBE_20K_ITR,
            bytes: 0,
            packets: 0,
            throttle: Timeout::new(TimeoutSpec::throttle(itr_to_duration(IXGBE_20K_ITR))),
        }
    }

    pub fn class(&self) -> ItrClass {
        self.class
    }

    /// The current gap in EITR units (0.25 µs).
    pub fn itr(&self) -> u32 {
        self.itr
    }

    fn update(&mut self) {
        if self.packets == 0 {
            return;
        }
        let interval_us = u64::from(self.itr >> 2);
        if interval_us == 0 {
            return;
        }
        let per_us = self.bytes / interval_us;
        self.class = match self.class {
            ItrClass::LowestLatency if per_us > ITR_LOW_BYTES_PER_US => ItrClass::LowLatency,
            ItrClass::LowLatency if per_us > ITR_BULK_BYTES_PER_US => ItrClass::BulkLatency,
            ItrClass::LowLatency if per_us <= ITR_LOW_BYTES_PER_US => ItrClass::LowestLatency,
            ItrClass::BulkLatency if per_us <= ITR_BULK_BYTES_PER_US => ItrClass::LowLatency,
            same => same,
        };
        self.bytes = 0;
        self.packets = 0;
        let target = match self.class {
            ItrClass::LowestLatency => IXGBE_100K_ITR,
            ItrClass::LowLatency => IXGBE_20K_ITR,
            ItrClass::BulkLatency => IXGBE_8K_ITR,
        };
        if target != self.itr {
            let (t, old) = (u64::from(target), u64::from(self.itr));
            self.itr = (10 * t * old / (9 * t + old)) as u32;
            self.throttle.set_delay_frames(itr_to_duration(self.itr), 0);
        }
    }
}

impl Coalescer for Itr {
    fn name(&self) -> &'static str {
        "adaptive"
    }
    fn on_dma_complete(&mut self, now: Instant, dma: DmaCompletion) -> Decision {
        self.packets += 1;
        self.bytes += u64::from(dma.bytes);
        self.throttle.on_dma_complete(now, dma)
    }
    fn on_timer(&mut self, now: Instant) -> Decision {
        self.throttle.on_timer(now)
    }
    fn on_irq_raised(&mut self, now: Instant) -> Decision {
        self.update();
        self.throttle.on_irq_raised(now)
    }
    fn on_rearm(&mut self, now: Instant, ring_pending: u32) -> Decision {
        self.throttle.on_rearm(now, ring_pending)
    }
    fn current_delay(&self) -> Option<Duration> {
        Some(itr_to_duration(self.itr))
    }
}
