//! System tests: one binary, one module per behaviour. Each runs whole
//! scenarios through the full NIC / interrupt / handler / library path and
//! asserts mechanism-level relations (not that code merely runs).

mod coalescing;
mod composition;
mod determinism;
mod emo;
mod fuzz_corpus;
mod interrupt;
mod mechanisms;
mod nas;
mod net_tx;
mod overload;
mod paths2009;
mod pcap;
mod protocol;
mod scale;
mod stalls;
mod tick;
mod time_span;
mod timeline;
mod validity;
mod window;

use nicsim::Metrics;

/// Runs a scenario TOML text; panics with the one-line error on failure.
pub fn run(text: &str) -> Metrics {
    nicsim::run_toml(text).unwrap_or_else(|e| panic!("scenario failed: {e}\n{text}"))
}

/// A ping-pong scenario under `strategy`.
pub fn pingpong(strategy: &str, size: u64, iterations: u64, extra: &str) -> Metrics {
    run(&format!(
        "{extra}\n[nic]\ncoalescing = \"{strategy}\"\n[workload]\nkind = \"pingpong\"\nsize_bytes = {size}\niterations = {iterations}\nwarmup = 3\n"
    ))
}

/// A stream scenario under `strategy`.
pub fn stream(strategy: &str, size: u64, messages: u64, extra: &str) -> Metrics {
    run(&format!(
        "{extra}\n[nic]\ncoalescing = \"{strategy}\"\n[workload]\nkind = \"stream\"\nsize_bytes = {size}\nmessages = {messages}\nwarmup = 200\n"
    ))
}
