//! Tests of the adaptive coalescing policies, one sample trace at a time.

use super::*;
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
