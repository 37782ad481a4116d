//! The \[LCI] polling watchdog with optimistic interrupt protection (SPEC
//! §2.4), as a sans-I/O state machine of the NI firmware.
//!
//! The host toggles an interrupts-enabled flag in its own memory without
//! telling the NI. The NI starts a timer when a packet arrives (if none is
//! running); at expiry it fetches, with one small host -> NI DMA, that flag
//! and the host's processed-packet counter, then: everything processed ->
//! cancel; interrupts disabled or some progress since the last fetch ->
//! restart the timer; otherwise raise an interrupt and restart.
//!
//! This module owns only that decision. It does not time the fetch (the
//! world prices it on the bus with `Ni::refresh_start`/`refresh_dma`) nor
//! deliver the interrupt (the world turns it into a signal to the host
//! process: kernel dispatch + user signal handler, `Host::signal_cost`).

use crate::config::WatchdogDelay;
use crate::time::Instant;
use std::fmt;

/// Watchdog states (SPEC §2.4 names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// No timer running.
    Idle,
    /// The timer runs until this instant.
    Running(Instant),
    /// The timer expired; the fetch of the host flag and counter is in flight.
    Fetching,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            State::Idle => write!(f, "idle"),
            State::Running(_) => write!(f, "timer running"),
            State::Fetching => write!(f, "fetching host state"),
        }
    }
}

/// What the firmware must do after an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing.
    None,
    /// (Re)start the timer: expiry at this instant.
    StartTimer(Instant),
    /// Fetch the host's interrupts-enabled flag and processed counter (small DMA).
    Fetch,
    /// Everything processed: the timer is cancelled.
    Cancel,
    /// Raise an interrupt, and the timer restarts: expiry at this instant.
    Interrupt(Instant),
    /// `none`: raise an interrupt at once (no timer).
    InterruptNow,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::None => write!(f, "none"),
            Action::StartTimer(_) => write!(f, "start/restart timer"),
            Action::Fetch => write!(f, "fetch host state"),
            Action::Cancel => write!(f, "cancel timer"),
            Action::Interrupt(_) => write!(f, "raise interrupt and restart"),
            Action::InterruptNow => write!(f, "raise interrupt"),
        }
    }
}

/// One NI's watchdog.
#[derive(Debug, Clone)]
pub struct Watchdog {
    delay: WatchdogDelay,
    pub state: State,
    /// The host's processed counter as of the last fetch.
    seen_consumed: u64,
    /// Counters.
    pub fetches: u64,
    pub raised: u64,
}

impl Watchdog {
    pub fn new(delay: WatchdogDelay) -> Self {
        Watchdog { delay, state: State::Idle, seen_consumed: 0, fetches: 0, raised: 0 }
    }

    /// A packet reached the NI (`Immediate`: call [`Watchdog::packet_delivered`] instead).
    pub fn packet_arrived(&mut self, now: Instant) -> Action {
        match (self.delay, self.state) {
            (WatchdogDelay::After(d), State::Idle) => {
                let t = now + d;
                self.state = State::Running(t);
                Action::StartTimer(t)
            }
            _ => Action::None,
        }
    }

    /// A packet became visible to the host: with `none` the NI interrupts at once.
    pub fn packet_delivered(&mut self) -> Action {
        if self.delay == WatchdogDelay::Immediate {
            self.raised += 1;
            Action::InterruptNow
        } else {
            Action::None
        }
    }

    /// The timer fired at `now` (`deadline` identifies the timer; a stale one is ignored).
    pub fn timer_expired(&mut self, deadline: Instant) -> Action {
        if self.state != State::Running(deadline) {
            return Action::None;
        }
        self.state = State::Fetching;
        self.fetches += 1;
        Action::Fetch
    }

