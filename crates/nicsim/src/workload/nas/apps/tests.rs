//! Tests of the BT, SP, LU and EP skeletons: their grids, their messages
//! per step against the NPB 3.3 MPI loops (16 ranks, class C), their
//! operation counts against the Mop/s formulas.

use super::*;
use crate::workload::{NasKernel, NasProblem};

/// (peer, size, tag) of every send of one step of `kernel` for `rank` of 16, class C.
fn sends(kernel: NasKernel, rank: u32) -> Vec<(u32, u64, u64)> {
    let p = NasProblem::new(kernel, true);
    crate::workload::nas_kernel_iteration(kernel, &p, rank, 16, Duration::from_ms(100), &crate::workload::TEST_RATES)
        .ops()
        .filter_map(|op| match op {
            Op::Send { peer, size, tag } => Some((peer, size, tag)),
            _ => None,
        })
        .collect()
}

fn count(sends: &[(u32, u64, u64)], peer: u32, size: u64, tag: u64) -> usize {
    sends.iter().filter(|s| **s == (peer, size, tag)).count()
}

#[test]
fn lu_grid_is_proc_grid_s_and_subdomain_s() {
    // 16 ranks: 4 x 4; 162 points: rows (columns) 0 and 1 take 41, 2 and 3 take 40.
    let g = LuRank::new(5, 16, 162);
    assert_eq!((g.xdim, g.ydim), (4, 4));
    assert_eq!((g.north, g.south, g.west, g.east), (Some(4), Some(6), Some(1), Some(9)));
    assert_eq!((g.nx, g.ny, g.ni, g.nj), (41, 41, 41, 41));
    // A corner leaves out the boundary points: ist = 2, jst = 2.
    let c = LuRank::new(0, 16, 162);
    assert_eq!((c.north, c.south, c.west, c.east), (None, Some(1), None, Some(4)));
    assert_eq!((c.ni, c.nj), (40, 40));
    let last = LuRank::new(15, 16, 162);
    assert_eq!((last.nx, last.ny, last.ni, last.nj), (40, 40, 39, 39));
    // 8 ranks: ydim = 2, xdim = 4; 32: 8 x 4.
    assert_eq!((LuRank::new(0, 8, 162).xdim, LuRank::new(0, 8, 162).ydim), (4, 2));
    assert_eq!((LuRank::new(0, 32, 162).xdim, LuRank::new(0, 32, 162).ydim), (8, 4));
}

#[test]
fn lu_step_sends_what_exchange_1_and_exchange_3_send() {
    // Rank 5 (inside the grid), class C: per plane k = 2 .. 161 (160
    // planes) 5 * 41 doubles to south and east in the lower sweep, to
    // north and west in the upper; rhs's exchange_3 sends 10 * 41 * 162
    // doubles to each of the four.
    let s = sends(NasKernel::Lu, 5);
    assert_eq!(count(&s, 6, 8 * 5 * 41, tag::LU), 160);
    assert_eq!(count(&s, 9, 8 * 5 * 41, tag::LU + 1), 160);
    assert_eq!(count(&s, 4, 8 * 5 * 41, tag::LU + 2), 160);
    assert_eq!(count(&s, 1, 8 * 5 * 41, tag::LU + 3), 160);
    let halo = 8 * 10 * 41 * 162;
    assert_eq!(count(&s, 6, halo, tag::LU + 4), 1);
    assert_eq!(count(&s, 4, halo, tag::LU + 5), 1);
    assert_eq!(count(&s, 9, halo, tag::LU + 6), 1);
    assert_eq!(count(&s, 1, halo, tag::LU + 7), 1);
    assert_eq!(s.len(), 4 * 160 + 4);
    // Rank 0 (a corner): only south and east, of its 40 interior points.
    let s = sends(NasKernel::Lu, 0);
    assert_eq!(count(&s, 1, 8 * 5 * 40, tag::LU), 160);
    assert_eq!(count(&s, 4, 8 * 5 * 40, tag::LU + 1), 160);
    assert_eq!(s.len(), 2 * 160 + 2);
    // The wavefront: a plane's compute waits for its two receives.
    let p = NasProblem::new(NasKernel::Lu, true);
    let ops: Vec<Op> = crate::workload::nas_kernel_iteration(
        NasKernel::Lu,
        &p,
        5,
        16,
        Duration::from_ms(100),
        &crate::workload::TEST_RATES,
    )
    .ops()
    .collect();
    let first_recv = ops.iter().position(|o| matches!(o, Op::Recv { .. })).unwrap();
    assert_eq!(ops[first_recv], Op::Recv { src: Some(4), size: 8 * 5 * 41, tag: tag::LU });
    assert_eq!(ops[first_recv + 2], Op::Recv { src: Some(1), size: 8 * 5 * 41, tag: tag::LU + 1 });
    assert!(matches!(ops[first_recv + 4], Op::Compute(_)));
    assert_eq!(ops[first_recv + 5], Op::Send { peer: 6, size: 8 * 5 * 41, tag: tag::LU });
}

