#!/usr/bin/env python3
"""Builds the configuration sweep of this directory: the layernorm backward cases of
bench/suites/memory_bound.json with the dx kernel at other num_warps, programs per SM (P) and
NUM_STAGES, compiled by two tlec builds (`batch`: before the scalar prefetch; `now`).

Usage: make_sweep.py OUT_DIR TLEC_BATCH TLEC_NOW
Writes OUT_DIR/variants.json and OUT_DIR/kernels/*.sm_90a.cubin; run tle and Triton on it with
`TLE_BENCH_ARGS="--kernel-dir OUT_DIR/kernels" bash bench/run_suite.sh RESULT_DIR OUT_DIR/variants.json`
(OUT_DIR two directories below the repository root, as for the other make_variants.py scripts).
"""
import copy
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from variant_suite import compile_kernel, load_suite, renamed_case, write_suite  # noqa: E402

# case: (columns, [(tlec tag, NUM_STAGES, num_warps, programs per SM)])
PLAN = {
    "layernorm_bwd_65536x1024": (1024, [("batch", 2, 4, 4), ("now", 2, 4, 4), ("now", 3, 4, 4), ("now", 2, 4, 7),
                                        ("now", 2, 2, 8), ("now", 3, 2, 8), ("now", 2, 2, 12)]),
    "layernorm_bwd_16384x4096": (4096, [("batch", 2, 16, 1), ("now", 2, 16, 1), ("now", 2, 8, 2), ("now", 3, 8, 2),
                                        ("now", 3, 4, 2), ("now", 2, 4, 2)]),
    "layernorm_bwd_8192x8192": (8192, [("batch", 2, 16, 1), ("now", 2, 16, 1), ("now", 3, 16, 1), ("now", 3, 8, 1),
                                       ("now", 2, 32, 1), ("now", 3, 32, 1)]),
}
SIG = "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, *fp32:16, *fp32:16, i32:16, i32, i32:16"


def main():
    out, tlecs = sys.argv[1], {"batch": sys.argv[2], "now": sys.argv[3]}
    os.makedirs(out, exist_ok=True)
    suite, cases = load_suite()
    dwdb = suite["kernels"]["layernorm_bwd_dwdb"]
    kernels = {"layernorm_bwd_dwdb": dwdb}
    compile_kernel(tlecs["now"], dwdb, out, "layernorm_bwd_dwdb")
    out_cases = []
    for name, (n, variants) in PLAN.items():
        for tag, stages, warps, per_sm in variants:
            kname = f"dx{n}_{tag}_s{stages}_w{warps}"
            if kname not in kernels:
                kernels[kname] = {"source": "bench/kernels/layernorm_bwd.tle", "entry": "layernorm_bwd_dx_kernel",
                                  "signature": f"{SIG}, {n}, {stages}", "num_warps": warps}
                compile_kernel(tlecs[tag], kernels[kname], out, kname)
            c = renamed_case(cases[name], f"{name}_{tag}_s{stages}_w{warps}_P{per_sm}", kname)
            c["vars"]["P"] = f"min(M, {per_sm} * SMS)"
            out_cases.append(c)
    write_suite(out, suite, kernels, out_cases)


if __name__ == "__main__":
    main()
