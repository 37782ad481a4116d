//! PyO3 bindings of the nicsim core: thin wrappers, no simulation logic.
//!
//! Every error crosses into Python as `nicsim._core.NicsimError` (a
//! `ValueError`) carrying one line; a Rust panic is caught and turned into
//! the same error type so that Python never sees a Rust backtrace.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::collections::BTreeMap;

create_exception!(_core, NicsimError, PyValueError, "Bad input or an impossible scenario (one line, names the key).");

fn guarded<T>(f: impl FnOnce() -> Result<T, String> + std::panic::UnwindSafe) -> PyResult<T> {
    match std::panic::catch_unwind(f) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(NicsimError::new_err(e)),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            Err(NicsimError::new_err(format!("internal error (please report): {msg}")))
        }
    }
}

/// Whether a metric is a count (returned to Python as `int`).
fn is_count(key: &str) -> bool {
    ["interrupts", "events", "frames", "dropped", "duplicates", "_hits", "_misses"].iter().any(|s| key.ends_with(s))
        || key.starts_with("dropped_")
}

/// Runs one scenario (TOML text) and returns its metrics.
#[pyfunction]
fn run<'py>(py: Python<'py>, scenario_toml: String) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let m = py.allow_threads(|| guarded(move || nicsim::run_toml(&scenario_toml)))?;
    let d = pyo3::types::PyDict::new(py);
    for (k, v) in m.0 {
        if is_count(&k) {
            d.set_item(k, v as i64)?;
        } else {
            d.set_item(k, v)?;
        }
    }
    Ok(d)
}

/// Names of the embedded presets.
#[pyfunction]
fn presets() -> Vec<String> {
    nicsim::config::preset_names().into_iter().map(String::from).collect()
}

/// The TOML text of an embedded preset.
#[pyfunction]
fn preset_toml(name: &str) -> PyResult<String> {
    nicsim::config::preset_text(name).map(String::from).map_err(|e| NicsimError::new_err(e.to_string()))
}

/// Runs a benchmark: kind in {"engine", "pingpong", "stream"}.
#[pyfunction]
#[pyo3(name = "bench")]
fn bench_fn(py: Python<'_>, kind: String, count: u64) -> PyResult<BTreeMap<String, f64>> {
    py.allow_threads(|| guarded(move || nicsim::bench::run(&kind, count)))
}

/// The nicsim version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NicsimError", m.py().get_type::<NicsimError>())?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(preset_toml, m)?)?;
    m.add_function(wrap_pyfunction!(bench_fn, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
