#!/usr/bin/env bash
# tle.gpu.copy on the GPU: tests/gpu/copy/copy_kernels.tle's kernels run with tle-run --target gpu:
# a synchronous TMA copy of each program's 64 x 64 block into a buffer, doubled there, stored back
# with a TMA store (2 programs); a ring of 2 or 3 slots filled by TMA copies ahead of their use,
# each completing on its slot's mbarrier (expect_bytes), over 4 tiles (each mbarrier completes
# more than one phase); a copy of a pointer tile into a buffer and back out reversed. Inputs are
# ramps the checks predict. Exit 77 without a GPU.
# Usage: copy_gpu.sh TLE_RUN [SOURCE_DIR]
set -uo pipefail
TLE_RUN="$1"
SRC="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
KERNELS="$SRC/tests/gpu/copy/copy_kernels.tle"
# shellcheck source=tle_run_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/tle_run_check.sh"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 - "$TMP" <<'PY'
# Ramps written as .npy files without numpy (the format: magic, a header dict, raw little-endian data).
import struct, sys
d = sys.argv[1]
def save(name, fmt, descr, shape, values):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(tuple(shape)))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(f"{d}/{name}.npy", "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
x = [float(i % 1000) for i in range(128 * 64)]  # exact in fp16, doubled too
save("x", "e", "<f2", (128, 64), x)
save("x2", "e", "<f2", (128, 64), [2 * v for v in x])
r = [float(i % 1000) for i in range(256 * 64)]
save("r", "e", "<f2", (256, 64), r)
save("r1", "e", "<f2", (256, 64), [v + 1 for v in r])
v = [float(i) for i in range(256)]
save("v", "f", "<f4", (256,), v)
save("vrev", "f", "<f4", (256,), v[::-1])
PY
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
expect "tma_roundtrip" -n tma_roundtrip -s "*fp16:16, *fp16:16, i32, i32:16, 64, 64" --grid 2 \
  --arg x_ptr="$TMP/x.npy" --arg y_ptr=zeros:f16:128x64 --arg M=128 --arg N=64 --expect y_ptr="$TMP/x2.npy" --atol 0 --rtol 0
for stages in 2 3; do
  expect "tma_ring stages=$stages" -n tma_ring -s "*fp16:16, *fp16:16, i32, i32:16, 64, 64, $stages" \
    --arg x_ptr="$TMP/r.npy" --arg y_ptr=zeros:f16:256x64 --arg M=256 --arg N=64 --expect y_ptr="$TMP/r1.npy" --atol 0 --rtol 0
done
expect "ptr_copy" -n ptr_copy -s "*fp32:16, *fp32:16, 256" --arg x_ptr="$TMP/v.npy" --arg y_ptr=zeros:f32:256 \
  --expect y_ptr="$TMP/vrev.npy" --atol 0 --rtol 0
exit $status
