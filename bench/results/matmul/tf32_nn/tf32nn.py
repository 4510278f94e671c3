"""TF32 matmul with B in its natural [K, N] layout: examples/matmul.tle with fp32 A and B (fp16 C),
compiled by two tlec builds (LABELS, cubins CUBINS/nn_<label>_<BM>x<BN>x<BK>_w<W>.cubin), each
timed twice, alternating, next to Triton 3.6 on the same source and configuration and cuBLAS
(torch.matmul with TF32 allowed), in one process. Every tle output is checked against the
float64 product first.

Usage (from the repository root): python3 bench/results/matmul/tf32_nn/tf32nn.py LIB CUBINS LABEL_A,LABEL_B"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))  # bench/
import torch  # noqa: E402
import triton  # noqa: E402
import triton.testing  # noqa: E402
from tle_ctypes import TleKernel, load_example_kernel, open_runtime  # noqa: E402

lib_path, cubins, labels = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
lib = open_runtime(lib_path)
tk = load_example_kernel("matmul", "matmul_kernel")
torch.backends.cuda.matmul.allow_tf32 = True
for (m, n, k) in [(4096, 4096, 4096), (8192, 8192, 8192)]:
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    ref = a.double() @ b.double()
    fl = 2.0 * m * n * k
    ms_cb = triton.testing.do_bench(lambda: torch.matmul(a, b), return_mode="median")
    for (bm, bn, bk, w) in [(128, 128, 32, 4), (128, 256, 32, 8)]:
        grid = triton.cdiv(m, bm) * triton.cdiv(n, bn)
        res = {}
        for v in labels + labels:
            kern = TleKernel(lib, os.path.join(cubins, f"nn_{v}_{bm}x{bn}x{bk}_w{w}.cubin"), "matmul_kernel")
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
            args = [ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(b.data_ptr()), ctypes.c_uint64(c.data_ptr()),
                    ctypes.c_int32(m), ctypes.c_int32(n), ctypes.c_int32(k), ctypes.c_int32(k), ctypes.c_int32(n),
                    ctypes.c_int32(n)]
            run = lambda: kern.launch((grid,), torch.cuda.current_stream().cuda_stream, args)  # noqa: E731
            run()
            torch.cuda.synchronize()
            err = (c.double() - ref).abs().max().item()
            assert err < 1e-2 * ref.abs().max().item() + 1e-2 and not torch.isnan(c).any().item(), (v, err)
            res.setdefault(v, []).append(fl / triton.testing.do_bench(run, return_mode="median") / 1e9)
        c2 = torch.empty(m, n, device="cuda", dtype=torch.float16)

        def trun():
            tk[(grid,)](a, b, c2, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c2.stride(0),
                        c2.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=w, num_stages=3)
        trun()
        torch.cuda.synchronize()
        terr = (c2.double() - ref).abs().max().item()
        tt = fl / triton.testing.do_bench(trun, return_mode="median") / 1e9
        tle = "  ".join(f"{v} {' '.join(f'{x:.1f}' for x in res[v])}" for v in labels)
        print(f"{m}x{n}x{k} {bm}x{bn}x{bk} w{w}: tle {tle} (err {err:.2e})  triton {tt:.1f} (err {terr:.2e})  "
              f"cuBLAS {fl / ms_cb / 1e9:.1f}", flush=True)
