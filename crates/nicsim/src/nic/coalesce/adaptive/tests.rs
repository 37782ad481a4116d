//! Tests of the adaptive coalescing policies, one sample trace at a time.

use super::*;
use crate::nic::coalesce::TimerCmd;
use rstest::rstest;
use DimTuneState::*;

fn bytes(bpms: u64) -> DimStats {
    DimStats { bpms, ppms: 1_000, epms: 100 }
}

#[rstest]
#[case::plus_11_pct(111, 100, true)]
#[case::plus_10_pct(110, 100, false)]
#[case::minus_11_pct(89, 100, true)]
#[case::minus_10_pct(90, 100, false)]
#[case::zero_reference(5, 0, false)]
fn ten_percent_is_not_significant(#[case] val: u64, #[case] reference: u64, #[case] sig: bool) {
    assert_eq!(significant(val, reference), sig);
}

#[rstest]
#[case::bytes_win_over_packets(
    DimStats { bpms: 120, ppms: 10, epms: 500 }, DimStats { bpms: 100, ppms: 100, epms: 100 }, StatsCmp::Better)]
#[case::bytes_down(
    DimStats { bpms: 80, ppms: 500, epms: 1 }, DimStats { bpms: 100, ppms: 100, epms: 100 }, StatsCmp::Worse)]
#[case::then_packets(
    DimStats { bpms: 105, ppms: 80, epms: 1 }, DimStats { bpms: 100, ppms: 100, epms: 100 }, StatsCmp::Worse)]
#[case::then_fewer_events_is_better(
    DimStats { bpms: 105, ppms: 95, epms: 80 }, DimStats { bpms: 100, ppms: 100, epms: 100 }, StatsCmp::Better)]
#[case::more_events_is_worse(
    DimStats { bpms: 100, ppms: 100, epms: 120 }, DimStats { bpms: 100, ppms: 100, epms: 100 }, StatsCmp::Worse)]
#[case::all_within_10_pct(
    DimStats { bpms: 109, ppms: 91, epms: 110 }, DimStats { bpms: 100, ppms: 100, epms: 100 }, StatsCmp::Same)]
#[case::from_nothing(
    DimStats { bpms: 1, ppms: 1, epms: 1 }, DimStats::default(), StatsCmp::Better)]
fn stats_compare_bytes_then_packets_then_events(
    #[case] curr: DimStats,
    #[case] prev: DimStats,
    #[case] expect: StatsCmp,
) {
    assert_eq!(compare(&curr, &prev), expect);
}

/// Feed samples, collect (state, profile index) after each.
fn walk(t: &mut DimTuner, samples: &[u64]) -> Vec<(DimTuneState, usize)> {
    samples
        .iter()
        .map(|&b| {
            t.decide(bytes(b));
            (t.tune_state(), t.profile_ix())
        })
        .collect()
}

#[test]
fn starts_parked_at_the_default_profile() {
    let t = DimTuner::new();
    assert_eq!((t.tune_state(), t.profile_ix()), (ParkingOnTop, 1));
    assert_eq!(t.profile(), DimProfile { usec: 8, frames: 256 });
    assert_eq!(t.tune_state().to_string(), "parking-on-top");
}

#[test]
fn rising_bytes_keep_it_going_right_to_the_edge() {
    let mut t = DimTuner::new();
    assert_eq!(
        walk(&mut t, &[100, 80, 100, 120, 144, 173, 173, 100]),
        [
            (GoingLeft, 0),  // first sample beats "nothing": leave parking leftward
            (GoingRight, 1), // worse: turn
            (GoingRight, 2), // better: keep going
            (GoingRight, 3),
            (GoingRight, 4),
            (ParkingOnTop, 4), // better but on the right edge: park
            (ParkingOnTop, 4), // same: stay parked
            (GoingLeft, 3),    // worse than when it parked: leave
        ]
    );
}

#[test]
fn overshoot_by_one_then_back_parks_on_top() {
    let mut t = DimTuner::new();
    walk(&mut t, &[100, 80, 100, 120, 144, 173, 173]);
    assert_eq!(
        walk(&mut t, &[100, 120, 100, 120]),
        [
            (GoingLeft, 3),
            (GoingLeft, 2),    // better: keep going left (steps_left = 2)
            (GoingRight, 3),   // worse: turn back one step
            (ParkingOnTop, 3), // better again right after turning: the top
        ]
    );
}

#[test]
fn ten_steps_without_progress_park_tired_then_retry() {
    let mut t = DimTuner::new();
    // Every sample 20% worse than the one before: it oscillates 0 <-> 1.
    let mut b = 1_000_000;
    let mut seq = Vec::new();
    for _ in 0..21 {
        t.decide(bytes(b));
        seq.push((t.tune_state(), t.profile_ix(), t.tired()));
        b = b * 8 / 10;
    }
    assert_eq!(seq[0], (GoingLeft, 0, 1));
    assert_eq!(seq[1], (GoingRight, 1, 2));
    assert_eq!(seq[9], (GoingRight, 1, 10));
    assert_eq!(seq[10], (ParkingTired, 1, 10), "11th sample: too tired");
    assert_eq!(seq[11], (ParkingTired, 1, 9));
    assert_eq!(seq[19], (ParkingTired, 1, 1));
    assert_eq!(seq[20], (GoingLeft, 0, 1), "rested: leave parking");
}

