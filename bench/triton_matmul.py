"""Triton 3.6 and cuBLAS (torch.matmul) side of the matmul benchmark: the same
examples/matmul.tle source and block configuration as the tlec cubin, timed with
triton.testing.do_bench (median). Prints one line per (size, implementation) and writes JSON."""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import sys

import torch
import triton
import triton.testing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_kernel():
    path = os.path.join(ROOT, "examples", "matmul.tle")
    loader = importlib.machinery.SourceFileLoader("tle_matmul_example", path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[loader.name] = mod
    loader.exec_module(mod)
    return mod.matmul_kernel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1024x1024x1024,4096x4096x4096,8192x8192x8192")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    kernel = load_kernel()
    rows = []
    for item in args.sizes.split(","):
        m, n, k = (int(x) for x in item.split("x"))
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        ref = torch.matmul(a, b)
        flops = 2.0 * m * n * k
        for stages in (1, 3):
            c = torch.empty(m, n, device="cuda", dtype=torch.float16)
            grid = (triton.cdiv(m, 128) * triton.cdiv(n, 128),)

            def run():
                kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                             c.stride(1), BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, num_warps=4,
                             num_stages=stages)

            run()
            torch.cuda.synchronize()
            err = (c.float() - ref.float()).abs().max().item()
            ms = triton.testing.do_bench(run, return_mode="median")
            rows.append({"m": m, "n": n, "k": k, "impl": f"triton num_stages={stages}", "median_ms": ms,
                         "tflops": flops / (ms * 1e-3) / 1e12, "max_err_vs_cublas": err})
        ms = triton.testing.do_bench(lambda: torch.matmul(a, b), return_mode="median")
        rows.append({"m": m, "n": n, "k": k, "impl": "cuBLAS (torch.matmul)", "median_ms": ms,
                     "tflops": flops / (ms * 1e-3) / 1e12})
    for r in rows:
        print(f"  {r['m']:5d}x{r['n']:5d}x{r['k']:5d}  {r['impl']:24s} median {r['median_ms']:9.4f} ms  "
              f"{r['tflops']:7.1f} TFLOP/s")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"triton": triton.__version__, "torch": torch.__version__,
                       "device": torch.cuda.get_device_name(), "results": rows}, f, indent=2)


if __name__ == "__main__":
    main()
