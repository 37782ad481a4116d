//! The `timeout` coalescing policy (SPEC §2.2): the classic NIC interrupt
//! timer, in its three real-world variants (absolute, packet timer, throttle).
//!
//! This file owns the timer arithmetic and the "unreported frames" state of one
//! receive queue. It is also the fallback timer that `openmx`, `stream` and the
//! adaptive policies drive (they own a [`Timeout`] and change its parameters).
//! It does not own the interrupt line or the engine timer: it only answers
//! [`Decision`]s, and every `TimerCmd::Arm` it returns lies strictly after
//! `now`.
//!
//! Sources: ethtool `rx-usecs` / `rx-frames` (include/uapi/linux/ethtool.h,
//! `struct ethtool_coalesce`: "how many usecs to delay an RX interrupt after a
//! packet arrives" / "maximum number of packets to delay"); Intel 8254x
//! (e1000) developer's manual §3.4 / registers RDTR (receive delay timer,
//! re-armed per packet), RADV (receive absolute delay, 0 = disabled) and ITR
//! (interrupt throttling: minimum inter-interrupt interval).

use super::{Coalescer, Decision, DmaCompletion, TimeoutSpec, TimerCmd};
use crate::config::TimeoutMode;
use crate::time::{Duration, Instant};

/// The timeout policy; see [`TimeoutSpec`] for the exact rule of each mode.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeout {
    spec: TimeoutSpec,
    /// DMA completion time of the first frame not yet reported by an interrupt.
    first: Option<Instant>,
    /// DMA completion time of the latest unreported frame (packet timer).
    last: Instant,
    /// Number of unreported frames.
    unreported: u32,
    /// When the interrupt was last raised (throttle).
    last_irq: Option<Instant>,
    /// Whether this policy believes its timer is armed.
    armed: bool,
}

impl Timeout {
    pub fn new(spec: TimeoutSpec) -> Self {
        Timeout { spec, first: None, last: Instant::ZERO, unreported: 0, last_irq: None, armed: false }
    }

    pub fn spec(&self) -> &TimeoutSpec {
        &self.spec
    }

    /// Frames completed since the last interrupt / full re-arm.
    pub fn unreported(&self) -> u32 {
        self.unreported
    }

    /// Change delay and frame threshold (adaptive policies). Takes effect for
    /// the next decision; an armed timer is left as it is.
    pub(crate) fn set_delay_frames(&mut self, delay: Duration, frames: u32) {
        self.spec.delay = delay;
        self.spec.frames = frames;
    }

    /// Raise now (on behalf of a wrapping policy, e.g. a marked frame): the
    /// timer is no longer needed.
    pub(crate) fn raise_now(&mut self) -> Decision {
        self.armed = false;
        Decision::raise_and(TimerCmd::Cancel)
    }

    fn arm(&mut self, now: Instant, at: Instant) -> Decision {
        debug_assert!(at > now, "timer requested at {at}, not after {now}");
        self.armed = true;
        Decision::arm(at)
    }

    fn reset_unreported(&mut self) -> Decision {
        self.first = None;
        self.unreported = 0;
        self.armed = false;
        Decision { raise: false, timer: TimerCmd::Cancel }
    }

    fn frames_reached(&self) -> bool {
        self.spec.frames > 0 && self.unreported >= self.spec.frames
    }

    /// Absolute: first + delay. `None` if there is nothing unreported or no
    /// time limit.
    fn absolute_deadline(&self) -> Option<Instant> {
        let first = self.first?;
        (!self.spec.delay.is_zero()).then(|| first + self.spec.delay)
    }

    /// Packet timer: min(last + delay, first + cap); cap 0 = no cap.
    fn packet_deadline(&self) -> Option<Instant> {
        let first = self.first?;
        let mut at = self.last + self.spec.delay;
        if !self.spec.cap.is_zero() {
            at = at.min(first + self.spec.cap);
        }
        Some(at)
    }

    /// Throttle: the earliest instant the next interrupt may be raised.
    fn throttle_open_at(&self) -> Instant {
        match self.last_irq {
            Some(t) => t + self.spec.delay,
            None => Instant::ZERO,
        }
    }

    /// Decide at `now` given the unreported state; `fresh` says the timer
    /// may need (re-)arming because of a new frame.
    fn decide(&mut self, now: Instant, fresh: bool) -> Decision {
        if self.first.is_none() {
            return Decision::NONE;
        }
        match self.spec.mode {
            TimeoutMode::Absolute => {
                if self.frames_reached() || (self.spec.delay.is_zero() && self.spec.frames == 0) {
                    return self.raise_now();
                }
                match self.absolute_deadline() {
                    Some(at) if now >= at => self.raise_now(),
                    Some(at) if !self.armed => self.arm(now, at),
                    // Absolute: never pushed back by later frames.
                    _ => Decision::NONE,
                }
            }
            TimeoutMode::PacketTimer => {
                if self.frames_reached() || self.spec.delay.is_zero() {
                    return self.raise_now();
                }
                match self.packet_deadline() {
                    Some(at) if now >= at => self.raise_now(),
                    Some(at) if fresh || !self.armed => self.arm(now, at),
                    _ => Decision::NONE,
                }
            }
            TimeoutMode::Throttle => {
                let open = self.throttle_open_at();
                if now >= open {
                    self.raise_now()
                } else if !self.armed {
                    self.arm(now, open)
                } else {
                    Decision::NONE
                }
            }
        }
    }
}

impl Coalescer for Timeout {
    fn name(&self) -> &'static str {
        "timeout"
    }

    fn on_dma_complete(&mut self, now: Instant, _dma: DmaCompletion) -> Decision {
        if self.first.is_none() {
            self.first = Some(now);
        }
        self.last = now;
        self.unreported = self.unreported.saturating_add(1);
        self.decide(now, true)
    }

    fn on_timer(&mut self, now: Instant) -> Decision {
        self.armed = false;
        self.decide(now, false)
    }

    fn on_irq_raised(&mut self, now: Instant) -> Decision {
        self.last_irq = Some(now);
        self.reset_unreported()
    }

    fn on_rearm(&mut self, _now: Instant, ring_pending: u32) -> Decision {
        if ring_pending == 0 {
            // The host saw every frame: nothing is left to report.
            self.reset_unreported()
        } else {
            Decision::NONE
        }
    }

    fn current_delay(&self) -> Option<Duration> {
        Some(self.spec.delay)
    }
}