#[test]
fn multipartition_is_make_set_s() {
    // 16 ranks: 4 cells each; rank 6 at (i, j) = (2, 1).
    let m = MultiPartition::new(6, 16);
    assert_eq!(m.p, 4);
    assert_eq!(m.cell(0), [2, 1, 0]);
    assert_eq!(m.cell(1), [3, 0, 1]);
    assert_eq!(m.cell(2), [0, 3, 2]);
    assert_eq!(m.cell(3), [1, 2, 3]);
    assert_eq!((m.successor(0), m.successor(1), m.successor(2)), (7, 10, 9));
    assert_eq!((m.predecessor(0), m.predecessor(1), m.predecessor(2)), (5, 2, 3));
    // Every rank owns one cell of every slab of every axis, and the 16 x 4
    // cells tile the 4 x 4 x 4 grid once.
    let mut seen = std::collections::BTreeSet::new();
    for r in 0..16 {
        let m = MultiPartition::new(r, 16);
        for axis in 0..3 {
            let mut slabs: Vec<u32> = (0..4).map(|c| m.cell(c)[axis]).collect();
            slabs.sort();
            assert_eq!(slabs, [0, 1, 2, 3]);
            // The successor holds the next cell along the axis with the same other coordinates.
            let s = MultiPartition::new(m.successor(axis), 16);
            for c in 0..4 {
                let mut want = m.cell(c);
                want[axis] = (want[axis] + 1) % 4;
                assert!((0..4).any(|d| s.cell(d) == want), "rank {r} axis {axis} cell {c}");
            }
        }
        seen.extend((0..4).map(|c| m.cell(c)));
    }
    assert_eq!(seen.len(), 64);
    // 162 points over 4 cells: 41, 41, 40, 40.
    assert_eq!((0..4).map(|c| m.cell_size(162, c)).collect::<Vec<_>>(), [41, 41, 40, 40]);
}

