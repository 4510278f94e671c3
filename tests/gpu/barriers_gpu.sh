#!/usr/bin/env bash
# TLE-Struct's explicit barriers on the GPU: tests/gpu/barriers/barrier_kernels.tle's kernels run
# with tle-run --target gpu: a ring of 2 and 3 slots handed through "full" and "empty" mbarriers
# over 5 iterations (each mbarrier completes several phases; "empty" starts READY and counts two
# arrivals), and a named barrier between a store and loads of other threads' elements. The
# outputs are compared with the values the kernels must write. A wait that nothing completes,
# built with --debug, must trap with its line (after 4 s). Exit 77 without a GPU.
# Usage: barriers_gpu.sh TLE_RUN [SOURCE_DIR]
set -uo pipefail
TLE_RUN="$1"
SRC="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
KERNELS="$SRC/tests/gpu/barriers/barrier_kernels.tle"
# shellcheck source=tle_run_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/tle_run_check.sh"
for stages in 2 3; do
  for warps in 1 4; do
    check "mbarrier_ring stages=$stages warps=$warps" "y_ptr: fp32[160] = [$(seq_list 0 2 160)]" -n mbarrier_ring \
      -s "*fp32:16, i32, 32, $stages" -w $warps --arg y_ptr=zeros:f32:160 --arg n=5 --print y_ptr
  done
done
for warps in 1 4; do
  block=$((32 * warps))
  check "named_barrier warps=$warps" "y_ptr: i32[$block] = [$(seq_list $((3 * (block - 1))) -3 $block)]" \
    -n named_barrier -s "*i32:16, $block" -w $warps --arg y_ptr=zeros:i32:$block --print y_ptr
done
# --debug: a wait no arrival completes traps after its bound, saying where it waited.
out="$("$TLE_RUN" "$KERNELS" -q --target gpu --debug -n never_arrives -s "*i32:16" --arg y_ptr=zeros:i32:1 2>&1)"
rc=$?
if [ $rc -ne 0 ] && grep -q "barrier_kernels.tle:[0-9]*: mbarrier wait timed out after 4 s" <<<"$out"; then
  echo "PASS  never_arrives --debug: traps"
else
  echo "FAIL  never_arrives --debug (exit $rc):"; echo "$out"; status=1
fi
exit $status
