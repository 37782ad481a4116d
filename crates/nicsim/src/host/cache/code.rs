//! The code of each path of the 2009 stack, fetched through each core's L1
//! instruction cache into the die's L2 ([`CodeLines`]).
//!
//! On Core 2, `PAPI_L2_TCA` (`L2_RQSTS:SELF:ANY:MESI`) counts the
//! instruction fetches the L1I misses as L2 requests, and `PAPI_L2_TCM`
//! (`L2_LINES_IN:SELF:ANY`) the lines they bring into the L2 \[fact: PAPI
//! `src/papi_events.csv`, `CPU,Intel Core2`; docs/paths-2009.md, "Table II,
//! diagnosed"]. So a path's code counts in Table II when, and only when,
//! the core's L1I no longer holds it: when the code the core ran since its
//! last run of the path pushed it out.
//!
//! Each path is a segment of `n` code lines ([`Seg`], sizes in [`CODE`]).
//! Per core, the L1I is an LRU set-associative cache of `sets` sets of
//! `ways` ways (`cache.l1i_kib`, `cache.l1i_ways`). A line of a segment
//! is still there if fewer than `ways` of the distinct lines the core
//! fetched since mapped to its set. The distinct lines since a segment's
//! line are the segment's own lines after it and the sizes of the other
//! segments run on that core after the segment's last run (an LRU stack
//! distance over segments: a segment is run whole, in order). Code
//! addresses are scattered over the sets, taken as uniformly random: the
//! chance a line survives `d` distinct lines is P(Binomial(d, 1/sets) <
//! ways), tabulated once ([`survival`]) and summed over the segment's
//! lines (its line `i` of `n` at distance `d + n - 1 - i`). The lines that did not survive
//! are the path's L1I misses, each an L2 request: a hit if the die's L2
//! still has the segment (it was fetched there fewer than the L2's
//! capacity in lines ago on the die's fill clock), else a miss that brings
//! them in. Code is read-only: any die's L2 may hold a copy, and no write
//! moves it. The expected misses are counted in 1/65,536 of a line, the
//! fraction carried per core, so every count is an integer and the same
//! for the same run.
//!
//! Counted, not charged: the fetches' time is in each stage's fitted cost.
//! Only code modelled here is in the stack distance: the core's other code
//! (the timer tick, the scheduler, IMB's loop) is not.

use super::{CacheStats, ObjClass, Side};
use crate::host::topology::Cpu;

/// A path's code, with a row in [`CODE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seg {
    /// `do_IRQ` → `myri10ge_intr` → `netif_rx_schedule` → `irq_exit`.
    HardIrq = 0,
    /// `myri10ge_tx_done`, `dev_kfree_skb_irq`, `netif_tx_wake_queue`.
    TxDone = 1,
    /// `net_rx_action` → `myri10ge_poll` → `myri10ge_clean_rx_done`,
    /// `lro_flush_all`, `netif_rx_complete`.
    NapiPoll = 2,
    /// `myri10ge_rx_done`: `netdev_alloc_skb`, the header copy,
    /// `netif_receive_skb`.
    RxFrame = 3,
    /// Open-MX `omx_recv` and its frame type's handler (`omx_recv_tiny`,
    /// `_small`, `_medium_frag`, `_pull_reply`, with `omx_notify_*`).
    OmxRecv = 4,
    /// `omx_queue_xmit` → `dev_queue_xmit` → `myri10ge_xmit`.
    OmxXmit = 5,
    /// `sys_ioctl` → `omx_miscdev_ioctl` → `omx_ioctl_send_*`, `omx_new_skb`.
    SendIoctl = 6,
    /// `myri10ge_alloc_rx_pages`.
    Restock = 7,
    /// libopen-mx `omx_isend` → `omx__isend_req` → `omx__submit_isend_*`.
    LibSend = 8,
    /// libopen-mx `omx__progress` → `omx__process_event` →
    /// `omx__process_recv_*` → `omx__recv_complete`.
    LibRecv = 9,
    /// libopen-mx `omx__process_event` for `SEND_MEDIUMSQ_FRAG_DONE`.
    LibFragDone = 10,
    /// Open MPI 1.2.6's send of a message over Open-MX (`MPI_Send` through
    /// the PML and the MX transport to `omx_isend`, and its completion).
    MpiSend = 11,
    /// Open MPI 1.2.6's receive (`MPI_Recv`, the posted request, the
    /// progress loop over `omx_test`/`omx_ipeek`, the completion).
    MpiRecv = 12,
}

