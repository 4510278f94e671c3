#!/usr/bin/env bash
# tle.pipe on the GPU: tests/gpu/pipe/pipe_kernels.tle's kernels run with tle-run --target gpu
# (a copy through a pipe of 2 and 3 stages over 5 iterations, so that each stage's mbarriers
# complete several phases; a pipe closed after 3 iterations, its reader seeing is_closed at the
# 4th). The outputs are compared with the values the kernels must write. Exit 77 without a GPU.
# Usage: pipe_gpu.sh TLE_RUN [SOURCE_DIR]
set -uo pipefail
TLE_RUN="$1"
SRC="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
KERNELS="$SRC/tests/gpu/pipe/pipe_kernels.tle"
# shellcheck source=tle_run_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/tle_run_check.sh"
for stages in 2 3; do
  for warps in 1 4; do
    check "pipe_copy stages=$stages warps=$warps" "y_ptr: fp32[160] = [$(seq_list 0 2 160)]" -n pipe_copy \
      -s "*fp32:16, i32, 32, $stages" -w $warps --arg y_ptr=zeros:f32:160 --arg n_blocks=5 --print y_ptr
  done
done
check "pipe_close data" "y_ptr: i32[96] = [$(seq_list 1 1 96)]" -n pipe_close -s "*i32:16, *i32:16, i32, 32" \
  --arg y_ptr=zeros:i32:96 --arg flag_ptr=full:-1:i32:1 --arg n_blocks=3 --print y_ptr
check "pipe_close flag" "flag_ptr: i32[1] = [3]" -n pipe_close -s "*i32:16, *i32:16, i32, 32" \
  --arg y_ptr=zeros:i32:96 --arg flag_ptr=full:-1:i32:1 --arg n_blocks=3 --print flag_ptr
exit $status
