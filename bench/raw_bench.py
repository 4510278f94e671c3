"""TLE-Raw's examples against the same operation in plain tile code, in one process:
- a vector add on global pointers;
- GELU (tanh form) on register tiles, through shared memory (FlagTree's protocol) and as each
  thread's fragment in registers (fragment=True);
- row sums by inline-PTX warp shuffles, over a TLE-Struct buffer and over the tile's fragments,
  against tl.sum from registers and over the same buffer;
- the kernel mixing Lite, Struct and Raw (a CUDA function staging rows in a buffer, by 16-byte
  loads and stores or by cp.async copies), against tile code loading them directly and staging them with tle.gpu.copy;
- the same rows through a CUDA function's two-slot cp.async pipeline driven by a tile loop,
  against the loop the compiler pipelines.
Every cubin's output is checked (against torch, or the exact sums) before anything is timed; times
are triton.testing.do_bench medians over rounds in rotating order (profile_common.time_rounds),
reported as tile time / raw time (above 1: the raw kernel is faster).

Usage: python3 bench/raw_bench.py --lib build/runtime/libtle_rt.so --cubins DIR [--rounds 5] [--out FILE.json]
DIR holds the cubins bench/raw_cubins.sh compiles from tests/gpu/raw/raw_kernels.tle.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_common import time_rounds  # noqa: E402
from tle_ctypes import TleKernel, open_runtime  # noqa: E402


def ptr(t):
    return ctypes.c_uint64(t.data_ptr())


def check(name, got, want, atol, rtol):
    if not torch.allclose(got, want, atol=atol, rtol=rtol):
        err = (got - want).abs().max().item()
        raise SystemExit(f"{name}: wrong result (max |error| {err})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cubins", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    lib = open_runtime(args.lib)
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731

    def kernel(stem, name):
        return TleKernel(lib, os.path.join(args.cubins, f"{stem}.sm_90a.cubin"), name)

    torch.manual_seed(0)
    timed, pairs = {}, []
    # Vector add: 2^26 fp32 elements, 1024 per program.
    n = 1 << 26
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    for stem in ("raw_vector_add", "tile_vector_add"):
        out = torch.empty_like(x)
        k = kernel(stem, stem)
        vals = [ptr(x), ptr(y), ptr(out), ctypes.c_int32(n)]
        timed[stem] = (lambda k=k, vals=vals: k.launch(((n + 1023) // 1024,), stream(), vals))
        timed[stem]()
        torch.cuda.synchronize()
        check(stem, out, x + y, 0, 0)
    pairs.append(("vector add, 2^26 fp32", "raw_vector_add", "tile_vector_add"))
    # GELU: [16384, 1024] fp32 in [4, 1024] tiles.
    rows, cols = 16384, 1024
    g = torch.randn(rows, cols, device="cuda")
    ref = torch.nn.functional.gelu(g, approximate="tanh")
    for stem in ("raw_gelu", "raw_gelu_fragment", "tile_gelu"):
        out = torch.empty_like(g)
        k = kernel(stem, stem)
        vals = [ptr(g), ptr(out), ctypes.c_int32(cols)]
        timed[stem] = (lambda k=k, vals=vals: k.launch((rows // 4,), stream(), vals))
        timed[stem]()
        torch.cuda.synchronize()
        check(stem, out, ref, 1e-5, 1e-5)
    pairs.append(("GELU [16384, 1024] fp32, shared-memory protocol", "raw_gelu", "tile_gelu"))
    pairs.append(("GELU [16384, 1024] fp32, fragment", "raw_gelu_fragment", "tile_gelu"))
    # Row sums: [2^21, 32] fp32 in 16-row programs.
    r = 1 << 21
    xr = torch.randint(-6, 7, (r, 32), device="cuda").float()
    for stem in ("raw_row_sums", "raw_row_sums_fragment", "tile_row_sums", "tile_row_sums_staged"):
        out = torch.empty(r, device="cuda")
        k = kernel(stem, stem)
        vals = [ptr(xr), ptr(out)]
        timed[stem] = (lambda k=k, vals=vals: k.launch((r // 16,), stream(), vals))
        timed[stem]()
        torch.cuda.synchronize()
        check(stem, out, xr.sum(dim=1), 0, 0)
    pairs.append(("row sums [2^21, 32] fp32, TLE-Struct buffer, vs tile code from registers", "raw_row_sums",
                  "tile_row_sums"))
    pairs.append(("row sums [2^21, 32] fp32, TLE-Struct buffer, vs tile code on the same buffer", "raw_row_sums",
                  "tile_row_sums_staged"))
    pairs.append(("row sums [2^21, 32] fp32, fragment (warp shuffles in PTX)", "raw_row_sums_fragment", "tile_row_sums"))
    # Lite + Struct + Raw: [2^18, 64] fp16 rows staged in a buffer by a CUDA cp.async pipeline,
    # halves added in fp32; against tile code loading directly and staging with tle.gpu.copy.
    m = 1 << 18
    xh = torch.randint(-100, 100, (m, 64), device="cuda").half()
    want = xh[:, :32].float() + xh[:, 32:].float()
    for stem in ("raw_mixed", "raw_mixed_async", "tile_mixed", "tile_mixed_staged"):
        out = torch.empty(m, 32, device="cuda")
        k = kernel(stem, stem)
        vals = [ptr(xh), ptr(out), ctypes.c_int32(64)]
        timed[stem] = (lambda k=k, vals=vals: k.launch((m // 32,), stream(), vals))
        timed[stem]()
        torch.cuda.synchronize()
        check(stem, out, want, 0, 0)
    pairs.append(("staging (Lite + Struct + Raw) [2^18, 64] fp16, vs tl.load", "raw_mixed", "tile_mixed"))
    pairs.append(("staging (Lite + Struct + Raw) [2^18, 64] fp16, vs tle.gpu.copy staging", "raw_mixed",
                  "tile_mixed_staged"))
    pairs.append(("cp.async staging (Lite + Struct + Raw) [2^18, 64] fp16, vs tl.load", "raw_mixed_async",
                  "tile_mixed"))
    pairs.append(("cp.async staging (Lite + Struct + Raw) [2^18, 64] fp16, vs tle.gpu.copy staging",
                  "raw_mixed_async", "tile_mixed_staged"))
    # The same rows through a CUDA function's two-slot cp.async pipeline (8 blocks of 32 rows per
    # program), against the tile-code loop the compiler pipelines.
    blocks = 8
    for stem in ("raw_pipeline", "tile_pipeline"):
        out = torch.empty(m, 32, device="cuda")
        k = kernel(stem, stem)
        vals = [ptr(xh), ptr(out), ctypes.c_int32(64), ctypes.c_int32(blocks)]
        timed[stem] = (lambda k=k, vals=vals: k.launch((m // (32 * blocks),), stream(), vals))
        timed[stem]()
        torch.cuda.synchronize()
        check(stem, out, want, 0, 0)
    pairs.append(("cp.async pipeline (Lite + Struct + Raw) [2^18, 64] fp16, vs the pipelined tile loop", "raw_pipeline",
                  "tile_pipeline"))

    ms = time_rounds(timed, args.rounds)
    rows_out = []
    print("| operation | raw ms | tile ms | tile / raw (speed) |")
    print("| --- | --- | --- | --- |")
    for label, raw, tile in pairs:
        ratio = statistics.median([t / w for w, t in zip(ms[raw], ms[tile])])
        rows_out.append({"operation": label, "raw": raw, "tile": tile, "raw_ms": statistics.median(ms[raw]),
                         "tile_ms": statistics.median(ms[tile]), "tile_over_raw": ratio,
                         "raw_rounds_ms": ms[raw], "tile_rounds_ms": ms[tile]})
        print(f"| {label} | {statistics.median(ms[raw]):.4f} | {statistics.median(ms[tile]):.4f} | {ratio:.3f} |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows_out}, f, indent=1)


if __name__ == "__main__":
    main()
