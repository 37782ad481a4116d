//! Mechanism tests of the LCI world (packet traces through the whole path).

use super::*;
use crate::config::LciScenario;

fn scenario(polling: &str, workload: &str) -> LciScenario {
    LciScenario::from_toml(&format!("preset = \"lci2000\"\n[nic]\npolling = \"{polling}\"\n[workload]\n{workload}\n"))
        .unwrap()
}

fn stream(polling: &str, size: u64, messages: u64) -> (World, Metrics) {
    let s = scenario(polling, &format!("kind = \"stream\"\nsize_bytes = {size}\nmessages = {messages}\nwarmup = 0"));
    let mut w = World::new(&s);
    w.run().unwrap();
    w.check_invariants().unwrap();
    let m = w.metrics();
    (w, m)
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
    let per = (w.header + 1024 + poll::FLAG_BYTES) as u64;
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
    let m = run(&s).unwrap();
    let l = m.get("latency_us").unwrap();
    assert!((l - 12.0).abs() < 0.25, "one-way null latency {l} us (refit: python -m nicsim.fit_lci)");
}

#[test]
fn same_seed_same_metrics() {
    let a = stream("static-split", 700, 100).1;
    let b = stream("static-split", 700, 100).1;
    assert_eq!(a, b);
}

#[test]
fn bad_input_is_one_line_naming_the_key() {
    let e = LciScenario::from_toml("preset = \"lci2000\"\n[nic]\npolling = \"shift\"\n[workload]\nkind = \"stream\"")
        .unwrap_err();
    assert!(e.0.contains("nic.polling") && e.0.contains("packet-shifting"), "{e}");
    let e = LciScenario::from_toml("preset = \"lci2000\"\n[workload]\nkind = \"stream\"\ndst = 64").unwrap_err();
    assert!(e.0.contains("workload.dst") && e.0.contains("63"), "{e}");
    let e = LciScenario::from_toml("preset = \"lci2000\"\n[platform.grid]\nx = 3\n[workload]\nkind = \"stream\"")
        .unwrap_err();
    assert!(e.0.contains("grid.hosts"), "{e}");
    let e = crate::run_toml("preset = \"lci2000\"\n[workload]\nkind = \"flood\"").unwrap_err();
    assert!(e.contains("workload.kind") && !e.contains('\n'), "{e}");
}

#[test]
fn run_toml_dispatches_on_the_preset_family() {
    let m =
        crate::run_toml("preset = \"lci2000\"\n[workload]\nkind = \"stream\"\nsize_bytes = 64\nmessages = 20").unwrap();
    assert!(m.get("throughput_MBps").unwrap() > 0.0);
}

#[test]
#[ignore]
fn print_polling_table() {
    for s in poll::STRATEGY_NAMES {
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
    eprintln!("latency {:?}", run(&s).unwrap().get("latency_us"));
}
