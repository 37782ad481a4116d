//! Configuration: platform presets and scenarios, in two layers.
//!
//! This module owns parsing (serde structs with `deny_unknown_fields`, whose
//! doc comments are the user help; every name a key accepts is a serde enum)
//! and validation (checked values: [`Duration`](crate::time::Duration)s, not
//! floating-point time; errors name the key, the value and what is allowed).
//! It does not build the simulated world: `crate::sim` turns a validated
//! [`Scenario`] into one, `crate::lci` an [`LciScenario`].
//!
//! Dependencies run one way: configuration depends only on the leaf modules
//! `crate::time`, `crate::wire` and `crate::workload`; the components (`nic`,
//! `host`, `net`, `lci`) and the worlds (`sim`, `lci`, `model`) use the
//! configuration types, which live here.
//!
//! Presets are TOML files embedded in the binary (`presets/*.toml`); a
//! scenario names one and may override any of its values in `[platform]`.

mod mpi_path;
pub use mpi_path::MpiPath;
mod pull_rerequest;
pub use pull_rerequest::PullRerequest;
mod tick;
pub use tick::{TickCfg, TICK_HZ_MAX};
mod bus;
mod coalesce;
mod emo;
mod grid;
mod lanai;
mod lanai_derive;
mod nic_features;
mod nic_opts;
mod overrides;
mod platform;
mod program;
mod scenario;
mod stack;
mod units;
mod workload;
mod workload_check;

pub use bus::*;
pub use coalesce::*;
pub use emo::*;
pub use grid::*;
pub use lanai::{LanaiCfg, LciHostCfg, LciHostTimes};
pub use nic_features::*;
pub use nic_opts::*;
pub use platform::*;
pub use scenario::*;
pub use stack::*;
pub use workload::*;
pub(crate) use workload_check::RunsOn;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A configuration error: one line naming the key, the value and what is
/// allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

impl ConfigError {
    pub fn new(msg: impl Into<String>) -> Self {
        ConfigError(msg.into())
    }
    pub fn range(key: &str, value: impl fmt::Display, allowed: &str) -> Self {
        ConfigError(format!("invalid value for `{key}`: {value} (allowed: {allowed})"))
    }
}

/// An integer key of a scenario as the user wrote it, whatever its TOML
/// type. Validation reads it with [`Int::range`], against the key's real
/// limits, so that a value of the wrong type ("big"), a negative one and one
/// out of range get the same message: the key, the value and those limits
/// (not the range of a Rust type).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(transparent)]
pub struct Int(pub toml::Value);

impl Int {
    /// The value if it is an integer in `lo ..= hi`, else an error naming
    /// `key`, the value and the range.
    pub fn range(&self, key: &str, lo: u64, hi: u64) -> Result<u64, ConfigError> {
        match self.0.as_integer().and_then(|v| u64::try_from(v).ok()) {
            Some(v) if (lo..=hi).contains(&v) => Ok(v),
            _ => Err(ConfigError::range(key, &self.0, &format!("an integer {lo} ..= {hi}"))),
        }
    }

    /// The value if it is an integer, else an error naming `key`, the value
    /// and `allowed` (for a key whose limits are not a plain range).
    pub fn integer(&self, key: &str, allowed: &str) -> Result<i64, ConfigError> {
        self.0.as_integer().ok_or_else(|| ConfigError::range(key, &self.0, allowed))
    }
}

/// An optional integer key: its value in `lo ..= hi`, or `default` when
/// absent.
pub(crate) fn int_or(key: &str, v: &Option<Int>, default: u64, lo: u64, hi: u64) -> Result<u64, ConfigError> {
    match v {
        None => Ok(default),
        Some(v) => v.range(key, lo, hi),
    }
}

/// Checks a scenario text as a run would before it starts (parsing and
/// every validation), without building its world; returns the stack its
/// hosts run. A campaign checks every run this way before the first.
pub fn check_toml(text: &str) -> Result<Stack, ConfigError> {
    Scenario::from_toml(text).map(|s| s.stack())
}

/// The preset of a scenario that names none: the [OMX-COAL] testbed
/// (SPEC §5), the platform of the main reproduction. The Python package
/// reads it from the binding (`nicsim._core.DEFAULT_PRESET`).
pub const DEFAULT_PRESET: &str = "omx2009";