/// Number of [`Seg`] values.
pub const SEGS: usize = 13;

/// Code lines (64 B) of each [`Seg`]. Kernel sizes \[estimate] judged from
/// the functions on the path (docs/paths-2009.md, "Footprint of each
/// path": the range's middle); the library's \[estimate] from gcc 12 `-O2`
/// builds of the 1.0.901 sources, a proxy for the 2009 gcc 4.x build.
#[rustfmt::skip]
pub const CODE: [u32; SEGS] = [
    // HardIrq: entry, irq_desc lock, APIC ack, myri10ge_intr, netif_rx_schedule, irq_exit: 25-40 [estimate]
    32,
    // TxDone: loop, dev_kfree_skb_irq, netif_tx_wake_queue: 8-12 [estimate]
    10,
    // NapiPoll: softirq entry, net_rx_action, myri10ge_poll, lro_flush_all, netif_rx_complete: 15-25 [estimate]
    20,
    // RxFrame: myri10ge_rx_done, netdev_alloc_skb, header copy, netif_receive_skb: 30-45 [estimate]
    38,
    // OmxRecv: omx_recv 8-12 + a type's handler 10-25 (omx_recv.c L156-535 of 1.0.901; omx_notify_exp_event / omx_commit_notify_unexp_event) [estimate]
    25,
    // OmxXmit: omx_queue_xmit, dev_queue_xmit, the qdisc's enqueue/dequeue, myri10ge_xmit: 30-50 [estimate]
    40,
    // SendIoctl: syscall entry, sys_ioctl, fget_light, omx_miscdev_ioctl, omx_ioctl_send_*, omx_new_skb: 40-60 [estimate]
    50,
    // Restock: myri10ge_alloc_rx_pages, alloc_pages' fast path: 10-15 [estimate]
    12,
    // LibSend: omx__isend_req 1,274 B + omx__alloc_setup_isend_tiny 888 B + omx_isend 278 B + omx__submit_isend_*: 45-55 [estimate, gcc 12]
    50,
    // LibRecv: omx__progress 886 + omx__process_event 499 + omx__process_recv 1,487 + omx__process_recv_* 331-1,075 + omx__recv_complete 363 B: 45-70 [estimate, gcc 12, partly inlined]
    58,
    // LibFragDone: part of omx__process_event: 8-12 [estimate]
    10,
    // MpiSend: MPI_Send, the PML's send request, the MX transport's send and completion: 4-8 KB [estimate: no 1.2.6 build measured], 96 lines
    96,
    // MpiRecv: MPI_Recv, the PML's receive request, the progress loop (opal_progress, the transport's progress), the completion: 4-8 KB [estimate], 96 lines
    96,
];

/// The segment of each `footprint::Path`, by its index.
pub const OF_PATH: [Seg; super::footprint::PATHS] =
    [Seg::HardIrq, Seg::TxDone, Seg::NapiPoll, Seg::RxFrame, Seg::OmxRecv, Seg::OmxXmit, Seg::SendIoctl, Seg::Restock];

/// The survival table's longest stack distance: at 64 sets of 8 ways,
/// 4,096 distinct lines leave a line a chance below 1e-15.
const MAX_DISTANCE: usize = 4096;

/// Fixed point of [`survival`]'s chances and of the carried fractions.
const ONE: u64 = 1 << 16;

