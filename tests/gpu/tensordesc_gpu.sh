#!/bin/bash
# Host tensor descriptors on the GPU: the seqkit corpus kernels that take tensordesc<...> parameters
# (TMA loads and stores through launch-time tensor maps) run with tle-run on the GPU and must match
# the CPU target's result. Usage: tests/gpu/tensordesc_gpu.sh TLE_RUN [OUT_DIR]; exit 1 on a mismatch.
set -u
R=$1
D=${2:-$(mktemp -d)}
F="${TLE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/corpus/seqkit/ops/descriptors.py"
status=0
check() { # kernel signature grid warps args...
  local k=$1 s=$2 g=$3 w=$4
  shift 4
  "$R" "$F" -n "$k" -s "$s" "$@" --grid "$g" -w "$w" --target cpu --save "c_desc_base=$D/$k.npy" -q || { echo "$k: cpu run failed"; status=1; return; }
  if "$R" "$F" -n "$k" -s "$s" "$@" --grid "$g" -w "$w" --target gpu --expect "c_desc_base=$D/$k.npy"; then
    echo "$k: gpu matches cpu"
  else
    echo "$k: gpu FAILED"; status=1
  fi
}
A=()
for d in a b c; do
  g=rand; [ $d = c ] && g=zeros
  A+=(--arg "${d}_desc_base=$g:bf16:128x256" --arg "${d}_desc_shape0=128" --arg "${d}_desc_shape1=256" --arg "${d}_desc_stride0=256")
done
check desc_add_kernel "tensordesc<bf16[64, 128]>, tensordesc<bf16[64, 128]>, tensordesc<bf16[64, 128]>" "2, 2" 4 "${A[@]}"
A=()
for d in a b c; do
  g=rand; [ $d = c ] && g=zeros
  A+=(--arg "${d}_desc_base=$g:fp16:256x256" --arg "${d}_desc_shape0=256" --arg "${d}_desc_shape1=256" --arg "${d}_desc_stride0=256")
done
check desc_matmul_kernel "tensordesc<fp16[128, 64]>, tensordesc<fp16[64, 128]>, tensordesc<fp16[128, 128]>, i32, 128, 128, 64" "2, 2" 8 "${A[@]}" --arg K=256
exit $status
