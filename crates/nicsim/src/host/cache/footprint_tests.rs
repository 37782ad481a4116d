//! Tests of the paths' footprints (`footprint`): where each path's
//! lines go under a round-robin and a bound interrupt, and what a walk of
//! several paths gives against the paths one by one.

use super::*;

fn costs() -> CacheCosts {
    // The copy speeds do not matter here.
    crate::host::cache::tests::costs_with(70, 100)
}

/// The receive paths of one interrupt with one frame on core `core`.
fn interrupt(lines: &mut super::super::HostLines, cache: &mut CacheStats, core: u16) -> Duration {
    let (cc, topo) = (costs(), Topology::with_shape(2, 2, 2));
    let at = topo.cpu(core);
    let mut t = Duration::ZERO;
    for p in [Path::HardIrq, Path::NapiPoll, Path::RxFrame, Path::OmxRecv, Path::TxDone] {
        t += lines.path(&cc, &topo, cache, (p, 0), at);
    }
    t
}

#[test]
fn the_written_lines_follow_a_round_robin_interrupt_and_stay_with_a_bound_one() {
    let mut bound = (super::super::HostLines::new(8, 1, true), CacheStats::new(4, 65536, 512));
    let mut rr = (super::super::HostLines::new(8, 1, true), CacheStats::new(4, 65536, 512));
    let (mut t_bound, mut t_rr) = (Duration::ZERO, Duration::ZERO);
    for i in 0..800u16 {
        t_bound += interrupt(&mut bound.0, &mut bound.1, 0);
        t_rr += interrupt(&mut rr.0, &mut rr.1, i % 8);
    }
    let driver = |s: &CacheStats| s.counts[ObjClass::Driver as usize][Side::Kernel as usize];
    // Round-robin: every interrupt after the first moves every written line
    // (on another die, or modified in the sibling core's L1).
    let written: u32 = [Path::HardIrq, Path::NapiPoll, Path::RxFrame, Path::OmxRecv, Path::TxDone]
        .into_iter()
        .map(written_lines)
        .sum();
    assert_eq!(written, 12);
    assert!(driver(&rr.1).misses >= 799 * 11, "{:?}", driver(&rr.1));
    // Half the hand-overs (core 1 to 2, 3 to 4, 5 to 6, 7 to 0) cross
    // dies: those are charged.
    assert!(t_rr >= Duration::from_ns(70).times(799 * 11 / 2), "{t_rr}");
    assert!(t_bound <= Duration::from_ns(100).times(11), "{t_bound}");
    // The DMA-written line (mcp_irq_data) misses wherever the
    // interrupt runs: bound, it is the only miss after the first touches.
    assert_eq!(driver(&bound.1).misses, 11 + 800);
    // The per-CPU and read-mostly lines hit.
    let stay: u64 = [Path::HardIrq, Path::NapiPoll, Path::RxFrame, Path::OmxRecv, Path::TxDone]
        .into_iter()
        .map(|p| FOOTPRINT[p as usize].stay as u64)
        .sum();
    assert_eq!(driver(&bound.1).hits, 800 * (stay + 12) - 11);
}

#[test]
fn two_paths_run_back_to_back_give_what_each_run_alone_gives() {
    let (cc, topo) = (costs(), Topology::with_shape(2, 2, 2));
    let (mut two, mut one) = (PathLines::new(2, true), PathLines::new(2, true));
    // An L2 of 40 lines: the DMA-written lines alone evict the others.
    let (mut c2, mut c1) = (CacheStats::new(4, 40, 8), CacheStats::new(4, 40, 8));
    // Core 2's accesses counted apart too (the measured thread's).
    c2.watch(2);
    c1.watch(2);
    let pairs = [
        ((Path::HardIrq, 1), (Path::NapiPoll, 1)),
        ((Path::RxFrame, 1), (Path::OmxRecv, 3)),
        ((Path::TxDone, 0), (Path::OmxSend, 0)),
        ((Path::RxFrame, 0), (Path::OmxRecv, 0)),
    ];
    for i in 0..200u16 {
        let at = topo.cpu((i * 3) % 8);
        let (a, b) = pairs[i as usize % pairs.len()];
        let t2 = two.run_all(&cc, &topo, &mut c2, [a, b], at);
        let t1 = one.run(&cc, &topo, &mut c1, a, at) + one.run(&cc, &topo, &mut c1, b, at);
        assert_eq!(t2, t1, "run {i}");
        assert_eq!(c2.counts, c1.counts, "run {i}");
        assert_eq!(c2.thread_side_totals(Side::Kernel), c1.thread_side_totals(Side::Kernel), "run {i}");
    }
    assert!(c2.counts[ObjClass::Driver as usize][0].misses > 0);
    assert!(c2.thread_side_totals(Side::Kernel).unwrap().1 > 0);
}