#[test]
fn bt_and_sp_steps_send_what_copy_faces_and_the_solves_send() {
    // Rank 6, class C: copy_faces sends along x to its successor the faces
    // of its three cells not at x = 3 (cells 0, 2, 3: (y, z) sizes 41 x
    // 41, 40 x 40, 40 x 40), 2 layers x 5 variables each.
    let east = 10 * (41 * 41 + 40 * 40 + 40 * 40);
    for kernel in [NasKernel::Bt, NasKernel::Sp] {
        let s = sends(kernel, 6);
        assert_eq!(count(&s, 7, 8 * east, tag::ADI_FACES), 1, "{kernel:?}");
        assert_eq!(s.iter().filter(|x| x.2 < tag::ADI_SOLVE).count(), 6);
        // Per axis 3 forward and 3 backward messages (ncells - 1 each).
        for axis in 0..3u64 {
            assert_eq!(s.iter().filter(|x| x.2 == tag::ADI_SOLVE + 2 * axis).count(), 3);
            assert_eq!(s.iter().filter(|x| x.2 == tag::ADI_SOLVE + 2 * axis + 1).count(), 3);
        }
        assert_eq!(s.len(), 6 + 18);
    }
    // BT sends whole buffers: MAX_CELL_DIM = 162 / 4 + 1 = 41.
    let s = sends(NasKernel::Bt, 6);
    assert_eq!(count(&s, 7, 8 * 41 * 41 * 30, tag::ADI_SOLVE), 3);
    assert_eq!(count(&s, 5, 8 * 41 * 41 * 5, tag::ADI_SOLVE + 1), 3);
    // SP the face without the global boundary: along x, rank 6's stage-0
    // cell is cell 2 at (0, 3, 2): y = 3 is the last (40 - 1 points), z =
    // 2 inside (40): 22 x 39 x 40 doubles forward; stage 1's, cell 3 at
    // (1, 2, 3), has 40 x 39; stage 2's, cell 0 at (2, 1, 0), 41 x 40.
    let s = sends(NasKernel::Sp, 6);
    assert_eq!(count(&s, 7, 8 * 22 * 39 * 40, tag::ADI_SOLVE), 2);
    assert_eq!(count(&s, 7, 8 * 22 * 41 * 40, tag::ADI_SOLVE), 1);
    let back: Vec<u64> = s.iter().filter(|x| x.2 == tag::ADI_SOLVE + 1).map(|x| x.1 / 80).collect();
    // Backward from stage 3 (cell 1 at (3, 0, 1): 40 x 41), stage 2 (cell
    // 0: 41 x 40) and stage 1 (cell 3: 40 x 39) to the predecessor.
    assert_eq!(back, [40 * 41, 41 * 40, 40 * 39]);
}

#[test]
fn op_counts_are_the_mop_s_formulas() {
    // Per step, from the formulas of bt.f, sp.f, lu.f (n = 162, 102).
    for (kernel, c, b, steps) in [
        (NasKernel::Bt, 1.43314e10, 3.51090e9, 200),
        (NasKernel::Sp, 3.62525e9, 8.87530e8, 400),
        (NasKernel::Lu, 8.15599e9, 1.99530e9, 250),
    ] {
        for (class_c, want) in [(true, c), (false, b)] {
            let p = NasProblem::new(kernel, class_c);
            assert_eq!(p.timed_steps(), steps);
            let per_step = p.total_ops / steps as f64;
            assert!((per_step / want - 1.0).abs() < 1e-4, "{kernel:?} {class_c}: {per_step}");
            // The work is that count shared by the ranks, step by step.
            assert!((p.work(16, 2e6).ops * 16.0 / per_step - 1.0).abs() < 1e-9);
        }
    }
    // EP: 2^(M+1) numbers (M = 32 in class C), in one step; the work's
    // operations are loop 140's: 8 a pair, 55 more an accepted pair (pi/4).
    let ep = NasProblem::new(NasKernel::Ep, true);
    assert_eq!((ep.total_ops, ep.timed_steps()), (2f64.powi(33), 1));
    let per = ep_ops_per_number();
    assert!((per - (8.0 + std::f64::consts::FRAC_PI_4 * 55.0) / 2.0).abs() < 1e-9, "{per}");
    let w = ep.work(16, 2e6);
    assert!((w.ops - 2f64.powi(33) / 16.0 * per).abs() < 1.0);
    assert_eq!(w.bytes, 0.0);
}