    /// The fetch returned the host's flag and counter; `received` is the
    /// number of packets the NI has taken in for this host so far.
    pub fn host_state_fetched(&mut self, now: Instant, irq_enabled: bool, consumed: u64, received: u64) -> Action {
        if self.state != State::Fetching {
            return Action::None;
        }
        let WatchdogDelay::After(d) = self.delay else { return Action::None };
        let progress = consumed > self.seen_consumed;
        self.seen_consumed = consumed;
        if consumed >= received {
            self.state = State::Idle;
            return Action::Cancel;
        }
        let t = now + d;
        self.state = State::Running(t);
        if !irq_enabled || progress {
            Action::StartTimer(t)
        } else {
            self.raised += 1;
            Action::Interrupt(t)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    fn us(n: u64) -> Instant {
        Instant::ZERO + Duration::from_us(n)
    }

    fn expire(w: &mut Watchdog) -> Instant {
        let State::Running(t) = w.state else { panic!("timer not running: {}", w.state) };
        assert_eq!(w.timer_expired(t), Action::Fetch);
        t
    }

    #[test]
    fn never_interrupts_when_the_host_consumed_every_packet() {
        let mut w = Watchdog::new(WatchdogDelay::After(Duration::from_us(10)));
        assert_eq!(w.packet_arrived(us(0)), Action::StartTimer(us(10)));
        // More packets while running: no second timer.
        assert_eq!(w.packet_arrived(us(3)), Action::None);
        let t = expire(&mut w);
        // Interrupts enabled, no progress seen before, but all 2 packets consumed.
        assert_eq!(w.host_state_fetched(t, true, 2, 2), Action::Cancel);
        assert_eq!(w.state, State::Idle);
        assert_eq!(w.raised, 0);
    }

    #[test]
    fn restarts_without_interrupt_when_disabled_or_progress() {
        let mut w = Watchdog::new(WatchdogDelay::After(Duration::from_us(10)));
        w.packet_arrived(us(0));
        let t = expire(&mut w);
        // Interrupts disabled, nothing consumed: restart.
        assert_eq!(w.host_state_fetched(t, false, 0, 3), Action::StartTimer(t + Duration::from_us(10)));
        let t = expire(&mut w);
        // Enabled, but the host consumed one more: progress, restart.
        assert_eq!(w.host_state_fetched(t, true, 1, 3), Action::StartTimer(t + Duration::from_us(10)));
        assert_eq!(w.raised, 0);
    }

    #[test]
    fn raises_exactly_one_interrupt_per_expiry_without_progress() {
        let mut w = Watchdog::new(WatchdogDelay::After(Duration::from_us(10)));
        w.packet_arrived(us(0));
        let t = expire(&mut w);
        let again = t + Duration::from_us(10);
        assert_eq!(w.host_state_fetched(t, true, 0, 1), Action::Interrupt(again));
        assert_eq!(w.raised, 1);
        // A stale or duplicate expiry does nothing.
        assert_eq!(w.timer_expired(t), Action::None);
        assert_eq!(w.host_state_fetched(t, true, 0, 1), Action::None);
        assert_eq!(w.raised, 1);
        // The handler consumed it: next expiry cancels.
        expire(&mut w);
        assert_eq!(w.host_state_fetched(again, true, 1, 1), Action::Cancel);
        assert_eq!(w.raised, 1);
    }

    #[test]
    fn none_interrupts_per_delivery_and_inf_never() {
        let mut w = Watchdog::new(WatchdogDelay::Immediate);
        assert_eq!(w.packet_arrived(us(0)), Action::None);
        assert_eq!(w.packet_delivered(), Action::InterruptNow);
        let mut w = Watchdog::new(WatchdogDelay::Never);
        assert_eq!(w.packet_arrived(us(0)), Action::None);
        assert_eq!(w.packet_delivered(), Action::None);
        assert_eq!(w.raised, 0);
    }

    #[test]
    fn display_names() {
        assert_eq!(State::Running(us(1)).to_string(), "timer running");
        assert_eq!(WatchdogDelay::Never.to_string(), "inf");
        assert_eq!(Action::Interrupt(us(1)).to_string(), "raise interrupt and restart");
    }
}
