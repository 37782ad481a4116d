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
//! Both stacks use [`ClockPolicy`]: the LCI stack (`crate::lci`) with its
//! per-peer [`SoftTimers`] (the delayed explicit acks of
//! `crate::library::lci::reliable`), the Open-MX NIC (`crate::sim::clock`,
//! `nic.clock_period_us`) with the library's protocol deadlines (delayed
//! acks, resends: `crate::proto::Endpoint`) as its running timers.
//!
//! This module does not time the tick, the fetch or the signal (each stack
//! does), nor decide what a timer does (`crate::library::lci::reliable`,
//! `crate::proto`).

use crate::time::{Duration, Instant};
use std::fmt;

/// Host soft timers, one per peer (the delayed explicit ack to that peer).
#[derive(Debug, Clone)]
pub struct SoftTimers {
    due: Vec<Option<Instant>>,
}

impl SoftTimers {
    pub fn new(peers: u32) -> Self {
        SoftTimers { due: vec![None; peers as usize] }
    }

    /// Arms the timer of `peer` at `at` unless it is already armed (an earlier deadline wins).
    pub fn arm(&mut self, peer: u32, at: Instant) {
        let d = &mut self.due[peer as usize];
        if d.is_none() {
            *d = Some(at);
        }
    }

    /// Disarms the timer of `peer` (its ack went out piggy-backed).
    pub fn disarm(&mut self, peer: u32) {
        self.due[peer as usize] = None;
    }

    /// Whether any timer is running (the word the NI reads).
    pub fn running(&self) -> bool {
        self.due.iter().any(Option::is_some)
    }

    /// The earliest deadline.
    pub fn next(&self) -> Option<Instant> {
        self.due.iter().flatten().min().copied()
    }

    /// The library polled the clock at `now`: the first peer whose timer is
    /// due (it is disarmed), if any.
    pub fn expired(&mut self, now: Instant) -> Option<u32> {
        let (peer, _) = self.due.iter().enumerate().filter_map(|(p, d)| d.map(|d| (p, d))).find(|&(_, d)| d <= now)?;
        self.due[peer] = None;
        Some(peer as u32)
    }
}

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

    #[test]
    fn soft_timers_fire_when_polled_after_the_deadline() {
        let mut t = SoftTimers::new(4);
        assert!(!t.running());
        t.arm(2, us(50));
        t.arm(2, us(70)); // already armed: keeps 50
        t.arm(1, us(60));
        assert_eq!(t.next(), Some(us(50)));
        assert_eq!(t.expired(us(49)), None);
        assert_eq!(t.expired(us(65)), Some(1));
        assert_eq!(t.expired(us(65)), Some(2));
        assert_eq!(t.expired(us(65)), None);
        assert!(!t.running());
        t.arm(3, us(1));
        t.disarm(3);
        assert!(!t.running());
    }
}