/// Seeds are below 2^63: a scenario is TOML, whose integers are signed
/// 64-bit (TOML 1.0, "Integer"). The Python package checks the same bound
/// (`nicsim._core.SEED_LIMIT`).
pub const SEED_LIMIT: u64 = 1 << 63;

/// The largest preset file read, in bytes. The embedded presets are 5 to
/// 14 KiB of TOML with their comments; a bound far above that keeps a
/// mistaken path (a log, a disk image) from being read into memory whole.
/// The Python package reads scenario files under the same bound
/// (`nicsim.scenario.MAX_FILE_BYTES`).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Reads the configuration file at `path`, named by the key `key`: a
/// regular file of at most [`MAX_FILE_BYTES`] of UTF-8. Anything else is
/// refused before it is read, naming the key, the path and what it is: a
/// FIFO (opening one waits for a writer), a device (`/dev/zero` never
/// ends), a directory, or a bigger file. The read itself stops one byte
/// past the bound, for files whose size the file system does not know.
pub(crate) fn read_config_file(key: &str, path: &str) -> Result<String, ConfigError> {
    use std::io::Read;
    let refuse = |why: String| {
        ConfigError(format!(
            "invalid value for `{key}`: {path:?} {why} (allowed: a regular TOML file of at most {} KiB)",
            MAX_FILE_BYTES >> 10
        ))
    };
    let unreadable = |e: std::io::Error| ConfigError(format!("invalid value for `{key}`: cannot read {path:?}: {e}"));
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(refuse(format!("is {}", file_kind(&meta.file_type()))));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(refuse(format!("is {} bytes", meta.len())));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_FILE_BYTES + 1).read_to_string(&mut text))
        .map_err(unreadable)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(refuse(format!("holds more than {MAX_FILE_BYTES} bytes")));
    }
    Ok(text)
}

/// What a file that is not a regular file is, for [`read_config_file`].
fn file_kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
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

/// The embedded preset `name` as a TOML table, each preset parsed once per
/// process: a campaign checks every run's scenario before the first, and
/// each check reads its preset (its stack, its platform) several times.
pub(crate) fn embedded_table(name: &str) -> Result<toml::Table, ConfigError> {
    static PARSED: std::sync::OnceLock<Vec<Result<toml::Table, ConfigError>>> = std::sync::OnceLock::new();
    preset_text(name)?;
    let parsed = PARSED.get_or_init(|| {
        PRESETS.iter().map(|(_, text)| toml::from_str(text).map_err(|e| toml_error_in("preset", text, e))).collect()
    });
    let at = PRESETS.iter().position(|(n, _)| *n == name).unwrap_or_default();
    parsed[at].clone()
}

/// Reads a preset (embedded name or `.toml` path) as a TOML table.
pub fn preset_table(preset: &str) -> Result<toml::Table, ConfigError> {
    if !overrides::is_file(preset) {
        return embedded_table(preset);
    }
    let text = read_config_file("preset", preset)?;
    toml::from_str(&text).map_err(|e| toml_error_in("preset", &text, e))
}

/// Whether a preset table describes LANai NIs (the \[LCI] cluster's
/// hardware): it has a `[lanai]` table (`config::lanai`).
pub fn is_lci_table(t: &toml::Table) -> bool {
    t.contains_key("lanai")
}

/// Turns a TOML syntax error into one line, prefixed with where it happened.
pub(crate) fn toml_error(what: &str, e: toml::de::Error) -> ConfigError {
    let msg = e.message().replace('\n', " ");
    ConfigError(format!("{what}: {msg}"))
}

/// [`toml_error`] for an error in `text`, with its line. The TOML parser
/// refuses lists, inline tables and dotted keys nested 80 deep or more
/// ("recursion limit exceeded"): the message says so.
pub(crate) fn toml_error_in(what: &str, text: &str, e: toml::de::Error) -> ConfigError {
    let line = e.span().and_then(|s| text.get(..s.start)).map(|before| before.matches('\n').count() + 1);
    let mut msg = e.message().replace('\n', " ");
    if msg.contains("recursion limit exceeded") {
        msg.push_str(" (lists, inline tables and dotted keys nest at most 79 deep)");
    }
    match line {
        Some(line) => ConfigError(format!("{what}: line {line}: {msg}")),
        None => ConfigError(format!("{what}: {msg}")),
    }
}

