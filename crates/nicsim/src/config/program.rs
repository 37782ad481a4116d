//! The program each rank of a scenario's workload runs, one of
//! `crate::workload`'s operation sequences, for every library: the
//! Open-MX world spawns it on the rank's core (`crate::sim` build), the
//! LCI library's processes run it (`crate::lci::process`).
//!
//! This module owns which program and arguments a workload gives a rank
//! ([`Workload::program`]); the programs themselves are `crate::workload`'s,
//! and where a rank runs is the world's.

use super::{BcastForwarding, Workload};
use crate::workload::{self as wl, tag, Body, Program};

impl Workload {
    /// The program rank `rank` of `ranks` runs in a run seeded `seed`
    /// (rank 0 of a two-rank benchmark sends, rank 1 receives); `None` for
    /// a workload whose ranks run none of `crate::workload`'s programs (a
    /// flood, a replay, the DSM: `crate::lci::dsm`). A broadcast forwarded
    /// by the NICs (`forwarding = Ni`, every broadcast of the LCI stack's
    /// programs) is a multicast of the library ([`wl::Op::Mcast`]).
    pub fn program(&self, rank: u32, ranks: u32, seed: u64) -> Option<Program> {
        let mut b = Body::new();
        let (iters, warm) = match *self {
            Workload::PingPong { size, iterations, warmup, .. } | Workload::Echo { size, iterations, warmup, .. } => {
                return Some(Program::pingpong(rank, size, iterations, warmup))
            }
            Workload::Stream { size, messages, warmup, window, .. } => {
                return Some(match rank {
                    0 => Program::stream_sender(size, messages, warmup, window),
                    _ => Program::stream_receiver(size, messages, warmup, window),
                })
            }
            Workload::Uniband { size, messages, warmup, window } => {
                return Some(match rank {
                    0 => Program::uniband_sender(size, messages, warmup, window),
                    _ => Program::uniband_receiver(size, messages, warmup, window),
                })
            }
            Workload::FftAlltoall { block, iterations, compute, .. } => {
                return Some(Program::fft_alltoall(rank, ranks, block, compute, iterations, seed))
            }
            Workload::NasIs { keys, iterations, before, after, .. } => {
                b = wl::nas_is_iteration(rank, ranks, keys / ranks as u64, before, after);
                // One untimed iteration first, as NPB runs one.
                (iterations + 1, 1)
            }
            Workload::NasKernel { kernel, class_c, compute, rates, .. } => {
                let prob = wl::NasProblem::new(kernel, class_c);
                b = wl::nas_kernel_iteration(kernel, &prob, rank, ranks, compute, &rates);
                // One untimed step first, as NPB runs the problem once.
                (prob.timed_steps() + 1, 1)
            }
            Workload::Alltoall { size, iterations, warmup, algorithm, .. } => {
                algorithm.ops(&mut b, rank, ranks, size, tag::ALLTOALL);
                (iterations + warmup, warmup)
            }
            Workload::Exchange { size, iterations, warmup, .. } => {
                wl::exchange_ops(&mut b, rank, ranks, size, tag::EXCHANGE);
                (iterations + warmup, warmup)
            }
            Workload::Bcast { size, iterations, warmup, tree, forwarding, .. } => {
                wl::bcast_ops(&mut b, rank, ranks, size, tree, forwarding == BcastForwarding::Ni);
                (iterations + warmup, warmup)
            }
            Workload::BcastBench { root, size, iterations, count, tree } => {
                wl::bcast_bench_ops(&mut b, root, rank, ranks, size, (iterations, count), tree);
                (1, 0)
            }
            Workload::Asp { rows, iterations, elem_ps, tree, forwarding, .. } => {
                let ni = forwarding == BcastForwarding::Ni;
                wl::asp_ops(&mut b, rank, ranks, rows, iterations, elem_ps, tree, ni);
                (1, 0)
            }
            Workload::Qr { cols, iterations, norm_ps, update_ps, tree, forwarding, .. } => {
                let ni = forwarding == BcastForwarding::Ni;
                wl::qr_ops(&mut b, rank, ranks, cols, iterations, (norm_ps, update_ps), tree, ni);
                (1, 0)
            }
            Workload::Flood { .. } | Workload::Replay | Workload::Dsm { .. } => return None,
        };
        Some(Program::script(b, iters, warm))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::Tree;
    use crate::workload::Op;

    /// The first `n` operations of a program, its marks left out.
    fn ops(mut p: Program, n: usize) -> Vec<Op> {
        (0..n).map(|_| p.next_op()).filter(|op| !matches!(op, Op::Mark(_))).collect()
    }

    #[test]
    fn a_two_rank_benchmark_sends_from_rank_0_and_receives_at_rank_1() {
        let w = Workload::Stream { size: 8, messages: 2, warmup: 0, window: 1, pair: [3, 5] };
        let of = |r| ops(w.program(r, 2, 1).expect("a program"), 8);
        let sends = |ops: &[Op]| ops.iter().any(|op| matches!(op, Op::Send { peer: 1, size: 8, .. }));
        let recvs = |ops: &[Op]| ops.iter().any(|op| matches!(op, Op::Recv { src: Some(0), size: 8, .. }));
        assert!(sends(&of(0)) && !recvs(&of(0)), "{:?}", of(0));
        assert!(recvs(&of(1)) && !sends(&of(1)), "{:?}", of(1));
    }

    #[test]
    fn a_broadcast_forwarded_by_the_nics_is_a_multicast_of_its_root_and_the_dsm_has_no_program() {
        let asp = |forwarding| Workload::Asp {
            rows: 8,
            iterations: 1,
            per_host: 1,
            elem_ps: 1,
            tree: Tree::Kary(2),
            forwarding,
        };
        // Row 0 is rank 0's: it broadcasts it first.
        let root = |f| ops(asp(f).program(0, 4, 1).expect("a program"), 4);
        assert!(root(BcastForwarding::Ni).iter().any(|op| matches!(op, Op::Mcast { .. })));
        assert!(!root(BcastForwarding::Host).iter().any(|op| matches!(op, Op::Mcast { .. })));
        let dsm = Workload::Dsm { mix: super::super::Mix::Barnes, procs: 2, operations: 1 };
        assert!(dsm.program(0, 2, 1).is_none());
    }
}
