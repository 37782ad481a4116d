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

fn main() {
    let path = std::env::args().nth(1).expect("usage: run SCENARIO.toml");
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    match nicsim::run_toml(&text) {
        Ok(m) => {
            for (k, v) in &m.0 {
                println!("{k} = {v}");
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
