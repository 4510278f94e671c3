#!/usr/bin/env bash
# Runs tle-bench --tune on the matmul and softmax tune specs (pruned, cached, exhaustive) and Triton's @triton.autotune over the same configs, plus cold compile times, into one report.
#
# Usage: bench/run_tune.sh OUT_DIR
#   BUILD_DIR (env): the build tree holding bench/tle-bench, src/tlec, src/tle-link and
#     runtime/libtle_rt.so*; default build-tune, else build, under the repository root.
#   TUNE_ARGS (env): extra tle-bench --tune options for every run (e.g. "--top-k 16 --jobs 16").
#   SKIP_TRITON=1 (env): only the tle side. SKIP_EXHAUSTIVE=1: no exhaustive runs.
#   TLE_TIMEOUT, TRITON_TIMEOUT, COMPILE_TIMEOUT (env, seconds): per step (default 150, 300, 150).
#   TRITON_MAX_CONFIGS (env): Triton autotunes an evenly spaced subset of this many configs (default:
#     all of them, as tle does; Triton compiles them one after the other, about 1 s each for matmul).
#   COMPILE_REPEAT (env): cold compiles per example and side (default 2).
#   TUNE_KERNELS (env): the tune specs to run (default "matmul softmax"); SKIP_COMPILE=1: no cold
#     compile comparison.
# Writes into OUT_DIR: report.md (printed at the end) and results.tar.gz with every intermediate
# file (tle_*.json, tle_*.md, tle_*.log, *.configs.json, triton_*.json, triton_*.log,
# compile.json, dispatch/, cache.json, gpu.txt).
# Exit status: non-zero when a step fails or times out.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -ne 1 ]]; then
  sed -n '2,14p' "${BASH_SOURCE[0]}" >&2
  exit 2
fi
OUT="$1"
if [[ -z "${BUILD_DIR:-}" ]]; then
  for d in "$ROOT/build-tune" "$ROOT/build"; do
    if [[ -x "$d/bench/tle-bench" ]]; then BUILD_DIR="$d"; break; fi
  done
fi
BUILD_DIR="${BUILD_DIR:-$ROOT/build-tune}"
BENCH="$BUILD_DIR/bench/tle-bench"
TLEC="$BUILD_DIR/src/tlec"
for f in "$BENCH" "$TLEC"; do
  if [[ ! -x "$f" ]]; then
    echo "run_tune.sh: $f not found; build it (ninja -C BUILD tle-bench tlec tle-link) or set BUILD_DIR" >&2
    exit 2
  fi
done
# tlec needs ptxas for cubins: the CUDA toolkit's, else the one bundled with Triton.
if [[ -z "${TLE_PTXAS:-}" ]] && ! command -v ptxas > /dev/null && [[ ! -x /usr/local/cuda/bin/ptxas ]]; then
  p="$(python3 -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas"))' 2>/dev/null)"
  if [[ -n "$p" && -x "$p" ]]; then export TLE_PTXAS="$p"; echo "run_tune.sh: TLE_PTXAS=$p (Triton's)"; fi
fi
mkdir -p "$OUT"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tle-tune.XXXXXX")"
export LD_LIBRARY_PATH="$BUILD_DIR/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TLE_TUNE_CACHE="$WORK/cache.json"
start=$(date +%s)
{
  echo "# before the run: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv 2>&1 || true
  echo "# CPU cores: $(nproc)"
} > "$WORK/gpu.txt"

status=0
step() { # step NAME TIMEOUT CMD...: runs CMD with a timeout, output to NAME.log
  local name="$1" t="$2"
  shift 2
  echo "+ [$(( $(date +%s) - start ))s] $*"
  timeout "$t" "$@" > "$WORK/$name.log" 2>&1
  local rc=$?
  tail -n 30 "$WORK/$name.log"
  if [[ $rc -ne 0 ]]; then
    echo "run_tune.sh: step $name exited with $rc" >&2
    status=1
  fi
}

# shellcheck disable=SC2206
extra=(${TUNE_ARGS:-})
T="${TLE_TIMEOUT:-150}"
for k in ${TUNE_KERNELS:-matmul softmax}; do
  spec="$ROOT/bench/tune/$k.json"
  # 1. Pruned tuning: compile all, keep the model's top K, time them; cache and dispatch table.
  step "tle_${k}" "$T" "$BENCH" --tune "$spec" --tlec "$TLEC" --export-configs "$WORK/$k.configs.json" \
    --dispatch "$WORK/dispatch" --json "$WORK/tle_${k}.json" --md "$WORK/tle_${k}.md" "${extra[@]}"
  # 2. The same again: a cache hit.
  step "tle_${k}_cached" 60 "$BENCH" --tune "$spec" --tlec "$TLEC" --json "$WORK/tle_${k}_cached.json" "${extra[@]}"
  # 3. Exhaustive: time every valid candidate, report how far the pruned winner is from the best.
  if [[ -z "${SKIP_EXHAUSTIVE:-}" ]]; then
    step "tle_${k}_exhaustive" "$T" "$BENCH" --tune "$spec" --tlec "$TLEC" --exhaustive --no-cache --reps 10 --warmup 2 \
      --json "$WORK/tle_${k}_exhaustive.json" --md "$WORK/tle_${k}_exhaustive.md" "${extra[@]}"
  fi
done

if [[ -z "${SKIP_TRITON:-}" ]]; then
  for k in ${TUNE_KERNELS:-matmul softmax}; do
    if [[ -f "$WORK/$k.configs.json" ]]; then
      step "triton_${k}" "${TRITON_TIMEOUT:-300}" python3 "$ROOT/bench/triton_autotune_compare.py" autotune \
        --configs "$WORK/$k.configs.json" --out "$WORK/triton_${k}.json" --max-configs "${TRITON_MAX_CONFIGS:-0}"
    fi
  done
  [[ -n "${SKIP_COMPILE:-}" ]] || step compile "${COMPILE_TIMEOUT:-150}" python3 "$ROOT/bench/triton_autotune_compare.py" compile --tlec "$TLEC" \
    --out "$WORK/compile.json" --repeat "${COMPILE_REPEAT:-2}"
fi

python3 "$ROOT/bench/triton_autotune_compare.py" report \
  --tle-json "$WORK"/tle_matmul.json "$WORK"/tle_matmul_cached.json "$WORK"/tle_matmul_exhaustive.json \
             "$WORK"/tle_softmax.json "$WORK"/tle_softmax_cached.json "$WORK"/tle_softmax_exhaustive.json \
  --triton-json "$WORK"/triton_matmul.json "$WORK"/triton_softmax.json \
  --compile-json "$WORK/compile.json" --out "$WORK/report.md" > /dev/null || status=1
echo "# total wall time of run_tune.sh: $(( $(date +%s) - start )) s" >> "$WORK/report.md"
cp "$WORK/report.md" "$OUT/report.md"
tar -czf "$OUT/results.tar.gz" -C "$WORK" .
cat "$OUT/report.md"
echo "run_tune.sh: wrote $OUT/report.md and $OUT/results.tar.gz ($(( $(date +%s) - start )) s)"
exit $status
