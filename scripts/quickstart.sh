#!/usr/bin/env bash
# Quick start: set up and build, compile examples/softmax.tle to a cubin with tlec, and run it on the GPU.
#
# Usage: scripts/quickstart.sh       (from any directory; see scripts/setup.sh for the environment)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TLE_BUILD_DIR:-$ROOT/build}"

say() { printf 'quickstart: %s\n' "$*"; }

"$ROOT/scripts/setup.sh"

TLEC="$BUILD_DIR/src/tlec"
GPU_TESTS="$BUILD_DIR/tests/gpu/tle-gpu-tests"
OUT_DIR="$BUILD_DIR/quickstart"
SIGNATURE="*fp32:16, *fp32:16, i32:16, i32:16, i32, i32, 1024"
mkdir -p "$OUT_DIR"

if [[ ! -x "$TLEC" ]]; then
  say "$TLEC was not built; see the build output above." >&2
  exit 1
fi

# A cubin needs ptxas from the CUDA toolkit; CMake records the one it found (or NOTFOUND).
PTXAS="$(sed -n 's/^TLE_PTXAS:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | head -n 1)"

# Target the local GPU's architecture when the driver can tell us (an sm_80 cubin does not run on sm_90).
# The GPU test program finds the module as <example>.<arch>.cubin.
ARCH=sm_90a
if command -v nvidia-smi >/dev/null 2>&1; then
  CC="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' ' || true)"
  case "$CC" in
    8.*) ARCH=sm_80 ;;
  esac
fi
ARCH_ARGS=(--arch "$ARCH")

if [[ -z "$PTXAS" || "$PTXAS" == *NOTFOUND || ! -x "$PTXAS" ]]; then
  say "compiling examples/softmax.tle to PTX"
  (cd "$ROOT" && "$TLEC" examples/softmax.tle -s "$SIGNATURE" -w 4 ${ARCH_ARGS[@]+"${ARCH_ARGS[@]}"} \
                 -o "$OUT_DIR/softmax.$ARCH.ptx")
  say "wrote $OUT_DIR/softmax.$ARCH.ptx"
  say "no CUDA toolkit (ptxas) was found, and a cubin needs the CUDA toolkit: install it (or set"
  say "CUDAToolkit_ROOT) and run this script again to build a cubin and run it. Stopping here."
  exit 0
fi

say "compiling examples/softmax.tle to a cubin"
(cd "$ROOT" && "$TLEC" examples/softmax.tle -s "$SIGNATURE" -w 4 ${ARCH_ARGS[@]+"${ARCH_ARGS[@]}"} \
               -o "$OUT_DIR/softmax.$ARCH.cubin")
say "wrote $OUT_DIR/softmax.$ARCH.cubin"

if [[ ! -x "$GPU_TESTS" ]]; then
  say "$GPU_TESTS was not built; cannot run the kernel." >&2
  exit 1
fi

say "running softmax on random input through libtle_rt"
status=0
"$GPU_TESTS" --only softmax --cubin-dir "$OUT_DIR" || status=$?
case "$status" in
  0)  say "softmax ran on the GPU and matched the reference." ;;
  77) say "no GPU or CUDA driver is present on this machine, so the kernel cannot run here."
      say "The cubin was built: $OUT_DIR/softmax.$ARCH.cubin" ;;
  *)  say "the GPU test failed (exit status $status)." >&2
      exit "$status" ;;
esac
