//! Interrupt coalescing policies: when does a NIC receive queue raise its
//! interrupt?
//!
//! This module owns the *decision* only. Each policy is a sans-I/O state
//! machine behind the [`Coalescer`] trait: it is told what happened (a frame
//! arrived, a DMA completed, its timer fired, the NIC raised the interrupt,
//! the host re-armed it) together with `now`, and answers with a
//! [`Decision`]: raise the interrupt or not, and what to do with its single
//! timer. It does not own the interrupt line: the NIC queue
//! (`crate::nic`) masks the line between a raise and the host's re-arm and
//! remembers a raise requested while masked. Nor does it schedule events:
//! the NIC turns `TimerCmd::Arm` into an engine event and calls
//! [`Coalescer::on_timer`] when it fires (stale timers are filtered by the
//! NIC, never seen here).
//!
//! Policies (SPEC §2.2): `disabled`, `timeout` (absolute / packet-timer /
//! throttle, with a frames threshold), `openmx` ([OMX-COAL] Algorithm 1),
//! `stream` ([OMX-COAL] Algorithm 2), and `adaptive` (Linux DIM / ixgbe ITR),
//! plus `openmx-adaptive` (markers with a DIM-driven fallback timer), and
//! `timeout` with a transmit timer of its own (`split.rs`). One file per
//! policy; [`CoalesceSpec`] (a configuration value, `crate::config`)
//! names a policy and [`CoalesceSpec::build`] makes an instance of it.

use crate::config::{AdaptiveSpec, CoalesceSpec, TimeoutSpec};
use crate::time::{Duration, Instant};
use std::fmt;

mod adaptive;
mod disabled;
mod itr;
mod openmx;
mod split;
mod stream;
mod timeout;

#[cfg(test)]
mod tests;

pub use crate::config::DimProfile;
pub use adaptive::{
    kernel_table, Dim, DimStats, DimTuneState, DimTuner, OpenMxAdaptive, DIM_NEVENTS, NET_DIM_DEF_PROFILE_CQE,
    NET_DIM_DEF_PROFILE_EQE, NET_DIM_RX_CQE_PROFILES, NET_DIM_RX_EQE_PROFILES, NET_DIM_TX_CQE_PROFILES,
    NET_DIM_TX_EQE_PROFILES,
};
pub use disabled::Disabled;
pub use itr::{Itr, ItrClass};
pub use openmx::OpenMx;
pub use split::TimeoutTx;
pub use stream::Stream;
pub use timeout::Timeout;

/// What the policy wants done with its (single) timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TimerCmd {
    /// Leave the timer as it is (armed or not).
    #[default]
    Keep,
    /// (Re-)arm the timer to fire at this instant, replacing any earlier one.
    Arm(Instant),
    /// Disarm the timer.
    Cancel,
}

/// A policy's answer to one input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Decision {
    /// Raise the queue's interrupt now (the NIC may have to hold it while the
    /// line is masked; it then raises at re-arm if packets are still waiting).
    pub raise: bool,
    pub timer: TimerCmd,
}

impl Decision {
    pub const NONE: Decision = Decision { raise: false, timer: TimerCmd::Keep };
    pub const RAISE: Decision = Decision { raise: true, timer: TimerCmd::Keep };
    pub fn arm(at: Instant) -> Decision {
        Decision { raise: false, timer: TimerCmd::Arm(at) }
    }
    pub fn raise_and(timer: TimerCmd) -> Decision {
        Decision { raise: true, timer }
    }
}

/// A DMA of one received frame into the host ring has completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaCompletion {
    /// The descriptor's latency-sensitive marker (copied from the frame's
    /// marker flag when it arrived: [OMX-COAL] Algorithm 1, line 2).
    pub marked: bool,
    /// Frame length in bytes (for DIM's byte counters).
    pub bytes: u32,
    /// Other frames this NIC has received whole whose DMA has not completed
    /// yet ("other DMAs pending", [OMX-COAL] Algorithm 2; `Nic::other_pending`).
    pub other_pending: u32,
}

/// An interrupt coalescing policy for one receive queue.
///
/// Contract, in call order for one frame: `on_arrival` when the frame starts
/// arriving at the NIC, `on_dma_complete` when it sits in the host ring. The
/// NIC calls `on_irq_raised` each time it actually raises the interrupt (the
/// policy resets its "unreported" state there) and `on_rearm` when the host
/// re-enables the interrupt after draining the ring (`ring_pending` frames
/// are still in the ring, unseen by the host, normally 0).
pub trait Coalescer: Send {
    /// The strategy name used in SPEC.md and in result tables.
    fn name(&self) -> &'static str;
    fn on_arrival(&mut self, _now: Instant, _marked: bool) -> Decision {
        Decision::NONE
    }
    fn on_dma_complete(&mut self, now: Instant, dma: DmaCompletion) -> Decision;
    /// A transmit completion reported on this queue's line (`bytes` of the
    /// frame sent, 0 when unknown). By default it counts as one more
    /// completion on the receive timer (Myri-10G has one timer for both);
    /// policies with a send completion queue of their own override it.
    fn on_tx_complete(&mut self, now: Instant, bytes: u32, other_pending: u32) -> Decision {
        self.on_dma_complete(now, DmaCompletion { marked: false, bytes, other_pending })
    }
    fn on_timer(&mut self, now: Instant) -> Decision;
    fn on_irq_raised(&mut self, now: Instant) -> Decision;
    fn on_rearm(&mut self, _now: Instant, _ring_pending: u32) -> Decision {
        Decision::NONE
    }
    /// Current effective delay (for reporting adaptive policies); `None` if
    /// the policy has no notion of one.
    fn current_delay(&self) -> Option<Duration> {
        None
    }
    /// The delay an adaptive transmit side applies now (TX DIM); `None`
    /// when the transmit completions are not adapted apart.
    fn current_tx_delay(&self) -> Option<Duration> {
        None
    }
}

impl fmt::Debug for dyn Coalescer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Coalescer({})", self.name())
    }
}

/// The NIC builds the policy a configuration names.
impl CoalesceSpec {
    /// A fresh policy instance (one per receive queue). Allocates once; the
    /// policy itself never allocates afterwards.
    pub fn build(&self) -> Box<dyn Coalescer> {
        match *self {
            CoalesceSpec::Disabled => Box::new(Disabled),
            CoalesceSpec::Timeout(spec) => Box::new(Timeout::new(spec)),
            CoalesceSpec::OpenMx(spec) => Box::new(OpenMx::new(spec)),
            CoalesceSpec::Stream(spec) => Box::new(Stream::new(spec)),
            CoalesceSpec::TimeoutTx(rx, tx) => Box::new(TimeoutTx::new(rx, tx)),
            CoalesceSpec::Adaptive(AdaptiveSpec::Dim(spec)) => Box::new(Dim::with(spec)),
            CoalesceSpec::Adaptive(AdaptiveSpec::Itr) => Box::new(Itr::new()),
            CoalesceSpec::OpenMxAdaptive(spec) => Box::new(OpenMxAdaptive::with(spec)),
        }
    }
}
