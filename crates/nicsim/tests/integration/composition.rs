//! The stacks and the NIC features compose: an \[LCI] NIC feature (the
//! polling watchdog, NI multicast forwarding, packet shifting, the NI
//! clock) on Open-MX hosts of the LCI cluster's hardware, each changing
//! what it should; an Open-MX NIC key on the LCI stack, refused by name;
//! and every workload kind on every stack (`protocol.stack`) either runs
//! or is refused, when the scenario is read, in one line naming the key,
//! the value and why.

use nicsim::config::{variant_names, Hardware, Scenario, Stack, WorkloadKind};
use nicsim::Metrics;

use super::run;

/// The LCI cluster's preset on a grid of 4 hosts (two switches of two).
const LCI4: &str = "preset = \"lci2000\"\n[platform.grid]\nx = 2\ny = 1\nz = 1\nhosts_per_switch = 2\nhosts = 4\n";

/// `text` on [`LCI4`], its hosts running Open-MX.
fn open_mx_on_lci(text: &str) -> Metrics {
    run(&format!("{LCI4}[protocol]\nstack = \"open-mx\"\n{text}"))
}

fn get(m: &Metrics, key: &str) -> f64 {
    m.get(key).unwrap_or_else(|| panic!("no {key} in {m:?}"))
}

#[test]
fn the_polling_watchdog_spares_an_open_mx_host_interrupts_while_it_polls() {
    let stream = |watchdog_us: f64| {
        open_mx_on_lci(&format!(
            "[host]\nbusy_poll = true\n[nic]\nwatchdog_us = {watchdog_us}\n\
             [workload]\nkind = \"stream\"\nsize_bytes = 1024\nmessages = 500\nwarmup = 50\n"
        ))
    };
    let (off, dog) = (stream(0.0), stream(20.0));
    assert_eq!(off.get("watchdog_fetches"), None, "{off:?}");
    assert!(get(&dog, "watchdog_fetches") > 0.0);
    assert!(get(&dog, "host1_rx_interrupts") < get(&off, "host1_rx_interrupts"), "{dog:?}\n{off:?}");
}

#[test]
fn ni_multicast_forwarding_relieves_an_inner_open_mx_host() {
    let bcast = |forwarding: &str| {
        open_mx_on_lci(&format!(
            "[nic]\nmulticast_forwarding = true\n[workload]\nkind = \"bcast\"\nsize_bytes = 64\niterations = 20\n\
             warmup = 2\nforwarding = \"{forwarding}\"\n"
        ))
    };
    let (host, ni) = (bcast("host"), bcast("ni"));
    // One firmware copy per receiving host and broadcast: 3 hosts x 22.
    assert_eq!((get(&host, "mcast_forwards"), get(&ni, "mcast_forwards")), (0.0, 3.0 * 22.0));
    // Host 1 is an inner node of the binary tree (its child is host 3).
    assert!(get(&ni, "host1_work_us_per_bcast") < get(&host, "host1_work_us_per_bcast"));
    assert!(get(&ni, "time_us") < get(&host, "time_us"));
}

#[test]
fn packet_shifting_writes_an_open_mx_frame_in_one_dma_and_one_line() {
    let stream = |delivery: &str| {
        open_mx_on_lci(&format!(
            "[nic]\nrx_delivery = \"{delivery}\"\n[workload]\nkind = \"stream\"\nsize_bytes = 0\nmessages = 500\n\
             warmup = 50\n"
        ))
    };
    let (ring, shifted) = (stream("ring"), stream("shifted"));
    assert_eq!(ring.get("rx_dma_writes"), None);
    assert_eq!(get(&shifted, "rx_dma_writes") * 2.0, get(&shifted, "rx_dma_writes_ring"));
    assert_eq!(get(&shifted, "host1_cache_dma_misses") * 2.0, get(&ring, "host1_cache_dma_misses"));
    assert!(get(&shifted, "host1_kernel_us") < get(&ring, "host1_kernel_us"));
}

#[test]
fn the_ni_clock_runs_an_open_mx_processs_timers_while_it_computes() {
    // A 100 us delayed ack: the fine-grain timer [LCI] §5.2 uses its NI clock for.
    let nas_is = |clock_period_us: f64| {
        run(&format!(
            "{LCI4}[platform.library]\ndelayed_ack_us = 100.0\n[nic]\nclock_period_us = {clock_period_us}\n\
             [workload]\nkind = \"nas-is\"\nclass = \"S\"\n"
        ))
    };
    assert_eq!(nas_is(0.0).get("clock_ticks"), None);
    // A clock of a second never ticks within the run: the OS timer alone.
    let (os_timer, clock) = (nas_is(1e6), nas_is(50.0));
    assert_eq!(get(&os_timer, "clock_interrupts"), 0.0);
    assert!(get(&os_timer, "timers_missed") > 0.0);
    assert!(get(&clock, "clock_signals") > 0.0);
    assert!(get(&clock, "timer_late_us_max") <= 2.0 * 50.0 + 10.0, "{clock:?}");
    assert!(get(&clock, "timer_late_us_mean") < get(&os_timer, "timer_late_us_mean") / 10.0);
}

