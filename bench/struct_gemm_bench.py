"""TLE-Struct's hand-written warp-specialised GEMM (bench/struct_gemm/matmul_struct_ws.tle: a TMA
producer warpgroup and wgmma consumer warpgroups, written with tle.gpu.alloc_barriers, copy,
wgmma and warp_specialize) against cuBLAS (torch.matmul), fp16 in, fp32 accumulation, fp16 out,
in one process. Each cubin's output is checked against torch.matmul before it is timed; times are
triton.testing.do_bench medians over rounds in rotating order (profile_common.time_rounds).

Usage: python3 bench/struct_gemm_bench.py --lib build/runtime/libtle_rt.so --cubins DIR
           [--persistent] [--configs 128x256x64x8x3,...] [--sizes MxNxK,...] [--rounds 3] [--out FILE.json]
DIR holds struct_ws_<BM>x<BN>x<BK>_w<W>_s<S>.sm_90a.cubin for each config (struct_wsp_... with
--persistent: matmul_struct_ws_persistent, launched on min(tiles, SMs) programs), compiled with
  tlec bench/struct_gemm/matmul_struct_ws.tle -n matmul_struct_ws -w W --arch sm_90a \\
       -s "*fp16:16, *fp16:16, *fp16:16, i32, i32:16, i32:16, BM, BN, BK, S" -o ...
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cubins", required=True)
    ap.add_argument("--configs", default="128x256x64x8x3,128x128x64x8x4")
    ap.add_argument("--sizes", default="4096x4096x4096,8192x8192x8192,8192x8192x1024")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--persistent", action="store_true")
    args = ap.parse_args()
    lib = open_runtime(args.lib)
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    rows = []
    for size in args.sizes.split(","):
        m, n, k = (int(x) for x in size.split("x"))
        torch.manual_seed(0)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        ref = torch.matmul(a, b)
        timed = {"cublas": lambda: torch.matmul(a, b)}
        for cfg in args.configs.split(","):
            bm, bn, bk, w, s = (int(x) for x in cfg.split("x"))
            stem = "struct_wsp_" if args.persistent else "struct_ws_"
            path = os.path.join(args.cubins, f"{stem}{bm}x{bn}x{bk}_w{w}_s{s}.sm_90a.cubin")
            name = "matmul_struct_ws_persistent" if args.persistent else "matmul_struct_ws"
            kern = TleKernel(lib, path, name)
            c = torch.empty(m, n, device="cuda", dtype=torch.float16)
            grid = ((m + bm - 1) // bm, (n + bn - 1) // bn)
            if args.persistent:
                sms = torch.cuda.get_device_properties(0).multi_processor_count
                grid = (min(grid[0] * grid[1], sms),)
            vals = [ctypes.c_uint64(t.data_ptr()) for t in (a, b, c)] + [ctypes.c_int32(x) for x in (m, n, k)]

            def run(kern=kern, grid=grid, vals=vals):
                kern.launch(grid, stream(), vals)
            run()
            torch.cuda.synchronize()
            err = (c.float() - ref.float()).abs().max().item()
            scale = ref.float().abs().max().item()
            if not torch.allclose(c.float(), ref.float(), atol=1e-2 * scale, rtol=1e-2):
                raise SystemExit(f"{cfg} at {size}: max |error| {err} (|ref| max {scale}): wrong result")
            timed[cfg] = run
        ms = time_rounds(timed, args.rounds)
        flops = 2.0 * m * n * k
        cublas = statistics.median(ms["cublas"])
        for cfg in args.configs.split(","):
            t = statistics.median(ms[cfg])
            ratios = [cb / x for cb, x in zip(ms["cublas"], ms[cfg])]
            rows.append({"size": size, "config": cfg, "tle_ms": t, "cublas_ms": cublas,
                         "tle_tflops": flops / t / 1e9, "cublas_tflops": flops / cublas / 1e9,
                         "tle_over_cublas": statistics.median(ratios), "rounds_ms": ms[cfg],
                         "cublas_rounds_ms": ms["cublas"]})
    print("| size | config | tle TFLOP/s | cuBLAS TFLOP/s | tle / cuBLAS (speed) |")
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['size']} | {r['config']} | {r['tle_tflops']:.0f} | {r['cublas_tflops']:.0f} | "
              f"{r['tle_over_cublas']:.3f} |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
