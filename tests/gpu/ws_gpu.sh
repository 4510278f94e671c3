#!/usr/bin/env bash
# tle.gpu.warp_specialize on the GPU: tests/gpu/ws/ws_kernels.tle's kernels run with tle-run
# --target gpu: a TMA producer partition and a consumer worker of 4 warps over a ring of 2 and 3
# slots and 4 tiles (each slot's mbarriers complete more than one phase), its output checked
# against the input plus one; a tle.pipe from a scalar worker of 1 and 4 warps to the default
# partition over 2 and 3 stages and 5 iterations. Exit 77 without a GPU.
# Usage: ws_gpu.sh TLE_RUN [SOURCE_DIR]
set -uo pipefail
TLE_RUN="$1"
SRC="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
KERNELS="$SRC/tests/gpu/ws/ws_kernels.tle"
# shellcheck source=tle_run_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/tle_run_check.sh"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 "$SRC/tests/gpu/write_npy.py" "$TMP" "x:f2:256x64:i % 1000" "x1:f2:256x64:i % 1000 + 1" \
  "p:i4:5x128:7 * (i // 128) + i % 128"
expect() { # NAME ARGS...: the run must pass its --expect checks
  local name="$1"; shift
  local out
  out="$("$TLE_RUN" "$KERNELS" -q --target gpu "$@" 2>&1)"
  local rc=$?
  if [ $rc -ne 0 ] && grep -qi "none is usable here\|CUDA_ERROR_NO_DEVICE\|needs a CUDA GPU" <<<"$out"; then
    echo "SKIPPED: no GPU"; exit 77
  fi
  if [ $rc -eq 0 ]; then echo "PASS  $name"; else echo "FAIL  $name:"; echo "$out"; status=1; fi
}
for stages in 2 3; do
  expect "ws_tma stages=$stages" -n ws_tma -s "*fp16:16, *fp16:16, i32, i32:16, 64, 64, $stages" -w 4 \
    --arg x_ptr="$TMP/x.npy" --arg y_ptr=zeros:f16:256x64 --arg M=256 --arg N=64 --expect y_ptr="$TMP/x1.npy" --atol 0 --rtol 0
  for ww in 1 4; do
    expect "ws_pipe stages=$stages worker_warps=$ww" -n ws_pipe -s "*i32:16, i32, 128, $stages, $ww" -w 4 \
      --arg y_ptr=zeros:i32:5x128 --arg n=5 --expect y_ptr="$TMP/p.npy"
  done
done
exit $status
