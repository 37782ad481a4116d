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
    /// IMB Uniband sender (IMB_uni_bandwidth): per window, `window` sends,
    /// wait for all, then receive the receiver's 1-byte ack.
    UnibandSend { size: u64, messages: u64, sent: u64, window: u32, in_window: u32, step: u8 },
    /// IMB Uniband receiver: per window, `window` receives posted, each
    /// consumed in order (counted), then a 1-byte ack back to the sender.
    UnibandRecv { size: u64, messages: u64, warmup: u64, posted: u64, done: u64, window: u32, step: u8 },
    /// A process that does nothing (its host only handles traffic).
    Idle,
    /// A fixed sequence of operations repeated `iters` times; the first
    /// `warm` repetitions are not timed (Start is marked after them, End at
    /// the end). Used for the NAS skeletons.
    Script { body: Vec<Op>, iters: u64, warm: u64, iter: u64, pc: usize, marked: u8 },
}

/// IMB-style window of outstanding requests in the stream (IMB Uniband uses 64).
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
    /// NAS CG: 16 tags per iteration from `CG + 16 * iteration`: row
    /// exchanges `+ k`, the transpose `+ 8`, the two allreduces `+ 10` and `+ 13`.
    pub const CG: u64 = 1000;
    /// NAS MG halo faces: `MG + 64 * level + 8 * pass + 2 * axis` (up), `+ 1` (down).
    pub const MG: u64 = 2000;
    /// NAS FT transpose alltoall.
    pub const FT_TRANSPOSE: u64 = 3000;
    /// NAS FT checksum allreduce (`FT_CHECKSUM + step`).
    pub const FT_CHECKSUM: u64 = 3100;
}

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

    pub fn uniband_sender(size: u64, messages: u64, warmup: u64, window: u32) -> Self {
        Program::UnibandSend { size, messages: messages + warmup, sent: 0, window, in_window: 0, step: 0 }
    }
    pub fn uniband_receiver(size: u64, messages: u64, warmup: u64, window: u32) -> Self {
        Program::UnibandRecv { size, messages: messages + warmup, warmup, posted: 0, done: 0, window, step: 0 }
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
            ops.push(Op::Recv { src: Some(partner), size: BUCKET_BYTES, tag: tag::IS_ALLREDUCE + step });
            ops.push(Op::Send { peer: partner, size: BUCKET_BYTES, tag: tag::IS_ALLREDUCE + step });
            ops.push(Op::WaitOutstanding(0));
        }
        mask <<= 1;
        step += 1;
    }
    alltoall_ops(&mut ops, rank, nprocs, 4, tag::IS_COUNTS);
    alltoall_ops(&mut ops, rank, nprocs, pair_bytes, tag::IS_KEYS);
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

/// Recursive-doubling allreduce of `size` bytes among the ranks
/// `base + i * stride` (i < `n`, `n` a power of two) that `rank` belongs to.
fn allreduce_ops(ops: &mut Vec<Op>, rank: u32, base: u32, stride: u32, n: u32, size: u64, tag: u64) {
    let me = (rank - base) / stride;
    let mut mask = 1;
    let mut step = 0;
    while mask < n {
        let partner = base + (me ^ mask) * stride;
        ops.push(Op::Recv { src: Some(partner), size, tag: tag + step });
        ops.push(Op::Send { peer: partner, size, tag: tag + step });
        ops.push(Op::WaitOutstanding(0));
        mask <<= 1;
        step += 1;
    }
}

/// Exchange `size` bytes with `partner` (both directions), then wait.
fn exchange_ops(ops: &mut Vec<Op>, partner: u32, size: u64, tag: u64) {
    ops.push(Op::Recv { src: Some(partner), size, tag });
    ops.push(Op::Send { peer: partner, size, tag });
    ops.push(Op::WaitOutstanding(0));
}

/// The NAS kernels with communication skeletons besides IS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NasKernel {
    Cg,
    Mg,
    Ft,
}

/// Problem parameters of NPB 3.x classes B and C (`npbparams.h` defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NasProblem {
    /// Timed iterations (CG: outer iterations of 25 CG steps each).
    pub iterations: u64,
    /// Total floating-point operations of the timed part, from the Mop/s
    /// formula each NPB benchmark prints (cg.f, mg.f, ft.f `mflops = ...`).
    pub total_ops: f64,
    /// CG: matrix order; MG/FT: grid points per dimension (nx, ny, nz).
    pub dims: [u64; 3],
}

