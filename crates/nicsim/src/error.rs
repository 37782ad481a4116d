//! The error that ends a run of either simulated world early (an invariant
//! broken, no progress, an output that cannot be written): one line, never
//! a panic. Bad input is a `crate::config::ConfigError`, found before any
//! run starts.

/// An error that ends a run early.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SimError(pub String);

impl SimError {
    /// The one line of a run stopped by its interrupt check.
    const INTERRUPTED: &'static str = "interrupted";

    /// The error of a run whose interrupt check asked it to stop
    /// (see [`crate::interrupt`]).
    pub fn interrupted() -> Self {
        SimError(Self::INTERRUPTED.to_string())
    }

    /// Whether the run was stopped by its interrupt check (not a failure of
    /// the scenario).
    pub fn is_interrupted(&self) -> bool {
        self.0 == Self::INTERRUPTED
    }
}
