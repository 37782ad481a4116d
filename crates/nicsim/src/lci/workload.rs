//! The programs the LCI hosts run, as one [`Job`]. Stream, ping-pong,
//! the broadcast benchmark, ASP, QR and the FFT all-to-all are
//! `crate::workload::Program`s, one per host ([`Job::Procs`],
//! `super::process`), the operation sequences of `crate::workload` that
//! the Open-MX library runs too. The DSM (`super::dsm`) keeps the state of
//! every host's part together, told by the stack what reached which host
//! (the upcall of a message's last packet) and what compute ended, and
//! answering what each host sends or does next.
//!
//! This module owns program logic and its measurements only; it does not
//! time anything (the world calls it at upcall time with `now`).
//!
//! Extension points: a program of operations is a `Job::Procs` built in
//! `super::process::Processes::new` from `crate::workload`'s operations;
//! a whole-job program is a variant of [`Job`] (and of
//! `crate::config::Workload`) implemented in [`Job::participates`],
//! [`Job::on_message`], [`Job::done`] and [`Job::metrics`].

use super::dsm::Dsm;
use super::process::{Drive, Processes};
use crate::config::Workload;
pub use crate::library::lci::Control;
use crate::library::lci::Outgoing;
use crate::metrics::LinkBound;
use crate::time::Instant;
use crate::Metrics;

/// A running program: every host's part of it.
#[derive(Debug)]
pub enum Job {
    /// One program per host (the broadcast benchmark, ASP, QR, FFT
    /// all-to-all, stream, ping-pong: `super::process`),
    /// driven by `super::multicast` or by the library's idle choice
    /// (`super::cpu`), as its [`Drive`] says.
    Procs(Processes),
    /// CRL-like DSM request/reply mix (`super::dsm`).
    Dsm(Box<Dsm>),
}

impl Job {
    /// The program of workload `w` on `hosts` hosts in a run seeded `seed`.
    pub fn new(w: &Workload, hosts: u32, seed: u64) -> Self {
        if let Some(p) = Processes::new(w, hosts, seed) {
            return Job::Procs(p);
        }
        match *w {
            Workload::Dsm { mix, procs, operations } => Job::Dsm(Box::new(Dsm::new(mix, procs, operations, seed))),
            // `config::workload` validates no other for the LCI stack.
            _ => unreachable!("not a program of the LCI stack: {w:?}"),
        }
    }

    /// Whether `host` runs the program (enters the library and polls).
    pub fn participates(&self, host: u32) -> bool {
        match *self {
            Job::Procs(ref p) => p.participates(host),
            Job::Dsm(ref d) => d.participates(host),
        }
    }

    /// A whole message from `from` with `tag` reached `host`'s program
    /// (the upcall-driven programs learn theirs from `super::multicast`).
    pub fn on_message(&mut self, host: u32, from: u32, tag: u64) {
        match self {
            Job::Procs(p) if p.drive == Drive::Idle => {
                p.arrived(host, from, tag);
            }
            Job::Dsm(d) => d.on_message(host, from),
            Job::Procs(_) => {}
        }
    }

    /// Whether the program has finished.
    pub fn done(&self) -> bool {
        match *self {
            Job::Procs(ref p) => p.done(),
            Job::Dsm(ref d) => d.done(),
        }
    }

    /// The program's measurements; `link` bounds how fast the network can
    /// carry a stream (a faster figure is not measured).
    pub fn metrics(&self, m: &mut Metrics, link: &LinkBound) {
        match *self {
            Job::Procs(ref p) => p.metrics(m, link),
            Job::Dsm(ref d) => d.metrics(m),
        }
    }

    /// Host `h`'s library has nothing to do at `now`: stay, compute or sleep.
    pub fn control(&mut self, h: u32, now: Instant) -> Control {
        match self {
            Job::Dsm(d) => d.control(h, now),
            Job::Procs(p) if p.drive == Drive::Idle => p.control(h, now),
            _ => Control::Wait,
        }
    }

    /// Host `h` finished the compute phase that [`Job::control`] asked for.
    pub fn compute_done(&mut self, h: u32) {
        match self {
            Job::Dsm(d) => d.compute_done(h),
            Job::Procs(p) if p.drive == Drive::Idle => p.procs[h as usize].compute_done(),
            _ => {}
        }
    }

    /// Moves the messages the program decided to send since the last call
    /// to `out`: (host, message).
    pub fn drain_sends(&mut self, out: &mut Vec<(u32, Outgoing)>) {
        match self {
            Job::Dsm(d) => out.extend(d.drain_sends()),
            Job::Procs(p) => p.drain_sends(out),
        }
    }

    /// A host whose process a message's delivery to another host let go
    /// on (a sender that waited for it to reach every host), for the stack
    /// to run at that delivery's upcall.
    pub fn take_woken(&mut self) -> Option<u32> {
        match self {
            Job::Procs(p) => p.take_woken(),
            Job::Dsm(_) => None,
        }
    }

    /// Whether a program that cannot progress is a result (DSM and FFT,
    /// the programs the upcalls do not drive: `stuck = 1`, `exec_time_s =
    /// NaN`, e.g. no interrupts and a sleeping home node) rather than an
    /// error.
    pub fn stuck_is_a_result(&self) -> bool {
        !self.upcall_driven()
    }

    /// Whether `super::multicast` drives the program (at upcalls and
    /// compute ends).
    pub fn upcall_driven(&self) -> bool {
        matches!(self, Job::Procs(p) if p.drive == Drive::Upcall)
    }

    /// Whether the program is one of the multicast study's (its
    /// forwarding metrics are reported).
    pub fn multicasts(&self) -> bool {
        matches!(self, Job::Procs(p) if p.multicasts())
    }
}
