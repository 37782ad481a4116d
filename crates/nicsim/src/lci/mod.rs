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
//! `crate::net::Network`); the world's run holds what the program the
//! hosts run keeps beyond the world's own rank map, programs left and
//! metrics ([`Running`]: the whole-job DSM, [`dsm`], or how the libraries
//! run their processes, and the broadcast benchmark's wait across hosts,
//! [`process`]).
//!
//! This module owns the parts' construction ([`build`]) and that state
//! ([`Running`]); the ranks, the processes and the whole-job program are
//! placed by the world's build (`crate::sim` `build`'s `spawn_lci`). The
//! rules that act across a host and its NI or between NIs, and the routing of what a host's
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
//! from the parts' counters and the processes' marks, and checks its
//! invariants (`crate::sim` `metrics`). It also uses
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
//! `crate::workload` whose root waits across hosts, [`process`]): per-sender
//! spanning trees whose packets are forwarded by the host library or by
//! the NI firmware.
//!
//! Interrupts and timers (`docs/lci.md`): the host CPU modes and signal
//! delivery (`crate::host::core::SignalledCore`, acted on by the library),
//! the NI polling watchdog (`crate::nic::watchdog`,
//! shared with the Open-MX NIC), host soft timers and NI clock interrupts
//! (`crate::nic::timers`), the reliable
//! protocol (`crate::library::lci`), and the DSM ([`dsm`]) and FFT all-to-all
//! (`Drive::Idle`) programs; the rules wire them with the
//! events after [`FwEv::RefreshDone`]; `crate::library::lci` holds what a program and
//! its library say to each other.
//!
//! The program the hosts run is one process per host or a whole-job one.
//! Stream, ping-pong, the broadcast benchmark, ASP, QR and the FFT
//! all-to-all are `crate::workload::Program`s, one per host, the
//! operation sequences of `crate::workload` that the Open-MX library runs
//! too: each host's library holds its process and runs it at its idle
//! turns and compute ends (the FFT) or at its upcalls and compute ends
//! (ASP, QR, the broadcast benchmark, stream, ping-pong); the world runs
//! those at time zero, and hands the broadcast benchmark's upcalls on
//! after counting them, because its root waits for its broadcast to reach
//! every other host ([`process::Deliveries`]: what is not one host's).
//! The DSM ([`Dsm`]) is a whole-job program: it
//! keeps the state of every host's part together (its home nodes answer
//! whoever asks), told by the stack what reached which host (the upcall
//! of a message's last packet) and what compute ended, and answering
//! what each host sends or does next. A program times nothing (the world
//! or the library calls it with `now`).
//!
//! Its events are the world's, each addressed to one part: host
//! `h`'s library (`crate::sim::Ev::LciLibrary`, a [`LibEv`]), NI `h`'s
//! firmware (`Ev::Lanai`, a [`FwEv`]), NI `h`'s watchdog and clock (the
//! Open-MX NIC's `Ev::WatchdogTimer`, `Ev::ClockTick`, `Ev::ClockFetched`),
//! each with one `u32`, a packet's index in that NI's store
//! (`crate::nic::lanai::Ni::packets`, bounded) or a generation. The world
//! hands each to the rule of its kind (`crate::sim` `lci_stack`), which
//! queues what it schedules as it goes, in its order, and then asks
//! whether an NI's store overflowed or the program is done.

pub mod dsm;
pub mod multicast;
pub mod process;

use crate::config::LciScenario;
pub use crate::library::driver::Drive;
pub use crate::library::lci::Control;
use crate::library::lci::Lib;
use crate::library::lci::Outgoing;
pub use crate::library::LibEv;
pub use crate::nic::lanai::FwEv;
use crate::nic::lanai::Ni;
pub use crate::nic::lanai::Packet;
use crate::Scenario;
pub use dsm::Dsm;
pub use process::Deliveries;

/// What the world's run holds of the program the hosts run beyond the
/// world's own (its rank map, `crate::library::Ranks`; its programs left;
/// its metrics): the whole-job DSM, if the program is one (its hosts'
/// libraries hold no process), how the libraries run their processes
/// otherwise, the broadcast benchmark's wait across hosts, and the buffers
/// its and the firmware's outputs are moved through (reused).
pub struct Running {
    /// The whole-job program, the CRL-like DSM ([`Dsm`]: one state machine
    /// over every host's part, whose home nodes answer whoever asks),
    /// which the world runs at its hosts' libraries' idle turns.
    pub(crate) whole: Option<Box<Dsm>>,
    /// How the hosts' libraries run their processes (`None`: a whole-job
    /// program).
    pub(crate) drive: Option<Drive>,
    /// The broadcast benchmark root's wait for its broadcasts' last
    /// receivers ([`Deliveries`]), if the program waits for deliveries.
    pub(crate) deliveries: Option<Deliveries>,
    /// A whole-job program's sends being moved to the libraries.
    pub(crate) sends: Vec<(u32, Outgoing)>,
    /// The NI whose packet store was full when an event was to name one
    /// more, during the event being handled (the run ends with an error).
    pub(crate) full: Option<u32>,
}

impl Running {
    /// The whole-job program, if it is one (the DSM).
    pub(crate) fn whole(&mut self) -> Option<&mut Dsm> {
        self.whole.as_deref_mut()
    }

    /// Whether its hosts' upcalls drive it: the multicast schemes'
    /// forwards and its compute run in the library.
    pub fn upcall_driven(&self) -> bool {
        self.drive == Some(Drive::Upcall)
    }

    /// Whether a run that cannot progress is a result of the program (DSM
    /// and FFT: `stuck = 1`, `exec_time_s` not measured, e.g. no interrupts
    /// and a sleeping home node) rather than an error.
    pub fn stuck_is_a_result(&self) -> bool {
        !self.upcall_driven()
    }
}

/// The parts of scenario `sc`, whose LCI stack's part is `s` (each host's
/// library and its NI's firmware), for the world's hosts to hold, and the
/// run's part, for the world's run to hold; the program is placed in them
/// by the world's build (`crate::sim` `build`'s `spawn_lci`).
pub fn build(sc: &Scenario, s: &LciScenario) -> (Running, Vec<(Lib, Ni)>) {
    let p = &sc.platform;
    let n = p.topology.hosts;
    let signal = sc.times.host.irq_entry + sc.times.host.signal;
    let sends = Vec::with_capacity(n as usize);
    let run = Running { whole: None, drive: None, deliveries: None, sends, full: None };
    (run, (0..n).map(|h| (Lib::new(h, s, signal, p.link.mtu, n), Ni::new(s, &sc.ni, p, h))).collect())
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod mc_tests;
