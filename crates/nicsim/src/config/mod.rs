//! Configuration: platform presets and scenarios, in two layers.
//!
//! This module owns parsing (serde structs with `deny_unknown_fields`, whose
//! doc comments are the user help) and validation (range checks whose errors
//! name the key, the value and what is allowed). It does not build the
//! simulated world: `crate::sim` turns a validated [`Scenario`] into one.
//!
//! Presets are TOML files embedded in the binary (`presets/*.toml`); a
//! scenario names one and may override any of its values in `[platform]`.

mod lci;
mod platform;
mod scenario;

pub use lci::*;
pub use platform::*;
pub use scenario::*;

use std::fmt;

/// A configuration error: one line naming the key, the value and what is
/// allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ConfigError {}

impl ConfigError {
    pub fn new(msg: impl Into<String>) -> Self {
        ConfigError(msg.into())
    }
    pub fn range(key: &str, value: impl fmt::Display, allowed: &str) -> Self {
        ConfigError(format!("invalid value for `{key}`: {value} (allowed: {allowed})"))
    }
}

/// A preset override of `platform.{key}`: where the preset holds an
/// integer, it is a count or a size, so a negative value is refused here,
/// naming the key (the typed load would only say "expected u32").
pub(crate) fn check_count_override(key: &str, old: &toml::Value, new: &toml::Value) -> Result<(), ConfigError> {
    match (old, new.as_integer()) {
        (toml::Value::Integer(_), Some(n)) if n < 0 => {
            Err(ConfigError::range(&format!("platform.{key}"), n, "a count of 0 or more"))
        }
        _ => Ok(()),
    }
}

/// Embedded presets: (name, TOML text).
pub const PRESETS: &[(&str, &str)] = &[
    ("omx2009", include_str!("../../../../presets/omx2009.toml")),
    ("omx2009-mq", include_str!("../../../../presets/omx2009-mq.toml")),
    ("modern", include_str!("../../../../presets/modern.toml")),
    ("lci2000", include_str!("../../../../presets/lci2000.toml")),
    ("emo2004", include_str!("../../../../presets/emo2004.toml")),
];

/// Names of the embedded presets.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The TOML text of an embedded preset.
pub fn preset_text(name: &str) -> Result<&'static str, ConfigError> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t).ok_or_else(|| {
        ConfigError::range(
            "preset",
            format!("{name:?}"),
            &format!("one of {:?} or a path to a .toml file", preset_names()),
        )
    })
}

/// Turns a toml/serde error into one line, prefixed with where it happened.
pub(crate) fn toml_error(what: &str, e: toml::de::Error) -> ConfigError {
    let msg = e.message().replace('\n', " ");
    ConfigError(format!("{what}: {msg}"))
}

/// Checks `lo <= v <= hi` for a float key.
pub(crate) fn check_f(key: &str, v: f64, lo: f64, hi: f64) -> Result<(), ConfigError> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok(())
    } else {
        Err(ConfigError::range(key, v, &format!("{lo} ..= {hi}")))
    }
}

/// Checks `lo <= v <= hi` for an integer key.
pub(crate) fn check_u(key: &str, v: u64, lo: u64, hi: u64) -> Result<(), ConfigError> {
    if v >= lo && v <= hi {
        Ok(())
    } else {
        Err(ConfigError::range(key, v, &format!("{lo} ..= {hi}")))
    }
}
