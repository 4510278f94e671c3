#!/usr/bin/env bash
# Runs the whole test suite: set up and build (scripts/setup.sh), then every ctest test in build/.
#
# Usage: scripts/test.sh [extra ctest arguments, e.g. -L gpu or -R lit]
# GPU tests (label gpu) report "Skipped" on machines without a GPU. Exits non-zero on any failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TLE_BUILD_DIR:-$ROOT/build}"

"$ROOT/scripts/setup.sh"

LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" "$@" 2>&1 | tee "$LOG" || status=$?

# ctest prints its label and skip lists after the summary line; repeat the summary so it ends the output.
summary="$(grep -E '^[0-9]+% tests passed' "$LOG" | tail -n 1 || true)"
echo
if [[ -n "$summary" ]]; then
  echo "$summary"
else
  echo "ctest printed no summary (exit status $status)"
  ((status)) || status=1
fi
exit "$status"
