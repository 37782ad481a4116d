//! The polling watchdog (\[LCI] §5.1) of an NI: a firmware timer that
//! interrupts the host only when it does not pick packets up by polling.
//! One implementation for both stacks: the Open-MX receive queue
//! (`crate::nic::RxQueue`, composed with its coalescing policy) and the
//! LCI stack's NIs (`crate::nic::lanai`, with optimistic interrupt
//! protection).
//!
//! \[LCI] §5.1: "the NI starts a watchdog timer when it receives a packet"
//! (if none is running); "when the timer expires, the NI copies [the host's
//! count of the packets it processed] to NI memory using a single, small
//! DMA transfer. If the packet counter indicates that the host has
//! processed all packets delivered to it by the NI, then the NI cancels the
//! polling watchdog timer. If [...] the packet counter shows that the host
//! consumed *some* of the packets delivered to it, then the NI does not
//! generate an interrupt, but restarts the timer. Otherwise, the NI
//! generates an interrupt and restarts the timer." The study's point: "the
//! host uses polling when this is practical", and "generating an interrupt
//! for each incoming packet is usually not necessary".
//!
//! Optimistic interrupt protection (SPEC §2.4): the host toggles an
//! interrupts-enabled flag in its own memory without telling the NI; the
//! fetch reads it with the counter, and with interrupts disabled an expiry
//! without progress restarts the timer instead of interrupting
//! ([`Watchdog::on_fetched`]'s `irq_enabled`). A Linux host never masks the
//! Open-MX queue's line from user space, so there the flag always reads
//! enabled (`crate::nic::RxQueue::watchdog_fetched`).
//!
//! Where the interrupt comes from ([`Raises`]). The LCI NI has no
//! coalescing policy: every expiry without progress raises
//! ([`Raises::Own`]). The Open-MX queue composes the watchdog with its
//! coalescing policy ([`Raises::Held`]): the policy still decides *when*
//! an interrupt would be due; the watchdog decides *whether* it is still
//! needed. A raise the policy asks for while frames wait in the ring is
//! held ([`Watchdog::on_raise_wanted`]) until an expiry finds that the host
//! made no progress; then it goes out. An expiry that finds every frame
//! picked up drops the held raise (the queue tells the policy the host
//! saw every frame, `Coalescer::on_rearm` with none pending). An expiry
//! without progress before the policy asked makes the policy's next raise
//! go out at once.
//!
//! This module owns that decision and its counters. It does not own the
//! interrupt line nor the timer event (`crate::nic::RxQueue` and
//! `crate::sim` `nic_path`, for both firmwares), the timing of the fetch
//! (the NIC's, `crate::nic::Nic::fetch_host_words`, told to
//! [`Watchdog::fetch`]), nor the counts of packets delivered and picked up
//! (the queue keeps them as frames leave the ring, by NAPI or by a busy
//! poll; the LCI stack as its NI takes packets in and its host consumes
//! them).

use crate::time::{Duration, Instant};
use std::fmt;

/// Watchdog states (\[LCI] §5.1 names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// No timer running.
    Idle,
    /// The timer runs until this instant.
    Running(Instant),
    /// The timer expired; the DMA read of the host's state is in flight
    /// and returns at this instant.
    Fetching(Instant),
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            State::Idle => write!(f, "idle"),
            State::Running(_) => write!(f, "timer running"),
            State::Fetching(_) => write!(f, "fetching host state"),
        }
    }
}

/// Where the interrupt an expiry without progress lets out comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Raises {
    /// The watchdog's own: every expiry without progress raises (the LCI
    /// NI, which has no coalescing policy).
    Own,
    /// A coalescing policy's: only a raise the policy asked for and the
    /// watchdog held goes out (the Open-MX receive queue).
    Held,
}

