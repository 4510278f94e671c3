#!/usr/bin/env bash
# Quick start: set up and build only what it runs (tlec, tle-run and libtle_rt), compile
# examples/softmax.tle with tlec, and run it on random input through tle-run: on the GPU when one is
# usable, else on the CPU target; either way checked against a float64 softmax computed here.
#
# Usage: scripts/quickstart.sh       (from any directory; see scripts/setup.sh for the environment)
# scripts/test.sh builds the rest (tests, benchmarks, every example) and runs the test suite.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TLE_BUILD_DIR:-$ROOT/build}"

say() { printf 'quickstart: %s\n' "$*"; }

TLE_BUILD_TARGETS="${TLE_BUILD_TARGETS:-tlec tle-run}" "$ROOT/scripts/setup.sh"

TLEC="$BUILD_DIR/src/tlec"
RUN="$BUILD_DIR/src/tle-run"
OUT_DIR="$BUILD_DIR/quickstart"
SIGNATURE="*fp32:16, *fp32:16, i32:16, i32:16, i32, i32, 1024"
ROWS=128
COLS=1000
mkdir -p "$OUT_DIR"
for tool in "$TLEC" "$RUN"; do
  if [[ ! -x "$tool" ]]; then
    say "$tool was not built; see the build output above." >&2
    exit 1
  fi
done

# A cubin needs ptxas from the CUDA toolkit; CMake records the one it found (or NOTFOUND).
PTXAS="$(sed -n 's/^TLE_PTXAS:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | head -n 1)"
HAVE_PTXAS=1
if [[ -z "$PTXAS" || "$PTXAS" == *NOTFOUND || ! -x "$PTXAS" ]]; then
  HAVE_PTXAS=0
fi

# 1. tlec: the kernel to a module for sm_90a (a cubin, or PTX without the CUDA toolkit).
EXT=cubin
((HAVE_PTXAS)) || EXT=ptx
say "compiling examples/softmax.tle with tlec"
(cd "$ROOT" && "$TLEC" examples/softmax.tle -s "$SIGNATURE" -w 4 --arch sm_90a -o "$OUT_DIR/softmax.sm_90a.$EXT")
say "wrote $OUT_DIR/softmax.sm_90a.$EXT"
((HAVE_PTXAS)) || say "(PTX: a cubin needs ptxas from the CUDA toolkit, which is not installed; PTX is enough here)"

# 2. tle-run: the kernel on $ROWS rows of $COLS random values, one program per row.
run_softmax() { # TARGET
  (cd "$ROOT" && "$RUN" examples/softmax.tle -s "$SIGNATURE" --grid "$ROWS" --target "$1" \
      --arg output_ptr=zeros:f32:${ROWS}x1024 --arg input_ptr=rand:f32:${ROWS}x1024 \
      --arg input_row_stride=1024 --arg output_row_stride=1024 --arg n_rows=$ROWS --arg n_cols=$COLS \
      --save input_ptr="$OUT_DIR/softmax_in.npy" --save output_ptr="$OUT_DIR/softmax_out.npy")
}

TARGET=cpu
if ((HAVE_PTXAS)); then
  LOG="$OUT_DIR/gpu-run.log"
  if run_softmax gpu 2>"$LOG"; then
    TARGET=gpu
    cat "$LOG" >&2
  elif grep -q "needs a CUDA GPU" "$LOG"; then
    say "no CUDA GPU is usable on this machine, so the kernel runs on the CPU target instead"
    say "(tle-run --target cpu: the same kernel compiled for this CPU with LLVM's JIT)."
  else
    cat "$LOG" >&2
    say "the GPU run failed." >&2
    exit 1
  fi
else
  say "without the CUDA toolkit the kernel runs on the CPU target (tle-run --target cpu)."
fi
if [[ "$TARGET" == cpu ]]; then
  run_softmax cpu
fi

# 3. The check: every row against a softmax computed in Python's double precision.
python3 - "$OUT_DIR/softmax_in.npy" "$OUT_DIR/softmax_out.npy" "$ROWS" "$COLS" <<'PY'
import math, struct, sys
def load(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    body = data[10 + hlen:]
    return struct.unpack("<%df" % (len(body) // 4), body)
x, y = load(sys.argv[1]), load(sys.argv[2])
rows, cols = int(sys.argv[3]), int(sys.argv[4])
worst = 0.0
for r in range(rows):
    row = x[r * 1024:r * 1024 + cols]
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = sum(e)
    worst = max(worst, max(abs(y[r * 1024 + c] - e[c] / s) for c in range(cols)))
print("quickstart: max abs error against a float64 softmax: %.3g" % worst)
sys.exit(0 if worst < 1e-6 else 1)
PY
say "softmax ran on the $TARGET and matched the reference."
say "next: scripts/test.sh builds everything else and runs the tests; README.md shows how to use the tools."