/// EP's generator is a dependence chain: every number costs its chain's
/// latency in cycles, however wide the core. With the chain's cycles left
/// out the two generators would take the same time.
#[test]
fn ep_generator_runs_at_its_chain_latency() {
    let ep = NasProblem::new(NasKernel::Ep, true);
    let r = crate::workload::TEST_RATES;
    let numbers = 2f64.powi(33) / 16.0;
    assert_eq!(EpGenerator::Randi8.chain_cycles(), 6.0);
    assert_eq!(EpGenerator::Randdp.chain_cycles(), 76.0);
    let (i8, dp) = (ep_time(&ep, 16, &r, EpGenerator::Randi8), ep_time(&ep, 16, &r, EpGenerator::Randdp));
    let gap = (dp.as_ps() - i8.as_ps()) as f64 * 1e-12;
    assert!((gap - numbers * 70.0 / r.cycles_per_s).abs() < 1e-6, "{gap}");
    // A clock half as fast doubles the chain's time; the generator's time
    // does not depend on the operation rate.
    let slow = NasRates { cycles_per_s: r.cycles_per_s / 2.0, ..r };
    let gap_slow = (ep_time(&ep, 16, &slow, EpGenerator::Randdp).as_ps()
        - ep_time(&ep, 16, &slow, EpGenerator::Randi8).as_ps()) as f64
        * 1e-12;
    assert!((gap_slow / gap - 2.0).abs() < 1e-6);
    // The default is NPB 3.3's `RAND = randi8`.
    assert_eq!(EP_GENERATOR, EpGenerator::Randi8);
    assert_eq!(ep.compute(16, &r), i8);
}

/// EP's accepted pair is one dependence chain (loop 140's head, glibc's
/// `log`, then the divide and square root to `q(l)`), 243 cycles and 163
/// micro-ops with the rejected pairs between, and Merom's 96-entry reorder
/// buffer holds only part of it: the next pair overlaps the divider tail
/// and the end of `log`, not the whole, so a pair takes 158 cycles, above
/// the divider's 88. With an unbounded window the loop would fall back to
/// the divider's bound (the pairs are independent).
#[test]
fn ep_pair_loop_runs_at_its_chain_through_the_reorder_buffer() {
    let ep = NasProblem::new(NasKernel::Ep, true);
    let r = crate::workload::TEST_RATES;
    let numbers = 2f64.powi(33) / 16.0;
    let divider = DIVSD_CYCLES + SQRTSD_CYCLES;
    let chain = EP_HEAD.cycles + LOG_CHAIN.cycles + EP_TAIL.cycles;
    assert!((chain - 242.9).abs() < 0.1, "{chain}");
    assert_eq!(EP_TAIL.cycles, 114.0);
    let cycles = ep_accepted_pair_cycles(ROB_UOPS);
    assert!((cycles - 158.4).abs() < 0.1, "{cycles}");
    assert!(cycles > divider && cycles < chain);
    // Unbounded, the window lets the pairs overlap up to the divider.
    assert_eq!(ep_accepted_pair_cycles(f64::INFINITY), divider);
    // A larger window overlaps more, a smaller one less.
    assert!(ep_accepted_pair_cycles(128.0) < cycles && ep_accepted_pair_cycles(64.0) > cycles);
    // The step: the generator's chain, then the pairs at that rate; the
    // core's operations (51 an accepted pair at one a cycle) do not bind.
    let t = ep_time(&ep, 16, &r, EpGenerator::Randi8).as_ps() as f64 * 1e-12;
    let generate = numbers * 6.0 / r.cycles_per_s;
    let pairs = numbers / 2.0 * std::f64::consts::FRAC_PI_4 * cycles / r.cycles_per_s;
    assert!(numbers * ep_ops_per_number() / r.ops_per_s < pairs);
    assert!((t - generate - pairs).abs() < 1e-6, "{t}");
    let open = ep_time_with_window(&ep, 16, &r, EpGenerator::Randi8, f64::INFINITY).as_ps() as f64 * 1e-12;
    let bound = numbers / 2.0 * std::f64::consts::FRAC_PI_4 * divider / r.cycles_per_s;
    assert!((open - generate - bound).abs() < 1e-6, "{open}");
    assert!(t > 1.6 * open, "{t} {open}");
    // With a core twice as fast at operations, nothing changes.
    let fast = NasRates { ops_per_s: 2.0 * r.ops_per_s, ..r };
    assert_eq!(ep_time(&ep, 16, &fast, EpGenerator::Randi8), ep_time(&ep, 16, &r, EpGenerator::Randi8));
}

