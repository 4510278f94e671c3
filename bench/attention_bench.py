"""Fused-attention forward benchmark: examples/attention.tle compiled by tlec (cubins launched
through libtle_rt's C ABI with ctypes, on PyTorch's tensors), the same source run by Triton 3.6,
and torch's scaled_dot_product_attention (the back end torch picks, and its flash-attention and
cuDNN back ends each forced), on the same shapes in one process.

Usage: python3 bench/attention_bench.py --lib build/runtime/libtle_rt.so --cubins DIR [--source attention_tma]
                                        [--dtype fp16|bf16] [--compare LABEL=DIR2 ...] [--rounds N] [--warmup-ms MS --rep-ms MS] [--out FILE]
DIR holds attention_d{64,128}_c{0,1}.sm_90a.cubin (BLOCK_M 128, BLOCK_N 64, 8 warps; with --source
attention_tma, examples/attention_tma.tle's attention_tma_d{64,128}_c{0,1}.sm_90a.cubin; with
--source attention_fa3, examples/attention_fa3.tle's attention_fa3_..., against Triton running
attention_tma.tle, the tutorial kernel; with --dtype bf16, attention_bf16_... and
attention_tma_bf16_..., compiled with bf16 pointers). --dims and --causal pick the head dims and
causal values (default 64,128 and 0,1).
--compare times the same cubin names from DIR2 (another compiler build: a before/after in one
process) and reports them per row under "variants".
Checks every output against torch's math attention in fp32 before timing (max abs error < 2e-2)."""
import argparse
import ctypes
import json
import math
import os
import statistics
import sys

import torch
import torch.nn.functional as F
import triton

from profile_common import time_rounds
from tle_ctypes import TleKernel, load_example_kernel, open_runtime

try:
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError:  # an older torch: only the default back end is timed
    SDPBackend = sdpa_kernel = None

BLOCK_M, BLOCK_N, WARPS = 128, 64, 8


def launch_triton(triton_kernel, grid, q, k, v, o, sm_scale, D, causal, stages, descriptors):
    """Triton's launch of the attention source (examples/attention.tle, or attention_tma.tle when
    `descriptors`) on q, k, v, o of shape (Z, H, N_CTX, D) with BLOCK_M, BLOCK_N and WARPS;
    returns Triton's compiled kernel."""
    Z, H, N = q.shape[0], q.shape[1], q.shape[2]
    if descriptors:
        return triton_kernel[grid](q, k, v, o, sm_scale, Z, H, N, HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                                   CAUSAL=causal, num_warps=WARPS, num_stages=stages)
    return triton_kernel[grid](q, k, v, o, sm_scale, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3],
                               *o.stride()[:3], H, N, HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                               CAUSAL=causal, num_warps=WARPS, num_stages=stages)


