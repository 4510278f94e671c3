"""Matmul side by side in one process: examples/matmul.tle (or, with --source, matmul_tma.tle,
matmul_persistent.tle, matmul_ws.tle, matmul_persistent_tma.tle, matmul_persistent_ws.tle,
matmul_epilogue.tle or matmul_decode.tle) compiled by tlec for each block configuration (cubins launched through libtle_rt's C ABI with ctypes, on PyTorch's tensors), the
same source and configuration run by Triton 3.6, and cuBLAS (torch.matmul), all timed with
triton.testing.do_bench (median; L2 cleared between repetitions). fp16 (or, with --dtype bf16,
bf16) inputs, fp32 accumulation, output in the input dtype. Every output is checked against torch.matmul before it is timed.
With --dtype fp8e4nv: examples/matmul_fp8.tle (A [M, K] and B^T [N, K], both fp8 e4m3, K contiguous;
fp16 output), against cuBLASLt's fp8 GEMM (torch._scaled_mm with unit scales, fp16 output) and
Triton running the same source; checked against the fp32 product of the same fp8 values.
With --dtype int8 or tf32: examples/matmul_tn.tle (A [M, K] and B^T [N, K], K contiguous; int8
operands with int32 output, or fp32 operands multiplied in TF32 with fp32 output), against cuBLAS
(torch._int_mm; torch.matmul with TF32 allowed) and Triton running the same source; checked
against the float64 product (int8: exactly).

Usage: python3 bench/matmul_compare.py --lib build/runtime/libtle_rt.so --cubins DIR
           [--configs 128x128x64x4x3,...] [--sizes MxNxK,...] [--compare LABEL=DIR2 ...] [--out FILE.json]
A config is BLOCK_MxBLOCK_NxBLOCK_KxNUM_WARPSxNUM_STAGES; DIR holds
mm_<BM>x<BN>x<BK>_w<W>_s<S>.sm_90a.cubin for each (bench/build_matmul_cubins.sh writes them; mm_bf16_...
mm_fp8e4nv_..., mm_int8_... and mm_tf32_... for the other dtypes).
--compare times the same cubin names from DIR2 too (another compiler build: a before/after in one
process), checked like the others and interleaved with them in the rounds; each row then has
tle_LABEL_tflops and tle_over_LABEL, the median over the rounds of tle / LABEL."""
import argparse
import ctypes
import json
import os
import statistics
import sys

import torch
import triton
import triton.testing

from profile_common import time_rounds
from tle_ctypes import TleKernel, load_example_kernel, open_runtime

GROUP_M = 8


def launch_matmul(kernel, grid, a, b, c, m, n, k, bias=None):
    ptrs = [ctypes.c_uint64(t.data_ptr()) for t in ((a, b, c) if bias is None else (a, b, c, bias))]
    kernel.launch((grid,), torch.cuda.current_stream().cuda_stream,
                  ptrs + [ctypes.c_int32(m), ctypes.c_int32(n), ctypes.c_int32(k), ctypes.c_int32(a.stride(0)),
                          ctypes.c_int32(b.stride(0)), ctypes.c_int32(c.stride(0))])


def launch_triton(triton_kernel, grid, a, b, c, m, n, k, config, bias=None):
    """Triton's launch of the matmul source on a (M x K), b (K x N), c (M x N) and the optional
    bias, with `config` = (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) and GROUP_M; returns
    Triton's compiled kernel."""
    bm, bn, bk, w, s = config
    ptrs = (a, b, c) if bias is None else (a, b, c, bias)
    return triton_kernel[(grid,)](*ptrs, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                  c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                  GROUP_M=GROUP_M, num_warps=w, num_stages=s)