/// The window's bound: nothing when an iteration fits, a share of the tail
/// when only part of the tail is left out, the tail and a share of the head
/// beyond that, the whole chain when the window holds nothing.
#[test]
fn window_period_counts_the_chain_the_window_cannot_overlap() {
    let head = ChainSegment { cycles: 100.0, uops: 80.0 };
    let tail = ChainSegment { cycles: 50.0, uops: 20.0 };
    assert_eq!(window_period(head, tail, 100.0), 0.0);
    assert_eq!(window_period(head, tail, 90.0), 25.0);
    assert_eq!(window_period(head, tail, 40.0), 50.0 + 100.0 * 40.0 / 80.0);
    assert_eq!(window_period(head, tail, 0.0), 150.0);
}

/// LU's phases are rooflines of their own: the Jacobians are bound by
/// their operations, `rhs` by memory, so the step takes longer than one
/// roofline over the whole step (which hides the sweeps' operations under
/// `rhs`'s traffic).
#[test]
fn lu_phases_are_rooflines_of_their_own() {
    let lu = NasProblem::new(NasKernel::Lu, true);
    let r = crate::workload::TEST_RATES;
    let ph = lu_phases(&lu, 16, &r);
    let points = 162f64.powi(3) / 16.0;
    let share = lu.total_ops / 250.0 / 162f64.powi(3) / LU_OPS_COUNTED.total();
    // The Jacobians: operations; rhs's directions: bytes.
    assert!((ph.jacobian - LU_OPS_COUNTED.jacobian * share * points / r.ops_per_s).abs() < 1e-9);
    assert!(ph.jacobian > LU_BYTES.jacobian * points / r.bytes_per_s);
    assert!((ph.rhs_direction - LU_BYTES.rhs_direction * points / r.bytes_per_s).abs() < 1e-9);
    // The counted operations apportion NPB's count: with a memory and a
    // clock no phase is bound by, the phases add up to the step's operations.
    let ops_only = NasRates { bytes_per_s: 1e15, cycles_per_s: 1e15, ..r };
    let all_ops = lu_phases(&lu, 16, &ops_only).total();
    assert!((all_ops - lu.total_ops / 250.0 / 16.0 / r.ops_per_s).abs() < 1e-9);
    // Against one roofline over the step.
    let one = lu.work(16, r.l2_share).time(r.ops_per_s, r.bytes_per_s);
    let step = lu.compute(16, &r);
    assert!(step.as_ps() as f64 > 1.1 * one.as_ps() as f64, "{step:?} {one:?}");
    assert!((step.as_ps() as f64 * 1e-12 - ph.total()).abs() < 1e-9);
}