/// What the firmware does after a timer event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// A stale event (an older generation): nothing.
    Stale,
    /// Schedule the watchdog's next event at this instant, this generation
    /// (the fetch's return, or the restarted timer).
    Arm(Instant, u32),
    /// No progress, interrupts enabled, and a raise is due (held, or the
    /// watchdog's own): raise the interrupt now; the timer restarts (the
    /// next event as in `Arm`).
    Raise(Instant, u32),
    /// The host picked up every packet: the timer stops; `held` says
    /// whether a raise the policy asked for was dropped.
    Drained { held: bool },
}

impl fmt::Display for Expiry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expiry::Stale => write!(f, "none"),
            Expiry::Arm(..) => write!(f, "start/restart timer"),
            Expiry::Raise(..) => write!(f, "raise interrupt and restart"),
            Expiry::Drained { .. } => write!(f, "cancel timer"),
        }
    }
}

/// One NI's (one receive queue's) polling watchdog.
#[derive(Debug, Clone)]
pub struct Watchdog {
    interval: Duration,
    raises: Raises,
    state: State,
    /// Generation of the pending timer event; stale events carry an older one.
    gen: u32,
    /// The host's picked-up count as of the last fetch.
    seen: u64,
    /// The policy asked for a raise that waits for the next expiry.
    held: bool,
    /// An expiry found no progress before the policy asked: its next raise
    /// goes out at once.
    late: bool,
    /// Raises the policy asked for that were held, and those of them the
    /// host made unnecessary by polling (dropped at a drained expiry).
    pub holds: u64,
    pub saved: u64,
    /// Fetches of the host's state (timer expiries).
    pub fetches: u64,
    /// Interrupts the watchdog let out ([`Expiry::Raise`]).
    pub raised: u64,
}

impl Watchdog {
    /// A watchdog of `interval` whose interrupts come from `raises`.
    pub fn new(interval: Duration, raises: Raises) -> Self {
        Watchdog {
            interval,
            raises,
            state: State::Idle,
            gen: 0,
            seen: 0,
            held: false,
            late: false,
            holds: 0,
            saved: 0,
            fetches: 0,
            raised: 0,
        }
    }

    pub fn state(&self) -> State {
        self.state
    }

    fn start(&mut self, at: Instant) -> (Instant, u32) {
        self.gen = self.gen.wrapping_add(1);
        self.state = State::Running(at);
        (at, self.gen)
    }

    /// A packet reached the NI at `now` (the Open-MX queue: its DMA into
    /// the ring completed): the timer starts if none runs (the event to
    /// schedule), else nothing.
    #[inline]
    pub fn on_delivered(&mut self, now: Instant) -> Option<(Instant, u32)> {
        (self.state == State::Idle).then(|| self.start(now + self.interval))
    }

    /// The policy asks for a raise while frames wait in the ring: `true` if
    /// it goes out now (an expiry already found the host not polling),
    /// `false` if it is held until the next expiry.
    #[inline]
    pub fn on_raise_wanted(&mut self) -> bool {
        if self.late {
            self.late = false;
            return true;
        }
        if !self.held {
            self.held = true;
            self.holds += 1;
        }
        false
    }

    /// The queue raised its interrupt: nothing is held any more.
    #[inline]
    pub fn on_irq_raised(&mut self) {
        self.held = false;
        self.late = false;
    }

    /// Whether the event of generation `gen` is the running timer's expiry
    /// (then the NI fetches the host's state, [`Watchdog::fetch`]).
    #[inline]
    pub fn expires(&self, gen: u32) -> bool {
        gen == self.gen && matches!(self.state, State::Running(_))
    }

    /// The timer expired: the NI fetches the host's state, back at `back`.
    /// Returns the event to schedule then (its generation).
    pub fn fetch(&mut self, back: Instant) -> (Instant, u32) {
        debug_assert!(matches!(self.state, State::Running(_)), "a fetch without an expiry: {}", self.state);
        self.fetches += 1;
        self.gen = self.gen.wrapping_add(1);
        self.state = State::Fetching(back);
        (back, self.gen)
    }

