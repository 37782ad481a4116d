//! Tests of the cache model: which die and core hold an object's lines, what
//! touching them costs, and the per-process and per-host line sets.

use super::*;
use crate::config::CacheTimes;

fn costs() -> CacheCosts {
    costs_with(68, 93)
}

/// Cache costs with line transfers of `same` ns (same socket) and `other`
/// ns (other socket), and none of the stages' own line counts: those are
/// what a test sets.
pub(super) fn costs_with(same: u64, other: u64) -> CacheCosts {
    costs_in_flight(same, other, 0)
}

/// [`costs_with`] with `fill_buffers` line misses in flight at once (0:
/// none modelled, each line after the one before).
pub(super) fn costs_in_flight(same: u64, other: u64, fill_buffers: u32) -> CacheCosts {
    CacheCosts::new(&CacheTimes {
        same_socket: Duration::from_ns(same),
        other_socket: Duration::from_ns(other),
        memory: Duration::from_ns(100),
        copy_hot_bytes_per_s: 4_500_000_000,
        copy_cold_bytes_per_s: 1_500_000_000,
        line_bytes: 64,
        prefetch_misses_per_page: 2,
        // The lines each stage touches: not the cache model's.
        endpoint_lines: 0,
        event_lines: 0,
        napi_lines: 0,
        tx_lines: 0,
        tx_contention_lines: 0,
        frag_dtor_lines: 0,
        pull_lines: 0,
        fill_buffers,
        rx_dma_lines: 0,
        kernel_private_lines: 0,
        user_private_lines: 0,
    })
}

/// Clovertown: two sockets of two dies of two cores.
fn topo() -> Topology {
    Topology::with_shape(2, 2, 2)
}

/// The first core of die `die`.
fn on(die: u16) -> Cpu {
    Cpu { core: 2 * die, die }
}

#[test]
fn an_object_stays_in_its_l2_until_capacity_lines_come_in_after_it() {
    let (cc, t) = (costs(), topo());
    let mut st = CacheStats::new(4, 100, 512);
    let mut ep = Obj::new(ObjClass::Endpoint);
    let mut other = Obj::new(ObjClass::Private);
    assert_eq!(cc.access(&t, &mut st, &mut ep, on(0), Side::Kernel, 2), Duration::from_ns(200));
    // 97 lines more: 99 in the L2 since, below its 100: still there.
    cc.touch(&mut st, &mut other, on(0), Side::Kernel, 97);
    assert_eq!(cc.access(&t, &mut st, &mut ep, on(0), Side::Kernel, 2), Duration::ZERO);
    // 100 more after that last touch: evicted, one memory access a line.
    let mut big = Obj::new(ObjClass::Private);
    cc.touch(&mut st, &mut big, on(0), Side::Kernel, 100);
    assert_eq!(cc.access(&t, &mut st, &mut ep, on(0), Side::Kernel, 2), Duration::from_ns(200));
    assert_eq!(st.counts[ObjClass::Endpoint as usize][0].misses, 4);
    assert_eq!(st.counts[ObjClass::Endpoint as usize][0].hits, 2);
}

#[test]
fn a_working_set_larger_than_the_l2_misses_where_a_smaller_one_hits() {
    let cc = costs();
    // Per round: each object of the working set touched once, in turn.
    let run = |objs: usize| {
        let mut st = CacheStats::new(4, 1000, 512);
        let mut set: Vec<Obj> = vec![Obj::new(ObjClass::Private); objs];
        for _ in 0..10 {
            for o in set.iter_mut() {
                cc.touch(&mut st, o, on(0), Side::User, 10);
            }
        }
        st.miss_rate(Side::User)
    };
    // 900 lines fit in 1000: only the first round misses.
    assert!((run(90) - 0.1).abs() < 1e-9);
    // 1100 lines do not: LRU in turn misses every time.
    assert_eq!(run(110), 1.0);
}

#[test]
fn a_line_moves_between_dies_at_the_relation_cost_or_from_memory_once_evicted() {
    let (cc, t) = (costs(), topo());
    let mut st = CacheStats::new(4, 100, 512);
    let mut ring = Obj::new(ObjClass::EventRing);
    cc.access(&t, &mut st, &mut ring, on(0), Side::Kernel, 1);
    assert_eq!(cc.access(&t, &mut st, &mut ring, on(1), Side::User, 1), Duration::from_ns(68));
    assert_eq!(cc.access(&t, &mut st, &mut ring, on(3), Side::Kernel, 1), Duration::from_ns(93));
    let mut big = Obj::new(ObjClass::Private);
    cc.touch(&mut st, &mut big, on(3), Side::Kernel, 100);
    // Evicted from die 3: die 2 gets it from memory.
    assert_eq!(cc.access(&t, &mut st, &mut ring, on(2), Side::User, 1), Duration::from_ns(100));
}