/// `rhs`'s zeta direction loops five times over the rank's whole block
/// (`do k, do j, do i` each), so its arrays come from memory in every loop:
/// 640 B a point, against the 200 B of the xi and eta directions, which
/// work on one line or plane at a time. Taken as one of those, LU's step
/// would be 440 B a point shorter.
#[test]
fn lu_rhs_zeta_direction_streams_the_whole_block_in_each_loop() {
    let lu = NasProblem::new(NasKernel::Lu, true);
    let r = crate::workload::TEST_RATES;
    let points = 162f64.powi(3) / 16.0;
    let ph = lu_phases(&lu, 16, &r);
    assert_eq!(LU_BYTES.rhs_zeta, 640.0);
    assert!((ph.rhs_zeta - 640.0 * points / r.bytes_per_s).abs() < 1e-9, "{}", ph.rhs_zeta);
    assert!((ph.rhs_zeta - ph.rhs_direction - 440.0 * points / r.bytes_per_s).abs() < 1e-9);
    // The same operations and divisions as the other two directions.
    assert_eq!(LU_OPS_COUNTED.rhs_zeta, LU_OPS_COUNTED.rhs_direction);
    assert_eq!(LU_DIVISIONS.rhs_zeta, LU_DIVISIONS.rhs_direction);
    // The step counts it once, beside two of the others.
    let sum = ph.scale + 2.0 * ph.sweep() + ph.update + ph.rhs_init + 2.0 * ph.rhs_direction + ph.rhs_zeta;
    assert!((ph.total() - sum).abs() < 1e-12);
    // 250 steps: 39 s more than with the zeta direction at 200 B.
    let more = 250.0 * (ph.rhs_zeta - ph.rhs_direction);
    assert!((more - 38.97).abs() < 0.01, "{more}");
}

/// `blts` and `buts` run at their chain from point to point: on Merom the
/// diagonal block's elimination comes after the 115 micro-ops of the sums,
/// beyond the 96-entry window, so it waits for the previous point and its
/// four pivots (180 cycles) lie on the chain: 422 cycles, above the
/// operations (about 170) and the divider's 279. With a window that holds
/// a whole point the elimination would run ahead and the chain be 282.
/// The first loop, the k-neighbour's products, runs before it.
#[test]
fn lu_solves_run_at_their_chain_s_latency() {
    assert_eq!(lu_solve_chain_cycles(ROB_UOPS), 422.0);
    assert_eq!(lu_solve_chain_cycles(f64::INFINITY), 282.0);
    assert_eq!(lu_solve_chain_cycles(268.0), 282.0);
    assert_eq!(lu_solve_chain_cycles(267.0), 422.0);
    let lu = NasProblem::new(NasKernel::Lu, true);
    let r = crate::workload::TEST_RATES;
    let points = 162f64.powi(3) / 16.0;
    let ph = lu_phases(&lu, 16, &r);
    let share = lu.total_ops / 250.0 / 162f64.powi(3) / LU_OPS_COUNTED.total();
    // The first loop (the k-neighbour's products) at the operation rate,
    // then the chain's loop.
    let first = LU_SOLVE_K_OPS * share / r.ops_per_s;
    assert!((ph.solve - (first + 422.0 / r.cycles_per_s) * points).abs() < 1e-9, "{}", ph.solve);
    let ops = LU_OPS_COUNTED.solve * share * points / r.ops_per_s;
    let divider = 9.0 * DIVSD_CYCLES * points / r.cycles_per_s;
    assert!(ph.solve > divider && divider > ops, "{} {divider} {ops}", ph.solve);
    // The two sweeps' solves over 250 steps: 8 s more than with the
    // elimination ahead of the chain, 1.9 s more for the first loop.
    let more = 250.0 * 2.0 * (422.0 - 282.0) * points / r.cycles_per_s;
    assert!((more - 7.98).abs() < 0.01, "{more}");
    assert!((250.0 * 2.0 * first * points - 1.95).abs() < 0.01, "{first}");
    // A core half as fast, in its clock and its operations, takes twice as long.
    let slow = NasRates { cycles_per_s: r.cycles_per_s / 2.0, ops_per_s: r.ops_per_s / 2.0, ..r };
    assert!((lu_phases(&lu, 16, &slow).solve / ph.solve - 2.0).abs() < 1e-9);
}