#[test]
fn an_open_mx_nic_key_on_the_lci_stack_is_refused_in_one_line_naming_it() {
    for (key, value) in [("coalescing", "\"timeout\""), ("delay_us", "10.0"), ("steering", "\"multiqueue\"")] {
        let text =
            format!("{LCI4}[protocol]\nstack = \"lci\"\n[nic]\n{key} = {value}\n[workload]\nkind = \"stream\"\n");
        let e = Scenario::from_toml(&text).unwrap_err().0;
        assert!(!e.contains('\n'), "{e}");
        for needle in [format!("`nic.{key}` = {value}"), "protocol.stack = \"lci\"".into(), "watchdog".into()] {
            assert!(e.contains(&needle), "{needle:?} not in {e:?}");
        }
    }
    // The keys both stacks read are read.
    let s = Scenario::from_toml(&format!(
        "{LCI4}[protocol]\nstack = \"lci\"\n[nic]\nwatchdog_us = 20\n[workload]\nkind = \"stream\"\n"
    ))
    .unwrap();
    assert!(s.lci.is_some() && s.ni.watchdog.to_string() == "20");
}

/// The `[workload]` keys of a short run of `kind` on `stack` (each a key
/// that kind reads on that stack), and whether to run it: the NAS CG, MG,
/// FT, BT, EP, LU and SP skeletons take seconds at their smallest class (B)
/// and are run by `nas.rs`; here they are read.
fn short(kind: &str, stack: Stack) -> (&'static str, bool) {
    let keys = match (stack, kind) {
        (Stack::Lci, "stream") | (_, "stream" | "uniband") => "messages = 50\nwarmup = 5",
        (Stack::Lci, "bcast") => "iterations = 2\ncount = 2",
        (Stack::Lci, "dsm") => "procs = 4\noperations = 20",
        (Stack::Lci, "fft-alltoall") => "procs = 4\niterations = 1\ncompute_us = 10.0\nsize_bytes = 1024",
        (_, "pingpong" | "echo-nic" | "echo-kernel") => "iterations = 5\nwarmup = 1",
        (_, "flood") => "packets = 100",
        (_, "nas-is") => "class = \"S\"\niterations = 1",
        (_, "nas-cg" | "nas-mg" | "nas-ft" | "nas-ep" | "nas-lu") => return ("class = \"B\"", false),
        // A square rank count: one rank on each of the 4 hosts.
        (_, "nas-bt" | "nas-sp") => return ("class = \"B\"\nprocs_per_host = 1", false),
        (_, "alltoall" | "exchange") => "iterations = 2\nwarmup = 0\nsize_bytes = 64",
        (_, "bcast") => "iterations = 2\nwarmup = 0",
        (_, "asp") => "rows = 64\niterations = 2",
        (_, "qr") => "cols = 64\niterations = 2",
        (_, "fft-alltoall") => "iterations = 1\ncompute_us = 10.0\nsize_bytes = 1024",
        _ => "",
    };
    (keys, true)
}

#[test]
fn every_workload_kind_on_every_stack_runs_or_is_refused_in_one_line_naming_why() {
    let presets = [
        (Hardware::Ethernet, "omx2009", "preset = \"omx2009\"\n[platform.topology]\nhosts = 4\n"),
        (Hardware::Lci, "lci2000", LCI4),
    ];
    let (mut ran, mut refused) = (0, 0);
    for (hw, name, preset) in presets {
        for stack in [Stack::OpenMx, Stack::NativeMx, Stack::Lci] {
            for &kind_name in variant_names::<WorkloadKind>() {
                let kind: WorkloadKind = toml::Value::String(kind_name.into()).try_into().unwrap();
                let (keys, runs) = short(kind_name, stack);
                let text =
                    format!("{preset}[protocol]\nstack = \"{stack}\"\n[workload]\nkind = \"{kind_name}\"\n{keys}\n");
                let what = format!("{kind_name} on {stack} on {name}");
                let offered = stack.offers(kind, hw) && (stack != Stack::Lci || hw == Hardware::Lci);
                match Scenario::from_toml(&text) {
                    Ok(s) => {
                        assert!(offered, "{what}: read, but the stack does not offer it");
                        assert_eq!(s.stack(), stack, "{what}");
                        if runs {
                            nicsim::sim::run(&s).unwrap_or_else(|e| panic!("{what}: {e}"));
                        }
                        ran += 1;
                    }
                    Err(e) => {
                        let e = e.0;
                        assert!(!offered, "{what}: offered, but refused: {e}");
                        assert!(!e.contains('\n'), "{what}: {e}");
                        let key = ["`protocol.stack`", "`workload.kind`"].into_iter().find(|k| e.contains(k));
                        assert!(key.is_some(), "{what}: names neither key: {e}");
                        assert!(e.contains(&format!("\"{stack}\"")) || e.contains(&format!("\"{kind_name}\"")), "{e}");
                        assert!(e.contains("(allowed: "), "{what}: says not why: {e}");
                        refused += 1;
                    }
                }
            }
        }
    }
    // Open-MX and native MX run all but dsm on Ethernet and all but dsm,
    // flood and the echo servers on the LCI hardware; the LCI stack runs
    // its 7 programs there.
    let kinds = variant_names::<WorkloadKind>().len();
    assert_eq!(ran, 2 * (kinds - 1) + 2 * (kinds - 4) + 7);
    assert_eq!(ran + refused, 6 * kinds);
}
