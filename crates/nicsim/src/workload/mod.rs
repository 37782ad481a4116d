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
    /// Post a receive of up to `size` bytes with `tag`, from rank `src`
    /// (`None`: any source).
    Recv { src: Option<u32>, size: u64, tag: u64 },
    /// Wait until at most `n` of this process's requests are incomplete.
    WaitOutstanding(u32),
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
    /// A process that does nothing (its host only handles traffic).
    Idle,
    /// A fixed sequence of operations repeated `iters` times; the first
    /// `warm` repetitions are not timed (Start is marked after them, End at
    /// the end). Used for the NAS skeletons.
    Script { body: Vec<Op>, iters: u64, warm: u64, iter: u64, pc: usize, marked: u8 },
}

/// IMB-style window of outstanding requests in the stream (IMB Uniband uses 64).
pub const STREAM_WINDOW: u32 = 64;

impl Program {
    pub fn pingpong(rank: u32, size: u64, iterations: u64, warmup: u64) -> Self {
        Program::PingPong { rank, size, total: iterations + warmup, warmup, iter: 0, step: 0 }
    }
    pub fn stream_sender(size: u64, messages: u64, warmup: u64) -> Self {
        Program::StreamSend { size, messages: messages + warmup, sent: 0, window: STREAM_WINDOW, step: 0 }
    }
    pub fn stream_receiver(size: u64, messages: u64, warmup: u64) -> Self {
        Program::StreamRecv {
            size,
            messages: messages + warmup,
            warmup,
            posted: 0,
            done: 0,
            window: STREAM_WINDOW,
            step: 0,
        }
    }

    /// The next operation. Each call advances the state machine by one op.
    pub fn next_op(&mut self) -> Op {
        match self {
            Program::Idle => Op::Done,
            Program::Script { body, iters, warm, iter, pc, marked } => {
                if *iter == *warm && *pc == 0 && *marked == 0 {
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
                let op = body[*pc];
                *pc += 1;
                if *pc == body.len() {
                    *pc = 0;
                    *iter += 1;
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
                *step = (s + 1) % 5;
                let (peer, sz) = (1 - *rank, *size);
                let op = match (s, *rank) {
                    (0, _) => {
                        if *iter == *warmup {
                            Op::Mark(Label::Start)
                        } else {
                            Op::Compute(Duration::ZERO)
                        }
                    }
                    (1, 0) | (3, 1) => Op::Send { peer, size: sz, tag: 1 },
                    (1, _) | (3, _) => Op::Recv { src: Some(peer), size: sz, tag: 1 },
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
                    Op::Send { peer: 1, size: *size, tag: 2 }
                }
            }
            Program::StreamRecv { size, messages, warmup, posted, done, window, step } => {
                if *posted < *messages && *posted < *done + *window as u64 {
                    *posted += 1;
                    return Op::Recv { src: Some(0), size: *size, tag: 2 };
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

/// NAS Parallel Benchmarks IS (integer sort) communication skeleton, one
/// iteration of one rank (NPB 3.x `is.c`, MPI version): local bucket
/// counting, an allreduce of the bucket sizes, an alltoall of the send
/// counts, an alltoallv of the keys, local ranking. Collectives use the
/// algorithms of Open MPI 1.3's `tuned` component for these sizes:
/// recursive doubling for the allreduce, linear (post everything, wait all)
/// for alltoall(v).
pub fn nas_is_iteration(rank: u32, nprocs: u32, keys_per_proc: u64, compute: Duration) -> Vec<Op> {
    // NPB IS: NUM_BUCKETS = 2^10 ints in the allreduce; keys are 4-byte ints
    // spread over all ranks (uniform approximation of the key distribution).
    const BUCKET_BYTES: u64 = 1024 * 4;
    let pair_bytes = keys_per_proc * 4 / nprocs as u64;
    let mut ops = vec![Op::Compute(compute)];
    let mut step = 0;
    let mut mask = 1;
    while mask < nprocs {
        let partner = rank ^ mask;
        if partner < nprocs {
            ops.push(Op::Recv { src: Some(partner), size: BUCKET_BYTES, tag: 100 + step });
            ops.push(Op::Send { peer: partner, size: BUCKET_BYTES, tag: 100 + step });
            ops.push(Op::WaitOutstanding(0));
        }
        mask <<= 1;
        step += 1;
    }
    alltoall_ops(&mut ops, rank, nprocs, 4, 200);
    alltoall_ops(&mut ops, rank, nprocs, pair_bytes, 300);
    ops
}

/// A linear alltoall (Open MPI `tuned` basic linear): post every receive,
/// then every send (rank+1, rank+2, ... in turn), then wait for all.
pub fn alltoall_ops(ops: &mut Vec<Op>, rank: u32, nprocs: u32, size: u64, tag: u64) {
    for i in 1..nprocs {
        ops.push(Op::Recv { src: Some((rank + nprocs - i) % nprocs), size, tag });
    }
    for i in 1..nprocs {
        ops.push(Op::Send { peer: (rank + i) % nprocs, size, tag });
    }
    ops.push(Op::WaitOutstanding(0));
}

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
        assert_eq!(o[1], Op::Send { peer: 1, size: 8, tag: 1 });
        assert_eq!(o[2], Op::WaitOutstanding(0));
        assert_eq!(o[3], Op::Recv { src: Some(1), size: 8, tag: 1 });
        assert_eq!(o[4], Op::WaitOutstanding(0));
        assert_eq!(o[5], Op::Mark(Label::End));
        assert_eq!(o[6], Op::Done);
    }

    #[test]
    fn pingpong_rank1_echoes() {
        let mut p = Program::pingpong(1, 8, 1, 0);
        let o = ops(&mut p, 5);
        assert_eq!(o[1], Op::Recv { src: Some(0), size: 8, tag: 1 });
        assert_eq!(o[3], Op::Send { peer: 0, size: 8, tag: 1 });
    }

    #[test]
    fn nas_is_iteration_shape() {
        let ops = nas_is_iteration(3, 16, 1 << 21, Duration::from_us(5));
        assert_eq!(ops[0], Op::Compute(Duration::from_us(5)));
        // 4 allreduce steps (send+recv+wait), then 2 x (15 recv + 15 send + wait)
        assert_eq!(ops.len(), 1 + 4 * 3 + 2 * 31);
        assert!(ops.contains(&Op::Send { peer: 2, size: 4096, tag: 100 }));
        assert!(ops.contains(&Op::Send { peer: 4, size: (1 << 21) * 4 / 16, tag: 300 }));
        let mut p = Program::Script { body: ops, iters: 2, warm: 1, iter: 0, pc: 0, marked: 0 };
        let all: Vec<Op> = std::iter::from_fn(|| Some(p.next_op())).take_while(|o| *o != Op::Done).collect();
        assert_eq!(all.iter().filter(|o| matches!(o, Op::Mark(_))).count(), 2);
        assert_eq!(all.len(), 2 * 75 + 2);
    }

    #[test]
    fn stream_receiver_keeps_a_window_posted() {
        let mut p = Program::stream_receiver(0, 100, 0);
        let o = ops(&mut p, 65);
        assert!(o[..64].iter().all(|op| matches!(op, Op::Recv { .. })));
        assert_eq!(o[64], Op::WaitOutstanding(63));
    }
}
