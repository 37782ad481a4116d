//! The \[LCI] stack (SPEC §2.4): the user-level library of the study's
//! Pentium Pro hosts, their 32-bit/33 MHz PCI buses and the firmware of
//! their programmable LANai 4.1 NIs, on a 3D grid of Myrinet switches.
//!
//! Its parts are components of the simulated world (`crate::sim::World`,
//! `protocol.stack = "lci"`), each with its own state: each host holds its
//! library (`crate::library::lci::Lib`, the second library beside the
//! Open-MX one: PIO sends, receive-buffer queue, polling, upcall, what a
//! signal does to its signalled core, its side of the multicast schemes,
//! and its host's process when the program runs one per host: the one
//! driver, `crate::library::driver`), beside the Open-MX processes; each
//! host's NIC
//! holds the LANai firmware (`crate::nic::lanai`, [`Packet`]: buffers, DMA
//! engines, delivery plans, the multicast firmware's forwarding table and
//! forwards, the polling watchdog,
//! the NI clock, the NI's packet counters); the NIs send on the world's
//! network, the platform's grid (`crate::net::grid`, in the world's
//! `crate::net::Network`); the world's run holds the program the hosts run
//! ([`Running`]: a [`Program`], the run's part of one process per host,
//! [`process`], or the whole-job DSM, [`dsm`]).
//!
//! This module owns the parts' and the program's construction ([`build`])
//! and the program's state ([`Running`]). The rules that act across a
//! host and its NI or between NIs, and the routing of what a host's
//! library answers (its events queued, its PIO across its NIC's bus (the
//! host's PCI bus, `crate::host::bus`, which the NI's DMAs share), what
//! its program learns given to the program, the program's sends and
//! compute handed to the senders' libraries) are the world's: the one
//! router of both libraries' outputs (`crate::sim` `kernel`'s `route`)
//! and the stack's rules it hands them to (`crate::sim` `lci_stack`,
//! `World` methods on the world's hosts, grid, program and queue): they queue
//! the world's events (`crate::sim` `Ev`) for the parts they address and
//! keep nothing between events but [`Running`]'s reused buffers. The world's
//! stall watch (`crate::sim` `stall`) ends a run whose NIs sent and
//! delivered no packet for too long; the world names the run's metrics
//! from the parts' counters (`crate::sim` `metrics`). It also uses
//! `crate::nic::delivery` (the five arrival detection strategies, shared
//! with the Open-MX NIC). It has no kernel receive path and no NAPI: the
//! NI delivers into user memory, and an interrupt is a signal to the
//! process.
//!
//! One packet's life: the library's send path (CPU) -> `Write` (PIO of
//! header + payload + descriptor across the sender's bus) -> NI firmware
//! (`fw_tx_cycles` + one DMA set-up) -> the network DMA starts once the
//! receiving NI has a free receive buffer (Myrinet back-pressure) -> grid
//! (cut-through) -> receiving NI firmware (`fw_rx_cycles` + set-up) -> the
//! strategy's NI -> host DMA(s) on the receiver's bus -> visible to the
//! host -> poll + upcall + free.
//!
//! Multicast ([`multicast`]; the broadcast benchmark, a program of
//! `crate::workload` run by [`process`]): per-sender
//! spanning trees whose packets are forwarded by the host library or by
//! the NI firmware.
//!
//! Interrupts and timers (`docs/lci.md`): the host CPU modes and signal
//! delivery (`crate::host::core::SignalledCore`, acted on by the library),
//! the NI polling watchdog (`crate::nic::watchdog`,
//! shared with the Open-MX NIC), host soft timers and NI clock interrupts
//! (`crate::nic::timers`), the reliable
//! protocol (`crate::library::lci`), and the DSM ([`dsm`]) and FFT all-to-all
//! ([`process`], `Drive::Idle`) programs; the rules wire them with the
//! events after [`FwEv::RefreshDone`]; `crate::library::lci` holds what a program and
//! its library say to each other.
//!
//! The program the hosts run is a [`Program`]. Stream, ping-pong, the
//! broadcast benchmark, ASP, QR and the FFT all-to-all are
//! `crate::workload::Program`s, one per host, the operation sequences of
//! `crate::workload` that the Open-MX library runs too: each host's
//! library holds its process and runs it at its idle turns and compute
//! ends (the FFT); the world runs one its upcalls drive (ASP, QR, the
//! broadcast benchmark, stream, ping-pong) at those upcalls, because the
//! broadcast benchmark's root waits for its broadcast to reach every
//! other host, which the run counts ([`Processes`], `process`: what is
//! not one host's). The DSM ([`Dsm`]) is a whole-job program: it
//! keeps the state of every host's part together (its home nodes answer
//! whoever asks), told by the stack what reached which host (the upcall
//! of a message's last packet) and what compute ended, and answering
//! what each host sends or does next. A program times nothing (the world
//! or the library calls it with `now`). Both are built by `program`.
//!
//! Its events are the world's, each addressed to one part: host
//! `h`'s library (`crate::sim::Ev::LciLibrary`, a [`LibEv`]), NI `h`'s
//! firmware (`Ev::Lanai`, a [`FwEv`]), NI `h`'s watchdog and clock (the
//! Open-MX NIC's `Ev::WatchdogTimer`, `Ev::ClockTick`, `Ev::ClockFetched`),
//! each with one `u32`, a packet's index in that NI's store
//! (`crate::nic::lanai::Ni::packets`, bounded) or a generation. The world
//! hands each to the rule of its kind (`crate::sim` `lci_stack`), which
//! queues what it schedules as it goes, in its order, and then asks
//! whether an NI's store overflowed or the program is done
//! (`Running::done`).

