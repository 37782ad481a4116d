//! The polling watchdog (\[LCI] §5.1) of one receive queue: a firmware
//! timer beside the coalescing policy that holds back the interrupt the
//! policy asks for while a process may still pick the frames up by polling.
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
//! Composition with coalescing: the policy still decides *when* an
//! interrupt would be due; the watchdog decides *whether* it is still
//! needed. A raise the policy asks for while frames wait in the ring is
//! held ([`Watchdog::on_raise_wanted`]) until an expiry finds that the host
//! made no progress; then it goes out. An expiry that finds every frame
//! picked up drops the held raise (the queue tells the policy the host
//! saw every frame, `Coalescer::on_rearm` with none pending). An expiry
//! without progress before the policy asked makes the policy's next raise
//! go out at once. The host's interrupts-enabled flag of \[LCI] (optimistic
//! interrupt protection) has no counterpart here: a Linux host never masks
//! the queue's line from user space, so the flag always reads enabled.
//!
//! This module owns that decision and its counters. It does not own the
//! interrupt line nor the timer event (`crate::nic::RxQueue` and
//! `crate::sim`), nor the count of frames the host picked up (the queue
//! keeps it as frames leave the ring, by NAPI or by a busy poll).

use crate::time::{Duration, Instant};
use std::fmt;

/// Watchdog states (\[LCI] §5.1 names, as `crate::lci::watchdog`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// No timer running.
    Idle,
    /// The timer runs until this instant.
    Running(Instant),
    /// The timer expired; the DMA read of the host's counter is in flight
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

/// What the firmware does after a timer event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// A stale event (an older generation): nothing.
    Stale,
    /// Schedule the watchdog's next event at this instant, this generation
    /// (the fetch's return, or the restarted timer).
    Arm(Instant, u32),
    /// No progress and a raise was held: raise the interrupt now; the
    /// timer restarts (the next event as in `Arm`).
    Raise(Instant, u32),
    /// The host picked up every frame: the timer stops; `held` says
    /// whether a raise the policy asked for was dropped.
    Drained { held: bool },
}

/// One receive queue's polling watchdog.
#[derive(Debug, Clone)]
pub struct Watchdog {
    interval: Duration,
    /// The small DMA read of the host's counter (the NIC's DMA read
    /// latency, `nic.tx_dma_startup_ns`).
    fetch: Duration,
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
    /// Fetches of the host's counter (timer expiries).
    pub fetches: u64,
}

impl Watchdog {
    /// A watchdog of `interval` whose fetch of the host's state takes `fetch`.
    pub fn new(interval: Duration, fetch: Duration) -> Self {
        Watchdog {
            interval,
            fetch,
            state: State::Idle,
            gen: 0,
            seen: 0,
            held: false,
            late: false,
            holds: 0,
            saved: 0,
            fetches: 0,
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

    /// A frame's DMA into the ring completed at `now`: the timer starts if
    /// none runs (the event to schedule), else nothing.
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

    /// The watchdog's event of generation `gen` fired at `now`; `delivered`
    /// and `taken` are the frames the NIC put in the ring and those the host
    /// took out of it, so far.
    pub fn on_timer(&mut self, now: Instant, gen: u32, delivered: u64, taken: u64) -> Expiry {
        if gen != self.gen {
            return Expiry::Stale;
        }
        match self.state {
            State::Idle => Expiry::Stale,
            State::Running(_) => {
                self.fetches += 1;
                self.gen = self.gen.wrapping_add(1);
                let at = now + self.fetch;
                self.state = State::Fetching(at);
                Expiry::Arm(at, self.gen)
            }
            State::Fetching(_) => {
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
                if progress {
                    Expiry::Arm(at, gen)
                } else if std::mem::take(&mut self.held) {
                    // The raise is the queue's now (it may wait for the
                    // line's re-arm).
                    Expiry::Raise(at, gen)
                } else {
                    self.late = true;
                    Expiry::Arm(at, gen)
                }
            }
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
        Watchdog::new(Duration::from_us(10), Duration::from_us(1))
    }

    /// Runs the timer to its fetch and the fetch's return.
    fn expire(w: &mut Watchdog, delivered: u64, taken: u64) -> Expiry {
        let (State::Running(t), g) = (w.state(), w.gen) else { panic!("timer not running: {}", w.state()) };
        let Expiry::Arm(back, g2) = w.on_timer(t, g, delivered, taken) else { panic!("no fetch") };
        assert_eq!(back, t + Duration::from_us(1));
        w.on_timer(back, g2, delivered, taken)
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
        assert_eq!(w.on_timer(us(10), 0, 1, 0), Expiry::Stale);
        assert_eq!(expire(&mut w, 1, 1), Expiry::Drained { held: false });
        assert_eq!(w.on_timer(us(30), w.gen, 1, 1), Expiry::Stale);
        assert_eq!(State::Fetching(us(1)).to_string(), "fetching host state");
    }
}
