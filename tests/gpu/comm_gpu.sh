#!/usr/bin/env bash
# The kernels across GPUs (examples/all_gather.tle, all_gather_gemm.tle, gemm_reduce_scatter.tle)
# on the GPUs at hand: each example compiled with WORLD = W, then tle-comm-gpu-tests runs them,
# --loopback with W ranks on one GPU (W = 2 and 4) and --nccl with one rank per GPU of a
# libtle_rt Communicator (W = the GPUs there are). Exit 77 (skipped) without a GPU.
# Usage: comm_gpu.sh TLEC TLE_COMM_GPU_TESTS [SOURCE_DIR]
set -uo pipefail
TLEC="$1"
TESTS="$2"
SRC="${3:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
compile() { # WORLD
  for ex in all_gather all_gather_gemm gemm_reduce_scatter; do
    line=$(grep -m1 '^# Compile: tlec ' "$SRC/examples/$ex.tle") || return 1
    sig=$(sed -E 's/.* -s "([^"]+)".*/\1/' <<<"$line")
    warps=$(sed -E 's/.* -w ([0-9]+).*/\1/' <<<"$line")
    # The signature's first constexpr is WORLD (8 in the example's line).
    sig=$(sed -E "s/, 8, /, $1, /" <<<"$sig")
    "$TLEC" "$SRC/examples/$ex.tle" -s "$sig" -w "$warps" --arch sm_90a -o "$TMP/$ex.w$1.cubin" || return 1
  done
}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU') || gpus=0
if [ "$gpus" -lt 1 ]; then
  echo "SKIPPED: no GPU"
  exit 77
fi
status=0
for w in 2 4; do
  compile "$w" || exit 1
  "$TESTS" --cubin-dir "$TMP" --world "$w" --loopback || status=1
done
compile "$gpus" || exit 1
"$TESTS" --cubin-dir "$TMP" --world "$gpus" --nccl || status=1
exit $status