#[test]
fn lines_modified_in_the_sibling_core_s_l1_count_as_misses_and_cost_nothing() {
    let (cc, t) = (costs(), topo());
    // 4 dies of 100 lines each; 8 cores with L1s of 10 lines.
    let mut st = CacheStats::new(4, 100, 10);
    let (core0, core1) = (Cpu { core: 0, die: 0 }, Cpu { core: 1, die: 0 });
    let mut ring = Obj::new(ObjClass::EventRing);
    cc.access(&t, &mut st, &mut ring, core0, Side::Kernel, 2);
    // The sibling reads what core 0 wrote: the L2 is shared, so no
    // time, but the lines come from core 0's L1: two misses.
    assert_eq!(cc.access(&t, &mut st, &mut ring, core1, Side::User, 2), Duration::ZERO);
    assert_eq!(st.counts[ObjClass::EventRing as usize][1], Count { hits: 0, misses: 2 });
    // The same core again: a hit.
    cc.access(&t, &mut st, &mut ring, core1, Side::User, 2);
    assert_eq!(st.counts[ObjClass::EventRing as usize][1], Count { hits: 2, misses: 2 });
    // Core 1 streams 10 more lines through its L1: the ring's lines
    // left it for the L2, where core 0 finds them: a hit.
    let mut other = Obj::new(ObjClass::Private);
    cc.touch(&mut st, &mut other, core1, Side::User, 10);
    cc.access(&t, &mut st, &mut ring, core0, Side::Kernel, 2);
    assert_eq!(st.counts[ObjClass::EventRing as usize][0], Count { hits: 2, misses: 2 });
    // Copies and touches count a sibling's lines the same way.
    let mut slot = Obj::new(ObjClass::Recvq);
    cc.touch(&mut st, &mut slot, core0, Side::Kernel, 4);
    let mut app = Obj::new(ObjClass::AppBuf);
    let hot = cc.copy(&mut st, &mut slot, Some(&mut app), core1, Side::User, 256);
    assert_eq!(hot, cc.copy_hot(256));
    assert_eq!(st.counts[ObjClass::Recvq as usize][1], Count { hits: 0, misses: 4 });
}

#[test]
fn a_cold_copy_brings_every_line_in_and_runs_at_the_cold_rate() {
    let cc = costs();
    let mut st = CacheStats::new(4, 1 << 16, 512);
    let mut dma = Obj::dma_written(&st, Owner::MEMORY);
    let mut slot = Obj::new(ObjClass::Recvq);
    let mut app = Obj::new(ObjClass::AppBuf);
    // 32 KiB from DMA memory: 512 lines come in on each side; 8 pages of
    // 2 demand misses each, the prefetcher requests the other 496 lines,
    // whose demand requests then hit.
    let cold = cc.copy(&mut st, &mut dma, Some(&mut slot), on(0), Side::Kernel, 32768);
    assert_eq!(cold, Duration::for_bytes(32768, 1_500_000_000));
    assert_eq!(st.counts[ObjClass::Dma as usize][0].misses, 512);
    assert_eq!(st.counts[ObjClass::Dma as usize][0].hits, 512 - 16);
    assert_eq!(st.counts[ObjClass::Recvq as usize][0].misses, 512);
    // The library on the same die copies the slot out: hot, no miss.
    let hot = cc.copy(&mut st, &mut slot, Some(&mut app), on(0), Side::User, 32768);
    assert_eq!(hot, Duration::for_bytes(32768, 4_500_000_000));
    assert_eq!(st.counts[ObjClass::Recvq as usize][1].misses, 0);
    // On another die: cold.
    let mut app2 = Obj::new(ObjClass::AppBuf);
    let other = cc.copy(&mut st, &mut slot, Some(&mut app2), on(2), Side::User, 32768);
    assert_eq!(other, cold);
}

#[test]
fn receive_queue_slots_are_made_as_they_are_reached_and_reused_after_the_last() {
    let mut lines = ProcLines::default();
    for _ in 0..3 {
        lines.slot_to_write().stamp = 7;
    }
    // Read ahead of the writes: a slot the driver never filled is in memory.
    for _ in 0..4 {
        lines.slot_to_read();
    }
    assert_eq!(lines.recvq.len(), 4);
    assert_eq!(lines.recvq[3].owner, Owner::MEMORY);
    assert_eq!(lines.recvq[3].stamp, 0);
    for _ in 3..RECVQ_SLOTS {
        lines.slot_to_write();
    }
    assert_eq!(lines.recvq.len(), RECVQ_SLOTS);
    // The next write goes round to slot 0 and finds what was left there.
    let first = lines.slot_to_write();
    assert_eq!(first.stamp, 7);
    first.stamp = 9;
    assert_eq!(lines.recvq.len(), RECVQ_SLOTS);
    assert_eq!(lines.recvq.capacity(), RECVQ_SLOTS);
    assert_eq!(lines.recvq[0].stamp, 9);
}