impl NasProblem {
    pub fn new(kernel: NasKernel, class_c: bool) -> Self {
        match kernel {
            NasKernel::Cg => {
                // Class B: NA 75000, NONZER 13; class C: NA 150000, NONZER 15; NITER 75.
                let (na, nonzer) = if class_c { (150_000u64, 15u64) } else { (75_000, 13) };
                let niter = 75u64;
                let nz = (nonzer * (nonzer + 1)) as f64;
                let ops = 2.0 * (niter * na) as f64 * (3.0 + nz + 25.0 * (5.0 + nz) + 3.0);
                NasProblem { iterations: niter, total_ops: ops, dims: [na, 0, 0] }
            }
            NasKernel::Mg => {
                // Class B: 256^3, class C: 512^3; 20 iterations. ops = 58 * nit * n^3.
                let n = if class_c { 512u64 } else { 256 };
                let nit = 20u64;
                NasProblem { iterations: nit, total_ops: 58.0 * (nit * n * n * n) as f64, dims: [n, n, n] }
            }
            NasKernel::Ft => {
                // Class B: 512x256x256, class C: 512^3; 20 iterations.
                let d = if class_c { [512u64, 512, 512] } else { [512, 256, 256] };
                let niter = 20u64;
                let nt = (d[0] * d[1] * d[2]) as f64;
                let ops = nt * (14.8157 + 7.19641 * nt.ln() + (5.23518 + 7.21113 * nt.ln()) * niter as f64);
                NasProblem { iterations: niter, total_ops: ops, dims: d }
            }
        }
    }
}

