//! Metrics that know their validity: a rate a run is too short to measure
//! is reported as not measured, with the reason, never as a number; and a
//! measured throughput never exceeds the link's line rate.

use super::run;

/// The 10 Gb/s line rate of the `omx2009` preset, MiB/s.
const LINE_MIBPS: f64 = 10e9 / 8.0 / (1024.0 * 1024.0);

fn windowed(kind: &str, size: u64, messages: u64, warmup: u64) -> nicsim::Metrics {
    run(&format!("[workload]\nkind = \"{kind}\"\nsize_bytes = {size}\nmessages = {messages}\nwarmup = {warmup}\n"))
}

#[test]
fn a_stream_of_fewer_messages_than_its_window_is_not_measured() {
    // One timed 1 MiB message after the warm-up: the receiver started its
    // clock with it already in flight (9787.5 MiB/s was reported on a
    // 10 Gb/s link).
    for kind in ["stream", "uniband"] {
        for (size, messages) in [(1 << 20, 1), (64 << 10, 1), (64 << 10, 2), (0, 63)] {
            let m = windowed(kind, size, messages, 10);
            for k in ["throughput_MiBps", "msg_rate_per_s"] {
                assert_eq!(m.get(k), None, "{kind} {size} B x {messages}: {k} = {:?}", m.get(k));
                let why = m.why_not(k).unwrap_or_else(|| panic!("{kind}: {k} has no reason"));
                assert!(why.contains("workload.window = 64") && why.contains("workload.messages"), "{why}");
            }
            // The counters of the run are still there.
            assert!(m.get("frames").unwrap() > 0.0 && m.get("stream_end_us").is_some());
        }
    }
}

#[test]
fn a_stream_of_a_window_or_more_is_measured_below_the_line_rate() {
    for kind in ["stream", "uniband"] {
        for (size, messages) in [(1 << 20, 64), (64 << 10, 200), (0, 64)] {
            let m = windowed(kind, size, messages, 10);
            let t = m.get("throughput_MiBps").unwrap_or_else(|| panic!("{kind}: {:?}", m.why_not("throughput_MiBps")));
            assert!((0.0..=LINE_MIBPS).contains(&t), "{kind} {size} B x {messages}: {t} MiB/s");
            assert!(m.get("msg_rate_per_s").unwrap() > 0.0);
        }
    }
}

#[test]
fn a_stream_without_warm_up_starts_its_clock_at_time_zero() {
    // Nothing is in flight at time zero: one message is a (latency-bound) measure.
    let m = windowed("stream", 1 << 20, 1, 0);
    let t = m.get("throughput_MiBps").expect("measured");
    assert!(t > 0.0 && t <= LINE_MIBPS, "{t}");
}

#[test]
fn the_lci_stream_is_measured_below_its_line_rate() {
    // lci2000: Myrinet at 160 MB/s.
    let m = run("preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n[workload]\nkind = \"stream\"\n\
                 size_bytes = 4096\nmessages = 50\nwarmup = 2\n");
    let t = m.get("throughput_MBps").expect("measured");
    assert!(t > 0.0 && t <= 160.0, "{t} MB/s");
}
