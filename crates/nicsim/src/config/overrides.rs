//! A platform preset with a scenario's `[platform]` overrides applied.
//!
//! This module owns merging the overrides into the preset's table and the
//! wording of every error of the result: a key is named as the user wrote
//! it (`platform.topology.hosts` for a value of the scenario or of an
//! embedded preset, `topology.hosts` of the named file for a value read from
//! a preset file), and a value of the wrong type or beyond its type's range
//! gets the key's real limits, those its validation checks; a key of the
//! earlier LCI preset shape is named with its key now (`config::lanai_derive`).
//! It does not define the platform nor its ranges: `Platform::validate`
//! does, and the ranges are read from it.

use super::{try_from_value, ConfigError, KeyError, PathPart};
use serde::de::DeserializeOwned;

/// Where a platform's values come from: a preset (embedded or a file) and
/// the scenario's overrides.
pub(crate) struct Source<'a> {
    /// The preset as the scenario names it.
    pub preset: &'a str,
    /// Whether `preset` is a file the user wrote (else an embedded preset).
    pub is_file: bool,
    /// The scenario's `[platform]` table.
    pub overrides: Option<&'a toml::Table>,
}

/// Keys that no platform reads, with why, that preset files and scenarios
/// written for earlier versions set: one is refused with this reason
/// rather than as an unknown key.
const GONE: &[(&str, &str)] = &[(
    "library.spin_ns",
    "the library waits as `host.wait` says (poll, or block at once); no spin before blocking is modelled",
)];

/// The error of a key of [`GONE`] or of the earlier LCI preset shape
/// (`config::lanai_derive::MOVED`, named with its key now) that the scenario's
/// overrides or the preset file of `source` set, if any, naming its value.
fn gone(source: &Source<'_>, preset: &toml::Value) -> Option<ConfigError> {
    let gone = GONE.iter().map(|(key, why)| (*key, format!("{why}; leave it out")));
    let moved = super::lanai_derive::MOVED.iter().map(|(key, new)| {
        let why = match new.starts_with('`') {
            false => new.to_string(),
            true if source.is_file => format!("it is {new}; write it there"),
            true => format!("it is {}; write it there", new.replacen('`', "`platform.", 1)),
        };
        (*key, why)
    });
    let overrides = source.overrides.map(|o| toml::Value::Table(o.clone()));
    gone.chain(moved).find_map(|(key, why)| {
        let path = parse_path(key);
        if let Some(v) = overrides.as_ref().and_then(|o| lookup(o, &path)) {
            return Some(ConfigError(format!("`platform.{key}` = {v} is no key of a platform: {why}")));
        }
        let v = lookup(preset, &path).filter(|_| source.is_file)?;
        Some(ConfigError(format!("preset file {:?}: `{key}` = {v} is no key of a platform: {why}", source.preset)))
    })
}

/// Gives a preset's `[host]` the keys of its `[host.tick]` the preset leaves
/// out, at their defaults (no tick: [`super::TickCfg::default`]), so that a
/// scenario may set any of them on every preset with a host, as on those that
/// describe their tick; the platform read is the same as without them, for
/// an absent key reads as its default.
fn fill_optional(preset: &mut toml::Table) -> Result<(), ConfigError> {
    let Some(toml::Value::Table(host)) = preset.get_mut("host") else { return Ok(()) };
    let defaults =
        toml::Table::try_from(super::TickCfg::default()).map_err(|e| ConfigError::new(format!("host.tick: {e}")))?;
    // A `tick` of another type is refused with the key's type when the platform is read.
    if let toml::Value::Table(tick) = host.entry("tick").or_insert_with(|| toml::Value::Table(toml::Table::new())) {
        for (k, v) in defaults {
            tick.entry(k).or_insert(v);
        }
    }
    Ok(())
}

/// Whether a `preset` value names a file rather than an embedded preset.
pub(crate) fn is_file(preset: &str) -> bool {
    preset.ends_with(".toml") || preset.contains('/')
}

impl Source<'_> {
    /// Whether the scenario's overrides set the key at `path`.
    fn overridden(&self, path: &[PathPart]) -> bool {
        let Some(table) = self.overrides else { return false };
        let mut at = Some(&toml::Value::Table(table.clone()));
        for part in path {
            at = match (at, part) {
                (Some(toml::Value::Table(t)), PathPart::Key(k)) => t.get(k),
                (Some(toml::Value::Array(a)), PathPart::Index(i)) => a.get(*i),
                _ => None,
            };
        }
        at.is_some()
    }

    /// `msg` (about the key `key`, written without `platform.`) with the key
    /// named as the user wrote it.
    fn name(&self, key: &str, msg: &str) -> ConfigError {
        let path = parse_path(key);
        if self.is_file && !self.overridden(&path) {
            return ConfigError(format!("preset file {:?}: {msg}", self.preset));
        }
        let ticked = format!("`{key}`");
        ConfigError(msg.replacen(&ticked, &format!("`platform.{key}`"), 1))
    }
}

