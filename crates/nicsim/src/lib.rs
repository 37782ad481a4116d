//! nicsim: a fast, deterministic packet-level simulator and analytic model of
//! NIC-assisted message passing (interrupt coalescing, receive steering,
//! Open-MX-like protocol over Ethernet).
//!
//! The crate is the simulator core; it has no Python in it. Entry points:
//! [`config::Scenario::from_toml`] to describe a run, [`sim::run`] to run it.

#![forbid(unsafe_code)]

pub mod bench;
pub mod config;
pub(crate) mod costs;
pub mod engine;
pub mod error;
pub mod host;
pub mod interrupt;
pub(crate) mod kernel;
pub mod lci;
pub(crate) mod library;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod net;
pub mod nic;
pub mod paged;
pub mod proto;
pub mod sim;
pub mod time;
pub mod tree;
pub mod wire;
pub mod workload;

pub use config::{ConfigError, Scenario};
pub use error::SimError;
pub use metrics::Metrics;
pub use sim::run;

/// Runs a scenario given as TOML text to its end; errors are one line.
/// Nothing stops it, not even its memory: a caller that wants the limit
/// of [`memory`] passes a [`memory::Guard`]'s look in the check of
/// [`run_toml_checked`], as `nicsim run` and `examples/run` do.
pub fn run_toml(text: &str) -> Result<Metrics, String> {
    run_toml_checked(text, &mut interrupt::never)
}

/// Runs a scenario given as TOML text, calling `check` every
/// [`interrupt::CHECK_EVERY`] events (see [`interrupt`]); errors are one
/// line, `"interrupted"` when the check stopped the run.
pub fn run_toml_checked(text: &str, check: interrupt::Check<'_>) -> Result<Metrics, String> {
    let s = Scenario::from_toml(text).map_err(|e| e.to_string())?;
    sim::run_checked(&s, None, check).map_err(|e| e.to_string())
}
