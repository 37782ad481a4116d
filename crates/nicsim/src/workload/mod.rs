//! Workloads: the MPI-like programs each simulated process runs.
//!
//! A program is a sans-I/O state machine: the library asks it for its next
//! operation ([`Op`]) whenever the process has nothing else to do, and tells
//! it nothing else; completion is expressed by `Wait*` operations that the
//! library resolves. This module owns the *shape* of each benchmark
//! (omx_perf / IMB PingPong, a unidirectional stream); it does not know the
//! costs of anything.

use crate::time::Duration;

/// One operation of a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Post a send of `size` bytes to process `peer` (a rank).
    Send { peer: u32, size: u64, tag: u64 },
    /// Multicast `size` bytes (an eager message) with `tag` to every other
    /// rank: its frame, or its MEDIUM fragments, handed to this rank's NIC,
    /// whose firmware and the others' forward each down this rank's tree
    /// (`crate::nic::multicast`); complete once the last is handed over.
    /// The other ranks `Recv` it from this one.
    Mcast { size: u64, tag: u64 },
    /// Post a receive of up to `size` bytes with `tag`, from rank `src`
    /// (`None`: any source).
    Recv { src: Option<u32>, size: u64, tag: u64 },
    /// Wait until at most `n` of this process's requests are incomplete.
    WaitOutstanding(u32),
    /// Wait until every other rank's process has received this rank's
    /// message with `tag` (a multicast): the moment its last receiver has
    /// it, which no message tells the sender. It is a benchmark's view of
    /// the whole run (the \[LCI] broadcast benchmark's latency to the last
    /// receiver, [`bcast_bench_ops`]), offered by the LCI library, which
    /// runs every host's process in one place (`crate::lci::process`); the
    /// Open-MX library does not offer it (its broadcast acks up the tree,
    /// [`bcast_ops`]).
    WaitDelivered { tag: u64 },
    /// Compute on the core for this long.
    Compute(Duration),
    /// Record the current time under this label (for metrics).
    Mark(Label),
    /// Record that one more message was consumed (receiver-side rate).
    Count,
    /// The program is finished.
    Done,
}

/// Timestamps the metrics need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    Start,
    End,
}

/// A program's state machine.
#[derive(Clone, Debug)]
pub enum Program {
    /// IMB PingPong: rank 0 sends and waits for the echo; rank 1 echoes.
    PingPong { rank: u32, size: u64, total: u64, warmup: u64, iter: u64, step: u8 },
    /// Stream sender: `messages` sends, at most `window` outstanding.
    StreamSend { size: u64, messages: u64, sent: u64, window: u32, step: u8 },
    /// Stream receiver: keeps `window` receives posted, consumes in order.
    StreamRecv { size: u64, messages: u64, warmup: u64, posted: u64, done: u64, window: u32, step: u8 },
    /// IMB Uniband sender (IMB_uni_bandwidth): per window, `window` sends,
    /// wait for all, then receive the receiver's 1-byte ack.
    UnibandSend { size: u64, messages: u64, sent: u64, window: u32, in_window: u32, step: u8 },
    /// IMB Uniband receiver: per window, `window` receives posted, each
    /// consumed in order (counted), then a 1-byte ack back to the sender.
    UnibandRecv { size: u64, messages: u64, warmup: u64, posted: u64, done: u64, window: u32, step: u8 },
    /// A process that does nothing (its host only handles traffic).
    Idle,
    /// A fixed sequence of steps repeated `iters` times; the first `warm`
    /// repetitions are not timed (Start is marked after them, End at the
    /// end). `pc` is the step, `sub` the operation within it. Used for the
    /// all-to-all and the NAS skeletons. Build with [`Program::script`].
    Script { body: Vec<Step>, iters: u64, warm: u64, iter: u64, pc: usize, sub: u32, marked: u8 },
    /// \[LCI]'s FFT all-to-all ([`FftAlltoall`]): each chunk's compute
    /// drawn as the program reaches it, so that no iteration is held ahead.
    FftAlltoall(Box<FftAlltoall>),
}

