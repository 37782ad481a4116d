//! What an LCI program and its host's library say to each other
//! (`crate::library::lci`, the library; `crate::workload`, the program):
//! a message to send ([`Outgoing`]), what a host whose library has
//! nothing to do goes on with ([`Control`]), and the host's process the
//! library holds when the program runs one per host ([`Hosted`], the
//! one driver `crate::library::driver::Driver`): one loop runs it for
//! both drives (`Lib::proceed`, as `crate::library::Proc::step` runs its
//! cursor), at its idle turns and compute ends (`Drive::Idle`) or at its
//! upcalls and compute ends (`Drive::Upcall`); a compute phase is one
//! segment on the host's core either way (`Lib::compute`, ended by
//! `Lib::compute_done`), in the library with interrupts disabled under
//! `Drive::Upcall` once the host's sends are written, outside it under
//! `Drive::Idle`. The library tells the world when its process finishes
//! (`Output::ProgramDone`); the world runs it at time zero, and where the
//! run counts its deliveries across hosts (the broadcast benchmark), after
//! its count (`Output::Arrived`); a whole-job program (the DSM,
//! `crate::lci::dsm`) is the world's, told by `Output::Message`,
//! `Output::Idle` and `Output::ComputeDone`.

use super::Lib;
use crate::library::driver::{Drive, Driver};
use crate::library::{Cx, Output, Ranks};
use crate::time::{Duration, Instant};
use crate::workload::Op;

/// What a host whose library has nothing to do goes on with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Stay in the library, polling with interrupts disabled.
    Wait,
    /// Leave the library and compute this long, interrupts enabled.
    Compute(Duration),
    /// Leave the library and sleep, interrupts enabled, until a signal.
    Sleep,
}

/// The message number of an ack-only control packet: none of the
/// sender's messages (those count up from 0), so it never matches one.
pub const ACK_ONLY_MSG: u32 = u32::MAX;

/// A message (or `count` equal messages) the program wants sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outgoing {
    pub dst: u32,
    pub size: u64,
    pub count: u64,
    /// Multicast tag of the packets (the tree's root), `None` for point to point.
    pub bcast: Option<u32>,
    /// The program's message tag (`crate::workload::tag`; 0 for the
    /// programs that match no receives).
    pub tag: u64,
}

/// A host's process when the program runs one per host (its library holds
/// it, as the Open-MX library's `crate::library::Proc` holds its cursor):
/// the driver, and when the library runs it. A program names ranks, the
/// library hosts: the rank map is the world's (`Cx`'s `env.ranks`).
#[derive(Debug)]
pub(crate) struct Hosted {
    pub(crate) driver: Driver,
    pub(crate) drive: Drive,
    /// The run counts its deliveries across hosts (the broadcast
    /// benchmark's root waits for its last receiver,
    /// `crate::lci::Deliveries`): the upcall of a message's last packet
    /// goes to the world first (`Output::Arrived`).
    pub(crate) counted: bool,
    /// The compute phase it asked for, under `Drive::Upcall`, waiting in
    /// the library for the host's sends to be written
    /// ([`Lib::compute_after_sends`]).
    compute: Option<Duration>,
}

impl Hosted {
    /// Process `driver`, run as `drive` says, in a run that counts its
    /// deliveries if `counted`.
    pub(crate) fn new(driver: Driver, drive: Drive, counted: bool) -> Self {
        Hosted { driver, drive, counted, compute: None }
    }
}

/// What the library does with its process, when it holds one, and what it
/// tells the world's whole-job program (the DSM) otherwise.
impl Lib {
    /// Whether its process's upcalls drive it (`Drive::Upcall`): the
    /// multicast schemes' forwards and the program's compute run in the
    /// library.
    pub(super) fn upcall_driven(&self) -> bool {
        self.process.as_ref().is_some_and(|p| p.drive == Drive::Upcall)
    }

    /// It holds its host's process `p` (the world's build places it).
    pub(crate) fn host_process(&mut self, p: Hosted) {
        self.process = Some(p);
    }

    /// Its host's process, if it holds one.
    pub(crate) fn process(&self) -> Option<&Driver> {
        self.process.as_ref().map(|p| &p.driver)
    }

    /// Its host's process, if it holds one.
    pub(crate) fn process_mut(&mut self) -> Option<&mut Driver> {
        self.process.as_mut().map(|p| &mut p.driver)
    }

