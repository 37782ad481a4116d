#!/usr/bin/env bash
# Builds the extension into ./.venv with profile-guided optimisation (PGO):
# an instrumented build runs every experiment once (`nicsim reproduce all
# --quick`), and the profile it writes tells the final build which branches
# are taken and which code is hot, for its inlining and code layout. The
# code is the same, so every result is too (docs/performance.md, "Profile-
# guided build", gives the speed-up and how the tables were compared).
#
# The profile is kept in target/pgo under a key of the Rust sources, the
# presets and the compiler: run again with none of them changed, this only
# reinstalls the optimised build. The instrumented and the final build each
# have their own target directory, so neither rebuilds the plain one.
#
# Needs llvm-profdata of the Rust toolchain (`rustup component add
# llvm-tools`, tried here); without it the plain build is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
# maturin's own pip run lists every dependency as already satisfied: that
# goes to .venv/pgo.log, shown if the build fails.
develop() {
  if ! VIRTUAL_ENV="$PWD/.venv" .venv/bin/maturin develop --release -q >.venv/pgo.log 2>&1; then
    cat .venv/pgo.log >&2
    echo "pgo: maturin develop failed (log: .venv/pgo.log)" >&2
    return 1
  fi
}

host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
  rustup component add llvm-tools >/dev/null 2>&1 || true
fi
if [ ! -x "$profdata" ]; then
  echo "pgo: $profdata not found and 'rustup component add llvm-tools' failed; installing the build without a profile" >&2
  develop
  exit 0
fi

key=$({
  rustc -vV
  cat Cargo.lock scripts/pgo.sh
  find Cargo.toml crates presets -type f \( -name '*.rs' -o -name '*.toml' \) | LC_ALL=C sort | xargs cat
} | sha256sum | cut -c1-16)
prof="$PWD/target/pgo/$key.profdata"
if [ ! -f "$prof" ]; then
  raw="$PWD/target/pgo/raw-$key"
  rm -rf "$raw"
  mkdir -p "$raw"
  echo "pgo: instrumented build, then a training run (every experiment, --quick: a few minutes)" >&2
  CARGO_TARGET_DIR=target/pgo-gen RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$raw" develop
  .venv/bin/nicsim reproduce all --quick --jobs "$(nproc)" --out "$raw/out" >"$raw/train.log" 2>&1 || {
    echo "pgo: the training run failed (log: $raw/train.log)" >&2
    exit 1
  }
  "$profdata" merge -o "$prof.part" "$raw"/*.profraw
  mv "$prof.part" "$prof"
  rm -rf "$raw"
fi
CARGO_TARGET_DIR=target/pgo-use RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$prof" develop
echo "pgo: installed the build optimised with $prof" >&2
