#!/usr/bin/env bash
# tle.distributed_barrier over sub-meshes on the GPU: tests/gpu/ops/tle_submesh_barrier.tle's
# row_exchange on two clusters of 2 x 2 CTAs, 64 iterations; out[pid] must be the sum of its row
# partner's values, sum over i < 64 of (i * 100 + (pid % 4) ^ 1). Exit 77 (skipped) without a GPU.
# Usage: submesh_barrier_gpu.sh TLE_RUN [SOURCE_DIR]
set -euo pipefail
TLE_RUN="$1"
SRC="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 - "$WORK/expected.npy" <<'PY'
import struct, sys
n, iters = 8, 64
vals = [sum(i * 100 + ((p % 4) ^ 1) for i in range(iters)) for p in range(n)]
header = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d,), }" % n
header += " " * (63 - len(header) % 64) + "\n"  # 10-byte preamble + header: a multiple of 64
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<%di" % n, *vals))
PY
set +e
"$TLE_RUN" "$SRC/tests/gpu/ops/tle_submesh_barrier.tle" -n row_exchange -s "*i32, i32" --target gpu --grid 8 -q \
    --arg out_ptr=zeros:i32:8 --arg n_iters=64 --expect "out_ptr=$WORK/expected.npy" > "$WORK/out.txt" 2>&1
rc=$?
set -e
cat "$WORK/out.txt"
if [ $rc -ne 0 ] && grep -qi "none is usable here\|CUDA_ERROR_NO_DEVICE" "$WORK/out.txt"; then
  echo "SKIPPED: no GPU"; exit 77
fi
[ $rc -eq 0 ] && echo "PASS  submesh_barrier row_exchange (2 clusters of 2 x 2, 64 iterations)" || echo "FAIL  submesh_barrier"
exit $rc
