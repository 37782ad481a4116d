//! Mechanism tests of the LCI stack (packet traces through the whole path,
//! run in the world: `super::testing`).

use super::testing::{metrics, run, Ran};
use crate::nic::delivery as poll;
use crate::time::Instant;
use crate::Metrics;

fn scenario(polling: &str, workload: &str) -> String {
    format!("preset = \"lci2000\"\n[nic]\npolling = \"{polling}\"\n[workload]\n{workload}\n")
}

fn stream(polling: &str, size: u64, messages: u64) -> (Ran, Metrics) {
    run(&scenario(polling, &format!("kind = \"stream\"\nsize_bytes = {size}\nmessages = {messages}\nwarmup = 0")))
}

#[test]
fn packet_shifting_issues_one_dma_per_packet_double_dma_two() {
    for size in [0, 16, 512, 1024] {
        let (_, m) = stream("packet-shifting", size, 50);
        assert_eq!(m.get("host1_dmas"), Some(50.0 + m.get("host_counter_fetches").unwrap()), "size {size}");
        assert_eq!(m.get("host_dmas"), Some(50.0));
        let (_, m) = stream("double-dma", size, 50);
        assert_eq!(m.get("host_dmas"), Some(100.0), "size {size}");
    }
}

#[test]
fn full_packet_always_moves_the_whole_buffer() {
    let (w, m) = stream("full-packet", 16, 40);
    let fetch = m.get("host_counter_fetches").unwrap() as u64;
    let per = (w.nis[1].header() + 1024 + poll::FLAG_BYTES) as u64;
    assert_eq!(w.buses[1].dma_bytes, 40 * per + fetch * poll::FLAG_BYTES as u64);
    let (w, _) = stream("packet-shifting", 16, 40);
    assert!(w.buses[1].dma_bytes < 40 * per / 10);
}

#[test]
fn messages_above_one_packet_fragment() {
    let (_, m) = stream("packet-shifting", 2500, 10);
    assert_eq!(m.get("packets"), Some(30.0));
    assert_eq!(m.get("upcalls"), Some(30.0));
}

#[test]
fn pio_polls_occupy_the_bus_and_slow_concurrent_dma() {
    let (w, m) = stream("pio", 64, 200);
    assert!(w.buses[1].pio_reads > 0);
    assert!(m.get("host1_bus_wait_us").unwrap() > 0.0, "DMAs waited for polls");
    let (_, shift) = stream("packet-shifting", 64, 200);
    assert!(shift.get("throughput_MBps").unwrap() > m.get("throughput_MBps").unwrap());
    assert_eq!(shift.get("host1_pio_reads"), Some(0.0), "cached-flag polling never crosses the bus");
}

#[test]
fn failed_polls_are_hits_successful_ones_misses() {
    let (w, m) = stream("packet-shifting", 0, 20);
    assert_eq!(m.get("polls_ok"), Some(20.0));
    // The receiver spins between packets: each 5 ns of spinning is one failed poll.
    assert!(w.hosts[1].polls_failed > 20, "{}", w.hosts[1].polls_failed);
    assert_eq!(w.hosts[1].interrupts, 0);
}

#[test]
fn null_latency_is_the_fitted_12_us() {
    let s = scenario("packet-shifting", "kind = \"pingpong\"\nsize_bytes = 0\niterations = 200");
    let m = metrics(&s);
    let l = m.get("latency_us").unwrap();
    assert!((l - 12.0).abs() < 0.25, "one-way null latency {l} us (refit: python -m nicsim.studies.fit_lci)");
}

#[test]
fn same_seed_same_metrics() {
    let a = stream("static-split", 700, 100).1;
    let b = stream("static-split", 700, 100).1;
    assert_eq!(a, b);
}

