#!/usr/bin/env bash
# libdevice's special and integer functions on the GPU: tests/lit/cpu/run_libdevice_special.tle's
# kernels (each stores 1 where a function is within its tolerance of a 30-digit reference, and a
# last flag that must be 0), run with tle-run --target gpu; the outputs must be those the lit test
# expects of the CPU target. Exit 77 (skipped) without a GPU.
# Usage: libdevice_gpu.sh TLE_RUN [SOURCE_DIR]
set -uo pipefail
TLE_RUN="$1"
SRC="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
FLAGS="[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]"
KERNELS="$SRC/tests/lit/cpu/run_libdevice_special.tle"
# shellcheck source=tle_run_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/tle_run_check.sh"
check f32 "out_ptr: fp32[20] = $FLAGS" -n f32_kernel -s "*fp32, *fp32" --arg x_ptr=zeros:f32:4 --arg out_ptr=zeros:f32:20 --print out_ptr
check f64 "out_ptr: fp64[20] = $FLAGS" -n f64_kernel -s "*fp64, *fp64" --arg x_ptr=zeros:f64:4 --arg out_ptr=zeros:f64:20 --print out_ptr
check int "out_ptr: i32[12] = [8, 32, 31, 32, 0, 4, 1, -2147483648, 1610612736, 64, 63, 0]" -n int_kernel \
    -s "*i32, *i32, *i64" --arg x_ptr=zeros:i32:4 --arg out_ptr=zeros:i32:12 --arg wide_ptr=zeros:i64:2 --print out_ptr
exit $status
