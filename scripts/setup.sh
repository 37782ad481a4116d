#!/usr/bin/env bash
# Installs what nicsim needs into ./.venv (Python packages from PyPI) and
# builds the Rust core into it (--pgo: profile-guided, scripts/pgo.sh).
# Idempotent; used by reproduce.sh and test.sh. It prints one line per
# step; what pip, maturin and cargo say goes to .venv/setup.log, shown in
# full if a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# The extension's allocator, mimalloc, is C built by cargo (cc crate).
if ! command -v "${CC:-cc}" >/dev/null; then
  echo "setup: no C compiler (\`${CC:-cc}\` not found): the core's allocator (mimalloc) is built from C;" \
    "install one (Debian: apt-get install gcc) or set CC" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating the virtual environment .venv"
  "$PY" -m venv .venv
fi
LOG=.venv/setup.log
: >"$LOG"
# Runs a step with its output in $LOG; on failure shows the log and stops.
logged() {
  echo "\$ $*" >>"$LOG"
  if ! "$@" >>"$LOG" 2>&1; then
    cat "$LOG" >&2
    echo "setup: failed: $1 ... (the log above is kept in $LOG)" >&2
    exit 1
  fi
}
echo "setup: installing Python packages into .venv"
logged .venv/bin/python -m pip install -q --upgrade pip
# typer below 0.29: 0.29 imports pydantic to parse options (pyproject.toml);
# scapy reads the captures of `nicsim replay`. Hypothesis is pinned: the
# property tests are derandomized, and which examples a seed draws changes
# between Hypothesis releases, so CI runs the examples a local run does.
logged .venv/bin/python -m pip install -q "maturin>=1.5,<2" "pandas>=2.0" "pyarrow>=14" "matplotlib>=3.7" \
  "typer>=0.12,<0.29" "rich>=13" "tomli-w>=1.0" "scapy>=2.5" "pytest>=8" "hypothesis==6.170.17" "mypy>=1.10" "ruff>=0.5" \
  "dask[distributed]>=2024.1" "scipy>=1.10"  # the optional extras: nicsim[dask] (the cluster tests), nicsim[fit] (python -m nicsim.studies.fit)
# Build the extension in release mode into the venv (editable: python/ is the source);
# with --pgo, optimised with the profile of a training run (scripts/pgo.sh).
# maturin installs the package's dependencies with pip, which lists each
# one as already satisfied: that goes to the log.
if [ "${1:-}" = "--pgo" ]; then
  ./scripts/pgo.sh
else
  echo "setup: building the nicsim core into .venv (cargo, release; minutes the first time)"
  VIRTUAL_ENV="$PWD/.venv" logged .venv/bin/maturin develop --release -q
fi
