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
//! plus `openmx-adaptive` (markers with a DIM-driven fallback timer). One file
//! per policy; [`CoalesceSpec`] is the configuration value the simulator
//! builds a policy instance from.

use crate::time::{Duration, Instant};
use std::fmt;
use std::str::FromStr;

mod adaptive;
mod disabled;
mod openmx;
mod stream;
mod timeout;

#[cfg(test)]
mod tests;

pub use adaptive::{
    Dim, DimProfile, DimStats, DimTuneState, DimTuner, Itr, ItrClass, OpenMxAdaptive, DIM_NEVENTS,
    NET_DIM_DEF_PROFILE_EQE, NET_DIM_RX_EQE_PROFILES,
};
pub use disabled::Disabled;
pub use openmx::OpenMx;
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
    /// Other frames of this NIC that have started arriving but whose DMA has
    /// not completed yet ("other DMAs pending", [OMX-COAL] Algorithm 2).
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
}

impl fmt::Debug for dyn Coalescer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Coalescer({})", self.name())
    }
}

/// Myri-10G default coalescing delay: the myri10ge Linux driver's
/// `myri10ge_intr_coal_delay = 75` (µs), drivers/net/ethernet/myricom/myri10ge/myri10ge.c;
/// also SPEC §5 preset `omx2009`.
pub const MYRI10G_DEFAULT_DELAY: Duration = Duration::from_us(75);

/// The strategy names of SPEC §4, in the order [`CoalesceSpec::strategy_name`]
/// uses them. (`watchdog` is an LCI firmware mechanism, `crate::nic::watchdog`,
/// not a coalescing policy, so it is not listed here.)
pub const STRATEGY_NAMES: &[&str] = &["disabled", "timeout", "openmx", "stream", "adaptive", "openmx-adaptive"];

/// Which real-world NIC timer a [`Timeout`] models (SPEC §2.2 `timeout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutMode {
    /// The timer starts at the first unreported frame and is not re-armed
    /// (ethtool rx-usecs / rx-frames; Myri-10G firmware).
    Absolute,
    /// The timer is re-armed at every frame (e1000 RDTR), bounded by an
    /// absolute cap from the first unreported frame (e1000 RADV).
    PacketTimer,
    /// A minimum gap between two interrupts (e1000 ITR).
    Throttle,
}

impl TimeoutMode {
    pub const ALL: [TimeoutMode; 3] = [TimeoutMode::Absolute, TimeoutMode::PacketTimer, TimeoutMode::Throttle];

    /// The name used in configuration files and result tables.
    pub const fn name(self) -> &'static str {
        match self {
            TimeoutMode::Absolute => "absolute",
            TimeoutMode::PacketTimer => "packet",
            TimeoutMode::Throttle => "throttle",
        }
    }
}

impl fmt::Display for TimeoutMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown timeout mode name (the allowed ones are listed in the message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseTimeoutModeError(pub String);

impl fmt::Display for ParseTimeoutModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown timeout mode `{}` (expected one of: absolute, packet, throttle)", self.0)
    }
}

impl std::error::Error for ParseTimeoutModeError {}

impl FromStr for TimeoutMode {
    type Err = ParseTimeoutModeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TimeoutMode::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| ParseTimeoutModeError(s.to_owned()))
    }
}

/// Parameters of the timeout policy and of the fallback timer of `openmx` and
/// `stream`.
///
/// * `Absolute`: raise when `delay > 0 && now - first >= delay` or
///   `frames > 0 && n >= frames`; both zero = raise on every frame (ethtool
///   rx-usecs = 0, rx-frames = 0). `cap` is ignored.
/// * `PacketTimer`: raise at `min(last + delay, first + cap)`; `cap == 0`
///   means no absolute cap (e1000: RADV = 0 disables the absolute timer);
///   `delay == 0` raises on every frame (RDTR = 0); `frames > 0` also raises
///   on the `frames`-th unreported frame.
/// * `Throttle`: at most one interrupt per `delay`; `frames` and `cap` are
///   ignored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeoutSpec {
    pub mode: TimeoutMode,
    pub delay: Duration,
    pub frames: u32,
    pub cap: Duration,
}

impl TimeoutSpec {
    /// ethtool rx-usecs / rx-frames semantics.
    pub const fn absolute(delay: Duration, frames: u32) -> Self {
        TimeoutSpec { mode: TimeoutMode::Absolute, delay, frames, cap: Duration::ZERO }
    }
    /// e1000 RDTR (`delay`) + RADV (`cap`).
    pub const fn packet_timer(delay: Duration, cap: Duration) -> Self {
        TimeoutSpec { mode: TimeoutMode::PacketTimer, delay, frames: 0, cap }
    }
    /// e1000 ITR: minimum gap between interrupts.
    pub const fn throttle(gap: Duration) -> Self {
        TimeoutSpec { mode: TimeoutMode::Throttle, delay: gap, frames: 0, cap: Duration::ZERO }
    }
    /// The Myri-10G default: absolute, 75 µs, no frame threshold.
    pub const fn myri10g_default() -> Self {
        TimeoutSpec::absolute(MYRI10G_DEFAULT_DELAY, 0)
    }
}

/// Which adaptive algorithm `adaptive` runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AdaptiveFlavor {
    /// Linux DIM (lib/dim/net_dim.c) over the RX EQE profile table.
    Dim,
    /// ixgbe-style ITR classes (lowest / low / bulk latency).
    Itr,
}

/// A coalescing policy and its parameters: what the simulator is configured
/// with, turned into a policy instance by [`CoalesceSpec::build`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CoalesceSpec {
    Disabled,
    Timeout(TimeoutSpec),
    /// [OMX-COAL] Algorithm 1 with this fallback timer.
    OpenMx(TimeoutSpec),
    /// [OMX-COAL] Algorithm 2 with this fallback timer.
    Stream(TimeoutSpec),
    Adaptive(AdaptiveFlavor),
    /// Marked frames raise at once; DIM drives the fallback timer.
    OpenMxAdaptive,
}

impl CoalesceSpec {
    /// A fresh policy instance (one per receive queue). Allocates once; the
    /// policy itself never allocates afterwards.
    pub fn build(&self) -> Box<dyn Coalescer> {
        match *self {
            CoalesceSpec::Disabled => Box::new(Disabled),
            CoalesceSpec::Timeout(spec) => Box::new(Timeout::new(spec)),
            CoalesceSpec::OpenMx(spec) => Box::new(OpenMx::new(spec)),
            CoalesceSpec::Stream(spec) => Box::new(Stream::new(spec)),
            CoalesceSpec::Adaptive(AdaptiveFlavor::Dim) => Box::new(Dim::new()),
            CoalesceSpec::Adaptive(AdaptiveFlavor::Itr) => Box::new(Itr::new()),
            CoalesceSpec::OpenMxAdaptive => Box::new(OpenMxAdaptive::new()),
        }
    }

    /// The strategy name (one of [`STRATEGY_NAMES`]).
    pub fn strategy_name(&self) -> &'static str {
        match self {
            CoalesceSpec::Disabled => "disabled",
            CoalesceSpec::Timeout(_) => "timeout",
            CoalesceSpec::OpenMx(_) => "openmx",
            CoalesceSpec::Stream(_) => "stream",
            CoalesceSpec::Adaptive(_) => "adaptive",
            CoalesceSpec::OpenMxAdaptive => "openmx-adaptive",
        }
    }
}
