//! When a run is stalled, and what its error says: the run loop's rate
//! watch (events per simulated microsecond and host), the stall window
//! (simulated time without a message completing) and the sampling of the
//! events that follow, whose dominant stage ([`Ev::stage`]) the error
//! names. The loop itself is `super::World::run_loop`'s.

use super::{Ev, World};
use crate::time::{Duration, Instant};
use crate::SimError;

/// A run in which no message completes (no request finishes; for the flood,
/// no frame reaches host 1's handler) for this many of its longest protocol
/// timer (resend delay, pull timeout, delayed ack) is stalled: nothing but
/// timers firing, or a timer re-arming without any delivery. Twice the
/// library's resend limit: a peer that stops answering makes the library
/// give up first ([`crate::proto::RESENDS_MAX`] delays, a named error),
/// while a run that is slow but progressing (many resends that each let a
/// message through) completes a message well within it.
const STALL_TIMERS: u64 = 2 * crate::proto::RESENDS_MAX;

/// The stall window is at least this: ten simulated minutes without a
/// message completing, 18 times the longest experiment run (NAS IS class C,
/// 33 s in `coalescing-nas-is`), so that short configured timers do not
/// make a long compute phase or a huge transfer look stalled.
const STALL_WINDOW_MIN: Duration = Duration::from_ms(600_000);

/// The run loop looks at its rate every this many events.
pub(super) const WATCH_EVENTS: u64 = 1 << 20;

/// Events per simulated microsecond and host above which a run is taken as
/// stalled (simulated time barely advancing), if sustained for
/// [`STALL_WINDOWS`] looks. A host at full line rate handles under 20
/// frames per µs (64 B frames at 10 Gb/s) at under ten events each.
pub(super) const MAX_EVENTS_PER_US_PER_HOST: f64 = 1_000.0;

/// Consecutive looks over the rate bound before the run ends (16 M events).
pub(super) const STALL_WINDOWS: u32 = 16;

/// Events without a packet sent or delivered after which a world that
/// runs the \[LCI] stack is stalled (looked at every
/// [`crate::interrupt::CHECK_EVERY`] events, as the stall window is).
pub(super) const NO_PROGRESS_EVENTS: u64 = 10_000_000;

/// Events sampled, once a stall is seen, to name the stage that dominates:
/// for a rate stall, and for a run without progress (whose events are
/// sparse timers).
pub(super) const STALL_SAMPLE: u64 = 1 << 16;
pub(super) const QUIET_SAMPLE: u64 = 256;

/// Events sampled per stage (see [`Ev::stage`]).
pub(super) type StageCounts = Vec<(&'static str, u64)>;

/// Why the run loop samples its events before ending.
#[derive(Clone, Copy)]
pub(super) enum Stall {
    /// Simulated time barely advances (`hot` looks over the rate bound).
    Rate { hot: u32 },
    /// No message completed since `since` (the window passed).
    Quiet { since: Instant, window: Duration },
}

impl Ev {
    /// The stage an event belongs to (named in a stall error).
    pub(super) fn stage(&self) -> &'static str {
        match self {
            Ev::SwitchIn { .. } => "switch (SwitchIn, wire_path)",
            Ev::NicRx { .. } => "NIC receive (NicRx, nic_path)",
            Ev::DmaDone { .. } => "receive DMA (DmaDone, nic_path)",
            Ev::TxDone { .. } => "transmit completion (TxDone, nic_path)",
            Ev::CoalTimer { .. } => "coalescing timer (CoalTimer, nic)",
            Ev::IrqArrive { .. } => "interrupt (IrqArrive, kernel)",
            Ev::ClaimLands { .. } => "interrupt claim (ClaimLands, nic_path)",
            Ev::CoreDone { .. } => "core segment (CoreDone, kernel and library)",
            Ev::ProcTimer { .. } => "protocol timer (ProcTimer, library)",
            Ev::PullTimer { .. } => "pull timer (PullTimer, pull)",
            Ev::PullCopied { .. } => "copy engine (PullCopied, pull)",
            Ev::FloodTick => "flood generator (FloodTick)",
            Ev::ReplayTick => "capture replay (ReplayTick, replay)",
            Ev::NapiTimer { .. } => "NAPI timer (NapiTimer, kernel)",
            Ev::SuspendTimer { .. } => "IRQ suspend timer (SuspendTimer, kernel)",
            Ev::WatchdogTimer { .. } => "polling watchdog (WatchdogTimer, nic)",
            Ev::ClockTick { .. } | Ev::ClockFetched { .. } => "NI clock (ClockTick, clock)",
            Ev::ClockIrq { .. } => "NI clock interrupt (ClockIrq, clock)",
            Ev::FlowResume { .. } => "link flow control (FlowResume, nic_path)",
            Ev::FlowLimit { .. } => "link flow control's hold limit (FlowLimit, nic_path)",
            Ev::KernelTick { .. } => "kernel tick (KernelTick, tick)",
            Ev::LciLibrary { .. } => "LCI host library (LciLibrary, lci_stack)",
            Ev::Lanai { .. } => "LANai firmware (Lanai, lci_stack)",
        }
    }
}

