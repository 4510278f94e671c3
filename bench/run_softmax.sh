#!/usr/bin/env bash
# Runs the softmax benchmark on a GPU machine: tle-bench-softmax (our cubin) then triton_softmax.py (Triton, torch), merged into one report.
#
# Usage: bench/run_softmax.sh OUT_DIR [CUBIN]
#   BUILD_DIR (env) is the build tree holding bench/tle-bench-softmax, runtime/libtle_rt.so and
#   examples/softmax4096.<arch>.cubin; default: build-rt, else build, under the repository root.
#   CUBIN defaults to tle-bench-softmax's choice: $BUILD_DIR/examples/softmax4096.<device arch>.cubin.
#   Extra options for the C++ side can be passed in TLE_BENCH_ARGS (e.g. "--reps 500").
# Writes OUT_DIR/tle_softmax.json, softmax_report.{json,md}, the two logs and gpu.txt.
# Exit status: non-zero when either side fails or an output is wrong.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -lt 1 || $# -gt 2 ]]; then
  sed -n '2,12p' "${BASH_SOURCE[0]}" >&2
  exit 2
fi
OUT="$1"
CUBIN="${2:-}"
if [[ -z "${BUILD_DIR:-}" ]]; then
  for d in "$ROOT/build-rt" "$ROOT/build"; do
    if [[ -x "$d/bench/tle-bench-softmax" ]]; then BUILD_DIR="$d"; break; fi
  done
fi
BENCH="${BUILD_DIR:-$ROOT/build}/bench/tle-bench-softmax"
if [[ ! -x "$BENCH" ]]; then
  echo "run_softmax.sh: $BENCH not found; build it (cmake --build BUILD --target tle-bench-softmax) or set BUILD_DIR" >&2
  exit 2
fi
mkdir -p "$OUT"

{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv 2>&1 || true
} > "$OUT/gpu.txt"

status=0
args=(--out "$OUT/tle_softmax.json")
[[ -n "$CUBIN" ]] && args+=(--cubin "$CUBIN")
# shellcheck disable=SC2206
extra=(${TLE_BENCH_ARGS:-})
echo "+ $BENCH ${args[*]} ${extra[*]}"
"$BENCH" "${args[@]}" "${extra[@]}" 2>&1 | tee "$OUT/tle_softmax.log"
rc=${PIPESTATUS[0]}
if [[ $rc -ne 0 ]]; then
  echo "run_softmax.sh: tle-bench-softmax exited with $rc" >&2
  status=1
fi

pyargs=(--out-dir "$OUT")
[[ -f "$OUT/tle_softmax.json" ]] && pyargs+=(--tle-json "$OUT/tle_softmax.json")
echo "+ python3 $ROOT/bench/triton_softmax.py ${pyargs[*]}"
python3 "$ROOT/bench/triton_softmax.py" "${pyargs[@]}" 2>&1 | tee "$OUT/triton_softmax.log"
rc=${PIPESTATUS[0]}
if [[ $rc -ne 0 ]]; then
  echo "run_softmax.sh: triton_softmax.py exited with $rc" >&2
  status=1
fi
exit $status
