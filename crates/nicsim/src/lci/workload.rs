//! The programs the LCI hosts run, as one [`Job`]. Stream, ping-pong,
//! the broadcast benchmark, ASP, QR and the FFT all-to-all are
//! `crate::workload::Program`s, one per host ([`Processes`],
//! `super::process`), the operation sequences of `crate::workload` that
//! the Open-MX library runs too. The DSM (`super::dsm`) keeps the state of
//! every host's part together, told by the stack what reached which host
//! (the upcall of a message's last packet) and what compute ended, and
//! answering what each host sends or does next.
//!
//! This module owns program logic and its measurements only; it does not
//! time anything (the world calls it at upcall time with `now`).
//!
//! Extension points: a program of operations is built in
//! `super::process::Processes::new` from `crate::workload`'s operations;
//! a whole-job program is an implementation of [`Job`] (and a variant of
//! `crate::config::Workload`), made by [`job`].

use super::dsm::Dsm;
use super::process::Processes;
use crate::config::Workload;
pub use crate::library::lci::Control;
use crate::library::lci::Outgoing;
use crate::metrics::LinkBound;
use crate::time::Instant;
use crate::Metrics;

/// A running program: every host's part of it. One program per host (the
/// broadcast benchmark, ASP, QR, FFT all-to-all, stream, ping-pong:
/// `super::process`'s [`Processes`], driven by the library's upcalls or
/// its idle turns, as its `Drive` says), or the CRL-like DSM request/reply
/// mix (`super::dsm`), driven by the library's idle turns.
pub trait Job: std::fmt::Debug {
    /// Whether `host` runs the program (enters the library and polls).
    fn participates(&self, host: u32) -> bool;

    /// The upcall of a message's last packet on `host` (a program the
    /// library's idle turns drive; the upcall-driven learn it from
    /// `Output::Arrived`).
    fn on_message(&mut self, host: u32, from: u32, tag: u64);

    /// Whether every host's part is finished.
    fn done(&self) -> bool;

    /// Its measurements (`link` bounds a stream's figures).
    fn metrics(&self, m: &mut Metrics, link: &LinkBound);

    /// Host `h`'s library has nothing to do at `now`: what the host goes on
    /// with (an upcall-driven program says `Control::Wait`).
    fn control(&mut self, h: u32, now: Instant) -> Control;

    /// Host `h`'s compute phase that [`Job::control`] asked for ended.
    fn compute_done(&mut self, h: u32);

    /// Moves the sends it asked for since the last call to `out`.
    fn drain_sends(&mut self, out: &mut Vec<(u32, Outgoing)>);

    /// Its processes, if it is one program per host.
    fn procs(&self) -> Option<&Processes> {
        None
    }
    fn procs_mut(&mut self) -> Option<&mut Processes> {
        None
    }

    /// Whether its hosts' upcalls drive it: the multicast schemes' forwards
    /// and its compute run in the library (no `stuck` result).
    fn upcall_driven(&self) -> bool {
        false
    }

    /// Whether it is one of the multicast study's programs (its forwarding
    /// metrics are reported).
    fn multicasts(&self) -> bool {
        false
    }
}

/// The program of workload `w` on `hosts` hosts in a run seeded `seed`.
pub fn job(w: &Workload, hosts: u32, seed: u64) -> Box<dyn Job> {
    if let Some(p) = Processes::new(w, hosts, seed) {
        return Box::new(p);
    }
    match *w {
        Workload::Dsm { mix, procs, operations } => Box::new(Dsm::new(mix, procs, operations, seed)),
        // `config::workload` validates no other for the LCI stack.
        _ => unreachable!("not a program of the LCI stack: {w:?}"),
    }
}
