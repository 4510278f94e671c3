#!/usr/bin/env bash
# examples/tune/add_rmsnorm.tle against its reference kernel on tle-run's CPU target: 3 rows (so
# that ROWS=2 and ROWS=4 mask rows past M), every config shape of its @triton.autotune list.
# Usage: tests/tune/example_on_cpu.sh TLE_RUN   (from the repository root)
set -euo pipefail
run=${1:?usage: example_on_cpu.sh TLE_RUN}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sig="*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp16:16, i32, fp32"
args=(--arg x_ptr=rand:f16:3x4096 --arg res_ptr=rand:f16:3x4096 --arg w_ptr=rand:f16:4096
      --arg y_ptr=zeros:f16:3x4096 --arg h_ptr=zeros:f16:3x4096 --arg M=3 --arg eps=1e-6)
"$run" examples/tune/add_rmsnorm_ref.tle -n add_rmsnorm_ref -s "$sig" -D N=4096 --grid M "${args[@]}" \
  --save y_ptr="$dir/y.npy" --save h_ptr="$dir/h.npy" -q
for cfg in "1 1" "1 4" "1 16" "2 4" "2 8" "4 4" "4 8"; do
  set -- $cfg
  "$run" examples/tune/add_rmsnorm.tle -n add_rmsnorm_kernel -s "$sig" -D N=4096 -D ROWS="$1" -w "$2" \
    --grid "cdiv(M, ROWS)" "${args[@]}" --expect y_ptr="$dir/y.npy" --expect h_ptr="$dir/h.npy" \
    --rtol 1e-2 --atol 1e-2 -q
  echo "ROWS=$1 w$2: matches the reference"
done
