#!/usr/bin/env python3
"""TLE-Lite on the GPU against the CPU target: the kernels of tests/lit/run/tle_extract_insert.tle
and tests/gpu/ops/tle_lite.tle run with tle-run on the CPU to write references, then with
--target gpu and --expect (exact for integers, torch.testing's fp32 tolerances). Prints one
PASS/FAIL line per kernel; exit 77 (skipped) when tle-run finds no usable GPU, 1 on a failure.

Usage: tle_lite_gpu.py TLE_RUN SOURCE_DIR WORK_DIR
"""
import os
import subprocess
import sys

# (name, source relative to the repository, kernel, signature, warps, --arg specs of the inputs,
#  outputs as (argument, generator spec))
CASES = [
    ("extract_insert_i32", "tests/lit/run/tle_extract_insert.tle", "tiles", "*i32, *i32, i32", 4,
     ["k=6"], [("out_ptr", "zeros:i32:5x16"), ("ins_ptr", "zeros:i32:8x16")]),
    ("extract_insert_i32_runtime_wrap", "tests/lit/run/tle_extract_insert.tle", "tiles", "*i32, *i32, i32", 8,
     ["k=13"], [("out_ptr", "zeros:i32:5x16"), ("ins_ptr", "zeros:i32:8x16")]),
    ("depthwise3x3_strides", "tests/gpu/ops/tle_lite.tle", "depthwise3x3", "*fp32, *fp32, *fp32", 4,
     ["x_ptr=rand:f32:2048", "w_ptr=rand:f32:72"], [("y_ptr", "zeros:f32:512")]),
    ("relu_rows_registers", "tests/gpu/ops/tle_lite.tle", "relu_rows", "*fp32, *fp32, i32", 4,
     ["x_ptr=rand:f32:8192", "blk=3"], [("y_ptr", "zeros:f32:8192")]),
]


def run_case(tle_run, source, work, case):
    name, path, kernel, sig, warps, inputs, outputs = case
    base = [tle_run, os.path.join(source, path), "-n", kernel, "-s", sig, "-w", str(warps), "-q"]
    cpu = list(base)
    saved = {}
    for spec in inputs:
        arg, value = spec.split("=", 1)
        if ":" in value:  # a generated array: save it so the GPU run reads the same values
            saved[arg] = os.path.join(work, f"{name}_{arg}.npy")
            cpu += ["--arg", spec, "--save", f"{arg}={saved[arg]}"]
        else:
            cpu += ["--arg", spec]
    for arg, gen in outputs:
        cpu += ["--arg", f"{arg}={gen}", "--save", f"{arg}={os.path.join(work, f'{name}_{arg}_ref.npy')}"]
    p = subprocess.run(cpu, capture_output=True, text=True)
    if p.returncode != 0:
        return False, "CPU reference failed: " + p.stderr.strip()
    gpu = base + ["--target", "gpu"]
    for spec in inputs:
        arg, value = spec.split("=", 1)
        gpu += ["--arg", f"{arg}={saved[arg]}" if arg in saved else spec]
    for arg, gen in outputs:
        gpu += ["--arg", f"{arg}={gen}", "--expect", f"{arg}={os.path.join(work, f'{name}_{arg}_ref.npy')}"]
    p = subprocess.run(gpu, capture_output=True, text=True)
    if p.returncode != 0 and "needs a CUDA GPU" in p.stderr:
        return None, p.stderr.strip()
    return p.returncode == 0, (p.stdout + p.stderr).strip().replace("\n", "; ")


def main():
    tle_run, source, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    failed = 0
    for case in CASES:
        ok, detail = run_case(tle_run, source, work, case)
        if ok is None:
            print("SKIPPED: " + detail)
            return 77
        print(f"{'PASS' if ok else 'FAIL'}  {case[0]}  {detail}")
        failed += not ok
    print(f"{len(CASES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