pub mod dsm;
pub mod multicast;
pub mod process;

use crate::config::LciScenario;
use crate::config::Workload;
use crate::library::driver::Driver;
pub use crate::library::lci::Control;
use crate::library::lci::Outgoing;
use crate::library::lci::{Hosted, Lib};
pub use crate::library::LibEv;
use crate::metrics::LinkBound;
pub use crate::nic::lanai::FwEv;
use crate::nic::lanai::Ni;
pub use crate::nic::lanai::Packet;
use crate::{Metrics, Scenario, SimError};
pub use dsm::Dsm;
use process::Processes;

/// The program the hosts run: one process per host (the broadcast
/// benchmark, ASP, QR, FFT all-to-all, stream, ping-pong), whose
/// processes the hosts' libraries hold and the run holds the rest of
/// ([`Processes`]: the rank map, the broadcast benchmark's wait across
/// hosts, the measurements), or a whole-job program, the CRL-like DSM
/// ([`Dsm`]: one state machine over every host's part, whose home nodes
/// answer whoever asks), which the world runs at its hosts' libraries'
/// idle turns.
#[derive(Debug)]
pub enum Program {
    PerHost(Processes),
    Whole(Box<Dsm>),
}

/// The program of workload `w` on `hosts` hosts in a run seeded `seed`,
/// and, for one of a process per host, each host's process for its
/// library to hold.
pub(crate) fn program(w: &Workload, hosts: u32, seed: u64) -> (Program, Vec<Hosted>) {
    if let Some((p, procs)) = Processes::new(w, hosts, seed) {
        return (Program::PerHost(p), procs);
    }
    match *w {
        Workload::Dsm { mix, procs, operations } => {
            (Program::Whole(Box::new(Dsm::new(mix, procs, operations, seed))), Vec::new())
        }
        // `config::workload` validates no other for the LCI stack.
        _ => unreachable!("not a program of the LCI stack: {w:?}"),
    }
}

/// The program the hosts run, which the world's run holds: the program,
/// and the buffer its sends are moved through (reused).
pub struct Running {
    pub(crate) program: Program,
    /// A whole-job program's sends being moved to the libraries.
    pub(crate) sends: Vec<(u32, Outgoing)>,
    /// The NI whose packet store was full when an event was to name one
    /// more, during the event being handled (the run ends with an error).
    pub(crate) full: Option<u32>,
}

