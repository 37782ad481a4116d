//! The error that ends a run of either simulated world early (an invariant
//! broken, no progress, an output that cannot be written): one line, never
//! a panic. Bad input is a `crate::config::ConfigError`, found before any
//! run starts.

use std::fmt;

/// An error that ends a run early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimError(pub String);

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SimError {}
