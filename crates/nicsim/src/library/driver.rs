//! The program driver of a library that has no receive matching of its
//! own (the LCI library, `crate::library::lci`, whose upcalls hand the
//! program every message): one process's [`Program`] run to its next
//! request of the library, the messages that reach it matched against its
//! receives, and its wait for a compute phase or a delivery ([`Driver`]);
//! and when such a library runs it ([`Drive`]).
//!
//! This module owns that state, sans-I/O: [`Driver::next`] runs
//! operations until one needs the library (a send, a multicast, a compute
//! phase) or the process waits, [`Driver::arrived`] matches a message by
//! (source, tag) as MPI does (a broadcast's source is its root). The
//! cursor (its waits and marks, [`Cursor`]) and the matching
//! ([`BySource`]) are the Open-MX library's (`super::Proc` keeps its
//! cursor and matches its own requests, priced, in `Proc::step`); what is
//! the driver's own is the wait for a compute phase or a delivery
//! ([`Op::WaitDelivered`], which only the world can resolve: it is a
//! wait on other hosts). A send or a multicast is complete once handed to
//! the library, so `WaitOutstanding` waits for the receives alone. It
//! lives in `library/` beside the matching it uses (`crate::workload`,
//! the programs, sits below the libraries in the module graph). It times
//! nothing: the library calls it with `now`.

use super::BySource;
use crate::time::{Duration, Instant};
use crate::workload::{Cursor, Op, Program};

/// A process's program as a library without matching of its own runs
/// it: its place in its program ([`Cursor`], the Open-MX library's too),
/// its receives, matched as that library matches them ([`BySource`]), and
/// what it waits for besides them. Its requests are its receives: a send
/// or a multicast is complete once handed to the library.
#[derive(Debug)]
pub struct Driver {
    cursor: Cursor,
    /// What it waits for besides its receives: the end of its compute
    /// phase ([`Op::Compute`]) or its multicast's delivery to every other
    /// rank ([`Op::WaitDelivered`]).
    blocked: Option<Op>,
    /// Receives posted and not yet matched, and messages that arrived
    /// before their receive, by source rank and tag.
    posted: BySource<()>,
    unexpected: BySource<()>,
}

impl Driver {
    /// The process of `program` (an idle one is finished from the start).
    pub fn new(program: Program) -> Self {
        let idle = matches!(program, Program::Idle);
        let mut cursor = Cursor::new(program);
        if idle {
            cursor.finish();
        }
        Driver { cursor, blocked: None, posted: BySource::new(), unexpected: BySource::new() }
    }

    /// Runs the program at `now` up to its next request of the library:
    /// an [`Op::Send`] (to a rank), an [`Op::Mcast`], an [`Op::Compute`]
    /// that the process then waits for ([`Driver::compute_done`]), or
    /// [`Op::Done`] as it finishes (once: the world counts the programs
    /// left by it); `None` while it waits, and once finished.
    pub fn next(&mut self, now: Instant) -> Option<Op> {
        if self.blocked.is_some() {
            return None;
        }
        loop {
            if self.cursor.finished() {
                return None;
            }
            let op = self.cursor.next(now, self.posted.len() as u32)?;
            match op {
                Op::Send { .. } | Op::Mcast { .. } => return Some(op),
                Op::Recv { src, tag, .. } => {
                    let src = src.map(|s| s as u16);
                    if self.unexpected.take(src, tag).is_none() {
                        self.posted.push(src, tag, ());
                    }
                }
                Op::WaitDelivered { .. } => {
                    self.blocked = Some(op);
                    return None;
                }
                // A compute of no time (a step of the ping-pong) takes none;
                // the cursor keeps the waits and the marks.
                Op::Compute(Duration::ZERO) | Op::WaitOutstanding(_) | Op::Mark(_) | Op::Count => {}
                Op::Compute(_) => {
                    self.blocked = Some(op);
                    return Some(op);
                }
                Op::Done => {
                    self.cursor.finish();
                    return Some(op);
                }
            }
        }
    }

    /// A whole message from `src` (a broadcast's root) with `tag` reached
    /// the process; whether it was waiting for it (so [`Driver::next`]
    /// goes on). It matches the first receive posted for it, from `src`
    /// or from any source.
    pub fn arrived(&mut self, src: u32, tag: u64) -> bool {
        let src = Some(src as u16);
        match self.posted.take(src, tag) {
            Some(()) => self.cursor.wait_over(self.posted.len() as u32),
            None => {
                self.unexpected.push(src, tag, ());
                false
            }
        }
    }