/// One step of a [`Program::Script`]: an operation, or a ring of them that
/// is made as the program reaches each one. A collective that talks to
/// every other rank takes one step, not one operation per rank: kept as
/// operations, the programs of an n-rank all-to-all would hold n^2 of them
/// (64 MiB at 1,024 ranks, per alltoall of an iteration), all made before
/// the run starts, where a ring holds four numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Op(Op),
    /// `Recv` from `rank - 1`, `rank - 2`, ..., `rank - (n - 1)` (mod n).
    RecvRing {
        rank: u32,
        n: u32,
        size: u64,
        tag: u64,
    },
    /// `Send` to `rank + 1`, `rank + 2`, ..., `rank + (n - 1)` (mod n).
    SendRing {
        rank: u32,
        n: u32,
        size: u64,
        tag: u64,
    },
    /// For `s` = 1 .. n - 1 in turn: `Recv` from `rank - s`, `Send` to
    /// `rank + s` (mod n), and a wait for both ([`pairwise_alltoall_ops`]).
    PairwiseRing {
        rank: u32,
        n: u32,
        size: u64,
        tag: u64,
    },
}

impl Step {
    /// Number of operations of the step (a ring of n ranks: n - 1; rings
    /// are of two ranks or more, see [`alltoall_ops`]).
    pub fn n_ops(&self) -> u32 {
        match *self {
            Step::Op(_) => 1,
            Step::RecvRing { n, .. } | Step::SendRing { n, .. } => n - 1,
            Step::PairwiseRing { n, .. } => 3 * (n - 1),
        }
    }

    /// Operation `i` (< [`Step::n_ops`]) of the step.
    #[inline]
    pub fn op(&self, i: u32) -> Op {
        match *self {
            Step::Op(op) => op,
            Step::RecvRing { rank, n, size, tag } => Op::Recv { src: Some((rank + n - 1 - i) % n), size, tag },
            Step::SendRing { rank, n, size, tag } => Op::Send { peer: (rank + 1 + i) % n, size, tag },
            Step::PairwiseRing { rank, n, size, tag } => {
                let s = i / 3 + 1;
                match i % 3 {
                    0 => Op::Recv { src: Some((rank + n - s) % n), size, tag },
                    1 => Op::Send { peer: (rank + s) % n, size, tag },
                    _ => Op::WaitOutstanding(0),
                }
            }
        }
    }

    /// The step's operations, in order.
    pub fn ops(&self) -> impl Iterator<Item = Op> + '_ {
        (0..self.n_ops()).map(|i| self.op(i))
    }
}

/// The steps of a script being written: plain operations are pushed one
/// by one, rings of them as one step.
#[derive(Clone, Debug, Default)]
pub struct Body(pub Vec<Step>);

impl Body {
    pub fn new() -> Self {
        Body(Vec::new())
    }

    pub fn push(&mut self, op: Op) {
        self.0.push(Step::Op(op));
    }

    /// A body of these operations, in order.
    pub fn of(ops: &[Op]) -> Self {
        Body(ops.iter().map(|&op| Step::Op(op)).collect())
    }

    /// The steps' operations, in order (what the script runs per iteration).
    pub fn ops(&self) -> impl Iterator<Item = Op> + '_ {
        self.0.iter().flat_map(Step::ops)
    }
}

