#!/usr/bin/env bash
# CI's sanitizer job: builds the compiler, runtime and their tests with ASan+UBSan (TLE_SANITIZE=ON); runs the unit, lit, errors and runtime suites
# and every 3rd kernel of the conformance suite; builds the libFuzzer fuzz targets' check (tests/fuzz/check_build.sh).
#
# Usage: scripts/test-sanitized.sh [extra ctest arguments]
# Environment: TLE_ASAN_BUILD_DIR (default: <repo>/build-asan), TLE_JOBS (default: all cores),
#              CUDAToolkit_ROOT (as scripts/setup.sh), TLE_CMAKE_ARGS (extra configure arguments).
# Expects the Debian packages of scripts/setup.sh (run that first, as scripts/test.sh does).
# GPU, install and determinism tests are not run here (runtime tests use the mock driver). Any sanitizer report aborts the process it
# occurs in, which fails that test (errors tests too: a sanitizer abort is not exit status 1).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TLE_ASAN_BUILD_DIR:-$ROOT/build-asan}"
JOBS="${TLE_JOBS:-$(nproc)}"

say() { printf 'test-sanitized: %s\n' "$*"; }
start=$SECONDS

# --- 1. Configure: -O1 -g with assertions on, so internal asserts fire too.
CMAKE_ARGS=(-S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g"
            -DCMAKE_C_FLAGS_DEBUG="-O1 -g" -DTLE_SANITIZE=ON -DTLE_BUILD_FUZZER=ON)
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  CMAKE_ARGS+=(-G Ninja)
fi
CUDA_ROOT="${CUDAToolkit_ROOT:-}"
if [[ -z "$CUDA_ROOT" && -d /usr/local/cuda ]]; then
  CUDA_ROOT=/usr/local/cuda
fi
if [[ -n "$CUDA_ROOT" ]]; then
  CMAKE_ARGS+=("-DCUDAToolkit_ROOT=$CUDA_ROOT")
fi
if [[ -n "${TLE_CMAKE_ARGS:-}" ]]; then
  read -r -a extra <<<"$TLE_CMAKE_ARGS"
  CMAKE_ARGS+=("${extra[@]}")
fi
say "configuring $BUILD_DIR"
cmake "${CMAKE_ARGS[@]}" >/dev/null

# --- 2. Build only what the unit, lit, errors and runtime suites run (tle-gpu-tests also compiles
# the examples with the sanitized tlec).
# Everything the runtime.* tests run: the mock drivers and the mock NCCL (tle-runtime-mock-tests depends on them), the
# stress test and the engine example (run against the mock driver).
TARGETS=(tlec tle-link tle-run tle-inspect tle-unit-tests tle-runtime-tests tle-runtime-mock-tests tle-mock-cuda tle-mock-nccl
         tle-gpu-tests tle-conformance tle-runtime-stress tle-engine tle-bench-launch tle-fuzz-runtime)
say "building ${TARGETS[*]} with $JOBS jobs"
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${TARGETS[@]}"
say "build took $((SECONDS - start)) s"

# --- 3. Run. abort_on_error turns every report into SIGABRT; exitcode covers reports that exit.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:exitcode=86:detect_leaks=1:check_initialization_order=1:strict_init_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-abort_on_error=1:halt_on_error=1:print_stacktrace=1:exitcode=86}"
# Known, reported leaks (each entry names its cause; remove it with the fix).
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$ROOT/tests/sanitizers/lsan.supp:print_suppressions=0}"
if [[ -z "${ASAN_SYMBOLIZER_PATH:-}" ]]; then
  for s in "$(llvm-config-19 --bindir 2>/dev/null)/llvm-symbolizer" "$(command -v llvm-symbolizer || true)"; do
    if [[ -x "$s" ]]; then export ASAN_SYMBOLIZER_PATH="$s"; break; fi
  done
fi

status=0
# --- 3a. The libFuzzer targets' build check (clang; tests/fuzz/check_build.sh), so that they
# cannot rot unnoticed: clang-14 and libFuzzer are Debian packages that setup.sh installs on
# request; without them the check says it was skipped.
"$ROOT/scripts/setup.sh" --fuzz-packages || say "could not install clang-14 and libclang-rt-14-dev; the fuzz build check will skip"
TLE_JOBS="$JOBS" "$ROOT/tests/fuzz/check_build.sh" || status=$?

run_start=$SECONDS
# Label unit: tests/unit (Catch2); label lit: the lit and errors suites; label conformance: the
# conformance suite, sampled (--sample 3 in sanitized builds, tests/conformance/CMakeLists.txt).
# Label difftest is not run here: each of its random kernels goes through LLVM's O2 and the JIT,
# minutes under ASan for the fixed range; tests/difftest/README.md says how it was checked.
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS" -L 'unit|lit|conformance' "$@" || status=$?
# libtle_rt against the missing and the mock driver (the benchmark program is not built here),
# and its fuzz target's corpus replayed.
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS" -R '^(runtime[.]|fuzz[.]replay[.]runtime$)' -E 'bench-softmax' "$@" || status=$?
say "tests took $((SECONDS - run_start)) s; total $((SECONDS - start)) s"
if ((status)); then
  say "FAILED (a sanitizer report aborts the process; see the stack above)"
fi
exit "$status"