#[test]
fn bad_input_is_one_line_naming_the_key() {
    let e = super::testing::scenario("preset = \"lci2000\"\n[nic]\npolling = \"shift\"\n[workload]\nkind = \"stream\"")
        .unwrap_err();
    assert!(e.0.contains("nic.polling") && e.0.contains("packet-shifting"), "{e}");
    let e = super::testing::scenario("preset = \"lci2000\"\n[workload]\nkind = \"stream\"\ndst = 64").unwrap_err();
    assert!(e.0.contains("workload.dst") && e.0.contains("63"), "{e}");
    let e = super::testing::scenario("preset = \"lci2000\"\n[platform.grid]\nx = 3\n[workload]\nkind = \"stream\"")
        .unwrap_err();
    assert!(e.0.contains("grid.hosts"), "{e}");
    let e = crate::run_toml("preset = \"lci2000\"\n[workload]\nkind = \"flood\"").unwrap_err();
    assert!(e.contains("workload.kind") && !e.contains('\n'), "{e}");
}

#[test]
fn run_toml_dispatches_on_the_stack_and_the_workload() {
    let stream = "[workload]\nkind = \"stream\"\nsize_bytes = 64\nmessages = 64";
    // The LCI stack: its metrics (MB/s).
    let lci = format!("preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n{stream}");
    let m = crate::run_toml(&lci).unwrap();
    assert!(m.get("throughput_MBps").unwrap() > 0.0);
    // The same hardware without the stack: the main world's MPI (MiB/s).
    let m = crate::run_toml(&format!("preset = \"lci2000\"\n{stream}")).unwrap();
    assert!(m.get("throughput_MBps").is_none() && m.get("throughput_MiBps").unwrap() > 0.0);
    // A multicast program both stacks run is the LCI stack's unless another
    // stack is named (then Open-MX's: its metrics have interrupts per host).
    let asp = "[workload]\nkind = \"asp\"\nrows = 64\niterations = 2";
    let m = crate::run_toml(&format!("preset = \"lci2000\"\n{asp}")).unwrap();
    assert!(m.get("upcalls").is_some() && m.get("host0_interrupts").is_none());
    let m = crate::run_toml(&format!("preset = \"lci2000\"\n[protocol]\nstack = \"open-mx\"\n{asp}")).unwrap();
    assert!(m.get("upcalls").is_none() && m.get("exec_time_s").unwrap() > 0.0);
    // A program only the LCI stack has: another stack is refused by name.
    let dsm = "[workload]\nkind = \"dsm\"\nprocs = 4\noperations = 5";
    assert!(crate::run_toml(&format!("preset = \"lci2000\"\n{dsm}")).is_ok());
    let e = crate::run_toml(&format!("preset = \"lci2000\"\n[protocol]\nstack = \"open-mx\"\n{dsm}")).unwrap_err();
    assert!(e.contains("`protocol.stack`") && e.contains("open-mx") && e.contains("\"lci\""), "{e}");
}

#[test]
#[ignore]
fn print_polling_table() {
    for s in crate::config::variant_names::<crate::config::Polling>() {
        for size in [0, 16, 64, 256, 512, 768, 1024, 1536, 2048, 4096] {
            let (_, m) = stream(s, size, 500);
            eprintln!(
                "{s:16} {size:5} {:8.2} MB/s {:9.0} msg/s busfrac {:.2}",
                m.get("throughput_MBps").unwrap(),
                m.get("msg_rate_per_s").unwrap(),
                m.get("host1_bus_busy_frac").unwrap()
            );
        }
    }
    let s = scenario("packet-shifting", "kind = \"pingpong\"\nsize_bytes = 0\niterations = 200");
    eprintln!("latency {:?}", metrics(&s).get("latency_us"));
}