/// Default window of outstanding requests of the stream and of IMB Uniband
/// (`workload.window`): IMB Uniband's 64. Open-MX's own MX-API stream test,
/// `tests/mx/mx_stream.c`, keeps 16 (`NUM_RREQ`, `NUM_SREQ`).
pub const STREAM_WINDOW: u32 = 64;
/// Message tags of the programs. Receives match on (source, tag) as in MPI,
/// so every exchange of every program has its own tag or block of tags and
/// no receive can take another exchange's message. The values themselves
/// are arbitrary (only their distinctness matters; a test checks it).
pub mod tag {
    /// omx_perf / IMB PingPong messages.
    pub const PINGPONG: u64 = 1;
    /// Stream and IMB Uniband data messages.
    pub const STREAM: u64 = 2;
    /// IMB Uniband's per-window 1-byte ack.
    pub const UNIBAND_ACK: u64 = 3;
    /// NAS IS bucket-size allreduce: `IS_ALLREDUCE + step` (recursive doubling).
    pub const IS_ALLREDUCE: u64 = 100;
    /// NAS IS key-count alltoall.
    pub const IS_COUNTS: u64 = 200;
    /// NAS IS key alltoallv.
    pub const IS_KEYS: u64 = 300;
    /// IMB Alltoall.
    pub const ALLTOALL: u64 = 400;
    /// IMB Exchange (one tag both ways, as IMB's `s_tag`).
    pub const EXCHANGE: u64 = 500;
    /// The broadcast's data, down the tree.
    pub const BCAST: u64 = 600;
    /// The broadcast's 0-byte acks, up the tree.
    pub const BCAST_ACK: u64 = 601;
    /// \[LCI]'s broadcast benchmark: broadcast `i` is `LCI_BCAST + i`
    /// (at most 2^21 of them).
    pub const LCI_BCAST: u64 = 6 << 20;
    /// NAS CG: 16 tags per CG step from `CG + 16 * step` (25 steps, then
    /// step 25 for the residual): row exchanges `+ k`, the transpose `+ 8`,
    /// the two allreduces `+ 10` and `+ 13`.
    pub const CG: u64 = 1000;
    /// NAS MG halo faces: `MG + 64 * level + 8 * pass + 2 * axis` (up), `+ 1` (down).
    pub const MG: u64 = 2000;
    /// NAS FT transpose alltoall.
    pub const FT_TRANSPOSE: u64 = 3000;
    /// NAS FT checksum allreduce (`FT_CHECKSUM + step`).
    pub const FT_CHECKSUM: u64 = 3100;
    /// NAS LU: the lower sweep's planes `LU` (north to south), `+ 1` (west
    /// to east), the upper sweep's `+ 2`, `+ 3`, `exchange_3`'s `+ 4 ..= + 7`.
    pub const LU: u64 = 4000;
    /// NAS BT/SP `copy_faces`: `ADI_FACES + 2 * axis` to the successor, `+ 1` to the predecessor.
    pub const ADI_FACES: u64 = 4100;
    /// NAS BT/SP solves: `ADI_SOLVE + 2 * axis` forward, `+ 1` backward.
    pub const ADI_SOLVE: u64 = 4110;
    /// NAS EP's three allreduces: `EP + 32 * k + step`.
    pub const EP: u64 = 4200;
    /// \[LCI] ASP: row `k`'s broadcast is `ASP + k`.
    pub const ASP: u64 = 1 << 20;
    /// \[LCI] QR, iteration `k`: the norms' reduce `QR_REDUCE + k`, its
    /// result's broadcast `QR_RESULT + k`, the pivot column's `QR_COLUMN + k`.
    pub const QR_REDUCE: u64 = 2 << 20;
    pub const QR_RESULT: u64 = 3 << 20;
    pub const QR_COLUMN: u64 = 4 << 20;
    /// \[LCI] FFT all-to-all blocks (one tag: a rank waits for every block
    /// of an iteration before it posts the next iteration's receives).
    pub const FFT: u64 = 5 << 20;
}

impl Program {
    /// `body` repeated `iters` times, the first `warm` of them untimed.
    pub fn script(body: Body, iters: u64, warm: u64) -> Self {
        Program::Script { body: body.0, iters, warm, iter: 0, pc: 0, sub: 0, marked: 0 }
    }

    pub fn pingpong(rank: u32, size: u64, iterations: u64, warmup: u64) -> Self {
        Program::PingPong { rank, size, total: iterations + warmup, warmup, iter: 0, step: 0 }
    }
    pub fn stream_sender(size: u64, messages: u64, warmup: u64, window: u32) -> Self {
        Program::StreamSend { size, messages: messages + warmup, sent: 0, window, step: 0 }
    }
    pub fn stream_receiver(size: u64, messages: u64, warmup: u64, window: u32) -> Self {
        Program::StreamRecv { size, messages: messages + warmup, warmup, posted: 0, done: 0, window, step: 0 }
    }

    pub fn uniband_sender(size: u64, messages: u64, warmup: u64, window: u32) -> Self {
        Program::UnibandSend { size, messages: messages + warmup, sent: 0, window, in_window: 0, step: 0 }
    }
    pub fn uniband_receiver(size: u64, messages: u64, warmup: u64, window: u32) -> Self {
        Program::UnibandRecv { size, messages: messages + warmup, warmup, posted: 0, done: 0, window, step: 0 }
    }

