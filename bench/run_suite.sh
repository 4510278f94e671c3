#!/usr/bin/env bash
# Runs a tle-bench suite on a GPU machine in one command: tle-bench, then Triton/torch (triton_suite.py), merged into one report.
#
# Usage: bench/run_suite.sh OUT_DIR [SUITE.json]
#   SUITE defaults to bench/suites/memory_bound.json.
#   BUILD_DIR (env): the build tree holding bench/tle-bench, bench/kernels/*.cubin and
#     runtime/libtle_rt.so*; default build-bench, else build, under the repository root.
#   TLE_BENCH_ARGS (env): extra tle-bench options (e.g. "--reps 200 --case softmax").
#   TRITON_SUITE_ARGS (env): extra `triton_suite.py run` options (e.g. "--case softmax").
#   TLE_TIMEOUT, PY_TIMEOUT (env, seconds): limits of the two sides (default 120 and 110).
# Writes three files into OUT_DIR: report.md (also printed at the end), report.json, and
# results.tar.gz with every intermediate file (tle.json, tle.md, tle.log, triton.json,
# triton.log, gpu.txt, clocks.csv, report.*).
# Exit status: non-zero when a side fails, times out or produces a wrong output.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -lt 1 || $# -gt 2 ]]; then
  sed -n '2,16p' "${BASH_SOURCE[0]}" >&2
  exit 2
fi
OUT="$1"
SUITE="${2:-$ROOT/bench/suites/memory_bound.json}"
if [[ -z "${BUILD_DIR:-}" ]]; then
  for d in "$ROOT/build-bench" "$ROOT/build"; do
    if [[ -x "$d/bench/tle-bench" ]]; then BUILD_DIR="$d"; break; fi
  done
fi
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
BENCH="$BUILD_DIR/bench/tle-bench"
if [[ ! -x "$BENCH" ]]; then
  echo "run_suite.sh: $BENCH not found; build it (ninja -C BUILD tle-bench) or set BUILD_DIR" >&2
  exit 2
fi
mkdir -p "$OUT"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tle-suite.XXXXXX")"
export LD_LIBRARY_PATH="$BUILD_DIR/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
start=$(date +%s)

{
  echo "# before the run: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu --format=csv 2>&1 || true
  nvidia-smi -q -d CLOCK,PERFORMANCE 2>&1 | sed -n '1,80p' || true
} > "$WORK/gpu.txt"
# Clocks sampled every 500 ms while the suite runs.
clock_pid=""
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu --format=csv,noheader -lms 500 \
    > "$WORK/clocks.csv" 2>/dev/null &
  clock_pid=$!
fi

status=0
# shellcheck disable=SC2206
extra=(${TLE_BENCH_ARGS:-})
echo "+ $BENCH $SUITE --json tle.json --md tle.md ${extra[*]}"
timeout "${TLE_TIMEOUT:-120}" "$BENCH" "$SUITE" --json "$WORK/tle.json" --md "$WORK/tle.md" "${extra[@]}" 2>&1 \
  | tee "$WORK/tle.log"
rc=${PIPESTATUS[0]}
if [[ $rc -ne 0 ]]; then
  echo "run_suite.sh: tle-bench exited with $rc$([[ $rc -eq 124 ]] && echo ' (timed out)')" >&2
  status=1
fi

# shellcheck disable=SC2206
pyextra=(${TRITON_SUITE_ARGS:-})
echo "+ python3 bench/triton_suite.py run --suite $SUITE --out triton.json ${pyextra[*]}"
timeout "${PY_TIMEOUT:-110}" python3 "$ROOT/bench/triton_suite.py" run --suite "$SUITE" --out "$WORK/triton.json" \
  "${pyextra[@]}" 2>&1 | tee "$WORK/triton.log"
rc=${PIPESTATUS[0]}
if [[ $rc -ne 0 ]]; then
  echo "run_suite.sh: triton_suite.py exited with $rc$([[ $rc -eq 124 ]] && echo ' (timed out)')" >&2
  status=1
fi

if [[ -n "$clock_pid" ]]; then
  kill "$clock_pid" 2>/dev/null
  wait "$clock_pid" 2>/dev/null
fi
{
  echo "# after the run: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(( $(date +%s) - start )) s"
  nvidia-smi --query-gpu=name,pstate,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv 2>&1 || true
  nvidia-smi -q -d PERFORMANCE 2>&1 | sed -n '1,40p' || true
} >> "$WORK/gpu.txt"

python3 "$ROOT/bench/triton_suite.py" merge --tle "$WORK/tle.json" --triton "$WORK/triton.json" \
  --gpu-info "$WORK/gpu.txt" --clocks "$WORK/clocks.csv" --out-dir "$WORK" || status=1
cp "$WORK/report.md" "$WORK/report.json" "$OUT/" 2>/dev/null || status=1
tar -czf "$OUT/results.tar.gz" -C "$WORK" . && rm -rf "$WORK"
echo
cat "$OUT/report.md" 2>/dev/null
echo "run_suite.sh: $(( $(date +%s) - start )) s; wrote $OUT/report.md, $OUT/report.json, $OUT/results.tar.gz (status $status)"
exit $status
