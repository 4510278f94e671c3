#!/usr/bin/env bash
# tests/gpu/while/while_fills.tle (cp.async fills counted through a while loop) on the GPU, at 1
# and 3 programs, against the CPU target's output (tle-run --expect). Exit 77 without a GPU.
# Usage: while_fills_gpu.sh TLE_RUN [SOURCE_DIR]
set -uo pipefail
R="$1"
SRC="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
K="$SRC/tests/gpu/while/while_fills.tle"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
S="*fp16:16, *fp16:16, *fp32:16, i32, i32, i32:16, i32, 64, 64, 32"
A=(--arg a_ptr=rand:fp16:256x96 --arg b_ptr=rand:fp16:96x64 --arg c_ptr=zeros:fp32:256x64 --arg M=256 --arg N=64
   --arg K=96 --arg tiles=4)
"$R" "$K" -s "$S" "${A[@]}" --target cpu --save c_ptr="$W/cpu.npy" -q || exit 1
status=0
for g in 1 3; do
  out="$("$R" "$K" -s "$S" "${A[@]}" --grid $g --target gpu --expect c_ptr="$W/cpu.npy" --rtol 1e-3 --atol 1e-3 -q 2>&1)"
  rc=$?
  if [ $rc -ne 0 ] && grep -qi "none is usable here\|CUDA_ERROR_NO_DEVICE\|needs a CUDA GPU" <<<"$out"; then
    echo "SKIPPED: no GPU"; exit 77
  fi
  if [ $rc -eq 0 ]; then echo "PASS while_fills grid=$g"; else echo "FAIL while_fills grid=$g"; echo "$out"; status=1; fi
done
exit $status