/// The access rule written out one access at a time, as the cache model
/// states it (module documentation): what a [`Walk`] must give.
fn access_one_by_one(cc: &CacheCosts, t: &Topology, st: &mut CacheStats, obj: &mut Obj, at: Cpu, n: u64) -> Duration {
    if n == 0 {
        return Duration::ZERO;
    }
    let hit = st.holds(obj.owner, obj.stamp, at.die);
    let cost = if hit {
        Duration::ZERO
    } else {
        let from = match obj.owner.die_index() {
            Some(d) if st.resident(d, obj.stamp) => obj.owner,
            _ => Owner::MEMORY,
        };
        cc.line(t, from, at.die).times(n)
    };
    let sibling = st.in_sibling_l1(obj, at);
    let miss = if hit { 0 } else { n };
    st.count(at.core, obj.class, Side::Kernel, n, if sibling { n } else { miss });
    obj.owner = Owner::die(at.die);
    obj.stamp = st.insert(at.die, miss);
    obj.core = at.core;
    cost
}

#[test]
fn a_walk_gives_what_its_accesses_one_by_one_give() {
    let (cc, t) = (costs(), topo());
    // A small L2 (48 lines) and L1 (6 lines): evictions, lines in a
    // sibling's L1 and lines gone from it all happen.
    let (mut walked, mut single) = (CacheStats::new(4, 48, 6), CacheStats::new(4, 48, 6));
    // Core 3's accesses are counted apart as well (the measured thread's).
    walked.watch(3);
    single.watch(3);
    let mut objs_w = [Obj::new(ObjClass::Driver); 6];
    let mut objs_s = objs_w;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let mut outcomes = std::collections::BTreeSet::new();
    for _ in 0..4000 {
        let at = t.cpu(next(8) as u16);
        let mut walk = Walk::begin(&walked, at, ObjClass::Driver, Side::Kernel);
        let mut cost = Duration::ZERO;
        for _ in 0..1 + next(4) {
            if next(4) == 0 {
                // Lines with no object: a DMA's (misses) and per-CPU ones.
                let (lines, miss) = (next(5), next(3));
                let lines = lines.max(miss);
                walk.count(lines, miss);
                single.count(at.core, ObjClass::Driver, Side::Kernel, lines, miss);
                single.insert(at.die, miss);
            } else {
                let (i, n) = (next(6) as usize, next(5));
                walk.access(&cc, &t, &walked, &mut objs_w[i], n as u32);
                let c = access_one_by_one(&cc, &t, &mut single, &mut objs_s[i], at, n);
                outcomes.insert(c);
                cost += c;
            }
        }
        assert_eq!(walk.end(&mut walked), cost);
        assert_eq!(walked.counts, single.counts);
        assert_eq!(walked.thread.counts, single.thread.counts);
        assert_eq!(walked.fill, single.fill);
        for (w, s) in objs_w.iter().zip(&objs_s) {
            assert_eq!((w.owner, w.core, w.stamp), (s.owner, s.core, s.stamp));
        }
    }
    // Hits, transfers from both relations and from memory all occurred.
    assert!(outcomes.len() >= 4, "{outcomes:?}");
    let d = walked.counts[ObjClass::Driver as usize][0];
    assert!(d.hits > 1000 && d.misses > 1000, "{d:?}");
    let (accesses, misses) = walked.thread_side_totals(Side::Kernel).unwrap();
    assert!(misses > 100 && accesses > misses, "{accesses} {misses}");
    assert!(accesses < d.hits + d.misses);
}

