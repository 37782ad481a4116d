//! Simulated time cannot overflow: an input beyond the clock's limit (100
//! days) is refused by name before the run, and a run whose clock passes
//! the run's limit (110 days) stops with an error instead of wrapping or
//! saturating unseen.

use nicsim::sim::{frame_time_ns, run_replay, ReplayFrame, MAX_TIME_NS};
use nicsim::time::{Duration, Instant};

const DAY_NS: u64 = 86_400 * 1_000_000_000;

/// An Ethernet frame that is not Open-MX, at `ns`.
fn frame(ns: u64) -> ReplayFrame {
    let head = [0u8; 14];
    ReplayFrame::from_capture(Instant::ZERO + Duration::from_ps(ns * 1_000), 60, &head, false, 0, false)
}

#[test]
fn a_replay_spanning_400_days_is_refused_naming_the_frame() {
    // As Python passes them: integer nanoseconds per frame.
    assert_eq!(frame_time_ns(0, 0), Ok(Instant::ZERO));
    assert_eq!(frame_time_ns(7, MAX_TIME_NS), Ok(Instant::LIMIT));
    let e = frame_time_ns(2, 400 * DAY_NS).unwrap_err().0;
    assert_eq!(
        e,
        format!(
            "replay: frame 2 at {} ns is beyond the simulated clock's range (allowed: 0 ..= {MAX_TIME_NS} ns from \
             the first frame, 100 days)",
            400 * DAY_NS
        )
    );
    assert!(frame_time_ns(3, u64::MAX).unwrap_err().0.contains(&format!("frame 3 at {} ns", u64::MAX)));
    assert!(frame_time_ns(4, MAX_TIME_NS + 1).is_err());

    // The same frames given to the core directly.
    let s = nicsim::Scenario::from_toml("[workload]\nkind = \"pingpong\"\n").unwrap();
    // (400 days are past the u64 of picoseconds: 200 days are not.)
    let frames = vec![frame(0), frame(1_000), frame(200 * DAY_NS)];
    let e = run_replay(&s, frames, 1, None, &mut nicsim::interrupt::never).unwrap_err().0;
    assert!(e.starts_with(&format!("replay: frame 2 at {}.000 ns is beyond", 200 * DAY_NS)), "{e}");
    assert!(e.contains(&format!("0 ..= {MAX_TIME_NS} ns")), "{e}");
}

#[test]
fn a_replay_up_to_the_limit_runs() {
    // The kernel tick is on (omx2009's `host.tick`): a replay's hosts run
    // no process, so with tickless idle (`nohz`) no core ticks across the
    // 110 idle days (without it, 16 events every 4 ms would fill them).
    let s = nicsim::Scenario::from_toml("[workload]\nkind = \"pingpong\"\n").unwrap();
    for last in [MAX_TIME_NS / 2, MAX_TIME_NS] {
        let frames = vec![frame(0), frame(last)];
        let (m, _) = run_replay(&s, frames, 1, None, &mut nicsim::interrupt::never).unwrap();
        assert_eq!(m.get("replay_frames"), Some(2.0));
        assert_eq!(m.get("replay_span_us"), Some(last as f64 / 1e3));
    }
}

#[test]
fn a_run_longer_than_the_clock_stops_with_an_error() {
    // 32,000 iterations of 300 s of compute, each chunk varying by up to
    // `FFT_COMPUTE_JITTER` and an iteration lasting as its slower rank's
    // (about 322 s): about 119 days; 28,000 (about 104) fit. (Chunks of
    // 400 s would keep a rank out of its library, and its peer's message
    // unacknowledged, past Open-MX's 500 s give-up.)
    let text = "[workload]\nkind = \"fft-alltoall\"\nprocs_per_host = 1\niterations = 32000\ncompute_us = 3e8\n\
                size_bytes = 64\n[platform.host.tick]\nhz = 0\n";
    // No kernel tick: its events would follow the 100 days of compute
    // 4 ms apart on every busy core (a computing core is not idle, so
    // tickless idle does not stop them), which is not what this test
    // measures.
    let e = nicsim::run_toml(text).unwrap_err();
    assert!(e.starts_with("the simulated clock passed its limit of 110 days"), "{e}");
    let m = super::run(&text.replace("32000", "28000"));
    assert!(m.get("sim_time_us").unwrap() > 100.0 * 86_400e6, "{m:?}");
}

#[test]
fn a_compute_step_beyond_the_clock_is_refused_by_key() {
    // 32,768 x 65,536 elements of 10^6 cycles at 10 MHz: 2e20 ps a step.
    let text = "[platform.host]\nclock_ghz = 0.01\n[workload]\nkind = \"asp\"\nrows = 65536\nelem_cycles = 1e6\n";
    let e = nicsim::Scenario::from_toml(text).unwrap_err().to_string();
    assert!(
        e.contains("`workload.elem_cycles`") && e.contains("within the simulated clock's limit of 100 days"),
        "{e}"
    );
    let most: f64 = e.split("0 ..= ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(nicsim::Scenario::from_toml(&text.replace("1e6", &most.to_string())).is_ok(), "{most}: {e}");
    assert!(nicsim::Scenario::from_toml(&text.replace("1e6", &(most + 1.0).to_string())).is_err());
}
