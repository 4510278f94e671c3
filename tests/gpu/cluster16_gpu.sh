#!/usr/bin/env bash
# Clusters of 16 CTAs (the non-portable size H100 and H200 run) on the GPU: tests/lit/ptx/cluster16.tle's
# ring16 over 4 clusters; each CTA stores its rank into the next CTA's table through tle.remote and
# reads what its predecessor gave it after the cluster barrier, so out[pid] = (pid % 16 + 15) % 16.
# libtle_rt must opt the kernel into the size for the launch to run. Exit 77 (skipped) without a GPU.
# Usage: cluster16_gpu.sh TLE_RUN [SOURCE_DIR]
set -uo pipefail
TLE_RUN="$1"
SRC="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
KERNELS="$SRC/tests/lit/ptx/cluster16.tle"
# shellcheck source=tle_run_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/tle_run_check.sh"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 "$SRC/tests/gpu/write_npy.py" "$TMP" "ring:i4:64:(i % 16 + 15) % 16"
expect "cluster16 ring16 (4 clusters of 16 CTAs)" -n ring16 -s "*i32:16" --grid 64 \
  --arg out_ptr=zeros:i32:64 --expect "out_ptr=$TMP/ring.npy"
exit $status
