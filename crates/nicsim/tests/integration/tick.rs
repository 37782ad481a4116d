//! The kernel's periodic tick (`host.tick`) costs a run about what its own
//! time can cost: a tick holds the core it lands on for `cost_ns`, so a run
//! is longer by the ticks it met times that cost and what the shifted work
//! then costs otherwise (other cores find other lines where the tick moved
//! them: a fraction of a percent), and a tick that lands while the process
//! waits costs it only what outlasts the wait.

use super::run;

/// `omx2009`'s hosts with `tick` as `[platform.host.tick]`, and `rest`.
fn with_tick(hz: u32, cost_ns: f64, rest: &str) -> nicsim::Metrics {
    run(&format!("preset = \"omx2009\"\n{rest}\n[platform.host.tick]\nhz = {hz}\ncost_ns = {cost_ns:.1}\n"))
}

/// IMB Uniband (64-message windows) with openmx: every window ends with
/// its last message and the receiver's ack, each raising its interrupt at
/// once. A tick on a busy core may delay a window by its cost; it must
/// never leave a received frame unreported (a transmit-only interrupt met
/// it while the poll ran) so that the window waits for Open-MX's delayed
/// ack instead. With that, 1.2 us every 4 ms cost 32 ms of a 29 ms run.
/// What a tick shifts costs the run at most 1 % more than the ticks' own
/// time (with the presets' hosts, 1.2 us at 250 and 1000 Hz: 50 and 210 us
/// in all against 17 and 70 us of ticks on a 29 ms run).
#[test]
fn uniband_with_a_tick_is_longer_by_at_most_the_ticks_time() {
    let uniband = "[nic]\ncoalescing = \"openmx\"\ntimeout_mode = \"absolute\"\n\
                   [workload]\nkind = \"uniband\"\nmessages = 6400\nwindow = 64\n";
    let off = with_tick(0, 0.0, uniband);
    let t_off = off.get("sim_time_us").unwrap();
    for (hz, cost_ns) in [(250, 1200.0), (1000, 1200.0), (250, 20_000.0)] {
        let m = with_tick(hz, cost_ns, uniband);
        let (t, ticks) = (m.get("sim_time_us").unwrap(), m.get("kernel_ticks").unwrap());
        let bound = 1.01 * t_off + ticks * cost_ns / 1e3;
        assert!(t <= bound, "hz {hz}, {cost_ns} ns: {t} us against {t_off} us without the tick and {ticks} ticks");
    }
}

/// A 0 B ping-pong whose processes poll (coalescing off): a tick of 20 us
/// every millisecond on each host's polling core costs the round trips it
/// falls in only the part of it that outlasts the wait it lands in, and
/// the deterministic ping-pong settles where the ticks land in its waits:
/// each period holds a whole number of round trips, the most that fit
/// (`floor(period / rtt)`), and the two hosts' ticks together cost the
/// period's remainder, about 2 us each, not their 20 us.
#[test]
fn a_polling_ping_pong_locks_to_a_whole_number_of_round_trips_per_tick() {
    let pingpong = "seed = 1\n[nic]\ncoalescing = \"disabled\"\n[host]\nwait = \"poll\"\n\
                    [workload]\nkind = \"pingpong\"\nsize_bytes = 0\niterations = 20000\nwarmup = 0\n";
    let rtt = |m: &nicsim::Metrics| 2.0 * m.get("latency_us").unwrap();
    let off = rtt(&with_tick(0, 0.0, pingpong));
    let period = 1000.0;
    let fit = (period / off).floor();
    let locked = rtt(&with_tick(1000, 20_000.0, pingpong));
    assert!((locked - period / fit).abs() < 0.002 * locked, "{locked} us per round trip, {off} without the tick");
}