#[test]
fn stats_are_rates_over_whole_microseconds() {
    let start = DimSample { time: Instant::ZERO, pkts: 0, bytes: 0, events: 0 };
    let end = DimSample { time: Instant::ZERO + Duration::from_ns(3_999), pkts: 10, bytes: 15_000, events: 64 };
    // 3.999 us -> 3 us (ktime_us_delta truncates); rates round up.
    assert_eq!(calc_stats(&start, &end), Some(DimStats { ppms: 3_334, bpms: 5_000_000, epms: 21_334 }));
    let same_us = DimSample { time: Instant::ZERO + Duration::from_ns(999), ..end };
    assert_eq!(calc_stats(&start, &same_us), None);
}

// ---------------------------------------------------------------------------
// The four tables, the CQ period modes, where samples are taken, TX DIM
// ---------------------------------------------------------------------------

fn us(x: u64) -> Instant {
    Instant::ZERO + Duration::from_us(x)
}

const RX_FRAME: DmaCompletion = DmaCompletion { marked: false, bytes: 1500, other_pending: 0 };

fn usecs(t: &DimTable) -> Vec<(u32, u32)> {
    t.iter().map(|p| (p.usec, p.frames)).collect()
}

/// lib/dim/net_dim.c (include/linux/dim.h from 6.9): the four tables.
#[test]
fn the_four_profile_tables_are_the_kernels() {
    assert_eq!(usecs(&NET_DIM_RX_EQE_PROFILES), [(1, 256), (8, 256), (64, 256), (128, 256), (256, 256)]);
    assert_eq!(usecs(&NET_DIM_RX_CQE_PROFILES), [(2, 256), (8, 128), (16, 64), (32, 64), (64, 64)]);
    assert_eq!(usecs(&NET_DIM_TX_EQE_PROFILES), [(1, 128), (8, 128), (32, 128), (64, 128), (128, 128)]);
    assert_eq!(usecs(&NET_DIM_TX_CQE_PROFILES), [(5, 128), (8, 64), (16, 32), (32, 32), (64, 32)]);
    // net_dim_get_def_{rx,tx}_moderation: profile 1 in both modes.
    let def = |tx, cqe| Cq::dim(DimSide { cqe, table: None }, tx).tuner.unwrap().profile();
    assert_eq!(def(false, false), DimProfile { usec: 8, frames: 256 });
    assert_eq!(def(false, true), DimProfile { usec: 8, frames: 128 });
    assert_eq!(def(true, false), DimProfile { usec: 8, frames: 128 });
    assert_eq!(def(true, true), DimProfile { usec: 8, frames: 64 });
}

fn cqe_rx() -> DimSpec {
    DimSpec { rx: DimSide { cqe: true, table: None }, ..DimSpec::EQE }
}

/// CQE mode: each completion restarts the timer; EQE mode: it runs from
/// the first completion.
#[test]
fn cqe_mode_restarts_the_timer_at_each_completion() {
    let mut eqe = Dim::new();
    assert_eq!(eqe.on_dma_complete(us(0), RX_FRAME), Decision::arm(us(8)));
    assert_eq!(eqe.on_dma_complete(us(5), RX_FRAME), Decision::NONE);
    assert!(eqe.on_timer(us(8)).raise);

    let mut cqe = Dim::with(cqe_rx());
    assert!(cqe.rx_cqe());
    assert_eq!(cqe.on_dma_complete(us(0), RX_FRAME), Decision::arm(us(8)));
    assert_eq!(cqe.on_dma_complete(us(5), RX_FRAME), Decision::arm(us(13)));
    assert!(cqe.on_timer(us(13)).raise);
    // The profile's packet count raises before the timer: 128 in CQE mode.
    let mut cqe = Dim::with(cqe_rx());
    let raised: Vec<bool> =
        (0..128).map(|i| cqe.on_dma_complete(us(0) + Duration::from_ns(i), RX_FRAME).raise).collect();
    assert_eq!(raised.iter().position(|&r| r), Some(127));
}

/// One interrupt and NAPI completion per `gap`, `frames` received frames
/// (and `tx` transmit completions) before each.
fn cycles(d: &mut Dim, mut t: Instant, n: u32, frames: u32, tx: u32, gap: Duration, rearm: bool) -> Instant {
    for _ in 0..n {
        for _ in 0..frames {
            d.on_dma_complete(t, RX_FRAME);
        }
        for _ in 0..tx {
            d.on_tx_complete(t, 1500, 0);
        }
        d.on_irq_raised(t);
        if rearm {
            d.on_rearm(t + Duration::from_us(1), 0);
        }
        t += gap;
    }
    t
}