/// A plane's blocks (1.3 MB at 16 ranks in class C) stay in a rank's 2 MiB
/// of L2 between `jacld` and `blts`; at 4 ranks (5.2 MB) they do not, and
/// the sweeps move them through memory: 1600 B a point more for the
/// Jacobian, 800 for the solve.
#[test]
fn lu_blocks_go_to_memory_when_they_miss_the_l2() {
    let lu = NasProblem::new(NasKernel::Lu, true);
    let r = crate::workload::TEST_RATES;
    assert!(lu_blocks_fit(&lu, 16, r.l2_share));
    assert!(!lu_blocks_fit(&lu, 4, r.l2_share));
    // Memory-bound at a slow memory: the bytes decide the sweeps' phases.
    let slow = NasRates { bytes_per_s: 1e6, ..r };
    let (fit, spill) = (lu_phases(&lu, 4, &NasRates { l2_share: 8e6, ..slow }), lu_phases(&lu, 4, &slow));
    let points = 162f64.powi(3) / 4.0;
    assert!((spill.jacobian - fit.jacobian - 1600.0 * points / 1e6).abs() < 1e-6);
    assert!((spill.solve - fit.solve - 800.0 * points / 1e6).abs() < 1e-6);
    assert_eq!(spill.rhs_direction, fit.rhs_direction);
}

/// `lu_step` gives each sweep plane its phase's share of the step.
#[test]
fn lu_step_splits_the_compute_by_the_phases_times() {
    let lu = NasProblem::new(NasKernel::Lu, true);
    let r = crate::workload::TEST_RATES;
    let ph = lu_phases(&lu, 16, &r);
    let compute = Duration::from_ms(500);
    let computes: Vec<u64> = crate::workload::nas_kernel_iteration(NasKernel::Lu, &lu, 5, 16, compute, &r)
        .ops()
        .filter_map(|o| if let Op::Compute(d) = o { Some(d.as_ps()) } else { None })
        .collect();
    // The scaling, 2 x 160 planes, then the update with rhs's start and its three directions.
    assert_eq!(computes.len(), 1 + 2 * 160 + 3);
    let sweeps: u64 = computes[1..321].iter().sum();
    let want = compute.as_ps() as f64 * 2.0 * ph.sweep() / ph.total();
    assert!((sweeps as f64 - want).abs() < 400.0, "{sweeps} {want}");
}

#[test]
fn ep_reduces_two_sums_and_ten_counts() {
    // 16 ranks: three recursive-doubling allreduces of 4 steps each.
    let s = sends(NasKernel::Ep, 3);
    assert_eq!(s.len(), 12);
    assert_eq!(s.iter().filter(|x| x.1 == 8).count(), 8);
    assert_eq!(s.iter().filter(|x| x.1 == 80).count(), 4);
}

#[test]
fn a_step_s_compute_adds_up_to_the_work() {
    // The phases' shares of the compute sum to the step's (to rounding).
    let compute = Duration::from_ms(500);
    for kernel in [NasKernel::Bt, NasKernel::Sp, NasKernel::Lu, NasKernel::Ep] {
        let p = NasProblem::new(kernel, true);
        for rank in [0, 6, 15] {
            let total: u64 =
                crate::workload::nas_kernel_iteration(kernel, &p, rank, 16, compute, &crate::workload::TEST_RATES)
                    .ops()
                    .map(|o| if let Op::Compute(d) = o { d.as_ps() } else { 0 })
                    .sum();
            let off = total.abs_diff(compute.as_ps());
            assert!(off < 2000, "{kernel:?} rank {rank}: {off} ps off");
        }
    }
}

/// nicsim's expectation (not a study's statement): LU moves its data in
/// far more and far smaller messages than BT and SP, so of the three it is
/// the one whose time the per-message latency weighs on most.
#[test]
fn lu_sends_the_most_and_the_smallest_messages() {
    let per_run = |k: NasKernel| {
        let s = sends(k, 5);
        let steps = NasProblem::new(k, true).timed_steps() as usize;
        let bytes: u64 = s.iter().map(|x| x.1).sum();
        (s.len() * steps, bytes / s.len() as u64)
    };
    let (lu, bt, sp) = (per_run(NasKernel::Lu), per_run(NasKernel::Bt), per_run(NasKernel::Sp));
    assert!(lu.0 > 10 * bt.0 && lu.0 > 5 * sp.0, "{lu:?} {bt:?} {sp:?}");
    assert!(lu.1 * 20 < bt.1 && lu.1 * 20 < sp.1, "{lu:?} {bt:?} {sp:?}");
}

