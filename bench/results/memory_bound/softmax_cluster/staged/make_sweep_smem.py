#!/usr/bin/env python3
"""Sweep: long-row softmax with each CTA's columns half in registers and half staged in shared memory.
Usage: make_sweep_smem.py OUT_DIR TLEC SMEM_SOURCE NOMASK_SOURCE"""
import copy, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from variant_suite import compile_kernel, load_suite, renamed_case, write_suite

PLAN = [("softmax_online_1024x65536", "example", 4, 16384, 16),
        ("softmax_online_1024x65536", "smem", 2, 16384, 16),
        ("softmax_online_1024x65536", "nomask", 2, 16384, 16),
        ("softmax_online_1024x65536", "smem", 4, 8192, 16),
        ("softmax_online_1024x65536", "smem", 4, 8192, 8),
        ("softmax_online_1024x65536", "nomask", 4, 8192, 16),
        ("softmax_online_2048x32768", "example", 2, 16384, 16),
        ("softmax_online_2048x32768", "smem", 1, 16384, 16),
        ("softmax_online_2048x32768", "smem", 2, 8192, 16),
        ("softmax_online_2048x32768", "nomask", 1, 16384, 16)]

def main():
    out, tlec, smem, nomask = os.path.abspath(sys.argv[1]), sys.argv[2], os.path.abspath(sys.argv[3]), os.path.abspath(sys.argv[4])
    os.makedirs(out, exist_ok=True)
    suite, cases = load_suite()
    kernels, out_cases = {}, []
    for name in dict.fromkeys(p[0] for p in PLAN):
        c = cases[name]; k = c["launches"][0]["kernel"]
        if k not in kernels:
            kernels[k] = suite["kernels"][k]; compile_kernel(tlec, kernels[k], out, k)
        out_cases.append(renamed_case(c, f"{name}__online"))
    for name, kind, cluster, block, warps in PLAN:
        kname = f"softmax_{kind}_c{cluster}_b{block}_w{warps}"
        src = {"example": "examples/softmax_cluster.tle", "smem": smem, "nomask": nomask}[kind]
        if kname not in kernels:
            kernels[kname] = {"source": src if kind == "example" else os.path.relpath(src, os.path.dirname(os.path.dirname(out))),
                              "entry": "softmax_cluster",
                              "signature": f"*fp32:16, *fp32:16, i32:16, i32:16, i32:16, {block}, {cluster}",
                              "num_warps": warps, "archs": ["sm_90a"]}
            compile_kernel(tlec, kernels[kname], out, kname, source=None if kind == "example" else src)
        c = renamed_case(cases[name], f"{name}__{kind}_c{cluster}_w{warps}")
        c["triton_launches"] = copy.deepcopy(c["launches"])
        c["launches"] = [{"kernel": kname, "grid": [f"M*{cluster}"], "args": ["y", "x", "N", "N", "N"]}]
        out_cases.append(c)
    write_suite(out, suite, kernels, out_cases)

main()
