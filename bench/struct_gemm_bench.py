"""TLE-Struct's hand-written warp-specialised GEMMs (bench/struct_gemm/matmul_struct_ws.tle: a TMA
producer warpgroup and wgmma consumer warpgroups, written with tle.gpu.alloc_barriers, copy,
wgmma and warp_specialize) against cuBLAS (torch.matmul), fp16 or bf16 in, fp32 accumulation,
in one process. Each cubin's output is checked against torch.matmul before anything is timed;
times are triton.testing.do_bench medians over rounds in rotating order
(profile_common.time_rounds).

Usage (--check-sizes: shapes checked only, not timed):
       bench/struct_gemm/build.sh TLEC DIR "fp16 bf16" "ws wsp mc mcp" 128x256x64x8x3
       python3 bench/struct_gemm_bench.py --lib build/runtime/libtle_rt.so --cubins DIR
           [--dtypes fp16,bf16] [--variants ws,wsp,mc,mcp] [--configs 128x256x64x8x3,128x256x64x8x4x2,...]
           [--sizes MxNxK,...] [--rounds 3] [--out FILE.json]
Variants (build.sh names the cubins): ws, one tile per program; wsp, persistent (at most one
program per SM); mc, clusters of two CTAs sharing B by TMA multicast, one tile per CTA; mcp, the
same, persistent (an even number of programs, at most one per SM); wspt, wsp reading B transposed
([N, K], K contiguous), the only variant for fp8e4nv (whose wgmma takes K-major operands; its C is
bf16 and its baseline cuBLASLt's torch._scaled_mm); wspe, wsp storing each tile by one TMA store
from a swizzled staging buffer (the consumers go on once it has been read); wspp, persistent with
two consumer warpgroups on alternate tiles (ping-pong; configs with WARPS 4); wsps, wsp whose
consumers hand each tile to a storer warpgroup through a staging buffer and go on; wspk, wsp whose
last two waves of tiles are split along K into one equal run per program (stream-K; it takes an
fp32 workspace and int32 flags, zeros, which the kernel leaves zero).
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

KERNELS = {"ws": "matmul_struct_ws", "wsp": "matmul_struct_ws_persistent", "mc": "matmul_struct_ws_mc",
           "mcp": "matmul_struct_ws_mc", "wspt": "matmul_struct_ws_persistent", "wspe": "matmul_struct_ws_persistent",
           "wspp": "matmul_struct_ws_pingpong", "wsps": "matmul_struct_ws_storer",
           "wspk": "matmul_struct_ws_streamk"}
# A variant with a suffix (ws.base) is the same kernel from cubins built by another compiler
# (a baseline, in the same job); its cubins are named with the suffix too.
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp8e4nv": torch.float8_e4m3fn}


def operands(dt, m, n, k):
    """A [M, K], B [K, N], B transposed [N, K] contiguous, the reference C, and cuBLAS's call (for fp8:
    cuBLASLt through torch._scaled_mm with unit scales, bf16 out, the variants' output type)."""
    torch.manual_seed(0)
    if dt == "fp8e4nv":
        a = torch.randn(m, k, device="cuda").to(DTYPES[dt])
        bt = torch.randn(n, k, device="cuda").to(DTYPES[dt])
        one = torch.ones((), device="cuda")
        cublas = lambda: torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
        return a, None, bt, cublas(), cublas
    a = torch.randn(m, k, device="cuda", dtype=DTYPES[dt])
    b = torch.randn(k, n, device="cuda", dtype=DTYPES[dt])
    return a, b, b.t().contiguous(), torch.matmul(a, b), lambda: torch.matmul(a, b)