/// When each of `steps`' ranks finishes, with messages taking no time: a
/// rank's `WaitOutstanding` waits for the sends its posted receives match
/// (per sender, receiver and tag, in order).
fn makespans(steps: &[Body]) -> Vec<f64> {
    use std::collections::{HashMap, VecDeque};
    let n = steps.len();
    let ops: Vec<Vec<Op>> = steps.iter().map(|b| b.ops().collect()).collect();
    let mut at = vec![0usize; n];
    let mut now = vec![0f64; n];
    let mut posted: Vec<Vec<(u32, u64)>> = vec![Vec::new(); n];
    let mut sent: HashMap<(u32, u32, u64), VecDeque<f64>> = HashMap::new();
    loop {
        let mut moved = false;
        for me in 0..n {
            while let Some(op) = ops[me].get(at[me]) {
                match *op {
                    Op::Compute(d) => now[me] += d.as_ps() as f64 * 1e-12,
                    Op::Send { peer, tag, .. } => sent.entry((me as u32, peer, tag)).or_default().push_back(now[me]),
                    Op::Recv { src, tag, .. } => posted[me].push((src.unwrap(), tag)),
                    Op::WaitOutstanding(_) => {
                        let ready = posted[me]
                            .iter()
                            .all(|&(src, tag)| sent.get(&(src, me as u32, tag)).is_some_and(|q| !q.is_empty()));
                        if !ready {
                            break;
                        }
                        for (src, tag) in std::mem::take(&mut posted[me]) {
                            let t = sent.get_mut(&(src, me as u32, tag)).unwrap().pop_front().unwrap();
                            now[me] = now[me].max(t);
                        }
                    }
                    _ => unreachable!("LU's steps use compute, send, receive and wait"),
                }
                at[me] += 1;
                moved = true;
            }
        }
        if at.iter().zip(&ops).all(|(a, o)| *a == o.len()) {
            return now;
        }
        assert!(moved, "deadlock");
    }
}

/// LU's sweeps are wavefronts: a rank starts a plane once its north and
/// west neighbours (south and east going up) have finished theirs, so each
/// sweep takes `planes + xdim + ydim - 2` plane-times (the pipeline's fill
/// and drain grow with the grid's sides). Without the plane messages every
/// rank would finish in 2 x `planes` plane-times.
#[test]
fn lu_sweeps_fill_and_drain_a_pipeline_of_the_grid_s_sides() {
    let n0 = 162u64;
    let planes = (n0 - 2) as f64;
    // All the compute in the sweeps, 1 ms a plane.
    let phases = LuPerPoint {
        scale: 0.0,
        jacobian: 1.0,
        solve: 0.0,
        update: 0.0,
        rhs_init: 0.0,
        rhs_direction: 0.0,
        rhs_zeta: 0.0,
    };
    let compute = Duration::from_ms(2 * (n0 - 2));
    for (nprocs, sides) in [(4u32, 2.0 + 2.0), (16, 4.0 + 4.0), (32, 8.0 + 4.0)] {
        let steps: Vec<Body> = (0..nprocs)
            .map(|rank| {
                let mut b = Body::new();
                lu_step(&mut b, rank, nprocs, n0, compute, &phases);
                b
            })
            .collect();
        let ends = makespans(&steps);
        let last = ends.iter().cloned().fold(0.0, f64::max);
        let want = 2.0 * (planes + sides - 2.0) * 1e-3;
        assert!((last - want).abs() < 1e-9, "{nprocs} ranks: {last} s, want {want}");
    }
}