#[test]
#[ignore]
fn print_watchdog_and_timers_tables() {
    for mix in ["barnes", "fft", "radix"] {
        for d in ["\"none\"", "1", "3", "10", "30", "100", "300", "1000", "\"inf\""] {
            let s = format!(
                "preset = \"lci2000\"\n[nic]\nwatchdog_us = {d}\n[workload]\nkind = \"dsm\"\nmix = \"{mix}\"\nprocs = 16\noperations = 100"
            );
            let m = metrics(&s);
            eprintln!(
                "{mix:7} {d:8} exec {:9.3} ms irq {:6} wd {:6} at_once {:6} stuck {}",
                m.get("exec_time_s").unwrap() * 1e3,
                m.get("interrupts").unwrap(),
                m.get("watchdog_interrupts").unwrap(),
                m.get("signals_returned_at_once").unwrap(),
                m.get("stuck").unwrap()
            );
        }
    }
    let extra = std::env::var("FFT_EXTRA").unwrap_or_default().replace(';', "\n");
    for p in [10, 30, 100, 300, 1000, 3000, 10000] {
        let s = format!(
            "preset = \"lci2000\"\n[nic]\nclock_period_us = {p}\n[protocol]\n{extra}\n[workload]\nkind = \"fft-alltoall\"\nprocs = 16\niterations = 5\n{}",
            std::env::var("FFT_WL").unwrap_or_default().replace(';', "\n")
        );
        let m = metrics(&s);
        eprintln!(
            "period {p:6} exec {:9.3} ms clock_irq {:6} expl {:6} piggy {:6} full {:6} stuck {}",
            m.get("exec_time_s").unwrap() * 1e3,
            m.get("clock_interrupts").unwrap(),
            m.get("explicit_acks").unwrap(),
            m.get("piggybacked_acks").unwrap(),
            m.get("window_full_polls").unwrap(),
            m.get("stuck").unwrap()
        );
    }
}

// -- watchdog, signals, timers, reliable protocol ----------------------------

fn run_text(text: &str) -> Metrics {
    metrics(&format!("preset = \"lci2000\"\n{text}"))
}

#[test]
fn watchdog_never_interrupts_a_host_that_consumes_every_packet() {
    // The receiver spins in the library: every expiry finds all packets consumed.
    let m = run_text("[nic]\nwatchdog_us = 1\n[workload]\nkind = \"stream\"\nsize_bytes = 64\nmessages = 300");
    assert!(m.get("watchdog_fetches").unwrap() > 0.0, "the timer ran");
    assert_eq!(m.get("watchdog_interrupts"), Some(0.0));
    assert_eq!(m.get("interrupts"), Some(0.0));
}

#[test]
fn a_signal_to_a_polling_host_returns_at_once_and_costs_only_its_delivery() {
    // `none`: every delivered packet interrupts; the ping-pong hosts poll with
    // interrupts disabled, so each handler returns at once: one-way latency
    // grows by exactly kernel dispatch + user signal handler (8 + 17 us).
    let pp = "[workload]\nkind = \"pingpong\"\nsize_bytes = 0\niterations = 50";
    let inf = run_text(&format!("[nic]\nwatchdog_us = \"inf\"\n{pp}"));
    let none = run_text(&format!("[nic]\nwatchdog_us = \"none\"\n{pp}"));
    let extra = none.get("latency_us").unwrap() - inf.get("latency_us").unwrap();
    assert!((extra - 25.0).abs() < 0.01, "{extra} us");
    assert_eq!(none.get("signals_returned_at_once"), none.get("interrupts"));
    assert_eq!(none.get("upcalls"), inf.get("upcalls"), "the handler consumed nothing");
}

#[test]
fn watchdog_interrupts_a_computing_home_and_inf_reports_the_stuck_run() {
    let dsm = "[workload]\nkind = \"dsm\"\nmix = \"barnes\"\nprocs = 8\noperations = 30";
    let m = run_text(&format!("[nic]\nwatchdog_us = 10\n{dsm}"));
    assert_eq!(m.get("stuck"), Some(0.0));
    assert!(m.get("exec_time_s").unwrap() > 0.0);
    assert!(m.get("watchdog_interrupts").unwrap() > 0.0);
    // Each watchdog interrupt is one signal (some merged into a running handler).
    assert_eq!(m.get("watchdog_interrupts").unwrap(), m.get("interrupts").unwrap() + m.get("signals_merged").unwrap());
    let inf = run_text(&format!("[nic]\nwatchdog_us = \"inf\"\n{dsm}"));
    assert_eq!(inf.get("stuck"), Some(1.0));
    assert_eq!(inf.get("exec_time_s"), None);
    assert!(inf.why_not("exec_time_s").unwrap().contains("stuck = 1"));
    assert!(inf.get("stuck_waiting_procs").unwrap() > 0.0);
    assert_eq!(inf.get("interrupts"), Some(0.0));
}

