// The property the `parse_scenario` fuzz target checks, shared with the
// stable replay of its corpus (`tests/integration/fuzz_corpus.rs`), which
// `include!`s this file: any text through the scenario parser, as written
// (the choice of `protocol.stack` and its default) and with the LCI stack
// asked for (its part read whatever the text's default), returns a value
// or a one-line error, and never panics.

/// Checks one input (any bytes; the parsers take UTF-8 text).
pub fn check_scenario_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // A preset given as a path is read from the file system: a fuzzer that
    // names /dev/zero would test the disk, not the parser. Embedded presets
    // and preset overrides are still parsed.
    if names_a_preset_file(text) {
        return;
    }
    for err in [
        nicsim::Scenario::from_toml(text).err().map(|e| e.0),
        on_lci(text).and_then(|t| nicsim::Scenario::from_toml(&t).err()).map(|e| e.0),
    ]
    .into_iter()
    .flatten()
    {
        assert!(!err.contains('\n'), "a multi-line error: {err:?}");
        assert!(!err.is_empty(), "an empty error");
    }
    if let Ok(s) = nicsim::Scenario::from_toml(text) {
        // The stack the check reports is the one its scenario runs, and an
        // LCI scenario carries the LCI stack's options.
        assert_eq!(nicsim::config::check_toml(text).ok(), Some(s.stack()), "check and parse disagree");
        assert_eq!(s.lci.is_some(), s.stack() == nicsim::config::Stack::Lci);
        assert!(s.receive_queues() >= 2);
    }
}

/// `text` with the LCI stack asked for (`protocol.stack = "lci"`, preset
/// `lci2000` unless it names one); `None` if it is not a TOML table.
fn on_lci(text: &str) -> Option<String> {
    let mut t = text.parse::<toml::Table>().ok()?;
    t.entry("preset").or_insert_with(|| "lci2000".into());
    if let toml::Value::Table(p) = t.entry("protocol").or_insert_with(|| toml::Table::new().into()) {
        p.insert("stack".into(), "lci".into());
    }
    Some(t.to_string())
}

/// Whether `preset` (at the top level) is a path rather than a name.
fn names_a_preset_file(text: &str) -> bool {
    let Ok(t) = text.parse::<toml::Table>() else { return false };
    t.get("preset").and_then(|v| v.as_str()).is_some_and(|p| p.ends_with(".toml") || p.contains('/'))
}
