#!/usr/bin/env bash
# All tests: Rust formatting, lints, API docs (no broken links), unit +
# integration tests; Python lints, types and pytest (including end-to-end
# runs through the compiled core).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -q -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q
cargo test --workspace -q
.venv/bin/ruff check python tests
.venv/bin/ruff format --check python tests
.venv/bin/mypy
.venv/bin/python -m pytest -q
