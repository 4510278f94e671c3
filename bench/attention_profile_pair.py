"""One attention-forward configuration from bench/attention_bench.py: tle's cubin and Triton 3.6 on
the same source, launched alternately inside one CUDA profiler range so that Nsight Compute (which
locks the clocks) measures both under the same conditions:

    ncu --profile-from-start off --section SpeedOfLight ... \\
        python3 bench/attention_profile_pair.py --lib build/runtime/libtle_rt.so --cubins DIR \\
            --source attention_tma --dtype bf16 --head-dim 64 --causal 1 --ctx 16384

DIR holds the cubins attention_bench.py reads (attention_tma_bf16_d64_c1.sm_90a.cubin, ...; batch
4, 32 heads, BLOCK_M 128, BLOCK_N 64, 8 warps). Both outputs are checked against torch's fp32 math
attention on the first queries of four heads first (the script exits 1 on a mismatch, before the
profiled range). Inside the range: tle, Triton, tle, Triton, ... (--pairs pairs). --stages is
Triton's num_stages (attention_bench.py times 1 and 3). With --dump DIR, Triton's PTX and cubin
are written there (triton_<source>_<dtype>_d<D>_c<C>_s<S>.ptx/.cubin)."""
import argparse
import math
import os
import sys

import torch
import torch.nn.functional as F
import triton

from attention_bench import BLOCK_M, AttnKernel, launch_triton
from profile_common import dump_compiled, profile_pairs, sustain
from tle_ctypes import load_example_kernel, open_runtime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cubins", required=True)
    ap.add_argument("--source", choices=["attention", "attention_tma"], default="attention_tma")
    ap.add_argument("--dtype", choices=["fp16", "bf16"], default="bf16")
    ap.add_argument("--head-dim", type=int, choices=[64, 128], default=64)
    ap.add_argument("--causal", type=int, choices=[0, 1], default=1)
    ap.add_argument("--ctx", type=int, default=16384)
    ap.add_argument("--stages", type=int, default=3, help="Triton's num_stages")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--dump", default="")
    ap.add_argument("--sustain", type=float, default=0.0, metavar="SECONDS",
                    help="instead of the profiler range: run tle alone back to back for SECONDS, then Triton, "
                         "twice over, while nvidia-smi samples the SM clock, power and temperature every 50 ms; "
                         "prints each phase's launches per second and mean clock, power and temperature")
    args = ap.parse_args()
    Z, H, N, D, causal = 4, 32, args.ctx, args.head_dim, args.causal
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    tol = 4e-2 if args.dtype == "bf16" else 2e-2  # as attention_bench.py
    desc = args.source == "attention_tma"
    if desc:
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    name = f"{args.source}{'_bf16' if args.dtype == 'bf16' else ''}_d{D}_c{causal}.sm_90a.cubin"
    tle = AttnKernel(open_runtime(args.lib), os.path.join(args.cubins, name), desc)
    triton_kernel = load_example_kernel(args.source, "attn_fwd")
    torch.manual_seed(0)
    q, k, v = (torch.randn(Z, H, N, D, device="cuda", dtype=dtype) for _ in range(3))
    sm_scale = 1.0 / math.sqrt(D)
    grid = (triton.cdiv(N, BLOCK_M), Z * H)
    o = torch.full_like(q, float("nan"))
    o2 = torch.full_like(q, float("nan"))

    def run_tle():
        tle(grid, q, k, v, o, sm_scale, H, N)

    def run_triton():
        return launch_triton(triton_kernel, grid, q, k, v, o2, sm_scale, D, causal, args.stages, desc)

    run_tle()
    compiled = run_triton()
    torch.cuda.synchronize()
    sub = slice(0, min(N, 1024))
    ref = F.scaled_dot_product_attention(q[:, :4].float(), k[:, :4].float(), v[:, :4].float(),
                                         is_causal=bool(causal), scale=sm_scale)
    for label, out in (("tle", o), ("Triton", o2)):
        err = (out[:, :4, sub].float() - ref[:, :, sub]).abs().max().item()
        ok = err < tol and not torch.isnan(out).any().item()
        print(f"{label}: max err {err:.2e} ({'PASS' if ok else 'FAIL'})", flush=True)
        if not ok:
            sys.exit(1)
    if args.dump:
        dump_compiled(compiled, args.dump, f"triton_{args.source}_{args.dtype}_d{D}_c{causal}_s{args.stages}")
    if args.sustain > 0:
        sustain(args.sustain, (("tle", run_tle), ("Triton", run_triton)))
        return
    profile_pairs(run_tle, run_triton, args.pairs)
    print(f"profiled {args.pairs} pairs: tle, Triton, ... ({args.source} {args.dtype} D={D} causal={causal} "
          f"N_CTX={N}, Triton num_stages {args.stages}, grid {grid})")


if __name__ == "__main__":
    main()