#[test]
fn a_send_call_in_one_walk_gives_what_the_ioctl_and_the_send_give_one_after_the_other() {
    let (cc, topo) = (costs(), Topology::with_shape(2, 2, 2));
    let (mut one, mut two) = (super::super::HostLines::new(8, 2, true), super::super::HostLines::new(8, 2, true));
    // A small L2 and L1: evictions, and lines in a sibling's L1.
    let (mut c1, mut c2) = (CacheStats::new(4, 60, 12), CacheStats::new(4, 60, 12));
    c1.watch(3);
    c2.watch(3);
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..3000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let (core, ep, payload) = ((x % 8) as u16, ((x >> 8) % 3) as usize, ((x >> 16) % 4) as u32);
        let at = topo.cpu(core);
        if (x >> 24).is_multiple_of(3) {
            // The receive path writes the endpoint's line on some core.
            let rx = topo.cpu(((x >> 32) % 8) as u16);
            let run = [(Path::RxFrame, 1), (Path::OmxRecv, ep)];
            assert_eq!(one.paths(&cc, &topo, &mut c1, run, rx), two.paths(&cc, &topo, &mut c2, run, rx));
        }
        let t1 = one.send_call(&cc, &topo, &mut c1, ep, payload, at);
        two.paths.send_ioctl(&cc, &mut c2, ep, at);
        let t2 = two.paths.send(&cc, &topo, &mut c2, payload, at);
        assert_eq!(t1, t2, "send {i}");
        assert_eq!(c1.counts, c2.counts, "send {i}");
        assert_eq!(c1.fill, c2.fill, "send {i}");
        assert_eq!(c1.thread_side_totals(Side::Kernel), c2.thread_side_totals(Side::Kernel), "send {i}");
    }
    // Both kinds of read outcome happened.
    let driver = c1.counts[ObjClass::Driver as usize][Side::Kernel as usize];
    assert!(driver.misses > 3000 && driver.hits > 3000, "{driver:?}");
    // Off, nothing.
    let mut off = super::super::HostLines::new(8, 1, false);
    let mut cache = CacheStats::new(4, 65536, 512);
    assert_eq!(off.send_call(&cc, &topo, &mut cache, 0, 2, topo.cpu(0)), Duration::ZERO);
    assert_eq!(cache.totals(), (0, 0));
}

