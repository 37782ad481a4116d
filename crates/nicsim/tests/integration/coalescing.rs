//! Coalescing policies seen end to end.

use super::{pingpong, run, stream};

#[test]
fn openmx_small_latency_is_within_10_percent_of_disabled() {
    let d = pingpong("disabled", 0, 200, "").get("latency_us").unwrap();
    let o = pingpong("openmx", 0, 200, "").get("latency_us").unwrap();
    let t = pingpong("timeout", 0, 200, "").get("latency_us").unwrap();
    assert!((o - d).abs() / d < 0.10, "openmx {o} vs disabled {d}");
    // The 75 us timer sits on the critical path of every one-way trip.
    assert!(t > d + 60.0, "timeout {t} vs disabled {d}");
}

#[test]
fn timeout_latency_follows_the_delay() {
    let a = pingpong("timeout", 0, 100, "").get("latency_us").unwrap();
    let b = run("[nic]\ncoalescing = \"timeout\"\ndelay_us = 25\n[workload]\nkind = \"pingpong\"\niterations = 100\n")
        .get("latency_us")
        .unwrap();
    // 75 us vs 25 us delay: the one-way latency drops by about 50 us.
    assert!((a - b - 50.0).abs() < 10.0, "75us: {a}, 25us: {b}");
}

#[test]
fn openmx_large_throughput_within_5_percent_of_timeout() {
    let size = 4 << 20;
    let t = pingpong("timeout", size, 4, "").get("throughput_MiBps").unwrap();
    let o = pingpong("openmx", size, 4, "").get("throughput_MiBps").unwrap();
    assert!((o - t).abs() / t < 0.05 || o > t, "openmx {o} vs timeout {t}");
}

#[test]
fn coalescing_cuts_interrupts_per_message_in_a_stream() {
    let d = stream("disabled", 0, 5000, "").get("interrupts_per_msg").unwrap();
    let t = stream("timeout", 0, 5000, "").get("interrupts_per_msg").unwrap();
    assert!(t * 5.0 < d, "timeout {t} vs disabled {d}");
}

#[test]
fn disabled_coalescing_costs_message_rate() {
    let d = stream("disabled", 0, 5000, "").get("msg_rate_per_s").unwrap();
    let t = stream("timeout", 0, 5000, "").get("msg_rate_per_s").unwrap();
    assert!(d < t * 0.9, "disabled {d} vs timeout {t}");
}

#[test]
fn flood_overhead_drops_with_coalescing_and_with_a_single_irq_core() {
    let f = |s: &str, steering: &str| {
        run(&format!(
            "[nic]\ncoalescing = \"{s}\"\nsteering = \"{steering}\"\n[host]\nsoaker = true\n[workload]\nkind = \"flood\"\npackets = 4000\n"
        ))
        .get("overhead_ns_per_packet")
        .unwrap()
    };
    let (d_rr, t_rr, d_one) = (f("disabled", "single-rr"), f("timeout", "single-rr"), f("disabled", "single-core"));
    // [OMX-COAL] Table: 965 vs 774 ns; the fitted model gives about 100 ns between them.
    assert!(d_rr > t_rr + 50.0, "disabled {d_rr} vs timeout {t_rr}");
    assert!(d_one < d_rr, "single core {d_one} vs rr {d_rr}");
}

/// A native (no MPI) ping-pong of `size` bytes under `strategy` with the
/// coalescing timer `mode`: one-way latency and interrupts per one-way
/// message on both hosts.
fn native_pingpong(strategy: &str, mode: &str, size: u64, iterations: u64) -> (f64, f64) {
    let m = run(&format!(
        "[nic]\ncoalescing = \"{strategy}\"\ntimeout_mode = \"{mode}\"\n[protocol]\nmpi = false\n[workload]\nkind = \"pingpong\"\nsize_bytes = {size}\niterations = {iterations}\nwarmup = 2\n"
    ));
    (m.get("latency_us").unwrap(), m.get("interrupts_per_msg").unwrap())
}

#[test]
fn the_firmware_timer_as_a_minimum_gap_gives_the_studys_75_us_and_openmx_fewer_interrupts() {
    // [OMX-COAL] §IV-B3: the 0 B ping-pong goes "from about 10 us up to
    // 75 us" with the 75 us timer. A minimum gap between interrupts
    // (Algorithm 1's timer, reset when it expires) locks the round trip to
    // two gaps: one-way 75 us. A timer started by the first packet adds
    // the path to it.
    let (gap, _) = native_pingpong("timeout", "throttle", 0, 200);
    let (first, _) = native_pingpong("timeout", "absolute", 0, 200);
    assert!((gap - 75.0).abs() < 1.0, "minimum gap: {gap} us");
    assert!(first > 80.0, "timer from the first packet: {first} us");
    // §IV-C3, Table II: "We even need a bit less interrupts than the usual
    // coalescing strategy." With the minimum gap the first event after a
    // quiet spell raises at once, and the rest of the burst waits a whole
    // gap: the 75 us timeout takes more interrupts for the 234 KiB message
    // than openmx's marked ones (with the presets' hosts 11 against 13 a
    // message). With a timer from the first packet, the NOTIFY and the
    // next RNDV share one and openmx's advantage shrinks (10 against 11).
    let ratio = |mode: &str| {
        let (_, o) = native_pingpong("openmx", mode, 239_616, 60);
        let (_, t) = native_pingpong("timeout", mode, 239_616, 60);
        o / t
    };
    let (with, without) = (ratio("throttle"), ratio("absolute"));
    assert!(with < 1.0, "minimum gap: openmx / timeout interrupts {with}");
    assert!(without > with, "openmx / timeout interrupts: {with} minimum gap, {without} timer from the first packet");
}
