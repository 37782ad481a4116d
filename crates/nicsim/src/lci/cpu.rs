//! Where an LCI host's CPU is (in the library polling, computing, in a
//! signal handler, asleep) and what a signal does to it (SPEC §2.4: NI
//! interrupts are delivered as a signal to the process, kernel dispatch +
//! user signal handler; a handler that finds interrupts disabled returns at
//! once).
//!
//! This module owns that decision only (sans-I/O); the world applies it
//! (`super::Stack`), and the interrupts-enabled flag itself lives in host
//! memory (`super::host::Host::irq_enabled`). The library keeps interrupts
//! disabled whenever it runs (polling, sending, in the handler) and enabled
//! while the program computes or sleeps outside it.

use crate::time::{Duration, Instant};
use std::fmt;

/// What the host CPU is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In the library: polling, sending, consuming (interrupts disabled).
    Library,
    /// Computing outside the library until `end` (interrupts enabled).
    Compute { end: Instant },
    /// In the signal handler, which runs the library; then resumes the
    /// computation with `resume` left, or sleeps (`None`).
    Handler { resume: Option<Duration> },
    /// Asleep outside the library, waiting for a signal (interrupts enabled).
    Sleep,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Library => "polling in the library",
            Mode::Compute { .. } => "computing",
            Mode::Handler { .. } => "in the signal handler",
            Mode::Sleep => "sleeping",
        })
    }
}

/// What a signal does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Interrupts enabled: the handler runs the library, then the program
    /// resumes (`resume` of computation left) or sleeps again.
    Handle { resume: Option<Duration> },
    /// Interrupts disabled: the handler returns at once; the host pays the
    /// delivery (kernel dispatch + user handler entry) and nothing else.
    ReturnAtOnce,
    /// Already in the handler: the signal is blocked and merged with the one
    /// being handled (POSIX signals do not queue), whose library run will
    /// see the new packet anyway.
    Merged,
}

/// The host CPU state of one host.
#[derive(Debug, Clone, Copy)]
pub struct Cpu {
    pub mode: Mode,
    /// Generation of the pending compute-done event (a preempted computation's event is stale).
    pub gen: u64,
    /// Signal time stolen from a busy library action, paid before its next one.
    pub stolen: Duration,
}

impl Cpu {
    pub fn new(mode: Mode) -> Self {
        Cpu { mode, gen: 0, stolen: Duration::ZERO }
    }

    /// Whether the library runs (polls, sends, consumes) on this CPU.
    pub fn in_library(&self) -> bool {
        matches!(self.mode, Mode::Library | Mode::Handler { .. })
    }

    /// A signal reaches the process at `now`; `irq_enabled` is the host flag.
    pub fn on_signal(&self, now: Instant, irq_enabled: bool) -> Signal {
        match self.mode {
            Mode::Handler { .. } => Signal::Merged,
            Mode::Compute { end } if irq_enabled => Signal::Handle { resume: Some(end.since(now)) },
            Mode::Sleep if irq_enabled => Signal::Handle { resume: None },
            _ => Signal::ReturnAtOnce,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handler_that_finds_interrupts_disabled_returns_at_once() {
        let c = Cpu::new(Mode::Library);
        assert_eq!(c.on_signal(Instant::ZERO, false), Signal::ReturnAtOnce);
        let end = Instant::ZERO + Duration::from_us(100);
        let c = Cpu::new(Mode::Compute { end });
        assert_eq!(
            c.on_signal(Instant::ZERO + Duration::from_us(30), true),
            Signal::Handle { resume: Some(Duration::from_us(70)) }
        );
        assert_eq!(Cpu::new(Mode::Sleep).on_signal(Instant::ZERO, true), Signal::Handle { resume: None });
        assert_eq!(Cpu::new(Mode::Handler { resume: None }).on_signal(Instant::ZERO, false), Signal::Merged);
    }
}