    /// The next operation. Each call advances the state machine by one op.
    /// Inlined: both libraries call it once per operation (the Open-MX
    /// library's `step`, the LCI host's process), and a second caller
    /// otherwise keeps it out of the event loop's dispatch.
    #[inline(always)]
    pub fn next_op(&mut self) -> Op {
        match self {
            Program::Idle => Op::Done,
            Program::FftAlltoall(f) => f.next_op(),
            Program::Script { body, iters, warm, iter, pc, sub, marked } => {
                if *iter == *warm && *pc == 0 && *sub == 0 && *marked == 0 {
                    *marked = 1;
                    return Op::Mark(Label::Start);
                }
                if *iter == *iters || body.is_empty() {
                    return if *marked < 2 {
                        *marked = 2;
                        Op::Mark(Label::End)
                    } else {
                        Op::Done
                    };
                }
                let step = &body[*pc];
                let op = step.op(*sub);
                *sub += 1;
                if *sub == step.n_ops() {
                    *sub = 0;
                    *pc += 1;
                    if *pc == body.len() {
                        *pc = 0;
                        *iter += 1;
                    }
                }
                op
            }
            Program::PingPong { rank, size, total, warmup, iter, step } => {
                if *iter == *total {
                    return if *step == 0 {
                        *step = 9;
                        Op::Mark(Label::End)
                    } else {
                        Op::Done
                    };
                }
                let s = *step;
                // The five steps of an iteration, in turn (a compare is
                // cheaper than the remainder).
                *step = if s == 4 { 0 } else { s + 1 };
                let (peer, sz) = (1 - *rank, *size);
                let op = match (s, *rank) {
                    (0, _) => {
                        if *iter == *warmup {
                            Op::Mark(Label::Start)
                        } else {
                            Op::Compute(Duration::ZERO)
                        }
                    }
                    (1, 0) | (3, 1) => Op::Send { peer, size: sz, tag: tag::PINGPONG },
                    (1, _) | (3, _) => Op::Recv { src: Some(peer), size: sz, tag: tag::PINGPONG },
                    _ => Op::WaitOutstanding(0),
                };
                if s == 4 {
                    *iter += 1;
                }
                op
            }
            Program::StreamSend { size, messages, sent, window, step } => {
                if *sent == *messages {
                    return if *step == 0 {
                        *step = 1;
                        Op::WaitOutstanding(0)
                    } else {
                        Op::Done
                    };
                }
                // alternate: make room in the window, then send
                if *step == 0 {
                    *step = 2;
                    Op::WaitOutstanding(*window - 1)
                } else {
                    *step = 0;
                    *sent += 1;
                    Op::Send { peer: 1, size: *size, tag: tag::STREAM }
                }
            }
            Program::UnibandSend { size, messages, sent, window, in_window, step } => {
                if *step == 0 && *in_window < *window && *sent < *messages {
                    *in_window += 1;
                    *sent += 1;
                    return Op::Send { peer: 1, size: *size, tag: tag::STREAM };
                }
                // The window (or the last, shorter one) is out: MPI_Waitall,
                // then MPI_Recv of the ack.
                let s = *step;
                *step += 1;
                match s {
                    0 => Op::WaitOutstanding(0),
                    1 => Op::Recv { src: Some(1), size: 1, tag: tag::UNIBAND_ACK },
                    2 => Op::WaitOutstanding(0),
                    3 if *sent < *messages => {
                        *step = 0;
                        *in_window = 0;
                        self.next_op()
                    }
                    _ => {
                        *step = 4;
                        Op::Done
                    }
                }
            }
            Program::UnibandRecv { size, messages, warmup, posted, done, window, step } => match *step {
                // Post the window's receives (the previous window is consumed).
                0 if *posted < *messages && *posted - *done < *window as u64 => {
                    *posted += 1;
                    Op::Recv { src: Some(0), size: *size, tag: tag::STREAM }
                }
                // Consume them in order (MPI_Waitall, message by message).
                0 | 1 if *done < *posted => {
                    *step = 2;
                    Op::WaitOutstanding((*posted - *done - 1) as u32)
                }
                2 => {
                    *step = 1;
                    *done += 1;
                    if *done == *warmup {
                        Op::Mark(Label::Start)
                    } else if *done == *messages {
                        Op::Mark(Label::End)
                    } else {
                        Op::Count
                    }
                }
                // The window is consumed: MPI_Send of the ack (a tiny send
                // completes at once), then the next window or the end.
                0 | 1 => {
                    *step = if *done == *messages { 3 } else { 0 };
                    Op::Send { peer: 0, size: 1, tag: tag::UNIBAND_ACK }
                }
                _ => Op::Done,
            },
            Program::StreamRecv { size, messages, warmup, posted, done, window, step } => {
                if *posted < *messages && *posted < *done + *window as u64 {
                    *posted += 1;
                    return Op::Recv { src: Some(0), size: *size, tag: tag::STREAM };
                }
                if *done == *messages {
                    return if *step == 0 {
                        *step = 1;
                        Op::Mark(Label::End)
                    } else {
                        Op::Done
                    };
                }
                match *step {
                    0 => {
                        *step = 1;
                        Op::WaitOutstanding((*posted - *done - 1) as u32)
                    }
                    _ => {
                        *step = 0;
                        *done += 1;
                        if *done == *warmup {
                            Op::Mark(Label::Start)
                        } else {
                            Op::Count
                        }
                    }
                }
            }
        }
    }
}

