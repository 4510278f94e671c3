"""One fp16/bf16 matmul configuration from bench/matmul_compare.py's sources, tle's cubin and Triton
3.6 on the same source and configuration, launched alternately inside one CUDA profiler range so
that Nsight Compute (which locks the clocks) measures both under the same conditions:

    ncu --profile-from-start off --section SpeedOfLight ... \\
        python3 bench/matmul_profile_pair.py --lib build/runtime/libtle_rt.so --cubins DIR \\
            --source matmul_persistent_tma --dtype bf16 --config 128x256x64x8x3 --size 8192x8192x8192

Both outputs are checked against torch.matmul first (the script exits 1 on a mismatch, before the
profiled range). Inside the range: tle, Triton, tle, Triton, ... (--pairs pairs), so ncu's report
lists the launches in that order. With --dump DIR, Triton's PTX and cubin for the configuration
are written there (triton_<source>_<dtype>_<config>.ptx/.cubin) for a side-by-side read of the
SASS (cuobjdump -sass) with tle's cubin."""
import argparse
import os
import sys

import torch
import triton

from matmul_compare import SOURCE_PREFIX, launch_matmul, launch_triton
from profile_common import dump_compiled, profile_pairs
from tle_ctypes import TleKernel, load_example_kernel, open_runtime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cubins", required=True)
    ap.add_argument("--source", choices=[s for s in SOURCE_PREFIX if s not in ("matmul_epilogue", "matmul_splitk_cluster")],
                    default="matmul_persistent_tma")
    ap.add_argument("--dtype", choices=["fp16", "bf16"], default="bf16")
    ap.add_argument("--config", default="128x256x64x8x3", help="BLOCK_MxBLOCK_NxBLOCK_KxNUM_WARPSxNUM_STAGES")
    ap.add_argument("--size", default="8192x8192x8192", help="MxNxK")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--dump", default="")
    args = ap.parse_args()
    bm, bn, bk, w, s = (int(x) for x in args.config.split("x"))
    m, n, k = (int(x) for x in args.size.split("x"))
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=dt)
    b = torch.randn(k, n, device="cuda", dtype=dt)
    ref = torch.matmul(a, b).double()
    tol = 1e-2 * ref.abs().max().item() + 1e-2
    grid = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    if args.source.startswith("matmul_persistent"):
        grid = min(grid, torch.cuda.get_device_properties(0).multi_processor_count)
    if args.source not in ("matmul", "matmul_persistent"):
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))

    prefix = SOURCE_PREFIX[args.source] + ("_bf16" if args.dtype == "bf16" else "")
    kern = TleKernel(open_runtime(args.lib), os.path.join(args.cubins, f"{prefix}_{bm}x{bn}x{bk}_w{w}_s{s}.sm_90a.cubin"),
                     "matmul_kernel")
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
    c2 = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
    triton_kernel = load_example_kernel(args.source, "matmul_kernel")

    def run_tle():
        launch_matmul(kern, grid, a, b, c, m, n, k)

    def run_triton():
        return launch_triton(triton_kernel, grid, a, b, c2, m, n, k, (bm, bn, bk, w, s))

    run_tle()
    compiled = run_triton()
    torch.cuda.synchronize()
    for name, out in (("tle", c), ("Triton", c2)):
        err = (out.double() - ref).abs().max().item()
        print(f"{name}: max err {err:.2e} ({'PASS' if err <= tol else 'FAIL'})", flush=True)
        if not err <= tol:
            sys.exit(1)
    if args.dump:
        dump_compiled(compiled, args.dump, f"triton_{args.source}_{args.dtype}_{args.config}")
    profile_pairs(run_tle, run_triton, args.pairs)
    print(f"profiled {args.pairs} pairs: tle, Triton, ... ({args.source} {args.dtype} {args.config} {args.size}, grid {grid})")


if __name__ == "__main__":
    main()
