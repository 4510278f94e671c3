#!/usr/bin/env bash
# Runs the engine example on the GPU with the default shapes and writes its output to a file.
#
# Usage: examples/engine/run_gpu.sh BUILD_DIR OUT_FILE [tle-engine options...]
# Needs BUILD_DIR/runtime/libtle_rt.so*, BUILD_DIR/examples/engine/tle-engine and the kernels in
# BUILD_DIR/examples/engine/kernels/ (*.sm_90a.cubin), from a build with the compiler and the CUDA
# toolkit. Extra options go to tle-engine (e.g. --reps 200, --check-rows 0, --head-dim 128
# --hidden 2048). OUT_FILE gets the command, the date, the GPU and everything tle-engine prints;
# the exit status is tle-engine's (77: no GPU was found).
set -uo pipefail
if (($# < 2)); then
  echo "usage: $0 BUILD_DIR OUT_FILE [tle-engine options...]" >&2
  exit 2
fi
BUILD="$1"
OUT="$2"
shift 2
ENGINE="$BUILD/examples/engine/tle-engine"
KERNELS="$BUILD/examples/engine/kernels"
if [[ ! -x "$ENGINE" ]]; then
  echo "$0: $ENGINE not found; build the target tle-engine first" >&2
  exit 2
fi
if ! ls "$KERNELS"/*.sm_90a.cubin >/dev/null 2>&1; then
  echo "$0: no $KERNELS/*.sm_90a.cubin; build with the CUDA toolkit (target tle_engine_kernels)" >&2
  exit 2
fi
mkdir -p "$(dirname "$OUT")"
{
  echo "# $ENGINE --require-gpu --kernel-dir $KERNELS $*"
  echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "# $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -1)"
  fi
} >"$OUT"
"$ENGINE" --require-gpu --kernel-dir "$KERNELS" "$@" 2>&1 | tee -a "$OUT"
rc=${PIPESTATUS[0]}
echo "# exit status $rc" >>"$OUT"
exit "$rc"
