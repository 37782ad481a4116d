//! NI-assisted fine-grain timers (\[LCI] §5.2, SPEC §2.4): host soft
//! timers and the NI clock-interrupt policy, both sans-I/O.
//!
//! The host keeps its timers in memory and checks them against its cycle
//! counter whenever it enters the library; it writes "a timer is running"
//! and "I last polled the clock at t" to host memory. The NI ticks every
//! clock period; at each tick it reads those two words with one small DMA
//! and raises a clock interrupt only if a timer is running *and* the host
//! has not polled within the last period ([`ClockPolicy::on_fetch`]). The
//! interrupt only makes the host enter the library (as a signal handler),
//! which polls the clock and fires the timers that are due.
//!
//! Both stacks use [`ClockPolicy`] with the library protocol's deadlines
//! (`crate::proto::Endpoint`) as their running timers, on the world's one
//! NI clock (`crate::sim` `clock`, `nic.clock_period_us`): the LCI library
//! (`crate::library::lci`) with its delayed explicit acks, the Open-MX
//! library's processes with their delayed acks and resends.
//!
//! This module does not time the tick, the fetch or the signal (each stack
//! does), nor decide what a timer does (`crate::library::lci`,
//! `crate::proto`).

use crate::time::{Duration, Instant};
use std::fmt;

/// The NI clock (`nic.clock_period_us` of both stacks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockPolicy {
    pub period: Duration,
}

/// The NI's decision at one clock tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tick {
    /// No timer running: no interrupt.
    NoTimer,
    /// The host polled the clock within the last period: no interrupt.
    PolledRecently,
    /// Raise a clock interrupt.
    Interrupt,
}

impl fmt::Display for Tick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tick::NoTimer => write!(f, "no timer running"),
            Tick::PolledRecently => write!(f, "host polled recently"),
            Tick::Interrupt => write!(f, "clock interrupt"),
        }
    }
}

impl ClockPolicy {
    /// The tick's fetch returned the host's words.
    pub fn on_fetch(&self, now: Instant, timer_running: bool, last_poll: Instant) -> Tick {
        if !timer_running {
            Tick::NoTimer
        } else if now.since(last_poll) < self.period {
            Tick::PolledRecently
        } else {
            Tick::Interrupt
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Instant {
        Instant::ZERO + Duration::from_us(n)
    }

    #[test]
    fn clock_interrupts_only_while_a_timer_runs_and_the_host_is_away() {
        let c = ClockPolicy { period: Duration::from_us(10) };
        assert_eq!(c.on_fetch(us(100), false, us(0)), Tick::NoTimer);
        assert_eq!(c.on_fetch(us(100), true, us(95)), Tick::PolledRecently);
        assert_eq!(c.on_fetch(us(100), true, us(90)), Tick::Interrupt);
    }
}