#[test]
fn the_thread_counts_hold_only_the_watched_cores_accesses() {
    // PAPI's per-thread counters ([OMX-MQ] Table II): the kernel work of an
    // interrupt served on another core is not in the process's counts.
    let (cc, t) = (costs(), topo());
    let mut st = CacheStats::new(4, 65536, 512);
    let (mut ep, mut private) = (Obj::new(ObjClass::Endpoint), Obj::new(ObjClass::Private));
    assert_eq!(st.thread_side_totals(Side::Kernel), None);
    st.watch(0);
    // The interrupt on the sibling core 1 (same die): 3 lines, all misses.
    cc.access(&t, &mut st, &mut ep, Cpu { core: 1, die: 0 }, Side::Kernel, 3);
    assert_eq!(st.side_totals(Side::Kernel), (3, 3));
    assert_eq!(st.thread_side_totals(Side::Kernel), Some((0, 0)));
    // The process's send system call on core 0: the endpoint's lines come
    // from the sibling's L1 (misses), its own private lines then hit.
    cc.access(&t, &mut st, &mut ep, on(0), Side::Kernel, 3);
    cc.touch(&mut st, &mut private, on(0), Side::Kernel, 5);
    cc.touch(&mut st, &mut private, on(0), Side::Kernel, 5);
    assert_eq!(st.thread_side_totals(Side::Kernel), Some((13, 8)));
    assert_eq!(st.side_totals(Side::Kernel), (16, 11));
    // The user side is counted apart as well; copies too.
    let mut app = Obj::new(ObjClass::AppBuf);
    cc.copy(&mut st, &mut private, Some(&mut app), on(0), Side::User, 640);
    let (accesses, misses) = st.thread_side_totals(Side::User).unwrap();
    assert_eq!((accesses, misses), st.side_totals(Side::User));
    assert_eq!(misses, 10);
    // Lines two cores bounce (`host::tx`): each core's share.
    st.count_misses(0, ObjClass::TxRing, Side::Kernel, 4);
    st.count_misses(5, ObjClass::TxRing, Side::Kernel, 4);
    assert_eq!(st.thread_side_totals(Side::Kernel), Some((17, 12)));
    assert_eq!(st.side_totals(Side::Kernel), (24, 19));
}

#[test]
fn the_costs_of_a_topology_look_up_each_pair_of_dies_as_its_relation_gives_it() {
    for (s, d, c) in [(2, 2, 2), (1, 1, 4), (2, 1, 4), (4, 2, 1), (1, 3, 2)] {
        let t = Topology::with_shape(s, d, c);
        let (by_relation, by_pair) = (costs(), costs().for_topology(&t));
        for from in 0..t.dies() {
            for to in 0..t.dies() {
                let (r, p) = (by_relation.line(&t, Owner::die(from), to), by_pair.line(&t, Owner::die(from), to));
                assert_eq!(p, r, "{s}x{d}x{c}: die {from} to {to}");
            }
        }
        assert_eq!(by_pair.line(&t, Owner::MEMORY, 0), Duration::from_ns(100));
    }
    // The three relations, by the pair: same die, same socket, other socket.
    let t = topo();
    let cc = costs().for_topology(&t);
    let line = |from, to| cc.line(&t, Owner::die(from), to);
    assert_eq!((line(0, 0), line(0, 1), line(0, 2)), (Duration::ZERO, Duration::from_ns(68), Duration::from_ns(93)));
}

#[test]
fn independent_lines_overlap_up_to_the_fill_buffers_and_a_chain_does_not() {
    let t = topo();
    // Four one-line objects last written on die 1 (and one on die 2, the
    // other socket, where `far`), walked from die 0 at the given steps.
    let stall = |fill: u32, steps: [Step; 4], far: bool| {
        let cc = costs_in_flight(68, 93, fill);
        let mut st = CacheStats::new(4, 65536, 512);
        let mut objs = [Obj::new(ObjClass::Driver); 4];
        for (i, o) in objs.iter_mut().enumerate() {
            let die = if far && i == 3 { 2 } else { 1 };
            let _ = cc.access(&t, &mut st, o, on(die), Side::Kernel, 1);
        }
        let before = st.counts;
        let (mut w, mut f) = (Walk::begin(&st, on(0), ObjClass::Driver, Side::Kernel), Flight::default());
        for (o, s) in objs.iter_mut().zip(steps) {
            w.access_at(&cc, &t, &st, o, 1, s, &mut f);
        }
        w.settle(&cc, &mut f);
        let stall = w.end(&mut st);
        // Whatever the overlap, four misses.
        let k = Side::Kernel as usize;
        assert_eq!(st.counts[ObjClass::Driver as usize][k].misses - before[ObjClass::Driver as usize][k].misses, 4);
        stall
    };
    let line = Duration::from_ns(68);
    let together = [Step::at(0); 4];
    // Independent lines are in flight together: one transfer's time.
    assert_eq!(stall(8, together, false), line);
    // With one from the other socket, the slowest's.
    assert_eq!(stall(8, together, true), Duration::from_ns(93));
    // Dependent lines (each address read from the line before): the sum.
    assert_eq!(stall(8, [Step::at(0), Step::at(1), Step::at(2), Step::at(3)], false), line.times(4));
    // A chain runs through one object's lines: four one-line objects each
    // starting one at step 0 are in flight together.
    assert_eq!(stall(8, [Step::chain(0); 4], false), line);
    // Two at step 0, then a chain of two: three transfers.
    assert_eq!(stall(8, [Step::at(0), Step::at(0), Step::at(1), Step::at(2)], false), line.times(3));
    // Two fill buffers: two waves of two.
    assert_eq!(stall(2, together, false), line.times(2));
    // One fill buffer, or none set: each line after the one before, what
    // `CacheCosts::access` charges.
    assert_eq!(stall(1, together, false), line.times(4));
    assert_eq!(stall(0, together, false), line.times(4));
}

