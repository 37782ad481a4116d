//! Fuzz target `parse_scenario`: arbitrary text through the Open-MX and LCI
//! scenario parsers and validation (`Scenario::from_toml`, as written and
//! with the LCI stack asked for; the choice of `protocol.stack`). Owns nothing but the
//! harness; the property (no panic, one-line errors) is in
//! `scenario_check.rs`, which a stable `cargo test` also runs over the
//! committed corpus (`corpus/parse_scenario`).
#![no_main]

use libfuzzer_sys::fuzz_target;

include!("../scenario_check.rs");

fuzz_target!(|data: &[u8]| check_scenario_text(data));