/// One repetition of IMB Exchange for `rank` of `n` (at least 2): a send
/// to the right neighbour and one to the left (`rank + 1`, `rank - 1`, mod
/// `n`), then a receive from the left and one from the right, then a wait
/// for all (`IMB_exchange`, Intel MPI Benchmarks `src_c/IMB_exchange.c`:
/// `MPI_Isend` right, `MPI_Isend` left, `MPI_Recv` left, `MPI_Recv` right,
/// `MPI_Waitall`). IMB's receives block in turn; here both are posted
/// before the one wait, so a message from the right that comes first is
/// matched by a posted receive rather than kept as unexpected. Each rank
/// talks to two others whatever `n`: the work and the state per rank do
/// not grow with the run (`nicsim bench --kind exchange`).
pub fn exchange_ops(ops: &mut Body, rank: u32, n: u32, size: u64, tag: u64) {
    debug_assert!(n >= 2 && rank < n);
    let (left, right) = ((rank + n - 1) % n, (rank + 1) % n);
    ops.push(Op::Send { peer: right, size, tag });
    ops.push(Op::Send { peer: left, size, tag });
    ops.push(Op::Recv { src: Some(left), size, tag });
    ops.push(Op::Recv { src: Some(right), size, tag });
    ops.push(Op::WaitOutstanding(0));
}

/// One repetition of the broadcast for `rank` of `n`: `size` bytes from
/// rank 0 down `tree`, then a 0-byte ack from every rank up it (each rank
/// acks once its subtree has), so a repetition ends when every rank has
/// the data and the next one cannot overrun a slow rank.
///
/// * `ni = false` (\[LCI] §4.1, host-level forwarding): a rank receives
///   the data from its parent, waits for it, and sends it to each child.
/// * `ni = true` (\[LCI] §4.2): rank 0 multicasts the data
///   ([`Op::Mcast`]); every other rank only receives it, from rank 0: the
///   NICs forward it, frame by frame.
pub fn bcast_ops(ops: &mut Body, rank: u32, n: u32, size: u64, tree: crate::nic::multicast::Tree, ni: bool) {
    use crate::nic::multicast::{children, parent};
    let kids = children(tree, n, 0, rank);
    let up = parent(tree, n, 0, rank);
    match (ni, up) {
        (true, None) => ops.push(Op::Mcast { size, tag: tag::BCAST }),
        // The NICs forward: the data is not waited for before the acks' receives.
        (true, Some(_)) => ops.push(Op::Recv { src: Some(0), size, tag: tag::BCAST }),
        (false, _) => bcast_from(ops, 0, rank, n, size, tag::BCAST, tree, false),
    }
    for c in kids {
        ops.push(Op::Recv { src: Some(c), size: 0, tag: tag::BCAST_ACK });
    }
    ops.push(Op::WaitOutstanding(0));
    if let Some(p) = up {
        ops.push(Op::Send { peer: p, size: 0, tag: tag::BCAST_ACK });
        ops.push(Op::WaitOutstanding(0));
    }
}

mod alltoall;
pub use alltoall::*;

mod cursor;
pub use cursor::Cursor;

mod lci;
pub use lci::*;

