//! Metrics of a finished run: named values, the one result type of both
//! simulated worlds (`crate::sim` for Open-MX, `crate::lci` for LCI).
//!
//! This module owns the container only; each world computes its own
//! metrics from its state at the end of a run.

use std::collections::BTreeMap;

/// Named metric values of one run, in a stable (sorted) order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics(pub BTreeMap<String, f64>);

impl Metrics {
    pub fn get(&self, k: &str) -> Option<f64> {
        self.0.get(k).copied()
    }
    pub(crate) fn set(&mut self, k: &str, v: f64) {
        self.0.insert(k.to_string(), v);
    }
}
