//! Composition of the \[LCI] NIC features with the Open-MX world's hosts
//! (issue 34, step 3): NI-level multicast forwarding and the polling
//! watchdog on `omx2009` and `modern`, each under a coalescing policy, with
//! a result that shows the feature acting.

use crate::Metrics;
use rstest::rstest;

fn run(text: &str) -> Metrics {
    crate::run_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn get(m: &Metrics, key: &str) -> f64 {
    m.get(key).unwrap_or_else(|| panic!("no metric {key}"))
}

/// A 64-byte broadcast over `hosts` hosts (one rank each), binary tree.
fn bcast(preset: &str, policy: &str, hosts: u32, forwarding: &str, iterations: u64) -> Metrics {
    run(&format!(
        "preset = \"{preset}\"\n[platform.topology]\nhosts = {hosts}\n\
         [nic]\ncoalescing = \"{policy}\"\nmulticast_forwarding = true\n\
         [workload]\nkind = \"bcast\"\nsize_bytes = 64\niterations = {iterations}\nwarmup = 2\nprocs_per_host = 1\n\
         forwarding = \"{forwarding}\"\n"
    ))
}

/// \[LCI] §4.2: with the NICs forwarding, every host gets each broadcast
/// (the firmware made exactly one copy per receiving rank), and an inner
/// host of the tree (host 1: children 3 and 4) works less per broadcast
/// than when it forwards in software, and the broadcast is faster.
#[rstest]
fn ni_forwarding_reaches_every_host_and_spares_the_inner_hosts(
    #[values("omx2009", "modern")] preset: &str,
    #[values("disabled", "timeout", "openmx", "stream", "adaptive")] policy: &str,
) {
    let (hosts, iterations) = (7, 20);
    let host = bcast(preset, policy, hosts, "host", iterations);
    let ni = bcast(preset, policy, hosts, "ni", iterations);
    assert_eq!(get(&host, "mcast_forwards"), 0.0);
    assert_eq!(get(&ni, "mcast_forwards"), ((hosts - 1) as u64 * (iterations + 2)) as f64, "{preset} {policy}");
    assert_eq!((get(&ni, "dropped"), get(&host, "dropped")), (0.0, 0.0));
    let (w_host, w_ni) = (get(&host, "host1_work_us_per_bcast"), get(&ni, "host1_work_us_per_bcast"));
    assert!(w_ni < w_host, "{preset} {policy}: inner host work {w_ni} µs (ni) vs {w_host} µs (host)");
    // The root hands one frame to its NIC either way (two sends in software).
    assert!(get(&ni, "host0_work_us_per_bcast") < get(&host, "host0_work_us_per_bcast"));
    assert!(get(&ni, "time_us") < get(&host, "time_us"), "{preset} {policy}");
}

#[test]
fn ni_forwarding_refuses_what_it_cannot_do() {
    let e = crate::run_toml("[platform.topology]\nhosts = 3\n[workload]\nkind = \"bcast\"\nforwarding = \"ni\"\n")
        .unwrap_err();
    assert!(e.contains("workload.forwarding") && e.contains("nic.multicast_forwarding = true"), "{e}");
    let e = crate::run_toml(
        "[nic]\nmulticast_forwarding = true\n[workload]\nkind = \"bcast\"\nforwarding = \"ni\"\nsize_bytes = 4096\n",
    )
    .unwrap_err();
    assert!(e.contains("workload.size_bytes") && e.contains("128"), "{e}");
    let e = crate::run_toml("[nic]\nwatchdog_us = -1\n[workload]\nkind = \"stream\"\n").unwrap_err();
    assert!(e.contains("nic.watchdog_us") && e.contains("1000000"), "{e}");
    let e = crate::run_toml("[workload]\nkind = \"stream\"\ntree = \"chain\"\n").unwrap_err();
    assert!(e.contains("`workload.tree`") && e.contains("not read"), "{e}");
}

/// Every tree shape reaches every rank, several ranks per host too.
#[rstest]
fn every_tree_shape_reaches_every_rank(#[values("binary", "binomial", "chain")] tree: &str) {
    let m = run(&format!(
        "[platform.topology]\nhosts = 5\n[nic]\ncoalescing = \"openmx\"\nmulticast_forwarding = true\n\
         [workload]\nkind = \"bcast\"\nsize_bytes = 16\niterations = 5\nwarmup = 0\nprocs_per_host = 2\n\
         tree = \"{tree}\"\nforwarding = \"ni\"\n"
    ));
    assert_eq!(get(&m, "mcast_forwards"), 9.0 * 5.0, "{tree}");
}

/// A 1 KiB stream into host 1, whose process waits `wait` (busy polling
/// its queue, or asleep), under `policy`, with a watchdog of `watchdog_us`.
fn stream(preset: &str, policy: &str, wait: &str, watchdog_us: f64) -> Metrics {
    run(&format!(
        "preset = \"{preset}\"\n[nic]\ncoalescing = \"{policy}\"\nwatchdog_us = {watchdog_us}\n\
         [host]\nbusy_poll = true\nwait = \"{wait}\"\n\
         [workload]\nkind = \"stream\"\nsize_bytes = 1024\nmessages = 2000\nwarmup = 100\n"
    ))
}

/// \[LCI] §5.1: while the receiver polls, the watchdog holds the raises
/// the policy asks for and the host picks the frames up first: fewer
/// receive interrupts than the policy alone, and than an interrupt per
/// message.
#[rstest]
fn the_watchdog_spares_interrupts_while_a_process_polls(
    #[values("omx2009", "modern")] preset: &str,
    #[values("disabled", "timeout", "openmx", "stream", "adaptive")] policy: &str,
) {
    let per_message = stream(preset, "disabled", "poll", 0.0);
    let alone = stream(preset, policy, "poll", 0.0);
    let dog = stream(preset, policy, "poll", 20.0);
    let irqs = |m: &Metrics| get(m, "host1_rx_interrupts");
    // The watchdog looked at the ring (how many raises it held or dropped
    // depends on the policy: a timer the host's polls keep ahead of is
    // never asked to raise).
    assert!(get(&dog, "watchdog_fetches") > 0.0, "{preset} {policy}");
    assert!(irqs(&dog) < irqs(&alone), "{preset} {policy}: {} with the watchdog, {} without", irqs(&dog), irqs(&alone));
    assert!(irqs(&dog) < irqs(&per_message), "{preset} {policy}");
    assert!(alone.get("watchdog_held").is_none(), "no watchdog, no metric");
}

/// A 0-byte ping-pong whose processes sleep while they wait (nobody
/// polls), under `policy`, with a watchdog of `watchdog_us`.
fn asleep(preset: &str, policy: &str, watchdog_us: f64) -> Metrics {
    run(&format!(
        "preset = \"{preset}\"\n[nic]\ncoalescing = \"{policy}\"\nwatchdog_us = {watchdog_us}\n\
         [host]\nwait = \"block\"\n[workload]\nkind = \"pingpong\"\niterations = 200\nwarmup = 10\n"
    ))
}

/// \[LCI] §5.1, nobody polling: each message still gets its interrupt
/// (the sleeping process is woken by nothing else), raised when the
/// watchdog's expiry finds the frame not picked up: a policy that raises
/// at once now waits for the expiry, one that waits longer than the
/// interval is not delayed further.
#[rstest]
fn the_watchdog_raises_the_interrupt_when_nobody_polls(
    #[values("omx2009", "modern")] preset: &str,
    #[values("disabled", "timeout", "openmx", "stream", "adaptive")] policy: &str,
) {
    let interval = 20.0;
    let (dog, alone) = (asleep(preset, policy, interval), asleep(preset, policy, 0.0));
    let lat = |m: &Metrics| get(m, "latency_us");
    assert!(get(&dog, "interrupts_per_msg") >= 1.0, "{preset} {policy}");
    assert_eq!(get(&dog, "watchdog_saved"), 0.0, "{preset} {policy}: nobody picked a frame up");
    assert!(lat(&dog) >= lat(&alone), "{preset} {policy}");
    if matches!(policy, "disabled" | "openmx") {
        assert!(lat(&dog) > lat(&alone) + interval / 2.0, "{preset} {policy}: {} vs {}", lat(&dog), lat(&alone));
    }
}