/// The chance, in 1/65,536, that a line of an LRU cache of `sets` sets of
/// `ways` ways survives `d` distinct lines fetched after it, each in a
/// uniformly random set: P(Binomial(d, 1/sets) < ways), for `d` in
/// `0..=MAX_DISTANCE` (beyond: the last).
pub fn survival(sets: u32, ways: u32) -> Vec<u32> {
    let (p, w) = (1.0 / sets.max(1) as f64, ways.max(1) as usize);
    // pmf[k] = P(k of the d lines in the line's set), k < ways.
    let mut pmf = vec![0.0f64; w];
    pmf[0] = 1.0;
    let mut out = Vec::with_capacity(MAX_DISTANCE + 1);
    for _ in 0..=MAX_DISTANCE {
        let s: f64 = pmf.iter().sum();
        out.push(((s * ONE as f64).round() as u64).min(ONE) as u32);
        for k in (0..w).rev() {
            pmf[k] = pmf[k] * (1.0 - p) + if k > 0 { pmf[k - 1] * p } else { 0.0 };
        }
    }
    out
}

/// One core's L1I: its segments from the last run to the longest ago (an
/// LRU stack over segments), a segment a nibble from the lowest, unused
/// nibbles [`EMPTY`]; and the fraction of a line of requests carried.
#[derive(Clone, Copy, Debug)]
struct L1i {
    stack: u64,
    /// In 1/65,536 of a line.
    carry: u64,
}

/// A nibble of [`L1i::stack`] no segment holds.
const EMPTY: u64 = 0xF;
// Every segment fits a nibble, besides EMPTY.
const _: () = assert!(SEGS < EMPTY as usize);
/// Every nibble 1.
const NIBBLES: u64 = 0x1111_1111_1111_1111;

/// The first nibble of `x` equal to `v` (16 if none): SWAR, a nibble is
/// zero in `x ^ v·NIBBLES` where `x` has `v` (borrows only disturb the
/// nibbles above the first zero one).
#[inline(always)]
fn find(x: u64, v: u64) -> u32 {
    let y = x ^ (v * NIBBLES);
    let zero = y.wrapping_sub(NIBBLES) & !y & (NIBBLES << 3);
    zero.trailing_zeros() / 4
}

/// Per host: each core's L1I and each die's L2 copy of each segment.
#[derive(Clone, Debug)]
pub struct CodeLines {
    /// [`survival`] of the L1I's geometry summed: entry `x` is the
    /// survivals of distances `0..x`, `x` up to `MAX_DISTANCE + 1`; empty:
    /// code not fetched.
    kept: Vec<u64>,
    /// Per core.
    l1: Vec<L1i>,
    /// Per die: the die's fill clock just after the segment's lines were
    /// last requested there, and whether ever.
    l2: Vec<[(bool, u64); SEGS]>,
}

impl CodeLines {
    /// No code fetched (the paths' code taken to stay in the L1I).
    pub fn off() -> Self {
        CodeLines { kept: Vec::new(), l1: Vec::new(), l2: Vec::new() }
    }

    /// `cores` cores of L1Is of `lines` lines in `ways` ways, on `dies`
    /// dies; `lines` 0: [`CodeLines::off`].
    pub fn new(cores: usize, dies: usize, lines: u32, ways: u32) -> Self {
        if lines == 0 {
            return CodeLines::off();
        }
        let ways = ways.clamp(1, lines);
        CodeLines {
            kept: std::iter::once(0)
                .chain(survival(lines / ways, ways).into_iter().scan(0u64, |sum, p| {
                    *sum += p as u64;
                    Some(*sum)
                }))
                .collect(),
            l1: vec![L1i { stack: u64::MAX, carry: 0 }; cores],
            l2: vec![[(false, 0); SEGS]; dies],
        }
    }

    /// Whether code is fetched.
    #[inline(always)]
    pub fn on(&self) -> bool {
        !self.kept.is_empty()
    }

    /// One run of `seg` on core `at` from `side`: the lines the L1I lost
    /// since its last run there, requested from the die's L2 and counted
    /// (class `code`); the L2's misses bring lines in. Returns the L2
    /// requests and misses.
    /// Inlined to the check of [`CodeLines::on`] (off in most scenarios:
    /// two instructions a path), the fetch itself out of line.
    #[inline(always)]
    pub fn run(&mut self, cache: &mut CacheStats, seg: Seg, at: Cpu, side: Side) -> (u64, u64) {
        if !self.on() {
            return (0, 0);
        }
        self.fetch(cache, seg, at, side)
    }

