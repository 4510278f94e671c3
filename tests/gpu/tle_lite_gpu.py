#!/usr/bin/env python3
"""TLE-Lite on the GPU against the CPU target: the kernels of tests/lit/run/tle_extract_insert.tle,
tests/gpu/ops/tle_lite.tle and tests/gpu/ops/tle_load_async.tle run with tle-run on the CPU to
write references, then with --target gpu and --expect (exact for integers, torch.testing's fp32
tolerances). Prints one PASS/FAIL line per kernel; exit 77 (skipped) when tle-run finds no usable
GPU, 1 on a failure.

Usage: tle_lite_gpu.py TLE_RUN SOURCE_DIR WORK_DIR
"""
import os
import subprocess
import sys

# (name, source relative to the repository, kernel, signature, warps, --arg specs of the inputs,
#  outputs as (argument, generator spec)[, extra tle-run arguments[, the GPU run's source instead]])
CASES = [
    ("extract_insert_i32", "tests/lit/run/tle_extract_insert.tle", "tiles", "*i32, *i32, i32", 4,
     ["k=6"], [("out_ptr", "zeros:i32:5x16"), ("ins_ptr", "zeros:i32:8x16")]),
    ("extract_insert_i32_runtime_wrap", "tests/lit/run/tle_extract_insert.tle", "tiles", "*i32, *i32, i32", 8,
     ["k=13"], [("out_ptr", "zeros:i32:5x16"), ("ins_ptr", "zeros:i32:8x16")]),
    ("depthwise3x3_strides", "tests/gpu/ops/tle_lite.tle", "depthwise3x3", "*fp32, *fp32, *fp32", 4,
     ["x_ptr=rand:f32:2048", "w_ptr=rand:f32:72"], [("y_ptr", "zeros:f32:512")]),
    ("relu_rows_registers", "tests/gpu/ops/tle_lite.tle", "relu_rows", "*fp32, *fp32, i32", 4,
     ["x_ptr=rand:f32:8192", "blk=3"], [("y_ptr", "zeros:f32:8192")]),
    ("windows_of_a_large_tile", "tests/gpu/ops/tle_lite.tle", "big_windows", "*fp32, *fp32, *fp32, i32", 8,
     ["x_ptr=rand:f32:32768", "k=5"], [("y_ptr", "zeros:f32:8192"), ("z_ptr", "zeros:f32:32768")]),
    ("cumsum_values", "tests/lit/run/tle_cumsum.tle", "sums", "*i32, *i32, *fp32, *i32", 4, [],
     [("o_int", "zeros:i32:24"), ("o_rev", "zeros:i32:9"), ("o_f32", "zeros:f32:9"), ("o_2d", "zeros:i32:10")]),
    ("cumsum_one_bin_per_thread", "tests/gpu/ops/tle_lite.tle", "hist_prefix", "*i32, *i32, *i32, 1024", 32,
     ["h_ptr=rand:i32:1024"], [("o_ptr", "zeros:i32:1024"), ("t_ptr", "zeros:i32:1")]),
    ("cumsum_fp32_rows_reverse", "tests/gpu/ops/tle_lite.tle", "float_prefix", "*fp32, *fp32, *fp32", 4,
     ["x_ptr=rand:f32:2048"], [("o_ptr", "zeros:f32:2048"), ("t_ptr", "zeros:f32:16")],
     ["--rtol", "1e-5", "--atol", "1e-4"]),
    ("cumsum_mixed_layout", "tests/gpu/ops/tle_lite.tle", "rows_mixed", "*i32, *i32, *i32", 1,
     ["x_ptr=rand:i32:64"], [("o_ptr", "zeros:i32:64"), ("t_ptr", "zeros:i32:2")], [],
     "tests/gpu/ops/tle_cumsum_mixed.tir"),
    ("load_async_masked_rows", "tests/gpu/ops/tle_load_async.tle", "masked_rows", "*fp32, *fp32, i32", 4,
     ["x_ptr=rand:f32:2048", "n=1000"], [("y_ptr", "zeros:f32:2048")]),
    ("load_async_rows_fp16", "tests/gpu/ops/tle_load_async.tle", "rows_fp16", "*fp16:16, *fp32, i32:16", 4,
     ["x_ptr=rand:f16:2048", "N=48"], [("y_ptr", "zeros:f32:2048")]),
    ("load_async_in_loop", "tests/gpu/ops/tle_load_async.tle", "in_loop", "*fp32:16, *fp32, i32", 4,
     ["x_ptr=rand:f32:4096", "n_rows=7"], [("y_ptr", "zeros:f32:512")]),
    ("load_async_staged_loop", "tests/gpu/ops/tle_load_async.tle", "staged_loop", "*fp32:16, *fp32, i32", 4,
     ["x_ptr=rand:f32:4096", "n_rows=7"], [("y_ptr", "zeros:f32:512")], ["--rtol", "1e-5", "--atol", "1e-5"]),
    ("load_async_store_between", "tests/gpu/ops/tle_load_async.tle", "store_between", "*fp32:16, *fp32", 4,
     ["x_ptr=rand:f32:1024"], [("y_ptr", "zeros:f32:1024")]),
]


def commands(tle_run, source, work, case):
    """The CPU reference run and the GPU run of `case`."""
    name, path, kernel, sig, warps, inputs, outputs = case[:7]
    extra = case[7] if len(case) > 7 else []
    base = [tle_run, os.path.join(source, path), "-n", kernel, "-s", sig, "-w", str(warps), "-q"]
    cpu, gpu = list(base), base + ["--target", "gpu"] + extra
    if len(case) > 8:  # tile IR of the same kernel (its layouts chosen by hand)
        gpu = [tle_run, os.path.join(source, case[8]), "-w", str(warps), "-q", "--target", "gpu"] + extra
    # Inputs go to both runs as written: a generated array (rand:...) is made on the host from
    # tle-run's seed and the argument's index, so both targets read the same values. (Saving the
    # CPU run's array instead would hand the GPU run what a kernel that writes its input, such as
    # store_between, left there.)
    for spec in inputs:
        cpu += ["--arg", spec]
        gpu += ["--arg", spec]
    for arg, gen in outputs:
        ref = os.path.join(work, f"{name}_{arg}_ref.npy")
        cpu += ["--arg", f"{arg}={gen}", "--save", f"{arg}={ref}"]
        gpu += ["--arg", f"{arg}={gen}", "--expect", f"{arg}={ref}"]
    return cpu, gpu


def main():
    tle_run, source, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    runs = [commands(tle_run, source, work, case) for case in CASES]
    for case, (cpu, _) in zip(CASES, runs):  # every reference first: they need no GPU
        p = subprocess.run(cpu, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL  {case[0]}  the CPU reference run failed: {p.stderr.strip()}")
            return 1
    failed = 0
    for case, (_, gpu) in zip(CASES, runs):
        p = subprocess.run(gpu, capture_output=True, text=True)
        if p.returncode != 0 and "needs a CUDA GPU" in p.stderr:
            print("SKIPPED: " + p.stderr.strip())
            return 77
        ok = p.returncode == 0
        print(f"{'PASS' if ok else 'FAIL'}  {case[0]}  {(p.stdout + p.stderr).strip()}".replace("\n", "; "))
        failed += not ok
    print(f"{len(CASES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