    /// The upcall of a message's last packet from host `src` (a
    /// broadcast's root) with `tag` ends at `done`: its process matches
    /// it, and one its upcalls drive goes on at `done` if it waited for it
    /// ([`Lib::proceed`]; the library, busy with the upcall, goes on when
    /// it ends). Where the run counts its deliveries across hosts the
    /// world is told instead (`Output::Arrived`: it counts it, then hands
    /// it on); a whole-job program learns it from the world.
    pub(super) fn message(&mut self, cx: &mut Cx<'_>, src: u32, tag: u64, done: Instant) {
        let Some(p) = self.process.as_mut() else { return cx.emit(Output::Message { src, tag }) };
        if p.counted {
            return cx.emit(Output::Arrived { from: src, tag, at: done });
        }
        if p.driver.arrived(u32::from(cx.env.ranks.at(src as usize, 0)), tag) {
            self.go_on(cx, done, Drive::Upcall);
        }
    }

    /// Runs its process at `now` until it waits or asks its library for
    /// more than a send, the one loop of both drives; `next` runs it to
    /// its next request ([`Driver::next`], or with the world's count of a
    /// broadcast until it reached every other host; `ranks`: the run's
    /// rank map). Its sends go to the outbox (every send of a step if its
    /// upcalls drive it; one per idle turn otherwise, which the library
    /// writes before the process goes on), its broadcasts down its tree,
    /// and a compute phase of one its upcalls drive waits there for them
    /// to be written ([`Lib::compute_after_sends`]). Returns what it asked
    /// for last: that compute, an idle turn's send, `Op::Done` as it
    /// finishes, or `None` while it waits.
    pub(crate) fn proceed(
        &mut self,
        now: Instant,
        ranks: &Ranks,
        mut next: impl FnMut(&mut Driver, Instant) -> Option<Op>,
    ) -> Option<Op> {
        loop {
            let p = self.process.as_mut().expect("a library that runs its process holds it");
            let (op, upcall) = (next(&mut p.driver, now), p.drive == Drive::Upcall);
            match op {
                Some(Op::Send { peer, size, tag }) => {
                    let dst = u32::from(ranks[peer as usize].0);
                    self.submit(Outgoing { dst, size, count: 1, bcast: None, tag });
                    if !upcall {
                        return op;
                    }
                }
                Some(Op::Mcast { size, tag }) => self.bcast(size, tag),
                Some(Op::Compute(d)) if upcall => {
                    debug_assert!(p.compute.is_none(), "its process waits for its compute phase");
                    p.compute = Some(d);
                    return op;
                }
                op => return op,
            }
        }
    }

    /// [`Lib::proceed`] at `now` inside the library, if `drive` drives its
    /// process (`None` if not): the world learns that it finished
    /// (`Output::ProgramDone`).
    fn go_on(&mut self, cx: &mut Cx<'_>, now: Instant, drive: Drive) -> Option<Op> {
        if self.process.as_ref()?.drive != drive {
            return None;
        }
        let op = self.proceed(now, &cx.env.ranks, Driver::next);
        if op == Some(Op::Done) {
            cx.emit(Output::ProgramDone);
        }
        op
    }

    /// Its process, one its upcalls drive, computes what it asked for once
    /// the host's sends are all written: in the library, interrupts
    /// disabled, ahead of the packets still to consume ([`Lib::compute`]).
    /// Whether it began.
    pub(super) fn compute_after_sends(&mut self, cx: &mut Cx<'_>) -> bool {
        if !self.outbox.is_empty() || self.pending.is_some() {
            return false;
        }
        let Some(d) = self.process.as_mut().and_then(|p| p.compute.take()) else { return false };
        self.compute(cx, d, false);
        true
    }

    /// It has nothing to do: a process its idle turns drive goes on
    /// ([`Lib::proceed`]: it computes outside the library, or hands it
    /// one send and the library goes on, or it waits, polling); one its
    /// upcalls drive waits, polling; a whole-job program is asked by the
    /// world.
    pub(super) fn idle(&mut self, cx: &mut Cx<'_>) {
        if self.process.is_none() {
            return cx.emit(Output::Idle);
        }
        let now = cx.now;
        match self.go_on(cx, now, Drive::Idle) {
            Some(Op::Compute(d)) => self.control(cx, Control::Compute(d)),
            Some(Op::Send { .. }) => self.next(cx),
            _ => self.control(cx, Control::Wait),
        }
    }

    /// `LibEv::ComputeDone` of generation `gen`: its process's compute
    /// phase ends unless a signal preempted it since
    /// (`SignalledCore::end_compute`); the process waits no more (one its
    /// upcalls drive goes on at once, [`Lib::go_on`]), or a whole-job
    /// program learns it from the world; then the library goes on.
    pub(crate) fn compute_done(&mut self, cx: &mut Cx<'_>, gen: u32) {
        if !self.core.end_compute(gen) {
            return;
        }
        self.busy = false;
        match self.process_mut() {
            Some(p) => p.compute_done(),
            None => cx.emit(Output::ComputeDone),
        }
        let now = cx.now;
        self.go_on(cx, now, Drive::Upcall);
        self.next(cx);
    }
}
