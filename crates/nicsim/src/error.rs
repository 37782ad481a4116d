//! The error that ends a run of either simulated world early (an invariant
//! broken, no progress, an output that cannot be written): one line, never
//! a panic. Bad input is a `crate::config::ConfigError`, found before any
//! run starts.

/// An error that ends a run early.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SimError(pub String);