/// `a.b[2].c` as path parts.
fn parse_path(key: &str) -> Vec<PathPart> {
    let mut parts = Vec::new();
    for piece in key.split('.') {
        let mut rest = piece;
        if let Some(open) = rest.find('[') {
            parts.push(PathPart::Key(rest[..open].to_owned()));
            rest = &rest[open..];
            while let Some(close) = rest.find(']') {
                if let Some(i) = rest.get(1..close).and_then(|n| n.parse().ok()) {
                    parts.push(PathPart::Index(i));
                }
                rest = &rest[close + 1..];
            }
        } else {
            parts.push(PathPart::Key(rest.to_owned()));
        }
    }
    parts
}

/// The first key a validation message names (its first `` `...` ``).
fn named_key(msg: &str) -> Option<&str> {
    let start = msg.find('`')? + 1;
    let len = msg[start..].find('`')?;
    Some(&msg[start..start + len])
}

/// The "allowed" part of a validation message: what follows `(allowed: `,
/// up to its closing parenthesis.
fn allowed_part(msg: &str) -> Option<&str> {
    let start = msg.find("(allowed: ")? + "(allowed: ".len();
    msg.strip_suffix(')').and_then(|m| m.get(start..))
}

/// Merges `over` into `base` recursively: tables merge, values replace (an
/// integer given for a number becomes a number). A value of another type
/// replaces the preset's too; loading the platform then refuses it with
/// the key's limits.
pub(crate) fn merge(base: &mut toml::Table, over: &toml::Table, path: &str) -> Result<(), ConfigError> {
    for (k, v) in over {
        let key = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o, &key)?,
            (Some(toml::Value::Table(_)), _) => {
                return Err(ConfigError::new(format!("`platform.{key}` is a table in the preset; give its keys")))
            }
            (Some(old), toml::Value::Table(_)) => {
                return Err(ConfigError::range(
                    &format!("platform.{key}"),
                    "a table",
                    &format!("a {} like the preset's {old}", type_words(old)),
                ))
            }
            (Some(old), new) => {
                *old = match (&*old, new) {
                    (toml::Value::Float(_), toml::Value::Integer(i)) => toml::Value::Float(*i as f64),
                    _ => new.clone(),
                };
            }
            (None, _) => {
                let allowed: Vec<&str> = base.keys().map(|s| s.as_str()).collect();
                return Err(ConfigError::new(format!(
                    "unknown key `platform.{key}` (allowed here: {})",
                    allowed.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// A TOML value's type in words.
fn type_words(v: &toml::Value) -> &'static str {
    match v {
        toml::Value::Integer(_) => "integer",
        toml::Value::Float(_) => "number",
        toml::Value::Boolean(_) => "boolean",
        toml::Value::String(_) => "string",
        toml::Value::Array(_) => "list",
        toml::Value::Table(_) => "table",
        toml::Value::Datetime(_) => "date",
    }
}

/// Loads the platform `P` of `preset` (an embedded name or a `.toml` path)
/// with `overrides` applied, checked by `validate` ([`load`]): the shared
/// platform of every preset.
pub(crate) fn load_preset<P: DeserializeOwned>(
    preset: &str,
    overrides: Option<&toml::Table>,
    validate: impl Fn(&P) -> Result<(), ConfigError>,
) -> Result<P, ConfigError> {
    let table = super::preset_table(preset)?;
    load(&Source { preset, is_file: is_file(preset), overrides }, table, validate)
}

/// Loads the platform `P` from a preset's table with the overrides of
/// `source` applied, checked by `validate`. Every error names its key as the
/// user wrote it; a value of the wrong type or beyond its type (a negative
/// count, say) gets the key's real limits, found by asking `validate` about
/// values at the ends of the type.
pub(crate) fn load<P: DeserializeOwned>(
    source: &Source<'_>,
    preset: toml::Table,
    validate: impl Fn(&P) -> Result<(), ConfigError>,
) -> Result<P, ConfigError> {
    let mut preset = preset;
    fill_optional(&mut preset)?;
    let preset = toml::Value::Table(preset);
    if let Some(e) = gone(source, &preset) {
        return Err(e);
    }
    let mut merged = preset.clone();
    if let toml::Value::Table(table) = &mut merged {
        // A LANai platform's derived keys (`config::lanai_derive`): the overrides
        // may not set them, the merged table gets them.
        if let Some(o) = source.overrides {
            let lanai = table.contains_key("lanai") || o.contains_key("lanai");
            if let Some(e) = super::lanai_derive::derived_given(o, lanai) {
                return Err(ConfigError(e.0.replacen('`', "`platform.", 1)));
            }
            merge(table, o, "")?;
        }
        super::lanai_derive::derive(table).map_err(|e| match named_key(&e.0) {
            Some(key) => source.name(key, &e.0),
            None => e,
        })?;
    }
    match try_from_value::<P>("", merged.clone()) {
        Ok(p) => {
            validate(&p).map_err(|e| match named_key(&e.0) {
                Some(key) => source.name(key, &e.0),
                None => e,
            })?;
            Ok(p)
        }
        Err(e) => Err(with_limits(source, lookup(&preset, &e.path), &merged, e, &validate)),
    }
}

/// The error of a value the platform type refused (`e`, whose key holds
/// `was` in the preset), with the key's real limits where its validation
/// has some: the value is replaced by probes at the ends of the preset
/// value's type, and the first one the validation refuses for this key
/// tells what it allows.
fn with_limits<P: DeserializeOwned>(
    source: &Source<'_>,
    was: Option<&toml::Value>,
    merged: &toml::Value,
    e: KeyError,
    validate: &impl Fn(&P) -> Result<(), ConfigError>,
) -> ConfigError {
    // Every integer of a platform is a count or a size in 32 bits.
    let (probes, what) = match was {
        Some(toml::Value::Integer(_)) => {
            ([toml::Value::Integer(0), toml::Value::Integer(u32::MAX.into())], "an integer")
        }
        Some(toml::Value::Float(_)) => ([toml::Value::Float(0.0), toml::Value::Float(f64::MAX)], "a number"),
        _ => return source.name(&e.key, &e.msg),
    };
    for probe in probes {
        let mut copy = merged.clone();
        let Some(slot) = lookup_mut(&mut copy, &e.path) else { break };
        *slot = probe;
        let Ok(p) = try_from_value::<P>("", copy) else { continue };
        let Err(refused) = validate(&p) else { continue };
        if named_key(&refused.0) != Some(e.key.as_str()) {
            continue;
        }
        if let Some(allowed) = allowed_part(&refused.0) {
            let words = if allowed.starts_with(|c: char| c.is_ascii_digit()) {
                format!("{what} {allowed}")
            } else {
                allowed.to_owned()
            };
            let given = e.given.clone().unwrap_or_default();
            return source.name(&e.key, &ConfigError::range(&e.key, given, &words).0);
        }
    }
    source.name(&e.key, &e.msg)
}

/// The error of a scenario's number key given a value of another type
/// (`e`, from deserializing `root`), with the key's real limits where its
/// validation (`validate`, a parsed file's error) has some: serde knows
/// only "a number", so the value is replaced by probes at the ends of the
/// numbers, and the first one the validation refuses for this key tells
/// what it allows, as [`with_limits`] does for the platform's keys.
pub(crate) fn number_limits<F: DeserializeOwned>(
    root: &toml::Value,
    e: KeyError,
    validate: impl Fn(F) -> Option<ConfigError>,
) -> ConfigError {
    if !e.msg.ends_with("(allowed: a number)") {
        return ConfigError(e.msg);
    }
    for probe in [0.0, f64::MAX] {
        let mut copy = root.clone();
        let Some(slot) = lookup_mut(&mut copy, &e.path) else { break };
        *slot = toml::Value::Float(probe);
        let Ok(f) = try_from_value::<F>("", copy) else { continue };
        let Some(refused) = validate(f) else { continue };
        if named_key(&refused.0) != Some(e.key.as_str()) {
            continue;
        }
        if let Some(allowed) = allowed_part(&refused.0).filter(|a| a.starts_with(|c: char| c.is_ascii_digit())) {
            return ConfigError::range(&e.key, e.given.clone().unwrap_or_default(), &format!("a number {allowed}"));
        }
    }
    ConfigError(e.msg)
}

/// The value at `path` inside `root`.
fn lookup<'a>(root: &'a toml::Value, path: &[PathPart]) -> Option<&'a toml::Value> {
    path.iter().try_fold(root, |v, part| match part {
        PathPart::Key(k) => v.as_table()?.get(k),
        PathPart::Index(i) => v.as_array()?.get(*i),
    })
}

/// The value at `path` inside `root`, to change it.
fn lookup_mut<'a>(root: &'a mut toml::Value, path: &[PathPart]) -> Option<&'a mut toml::Value> {
    path.iter().try_fold(root, |v, part| match part {
        PathPart::Key(k) => v.as_table_mut()?.get_mut(k),
        PathPart::Index(i) => v.as_array_mut()?.get_mut(*i),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_as_written_and_odd_keys_do_not_panic() {
        let k = |s: &str| PathPart::Key(s.to_owned());
        assert_eq!(parse_path("emo.layer[2].cycles"), [k("emo"), k("layer"), PathPart::Index(2), k("cycles")]);
        for odd in ["[]]", "a]b", "x[", "[[1]]]", "]"] {
            let _ = parse_path(odd);
        }
    }
}