impl World {
    /// The error of a stalled run: why, and the stage whose events
    /// dominate the `n` sampled.
    #[cold]
    pub(super) fn stalled(&self, now: Instant, why: Stall, n: u64, counts: &[(&'static str, u64)]) -> SimError {
        let (stage, c) = counts.iter().max_by_key(|(_, c)| *c).copied().unwrap_or(("none", 0));
        let share = 100.0 * c as f64 / n as f64;
        SimError(match why {
            Stall::Rate { hot } => format!(
                "stalled: simulated time advances by under 1 µs per {} events per host at {now} \
                 ({hot} looks of {WATCH_EVENTS} events); {share:.0} % of the events are {stage}",
                MAX_EVENTS_PER_US_PER_HOST
            ),
            Stall::Quiet { since, window } => format!(
                "no progress: no message completed since {since} ({:.0} s of simulated time, the stall \
                 window) at {now}; {share:.0} % of the {n} events since are {stage}{}",
                window.as_us_f64() / 1e6,
                self.ring_overflow_note()
            ),
        })
    }

    /// Simulated time without a message completing after which the run is
    /// stalled: [`STALL_TIMERS`] of its longest protocol timer, at least
    /// [`STALL_WINDOW_MIN`]; a replay's at least its longest quiet gap too
    /// (a capture may pause for longer than the window).
    pub(super) fn stall_window(&self) -> Duration {
        let longest = self.env.c.proto.resend.max(self.env.c.lib.pull_timeout).max(self.env.c.proto.delayed_ack);
        if self.run.lci.is_some() {
            // A world that runs the LCI stack is watched in events
            // (`stall_events`): its idle `pio` hosts poll forever, and a
            // window in simulated time would take far longer to close.
            return Duration::MAX;
        }
        let gap = self.replay.as_ref().map_or(Duration::ZERO, |r| r.longest_gap());
        longest.times(STALL_TIMERS).max(STALL_WINDOW_MIN).max(gap + STALL_WINDOW_MIN)
    }

    /// Events without progress after which a run is stalled:
    /// [`NO_PROGRESS_EVENTS`] for a world that runs the LCI stack (its
    /// progress is a packet sent or delivered, `ni_packets`), none
    /// otherwise (the stall window, in simulated time, watches those).
    pub(super) fn stall_events(&self) -> u64 {
        if self.run.lci.is_some() {
            NO_PROGRESS_EVENTS
        } else {
            u64::MAX
        }
    }

    /// The error of a world that runs the LCI stack whose NIs sent and
    /// delivered no packet in [`NO_PROGRESS_EVENTS`] events, at `now`.
    #[cold]
    pub(super) fn no_packets(&self, now: Instant) -> SimError {
        SimError(format!(
            "no progress: no packet sent or delivered in {NO_PROGRESS_EVENTS} events up to {} us",
            now.as_us_f64()
        ))
    }
}