#[test]
fn interrupts_fall_as_the_watchdog_delay_grows() {
    let dsm = "[workload]\nkind = \"dsm\"\nmix = \"radix\"\nprocs = 8\noperations = 30";
    let irq = |d: &str| run_text(&format!("[nic]\nwatchdog_us = {d}\n{dsm}")).get("interrupts").unwrap();
    let (none, short, long) = (irq("\"none\""), irq("3"), irq("300"));
    assert!(none > short && short > long, "{none} {short} {long}");
}

#[test]
fn clock_interrupts_only_while_a_timer_runs_and_the_host_is_away() {
    // No reliable protocol: no timer ever runs.
    let fft = "[workload]\nkind = \"fft-alltoall\"\nprocs = 4\niterations = 2";
    let m = run_text(&format!("[nic]\nclock_period_us = 10\n{fft}"));
    assert_eq!(m.get("clock_interrupts"), Some(0.0));
    assert!(m.get("ni_host_fetches").unwrap() > 0.0, "the NI ticked and fetched");
    // Timers run (delayed acks) but the hosts stay in the library: no interrupt.
    let m = run_text(
        "[nic]\nclock_period_us = 10\n[protocol]\n[workload]\nkind = \"pingpong\"\nsize_bytes = 64\niterations = 50",
    );
    assert_eq!(m.get("clock_interrupts"), Some(0.0));
    // Computing hosts with acks pending are interrupted.
    let m = run_text(&format!("[nic]\nclock_period_us = 10\n[protocol]\n{fft}"));
    assert!(m.get("clock_interrupts").unwrap() > 0.0);
}

#[test]
fn reliable_protocol_delivers_every_message_once_and_a_full_window_stalls() {
    let fft = "[workload]\nkind = \"fft-alltoall\"\nprocs = 6\niterations = 3\nsize_bytes = 3000";
    let m = run_text(&format!("[protocol]\n{fft}"));
    assert_eq!(m.get("stuck"), Some(0.0));
    assert_eq!(m.get("packets"), m.get("packets_delivered"));
    let data = 6.0 * 5.0 * 3.0 * 3.0; // procs x peers x iterations x packets per block
    let acks = m.get("explicit_acks").unwrap();
    assert_eq!(m.get("packets").unwrap(), data + acks, "every data packet once, plus ack-only packets");
    // 4 buffers and acks 1 ms late: the sender stalls on its window.
    let stream = "[workload]\nkind = \"stream\"\nsize_bytes = 64\nmessages = 20\nwarmup = 0";
    let fast = run_text(&format!("[protocol]\nack_delay_us = 1000\n{stream}"));
    let slow = run_text(&format!("[protocol]\nsend_buffers = 4\nack_delay_us = 1000\n{stream}"));
    assert_eq!(fast.get("window_full_polls"), Some(0.0));
    assert!(slow.get("window_full_polls").unwrap() > 0.0);
    assert!(slow.get("elapsed_us").unwrap() >= 4.0 * 1000.0, "{:?}", slow.get("elapsed_us"));
    assert!(fast.get("elapsed_us").unwrap() < 1000.0);
}

#[test]
fn watchdog_and_timer_runs_are_deterministic() {
    let t = "[nic]\nwatchdog_us = 30\nclock_period_us = 100\n[protocol]\n[workload]\nkind = \"dsm\"\nmix = \"radix\"\nprocs = 8\noperations = 20";
    assert_eq!(run_text(t), run_text(t));
}