/// One timed iteration of a NAS kernel skeleton for `rank` of `nprocs` (a
/// power of two, at least 4), with `compute` per iteration on each rank.
///
/// * CG (2D grid `nprows x npcols`): per CG step, the row reduction of the
///   matrix-vector product by recursive halving, the exchange with the
///   transpose partner, and two scalar allreduces across the row
///   (NPB `cg.f` `conj_grad`); 25 steps per iteration.
/// * MG (3D grid of ranks): per level of the V-cycle, four halo exchanges of
///   the six faces (`comm3` after resid, psinv, rprj3/interp).
/// * FT (1D layout): one all-to-all transpose of the complex grid per
///   iteration and a checksum allreduce (`ft.f` `transpose_x_yz`, `checksum`).
pub fn nas_kernel_iteration(kernel: NasKernel, p: &NasProblem, rank: u32, nprocs: u32, compute: Duration) -> Vec<Op> {
    let mut ops = vec![Op::Compute(compute)];
    let log2 = |n: u32| n.trailing_zeros();
    match kernel {
        NasKernel::Cg => {
            let npcols = 1u32 << log2(nprocs).div_ceil(2);
            let nprows = nprocs / npcols;
            let (row, col) = (rank / npcols, rank % npcols);
            let na = p.dims[0];
            let seg = 8 * na / nprows as u64;
            // With a square grid the transpose partner is (col, row).
            let transpose = if nprows == npcols { col * npcols + row } else { rank ^ 1 };
            for step in 0..25u64 {
                let mut len = seg;
                let mut mask = 1;
                let mut k = 0;
                while mask < npcols {
                    len /= 2;
                    exchange_ops(&mut ops, row * npcols + (col ^ mask), len.max(8), tag::CG + step * 16 + k);
                    mask <<= 1;
                    k += 1;
                }
                if transpose != rank {
                    exchange_ops(&mut ops, transpose, seg / npcols as u64, tag::CG + step * 16 + 8);
                }
                allreduce_ops(&mut ops, rank, row * npcols, 1, npcols, 8, tag::CG + step * 16 + 10);
                allreduce_ops(&mut ops, rank, row * npcols, 1, npcols, 8, tag::CG + step * 16 + 13);
            }
        }
        NasKernel::Mg => {
            // Ranks on a px x py x pz grid, px >= py >= pz, all powers of two.
            let l = log2(nprocs);
            let (px, py, pz) = (1u32 << l.div_ceil(3).max(l - 2 * (l / 3)), 1u32 << (l / 3), 1u32 << (l / 3));
            let (px, py, pz) = if px * py * pz == nprocs { (px, py, pz) } else { (nprocs / 4, 2, 2) };
            let (x, y, z) = (rank % px, (rank / px) % py, rank / (px * py));
            let at = |x: u32, y: u32, z: u32| (z % pz) * px * py + (y % py) * px + (x % px);
            let neighbours = [
                (at(x + 1, y, z), at(x + px - 1, y, z), (py, pz)),
                (at(x, y + 1, z), at(x, y + py - 1, z), (px, pz)),
                (at(x, y, z + 1), at(x, y, z + pz - 1), (px, py)),
            ];
            let mut n = p.dims[0];
            let mut level = 0u64;
            while n >= 4 {
                for pass in 0..4u64 {
                    for (d, (up, down, (a, b))) in neighbours.iter().enumerate() {
                        let face = 8 * (n / *a as u64).max(1) * (n / *b as u64).max(1);
                        let tag = tag::MG + level * 64 + pass * 8 + d as u64 * 2;
                        // Faces going up carry `tag`, faces going down `tag + 1`.
                        if *up != rank {
                            ops.push(Op::Recv { src: Some(*down), size: face, tag });
                            ops.push(Op::Recv { src: Some(*up), size: face, tag: tag + 1 });
                            ops.push(Op::Send { peer: *up, size: face, tag });
                            ops.push(Op::Send { peer: *down, size: face, tag: tag + 1 });
                        }
                        ops.push(Op::WaitOutstanding(0));
                    }
                }
                n /= 2;
                level += 1;
            }
        }
        NasKernel::Ft => {
            let total = p.dims[0] * p.dims[1] * p.dims[2];
            let pair = 16 * total / (nprocs as u64 * nprocs as u64);
            alltoall_ops(&mut ops, rank, nprocs, pair, tag::FT_TRANSPOSE);
            allreduce_ops(&mut ops, rank, 0, 1, nprocs, 16, tag::FT_CHECKSUM);
        }
    }
    ops
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
    fn nas_kernel_op_counts_match_npb_formulas() {
        // CG.B: 2*75*75000*(3+182+25*187+3) = 5.47e10 (NPB reports ~54.7 Gop).
        let cg = NasProblem::new(NasKernel::Cg, false);
        assert!((cg.total_ops - 5.47e10).abs() / 5.47e10 < 0.01, "{}", cg.total_ops);
        // MG.B: 58 * 20 * 256^3 = 1.95e10.
        assert_eq!(NasProblem::new(NasKernel::Mg, false).total_ops, 58.0 * 20.0 * 16_777_216.0);
        assert!(NasProblem::new(NasKernel::Ft, true).total_ops > NasProblem::new(NasKernel::Ft, false).total_ops);
    }

    #[test]
    fn nas_kernel_messages_pair_up() {
        // Every send of every rank has a matching receive (same tag, size) at its peer.
        for k in [NasKernel::Cg, NasKernel::Mg, NasKernel::Ft] {
            let p = NasProblem::new(k, false);
            let all: Vec<Vec<Op>> = (0..16).map(|r| nas_kernel_iteration(k, &p, r, 16, Duration::ZERO)).collect();
            let mut sends = std::collections::BTreeMap::new();
            let mut recvs = std::collections::BTreeMap::new();
            for (r, ops) in all.iter().enumerate() {
                for op in ops {
                    match *op {
                        Op::Send { peer, size, tag } => *sends.entry((r as u32, peer, tag, size)).or_insert(0) += 1,
                        Op::Recv { src: Some(s), size, tag } => {
                            *recvs.entry((s, r as u32, tag, size)).or_insert(0) += 1
                        }
                        _ => {}
                    }
                }
            }
            assert_eq!(sends, recvs, "{k:?}");
            assert!(!sends.is_empty());
        }
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
        let mut p = Program::stream_receiver(0, 100, 0);
        let o = ops(&mut p, 65);
        assert!(o[..64].iter().all(|op| matches!(op, Op::Recv { .. })));
        assert_eq!(o[64], Op::WaitOutstanding(63));
    }

    #[test]
    fn tag_blocks_do_not_overlap() {
        // The largest runs the configuration allows: 1024 hosts x 256
        // cores = 2^18 ranks (18 doubling steps), CG's 25 iterations of 16
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
            (tag::CG, tag::CG + 16 * 25 - 1),
            (tag::MG, tag::MG + 64 * 8 - 1),
            (tag::FT_TRANSPOSE, tag::FT_TRANSPOSE),
            (tag::FT_CHECKSUM, tag::FT_CHECKSUM + steps),
        ];
        blocks.sort();
        for pair in blocks.windows(2) {
            assert!(pair[0].1 < pair[1].0, "{pair:?}");
        }
    }
}