/// Deserializes `T` from parsed TOML; every error names the dotted key
/// (`prefix` + the path inside `value`), the value given and what is
/// allowed. serde alone reports only the type ("expected u64"):
/// `serde_path_to_error` records the path to the failing field.
pub(crate) fn from_value<T: DeserializeOwned>(prefix: &str, value: toml::Value) -> Result<T, ConfigError> {
    try_from_value(prefix, value).map_err(|e| ConfigError(e.msg))
}

/// One step of the path to a key: a table key or a list index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathPart {
    Key(String),
    Index(usize),
}

/// An error of [`try_from_value`]: its one-line message and what it is about.
#[derive(Debug, Clone)]
pub(crate) struct KeyError {
    /// The dotted key (`prefix` + path), as the message names it.
    pub key: String,
    /// The path to the key inside the deserialized value.
    pub path: Vec<PathPart>,
    /// The value found there, as TOML.
    pub given: Option<String>,
    /// The one-line message.
    pub msg: String,
}

/// [`from_value`], its error with the key's path and value (to word the
/// error again with more context, as a platform's loading does).
pub(crate) fn try_from_value<T: DeserializeOwned>(prefix: &str, value: toml::Value) -> Result<T, KeyError> {
    let copy = value.clone();
    serde_path_to_error::deserialize(value).map_err(|e| {
        let key = dotted(prefix, e.path());
        let given = lookup(&copy, e.path()).map(|v| v.to_string());
        let mut msg = e.inner().message().to_owned();
        // A name field given another type: serde knows only that it wanted a
        // string. Ask again with an empty string there, which it refuses
        // with the list of names.
        if msg.ends_with("expected string only") {
            let mut probe = copy.clone();
            if let Some(v) = lookup_mut(&mut probe, e.path()) {
                *v = toml::Value::String(String::new());
                if let Err(again) = serde_path_to_error::deserialize::<_, T>(probe) {
                    if again.path().to_string() == e.path().to_string() {
                        if let Some(rest) = again.inner().message().strip_prefix("unknown variant ") {
                            msg = format!(
                                "invalid type: {}, expected {}",
                                given.as_deref().unwrap_or("?"),
                                after_expected(rest)
                            );
                        }
                    }
                }
            }
        }
        let path = e
            .path()
            .iter()
            .filter_map(|seg| match seg {
                serde_path_to_error::Segment::Seq { index } => Some(PathPart::Index(*index)),
                serde_path_to_error::Segment::Map { key } => Some(PathPart::Key(key.clone())),
                _ => None,
            })
            .collect();
        let msg = serde_message(&key, given.as_deref(), &msg);
        KeyError { key, path, given, msg }
    })
}

/// The value at `path` inside `root`, to change it.
fn lookup_mut<'a>(root: &'a mut toml::Value, path: &serde_path_to_error::Path) -> Option<&'a mut toml::Value> {
    use serde_path_to_error::Segment;
    path.iter().try_fold(root, |v, seg| match seg {
        Segment::Seq { index } => v.as_array_mut()?.get_mut(*index),
        Segment::Map { key } => v.as_table_mut()?.get_mut(key),
        Segment::Enum { .. } | Segment::Unknown => Some(v),
    })
}

/// `prefix` followed by the path, dot-separated, list indices in brackets.
fn dotted(prefix: &str, path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut key = prefix.trim_end_matches('.').to_owned();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => key.push_str(&format!("[{index}]")),
            Segment::Map { key: k } | Segment::Enum { variant: k } => {
                if !key.is_empty() {
                    key.push('.');
                }
                key.push_str(k);
            }
            Segment::Unknown => {}
        }
    }
    key
}

/// The value at `path` inside `root`, if the path leads to one.
fn lookup<'a>(root: &'a toml::Value, path: &serde_path_to_error::Path) -> Option<&'a toml::Value> {
    use serde_path_to_error::Segment;
    path.iter().try_fold(root, |v, seg| match seg {
        Segment::Seq { index } => v.as_array()?.get(*index),
        Segment::Map { key } => v.as_table()?.get(key),
        Segment::Enum { .. } | Segment::Unknown => Some(v),
    })
}