mod nas;
pub use nas::*;

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(p: &mut Program, n: usize) -> Vec<Op> {
        (0..n).map(|_| p.next_op()).collect()
    }

    #[test]
    fn pingpong_rank0_sends_then_receives() {
        let mut p = Program::pingpong(0, 8, 1, 0);
        let o = ops(&mut p, 7);
        assert_eq!(o[0], Op::Mark(Label::Start));
        assert_eq!(o[1], Op::Send { peer: 1, size: 8, tag: tag::PINGPONG });
        assert_eq!(o[2], Op::WaitOutstanding(0));
        assert_eq!(o[3], Op::Recv { src: Some(1), size: 8, tag: tag::PINGPONG });
        assert_eq!(o[4], Op::WaitOutstanding(0));
        assert_eq!(o[5], Op::Mark(Label::End));
        assert_eq!(o[6], Op::Done);
    }

    #[test]
    fn pingpong_rank1_echoes() {
        let mut p = Program::pingpong(1, 8, 1, 0);
        let o = ops(&mut p, 5);
        assert_eq!(o[1], Op::Recv { src: Some(0), size: 8, tag: tag::PINGPONG });
        assert_eq!(o[3], Op::Send { peer: 0, size: 8, tag: tag::PINGPONG });
    }

    #[test]
    fn uniband_sender_waits_for_an_ack_after_each_window() {
        // 5 messages in windows of 2: 2 + 2 + 1, each followed by
        // Waitall, the ack receive and its wait.
        let mut p = Program::uniband_sender(0, 5, 0, 2);
        let send = Op::Send { peer: 1, size: 0, tag: tag::STREAM };
        let ack =
            [Op::WaitOutstanding(0), Op::Recv { src: Some(1), size: 1, tag: tag::UNIBAND_ACK }, Op::WaitOutstanding(0)];
        let mut want = vec![];
        for n in [2, 2, 1] {
            want.extend(std::iter::repeat_n(send, n));
            want.extend(ack);
        }
        want.extend([Op::Done, Op::Done]);
        assert_eq!(ops(&mut p, want.len()), want);
    }

    #[test]
    fn uniband_receiver_consumes_a_window_then_acks() {
        // 3 messages (1 warm-up) in windows of 2.
        let mut p = Program::uniband_receiver(0, 2, 1, 2);
        let recv = Op::Recv { src: Some(0), size: 0, tag: tag::STREAM };
        let ack = Op::Send { peer: 0, size: 1, tag: tag::UNIBAND_ACK };
        let want = vec![
            recv,
            recv,
            Op::WaitOutstanding(1),
            Op::Mark(Label::Start),
            Op::WaitOutstanding(0),
            Op::Count,
            ack,
            recv,
            Op::WaitOutstanding(0),
            Op::Mark(Label::End),
            ack,
            Op::Done,
        ];
        assert_eq!(ops(&mut p, want.len()), want);
    }

    #[test]
    fn uniband_sends_match_receives() {
        let count = |p: &mut Program, pred: fn(&Op) -> bool| {
            let mut n = 0;
            loop {
                let op = p.next_op();
                if op == Op::Done {
                    return n;
                }
                n += pred(&op) as u32;
            }
        };
        let data_send = |op: &Op| matches!(op, Op::Send { tag: tag::STREAM, .. });
        let data_recv = |op: &Op| matches!(op, Op::Recv { tag: tag::STREAM, .. });
        let ack_send = |op: &Op| matches!(op, Op::Send { tag: tag::UNIBAND_ACK, .. });
        let ack_recv = |op: &Op| matches!(op, Op::Recv { tag: tag::UNIBAND_ACK, .. });
        for (messages, window) in [(100, 64), (128, 64), (7, 1), (3, 10)] {
            let (s, r) =
                (Program::uniband_sender(8, messages, 10, window), Program::uniband_receiver(8, messages, 10, window));
            assert_eq!(count(&mut s.clone(), data_send), count(&mut r.clone(), data_recv));
            assert_eq!(count(&mut s.clone(), ack_recv), count(&mut r.clone(), ack_send));
            assert_eq!(count(&mut s.clone(), ack_recv) as u64, (messages + 10).div_ceil(window as u64));
        }
    }

    #[test]
    fn stream_receiver_keeps_a_window_posted() {
        for window in [64, 16, 1] {
            let mut p = Program::stream_receiver(0, 100, 0, window);
            let o = ops(&mut p, window as usize + 1);
            let w = window as usize;
            assert!(o[..w].iter().all(|op| matches!(op, Op::Recv { .. })));
            assert_eq!(o[w], Op::WaitOutstanding(window - 1));
        }
    }

    #[test]
    fn exchange_talks_to_both_neighbours_of_a_periodic_chain() {
        let ops = |rank, n| {
            let mut body = Body::new();
            exchange_ops(&mut body, rank, n, 8, tag::EXCHANGE);
            body.ops().collect::<Vec<_>>()
        };
        let send = |p| Op::Send { peer: p, size: 8, tag: tag::EXCHANGE };
        let recv = |p| Op::Recv { src: Some(p), size: 8, tag: tag::EXCHANGE };
        let wait = Op::WaitOutstanding(0);
        assert_eq!(ops(0, 4), [send(1), send(3), recv(3), recv(1), wait]);
        assert_eq!(ops(3, 4), [send(0), send(2), recv(2), recv(0), wait]);
        // Two ranks: both neighbours are the other one.
        assert_eq!(ops(1, 2), [send(0), send(0), recv(0), recv(0), wait]);
        // Every send has its receive: what rank r sends to its right, r + 1
        // receives from its left, and the other way round.
        let n = 5;
        for r in 0..n {
            let next = (r + 1) % n;
            assert!(ops(r, n).contains(&send(next)) && ops(next, n).contains(&recv(r)));
            assert!(ops(next, n).contains(&send(r)) && ops(r, n).contains(&recv(next)));
        }
    }

    #[test]
    fn bcast_forwards_on_the_host_or_leaves_it_to_the_nic() {
        use crate::nic::multicast::Tree;
        let ops = |rank, ni| {
            let mut b = Body::new();
            bcast_ops(&mut b, rank, 7, 64, Tree::Binary, ni);
            b.ops().collect::<Vec<_>>()
        };
        let data = |peer| Op::Send { peer, size: 64, tag: tag::BCAST };
        // Host-level: rank 1 receives from 0, then sends to 3 and 4.
        let host = ops(1, false);
        assert_eq!(host[0], Op::Recv { src: Some(0), size: 64, tag: tag::BCAST });
        assert!(host.contains(&data(3)) && host.contains(&data(4)));
        // NI-level: rank 1 sends no data; rank 0 multicasts once.
        let ni = ops(1, true);
        assert!(!ni.iter().any(|o| matches!(o, Op::Send { tag: tag::BCAST, .. })));
        assert_eq!(ops(0, true)[0], Op::Mcast { size: 64, tag: tag::BCAST });
        // Both ack up the same tree.
        let ack = Op::Send { peer: 0, size: 0, tag: tag::BCAST_ACK };
        assert!(host.contains(&ack) && ni.contains(&ack));
    }

    #[test]
    fn tag_blocks_do_not_overlap() {
        // The largest runs the configuration allows: 1024 hosts x 256
        // cores = 2^18 ranks (18 doubling steps), CG's 26 steps of 16
        // tags, MG from 512 points (class C) down to 4 (8 levels).
        let steps = 18;
        let mut blocks = [
            (tag::PINGPONG, tag::PINGPONG),
            (tag::STREAM, tag::STREAM),
            (tag::UNIBAND_ACK, tag::UNIBAND_ACK),
            (tag::IS_ALLREDUCE, tag::IS_ALLREDUCE + steps),
            (tag::IS_COUNTS, tag::IS_COUNTS),
            (tag::IS_KEYS, tag::IS_KEYS),
            (tag::ALLTOALL, tag::ALLTOALL),
            (tag::EXCHANGE, tag::EXCHANGE),
            (tag::BCAST, tag::BCAST_ACK),
            (tag::CG, tag::CG + 16 * 26 - 1),
            (tag::MG, tag::MG + 64 * 8 - 1),
            (tag::FT_TRANSPOSE, tag::FT_TRANSPOSE),
            (tag::FT_CHECKSUM, tag::FT_CHECKSUM + steps),
            (tag::LU, tag::LU + 7),
            (tag::ADI_FACES, tag::ADI_FACES + 5),
            (tag::ADI_SOLVE, tag::ADI_SOLVE + 5),
            (tag::EP, tag::EP + 64 + steps),
            // Matrices of at most 2^16 rows or columns (`workload.rows`, `cols`).
            (tag::ASP, tag::ASP + (1 << 16)),
            (tag::QR_REDUCE, tag::QR_REDUCE + (1 << 16)),
            (tag::QR_RESULT, tag::QR_RESULT + (1 << 16)),
            (tag::QR_COLUMN, tag::QR_COLUMN + (1 << 16)),
            (tag::FFT, tag::FFT),
            (tag::LCI_BCAST, tag::LCI_BCAST + (1 << 21) - 1),
        ];
        blocks.sort();
        for pair in blocks.windows(2) {
            assert!(pair[0].1 < pair[1].0, "{pair:?}");
        }
    }
}
