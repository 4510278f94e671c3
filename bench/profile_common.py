"""Timing helpers of the Python benchmarks: interleaved rounds (bench/matmul_compare.py,
bench/attention_bench.py), and tle's kernel and Triton's on the same source side by side under
Nsight Compute or in sustained runs (bench/matmul_profile_pair.py, bench/attention_profile_pair.py)."""
import datetime
import os
import statistics
import subprocess
import time

import torch
import triton.testing


def time_rounds(timed, rounds, warmup_ms=25, rep_ms=100):
    """Median milliseconds (triton.testing.do_bench with `warmup_ms` and `rep_ms`) of every callable
    in `timed` (a dict), `rounds` times, round r starting at the r-th callable (rotating order), so
    that clock and power drift during the job falls on all alike; returns key -> list of times."""
    keys = list(timed)
    ms = {key: [] for key in keys}
    for r in range(rounds if keys else 0):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            ms[key].append(triton.testing.do_bench(timed[key], warmup=warmup_ms, rep=rep_ms, return_mode="median"))
    return ms


def dump_compiled(compiled, dump_dir, stem):
    """Writes Triton's PTX and cubin of `compiled` (a Triton CompiledKernel) to
    DUMP_DIR/STEM.ptx and .cubin, creating the folder."""
    os.makedirs(dump_dir, exist_ok=True)
    path = os.path.join(dump_dir, stem)
    with open(path + ".ptx", "w") as f:
        f.write(compiled.asm["ptx"])
    with open(path + ".cubin", "wb") as f:
        f.write(compiled.asm["cubin"])


def profile_pairs(run_tle, run_triton, pairs):
    """Launches tle, Triton, tle, Triton, ... (`pairs` pairs) inside one CUDA profiler range, so
    that `ncu --profile-from-start off` reports the launches in that order."""
    torch.cuda.profiler.start()
    for _ in range(pairs):
        run_tle()
        run_triton()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def sustain(seconds, kernels):
    """Runs each (label, fn) of `kernels` back to back for `seconds`, twice over, sampling the GPU
    with nvidia-smi; prints per phase: launches per second, mean SM clock (MHz), power (W) and
    temperature (C) over the samples inside the phase."""
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu",
                            "--format=csv,noheader,nounits", "-lms", "50"], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    phases = []
    for _ in range(2):
        for label, fn in kernels:
            torch.cuda.synchronize()
            t0, n = time.time(), 0
            while time.time() - t0 < seconds:
                for _ in range(5):
                    fn()
                n += 5
                torch.cuda.synchronize()
            phases.append((label, t0, time.time(), n))
    smi.terminate()
    samples = []
    for line in smi.communicate()[0].splitlines():
        parts = [x.strip() for x in line.split(",")]
        try:
            ts = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            samples.append((ts, float(parts[1]), float(parts[2]), float(parts[3])))
        except (ValueError, IndexError):
            continue
    for label, t0, t1, n in phases:
        inside = [s for s in samples if t0 + 0.2 <= s[0] <= t1]  # skip the phase's first 200 ms
        mean = [statistics.mean(s[i] for s in inside) if inside else float("nan") for i in (1, 2, 3)]
        print(f"{label:7s} {n / (t1 - t0):8.2f} launches/s ({(t1 - t0) / n * 1e3:7.3f} ms each)  SM clock "
              f"{mean[0]:6.0f} MHz  power {mean[1]:6.1f} W  temperature {mean[2]:4.1f} C  ({len(inside)} samples)",
              flush=True)
