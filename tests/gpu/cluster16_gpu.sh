#!/usr/bin/env bash
# Clusters of 16 CTAs (the non-portable size H100 and H200 run) on the GPU: tests/lit/ptx/cluster16.tle's
# ring16 over 4 clusters; each CTA stores its rank into the next CTA's table through tle.remote and
# reads what its predecessor gave it after the cluster barrier, so out[pid] = (pid % 16 + 15) % 16.
# libtle_rt must opt the kernel into the size for the launch to run. Exit 77 (skipped) without a GPU.
# Usage: cluster16_gpu.sh TLE_RUN [SOURCE_DIR]
set -euo pipefail
TLE_RUN="$1"
SRC="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 - "$WORK/expected.npy" <<'PY'
import struct, sys
n = 64
vals = [(p % 16 + 15) % 16 for p in range(n)]
header = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d,), }" % n
header += " " * (63 - len(header) % 64) + "\n"  # 10-byte preamble + header: a multiple of 64
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<%di" % n, *vals))
PY
set +e
"$TLE_RUN" "$SRC/tests/lit/ptx/cluster16.tle" -n ring16 -s "*i32:16" --target gpu --grid 64 -q \
    --arg out_ptr=zeros:i32:64 --expect "out_ptr=$WORK/expected.npy" > "$WORK/out.txt" 2>&1
rc=$?
set -e
cat "$WORK/out.txt"
if [ $rc -ne 0 ] && grep -qi "none is usable here\|CUDA_ERROR_NO_DEVICE\|needs a CUDA GPU" "$WORK/out.txt"; then
  echo "SKIPPED: no GPU"; exit 77
fi
[ $rc -eq 0 ] && echo "PASS  cluster16 ring16 (4 clusters of 16 CTAs)" || echo "FAIL  cluster16"
exit $rc
