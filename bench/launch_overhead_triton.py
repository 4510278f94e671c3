#!/usr/bin/env python3
"""Times Triton's own launcher on the kernel tle-bench-launch launches, and adds its rows to that table.

tle-bench-launch (bench/launch_overhead.cpp) times one launch of examples/vector_add.tle (one
1024-element block) through the generated launcher, libtle_rt's C++ and C APIs and cuLaunchKernel.
This script compiles the same .tle source with Triton (its body is an ordinary @triton.jit kernel,
loaded as a Python module), BLOCK=1024, 4 warps, grid (1,), and times with the same method: bursts
of --burst launches (below the driver's queue depth), only the host time of the launch calls
counted, the stream synchronised between bursts, the variants taking turns burst by burst, the
median over --rounds of the mean time per launch. Rows:

  Triton add_kernel[grid](...)         the call a Triton user writes: argument binding, the
                                       specialisation key, the cache lookup, then the launcher
  Triton CompiledKernel.run (launcher) the compiled launcher alone, called as JITFunction.run calls
                                       it (its launch metadata and hooks included)
  cuLaunchKernel from Python (ctypes)  the driver call on Triton's CUfunction from the same Python
                                       loop: the floor under any launcher called from Python

With --tle-json (the --out file of a tle-bench-launch run on the same machine) the table starts with
that run's rows and every row's excess is over its cuLaunchKernel (called from C++), so the table
compares the generated launcher, the C API, cuLaunchKernel and Triton. Without triton, torch or a
CUDA device it prints "SKIPPED: <why>" and exits 77.

Usage:
  build/bench/tle-bench-launch --launches 200000 --rounds 5 --out launch.json
  python3 bench/launch_overhead_triton.py --tle-json launch.json --launches 200000 --rounds 5 --out launch_all.json
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = 77
N = 1024  # elements: one block of BLOCK=1024


def skip(why):
    print(f"SKIPPED: {why}", flush=True)
    sys.exit(SKIP)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tle-json", help="tle-bench-launch's --out file, whose rows head the table")
    p.add_argument("--launches", type=int, default=200000, help="launches per variant per round")
    p.add_argument("--burst", type=int, default=256, help="launches between synchronisations")
    p.add_argument("--rounds", type=int, default=5, help="rounds; each row reports the median")
    p.add_argument("--out", help="write the merged table as JSON here")
    a = p.parse_args(argv)
    if a.launches < 1 or a.burst < 1 or a.rounds < 1:
        p.error("--launches, --burst and --rounds must be positive")
    return a


def time_variants(variants, launches, burst, rounds, synchronize, clock=time.perf_counter):
    """Median over `rounds` of the mean microseconds per launch of each variant: `variants` maps a
    name to fn(k), which makes k launches; each round runs max(1, launches // burst) bursts, the
    variants taking turns burst by burst, timing only fn's calls, synchronize() after each."""
    bursts = max(1, launches // burst)
    per_round = {name: [] for name in variants}
    for _ in range(rounds):
        seconds = dict.fromkeys(variants, 0.0)
        for _ in range(bursts):
            for name, fn in variants.items():
                t0 = clock()
                fn(burst)
                seconds[name] += clock() - t0
                synchronize()
        for name in variants:
            per_round[name].append(1e6 * seconds[name] / (bursts * burst))
    return {name: statistics.median(v) for name, v in per_round.items()}, bursts * burst


def merge_rows(tle, triton_rows):
    """The table's rows as (name, us, over cuLaunchKernel or None): tle-bench-launch's rows (from its
    JSON document `tle`, or none) then `triton_rows` {name: us}, the excess over `tle`'s cuLaunchKernel."""
    rows, base = [], None
    for v in (tle or {}).get("variants", []):
        rows.append((v["name"], v["us_per_launch"]))
        if v["name"] == "cuLaunchKernel":
            base = v["us_per_launch"]
    rows += list(triton_rows.items())
    return [(name, us, None if base is None else us - base) for name, us in rows]


def format_table(rows):
    """Markdown, as tle-bench-launch prints it."""
    out = ["| variant | us per launch (median) | over cuLaunchKernel |", "| --- | ---: | ---: |"]
    for name, us, over in rows:
        out.append(f"| {name} | {us:.3f} | {'-' if over is None else f'{over:+.3f}'} |")
    return "\n".join(out)


def load_kernel():
    """add_kernel of examples/vector_add.tle, imported as a Python module (file-backed, so Triton
    finds its source)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from triton_softmax import load_tle_module

    return load_tle_module(os.path.join(ROOT, "examples", "vector_add.tle")).add_kernel


def launch_hooks(triton, compiled):
    """The enter and exit hooks JITFunction.run passes (triton.knobs from 3.4, CompiledKernel before)."""
    knobs = getattr(triton, "knobs", None)
    if knobs is not None and hasattr(knobs, "runtime"):
        return knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
    return type(compiled).launch_enter_hook, type(compiled).launch_exit_hook


def compiled_launcher(triton, compiled, stream, args, constexprs, check):
    """fn(k): k calls of the compiled launcher as JITFunction.run makes them, with the argument list
    this Triton version takes (every bound argument from 3.4, the runtime ones before); the first
    form whose launch computes z = x + y (check()) is kept. None when neither does."""
    enter, exit_ = launch_hooks(triton, compiled)
    grid = (1, 1, 1)
    for values in (args + constexprs, args):
        def fn(k, values=values):
            run, function, packed = compiled.run, compiled.function, compiled.packed_metadata
            for _ in range(k):
                meta = compiled.launch_metadata(grid, stream, *values)
                run(1, 1, 1, stream, function, packed, meta, enter, exit_, *values)
        try:
            if check(fn):
                return fn
        except (TypeError, IndexError, RuntimeError, ValueError):
            continue
    return None


def ctypes_launcher(compiled, stream, pointers, n, check):
    """fn(k): k cuLaunchKernel calls through ctypes on Triton's CUfunction, its parameters (sizes
    from cuFuncGetParamInfo, CUDA 12.4+) the three pointers, n, and zeros for any parameter Triton
    adds (scratch pointers); (None, why) when that cannot be done safely."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        info = cuda.cuFuncGetParamInfo
    except (OSError, AttributeError) as e:
        return None, f"no cuFuncGetParamInfo in the driver ({e})"
    info.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
    sizes = []
    while len(sizes) < 64:
        off, size = ctypes.c_size_t(), ctypes.c_size_t()
        if info(ctypes.c_void_p(compiled.function), len(sizes), ctypes.byref(off), ctypes.byref(size)) != 0:
            break
        sizes.append(size.value)
    if sizes[:4] != [8, 8, 8, 4]:
        return None, f"Triton's add_kernel has parameters of {sizes} bytes, not (ptr, ptr, ptr, i32, ...)"
    values = [ctypes.c_uint64(p) for p in pointers] + [ctypes.c_int32(n)]
    values += [(ctypes.c_uint8 * s)() for s in sizes[4:]]  # zeros
    params = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values])
    launch = cuda.cuLaunchKernel
    launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    block = 32 * compiled.metadata.num_warps
    shared = compiled.metadata.shared
    func, hstream = ctypes.c_void_p(compiled.function), ctypes.c_void_p(stream)

    def fn(k):
        for _ in range(k):
            if launch(func, 1, 1, 1, block, 1, 1, shared, hstream, params, None) != 0:
                raise RuntimeError("cuLaunchKernel failed")
    if not check(fn):
        return None, "the ctypes launch did not compute z = x + y"
    fn.keep = (values, params)  # the argument buffers live as long as the launcher
    return fn, None