def grid_of(variant, m, n, bm, bn, sms):
    variant = variant.split(".")[0]
    tiles_m, tiles_n = (m + bm - 1) // bm, (n + bn - 1) // bn
    if variant == "ws":
        return (tiles_m, tiles_n)
    if variant in ("wsp", "wspt", "wspe", "wspp", "wsps", "wspk"):
        return (min(tiles_m * tiles_n, sms),)
    clusters = (tiles_m + 1) // 2 * tiles_n
    if variant == "mc":
        return (2 * clusters,)
    return (2 * min(clusters, sms // 2),)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cubins", required=True)
    ap.add_argument("--dtypes", default="fp16,bf16")
    ap.add_argument("--variants", default="ws,wsp,mc,mcp")
    ap.add_argument("--configs", default="128x256x64x8x3")
    ap.add_argument("--sizes", default="4096x4096x4096,8192x8192x8192,8192x8192x1024")
    ap.add_argument("--check-sizes", default="1300x1008x1008,128x256x64,200x512x3072",
                    help="sizes whose results are checked but not timed (ragged M, one K step, an odd tile count)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    lib = open_runtime(args.lib)
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for dt in args.dtypes.split(","):
        checks = [x for x in args.check_sizes.split(",") if x]
        for size in checks + args.sizes.split(","):
            m, n, k = (int(x) for x in size.split("x"))
            a, b, bt, ref, cublas_call = operands(dt, m, n, k)
            timed = {"cublas": cublas_call}
            names = []
            for v in args.variants.split(","):
                if v.split(".")[0] != "wspt" and b is None:
                    continue  # fp8 runs the K-major variant only
                for cfg in args.configs.split(","):
                    bm, bn, bk, w, s, *e = (int(x) for x in cfg.split("x"))
                    tail = f"_e{e[0]}" if e else ""
                    path = os.path.join(args.cubins, f"struct_{v}_{dt}_{bm}x{bn}x{bk}_w{w}_s{s}{tail}.sm_90a.cubin")
                    if not os.path.exists(path):  # a config the variant does not fit (shared memory)
                        print(f"skip {os.path.basename(path)}: not built", flush=True)
                        continue
                    kern = TleKernel(lib, path, KERNELS[v.split(".")[0]])
                    c = torch.full((m, n), float("nan"), device="cuda", dtype=ref.dtype)
                    grid = grid_of(v, m, n, bm, bn, sms)
                    bx = bt if v.split(".")[0] == "wspt" else b
                    bufs = [a, bx, c]
                    if v.split(".")[0] == "wspk":  # the stream-K partials and their flags
                        bufs += [torch.empty(grid[0] * bm * bn, device="cuda", dtype=torch.float32),
                                 torch.zeros(grid[0], device="cuda", dtype=torch.int32)]
                    vals = [ctypes.c_uint64(t.data_ptr()) for t in bufs] + [ctypes.c_int32(x) for x in (m, n, k)]

                    def run(kern=kern, grid=grid, vals=vals, bufs=bufs):  # bufs: kept alive
                        kern.launch(grid, stream(), vals)
                    run()
                    torch.cuda.synchronize()
                    scale = ref.float().abs().max().item()
                    if not torch.allclose(c.float(), ref.float(), atol=1e-2 * scale, rtol=1e-2):
                        err = (c.float() - ref.float()).abs().nan_to_num(float("inf")).max().item()
                        raise SystemExit(f"{v} {dt} {cfg} at {size}: max |error| {err} (|ref| max {scale}): "
                                         "wrong result")
                    print(f"PASS {v} {dt} {cfg} {size} grid {grid}", flush=True)
                    timed[f"{v} {cfg}"] = run
                    names.append((v, cfg))
            if size in checks:
                continue
            ms = time_rounds(timed, args.rounds)
            flops = 2.0 * m * n * k
            cublas = statistics.median(ms["cublas"])
            for v, cfg in names:
                key = f"{v} {cfg}"
                t = statistics.median(ms[key])
                ratios = [cb / x for cb, x in zip(ms["cublas"], ms[key])]
                rows.append({"dtype": dt, "size": size, "variant": v, "config": cfg, "tle_ms": t,
                             "cublas_ms": cublas, "tle_tflops": flops / t / 1e9,
                             "cublas_tflops": flops / cublas / 1e9, "tle_over_cublas": statistics.median(ratios),
                             "rounds_ms": ms[key], "cublas_rounds_ms": ms["cublas"]})
    print("| dtype | size | variant | config | tle TFLOP/s | cuBLAS TFLOP/s | tle / cuBLAS (speed) |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['dtype']} | {r['size']} | {r['variant']} | {r['config']} | {r['tle_tflops']:.0f} | "
              f"{r['cublas_tflops']:.0f} | {r['tle_over_cublas']:.3f} |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