impl Running {
    /// Whether the program is done (`procs`: host `h`'s process, for a
    /// program of one per host).
    pub(crate) fn done<'a>(&self, procs: impl Fn(u32) -> &'a Driver) -> bool {
        match &self.program {
            Program::PerHost(p) => p.done(procs),
            Program::Whole(j) => j.done(),
        }
    }

    /// Whether host `h` runs the program (enters the library and polls).
    pub fn participates(&self, h: u32) -> bool {
        match &self.program {
            Program::PerHost(p) => p.participates(h),
            Program::Whole(j) => j.participates(h),
        }
    }

    /// The whole-job program, if it is one (the DSM).
    pub(crate) fn whole(&mut self) -> Option<&mut Dsm> {
        match &mut self.program {
            Program::Whole(j) => Some(j),
            Program::PerHost(_) => None,
        }
    }

    /// The processes, if the program runs one per host.
    pub fn procs(&self) -> Option<&Processes> {
        match &self.program {
            Program::PerHost(p) => Some(p),
            Program::Whole(_) => None,
        }
    }

    /// Whether its hosts' upcalls drive it: the multicast schemes'
    /// forwards and its compute run in the library.
    pub fn upcall_driven(&self) -> bool {
        self.procs().is_some_and(Processes::upcall_driven)
    }

    /// Whether it is one of the multicast study's programs (its forwarding
    /// metrics are reported).
    pub fn multicasts(&self) -> bool {
        self.procs().is_some_and(Processes::multicasts)
    }

    /// Its measurements (`link` bounds a stream's figures; `procs`: host
    /// `h`'s process, for a program of one per host).
    pub(crate) fn metrics<'a>(&self, m: &mut Metrics, link: &LinkBound, procs: impl Fn(u32) -> &'a Driver) {
        match &self.program {
            Program::PerHost(p) => p.metrics(m, link, procs),
            Program::Whole(j) => j.metrics(m),
        }
    }

    /// Whether a run that cannot progress is a result of the program (DSM
    /// and FFT: `stuck = 1`, `exec_time_s = NaN`, e.g. no interrupts and a
    /// sleeping home node) rather than an error.
    pub fn stuck_is_a_result(&self) -> bool {
        !self.upcall_driven()
    }
}

/// The parts of scenario `sc`, whose LCI stack's part is `s` (each host's
/// library, holding its process if the program runs one per host, and its
/// NI's firmware), for the world's hosts to hold, and the program they run.
pub fn build(sc: &Scenario, s: &LciScenario) -> (Running, Vec<(Lib, Ni)>) {
    let p = &sc.platform;
    let n = p.topology.hosts;
    let signal = sc.times.host.irq_entry + sc.times.host.signal;
    let (program, procs) = program(&sc.workload, n, sc.seed);
    let run = Running { program, sends: Vec::with_capacity(n as usize), full: None };
    let mut procs = procs.into_iter();
    let parts = (0..n).map(|h| (Lib::new(h, s, signal, p.link.mtu, n, procs.next()), Ni::new(s, &sc.ni, p, h)));
    (run, parts.collect())
}

/// Packet conservation over the world's NIs: no NI delivered more
/// packets than the NIs sent (every packet sent is delivered, or in an
/// NI queue, or on the wire).
pub(crate) fn check_invariants<'a>(nis: impl Iterator<Item = &'a Ni>) -> Result<(), SimError> {
    let (sent, delivered) = packets(nis);
    if delivered > sent {
        return Err(SimError(format!("invariant: {sent} packets sent, {delivered} delivered")));
    }
    Ok(())
}

/// Packets the NIs sent and delivered so far (their counters summed).
pub(crate) fn packets<'a>(nis: impl Iterator<Item = &'a Ni>) -> (u64, u64) {
    nis.fold((0, 0), |(s, d), n| (s + n.packets_sent, d + n.delivered))
}

/// Why a program that could not go on (`stuck = 1`) has no execution time.
pub(crate) const STUCK: &str = "the program could not go on (stuck = 1): it never finished";

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod mc_tests;
