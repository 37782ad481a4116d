//! Tests of the NAS skeletons: the steps of an IS iteration, the kernels' problem
//! sizes and work, and the collectives' messages.

use super::*;
use crate::workload::Program;

#[test]
fn nas_is_iteration_shape() {
    let (before, after) = (Duration::from_us(5), Duration::from_us(3));
    let body = nas_is_iteration(3, 16, 1 << 21, before, after);
    let ops: Vec<Op> = body.ops().collect();
    assert_eq!(ops[0], Op::Compute(before));
    assert_eq!(*ops.last().unwrap(), Op::Compute(after));
    // 4 allreduce steps (send+recv+wait), the counts' Bruck alltoall (4
    // exchanges of 8 counts at 16 ranks: recv+send+wait), then the keys'
    // linear alltoallv (15 recv + 15 send + wait).
    assert_eq!(ops.len(), 1 + 4 * 3 + 4 * 3 + 31 + 1);
    assert!(ops.contains(&Op::Send { peer: 2, size: 4116, tag: 100 }));
    assert!(ops.contains(&Op::Send { peer: 4, size: 8 * 4, tag: 200 }));
    assert!(ops.contains(&Op::Send { peer: 4, size: (1 << 21) * 4 / 16, tag: 300 }));
    // The linear alltoallv is two ring steps and its wait, whatever the ranks.
    assert_eq!(body.0.len(), 1 + 4 * 3 + 4 * 3 + 3 + 1);
    let mut p = Program::script(body, 2, 1);
    let all: Vec<Op> = std::iter::from_fn(|| Some(p.next_op())).take_while(|o| *o != Op::Done).collect();
    assert_eq!(all.iter().filter(|o| matches!(o, Op::Mark(_))).count(), 2);
    assert_eq!(all.len(), 2 * 57 + 2);
}

/// Bytes each rank sends per IS iteration, by tag block, for `n` ranks.
fn is_bytes_sent(rank: u32, n: u32, keys_per_proc: u64) -> [u64; 3] {
    let mut out = [0; 3];
    for op in nas_is_iteration(rank, n, keys_per_proc, Duration::ZERO, Duration::ZERO).ops() {
        if let Op::Send { size, tag, .. } = op {
            out[match tag {
                t if t < tag::IS_COUNTS => 0,
                tag::IS_COUNTS => 1,
                _ => 2,
            }] += size;
        }
    }
    out
}

#[test]
fn nas_is_messages_per_iteration_follow_npb() {
    // NPB is.c per iteration and rank, for n ranks: the allreduce of
    // NUM_BUCKETS + TEST_ARRAY_SIZE ints (log2 n recursive-doubling
    // steps), one int of send count to every other rank (over 12 ranks,
    // Open MPI's Bruck alltoall: log2 n exchanges of n / 2 counts; up to
    // 12, linear), and all its keys but its own share to the others.
    for (n, keys) in [(16u32, (1u64 << 25) / 16), (16, (1 << 27) / 16), (64, (1 << 25) / 64), (8, (1 << 25) / 8)] {
        for rank in [0, n / 2 + 1, n - 1] {
            let [reduce, counts, key_bytes] = is_bytes_sent(rank, n, keys);
            assert_eq!(reduce, n.trailing_zeros() as u64 * (1024 + 5) * 4);
            let count_blocks = if n > 12 { n.trailing_zeros() as u64 * n as u64 / 2 } else { n as u64 - 1 };
            assert_eq!(counts, 4 * count_blocks);
            assert_eq!(key_bytes, 4 * keys / n as u64 * (n as u64 - 1));
        }
    }
}

#[test]
fn nas_is_work_grows_with_the_keys_and_is_memory_bound_on_a_shared_host() {
    // Class B and C at 16 ranks: 4x the keys, 4x the key range.
    let (b0, b1) = nas_is_work((1 << 25) / 16, 1 << 21, 16);
    let (c0, c1) = nas_is_work((1 << 27) / 16, 1 << 23, 16);
    assert!((c0.bytes / b0.bytes - 4.0).abs() < 1e-9);
    assert!(c1.ops > 3.9 * b1.ops && c1.bytes > 3.9 * b1.bytes);
    // A 2.33 GHz core at 1.5 instructions per cycle and 6 GB/s shared by
    // 8 ranks: memory decides, so the time scales with the bandwidth.
    let (ips, bw) = (1.5 * 2.33e9, 6e9 / 8.0);
    assert!(b0.bytes / bw > b0.ops / ips);
    let (slow, fast) = (b0.time(ips, bw / 2.0).as_ps() as f64, b0.time(ips, bw).as_ps() as f64);
    assert!((slow / fast - 2.0).abs() < 1e-6);
    // Alone on its host the rank is faster.
    assert!(b0.time(ips, 6e9) < b0.time(ips, bw));
}

