"""Launches TLE-Struct GEMM cubins twice each at 8192^3 (bf16, 128x256x64 tiles, 8 warps, 3
stages), after checking the result against torch, for a profiler to capture (Nsight Compute's
--kernel-name regex:matmul_struct).

Usage: python3 bench/struct_gemm/launch_once.py LIBTLE_RT CUBIN_DIR wsp,mcp
(cubins named as bench/struct_gemm/build.sh names them)."""
import ctypes
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import struct_gemm_bench as sg  # noqa: E402
from tle_ctypes import TleKernel, open_runtime  # noqa: E402


def main():
    lib = open_runtime(sys.argv[1])
    cubins = sys.argv[2]
    m = n = k = 8192
    a, b, _, ref, _ = sg.operands("bf16", m, n, k)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for v in sys.argv[3].split(","):
        kern = TleKernel(lib, f"{cubins}/struct_{v}_bf16_128x256x64_w8_s3.sm_90a.cubin", sg.KERNELS[v.split(".")[0]])
        c = torch.zeros((m, n), device="cuda", dtype=torch.bfloat16)
        vals = [ctypes.c_uint64(t.data_ptr()) for t in (a, b, c)] + [ctypes.c_int32(x) for x in (m, n, k)]
        for _ in range(2):
            kern.launch(sg.grid_of(v, m, n, 128, 256, sms), torch.cuda.current_stream().cuda_stream, vals)
        torch.cuda.synchronize()
        print(v, "maxerr", (c.float() - ref.float()).abs().max().item(), flush=True)


if __name__ == "__main__":
    main()