# --source: the cubins' prefix for each example (bench/build_matmul_cubins.sh's SOURCE_PREFIX).
SOURCE_PREFIX = {"matmul": "mm", "matmul_tma": "mmtma", "matmul_persistent": "mmpers", "matmul_ws": "mmws",
                 "matmul_persistent_tma": "mmptma", "matmul_persistent_ws": "mmpws", "matmul_epilogue": "mmepi",
                 "matmul_splitk_cluster": "mmskc", "matmul_decode": "mmdec"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cubins", required=True)
    ap.add_argument("--configs", default="128x128x64x4x3")
    ap.add_argument("--sizes", default="4096x4096x4096,8192x8192x8192,8192x8192x1024")
    ap.add_argument("--dtype", choices=["fp16", "bf16", "fp8e4nv", "int8", "tf32"], default="fp16")
    ap.add_argument("--source", choices=list(SOURCE_PREFIX), default="matmul",
                    help="examples/matmul.tle (pointer tiles), examples/matmul_tma.tle (tensor descriptors; "
                         "cubins mmtma_...), examples/matmul_persistent.tle (one program per SM, looping "
                         "over the tiles; cubins mmpers_...), examples/matmul_ws.tle (matmul_tma with its K "
                         "loop warp-specialised; cubins mmws_...), examples/matmul_persistent_tma.tle (the "
                         "persistent loop through tensor descriptors; cubins mmptma_...), "
                         "examples/matmul_persistent_ws.tle (it with the loop over tiles warp-specialised; "
                         "cubins mmpws_...) or examples/matmul_epilogue.tle (the persistent TMA kernel with "
                         "C = relu(A @ B + bias) fused; against cuBLASLt's bias + ReLU epilogue, "
                         "torch._addmm_activation; cubins mmepi_...) or examples/matmul_splitk_cluster.tle (K split over "
                         "a cluster of --split-k CTAs; cubins mmskc<S>_...; Triton, which has no clusters, "
                         "runs examples/matmul_tma.tle with the same tiles) or examples/matmul_decode.tle (C^T = B^T A^T, "
                         "for few rows; cubins mmdec_...)")
    ap.add_argument("--split-k", type=int, default=2, help="matmul_splitk_cluster's cluster size (SPLIT_K)")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--compare", action="append", default=[], metavar="LABEL=DIR",
                    help="also time the same cubins from DIR (another build of tlec), labelled LABEL")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time each configuration's tle, Triton and cuBLAS kernels this many times, interleaved "
                         "in rotating order (tle, Triton, cuBLAS; then Triton, cuBLAS, tle; ...) so that clock "
                         "and power drift during the job falls on all three alike; the row's TFLOP/s are the "
                         "medians over the rounds, and the per-round values and tle/Triton ratios are kept")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    compare = []
    for spec in args.compare:
        label, _, path = spec.partition("=")
        if not label or not path or not label.isidentifier():
            ap.error(f"--compare expects LABEL=DIR (LABEL a name), got '{spec}'")
        compare.append((label, path))
    torch.cuda.init()
    lib = open_runtime(args.lib)
    fp8 = args.dtype == "fp8e4nv"
    tn = args.dtype in ("int8", "tf32")  # examples/matmul_tn.tle
    if (fp8 or tn) and args.source != "matmul":
        ap.error("--source " + args.source + " is fp16 or bf16")
    if args.dtype == "tf32":
        torch.backends.cuda.matmul.allow_tf32 = True  # cuBLAS's TF32 GEMM, as tl.dot's default precision
    kernel_name = "matmul_tn_kernel" if tn else "matmul_kernel"
    splitk = args.source == "matmul_splitk_cluster"
    triton_source = "matmul_tma" if splitk else args.source
    triton_kernel = load_example_kernel("matmul_fp8" if fp8 else "matmul_tn" if tn else triton_source, kernel_name)
    epilogue = args.source == "matmul_epilogue"
    if args.source not in ("matmul", "matmul_persistent"):
        # Triton builds in-kernel tensor descriptors in global scratch memory from its allocator.
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    configs = [tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
    rows, all_ok = [], True
    for item in args.sizes.split(","):
        m, n, k = (int(x) for x in item.split("x"))
        torch.manual_seed(0)
        dt = {"fp16": torch.float16, "fp8e4nv": torch.float16, "bf16": torch.bfloat16, "int8": torch.int32,
              "tf32": torch.float32}[args.dtype]  # output dtype
        if args.dtype == "int8":
            a = torch.randint(-128, 128, (m, k), device="cuda", dtype=torch.int8)
            b = torch.randint(-128, 128, (n, k), device="cuda", dtype=torch.int8)  # B^T, K contiguous
            ref = torch.matmul(a.double(), b.double().t())

            def cublas():
                return torch._int_mm(a, b.t())
        elif args.dtype == "tf32":
            a = torch.randn(m, k, device="cuda")
            b = torch.randn(n, k, device="cuda")  # B^T, K contiguous
            ref = torch.matmul(a.double(), b.double().t())

            def cublas():
                return torch.matmul(a, b.t())
        elif fp8:
            a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
            b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)  # B^T, K contiguous
            ref = torch.matmul(a.float(), b.float().t())
            one = torch.ones((), device="cuda")

            def cublas():
                return torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.float16)
        else:
            a = torch.randn(m, k, device="cuda", dtype=dt)
            b = torch.randn(k, n, device="cuda", dtype=dt)
            ref = torch.matmul(a, b).float()

            def cublas():
                return torch.matmul(a, b)
        bias = None
        if epilogue:  # C = relu(A @ B + bias), bias one value per column
            bias = torch.randn(n, device="cuda", dtype=dt) * 8
            ref = torch.relu(torch.matmul(a.float(), b.float()) + bias.float())

            def cublas():
                return torch._addmm_activation(bias, a, b)
        flops = 2.0 * m * n * k
        cerr = (cublas().double() - ref.double()).abs().max().item()
        ms_cublas = triton.testing.do_bench(cublas, return_mode="median")
        tf_cublas = flops / ms_cublas / 1e9
        tf_fast = None
        if fp8:  # cuBLASLt's fp8 GEMM also with fast (tensor-core precision) accumulation, as tl.dot's default
            def cublas_fast():
                return torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.float16, use_fast_accum=True)
            tf_fast = flops / triton.testing.do_bench(cublas_fast, return_mode="median") / 1e9
            print(f"{m}x{n}x{k}: cuBLAS fast accumulation {tf_fast:7.1f} TFLOP/s", flush=True)
        print(f"{m}x{n}x{k}: cuBLAS {tf_cublas:7.1f} TFLOP/s (max err {cerr:.2e})", flush=True)
        for (bm, bn, bk, w, s) in configs:
            grid = triton.cdiv(m, bm) * triton.cdiv(n, bn)
            if args.source.startswith("matmul_persistent") or epilogue:  # one program per SM (fewer when fewer tiles)
                grid = min(grid, torch.cuda.get_device_properties(0).multi_processor_count)
            tle_grid = grid * args.split_k if splitk else grid  # a cluster of SPLIT_K CTAs per tile
            row = {"m": m, "n": n, "k": k, "config": f"{bm}x{bn}x{bk} w{w} s{s}", "cublas_tflops": tf_cublas,
                   "cublas_max_err": cerr}
            if tf_fast is not None:
                row["cublas_fast_accum_tflops"] = tf_fast
            prefix = {"fp16": "mm", "bf16": "mm_bf16", "fp8e4nv": "mm_fp8e4nv", "int8": "mm_int8", "tf32": "mm_tf32"}[args.dtype]
            prefix = prefix.replace("mm", SOURCE_PREFIX[args.source] + (str(args.split_k) if splitk else ""), 1)
            path = os.path.join(args.cubins, f"{prefix}_{bm}x{bn}x{bk}_w{w}_s{s}.sm_90a.cubin")
            kern = TleKernel(lib, path, kernel_name)
            tle = lambda *xs: launch_matmul(kern, *xs, bias=bias)  # noqa: E731
            poison = -2**31 if dt == torch.int32 else float("nan")
            c = torch.full((m, n), poison, device="cuda", dtype=dt)
            tle(tle_grid, a, b, c, m, n, k)
            torch.cuda.synchronize()
            err = (c.double() - ref.double()).abs().max().item()
            tol = 0.0 if dt == torch.int32 else 1e-2 * ref.abs().max().item() + 1e-2  # int8: exact
            ok = err <= tol and not torch.isnan(c.double()).any().item()
            all_ok &= ok
            row.update({"tle_max_err": err, "pass": ok})
            timed = {}  # name -> the callable timed for it, in this configuration's rounds
            if ok:
                timed["tle"] = lambda: tle(tle_grid, a, b, c, m, n, k)
            for label, cdir in compare:  # the same cubin from another build, checked the same way
                other = TleKernel(lib, os.path.join(cdir, os.path.basename(path)), kernel_name)
                run_other = (lambda kk: lambda *xs: launch_matmul(kk, *xs, bias=bias))(other)
                c.fill_(poison)
                run_other(tle_grid, a, b, c, m, n, k)
                torch.cuda.synchronize()
                oerr = (c.double() - ref.double()).abs().max().item()
                ook = oerr <= tol and not torch.isnan(c.double()).any().item()
                all_ok &= ook
                row.update({f"tle_{label}_max_err": oerr, f"tle_{label}_pass": ook})
                if ook:
                    timed[f"tle_{label}"] = (lambda ro: lambda: ro(tle_grid, a, b, c, m, n, k))(run_other)
            if not args.no_triton:
                c2 = torch.empty((m, n), device="cuda", dtype=dt)

                def run_triton():
                    launch_triton(triton_kernel, grid, a, b, c2, m, n, k, (bm, bn, bk, w, s), bias)
                try:
                    run_triton()
                    torch.cuda.synchronize()
                except Exception as e:  # e.g. a Triton build that rejects the source's options
                    row["triton_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                    print(f"  Triton failed: {row['triton_error']}", flush=True)
                else:
                    row["triton_max_err"] = (c2.double() - ref.double()).abs().max().item()
                    timed["triton"] = run_triton
            if args.rounds > 1:
                timed["cublas"] = cublas
            ms = time_rounds(timed, args.rounds)
            per_round = {name: [flops / t / 1e9 for t in ms[name]] for name in timed}
            for name in timed:
                row[f"{name}_tflops"] = statistics.median(per_round[name])
                if args.rounds > 1:
                    row[f"{name}_tflops_rounds"] = per_round[name]
            if args.rounds > 1 and "tle" in timed and "triton" in timed:
                row["tle_over_triton_rounds"] = [x / y for x, y in zip(per_round["tle"], per_round["triton"])]
            for label, _ in compare:
                if "tle" in timed and f"tle_{label}" in timed:
                    ratios = [x / y for x, y in zip(per_round["tle"], per_round[f"tle_{label}"])]
                    row[f"tle_over_{label}"] = statistics.median(ratios)
                    row[f"tle_over_{label}_rounds"] = ratios
                    print(f"  tle/{label} per round {' '.join(f'{x:5.3f}' for x in ratios)}; median "
                          f"{row[f'tle_over_{label}']:5.3f}", flush=True)
            rows.append(row)
            tle_tf = row.get("tle_tflops", float("nan"))
            tr_tf = row.get("triton_tflops", float("nan"))
            fast = f"  tle/cuBLAS-fast {tle_tf / tf_fast:5.2f}" if tf_fast else ""
            print(f"  {row['config']:22s} err {err:.2e} {'PASS' if ok else 'FAIL'}  tle {tle_tf:7.1f}  triton {tr_tf:7.1f}"
                  f"  tle/triton {tle_tf / tr_tf:5.2f}  tle/cuBLAS {tle_tf / row['cublas_tflops']:5.2f}{fast}", flush=True)
            if "tle_over_triton_rounds" in row:
                q = sorted(row["tle_over_triton_rounds"])
                print(f"  {args.rounds} rounds: tle/triton per round min {q[0]:5.3f} median "
                      f"{statistics.median(q):5.3f} max {q[-1]:5.3f}; cuBLAS median {row['cublas_tflops']:7.1f}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"dtype": args.dtype, "source": args.source, "triton_source": triton_source,
                   "split_k": args.split_k if splitk else None, "device": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
                       "group_m": GROUP_M, "results": rows}, f, indent=2)
    sys.exit(0 if all_ok else 1)


if __name__ == "__main__":
    main()
