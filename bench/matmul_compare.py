"""Matmul side by side in one process: examples/matmul.tle compiled by tlec for each block
configuration (cubins launched through libtle_rt's C ABI with ctypes, on PyTorch's tensors), the
same source and configuration run by Triton 3.6, and cuBLAS (torch.matmul), all timed with
triton.testing.do_bench (median; L2 cleared between repetitions). fp16 (or, with --dtype bf16,
bf16) inputs, fp32 accumulation, output in the input dtype. Every output is checked against torch.matmul before it is timed.

Usage: python3 bench/matmul_compare.py --lib build/runtime/libtle_rt.so --cubins DIR
           [--configs 128x128x64x4x3,...] [--sizes MxNxK,...] [--out FILE.json]
A config is BLOCK_MxBLOCK_NxBLOCK_KxNUM_WARPSxNUM_STAGES; DIR holds
mm_<BM>x<BN>x<BK>_w<W>_s<S>.sm_90a.cubin for each (bench/build_matmul_cubins.sh writes them)."""
import argparse
import ctypes
import json
import os
import sys

import torch
import triton
import triton.testing

from tle_ctypes import TleKernel, load_example_kernel, open_runtime

GROUP_M = 8


def launch_matmul(kernel, grid, a, b, c, m, n, k):
    kernel.launch((grid,), torch.cuda.current_stream().cuda_stream,
                  [ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(b.data_ptr()), ctypes.c_uint64(c.data_ptr()),
                   ctypes.c_int32(m), ctypes.c_int32(n), ctypes.c_int32(k), ctypes.c_int32(a.stride(0)),
                   ctypes.c_int32(b.stride(0)), ctypes.c_int32(c.stride(0))])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cubins", required=True)
    ap.add_argument("--configs", default="128x128x64x4x3")
    ap.add_argument("--sizes", default="4096x4096x4096,8192x8192x8192,8192x8192x1024")
    ap.add_argument("--dtype", choices=["fp16", "bf16"], default="fp16")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    torch.cuda.init()
    lib = open_runtime(args.lib)
    triton_kernel = load_example_kernel("matmul", "matmul_kernel")
    configs = [tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
    rows, all_ok = [], True
    for item in args.sizes.split(","):
        m, n, k = (int(x) for x in item.split("x"))
        torch.manual_seed(0)
        dt = torch.float16 if args.dtype == "fp16" else torch.bfloat16
        a = torch.randn(m, k, device="cuda", dtype=dt)
        b = torch.randn(k, n, device="cuda", dtype=dt)
        ref = torch.matmul(a, b).float()
        flops = 2.0 * m * n * k
        ms_cublas = triton.testing.do_bench(lambda: torch.matmul(a, b), return_mode="median")
        tf_cublas = flops / ms_cublas / 1e9
        print(f"{m}x{n}x{k}: cuBLAS {tf_cublas:7.1f} TFLOP/s", flush=True)
        for (bm, bn, bk, w, s) in configs:
            grid = triton.cdiv(m, bm) * triton.cdiv(n, bn)
            row = {"m": m, "n": n, "k": k, "config": f"{bm}x{bn}x{bk} w{w} s{s}", "cublas_tflops": tf_cublas}
            prefix = "mm" if args.dtype == "fp16" else "mm_bf16"
            path = os.path.join(args.cubins, f"{prefix}_{bm}x{bn}x{bk}_w{w}_s{s}.sm_90a.cubin")
            kern = TleKernel(lib, path, "matmul_kernel")
            tle = lambda *xs: launch_matmul(kern, *xs)  # noqa: E731
            c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
            tle(grid, a, b, c, m, n, k)
            torch.cuda.synchronize()
            err = (c.float() - ref).abs().max().item()
            tol = 1e-2 * ref.abs().max().item() + 1e-2
            ok = err <= tol and not torch.isnan(c).any().item()
            all_ok &= ok
            row.update({"tle_max_err": err, "pass": ok})
            if ok:
                ms = triton.testing.do_bench(lambda: tle(grid, a, b, c, m, n, k), return_mode="median")
                row["tle_tflops"] = flops / ms / 1e9
            if not args.no_triton:
                c2 = torch.empty((m, n), device="cuda", dtype=dt)

                def run_triton():
                    triton_kernel[(grid,)](a, b, c2, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                           c2.stride(0), c2.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                           GROUP_M=GROUP_M, num_warps=w, num_stages=s)
                run_triton()
                ms_t = triton.testing.do_bench(run_triton, return_mode="median")
                row["triton_tflops"] = flops / ms_t / 1e9
            rows.append(row)
            tle_tf = row.get("tle_tflops", float("nan"))
            tr_tf = row.get("triton_tflops", float("nan"))
            print(f"  {row['config']:22s} err {err:.2e} {'PASS' if ok else 'FAIL'}  tle {tle_tf:7.1f}  triton {tr_tf:7.1f}"
                  f"  tle/triton {tle_tf / tr_tf:5.2f}  tle/cuBLAS {tle_tf / tf_cublas:5.2f}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"dtype": args.dtype, "device": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
                       "group_m": GROUP_M, "results": rows}, f, indent=2)
    sys.exit(0 if all_ok else 1)


if __name__ == "__main__":
    main()