/// One line from serde's message about `key` (whose TOML value is `given`):
/// serde words its errors as "invalid type: X, expected Y", "unknown variant
/// `x`, expected one of `a`, `b`", "unknown field `f`, expected ..." and
/// "missing field `f`" (serde `de::Error`'s provided methods); anything else
/// is kept as it is, after the key.
fn serde_message(key: &str, given: Option<&str>, msg: &str) -> String {
    let msg = msg.replace('\n', " ");
    let ticked = |s: &str| s.split('`').nth(1).map(str::to_owned);
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        // The path already ends with the unknown key.
        if let Some(why) = nic_opts::not_modelled(key) {
            return format!("`{key}` is not modelled: {why}");
        }
        return format!("unknown key `{key}` (allowed here: {})", names(after_expected(rest)));
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        let field = ticked(rest).unwrap_or_default();
        let full = if key.is_empty() { field } else { format!("{key}.{field}") };
        return format!("missing key `{full}`");
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        let value = given.map(str::to_owned).unwrap_or_else(|| format!("{:?}", ticked(rest).unwrap_or_default()));
        return ConfigError::range(key, value, &format!("one of {}", names(after_expected(rest)))).0;
    }
    for head in ["invalid type: ", "invalid value: ", "invalid length "] {
        if let Some(rest) = msg.strip_prefix(head) {
            let (unexpected, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
            let value = given.map(str::to_owned).unwrap_or_else(|| unexpected.to_owned());
            return ConfigError::range(key, value, &expected_in_words(expected)).0;
        }
    }
    format!("`{key}`: {msg}")
}

/// The part of a serde message after "expected ".
fn after_expected(s: &str) -> &str {
    s.split_once("expected ").map(|(_, e)| e).unwrap_or("")
}

/// serde's list of names (`` `a`, `b` ``, `` `a` or `b` ``, "one of ...")
/// as plain comma-separated names.
fn names(list: &str) -> String {
    let list = list.trim_start_matches("one of ");
    let names: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// serde's "expected" text in the words of the scenario file.
fn expected_in_words(expected: &str) -> String {
    match expected {
        "u8" => format!("an integer 0 ..= {}", u8::MAX),
        "u16" => format!("an integer 0 ..= {}", u16::MAX),
        "u32" => format!("an integer 0 ..= {}", u32::MAX),
        "u64" => format!("an integer 0 ..= {}", i64::MAX),
        "i64" | "i32" => "an integer".to_owned(),
        "f64" | "f32" => "a number".to_owned(),
        "a boolean" => "true or false".to_owned(),
        "a sequence" => "a list".to_owned(),
        e if e.starts_with("struct ") || e == "a map" => "a table".to_owned(),
        e if e.contains('`') => format!("one of {}", names(e)),
        e => e.to_owned(),
    }
}

/// The names serde accepts for a field-less enum `T` (its variants after
/// `rename_all`), or the keys of a table struct `T` (its fields), in
/// declaration order: the user help of an error lists them from the type
/// itself, so the list cannot drift from the parser.
pub fn variant_names<T: DeserializeOwned>() -> &'static [&'static str] {
    struct Probe(Option<&'static [&'static str]>);
    #[derive(Debug)]
    struct Stop;
    impl fmt::Display for Stop {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("probe")
        }
    }
    impl std::error::Error for Stop {}
    impl serde::de::Error for Stop {
        fn custom<M: fmt::Display>(_: M) -> Self {
            Stop
        }
    }
    impl<'de> serde::Deserializer<'de> for &mut Probe {
        type Error = Stop;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_enum<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            variants: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0 = Some(variants);
            Err(Stop)
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0 = Some(fields);
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map identifier ignored_any
        }
    }
    let mut probe = Probe(None);
    let _ = T::deserialize(&mut probe);
    probe.0.unwrap_or(&[])
}

/// "one of a, b, c" for the enum `T`.
pub(crate) fn one_of_names<T: DeserializeOwned>() -> String {
    format!("one of {}", variant_names::<T>().join(", "))
}

