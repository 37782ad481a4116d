#!/usr/bin/env bash
# The main job: the [OMX-COAL] coalescing reproduction with the embedded
# presets, writing tables, plots and report.md into ${1:-out/omx-coal}.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
OUT=${1:-out/omx-coal}
shift || true
# nicsim creates --out itself but never a missing parent directory.
mkdir -p "$(dirname "$OUT")"
.venv/bin/nicsim reproduce omx-coal --out "$OUT" "$@"
echo "report: $OUT/report.md"