#[test]
fn mg_times_a_residual_and_two_norms_beside_its_iterations() {
    // mg.f: resid and norm2u3 after timer_start(T_bench), norm2u3
    // again before timer_stop: 48 B a point once (64 B when the
    // stencil planes miss the L2), spread over the 20 iterations.
    for (class_c, l2, setup, stencil) in [(false, 2e6, 48.0, 32.0), (true, 2e6, 64.0, 84.0)] {
        let mg = NasProblem::new(NasKernel::Mg, class_c);
        assert_eq!(mg.timed_steps(), mg.iterations);
        let points = (mg.dims[0] * mg.dims[1] * mg.dims[2]) as f64;
        let timed = mg.work(16, l2).bytes * 16.0 * mg.timed_steps() as f64;
        let want = ((130.0 - 32.0 + stencil) * 20.0 + setup) * points;
        assert!((timed / want - 1.0).abs() < 1e-9, "class C {class_c}: {timed} against {want}");
    }
}

#[test]
fn cg_exchanges_are_cg_f_s_whole_row_blocks_and_match_pairwise() {
    // Class B on 16 ranks (4 x 4): both row-reduction steps and the
    // transpose carry na / nprows = 18,750 doubles, not halves.
    let x = CgExchanges::new(75_000, 6, 16);
    assert_eq!(x.l2npcols, 2);
    let peers: Vec<u32> = x.reduce[..2].iter().map(|r| r.peer).collect();
    assert_eq!(peers, [7, 4], "row 1: column bit 0 first, then bit 1");
    for r in &x.reduce[..2] {
        assert_eq!((r.send, r.recv), (150_000, 150_000));
    }
    // exch_proc = mod(me, nprows) * nprows + me / nprows
    assert_eq!(x.transpose, CgExchange { peer: 9, send: 150_000, recv: 150_000 });
    // 8 ranks (2 x 4): exch_proc = 2 (mod(me/2, nprows) nprows + me/2/nprows) + mod(me, 2).
    assert_eq!(CgExchanges::new(75_000, 2, 8).transpose.peer, 4);
    assert_eq!(CgExchanges::new(75_000, 3, 8).transpose.peer, 5);
    // Every exchange is one both ends agree on: what one sends the other receives.
    for (na, n) in [(75_000u64, 4u32), (75_000, 8), (75_001, 8), (150_000, 16), (150_000, 32), (75_000, 128)] {
        for rank in 0..n {
            let me = CgExchanges::new(na, rank, n);
            for (k, r) in me.reduce[..me.l2npcols].iter().enumerate() {
                let them = CgExchanges::new(na, r.peer, n).reduce[k];
                assert_eq!((them.peer, them.send, them.recv), (rank, r.recv, r.send), "{na} {n} {rank} {k}");
            }
            let t = me.transpose;
            let them = CgExchanges::new(na, t.peer, n).transpose;
            assert_eq!((them.peer, them.send, them.recv), (rank, t.recv, t.send), "{na} {n} {rank}");
        }
    }
}

#[test]
fn ft_times_its_set_up_and_forward_fft_as_one_more_step() {
    // ft.f times the twiddle factors, the initial conditions and the
    // forward FFT (with its transpose) before its 20 iterations; CG and
    // MG time their iterations only.
    for class_c in [false, true] {
        let ft = NasProblem::new(NasKernel::Ft, class_c);
        assert_eq!(ft.timed_steps(), ft.iterations + 1);
        let points = (ft.dims[0] * ft.dims[1] * ft.dims[2]) as f64;
        let timed = ft.work(16, 2e6).bytes * 16.0 * ft.timed_steps() as f64;
        assert!((timed / ((248.0 * 20.0 + 240.0) * points) - 1.0).abs() < 1e-9);
        for k in [NasKernel::Cg, NasKernel::Mg] {
            let p = NasProblem::new(k, class_c);
            assert_eq!(p.timed_steps(), p.iterations, "{k:?}");
        }
    }
}

