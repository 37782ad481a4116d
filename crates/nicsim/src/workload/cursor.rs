//! A process's place in its program, the one every library runs a
//! [`Program`] with (the Open-MX library, `crate::library::Proc`, and the
//! LCI library's processes, `crate::lci::process`): the program, an
//! operation held back to run again, the wait for its requests
//! ([`Op::WaitOutstanding`]), the times it passed its marks, and whether
//! it is finished.
//!
//! This module owns that state and its transitions, sans-I/O: a library
//! asks [`Cursor::next`] for the program's next operation with the number
//! of its requests still incomplete, and does what the operation needs
//! of it (a send, a receive, a compute phase); the cursor resolves the
//! wait and takes the marks' times itself. It does not count requests,
//! match messages or price anything: the library does.

use super::{Op, Program};
use crate::time::Instant;

/// A process's place in its [`Program`].
#[derive(Clone, Debug)]
pub struct Cursor {
    /// The program returned `Done` (the library still answers the network).
    finished: bool,
    /// At most this many of the process's requests may be incomplete
    /// before the program goes on (`Op::WaitOutstanding`).
    wait: Option<u32>,
    /// An operation to run again before the program's next (a send the
    /// send window held back, the rest of an interrupted compute, the
    /// program's end waiting for its acks).
    held: Option<Op>,
    /// When the program passed its start and end marks.
    marks: [Option<Instant>; 2],
    program: Program,
}

impl Cursor {
    /// The start of `program`.
    pub fn new(program: Program) -> Self {
        Cursor { finished: false, wait: None, held: None, marks: [None; 2], program }
    }

    /// The program's next operation at `now`, with `outstanding` of the
    /// process's requests incomplete (a held one first); `None` while it
    /// waits for them. A wait ([`Op::WaitOutstanding`]) and a mark
    /// ([`Op::Mark`], which takes the time `now`) are recorded here and
    /// returned too; the others are for the library. Not called once the
    /// program is [finished](Cursor::finished).
    #[inline(always)]
    pub fn next(&mut self, now: Instant, outstanding: u32) -> Option<Op> {
        if let Some(n) = self.wait {
            if outstanding > n {
                return None;
            }
            self.wait = None;
        }
        let op = self.held.take().unwrap_or_else(|| self.program.next_op());
        match op {
            Op::WaitOutstanding(n) => self.wait = Some(n),
            Op::Mark(l) => self.marks[l as usize] = Some(now),
            _ => {}
        }
        Some(op)
    }

    /// Whether the program can take its next operation with `outstanding`
    /// requests incomplete: it is not finished, holds nothing back and any
    /// wait is over.
    #[inline(always)]
    pub fn ready(&self, outstanding: u32) -> bool {
        !self.finished && self.held.is_none() && self.wait.is_none_or(|n| outstanding <= n)
    }

    /// Whether the program waits for its requests with `outstanding`
    /// incomplete, or holds an operation back: a process with nothing else
    /// to do may sleep.
    pub fn blocked(&self, outstanding: u32) -> bool {
        self.wait.is_some_and(|n| outstanding > n) || self.held.is_some()
    }

    /// Whether a wait for the requests ends with `outstanding` incomplete
    /// (a completion lets the program go on).
    pub fn wait_over(&self, outstanding: u32) -> bool {
        self.wait.is_some_and(|n| outstanding <= n)
    }

    /// `op` runs again before the program's next operation.
    #[inline(always)]
    pub fn hold(&mut self, op: Op) {
        debug_assert!(self.held.is_none(), "one operation held back at a time");
        self.held = Some(op);
    }

    /// Whether an operation is held back.
    pub fn holds(&self) -> bool {
        self.held.is_some()
    }

    /// The program is finished (its `Done` was carried out).
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// Whether the program is finished.
    #[inline(always)]
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The bound of the wait under way, if any.
    pub fn wait(&self) -> Option<u32> {
        self.wait
    }

    /// When the program passed mark `i` (0: start, 1: end).
    pub fn mark(&self, i: usize) -> Option<Instant> {
        self.marks[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;
    use crate::workload::{Body, Label};

    fn cursor(ops: &[Op]) -> Cursor {
        Cursor::new(Program::script(Body::of(ops), 1, 0))
    }

    #[test]
    fn a_wait_holds_the_program_until_few_enough_requests_are_incomplete() {
        let t = Instant::ZERO;
        let send = Op::Send { peer: 1, size: 8, tag: 0 };
        let mut c = cursor(&[Op::WaitOutstanding(1), send]);
        assert_eq!(c.next(t, 0), Some(Op::Mark(Label::Start)));
        assert_eq!(c.next(t, 3), Some(Op::WaitOutstanding(1)));
        assert!(!c.ready(2) && c.blocked(2) && !c.wait_over(2));
        assert_eq!(c.next(t, 2), None, "two incomplete");
        assert!(c.wait_over(1) && c.ready(1));
        assert_eq!(c.next(t, 1), Some(send));
        assert_eq!(c.wait(), None);
    }

    #[test]
    fn a_held_operation_runs_again_first_and_marks_take_the_time() {
        let d = Duration::from_us(4);
        let send = Op::Send { peer: 1, size: 8, tag: 0 };
        let mut c = cursor(&[send, Op::Compute(d)]);
        let (t0, t1) = (Instant::ZERO + d, Instant::ZERO + d + d);
        assert_eq!(c.next(t0, 0), Some(Op::Mark(Label::Start)));
        assert_eq!(c.next(t0, 0), Some(send));
        c.hold(send);
        assert!(c.holds() && !c.ready(0) && c.blocked(0));
        assert_eq!(c.next(t0, 0), Some(send), "the held send again");
        assert_eq!(c.next(t0, 0), Some(Op::Compute(d)), "then the program's next");
        assert_eq!(c.next(t1, 0), Some(Op::Mark(Label::End)));
        assert_eq!(c.next(t1, 0), Some(Op::Done));
        assert!(!c.finished());
        c.finish();
        assert!(c.finished() && !c.ready(0));
        assert_eq!((c.mark(0), c.mark(1)), (Some(t0), Some(t1)));
    }
}
