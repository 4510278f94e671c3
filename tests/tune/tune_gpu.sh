#!/usr/bin/env bash
# tle-bench --tune of a user kernel on the GPU: tunes examples/tune/add_rmsnorm.json (every config
# checked against its reference kernel, then timed), writes the dispatch table and tle-link's
# dispatcher, and runs dispatchers against a host reference. Exit status 77 without a GPU.
#
# Usage: tests/tune/tune_gpu.sh BUILD_DIR OUT_DIR [CXX]   (from the repository root)
#   OUT_DIR/tune.json, tune.md: the run's results; OUT_DIR/dispatch/: the table, its modules and
#   add_rmsnorm_kernel_tuned.h/.cpp. With CXX (a C++17 compiler), the new dispatcher is compiled
#   with tests/tune/dispatch_run.cpp and run too; without, only the one built from the committed
#   results (build/bench/tle-tune-dispatch-run) runs on the GPU.
set -uo pipefail
build=${1:?usage: tune_gpu.sh BUILD_DIR OUT_DIR [CXX]}
out=${2:?usage: tune_gpu.sh BUILD_DIR OUT_DIR [CXX]}
cxx=${3:-}
mkdir -p "$out"

rc=0
"$build/bench/tle-bench" --tune examples/tune/add_rmsnorm.json --no-cache --dispatch "$out/dispatch" \
  --json "$out/tune.json" --md "$out/tune.md" --tlec "$build/src/tlec" --tle-link "$build/src/tle-link" || rc=$?
if [ "$rc" -eq 77 ]; then
  exit 77
fi
if [ "$rc" -ne 0 ]; then
  echo "tune_gpu: tle-bench --tune failed (status $rc)"
  exit 1
fi
status=0
echo "== the dispatcher of the committed results (tle-tune-dispatch-run --gpu)"
"$build/bench/tle-tune-dispatch-run" --gpu || status=1
if [ -n "$cxx" ] && command -v "$cxx" >/dev/null 2>&1; then
  echo "== the dispatcher of this run ($out/dispatch/add_rmsnorm_kernel_tuned.cpp), compiled by $cxx"
  if "$cxx" -std=c++17 -O1 -pthread -Iinclude -Ibench -I"$out/dispatch" tests/tune/dispatch_run.cpp \
      "$out/dispatch/add_rmsnorm_kernel_tuned.cpp" "$build/bench/libtle_bench_harness.a" \
      -L"$build/runtime" -ltle_rt -Wl,-rpath,"$(cd "$build/runtime" && pwd)" -o "$out/dispatch_run"; then
    "$out/dispatch_run" || status=1
    "$out/dispatch_run" --gpu || status=1
  else
    echo "tune_gpu: the new dispatcher did not compile"
    status=1
  fi
else
  echo "== no C++ compiler: the dispatcher of this run is written, not compiled"
fi
[ "$status" -eq 0 ] && echo "tune_gpu: tuned, dispatched and checked" || echo "tune_gpu: FAILED"
exit "$status"