class AttnKernel:
    def __init__(self, lib, path, descriptors):
        self.kernel = TleKernel(lib, path, "attn_fwd")
        self.descriptors = descriptors  # examples/attention_tma.tle: (..., sm_scale, Z, H, N_CTX)

    def __call__(self, grid, q, k, v, o, sm_scale, H, N):
        vals = [ctypes.c_uint64(q.data_ptr()), ctypes.c_uint64(k.data_ptr()), ctypes.c_uint64(v.data_ptr()),
                ctypes.c_uint64(o.data_ptr()), ctypes.c_float(sm_scale)]
        if self.descriptors:
            vals += [ctypes.c_int32(q.shape[0]), ctypes.c_int32(H), ctypes.c_int32(N)]
        else:
            for t in (q, k, v, o):
                vals += [ctypes.c_int32(t.stride(0)), ctypes.c_int32(t.stride(1)), ctypes.c_int32(t.stride(2))]
            vals += [ctypes.c_int32(H), ctypes.c_int32(N)]
        self.kernel.launch(grid, torch.cuda.current_stream().cuda_stream, vals)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cubins", required=True)
    ap.add_argument("--ctx", default="1024,4096,16384")
    ap.add_argument("--source", choices=["attention", "attention_tma", "attention_fa3"], default="attention",
                    help="examples/attention.tle (pointer tiles) or examples/attention_tma.tle (tensor "
                         "descriptors; cubins attention_tma_d<D>_c<C>.sm_90a.cubin)")
    ap.add_argument("--dtype", choices=["fp16", "bf16"], default="fp16",
                    help="Q, K, V and Out dtype (cubins compiled with that pointer type; bf16 names carry _bf16)")
    ap.add_argument("--compare", action="append", default=[], metavar="LABEL=DIR",
                    help="also time the cubins of the same names in DIR (another compiler's build), checked "
                         "the same way, in the same process; reported per row as variants[LABEL]")
    ap.add_argument("--triton-stages", default="1,3",
                    help="the num_stages values Triton runs the source with (comma-separated); tle / better "
                         "Triton compares against the fastest of them")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time every kernel of a row this many times, interleaved in rotating order (tle, "
                         "variants, Triton at each --triton-stages, SDPA's back ends; then starting one later; ...) so "
                         "that clock and power drift falls on all alike; TFLOP/s are the medians over the rounds, "
                         "and every round and the per-round tle / better-Triton ratio are kept")
    ap.add_argument("--warmup-ms", type=float, default=25,
                    help="do_bench's warm-up time per measurement (default 25, do_bench's own)")
    ap.add_argument("--rep-ms", type=float, default=100,
                    help="do_bench's timed span per measurement (default 100, do_bench's own). A 20 ms kernel is "
                         "then timed 5 times, while the GPU's power management is still settling after the "
                         "previous kernel; longer spans measure closer to its steady state")
    ap.add_argument("--dims", default="64,128", help="head dims (comma-separated; cubins _d<D>_ of each)")
    ap.add_argument("--causal", default="0,1", help="causal values (comma-separated; cubins _c<C>)")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    try:
        triton_stages = [int(x) for x in args.triton_stages.split(",")]
    except ValueError:
        ap.error(f"--triton-stages expects comma-separated integers, got '{args.triton_stages}'")
    if not triton_stages or min(triton_stages) < 1:
        ap.error("--triton-stages needs at least one value, each at least 1")
    compare = []
    for spec in args.compare:
        label, sep, path = spec.partition("=")
        if not sep or not label or not path:
            ap.error(f"--compare expects LABEL=DIR, got '{spec}'")
        compare.append((label, path))
    torch.cuda.init()
    lib = open_runtime(args.lib)
    # attention_fa3 (TLE-Struct, Triton cannot run it) takes attention_tma's arguments; Triton runs
    # the tutorial kernel of the same shapes, attention_tma.
    desc = args.source in ("attention_tma", "attention_fa3")
    triton_kernel = load_example_kernel("attention_tma" if args.source == "attention_fa3" else args.source, "attn_fwd")
    if desc:  # Triton builds in-kernel descriptors in global scratch from its allocator
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    Z, H = 4, 32
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    # Against fp32 math attention: P is rounded to the input dtype before the P.V dot and the
    # output once more, 2^-11 (fp16) or 2^-8 (bf16) relative each.
    tol = 4e-2 if args.dtype == "bf16" else 2e-2
    rows = []
    for D in (int(x) for x in args.dims.split(",")):
        for causal in (int(x) for x in args.causal.split(",")):
            name = f"{args.source}{'_bf16' if args.dtype == 'bf16' else ''}_d{D}_c{causal}.sm_90a.cubin"
            tle = AttnKernel(lib, os.path.join(args.cubins, name), desc)
            others = [(label, AttnKernel(lib, os.path.join(path, name), desc)) for label, path in compare]
            for N in (int(x) for x in args.ctx.split(",")):
                torch.manual_seed(0)
                q, k, v = (torch.randn(Z, H, N, D, device="cuda", dtype=dtype) for _ in range(3))
                sm_scale = 1.0 / math.sqrt(D)
                grid = (triton.cdiv(N, BLOCK_M), Z * H)
                o = torch.full_like(q, float("nan"))
                tle(grid, q, k, v, o, sm_scale, H, N)
                torch.cuda.synchronize()
                sub = slice(0, min(N, 1024))  # reference on the first queries (math kernel, fp32)
                ref = F.scaled_dot_product_attention(q[:, :4].float(), k[:, :4].float(), v[:, :4].float(),
                                                     is_causal=bool(causal), scale=sm_scale)
                err = (o[:, :4, sub].float() - ref[:, :, sub]).abs().max().item()
                ok = err < tol and not torch.isnan(o).any().item()
                flops = 4.0 * Z * H * N * N * D * (0.5 if causal else 1.0)
                row = {"D": D, "causal": causal, "N": N, "max_err": err, "pass": ok}
                timed = {"tle": lambda: tle(grid, q, k, v, o, sm_scale, H, N)}  # key -> callable
                if others:
                    row["variants"] = {}
                for label, kernel in others:
                    o.fill_(float("nan"))
                    kernel(grid, q, k, v, o, sm_scale, H, N)
                    torch.cuda.synchronize()
                    e2 = (o[:, :4, sub].float() - ref[:, :, sub]).abs().max().item()
                    ok2 = e2 < tol and not torch.isnan(o).any().item()
                    row["variants"][label] = {"max_err": e2, "pass": ok2}
                    row["pass"] = row["pass"] and ok2
                    timed[f"variant:{label}"] = lambda kernel=kernel: kernel(grid, q, k, v, o, sm_scale, H, N)
                o2 = torch.empty_like(q)
                for stages in triton_stages:
                    def run_triton(stages=stages):
                        launch_triton(triton_kernel, grid, q, k, v, o2, sm_scale, D, causal, stages, desc)
                    try:
                        run_triton()
                        torch.cuda.synchronize()
                    except Exception as e:  # Triton refuses the shape (shared memory, registers)
                        row[f"triton{stages}_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                        continue
                    timed[f"triton{stages}"] = run_triton
                timed["sdpa"] = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
                for label, backend in (("flash", "FLASH_ATTENTION"), ("cudnn", "CUDNN_ATTENTION")):
                    if sdpa_kernel is None or not hasattr(SDPBackend, backend):
                        continue

                    def run_sdpa(backend=backend):
                        with sdpa_kernel(getattr(SDPBackend, backend)):
                            return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
                    try:
                        run_sdpa()
                        torch.cuda.synchronize()
                    except Exception as e:  # this back end refuses the shape or dtype
                        row[f"sdpa_{label}_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                        continue
                    timed[f"sdpa_{label}"] = run_sdpa
                ms = time_rounds(timed, args.rounds, args.warmup_ms, args.rep_ms)
                tf = {key: [flops / m / 1e9 for m in ms[key]] for key in timed}
                row["tle_ms"] = statistics.median(ms["tle"])
                for key in timed:
                    name, _, label = key.partition(":")
                    if name == "variant":
                        row["variants"][label].update({"ms": statistics.median(ms[key]),
                                                       "tflops": statistics.median(tf[key])})
                        if args.rounds > 1:
                            row["variants"][label]["tflops_rounds"] = tf[key]
                        continue
                    row[f"{key}_tflops"] = statistics.median(tf[key])
                    if args.rounds > 1:
                        row[f"{key}_tflops_rounds"] = tf[key]
                if args.rounds > 1:
                    ran = [st for st in triton_stages if f"triton{st}" in tf]
                    row["tle_over_best_triton_rounds"] = [
                        t / max(tf[f"triton{st}"][r] for st in ran) if ran else float("nan") for r, t in enumerate(tf["tle"])]
                rows.append(row)
                print(f"D={D:3d} causal={causal} N={N:6d} err={err:.2e} {'PASS' if ok else 'FAIL'}  tle {row['tle_tflops']:6.1f}"
                      + "".join(f"  triton({st}) {row.get(f'triton{st}_tflops', float('nan')):6.1f}" for st in triton_stages)
                      + f"  sdpa {row['sdpa_tflops']:6.1f} (flash {row.get('sdpa_flash_tflops', float('nan')):6.1f},"
                      f" cudnn {row.get('sdpa_cudnn_tflops', float('nan')):6.1f}) TFLOP/s"
                      f"  tle/cudnn {row['tle_tflops'] / row.get('sdpa_cudnn_tflops', float('nan')):5.3f}"
                      + "".join(f"  {lb} {v['tflops']:6.1f}{'' if v['pass'] else ' FAIL'}"
                                for lb, v in row.get("variants", {}).items()), flush=True)
                if args.rounds > 1:
                    r = sorted(row["tle_over_best_triton_rounds"])
                    print(f"  {args.rounds} rounds: tle / better Triton per round min {r[0]:5.3f} median "
                          f"{statistics.median(r):5.3f} max {r[-1]:5.3f}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"source": args.source, "dtype": args.dtype, "device": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
                       "rounds": args.rounds, "warmup_ms": args.warmup_ms, "rep_ms": args.rep_ms, "batch": Z, "heads": H, "block": [BLOCK_M, BLOCK_N], "num_warps": WARPS, "results": rows}, f,
                       indent=2)
    sys.exit(0 if all(r["pass"] for r in rows) else 1)


if __name__ == "__main__":
    main()