#[test]
fn the_send_system_call_reads_the_endpoint_line_the_receive_path_wrote() {
    // The receive path (omx_recv's kref) on the interrupt's core 1, then
    // the process's send ioctl on core 0 (S$: the same die), in turn.
    let (cc, topo) = (costs(), Topology::with_shape(2, 2, 2));
    let mut lines = super::super::HostLines::new(8, 1, true);
    let mut cache = CacheStats::new(4, 65536, 512);
    cache.watch(0);
    let n = 100u64;
    for _ in 0..n {
        lines.path(&cc, &topo, &mut cache, (Path::OmxRecv, 3), topo.cpu(1));
        lines.paths.send_ioctl(&cc, &mut cache, 3, topo.cpu(0));
    }
    let row = FOOTPRINT[Path::SendIoctl as usize];
    assert_eq!(written_lines(Path::SendIoctl), 0);
    // The process's counts: per call, the endpoint's line 0 from the
    // sibling's L1 (a miss) and the per-CPU and read-mostly lines (hits).
    let (accesses, misses) = cache.thread_side_totals(Side::Kernel).unwrap();
    assert_eq!(accesses, n * (1 + row.stay as u64));
    assert_eq!(misses, n);
    // Read, not taken: the receive path's writes on core 1 keep hitting
    // (only the first touches of its two lines miss).
    assert_eq!(cache.side_totals(Side::Kernel).1, n + 2);
    // On the interrupt's core (SC) the line stays: only the first misses.
    let mut lines = super::super::HostLines::new(8, 1, true);
    let mut cache = CacheStats::new(4, 65536, 512);
    cache.watch(0);
    for _ in 0..n {
        lines.path(&cc, &topo, &mut cache, (Path::OmxRecv, 3), topo.cpu(0));
        lines.paths.send_ioctl(&cc, &mut cache, 3, topo.cpu(0));
    }
    let recv = FOOTPRINT[Path::OmxRecv as usize];
    let per = 1 + row.stay as u64 + written_lines(Path::OmxRecv) as u64 + recv.stay as u64;
    assert_eq!(cache.thread_side_totals(Side::Kernel), Some((n * per, 2)));
}

#[test]
fn the_restock_writes_lines_that_follow_a_round_robin_poll_and_stay_with_a_bound_one() {
    let (cc, topo) = (costs(), Topology::with_shape(2, 2, 2));
    let runs = [(Path::RxFrame, 0), (Path::Restock, 0), (Path::OmxRecv, 0)];
    let n = 400u64;
    let misses = |rr: bool| {
        let mut lines = super::super::HostLines::new(8, 1, true);
        let mut cache = CacheStats::new(4, 65536, 512);
        for i in 0..n {
            let at = topo.cpu(if rr { (i % 8) as u16 } else { 0 });
            let _ = lines.paths(&cc, &topo, &mut cache, runs, at);
        }
        cache.counts[ObjClass::Driver as usize][Side::Kernel as usize]
    };
    let per_frame: u32 = runs.iter().map(|&(p, _)| written_lines(p)).sum();
    // rx_* + info + page, stats, the restock's info/shadow and page,
    // the interface's counters and the endpoint's refcount.
    assert_eq!(written_lines(Path::Restock), 2);
    assert_eq!(per_frame, 8);
    let (rr, bound) = (misses(true), misses(false));
    // Round-robin: every frame's core misses every line the last one
    // wrote, the restock's with them.
    assert_eq!(rr.misses, n * per_frame as u64);
    // Bound: only the first touches miss; the restock's lines are hits.
    assert_eq!(bound.misses, per_frame as u64);
    let stay: u64 = runs.iter().map(|&(p, _)| FOOTPRINT[p as usize].stay as u64).sum();
    assert_eq!(bound.hits + bound.misses, n * (per_frame as u64 + stay));
}

#[test]
fn a_send_misses_the_lines_the_nics_transmit_dma_read_wherever_it_runs() {
    // The process's sends on its own core (the interrupt's too: SC), one
    // after the other, with the lines the NIC's DMA read left Invalid:
    // the frame's head and a small send's data, read by the NIC's DMA
    // at the last send, miss every time; the data's source in the
    // caller's buffer, the interface's counters and the driver's shadow
    // of the ring stay.
    let (cc, topo) = (costs(), Topology::with_shape(2, 2, 2));
    let mut lines = super::super::HostLines::new(8, 1, true);
    let mut cache = CacheStats::new(4, 65536, 512);
    cache.watch(0);
    let (n, payload) = (100u64, 2u32);
    for _ in 0..n {
        let _ = lines.paths.send(&cc, &topo, &mut cache, payload, topo.cpu(0));
    }
    let row = FOOTPRINT[Path::OmxSend as usize];
    assert_eq!(row.dma, 1);
    let per = written_lines(Path::OmxSend) as u64 + row.stay as u64 + row.dma as u64 + 2 * payload as u64;
    // The counters' line misses once (its first touch).
    let expected = n * (row.dma as u64 + payload as u64) + 1;
    assert_eq!(cache.thread_side_totals(Side::Kernel), Some((n * per, expected)));
    // Left Shared (`cache.tx_dma_read_shares`), the same accesses and
    // the counters' first touch the only miss.
    let mut lines = super::super::HostLines::new(8, 1, true).sharing_tx_reads(true);
    let mut cache = CacheStats::new(4, 65536, 512);
    cache.watch(0);
    for _ in 0..n {
        let _ = lines.paths.send(&cc, &topo, &mut cache, payload, topo.cpu(0));
    }
    assert_eq!(cache.thread_side_totals(Side::Kernel), Some((n * per, 1)));
    // Off, nothing.
    let mut lines = super::super::HostLines::new(8, 1, false);
    let mut cache = CacheStats::new(4, 65536, 512);
    assert_eq!(lines.paths.send(&cc, &topo, &mut cache, payload, topo.cpu(0)), Duration::ZERO);
    assert_eq!(cache.totals(), (0, 0));
}