#[test]
fn nas_kernel_work_is_npb_ops_and_memory_traffic() {
    for (k, bytes_per_op) in [(NasKernel::Cg, (6.0, 7.5)), (NasKernel::Mg, (2.0, 2.5)), (NasKernel::Ft, (1.7, 2.1))] {
        let p = NasProblem::new(k, false);
        let (w16, w32) = (p.work(16, 2e6), p.work(32, 2e6));
        // The operations are NPB's count shared by the ranks.
        assert!((w16.ops * 16.0 * p.timed_steps() as f64 - p.total_ops).abs() / p.total_ops < 1e-9);
        assert!((w16.ops / w32.ops - 2.0).abs() < 1e-9, "{k:?}");
        let ratio = w16.bytes / w16.ops;
        assert!(ratio > bytes_per_op.0 && ratio < bytes_per_op.1, "{k:?}: {ratio} B/flop");
    }
    // CG keeps vector segments once per process row: more rows, more bytes.
    let cg = NasProblem::new(NasKernel::Cg, false);
    assert!(cg.work(64, 2e6).bytes * 64.0 > cg.work(16, 2e6).bytes * 16.0);
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
    let all_kernels =
        [NasKernel::Cg, NasKernel::Mg, NasKernel::Ft, NasKernel::Bt, NasKernel::Ep, NasKernel::Lu, NasKernel::Sp];
    for k in all_kernels {
        let p = NasProblem::new(k, false);
        let all: Vec<Vec<Op>> = (0..16)
            .map(|r| nas_kernel_iteration(k, &p, r, 16, Duration::ZERO, &crate::workload::TEST_RATES).ops().collect())
            .collect();
        let mut sends = std::collections::BTreeMap::new();
        let mut recvs = std::collections::BTreeMap::new();
        for (r, ops) in all.iter().enumerate() {
            for op in ops {
                match *op {
                    Op::Send { peer, size, tag } => *sends.entry((r as u32, peer, tag, size)).or_insert(0) += 1,
                    Op::Recv { src: Some(s), size, tag } => *recvs.entry((s, r as u32, tag, size)).or_insert(0) += 1,
                    _ => {}
                }
            }
        }
        assert_eq!(sends, recvs, "{k:?}");
        assert!(!sends.is_empty());
    }
}

/// NPB MG's grid: 16 ranks on 2 x 2 x 4, so with 8 ranks a host each
/// rank's halo crosses the hosts towards one neighbour, not two.
#[test]
fn mg_decomposes_as_npb_setup_does() {
    assert_eq!(mg_grid(16), (2, 2, 4));
    assert_eq!(mg_grid(8), (2, 2, 2));
    assert_eq!(mg_grid(4), (1, 2, 2));
    assert_eq!(mg_grid(64), (4, 4, 4));
    let p = NasProblem::new(NasKernel::Mg, true);
    for rank in 0..16u32 {
        let remote: std::collections::BTreeSet<u32> =
            nas_kernel_iteration(NasKernel::Mg, &p, rank, 16, Duration::ZERO, &crate::workload::TEST_RATES)
                .ops()
                .filter_map(|op| match op {
                    Op::Send { peer, .. } if peer / 8 != rank / 8 => Some(peer),
                    _ => None,
                })
                .collect();
        assert_eq!(remote.len(), 1, "rank {rank} talks across hosts to {remote:?}");
    }
}

/// MG's stencils read each plane once while the L2 holds their planes:
/// class B on 16 ranks (130 x 130 planes of 8 B, 676 kB for five) does
/// in the 2 MB a rank has on a Xeon E5345 die, class C (258 x 258,
/// 2.66 MB) does not and moves 40 % more bytes per point.
#[test]
fn mg_stencil_planes_fit_the_l2_in_class_b_not_c() {
    let share = 4096.0 * 1024.0 / 2.0;
    let (b, c) = (NasProblem::new(NasKernel::Mg, false), NasProblem::new(NasKernel::Mg, true));
    assert!(b.mg_planes_fit(16, share) && !c.mg_planes_fit(16, share));
    assert!(c.mg_planes_fit(16, 4.0 * share), "a larger cache keeps them");
    let per_point = |p: &NasProblem, l2| p.work(16, l2).bytes * 16.0 / (p.dims[0] * p.dims[1] * p.dims[2]) as f64;
    // An iteration's 130 B (182 B), and the timed set-up's 48 B (64 B)
    // spread over the 20 iterations.
    assert!((per_point(&b, share) - (130.0 + 48.0 / 20.0)).abs() < 1e-9);
    assert!((per_point(&c, share) - (182.0 + 64.0 / 20.0)).abs() < 1e-9);
    assert!((per_point(&c, 4.0 * share) - (130.0 + 48.0 / 20.0)).abs() < 1e-9);
}
