#!/usr/bin/env python3
"""Config sweep of the memory-bound suite's rows below 0.9 of copy or 1.0x Triton (after the
layernorm backward changes), for tle and Triton in the same job: the same cases with other
num_warps.

Usage: make_variants.py OUT_DIR TLEC
Writes OUT_DIR/variants.json and OUT_DIR/kernels/*.sm_90a.cubin; run tle and Triton on it with
`TLE_BENCH_ARGS="--kernel-dir OUT_DIR/kernels" bash bench/run_suite.sh RESULT_DIR OUT_DIR/variants.json`
(OUT_DIR two directories below the repository root, as for the other make_variants.py scripts).
"""
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from variant_suite import compile_kernel, load_suite, renamed_case, write_suite  # noqa: E402

PLAN = [  # (case, kernel, num_warps)
    *[("layernorm_fwd_4096x16384", "layernorm_fwd_16k", w) for w in (16, 8, 32, 4)],
    *[("silu_and_mul_4096x4096", "silu_and_mul", w) for w in (4, 8, 2)],
    *[("softmax_tile_65536x1024", "softmax_1k", w) for w in (4, 2, 8)],
    *[("cumsum_65536x1024", "cumsum_1k", w) for w in (4, 2, 8)],
    *[("cumsum_16384x4096", "cumsum_4k", w) for w in (8, 4, 16)],
    *[("vector_add_2^24", "vector_add", w) for w in (4, 8)],
]


def main():
    out, tlec = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    suite, cases = load_suite()
    kernels, out_cases = {}, []
    for case, kernel, warps in PLAN:
        name = f"{kernel}_w{warps}"
        if name not in kernels:
            kernels[name] = dict(copy.deepcopy(suite["kernels"][kernel]), num_warps=warps)
            compile_kernel(tlec, kernels[name], out, name)
        assert [launch["kernel"] for launch in cases[case]["launches"]] == [kernel], case
        out_cases.append(renamed_case(cases[case], f"{case}__w{warps}", name))
    write_suite(out, suite, kernels, out_cases)


if __name__ == "__main__":
    main()
