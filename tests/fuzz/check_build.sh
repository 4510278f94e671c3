#!/usr/bin/env bash
# CI's build check of the libFuzzer targets: builds tle-fuzz-runtime with clang (libFuzzer, ASan+UBSan) and runs it on its corpus; skips without clang.
#
# Usage: tests/fuzz/check_build.sh
# Environment: TLE_FUZZ_CHECK_DIR (default: <repo>/build-fuzz-check), TLE_JOBS (default: all cores).
#
# The runtime target needs only libtle_rt and the mock driver, so its clang build takes a minute.
# The compiler's targets (tle-fuzz, tle-fuzz-gen) would need the whole compiler built a second
# time with clang; instead the ctest build.clang-syntax compiles their sources (and every source
# of the compiler, the runtime and the mock driver) with clang, libFuzzer's code paths included,
# and the ctests fuzz.replay.* run them, built by the test suite's compiler, on their corpora.
# Exit status 0 when the target builds and every committed input runs, or when clang++ or
# libFuzzer is not installed (said in one line; scripts/setup.sh --fuzz-packages installs them).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_DIR="${TLE_FUZZ_CHECK_DIR:-$ROOT/build-fuzz-check}"
JOBS="${TLE_JOBS:-$(nproc)}"
say() { printf 'fuzz-check: %s\n' "$*"; }

CXX=""
for c in clang++-14 clang++; do
  if command -v "$c" >/dev/null 2>&1; then CXX="$c"; break; fi
done
if [[ -z "$CXX" ]]; then
  say "SKIPPED: clang++ is not installed, so the libFuzzer targets were not built (scripts/setup.sh --fuzz-packages installs clang-14 and libclang-rt-14-dev)"
  exit 0
fi
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }\n' >"$probe/p.cpp"
if ! "$CXX" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" >/dev/null 2>&1; then
  say "SKIPPED: $CXX cannot link -fsanitize=fuzzer,address,undefined (libFuzzer's runtime is missing: scripts/setup.sh --fuzz-packages installs libclang-rt-14-dev)"
  exit 0
fi
CC="${CXX/clang++/clang}"

CMAKE_ARGS=(-S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DCMAKE_C_FLAGS_DEBUG="-O1 -g"
            -DTLE_SANITIZE=ON -DTLE_BUILD_FUZZER=ON -DTLE_BUILD_TESTS=OFF -DTLE_BUILD_COMPILER=OFF)
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  CMAKE_ARGS+=(-G Ninja "-DCMAKE_C_COMPILER=$CC" "-DCMAKE_CXX_COMPILER=$CXX")
fi
start=$SECONDS
say "building tle-fuzz-runtime with $CXX (libFuzzer, ASan+UBSan) in $BUILD_DIR"
cmake "${CMAKE_ARGS[@]}" >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS" --target tle-fuzz-runtime >/dev/null
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$ROOT/tests/sanitizers/lsan.supp:print_suppressions=0}"
# Files given by name run once each (libFuzzer's replay mode); any finding exits non-zero.
inputs=("$ROOT"/tests/fuzz/corpus-runtime/* "$ROOT"/tests/fuzz/regressions-runtime/*)
"$BUILD_DIR/tests/fuzz/tle-fuzz-runtime" "${inputs[@]}" >"$BUILD_DIR/replay.log" 2>&1 || {
  tail -n 40 "$BUILD_DIR/replay.log"
  say "FAILED: tle-fuzz-runtime on tests/fuzz/corpus-runtime and regressions-runtime (log: $BUILD_DIR/replay.log)"
  exit 1
}
say "tle-fuzz-runtime built and ran ${#inputs[@]} inputs in $((SECONDS - start)) s"