    /// The tag of the message whose delivery to every other rank the
    /// process waits for ([`Op::WaitDelivered`]), if it does.
    pub fn awaits_delivery(&self) -> Option<u64> {
        match self.blocked {
            Some(Op::WaitDelivered { tag }) => Some(tag),
            _ => None,
        }
    }

    /// The compute phase [`Driver::next`] asked for ended.
    pub fn compute_done(&mut self) {
        debug_assert!(matches!(self.blocked, Some(Op::Compute(_))));
        self.blocked = None;
    }

    /// Every other rank has the message the process waits for
    /// ([`Driver::awaits_delivery`]).
    pub fn delivered(&mut self) {
        debug_assert!(matches!(self.blocked, Some(Op::WaitDelivered { .. })));
        self.blocked = None;
    }

    /// Whether the program is finished.
    pub fn finished(&self) -> bool {
        self.cursor.finished()
    }

    /// When the program passed mark `i` (0: its start, 1: its end), if it did.
    pub fn mark(&self, i: usize) -> Option<Instant> {
        self.cursor.mark(i)
    }
}

/// When the LCI library runs a process's program, and where it computes:
/// the library's two ways to run one (in its upcalls, or from its main
/// loop), which order a host's work differently. Under `Upcall` a compute
/// goes ahead of the packets still to consume and every send of a step
/// goes to the outbox at once; under `Idle` the packets come first, one
/// send goes to the library per idle turn, and the compute leaves the
/// library whether or not that send is written. Each study's tables are
/// those of its drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drive {
    /// At time zero, at the upcall of each message it matches and at the
    /// end of each compute phase; it computes in the library (interrupts
    /// off) once every packet the host queued is written, ahead of
    /// packets still to consume (the multicast study's ASP and QR:
    /// `crate::lci::multicast`).
    Upcall,
    /// Whenever the library has nothing else to do (no packet to consume
    /// or write, nothing due); it computes outside the library with
    /// interrupts enabled, where an NI interrupt reaches it as a signal,
    /// and one send at a time goes to the library before it goes on (the
    /// timers study's FFT all-to-all). A finished process
    /// stays in the library polling (the final barrier), so it keeps
    /// acknowledging the others' packets.
    Idle,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Body;

    fn process(ops: &[Op]) -> Driver {
        Driver::new(Program::script(Body::of(ops), 1, 0))
    }

    #[test]
    fn a_wait_holds_until_every_receive_is_matched_whichever_comes_first() {
        let t = Instant::ZERO;
        let recv = |src| Op::Recv { src: Some(src), size: 8, tag: 5 };
        let mut p = process(&[recv(1), recv(2), Op::WaitOutstanding(0), Op::Send { peer: 3, size: 8, tag: 6 }]);
        // The message from 2 came before its receive was posted.
        assert!(!p.arrived(2, 5));
        assert_eq!(p.next(t), None);
        assert!(!p.arrived(1, 6), "another tag does not match");
        assert_eq!(p.next(t), None);
        assert!(p.arrived(1, 5));
        assert_eq!(p.next(t), Some(Op::Send { peer: 3, size: 8, tag: 6 }));
        assert_eq!(p.next(t), Some(Op::Done));
        assert!(p.finished());
        assert_eq!(p.next(t), None, "it finishes once");
    }

    #[test]
    fn a_receive_from_any_source_takes_any_message_with_its_tag() {
        let t = Instant::ZERO;
        let any = Op::Recv { src: None, size: 8, tag: 5 };
        let mut p = process(&[any, any, Op::WaitOutstanding(0), Op::Mcast { size: 1, tag: 9 }]);
        assert!(!p.arrived(3, 5), "ahead of its receive");
        assert_eq!(p.next(t), None);
        assert!(!p.arrived(3, 6), "another tag does not match");
        assert!(p.arrived(3, 5), "a second message from the same source");
        assert_eq!(p.next(t), Some(Op::Mcast { size: 1, tag: 9 }));
    }

    #[test]
    fn a_compute_phase_holds_the_program_until_it_ends_and_marks_take_the_time() {
        let d = Duration::from_us(5);
        let mut p = process(&[Op::Compute(d), Op::Mcast { size: 4, tag: 7 }]);
        assert_eq!(p.next(Instant::ZERO), Some(Op::Compute(d)));
        assert_eq!(p.next(Instant::ZERO), None);
        p.compute_done();
        assert_eq!(p.next(Instant::ZERO), Some(Op::Mcast { size: 4, tag: 7 }));
        let end = Instant::ZERO + d;
        assert_eq!(p.next(end), Some(Op::Done));
        assert_eq!(p.mark(1), Some(end));
    }
}
