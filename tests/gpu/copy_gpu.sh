#!/usr/bin/env bash
# tle.gpu.copy on the GPU: tests/gpu/copy/copy_kernels.tle's kernels run with tle-run --target gpu:
# a synchronous TMA copy of each program's 64 x 64 and 64 x 128 block into a buffer (swizzled:
# one and two boxes; row-major), doubled there, stored back with a TMA store (2 programs); a
# swizzled 64 x 64 matrix read back transposed through local_ptr's indices; a ring of 2 or 3 slots filled by TMA copies ahead of their use,
# each completing on its slot's mbarrier (expect_bytes), over 4 tiles (each mbarrier completes
# more than one phase); a copy of a pointer tile into a buffer and back out reversed; a copy of
# the leading [3, 40] of a [4, 64] buffer in and out (the rest untouched). Inputs are
# ramps the checks predict (tests/gpu/write_npy.py). Exit 77 without a GPU.
# Usage: copy_gpu.sh TLE_RUN [SOURCE_DIR]
set -uo pipefail
TLE_RUN="$1"
SRC="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
KERNELS="$SRC/tests/gpu/copy/copy_kernels.tle"
# shellcheck source=tle_run_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/tle_run_check.sh"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 "$SRC/tests/gpu/write_npy.py" "$TMP" "x64:f2:128x64:i % 1000" "x64_2:f2:128x64:2 * (i % 1000)" \
  "x128:f2:128x128:i % 1000" "x128_2:f2:128x128:2 * (i % 1000)" "t:f2:64x64:i" "tt:f2:64x64:(i % 64) * 64 + i // 64" \
  "r:f2:256x64:i % 1000" "r1:f2:256x64:i % 1000 + 1" "v:f4:256:i" "vrev:f4:256:255 - i" \
  "p:f4:4x64:i" "py:f4:4x64:i if i // 64 < 3 and i % 64 < 40 else -1" "pz:f4:4x64:i if i // 64 < 3 and i % 64 < 40 else 0"
for bn in 64 128; do for mma in True False; do
  expect "tma_roundtrip BN=$bn MMA=$mma" -n tma_roundtrip -s "*fp16:16, *fp16:16, i32, i32:16, 64, $bn, $mma" --grid 2 \
    --arg x_ptr="$TMP/x$bn.npy" --arg y_ptr=zeros:f16:128x$bn --arg M=128 --arg N=$bn --expect y_ptr="$TMP/x${bn}_2.npy" --atol 0 --rtol 0
done; done
expect "swizzled_transpose" -n swizzled_transpose -s "*fp16:16, *fp16:16, 64" --arg x_ptr="$TMP/t.npy" \
  --arg y_ptr=zeros:f16:64x64 --expect y_ptr="$TMP/tt.npy" --atol 0 --rtol 0
for stages in 2 3; do
  expect "tma_ring stages=$stages" -n tma_ring -s "*fp16:16, *fp16:16, i32, i32:16, 64, 64, $stages" \
    --arg x_ptr="$TMP/r.npy" --arg y_ptr=zeros:f16:256x64 --arg M=256 --arg N=64 --expect y_ptr="$TMP/r1.npy" --atol 0 --rtol 0
done
expect "ptr_copy" -n ptr_copy -s "*fp32:16, *fp32:16, 256" --arg x_ptr="$TMP/v.npy" --arg y_ptr=zeros:f32:256 \
  --expect y_ptr="$TMP/vrev.npy" --atol 0 --rtol 0
expect "partial_copy" -n partial_copy -s "*fp32:16, *fp32:16, *fp32:16, 4, 64, 3, 40" --arg x_ptr="$TMP/p.npy" \
  --arg y_ptr=zeros:f32:4x64 --arg z_ptr=zeros:f32:4x64 --expect y_ptr="$TMP/py.npy" --expect z_ptr="$TMP/pz.npy" \
  --atol 0 --rtol 0
exit $status