#[test]
fn switched_off_the_paths_touch_nothing() {
    let mut lines = super::super::HostLines::new(8, 1, false);
    let mut cache = CacheStats::new(4, 65536, 512);
    let mut t = Duration::ZERO;
    for i in 0..64u16 {
        t += interrupt(&mut lines, &mut cache, i % 8);
    }
    assert_eq!(t, Duration::ZERO);
    assert_eq!(cache.totals(), (0, 0));
}

#[test]
fn a_round_robin_hand_over_costs_each_paths_chain_not_the_sum_of_its_lines() {
    let topo = Topology::with_shape(2, 2, 2);
    // The paths run on core 0 (die 0), then on core 2 (die 1, the same
    // socket: 70 ns a line), then on core 2 again (bound: nothing moves).
    let hand_over = |fill: u32, runs: &[(Path, usize)]| {
        let cc = crate::host::cache::tests::costs_in_flight(70, 100, fill);
        let mut lines = super::super::HostLines::new(8, 1, true);
        let mut cache = CacheStats::new(4, 65536, 512);
        let mut at = |core: u16| {
            runs.iter()
                .map(|&r| lines.path(&cc, &topo, &mut cache, r, topo.cpu(core)))
                .fold(Duration::ZERO, |a, b| a + b)
        };
        let _ = at(0);
        (at(2), at(2))
    };
    let line = Duration::from_ns(70);
    // The interrupt: irq_desc's 2 lines a chain (the lock after the load of
    // handle_irq), the NAPI poll's 3 in flight together: 3 transfers for 5
    // lines; one after another (no fill buffers modelled), 5.
    let irq = [(Path::HardIrq, 0), (Path::NapiPoll, 0)];
    assert_eq!(written_lines(Path::HardIrq) + written_lines(Path::NapiPoll), 5);
    assert_eq!(hand_over(8, &irq), (line.times(3), Duration::ZERO));
    assert_eq!(hand_over(0, &irq), (line.times(5), Duration::ZERO));
    // A frame: the driver's chain of 3 (stats beside its first), the
    // restock's 2 (after get_page's locked increment), omx_recv's 2 (the
    // counters after kref_get): 7 transfers for 8 lines.
    let frame = [(Path::RxFrame, 0), (Path::Restock, 0), (Path::OmxRecv, 0)];
    assert_eq!(hand_over(8, &frame), (line.times(7), Duration::ZERO));
    assert_eq!(hand_over(0, &frame), (line.times(8), Duration::ZERO));
    // The steps change what a path costs, not what it counts.
    let counts = |fill: u32| {
        let cc = crate::host::cache::tests::costs_in_flight(70, 100, fill);
        let mut lines = super::super::HostLines::new(8, 1, true);
        let mut cache = CacheStats::new(4, 65536, 512);
        for i in 0..64u16 {
            let _ = lines.paths(&cc, &topo, &mut cache, irq, topo.cpu(i % 8));
        }
        cache.counts
    };
    assert_eq!(counts(8), counts(1));
}
