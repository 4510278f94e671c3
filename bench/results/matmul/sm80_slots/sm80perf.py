"""sm_80 PTX (mma.sync) of the TF32 / int8 matmuls, before and after their operands were pipelined
through cp.async slots, timed on this GPU (the driver JIT-compiles the PTX); each output checked.

Usage: python3 sm80perf.py LIBTLE_RT PTX_DIR OUT_JSON
PTX_DIR holds NAME.old.sm_80.ptx and NAME.new.sm_80.ptx for NAME = matmul_tn, matmul_tn_tf32,
matmul_tf32 (see README.md for the tlec commands)."""
import ctypes, os, sys, json
import torch, triton, triton.testing
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', '..', '..'))
from tle_ctypes import TleKernel, open_runtime
lib = open_runtime(sys.argv[1])
D = sys.argv[2]
rows = []
for m, n, k in [(4096, 4096, 4096), (8192, 8192, 2048)]:
    for name, kern, dt in [("matmul_tn", "matmul_tn_kernel", "int8"), ("matmul_tn_tf32", "matmul_tn_kernel", "tf32"),
                           ("matmul_tf32", "matmul_kernel", "tf32nn")]:
        torch.manual_seed(0)
        if dt == "int8":
            a = torch.randint(-128, 128, (m, k), device="cuda", dtype=torch.int8)
            b = torch.randint(-128, 128, (n, k), device="cuda", dtype=torch.int8)
            c = torch.empty(m, n, device="cuda", dtype=torch.int32)
            ref = (a.double() @ b.double().T)
        else:
            a = torch.rand(m, k, device="cuda") - 0.5
            b = torch.rand(n, k, device="cuda") - 0.5 if dt == "tf32" else torch.rand(k, n, device="cuda") - 0.5
            c = torch.empty(m, n, device="cuda", dtype=torch.float32)
            ref = a.double() @ (b.double().T if dt == "tf32" else b.double())
        grid = triton.cdiv(m, 128) * triton.cdiv(n, 128)
        res = {}
        for v in ("old", "new"):
            kk = TleKernel(lib, os.path.join(D, f"{name}.{v}.sm_80.ptx"), kern)
            args = [ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(b.data_ptr()), ctypes.c_uint64(c.data_ptr()),
                    ctypes.c_int32(m), ctypes.c_int32(n), ctypes.c_int32(k), ctypes.c_int32(a.stride(0)),
                    ctypes.c_int32(b.stride(0)), ctypes.c_int32(c.stride(0))]
            st = torch.cuda.current_stream().cuda_stream
            c.fill_(-1)
            kk.launch((grid,), st, args); torch.cuda.synchronize()
            err = (c.double() - ref).abs().max().item()
            ms = triton.testing.do_bench(lambda: kk.launch((grid,), st, args), return_mode="median")
            res[v] = (2 * m * n * k / ms / 1e9, err)
        row = {"case": f"{name} {m}x{n}x{k}", "old_tflops": res["old"][0], "new_tflops": res["new"][0],
               "old_err": res["old"][1], "new_err": res["new"][1]}
        rows.append(row)
        print(f"{row['case']:32s} before {res['old'][0]:7.1f}  after {res['new'][0]:7.1f}  after/before {res['new'][0]/res['old'][0]:5.2f}"
              f"  max err {res['old'][1]:.3g} / {res['new'][1]:.3g}", flush=True)
json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, open(sys.argv[3], "w"), indent=1)
