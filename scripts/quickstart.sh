#!/usr/bin/env bash
# Quick start: set up and build, compile examples/softmax.tle to a cubin with tlec, and run it on the
# GPU; without a GPU (or without the CUDA toolkit), run the same kernel on the CPU target instead.
#
# Usage: scripts/quickstart.sh       (from any directory; see scripts/setup.sh for the environment)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TLE_BUILD_DIR:-$ROOT/build}"

say() { printf 'quickstart: %s\n' "$*"; }

# Runs examples/softmax.tle on the CPU target with tle-run (128 rows of 1000 random values) and
# checks every row against a softmax computed here in Python's double precision.
run_on_cpu() {
  local run="$BUILD_DIR/src/tle-run"
  if [[ ! -x "$run" ]]; then
    say "$run was not built; cannot run the kernel on the CPU." >&2
    return 1
  fi
  say "running softmax on the CPU target (tle-run --target cpu), 128 rows of 1000 random values"
  (cd "$ROOT" && "$run" examples/softmax.tle -s "$SIGNATURE" --grid 128 --target cpu \
      --arg output_ptr=zeros:f32:128x1024 --arg input_ptr=rand:f32:128x1024 \
      --arg input_row_stride=1024 --arg output_row_stride=1024 --arg n_rows=128 --arg n_cols=1000 \
      --save input_ptr="$OUT_DIR/softmax_in.npy" --save output_ptr="$OUT_DIR/softmax_out.npy")
  python3 - "$OUT_DIR/softmax_in.npy" "$OUT_DIR/softmax_out.npy" <<'PY'
import math, struct, sys
def load(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    body = data[10 + hlen:]
    return struct.unpack("<%df" % (len(body) // 4), body)
x, y = load(sys.argv[1]), load(sys.argv[2])
worst = 0.0
for r in range(128):
    row = x[r * 1024:r * 1024 + 1000]
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = sum(e)
    worst = max(worst, max(abs(y[r * 1024 + c] - e[c] / s) for c in range(1000)))
print("quickstart: max abs error against a float64 softmax: %.3g" % worst)
sys.exit(0 if worst < 1e-6 else 1)
PY
  say "softmax ran on the CPU target and matched the reference."
}

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
  say "CUDAToolkit_ROOT) and run this script again to build a cubin and run it on a GPU."
  run_on_cpu
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
  77) say "no GPU or CUDA driver is present on this machine, so the cubin cannot run here."
      say "The cubin was built: $OUT_DIR/softmax.$ARCH.cubin"
      run_on_cpu ;;
  *)  say "the GPU test failed (exit status $status)." >&2
      exit "$status" ;;
esac
