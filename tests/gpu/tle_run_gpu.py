#!/usr/bin/env python3
"""tle-run --target gpu with the arguments' inferred types, a --grid expression and --expect: the
kernel of tests/lit/run/infer_grid_expect.tle runs on the CPU target to write a reference, then on
the GPU, whose output must match it (fp16, torch.testing's tolerances). Exit 77 (skipped) when
tle-run finds no usable GPU.

Usage: tle_run_gpu.py TLE_RUN SOURCE_DIR WORK_DIR
"""
import os
import subprocess
import sys


def main():
    tle_run, source, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    kernel = os.path.join(source, "tests", "lit", "run", "infer_grid_expect.tle")
    common = [tle_run, kernel, "-D", "BLOCK=256", "--grid", "cdiv(n, BLOCK)", "--arg", "n=100000",
              "--arg", "scale=0.5", "--arg", "y_ptr=zeros:f16:100000"]
    x, y = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    cpu = subprocess.run(common + ["--arg", "x_ptr=rand:f16:100000", "--save", "x_ptr=" + x, "--save",
                                   "y_ptr=" + y], capture_output=True, text=True)
    if cpu.returncode != 0:
        print("the CPU reference run failed:\n" + cpu.stderr)
        return 1
    gpu = subprocess.run(common + ["--arg", "x_ptr=" + x, "--target", "gpu", "--expect", "y_ptr=" + y],
                         capture_output=True, text=True)
    print(gpu.stdout + gpu.stderr, end="")
    if gpu.returncode != 0 and "needs a CUDA GPU" in gpu.stderr:
        return 77
    if gpu.returncode != 0 or "y_ptr matches" not in gpu.stderr:
        return 1
    print("tle-run --target gpu matched the CPU target's result")
    return 0


if __name__ == "__main__":
    sys.exit(main())
