//! One LCI host's process running its [`Program`], the operation
//! sequences of `crate::workload` that the Open-MX library runs too (ASP
//! and QR, `crate::workload::asp_ops` and `crate::workload::qr_ops`, in
//! their library-forwarded shape: a root [`Op::Mcast`]s, the others receive
//! from the root).
//!
//! This module owns the program's side of the LCI library, sans-I/O: it
//! runs operations until one needs the library ([`Process::next`]: a send,
//! a multicast, a compute phase) or waits, and it matches the messages the
//! upcalls deliver ([`Process::arrived`]) against the receives posted, by
//! (source, tag) as MPI does; a broadcast's source is its root. The stack
//! (`super::multicast`) hands the sends to the host's outbox, the
//! multicasts to the forwarding scheme, and runs a compute phase on the
//! host once every queued packet is written. A send or a multicast is
//! complete once it is in the library's outbox, so `WaitOutstanding` waits
//! for the receives alone. It times nothing: the stack calls it with
//! `now`.

use crate::config::LciWorkload;
use crate::time::{Duration, Instant};
use crate::workload::{asp_ops, qr_ops, Body, Label, Op, Program};
use crate::Metrics;

/// What the process asks of the library next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Send `size` bytes with `tag` to `dst`.
    Send { dst: u32, size: u64, tag: u64 },
    /// Broadcast `size` bytes with `tag` down this host's tree.
    Mcast { size: u64, tag: u64 },
    /// Compute this long; the process waits for [`Process::compute_done`].
    Compute(Duration),
    /// Nothing until a receive it waits for is matched.
    Wait,
    /// The program is finished.
    Done,
}

/// One host's process.
#[derive(Debug)]
pub struct Process {
    program: Program,
    /// Waiting: for its posted receives (`WaitOutstanding`), or for the end
    /// of its compute phase.
    waiting: Option<Op>,
    /// Receives posted and not yet matched, and messages that arrived
    /// before their receive: (source, tag) each.
    posted: Vec<(u32, u64)>,
    unexpected: Vec<(u32, u64)>,
    /// When the program marked its start and its end.
    marks: [Option<Instant>; 2],
    finished: bool,
}

impl Process {
    /// The process of `program`; `ranks` bounds the receives it posts at
    /// once and the messages that arrive ahead of theirs (the room the
    /// matching lists reserve).
    pub fn new(program: Program, ranks: u32) -> Self {
        let room = 2 * ranks as usize + 8;
        Process {
            program,
            waiting: None,
            posted: Vec::with_capacity(room),
            unexpected: Vec::with_capacity(room),
            marks: [None; 2],
            finished: false,
        }
    }

    /// Runs the program at `now` up to its next request of the library.
    pub fn next(&mut self, now: Instant) -> Next {
        loop {
            let op = match self.waiting.take() {
                Some(Op::WaitOutstanding(n)) if self.posted.len() > n as usize => {
                    self.waiting = Some(Op::WaitOutstanding(n));
                    return Next::Wait;
                }
                Some(w @ Op::Compute(_)) => {
                    self.waiting = Some(w);
                    return Next::Wait;
                }
                Some(_) | None if self.finished => return Next::Done,
                Some(_) | None => self.program.next_op(),
            };
            match op {
                Op::Send { peer, size, tag } => return Next::Send { dst: peer, size, tag },
                Op::Mcast { size, tag } => return Next::Mcast { size, tag },
                Op::Recv { src, tag, .. } => {
                    let src = src.expect("the LCI programs name each receive's source");
                    match self.unexpected.iter().position(|&m| m == (src, tag)) {
                        Some(i) => {
                            self.unexpected.remove(i);
                        }
                        None => self.posted.push((src, tag)),
                    }
                }
                Op::WaitOutstanding(_) => self.waiting = Some(op),
                Op::Compute(d) => {
                    self.waiting = Some(op);
                    return Next::Compute(d);
                }
                Op::Mark(l) => self.marks[usize::from(l == Label::End)] = Some(now),
                Op::Count => {}
                Op::Done => {
                    self.finished = true;
                    return Next::Done;
                }
            }
        }
    }

