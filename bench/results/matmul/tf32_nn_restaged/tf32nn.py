"""TF32 NN matmul (examples/matmul.tle on fp32 tensors): tlec before / after B is restaged from a
cp.async slot, alternated twice, with Triton 3.6 on the same source and config and cuBLAS (TF32).

Usage (from the repository root): python3 tf32nn.py LIBTLE_RT CUBIN_DIR OUT_JSON
CUBIN_DIR holds nn_old_<BM>x<BN>x<BK>_w<W>.cubin and nn_new_... (README.md has the tlec command)."""
import ctypes, sys, os, json
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
import torch, triton, triton.testing
from tle_ctypes import TleKernel, load_example_kernel, open_runtime
lib = open_runtime(sys.argv[1])
CUBIN_DIR = sys.argv[2]
tk = load_example_kernel("matmul", "matmul_kernel")
rows = []
for (m, n, k) in [(4096, 4096, 4096), (8192, 8192, 8192)]:
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda"); b = torch.randn(k, n, device="cuda")
    ref = a.double() @ b.double()
    torch.backends.cuda.matmul.allow_tf32 = True
    fl = 2.0 * m * n * k
    cb = fl / triton.testing.do_bench(lambda: torch.matmul(a, b), return_mode="median") / 1e9
    for (bm, bn, bk, w) in [(128, 128, 32, 4), (128, 256, 32, 8), (128, 128, 64, 4)]:
        grid = triton.cdiv(m, bm) * triton.cdiv(n, bn)
        res = {}
        for v in ("old", "new", "old", "new"):
            kern = TleKernel(lib, os.path.join(CUBIN_DIR, f"nn_{v}_{bm}x{bn}x{bk}_w{w}.cubin"), "matmul_kernel")
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
            args = [ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(b.data_ptr()), ctypes.c_uint64(c.data_ptr()), ctypes.c_int32(m), ctypes.c_int32(n), ctypes.c_int32(k), ctypes.c_int32(k), ctypes.c_int32(n), ctypes.c_int32(n)]
            st = torch.cuda.current_stream().cuda_stream
            run = lambda: kern.launch((grid,), st, args)
            run(); torch.cuda.synchronize()
            err = (c.double() - ref).abs().max().item()
            ok = err < 2e-2 * ref.abs().max().item() and not torch.isnan(c).any().item()
            res.setdefault(v, []).append(round(fl / triton.testing.do_bench(run, return_mode="median") / 1e9, 1))
            res.setdefault(v + "_err", err); res.setdefault(v + "_ok", ok)
        c2 = torch.empty(m, n, device="cuda", dtype=torch.float32)
        trun = lambda: tk[(grid,)](a, b, c2, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c2.stride(0), c2.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=w, num_stages=3)
        trun(); torch.cuda.synchronize()
        terr = (c2.double() - ref).abs().max().item()
        tt = fl / triton.testing.do_bench(trun, return_mode="median") / 1e9
        row = {"shape": f"{m}x{n}x{k}", "config": f"{bm}x{bn}x{bk} w{w} s3", "old": res["old"], "new": res["new"],
               "old_err": res["old_err"], "new_err": res["new_err"], "ok": res["old_ok"] and res["new_ok"],
               "triton": round(tt, 1), "triton_err": terr, "cublas": round(cb, 1)}
        rows.append(row)
        print(json.dumps(row), flush=True)
json.dump(rows, open(sys.argv[3], "w"), indent=1)
