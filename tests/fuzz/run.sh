#!/usr/bin/env bash
# Builds a fuzz target with clang-14 (libFuzzer, ASan+UBSan, asserts on) and fuzzes for N seconds.
#
# Usage: tests/fuzz/run.sh [SECONDS] [extra libFuzzer options]    fuzz (default 600 s)
#        tests/fuzz/run.sh --replay FILE_OR_DIR...                  run inputs once (e.g. regressions/)
#        tests/fuzz/run.sh --merge                                  minimise the work corpus into corpus/
# Environment: TLE_FUZZ_TARGET (tle-fuzz, the default: .tle source and tile IR; tle-fuzz-gen: tapes
#              of the difftest generator's choices; tle-fuzz-runtime: libtle_rt's module loading),
#              TLE_FUZZ_BUILD_DIR (default: <repo>/build-fuzz), TLE_JOBS (build jobs, default 2),
#              TLE_FUZZ_FORK (default 1: libFuzzer -fork=N, which keeps going after a finding;
#              0: one process that stops at the first finding).
#
# Seeds of tle-fuzz: tests/fuzz/corpus (committed, minimised), examples/, tests/lit, tests/errors,
# tests/gpu/kernels; of tle-fuzz-gen: corpus-gen/; of tle-fuzz-runtime: corpus-runtime/.
# New inputs go to <build>/corpus[-gen|-runtime], findings to <build>/artifacts/
# (crash-*, timeout-*, oom-*, leak-*). A finding becomes a file in tests/fuzz/regressions/ plus a
# pending test (tests/lit or tests/errors, *.tle.pending) until tlec is fixed.
# clang-14 and libclang-rt-14-dev come from `scripts/setup.sh --fuzz-packages` (Debian packages).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD_DIR="${TLE_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
JOBS="${TLE_JOBS:-2}"
say() { printf 'fuzz: %s\n' "$*"; }

mode=fuzz
case "${1:-}" in
  --replay) mode=replay; shift ;;
  --merge) mode=merge; shift ;;
esac

# --- 1. Packages and build (incremental).
"$ROOT/scripts/setup.sh" --fuzz-packages
CMAKE_ARGS=(-S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g"
            -DCMAKE_C_FLAGS_DEBUG="-O1 -g" -DTLE_SANITIZE=ON -DTLE_BUILD_FUZZER=ON -DTLE_BUILD_TESTS=OFF)
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  CMAKE_ARGS+=(-G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14)
fi
cmake "${CMAKE_ARGS[@]}" >/dev/null
TARGET="${TLE_FUZZ_TARGET:-tle-fuzz}"
case "$TARGET" in
  tle-fuzz) SUFFIX=""; DICT="$HERE/tle.dict"; MAXLEN=8192 ;;
  tle-fuzz-gen) SUFFIX="-gen"; DICT=""; MAXLEN=1024 ;;
  tle-fuzz-runtime) SUFFIX="-runtime"; DICT="$HERE/runtime.dict"; MAXLEN=16384 ;;
  *) say "unknown TLE_FUZZ_TARGET '$TARGET' (tle-fuzz, tle-fuzz-gen or tle-fuzz-runtime)"; exit 2 ;;
esac
cmake --build "$BUILD_DIR" -j "$JOBS" --target "$TARGET"
FUZZ="$BUILD_DIR/tests/fuzz/$TARGET"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$ROOT/tests/sanitizers/lsan.supp:print_suppressions=0}"
if [[ -z "${ASAN_SYMBOLIZER_PATH:-}" ]] && command -v llvm-symbolizer >/dev/null 2>&1; then
  export ASAN_SYMBOLIZER_PATH="$(command -v llvm-symbolizer)"
fi

case "$mode" in
  replay)
    exec "$FUZZ" -runs=1 "$@" ;;
  merge)
    mkdir -p "$HERE/corpus$SUFFIX"
    exec "$FUZZ" -merge=1 -max_len="$MAXLEN" -timeout=30 "$HERE/corpus$SUFFIX" "$BUILD_DIR/corpus$SUFFIX" ;;
esac

# --- 2. Fuzz.
SECONDS_TO_RUN="${1:-600}"
shift || true
mkdir -p "$BUILD_DIR/corpus$SUFFIX" "$BUILD_DIR/artifacts" "$HERE/corpus$SUFFIX"
SEEDS=("$HERE/corpus$SUFFIX")
if [[ "$TARGET" == tle-fuzz ]]; then
  SEEDS+=("$ROOT/examples" "$ROOT/tests/lit" "$ROOT/tests/errors")
  [[ -d "$ROOT/tests/gpu/kernels" ]] && SEEDS+=("$ROOT/tests/gpu/kernels")
fi
FORK="${TLE_FUZZ_FORK:-1}"
OPTS=(-max_total_time="$SECONDS_TO_RUN" -timeout=30 -rss_limit_mb=4096 -max_len="$MAXLEN"
      -artifact_prefix="$BUILD_DIR/artifacts/$TARGET-" -print_final_stats=1 -print_funcs=0)
[[ -n "$DICT" ]] && OPTS+=(-dict="$DICT")
# tlec reads text; tapes and module images are bytes.
[[ "$TARGET" == tle-fuzz ]] && OPTS+=(-only_ascii=1)
if ((FORK > 0)); then
  OPTS+=(-fork="$FORK" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
say "fuzzing for $SECONDS_TO_RUN s; findings go to $BUILD_DIR/artifacts/"
status=0
"$FUZZ" "${OPTS[@]}" "$@" "$BUILD_DIR/corpus$SUFFIX" "${SEEDS[@]}" || status=$?
findings=$(find "$BUILD_DIR/artifacts" -type f | wc -l)
say "done (exit status $status); $findings file(s) in $BUILD_DIR/artifacts/"
exit "$status"
