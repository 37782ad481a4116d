//! [EMO]: the analytic model against the simulator, both from the same
//! `emo2004` scenario (nothing fitted): latency slope vs size on each path,
//! and the latency offset interrupt coalescing adds.

use nicsim::model::{echo, Path};
use nicsim::Scenario;

/// The [EMO] measurement scenario: echo server per path, coalescing
/// thresholds (`none` = 0/0, `max` = 1000 frames / 100 us), blocking
/// library, cycle soaker on the hosts.
fn scenario(path: Path, delay_us: f64, frames: u32, size: u64) -> String {
    let kind = match path {
        Path::ToNic => "echo-nic",
        Path::ToKernel => "echo-kernel",
        Path::ToApp => "pingpong",
    };
    format!(
        "preset = \"emo2004\"\n[nic]\ncoalescing = \"timeout\"\ndelay_us = {delay_us}\nframes = {frames}\n[host]\nwait = \"block\"\nsoaker = true\n[workload]\nkind = \"{kind}\"\nsize_bytes = {size}\niterations = 200\nwarmup = 10\n"
    )
}

/// (simulated, model) half round trip in microseconds.
fn latency(path: Path, delay_us: f64, frames: u32, size: u64) -> (f64, f64) {
    let text = scenario(path, delay_us, frames, size);
    let sim = super::run(&text).get("latency_us").unwrap();
    let s = Scenario::from_toml(&text).unwrap();
    let model = echo(&s, path, size, &[]).unwrap().latency_s * 1e6;
    (sim, model)
}

#[test]
fn model_slope_vs_size_matches_the_simulator_on_each_path() {
    for path in Path::ALL {
        let (s1, m1) = latency(path, 0.0, 0, 1000);
        let (s2, m2) = latency(path, 0.0, 0, 8000);
        let (ss, ms) = ((s2 - s1) / 7000.0, (m2 - m1) / 7000.0);
        assert!((ms - ss).abs() <= 0.10 * ss, "{path:?}: model slope {ms} us/B vs simulated {ss} us/B");
    }
}

#[test]
fn coalescing_raises_model_and_simulated_offset_alike() {
    for path in Path::ALL {
        let (s0, m0) = latency(path, 0.0, 0, 1000);
        let (s1, m1) = latency(path, 100.0, 1000, 1000);
        let (ds, dm) = (s1 - s0, m1 - m0);
        assert!(ds > 40.0, "{path:?}: coalescing should add to the latency: {ds} us");
        assert!((dm - ds).abs() <= 0.10 * ds, "{path:?}: model offset {dm} us vs simulated {ds} us");
    }
}

#[test]
fn model_and_simulated_overhead_agree_on_the_echo_host() {
    for path in Path::ALL {
        let text = scenario(path, 0.0, 0, 4000);
        let sim = super::run(&text).get("host1_cpu_pct").unwrap();
        let s = Scenario::from_toml(&text).unwrap();
        let model = echo(&s, path, 4000, &[]).unwrap().overhead_pct;
        if path == Path::ToNic {
            assert_eq!((sim, model), (0.0, 0.0));
        } else {
            assert!((model - sim).abs() <= 0.15 * sim, "{path:?}: model {model} % vs simulated {sim} %");
        }
    }
}

#[test]
#[ignore = "prints the table; run with --ignored --nocapture"]
fn print_model_vs_sim() {
    for path in Path::ALL {
        for (d, f) in [(0.0, 0), (30.0, 6), (100.0, 1000)] {
            for size in [100, 1000, 4000, 8000] {
                let (s, m) = latency(path, d, f, size);
                println!("{path:?} {d} {size}: sim {s:.2} model {m:.2} ({:+.1}%)", 100.0 * (m - s) / s);
            }
        }
    }
}

#[test]
#[ignore = "prints the table; run with --ignored --nocapture"]
fn print_overhead_model_vs_sim() {
    for path in Path::ALL {
        for (d, f) in [(0.0, 0), (100.0, 1000)] {
            for size in [100, 1000, 8000] {
                let text = scenario(path, d, f, size);
                let sim = super::run(&text).get("host1_cpu_pct").unwrap();
                let s = Scenario::from_toml(&text).unwrap();
                let m = echo(&s, path, size, &[]).unwrap().overhead_pct;
                println!("{path:?} {d} {size}: sim {sim:.3} model {m:.3}");
            }
        }
    }
}