#[test]
fn an_objects_lines_at_one_step_overlap_and_chained_they_add_up() {
    let t = topo();
    let stall = |step: Step| {
        let cc = costs_in_flight(68, 93, 8);
        let mut st = CacheStats::new(4, 65536, 512);
        let mut obj = Obj::new(ObjClass::Driver);
        let _ = cc.access(&t, &mut st, &mut obj, on(1), Side::Kernel, 3);
        let (mut w, mut f) = (Walk::begin(&st, on(0), ObjClass::Driver, Side::Kernel), Flight::default());
        w.access_at(&cc, &t, &st, &mut obj, 3, step, &mut f);
        w.settle(&cc, &mut f);
        w.end(&mut st)
    };
    assert_eq!(stall(Step::at(0)), Duration::from_ns(68));
    assert_eq!(stall(Step::chain(0)), Duration::from_ns(68).times(3));
    // Past the steps a walk keeps apart, one after another.
    assert_eq!(stall(Step::at(9)), Duration::from_ns(68).times(3));
}

#[test]
fn two_accesses_priced_in_closed_form_cost_what_their_steps_in_flight_cost() {
    // `Walk::settle_two` against `access_at` of each and `settle`, over
    // every shape a footprint row can take (lines 0-5 of each object, at
    // or chained from steps 0-5, past the steps a walk keeps apart) and
    // each object's lines a hit, on the same socket, the other socket or
    // in memory, with 0 to 4 fill buffers.
    let t = topo();
    let shapes: Vec<(u32, Step)> =
        (0..=5).flat_map(|n| (0..=5).flat_map(move |s| [(n, Step::at(s)), (n, Step::chain(s))])).collect();
    // Where an object's lines were last written: this die (a hit), the
    // same socket, the other socket, memory.
    let placed = |cc: &CacheCosts, st: &mut CacheStats, o: &mut Obj, at: Option<u16>| {
        if let Some(die) = at {
            let _ = cc.access(&t, st, o, on(die), Side::Kernel, 5);
        }
    };
    let mut distinct = std::collections::BTreeSet::new();
    for fill in 0..=4 {
        let cc = costs_in_flight(68, 93, fill);
        for &(na, sa) in &shapes {
            for &(nb, sb) in &shapes {
                for (wa, wb) in [(Some(1), Some(2)), (Some(0), Some(3)), (None, Some(1)), (Some(2), Some(2))] {
                    let run = |closed: bool| {
                        let mut st = CacheStats::new(4, 65536, 512);
                        let (mut a, mut b) = (Obj::new(ObjClass::Driver), Obj::new(ObjClass::Driver));
                        placed(&cc, &mut st, &mut a, wa);
                        placed(&cc, &mut st, &mut b, wb);
                        let mut w = Walk::begin(&st, on(0), ObjClass::Driver, Side::Kernel);
                        if closed {
                            let la = w.take(&cc, &t, &st, &mut a, na);
                            let lb = w.take(&cc, &t, &st, &mut b, nb);
                            w.settle_two(&cc, (la, na, sa), (lb, nb, sb));
                        } else {
                            let mut f = Flight::default();
                            w.access_at(&cc, &t, &st, &mut a, na, sa, &mut f);
                            w.access_at(&cc, &t, &st, &mut b, nb, sb, &mut f);
                            w.settle(&cc, &mut f);
                        }
                        let stall = w.end(&mut st);
                        (stall, st.counts, st.fill[0])
                    };
                    let (closed, steps) = (run(true), run(false));
                    assert_eq!(closed, steps, "fill {fill}: {na} at {sa:?}, {nb} at {sb:?}, from {wa:?} and {wb:?}");
                    distinct.insert(closed.0);
                }
            }
        }
    }
    // The cases price differently (the comparison is not of zeros).
    assert!(distinct.len() > 20, "{} distinct stalls", distinct.len());
}
