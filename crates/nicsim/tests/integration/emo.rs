//! \[EMO]: the analytic model against the simulator, both from the same
//! `emo2004` scenario (nothing fitted): on one-frame messages (the study's
//! ground) latency slope vs size on each path and the offset interrupt
//! coalescing adds agree; on messages of several frames the simulated
//! packets (per-frame costs, pipelining) part from EMO's message-oriented
//! sum, by more with more frames.

use nicsim::model::{echo, Path};
use nicsim::Scenario;

/// The \[EMO] measurement scenario: echo server per path, coalescing
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
fn host_a_keeps_default_coalescing_while_host_b_disables_it() {
    // [EMO] 4: "Host A remains constant throughout the measurements" (default coalescing).
    for path in [Path::ToKernel, Path::ToApp] {
        let both = scenario(path, 0.0, 0, 1000);
        let text = both.replace("[host]", "[nic.host0]\nframes = 6\n[host]");
        let (sim0, sim) = (super::run(&both).get("latency_us").unwrap(), super::run(&text).get("latency_us").unwrap());
        // One 30 us wait per round trip (DEF_JUMBO_RX_COAL on Host A's receive): 15 us on the half.
        assert!((sim - sim0 - 15.0).abs() < 0.01, "{path:?}: {sim0} -> {sim} us");
        let model = echo(&Scenario::from_toml(&text).unwrap(), path, 1000, &[]).unwrap().latency_s * 1e6;
        assert!((model - sim).abs() <= 1e-6 * sim, "{path:?}: model {model} us vs simulated {sim} us");
    }
}

#[test]
fn several_frames_part_from_the_message_oriented_sum_more_with_more_frames() {
    // MTU 9000: 8000 B is one Open-MX fragment, 16000 B two, 32000 B four.
    for path in Path::ALL {
        let (s1, m1) = latency(path, 0.0, 0, 8000);
        assert!((s1 - m1).abs() <= 1e-6 * s1, "{path:?}: one frame: simulated {s1} us vs model {m1} us");
        let (s2, m2) = latency(path, 0.0, 0, 16000);
        let (s4, m4) = latency(path, 0.0, 0, 32000);
        // The frames overlap in the pipeline: the message arrives before the sum of its stages.
        assert!(s2 < m2 && s4 < m4, "{path:?}: simulated {s2}, {s4} us vs model {m2}, {m4} us");
        assert!(m4 - s4 > 2.0 * (m2 - s2), "{path:?}: departure {} us at 4 frames, {} us at 2", m4 - s4, m2 - s2);
        // ... but no sooner than the wire can carry it (32000 B at 1 Gb/s, each way: half the round trip).
        assert!(s4 > 32000.0 * 8e-3, "{path:?}: {s4} us");
    }
}

#[test]
fn the_shared_pci_bus_slows_only_overlapping_frames() {
    // emo2004's AceNIC: receive and transmit DMA take turns on one PCI bus
    // (`nic.dma_shared_bus`). A one-frame echo never overlaps them; the
    // kernel echo of several frames reads reply k while frame k+1 arrives.
    let apart = |text: &str| text.replace("[host]", "[platform.nic]\ndma_shared_bus = false\n[host]");
    for (size, slower) in [(8000, false), (32000, true)] {
        let shared = scenario(Path::ToKernel, 0.0, 0, size);
        let (s, a) =
            (super::run(&shared).get("latency_us").unwrap(), super::run(&apart(&shared)).get("latency_us").unwrap());
        if slower {
            assert!(s > a + 10.0, "{size} B: shared bus {s} us vs separate {a} us");
        } else {
            assert!((s - a).abs() < 1e-6 * a, "{size} B: shared bus {s} us vs separate {a} us");
        }
    }
}

#[test]
fn each_frame_brings_its_own_host_work_beyond_the_model() {
    // The echo host's overhead: the model counts the per-message work once, the
    // simulator pays interrupt, driver and handler per frame.
    for path in [Path::ToKernel, Path::ToApp] {
        let (one, model_one) = overhead(path, 8000);
        let (four, model_four) = overhead(path, 32000);
        assert!((one - model_one).abs() <= 0.02 * one, "{path:?}: one frame: {one} % vs model {model_one} %");
        assert!(four > 1.5 * model_four, "{path:?}: four frames: {four} % vs model {model_four} %");
    }
    // The application path slopes up beyond one frame ([EMO] 4.2.4's expectation for larger messages).
    assert!(overhead(Path::ToApp, 32000).0 > overhead(Path::ToApp, 8000).0);
}

/// (simulated, model) echo-host CPU share in percent, no coalescing.
fn overhead(path: Path, size: u64) -> (f64, f64) {
    let text = scenario(path, 0.0, 0, size);
    let sim = super::run(&text).get("host1_cpu_pct").unwrap();
    let s = Scenario::from_toml(&text).unwrap();
    (sim, echo(&s, path, size, &[]).unwrap().overhead_pct)
}

#[test]
#[ignore = "prints the table; run with --ignored --nocapture"]
fn print_model_vs_sim() {
    for path in Path::ALL {
        for (d, f) in [(0.0, 0), (30.0, 6), (100.0, 1000)] {
            for size in [100, 1000, 4000, 8000, 16000, 32000] {
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