/// Refuses a `[workload]` key that a workload of kind `kind` does not read
/// (`keys`: the ones it does, besides `kind`), naming the key, its value
/// and the kind's keys. Such a key would otherwise be ignored: a stream
/// given `iterations = 5` would send its default messages without a word.
/// The keys set are read back from the options (`opts`) as TOML, so a key
/// added to the table is refused for every kind that does not list it.
pub(crate) fn check_read<T: serde::Serialize>(opts: &T, kind: &str, keys: &[&str]) -> Result<(), ConfigError> {
    let set = toml::Table::try_from(opts).map_err(|e| ConfigError(format!("workload: {e}")))?;
    match set.iter().find(|(key, _)| key.as_str() != "kind" && !keys.contains(&key.as_str())) {
        None => Ok(()),
        Some((key, value)) => Err(ConfigError(format!(
            "`workload.{key}` = {value} is not read by workload.kind = \"{kind}\" (its keys: {})",
            keys.join(", ")
        ))),
    }
}

/// A missing required key: names it and what it may be.
pub(crate) fn missing(key: &str, allowed: &str) -> ConfigError {
    ConfigError(format!("missing key `{key}` (required: {allowed})"))
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
        Err(ConfigError::range(key, v, &format!("an integer {lo} ..= {hi}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fresh directory under the system temp dir, for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("nicsim-config-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn refusal(path: &str) -> String {
        read_config_file("preset", path).unwrap_err().to_string()
    }

    #[test]
    fn a_device_is_refused_before_it_is_read() {
        let msg = refusal("/dev/zero");
        assert!(msg.starts_with("invalid value for `preset`: \"/dev/zero\" is a character device"), "{msg}");
        assert!(msg.ends_with("(allowed: a regular TOML file of at most 1024 KiB)"), "{msg}");
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = scratch("dir");
        let msg = refusal(dir.to_str().unwrap());
        assert!(msg.contains("is a directory"), "{msg}");
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let fifo = scratch("fifo").join("preset.toml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // no mkfifo on this system
        }
        let msg = refusal(fifo.to_str().unwrap());
        assert!(msg.contains("is a FIFO (named pipe)"), "{msg}");
    }

    #[test]
    fn a_file_over_the_bound_is_refused_and_one_at_it_is_read() {
        let dir = scratch("size");
        let big = dir.join("big.toml");
        // Sparse: the size is known without writing a mebibyte.
        std::fs::File::create(&big).unwrap().set_len(MAX_FILE_BYTES + 1).unwrap();
        let msg = refusal(big.to_str().unwrap());
        assert!(msg.contains(&format!("is {} bytes", MAX_FILE_BYTES + 1)), "{msg}");
        let at = dir.join("at.toml");
        std::fs::write(&at, " ".repeat(MAX_FILE_BYTES as usize)).unwrap();
        assert_eq!(read_config_file("preset", at.to_str().unwrap()).unwrap().len() as u64, MAX_FILE_BYTES);
    }

    #[test]
    fn a_missing_file_names_the_key_and_the_path() {
        let msg = refusal("/no/such/preset.toml");
        assert!(msg.starts_with("invalid value for `preset`: cannot read \"/no/such/preset.toml\": "), "{msg}");
    }

    #[test]
    fn a_value_nested_too_deep_is_one_line_with_its_line() {
        let deep = format!("[workload]\nkind = \"pingpong\"\nfoo = {}{}\n", "[".repeat(500), "]".repeat(500));
        let dotted = format!("[workload]\nkind = \"pingpong\"\n[platform.{}]\n", vec!["a"; 1000].join("."));
        for (text, line) in [(deep, 3), (dotted, 3)] {
            let e = check_toml(&text).unwrap_err().0;
            assert!(e.starts_with(&format!("scenario: line {line}: ")), "{e}");
            assert!(e.contains("nest at most 79 deep") && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn a_scenario_naming_dev_zero_as_its_preset_is_refused() {
        let err = Scenario::from_toml("preset = \"/dev/zero\"\n[workload]\nkind = \"pingpong\"\n").unwrap_err();
        assert!(err.to_string().contains("is a character device"), "{err}");
    }
}
