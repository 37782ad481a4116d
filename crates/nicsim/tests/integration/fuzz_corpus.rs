//! The `parse_scenario` fuzz target's committed corpus, replayed on stable
//! Rust: every input goes through the same check as under `cargo fuzz`
//! (`fuzz/scenario_check.rs`), so the corpus (and each crash it once held)
//! is exercised by every `cargo test`.

include!("../../fuzz/scenario_check.rs");

#[test]
fn parse_scenario_corpus_replays_without_a_panic() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/parse_scenario");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        check_scenario_text(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n >= 20, "{n} inputs in {}", dir.display());
}