    /// [`CodeLines::run`] with the L1I on.
    #[inline(never)]
    fn fetch(&mut self, cache: &mut CacheStats, seg: Seg, at: Cpu, side: Side) -> (u64, u64) {
        let s = seg as usize;
        let n = CODE[s] as u64;
        let l1 = &mut self.l1[at.core as usize];
        let found = find(l1.stack, s as u64);
        let i = if found < 16 { found } else { find(l1.stack, EMPTY) };
        let gone = if found == 16 {
            // Never run on this core: every line is fetched.
            n * ONE
        } else {
            // The distinct code lines fetched since its last run: the
            // segments run after it, ahead of it in the stack.
            let mut d = 0u64;
            for j in 0..i {
                d += CODE[((l1.stack >> (4 * j)) & EMPTY) as usize] as u64;
            }
            // Its lines at distances d..d + n (the last run's last line nearest).
            let kept = |x: u64| self.kept[(x as usize).min(MAX_DISTANCE + 1)];
            n * ONE - (kept(d + n) - kept(d))
        };
        // To the top of the stack: the nibbles below it up by one.
        let below = (1u64 << (4 * i)) - 1;
        let above = if i >= 15 { 0 } else { l1.stack & !((1u64 << (4 * i + 4)) - 1) };
        l1.stack = above | ((l1.stack & below) << 4) | s as u64;
        let owed = l1.carry + gone;
        let requests = owed / ONE;
        l1.carry = owed % ONE;
        if requests == 0 {
            return (0, 0);
        }
        let die = at.die as usize;
        let (seen, stamp) = self.l2[die][s];
        let misses = if seen && cache.fill[die] - stamp < cache.capacity { 0 } else { requests };
        let fill = cache.insert(at.die, misses);
        self.l2[die][s] = (true, fill);
        cache.count(at.core, ObjClass::Code, side, requests, misses);
        (requests, misses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::topology::Topology;

    #[test]
    fn a_line_survives_fewer_distinct_lines_than_ways_and_no_more_than_the_cache_holds() {
        let s = survival(64, 8);
        // Fewer than 8 lines since: none can fill a set.
        assert!(s[..8].iter().all(|&p| p as u64 == ONE));
        // The chance falls as lines come in.
        assert!(s.windows(2).all(|w| w[1] <= w[0]));
        // At the cache's 512 lines, a line of a set that got 8 others is gone.
        let half = (ONE / 2) as u32;
        assert!(s[256] > half && s[512] < half, "{} {}", s[256], s[512]);
        assert!(s[2048] < 2);
        // Fully associative (one set): exactly the LRU's capacity.
        let f = survival(1, 512);
        assert_eq!(f[511] as u64, ONE);
        assert_eq!(f[512], 0);
    }

    #[test]
    fn code_that_fits_the_l1i_is_fetched_once_and_code_that_does_not_at_every_run() {
        let topo = Topology::with_shape(2, 2, 2);
        let at = topo.cpu(0);
        let run = |segs: &[Seg], rounds: u32| {
            let mut code = CodeLines::new(8, 4, 512, 8);
            let mut cache = CacheStats::new(4, 65536, 512);
            cache.watch(0);
            for _ in 0..rounds {
                for &s in segs {
                    let _ = code.run(&mut cache, s, at, Side::Kernel);
                }
            }
            cache.thread_count(ObjClass::Code, Side::Kernel).unwrap()
        };
        // The receive path alone (177 lines): after the first round, few
        // L1I misses, and every one an L2 hit.
        let rx = [Seg::HardIrq, Seg::NapiPoll, Seg::RxFrame, Seg::Restock, Seg::OmxRecv];
        let cold: u64 = rx.iter().map(|&s| CODE[s as usize] as u64).sum();
        let small = run(&rx, 1000);
        assert_eq!(small.misses, cold);
        assert!(small.hits < 1000 * cold / 20, "{small:?}");
        // With the send path, the library and the MPI layer on the same core
        // (527 lines, more than the 512 the L1I holds), much of it again at
        // every round, all L2 hits.
        let all = [
            Seg::HardIrq,
            Seg::NapiPoll,
            Seg::RxFrame,
            Seg::Restock,
            Seg::OmxRecv,
            Seg::TxDone,
            Seg::MpiRecv,
            Seg::LibRecv,
            Seg::MpiSend,
            Seg::LibSend,
            Seg::SendIoctl,
            Seg::OmxXmit,
        ];
        let total: u64 = all.iter().map(|&s| CODE[s as usize] as u64).sum();
        let big = run(&all, 1000);
        assert_eq!(big.misses, total);
        assert!(big.hits > 1000 * total / 4, "{big:?} of {}", 1000 * total);
        // Off, nothing.
        let mut off = CodeLines::off();
        let mut cache = CacheStats::new(4, 65536, 512);
        assert_eq!(off.run(&mut cache, Seg::HardIrq, at, Side::Kernel), (0, 0));
        assert_eq!(cache.totals(), (0, 0));
    }

    #[test]
    fn the_stack_finds_each_segment_and_moves_it_to_the_top() {
        let stack = 0xFFFF_FFFF_FFF3_0A52u64;
        assert_eq!(find(stack, 2), 0);
        assert_eq!(find(stack, 5), 1);
        assert_eq!(find(stack, 0), 3);
        assert_eq!(find(stack, 3), 4);
        assert_eq!(find(stack, 7), 16);
        assert_eq!(find(stack, EMPTY), 5);
        // Segments run in turn on one core: the distance of each is the
        // sizes of the others run since, as an LRU stack counts it.
        let topo = Topology::with_shape(2, 2, 2);
        let mut code = CodeLines::new(8, 4, 64, 64);
        let mut cache = CacheStats::new(4, 65536, 512);
        let at = topo.cpu(0);
        for s in [Seg::TxDone, Seg::Restock, Seg::LibFragDone] {
            let _ = code.run(&mut cache, s, at, Side::Kernel);
        }
        // A 64-line fully associative L1I: TxDone's 10 lines are 12 + 10
        // deep and above; Restock's after it 10 + 10; all kept.
        assert_eq!(code.run(&mut cache, Seg::TxDone, at, Side::Kernel), (0, 0));
        assert_eq!(code.run(&mut cache, Seg::Restock, at, Side::Kernel), (0, 0));
        // HardIrq (32) pushes LibFragDone's 10 lines to depths 54..64: kept.
        let _ = code.run(&mut cache, Seg::HardIrq, at, Side::Kernel);
        assert_eq!(code.run(&mut cache, Seg::LibFragDone, at, Side::Kernel).0, 0);
        // NapiPoll (20): Restock's 12 lines lie under NapiPoll 20,
        // LibFragDone 10 and HardIrq 32, at depths 62..74: 2 kept, 10 lost.
        let _ = code.run(&mut cache, Seg::NapiPoll, at, Side::Kernel);
        assert_eq!(code.run(&mut cache, Seg::Restock, at, Side::Kernel).0, 10);
        // TxDone's under those four, 74 deep: all 10 lost.
        assert_eq!(code.run(&mut cache, Seg::TxDone, at, Side::Kernel).0, 10);
    }

    #[test]
    fn code_the_l2_evicted_misses_again() {
        let topo = Topology::with_shape(2, 2, 2);
        let at = topo.cpu(0);
        let mut code = CodeLines::new(8, 4, 64, 8);
        // An L2 of 90 lines: the MPI layer's 96 lines evict the send's.
        let mut cache = CacheStats::new(4, 90, 512);
        let n = CODE[Seg::LibSend as usize] as u64;
        assert_eq!(code.run(&mut cache, Seg::LibSend, at, Side::User), (n, n));
        let _ = code.run(&mut cache, Seg::MpiSend, at, Side::User);
        let again = code.run(&mut cache, Seg::LibSend, at, Side::User);
        assert_eq!(again.1, again.0);
        assert!(again.0 > n / 2, "{again:?}");
    }
}