    /// The fetch of generation `gen` returned at `now` with the host's
    /// interrupts-enabled flag and its count of the packets it picked up,
    /// `taken`, of the `delivered` the NI gave it so far: \[LCI] §5.1's rule.
    pub fn on_fetched(&mut self, now: Instant, gen: u32, irq_enabled: bool, delivered: u64, taken: u64) -> Expiry {
        if gen != self.gen || !matches!(self.state, State::Fetching(_)) {
            return Expiry::Stale;
        }
        let progress = taken > self.seen;
        self.seen = taken;
        if taken >= delivered {
            self.state = State::Idle;
            self.gen = self.gen.wrapping_add(1);
            self.late = false;
            let held = std::mem::take(&mut self.held);
            self.saved += held as u64;
            return Expiry::Drained { held };
        }
        let (at, gen) = self.start(now + self.interval);
        if progress || !irq_enabled {
            return Expiry::Arm(at, gen);
        }
        let raise = match self.raises {
            Raises::Own => true,
            // The raise is the queue's now (it may wait for the line's re-arm).
            Raises::Held => std::mem::take(&mut self.held),
        };
        if raise {
            self.raised += 1;
            Expiry::Raise(at, gen)
        } else {
            self.late = true;
            Expiry::Arm(at, gen)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Instant {
        Instant::ZERO + Duration::from_us(n)
    }

    fn wd() -> Watchdog {
        Watchdog::new(Duration::from_us(10), Raises::Held)
    }

    /// An LCI NI's watchdog: its own raises.
    fn lci() -> Watchdog {
        Watchdog::new(Duration::from_us(10), Raises::Own)
    }

    /// Runs an LCI NI's timer to its expiry and starts the fetch, back at
    /// the expiry; returns that instant and the fetch's generation.
    fn lci_expire(w: &mut Watchdog) -> (Instant, u32) {
        let State::Running(t) = w.state() else { panic!("timer not running: {}", w.state()) };
        assert!(w.expires(w.gen));
        w.fetch(t)
    }

    /// Runs the timer to its fetch (1 us) and the fetch's return, the
    /// host's flag reading enabled (the Open-MX queue).
    fn expire(w: &mut Watchdog, delivered: u64, taken: u64) -> Expiry {
        let (State::Running(t), g) = (w.state(), w.gen) else { panic!("timer not running: {}", w.state()) };
        assert!(w.expires(g));
        let (back, g2) = w.fetch(t + Duration::from_us(1));
        w.on_fetched(back, g2, true, delivered, taken)
    }

    #[test]
    fn a_polling_host_drops_the_held_raise_and_stops_the_timer() {
        let mut w = wd();
        assert_eq!(w.on_delivered(us(0)), Some((us(10), 1)));
        assert_eq!(w.on_delivered(us(2)), None, "one timer for many frames");
        assert!(!w.on_raise_wanted(), "the policy's raise is held");
        assert_eq!(expire(&mut w, 2, 2), Expiry::Drained { held: true });
        assert_eq!((w.state(), w.holds, w.saved, w.fetches), (State::Idle, 1, 1, 1));
    }

    #[test]
    fn progress_restarts_without_raising_and_no_progress_raises() {
        let mut w = wd();
        w.on_delivered(us(0));
        assert!(!w.on_raise_wanted());
        // One of three picked up: progress, the timer restarts.
        assert_eq!(expire(&mut w, 3, 1), Expiry::Arm(us(21), 3));
        // Nothing more picked up: the held raise goes out, the timer restarts.
        assert_eq!(expire(&mut w, 3, 1), Expiry::Raise(us(32), 5));
        w.on_irq_raised();
        assert_eq!(expire(&mut w, 3, 3), Expiry::Drained { held: false });
        assert_eq!(w.saved, 0);
    }

    #[test]
    fn an_expiry_before_the_policy_asked_lets_its_raise_through() {
        let mut w = wd();
        w.on_delivered(us(0));
        assert_eq!(expire(&mut w, 1, 0), Expiry::Arm(us(21), 3));
        assert!(w.on_raise_wanted(), "nobody polls: the raise goes out at once");
        assert_eq!(w.holds, 0);
    }

    #[test]
    fn stale_events_do_nothing() {
        let mut w = wd();
        w.on_delivered(us(0));
        assert!(!w.expires(0));
        assert_eq!(w.on_fetched(us(10), 0, true, 1, 0), Expiry::Stale);
        assert_eq!(expire(&mut w, 1, 1), Expiry::Drained { held: false });
        assert!(!w.expires(w.gen));
        assert_eq!(w.on_fetched(us(30), w.gen, true, 1, 1), Expiry::Stale);
        assert_eq!(State::Fetching(us(1)).to_string(), "fetching host state");
    }

    #[test]
    fn never_interrupts_when_the_host_consumed_every_packet() {
        let mut w = lci();
        assert_eq!(w.on_delivered(us(0)), Some((us(10), 1)));
        // More packets while running: no second timer.
        assert_eq!(w.on_delivered(us(3)), None);
        let (t, g) = lci_expire(&mut w);
        // Interrupts enabled, no progress seen before, but all 2 packets consumed.
        assert_eq!(w.on_fetched(t, g, true, 2, 2), Expiry::Drained { held: false });
        assert_eq!((w.state(), w.raised, w.fetches), (State::Idle, 0, 1));
    }

    #[test]
    fn restarts_without_interrupt_when_disabled_or_progress() {
        let mut w = lci();
        w.on_delivered(us(0));
        let (t, g) = lci_expire(&mut w);
        // Interrupts disabled, nothing consumed: restart.
        assert_eq!(w.on_fetched(t, g, false, 3, 0), Expiry::Arm(t + Duration::from_us(10), g + 1));
        let (t, g) = lci_expire(&mut w);
        // Enabled, but the host consumed one more: progress, restart.
        assert_eq!(w.on_fetched(t, g, true, 3, 1), Expiry::Arm(t + Duration::from_us(10), g + 1));
        assert_eq!(w.raised, 0);
        // Disabled holds a policy's raise back too (never the case on a Linux host).
        let mut w = wd();
        w.on_delivered(us(0));
        assert!(!w.on_raise_wanted());
        let (t, g) = lci_expire(&mut w);
        assert!(matches!(w.on_fetched(t, g, false, 1, 0), Expiry::Arm(..)));
        assert_eq!(w.raised, 0);
    }

    #[test]
    fn raises_exactly_one_interrupt_per_expiry_without_progress() {
        let mut w = lci();
        w.on_delivered(us(0));
        let (t, g) = lci_expire(&mut w);
        let again = t + Duration::from_us(10);
        // The watchdog's own raise: no policy asked for it.
        assert_eq!(w.on_fetched(t, g, true, 1, 0), Expiry::Raise(again, g + 1));
        assert_eq!(w.raised, 1);
        // A stale or duplicate expiry or fetch does nothing.
        assert!(!w.expires(g));
        assert_eq!(w.on_fetched(t, g, true, 1, 0), Expiry::Stale);
        assert_eq!(w.raised, 1);
        // Still no progress at the next expiry: one more.
        let (t, g) = lci_expire(&mut w);
        assert!(matches!(w.on_fetched(t, g, true, 1, 0), Expiry::Raise(..)));
        assert_eq!(w.raised, 2);
        // The handler consumed it: next expiry cancels.
        let (t, g) = lci_expire(&mut w);
        assert_eq!(w.on_fetched(t, g, true, 1, 1), Expiry::Drained { held: false });
        assert_eq!((w.raised, w.fetches, w.holds), (2, 3, 0));
    }

    #[test]
    fn display_names() {
        assert_eq!(State::Running(us(1)).to_string(), "timer running");
        assert_eq!(Expiry::Raise(us(1), 0).to_string(), "raise interrupt and restart");
        assert_eq!(Expiry::Drained { held: true }.to_string(), "cancel timer");
    }
}