def triton_rows(args):
    """{row name: median us per launch} of Triton's launches, the launches per round, and notes."""
    try:
        import torch
        import triton
    except ImportError as e:
        skip(f"the Triton rows need torch and triton in this python3 ({e})")
    if not torch.cuda.is_available():
        skip("no CUDA device (torch.cuda.is_available() is False)")
    kernel = load_kernel()
    x = torch.rand(N, device="cuda")
    y = torch.rand(N, device="cuda")
    z = torch.zeros(N, device="cuda")
    compiled = kernel[(1,)](x, y, z, N, BLOCK=1024)  # compiles; later calls hit the cache
    torch.cuda.synchronize()
    try:
        from triton.runtime import driver
        stream = driver.active.get_current_stream(torch.cuda.current_device())
    except (ImportError, AttributeError):
        stream = torch.cuda.current_stream().cuda_stream

    def check(fn):
        z.zero_()
        fn(1)
        torch.cuda.synchronize()
        return bool(torch.equal(z, x + y))

    def jit(k):
        for _ in range(k):
            kernel[(1,)](x, y, z, N, BLOCK=1024)

    if not check(jit):
        raise RuntimeError("Triton's add_kernel did not compute z = x + y")
    variants = {"Triton add_kernel[grid](...)": jit}
    notes = []
    run = compiled_launcher(triton, compiled, stream, [x, y, z, N], [1024], check)
    if run:
        variants["Triton CompiledKernel.run (launcher)"] = run
    else:
        notes.append("Triton CompiledKernel.run: not timed (neither argument form launched correctly)")
    floor, why = ctypes_launcher(compiled, stream, [x.data_ptr(), y.data_ptr(), z.data_ptr()], N, check)
    if floor:
        variants["cuLaunchKernel from Python (ctypes)"] = floor
    else:
        notes.append(f"cuLaunchKernel from Python: not timed ({why})")
    rows, launches = time_variants(variants, args.launches, args.burst, args.rounds, torch.cuda.synchronize)
    versions = f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}"
    return rows, launches, versions, notes


def main(argv=None):
    args = parse_args(argv)
    tle = None
    if args.tle_json:
        with open(args.tle_json) as f:
            tle = json.load(f)
    rows, launches, versions, notes = triton_rows(args)
    merged = merge_rows(tle, rows)
    if tle:
        print(f"tle-bench-launch: {tle.get('device')}; {tle.get('launches_per_round')} launches per variant per "
              f"round, bursts of {tle.get('burst')}, {tle.get('rounds')} rounds")
    print(f"Triton rows: {versions}; {launches} launches per variant per round, bursts of {args.burst}, "
          f"{args.rounds} rounds")
    print(format_table(merged))
    for note in notes:
        print(note)
    if args.out:
        doc = dict(tle or {})
        doc["triton"] = versions
        doc["variants"] = [{"name": n, "us_per_launch": round(us, 4),
                            "over_cuLaunchKernel_us": None if o is None else round(o, 4)} for n, us, o in merged]
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
