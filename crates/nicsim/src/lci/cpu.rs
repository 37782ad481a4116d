//! Where an LCI host's CPU is (in the library polling, computing, in a
//! signal handler, asleep) and what a signal does to it (SPEC §2.4: NI
//! interrupts are delivered as a signal to the process, kernel dispatch +
//! user signal handler; a handler that finds interrupts disabled returns at
//! once).
//!
//! This module owns that decision (sans-I/O: [`Cpu::on_signal`]) and,
//! in the stack ([`Stack`]), its application: a signal's delivery, the
//! library's idle choice (leave the handler, poll, compute or sleep) and
//! the NI's fetch of the host words these read. The interrupts-enabled flag
//! itself lives in host memory (`super::host::Host::irq_enabled`). The library keeps interrupts
//! disabled whenever it runs (polling, sending, in the handler) and enabled
//! while the program computes or sleeps outside it.

use super::{host_origin, workload, Kind, Stack};
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
    pub gen: u32,
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

impl Stack {
    /// NI `h` fetches host words (interrupts-enabled flag, processed counter,
    /// timer word, last poll) with one small host -> NI DMA: firmware DMA
    /// set-up, then the bus. Returns when the words are in NI SRAM.
    pub(super) fn ni_fetch(&mut self, h: u32, now: Instant) -> Instant {
        self.ni_host_fetches += 1;
        let t = self.nis[h as usize].host_fetch_start(now);
        self.nis[h as usize].refresh_dma(t, &mut self.buses[h as usize])
    }

    /// An NI interrupt reaches host `h` as a signal (SPEC §2.4;
    /// `Kind::Signal`).
    pub fn signal(&mut self, h: u32, now: Instant) {
        let cost = self.hosts[h as usize].signal_cost();
        let c = &mut self.cpu[h as usize];
        match c.on_signal(now, self.hosts[h as usize].irq_enabled) {
            Signal::Merged => self.signals_merged += 1,
            Signal::ReturnAtOnce => {
                self.signals_at_once += 1;
                let host = &mut self.hosts[h as usize];
                host.interrupts += 1;
                if host.spin_since.is_some() {
                    host.end_spin(now);
                    host.busy = true;
                    self.at(now + cost, host_origin(h), Kind::HostDone, h, 0);
                } else {
                    // Busy in a library action: the CPU time is paid before the next one.
                    c.stolen += cost;
                }
            }
            Signal::Handle { resume } => {
                c.gen = c.gen.wrapping_add(1);
                c.mode = Mode::Handler { resume };
                let host = &mut self.hosts[h as usize];
                host.interrupts += 1;
                host.irq_enabled = false;
                host.busy = true;
                self.at(now + cost, host_origin(h), Kind::HostDone, h, 0);
            }
        }
    }

    /// `Kind::ComputeDone` of generation `gen`: the computation ends
    /// unless a signal preempted it since.
    pub fn compute_done(&mut self, h: u32, gen: u32, now: Instant) {
        let c = &mut self.cpu[h as usize];
        if c.gen == gen && matches!(c.mode, Mode::Compute { .. }) {
            c.mode = Mode::Library;
            self.hosts[h as usize].irq_enabled = false;
            self.job.compute_done(h);
            self.host_next(h, now);
        }
    }

    /// Host `h`'s library has nothing to do: leave the handler, or ask the
    /// program whether to keep polling, compute or sleep. Returns whether
    /// the host left the library (or was re-dispatched).
    pub(super) fn library_idle(&mut self, h: u32, now: Instant) -> bool {
        let i = h as usize;
        let control = match self.cpu[i].mode {
            Mode::Handler { resume: Some(d) } => workload::Control::Compute(d),
            Mode::Handler { resume: None } => workload::Control::Sleep,
            _ => {
                let c = self.job.control(h, now);
                if self.flush_sends(now) && !self.hosts[i].outbox.is_empty() {
                    self.host_next(h, now);
                    return true;
                }
                c
            }
        };
        match control {
            workload::Control::Wait => false,
            workload::Control::Compute(d) => {
                let c = &mut self.cpu[i];
                c.gen = c.gen.wrapping_add(1);
                c.mode = Mode::Compute { end: now + d };
                let gen = c.gen;
                self.hosts[i].irq_enabled = true;
                self.at(now + d, host_origin(h), Kind::ComputeDone, h, gen);
                true
            }
            workload::Control::Sleep => {
                self.cpu[i].mode = Mode::Sleep;
                self.hosts[i].irq_enabled = true;
                true
            }
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
