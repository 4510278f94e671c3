#!/usr/bin/env bash
# The wrong mbarrier protocols of tests/errors/barrier_protocol.tle, which tlec rejects at compile
# time, built with --debug instead (the check's finding becomes a warning) and run on the GPU: each
# wait that can never return gives up after its bound and traps, printing the .tle line it waited
# at, where without --debug the kernel would hang. The accepted ring (ring_ok) runs to its end.
# The same for tests/errors/barrier_protocol_cluster.tle's ring over a cluster of two CTAs (TMA
# multicast, remote releases): released to both CTAs, each CTA sums the 4 tiles of ones it was
# sent (4 everywhere); released to its own CTA only, --debug traps at the second round's wait.
# Exit 77 without a GPU.
# Usage: protocol_gpu.sh TLE_RUN [SOURCE_DIR]
set -uo pipefail
TLE_RUN="$1"
SRC="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
KERNELS="$SRC/tests/errors/barrier_protocol.tle"
# shellcheck source=tle_run_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/tle_run_check.sh"
for spec in "missing_arrive 2" "wrong_count 2" "wrong_phase 3" "wait_cycle 2" "pipe_underfed 3" "ring_never_released 4"; do
  set -- $spec
  out="$("$TLE_RUN" "$KERNELS" -q --target gpu --debug -n "$1" -s "*i32:16, $2" --arg y_ptr=zeros:i32:8 2>&1)"
  rc=$?
  if [ $rc -ne 0 ] && grep -qi "none is usable here\|CUDA_ERROR_NO_DEVICE\|needs a CUDA GPU" <<<"$out"; then
    echo "SKIPPED: no GPU"; exit 77
  fi
  if [ $rc -ne 0 ] && grep -q "barrier_protocol.tle:[0-9]*: mbarrier wait timed out after 4 s" <<<"$out"; then
    echo "PASS  $1 --debug: traps at $(grep -o 'barrier_protocol.tle:[0-9]*' <<<"$out" | sort -u | tr '\n' ' ')"
  else
    echo "FAIL  $1 --debug (exit $rc):"; echo "$out"; status=1
  fi
done
check "ring_ok" "y_ptr: i32[8] = [0, 1, 2, 3, 0, 0, 0, 0]" -n ring_ok -s "*i32:16, 4" --arg y_ptr=zeros:i32:8 --print y_ptr
KERNELS="$SRC/tests/errors/barrier_protocol_cluster.tle"
FOUR="$(mktemp -d)/four.npy"
python3 -c "import numpy, sys; numpy.save(sys.argv[1], numpy.full((64, 64), 4, numpy.float32))" "$FOUR"
ring=(-n ring --grid 2 --arg x_ptr=ones:fp16:256x64 --arg y_ptr=zeros:fp32:64x64 --arg M=256 --arg N=64)
expect "cluster ring (multicast, remote releases)" "${ring[@]}" -s "*fp16:16, *fp32:16, i32, i32:16, 4, 0" \
  --expect "y_ptr=$FOUR"
out="$("$TLE_RUN" "$KERNELS" -q --target gpu --debug "${ring[@]}" -s "*fp16:16, *fp32:16, i32, i32:16, 4, 1" 2>&1)"
if [ $? -ne 0 ] && grep -q "barrier_protocol_cluster.tle:[0-9]*: mbarrier wait timed out after 4 s" <<<"$out"; then
  echo "PASS  cluster ring released locally --debug: traps at $(grep -o 'barrier_protocol_cluster.tle:[0-9]*' <<<"$out" | sort -u | tr '\n' ' ')"
else
  echo "FAIL  cluster ring released locally --debug:"; echo "$out"; status=1
fi
exit $status