/// net_dim runs after napi_complete_done (mlx5e_napi_poll): interrupts with
/// no NAPI completion after them take no sample, so DIM never decides.
#[test]
fn samples_are_taken_at_napi_completion_not_at_the_raise() {
    let mut d = Dim::new();
    cycles(&mut d, Instant::ZERO, 200, 4, 0, Duration::from_us(20), false);
    assert_eq!((d.tuner().tune_state(), d.tuner().profile_ix()), (ParkingOnTop, 1), "no sample taken");
    let mut d = Dim::new();
    cycles(&mut d, Instant::ZERO, 66, 4, 0, Duration::from_us(20), true);
    // The first full window beats "nothing" (prev.bpms = 0): leave parking.
    assert_eq!((d.tuner().tune_state(), d.tuner().profile_ix()), (GoingLeft, 0));
}

/// The samples count received packets (`rq->stats`), not transmit
/// completions: interrupts that report only transmit completions are no
/// events of the receive queue, and their frames no packets.
#[test]
fn transmit_completions_are_not_received_packets() {
    let mut d = Dim::new();
    cycles(&mut d, Instant::ZERO, 200, 0, 4, Duration::from_us(20), true);
    assert_eq!((d.tuner().tune_state(), d.tuner().profile_ix()), (ParkingOnTop, 1));
    // The dim-irq model of the study tables counts them, as completions of
    // no bytes (as the tables were made), and samples at the raise.
    let mut d = Dim::with(DimSpec::AT_IRQ);
    cycles(&mut d, Instant::ZERO, 200, 0, 4, Duration::from_us(20), false);
    assert_eq!((d.rx.pkts, d.rx.bytes, d.rx.events), (800, 0, 200));
    let mut d = Dim::with(DimSpec::AT_IRQ);
    cycles(&mut d, Instant::ZERO, 200, 4, 4, Duration::from_us(20), false);
    assert_ne!((d.tuner().tune_state(), d.tuner().profile_ix()), (ParkingOnTop, 1));
}

fn tx_dim(cqe: bool, table: Option<DimTable>) -> DimSpec {
    DimSpec { tx: Some(TxModeration::Dim(DimSide { cqe, table })), ..cqe_rx() }
}

/// TX DIM: the send completions have their own timer (TX EQE profile 1,
/// 8 µs from the first), folded with the receive timer into the one the
/// NIC holds; one interrupt reports both.
#[test]
fn tx_dim_moderates_the_send_completions_apart() {
    let mut d = Dim::with(tx_dim(false, None));
    assert_eq!(d.tx_tuner().unwrap().profile(), DimProfile { usec: 8, frames: 128 });
    assert_eq!(d.on_tx_complete(us(0), 1500, 0), Decision::arm(us(8)));
    // A received frame at 3 µs: its CQE timer (8 µs) ends later; the NIC's
    // timer stays at the earlier deadline.
    assert_eq!(d.on_dma_complete(us(3), RX_FRAME), Decision::NONE);
    let fired = d.on_timer(us(8));
    assert!(fired.raise);
    assert_eq!(fired.timer, TimerCmd::Arm(us(11)), "the receive deadline is still ahead");
    assert_eq!(d.on_irq_raised(us(8)).timer, TimerCmd::Cancel);
    // TX DIM samples the send queue's packets and bytes: a window of 64
    // transmit-only interrupts moves it, and leaves RX DIM parked.
    let mut d = Dim::with(tx_dim(false, None));
    cycles(&mut d, us(100), 66, 0, 4, Duration::from_us(20), true);
    assert_eq!(d.tx_tuner().unwrap().tune_state(), GoingLeft);
    assert_eq!(d.tuner().tune_state(), ParkingOnTop);
    assert_eq!(d.current_tx_delay(), Some(Duration::from_us(1)), "TX EQE profile 0");
    // A frame shorter than ETH_ZLEN counts 60 bytes, as mlx5 counts it.
    let mut d = Dim::with(tx_dim(false, None));
    d.on_tx_complete(us(0), 42, 0);
    assert_eq!(d.tx.as_ref().map(|tx| tx.bytes), Some(u64::from(ETH_ZLEN)));
}

/// ethtool -C rx-profile (Linux 6.12+): the user's table replaces the
/// kernel's, starting at its profile 1.
#[test]
fn a_tuned_profile_table_replaces_the_kernels() {
    let mine = [
        DimProfile { usec: 3, frames: 16 },
        DimProfile { usec: 20, frames: 32 },
        DimProfile { usec: 40, frames: 64 },
        DimProfile { usec: 80, frames: 64 },
        DimProfile { usec: 160, frames: 64 },
    ];
    let mut d = Dim::with(DimSpec { rx: DimSide { cqe: false, table: Some(mine) }, ..DimSpec::EQE });
    assert_eq!(d.current_delay(), Some(Duration::from_us(20)));
    assert_eq!(d.on_dma_complete(us(0), RX_FRAME), Decision::arm(us(20)));
    // Pulled left by the first window: profile 0 of this table, 3 µs.
    let mut d = Dim::with(DimSpec { rx: DimSide { cqe: false, table: Some(mine) }, ..DimSpec::EQE });
    cycles(&mut d, us(100), 66, 4, 0, Duration::from_us(50), true);
    assert_eq!(d.current_delay(), Some(Duration::from_us(3)));
}
