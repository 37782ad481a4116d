//! The bindings of the \[EMO] analytic model (`nicsim::model`): the echo
//! latency of one configuration and the terms of its sums, as Python
//! dicts and tuples. Thin wrappers: the model is the core's.

use crate::guarded;
use pyo3::prelude::*;
use std::collections::BTreeMap;

/// A (name, value) term list as Python tuples, scaled (e.g. seconds -> us).
fn terms(ts: &[nicsim::model::Term], scale: f64) -> Vec<(String, f64)> {
    ts.iter().map(|t| (t.name.clone(), t.value * scale)).collect()
}

/// The EMO variables as a dict (unit in each key).
fn vars_dict<'py>(py: Python<'py>, v: &nicsim::model::Vars) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let d = pyo3::types::PyDict::new(py);
    for (k, x) in [
        ("C_N_cycles", v.c_n_cycles),
        ("R_N_hz", v.r_n_hz),
        ("L_NH_us", v.l_nh_s * 1e6),
        ("C_H_cycles", v.c_h_cycles),
        ("R_H_hz", v.r_h_hz),
        ("L_HA_us", v.l_ha_s * 1e6),
        ("L_NA_us", v.l_na_s * 1e6),
        ("C_A_cycles", v.c_a_cycles),
        ("O_NH_cycles", v.o_nh_cycles),
        ("O_HA_cycles", v.o_ha_cycles),
        ("O_NA_cycles", v.o_na_cycles),
        ("L_W_us", v.l_w_s * 1e6),
    ] {
        d.set_item(k, x)?;
    }
    Ok(d)
}

/// Evaluates the EMO echo model for a scenario (TOML text), a path and
/// sizes; `layers` are (name, cycles, on, latency_ns, overhead_cycles).
#[pyfunction]
pub(crate) fn emo_echo<'py>(
    py: Python<'py>,
    scenario_toml: String,
    path: String,
    sizes: Vec<u64>,
    layers: Vec<(String, f64, String, f64, f64)>,
) -> PyResult<Vec<Bound<'py, pyo3::types::PyDict>>> {
    let evals = guarded(move || {
        let extra = layers
            .iter()
            .map(|(n, c, on, l, o)| nicsim::model::layer(n, *c, on, *l, *o).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        nicsim::model::echo_toml(&scenario_toml, &path, &sizes, &extra)
    })?;
    let mut out = Vec::with_capacity(evals.len());
    for e in evals {
        let d = pyo3::types::PyDict::new(py);
        d.set_item("path", e.path.name())?;
        d.set_item("size_bytes", e.size_bytes)?;
        d.set_item("frames", e.frames)?;
        d.set_item("latency_us", e.latency_s * 1e6)?;
        d.set_item("rtt_us", e.rtt_s * 1e6)?;
        d.set_item("overhead_cycles", e.overhead_cycles)?;
        d.set_item("overhead_pct", e.overhead_pct)?;
        d.set_item("gap_us", e.gap_s * 1e6)?;
        d.set_item("coalescing_wait_us", e.coalescing_wait_s * 1e6)?;
        d.set_item("client_terms_us", terms(&e.client_terms, 1e6))?;
        d.set_item("echo_terms_us", terms(&e.echo_terms, 1e6))?;
        d.set_item("overhead_terms_cycles", terms(&e.overhead_terms, 1.0))?;
        d.set_item("layers", e.layers.iter().map(|l| l.name.clone()).collect::<Vec<_>>())?;
        d.set_item("client", vars_dict(py, &e.client)?)?;
        d.set_item("echo", vars_dict(py, &e.echo)?)?;
        out.push(d);
    }
    Ok(out)
}

/// The EMO sums of one configuration for given variables (keys as in the
/// `client`/`echo` dicts of `emo_echo`; missing keys are 0).
#[pyfunction]
pub(crate) fn emo_sums<'py>(
    py: Python<'py>,
    vars: BTreeMap<String, f64>,
    config: String,
    layers: Vec<(String, f64, String, f64, f64)>,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let (lat, over, gap) = guarded(move || {
        let known = [
            "C_N_cycles",
            "R_N_hz",
            "L_NH_us",
            "C_H_cycles",
            "R_H_hz",
            "L_HA_us",
            "L_NA_us",
            "C_A_cycles",
            "O_NH_cycles",
            "O_HA_cycles",
            "O_NA_cycles",
            "L_W_us",
        ];
        if let Some(k) = vars.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(format!("unknown EMO variable `{k}` (allowed: {})", known.join(", ")));
        }
        let g = |k: &str| vars.get(k).copied().unwrap_or(0.0);
        let v = nicsim::model::Vars {
            c_n_cycles: g("C_N_cycles"),
            r_n_hz: g("R_N_hz"),
            l_nh_s: g("L_NH_us") * 1e-6,
            c_h_cycles: g("C_H_cycles"),
            r_h_hz: g("R_H_hz"),
            l_ha_s: g("L_HA_us") * 1e-6,
            l_na_s: g("L_NA_us") * 1e-6,
            c_a_cycles: g("C_A_cycles"),
            o_nh_cycles: g("O_NH_cycles"),
            o_ha_cycles: g("O_HA_cycles"),
            o_na_cycles: g("O_NA_cycles"),
            l_w_s: g("L_W_us") * 1e-6,
        };
        if !(v.r_n_hz > 0.0 && v.r_h_hz > 0.0) {
            return Err(format!("EMO clocks must be > 0 (R_N_hz = {}, R_H_hz = {})", v.r_n_hz, v.r_h_hz));
        }
        let c = nicsim::model::Config::parse(&config).ok_or_else(|| {
            format!("invalid value for `config`: {config:?} (allowed: {})", nicsim::model::CONFIG_NAMES.join(", "))
        })?;
        let extra = layers
            .iter()
            .map(|(n, cy, on, l, o)| nicsim::model::layer(n, *cy, on, *l, *o).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(nicsim::model::sums(&v, c, &extra))
    })?;
    let d = pyo3::types::PyDict::new(py);
    d.set_item("latency_us", nicsim::model::sum(&lat) * 1e6)?;
    d.set_item("overhead_cycles", nicsim::model::sum(&over))?;
    d.set_item("gap_us", gap * 1e6)?;
    d.set_item("latency_terms_us", terms(&lat, 1e6))?;
    d.set_item("overhead_terms_cycles", terms(&over, 1.0))?;
    Ok(d)
}