    /// A whole message from `src` (a broadcast's root) with `tag` reached
    /// the process; whether it was waiting for it (so [`Process::next`]
    /// goes on).
    pub fn arrived(&mut self, src: u32, tag: u64) -> bool {
        match self.posted.iter().position(|&r| r == (src, tag)) {
            Some(i) => {
                self.posted.remove(i);
                matches!(self.waiting, Some(Op::WaitOutstanding(n)) if self.posted.len() <= n as usize)
            }
            None => {
                self.unexpected.push((src, tag));
                false
            }
        }
    }

    /// The compute phase [`Process::next`] asked for ended.
    pub fn compute_done(&mut self) {
        debug_assert!(matches!(self.waiting, Some(Op::Compute(_))));
        self.waiting = None;
    }

    /// Whether the program is finished.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// When the program marked its end, if it did.
    pub fn end(&self) -> Option<Instant> {
        self.marks[1]
    }
}

/// The processes of every host, one program each.
#[derive(Debug)]
pub struct Processes(pub Vec<Process>);

impl Processes {
    /// One process per host of `w`'s program (`None`: the stack runs `w`
    /// otherwise), its broadcasts down the `fanout`-ary trees of the
    /// library's multicast.
    pub fn new(w: &LciWorkload, fanout: u32) -> Option<Self> {
        let tree = crate::nic::multicast::Tree::Kary(fanout);
        let (LciWorkload::Asp { hosts: n, .. } | LciWorkload::Qr { hosts: n, .. }) = *w else { return None };
        let program = |r| {
            let mut b = Body::new();
            match *w {
                LciWorkload::Asp { rows, iterations, elem_ps, .. } => {
                    asp_ops(&mut b, r, n, rows, iterations, elem_ps, tree, true)
                }
                LciWorkload::Qr { cols, iterations, norm_ps, update_ps, .. } => {
                    qr_ops(&mut b, r, n, cols, iterations, (norm_ps, update_ps), tree, true)
                }
                _ => {}
            }
            Process::new(Program::script(b, 1, 0), n)
        };
        Some(Processes((0..n).map(program).collect()))
    }

    /// Whether every program is finished.
    pub fn done(&self) -> bool {
        self.0.iter().all(Process::finished)
    }

    /// The execution time (\[LCI]'s): from the start to the last end.
    pub fn metrics(&self, m: &mut Metrics) {
        match self.0.iter().map(Process::end).collect::<Option<Vec<_>>>() {
            Some(ends) => {
                let end = ends.into_iter().max().unwrap_or(Instant::ZERO);
                m.set("exec_time_s", end.since(Instant::ZERO).as_s_f64());
            }
            None => m.unmeasured("exec_time_s", super::STUCK),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Body;

    fn process(ops: &[Op]) -> Process {
        let mut b = Body::new();
        for &op in ops {
            b.push(op);
        }
        Process::new(Program::script(b, 1, 0), 4)
    }

    #[test]
    fn a_wait_holds_until_every_receive_is_matched_whichever_comes_first() {
        let t = Instant::ZERO;
        let recv = |src| Op::Recv { src: Some(src), size: 8, tag: 5 };
        let mut p = process(&[recv(1), recv(2), Op::WaitOutstanding(0), Op::Send { peer: 3, size: 8, tag: 6 }]);
        // The message from 2 came before its receive was posted.
        assert!(!p.arrived(2, 5));
        assert_eq!(p.next(t), Next::Wait);
        assert!(!p.arrived(1, 6), "another tag does not match");
        assert_eq!(p.next(t), Next::Wait);
        assert!(p.arrived(1, 5));
        assert_eq!(p.next(t), Next::Send { dst: 3, size: 8, tag: 6 });
        assert_eq!(p.next(t), Next::Done);
        assert!(p.finished());
    }

    #[test]
    fn a_compute_phase_holds_the_program_until_it_ends_and_marks_take_the_time() {
        let d = Duration::from_us(5);
        let mut p = process(&[Op::Compute(d), Op::Mcast { size: 4, tag: 7 }]);
        assert_eq!(p.next(Instant::ZERO), Next::Compute(d));
        assert_eq!(p.next(Instant::ZERO), Next::Wait);
        p.compute_done();
        assert_eq!(p.next(Instant::ZERO), Next::Mcast { size: 4, tag: 7 });
        let end = Instant::ZERO + d;
        assert_eq!(p.next(end), Next::Done);
        assert_eq!(p.end(), Some(end));
    }
}