#[test]
fn bad_watchdog_and_timer_input_is_one_line_naming_the_key() {
    let bad = |t: &str| super::testing::scenario(&format!("preset = \"lci2000\"\n{t}")).unwrap_err().0;
    let e = bad("[nic]\nwatchdog_us = \"soon\"\n[workload]\nkind = \"stream\"");
    assert!(e.contains("nic.watchdog_us") && e.contains("inf"), "{e}");
    let e = bad("[nic]\nwatchdog_us = -1\n[workload]\nkind = \"stream\"");
    assert!(e.contains("nic.watchdog_us"), "{e}");
    let e = bad("[workload]\nkind = \"dsm\"\nmix = \"ocean\"");
    assert!(e.contains("workload.mix") && e.contains("radix"), "{e}");
    let e = bad("[protocol]\nsend_buffers = 65\n[workload]\nkind = \"stream\"");
    assert!(e.contains("protocol.send_buffers") && !e.contains('\n'), "{e}");
    let e = bad("[nic]\nclock_period_us = 0\n[workload]\nkind = \"stream\"");
    assert!(e.contains("nic.clock_period_us"), "{e}");
}

/// Found by the property test (tests/test_properties.py): scenarios that
/// were valid but could never end are refused before any work, naming the
/// key; a default that did not fit a small grid adapts to it.
#[test]
fn scenarios_that_could_never_end_are_refused_naming_the_key() {
    let two_hosts = "preset = \"lci2000\"\n[platform.grid]\nhosts = 2\nx = 1\ny = 1\nz = 1\nhosts_per_switch = 2\n";
    // The default fan-out (2) on two hosts: one child, not an error.
    let s = super::testing::scenario(&format!("{two_hosts}[workload]\nkind = \"stream\"\n")).unwrap();
    assert_eq!(s.fanout, 1);
    // An NI clock faster than one tick's host fetch (606 ns of firmware DMA
    // set-up at 33 MHz, then 270 ns on the bus) piles fetches up forever.
    let clock = |p: f64| format!("{two_hosts}[nic]\nclock_period_us = {p}\n[workload]\nkind = \"stream\"\n");
    let e = super::testing::scenario(&clock(0.5)).unwrap_err().0;
    assert!(e.contains("nic.clock_period_us") && e.contains("0.5") && e.contains("0.876"), "{e}");
    super::testing::scenario(&clock(0.9)).unwrap();
    // The reliable protocol with packet-level multicast forwarding.
    let qr = |fw: &str| {
        format!("preset = \"lci2000\"\n[nic]\nforwarding = \"{fw}\"\n[workload]\nkind = \"qr\"\ncols = 128\niterations = 2\n[protocol]\nack_delay_us = 50\n")
    };
    for fw in ["ni", "host-packet"] {
        let e = super::testing::scenario(&qr(fw)).unwrap_err().0;
        assert!(e.contains("nic.forwarding") && e.contains(fw) && e.contains("host-message"), "{e}");
    }
    let m = crate::run_toml(&qr("host-message")).unwrap();
    assert!(m.get("explicit_acks").unwrap() + m.get("piggybacked_acks").unwrap() > 0.0);
}

// -- the parts in the one world ------------------------------------------------

