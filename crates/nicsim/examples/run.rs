//! Example: runs one scenario TOML file and prints its metrics.
//!
//! ```text
//!  host 0 [app - lib - driver - NIC] == wire == [NIC - IRQ/NAPI - handler - lib - app] host 1
//! ```
//! demonstrates the whole path: `cargo run --release --example run -- scenario.toml`

/// The extension's allocator (see `nicsim-py`), so that runs timed here
/// time what `nicsim` runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs the scenario under the memory limit of `nicsim::memory` (as
/// `nicsim run` does): a run that outgrows it stops with its size and the
/// limit instead of taking the machine's memory.
fn main() {
    let path = std::env::args().nth(1).expect("usage: run SCENARIO.toml");
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    let outcome = nicsim::memory::Guard::from_env().and_then(|mut guard| {
        let mut stopped = None;
        let run =
            nicsim::run_toml_checked(&text, &mut |_| match guard.as_mut().map(|g| g.look(std::time::Instant::now())) {
                Some(Err(e)) => {
                    stopped = Some(e);
                    true
                }
                _ => false,
            });
        stopped.map_or(run, Err)
    });
    match outcome {
        Ok(m) => {
            for (k, v) in &m.values {
                println!("{k} = {v}");
            }
            for (k, why) in &m.not_measured {
                println!("{k}: not measured: {why}");
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