#[test]
fn a_run_without_packets_is_stopped_by_the_worlds_stall_watch_with_one_line() {
    // `pio` hosts waiting for a sleeping home poll the NI forever: no
    // packet is sent or delivered. The world's stall watch, which looks
    // every `CHECK_EVERY` events, ends the run at one of its looks.
    let dsm = "[nic]\npolling = \"pio\"\n[workload]\nkind = \"dsm\"\nmix = \"barnes\"\nprocs = 8\noperations = 30";
    let mut w = super::testing::world(&format!("preset = \"lci2000\"\n{dsm}"));
    let e = w.run().expect_err("the run cannot progress");
    assert!(e.0.starts_with("no progress: no packet sent or delivered in 10000000 events up to "), "{e}");
    assert!(!e.0.contains('\n'), "{e}");
    let events = w.q.popped();
    assert!(events > 10_000_000, "{events}");
    assert_eq!(events % u64::from(crate::interrupt::CHECK_EVERY), 0, "stopped at a look of the watch: {events}");
    // As a result (`nicsim run`): stuck, at the time the watch stopped it.
    let m = metrics(&format!("preset = \"lci2000\"\n{dsm}"));
    assert_eq!(m.get("stuck"), Some(1.0));
    assert_eq!(m.get("events"), Some(events as f64));
    assert_eq!(m.get("stuck_at_us"), Some(w.q.now().as_us_f64()));
}

#[test]
fn the_nis_send_on_the_worlds_grid_and_count_their_own_packets() {
    let (w, m) = stream("packet-shifting", 2500, 10);
    // Each NI counts what it sent and delivered; the metrics are their sums.
    assert_eq!(w.nis[0].packets_sent, 30);
    assert_eq!(w.nis[1].delivered, 30);
    assert_eq!(m.get("packets"), Some(w.nis.iter().map(|n| n.packets_sent).sum::<u64>() as f64));
    assert_eq!(m.get("packets_delivered"), Some(w.nis.iter().map(|n| n.delivered).sum::<u64>() as f64));
    // The grid is the world's network's, which the NIs' packets booked.
    let mut world =
        super::testing::world(&scenario("packet-shifting", "kind = \"stream\"\nsize_bytes = 64\nmessages = 4"));
    world.run().unwrap();
    let grid = world.wire.net.grid.as_mut().expect("the world's network is the platform's grid");
    // The uplink of host 0 is busy past the last packet it sent: a packet
    // injected now at time zero waits for it.
    let (left, _) = grid.send(0, 1, Instant::ZERO, 64);
    assert!(left > Instant::ZERO + grid.serialization(64), "{left:?}");
}

#[test]
fn the_multicast_trees_are_answered_by_each_ni_and_each_hosts_library() {
    for (f, tables) in [("ni", true), ("host-packet", false), ("host-message", false)] {
        let world = super::testing::world(&format!(
            "preset = \"lci2000\"\n[nic]\nforwarding = \"{f}\"\n[workload]\nkind = \"bcast\"\nsize_bytes = 64\niterations = 1"
        ));
        for h in 0..64u32 {
            let (lib, ni) = (super::testing::lib(&world, h as usize), super::testing::ni(&world, h as usize));
            assert_eq!(lib.mc.forwarding.to_string(), f);
            let table = world.hosts[h as usize].nic.forwarding;
            assert_eq!(table.is_some(), tables, "{f}: NI {h}");
            if let Some(t) = table {
                assert_eq!(ni.mc.rank, h);
                for root in [0, 7, 63] {
                    let want: Vec<u32> = lib.mc.tree.children(root, h).collect();
                    assert_eq!(t.children(root, ni.mc.rank).collect::<Vec<_>>(), want, "NI {h}, root {root}");
                }
            }
        }
    }
}

#[test]
fn the_firmware_runs_on_its_nics_one_processor() {
    // The LANai's steps (a descriptor, a delivery, a counter fetch) keep
    // busy the processor of the NIC that runs it, the one the Open-MX
    // NIC's receive, echo and forward work is serialised on; the NIC of a
    // host outside the pair runs none.
    let mut w =
        super::testing::world(&scenario("packet-shifting", "kind = \"stream\"\nsize_bytes = 2500\nmessages = 10"));
    w.run().unwrap_or_else(|e| panic!("{e}"));
    let busy_until = |h: usize| w.hosts[h].nic.fw_free;
    assert!(busy_until(0) > Instant::ZERO && busy_until(1) > Instant::ZERO);
    assert!(busy_until(1) <= w.q.now(), "its last step ended in the run");
    assert_eq!(busy_until(5), Instant::ZERO);
}
