#!/usr/bin/env python3
"""Builds the suite of this directory's sweep: the long-row softmax cases of
bench/suites/memory_bound.json run by examples/softmax_cluster.tle (each row split over the CTAs of
a thread-block cluster) at several cluster sizes and warp counts, beside the suite's online kernel.
Triton runs the suite's online kernel in every case (it has no clusters).

Usage: make_sweep.py OUT_DIR TLEC
Writes OUT_DIR/variants.json and OUT_DIR/kernels/*.sm_90a.cubin; run tle and Triton on it with
`TLE_BENCH_ARGS="--kernel-dir OUT_DIR/kernels" bash bench/run_suite.sh RESULT_DIR OUT_DIR/variants.json`
(OUT_DIR two directories below the repository root, as for the other make_variants.py scripts).
"""
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from variant_suite import compile_kernel, load_suite, renamed_case, write_suite  # noqa: E402

# (case, cluster size, columns per CTA, warps)
PLAN = [("softmax_online_1024x65536", c, 65536 // c, w) for c, w in ((2, 32), (4, 8), (4, 16), (8, 8))]
PLAN += [("softmax_online_2048x32768", c, 32768 // c, w) for c, w in ((2, 8), (2, 16), (2, 32))]
PLAN += [("softmax_online_4096x16384", c, 16384 // c, w) for c, w in ((2, 16),)]


# Persistent: (case, cluster size, columns per CTA, warps, clusters in the grid), from the source
# given as the third argument (each cluster loops over rows, loading the next row before the
# current row's exchange).
PERSISTENT = [("softmax_online_1024x65536", 4, 16384, 32, 33), ("softmax_online_1024x65536", 4, 16384, 32, 32),
              ("softmax_online_1024x65536", 8, 8192, 16, 33), ("softmax_online_1024x65536", 8, 8192, 16, 32),
              ("softmax_online_1024x65536", 4, 16384, 16, 33),
              ("softmax_online_2048x32768", 4, 8192, 16, 66), ("softmax_online_2048x32768", 2, 16384, 32, 66)]


def main():
    out, tlec = os.path.abspath(sys.argv[1]), sys.argv[2]
    persistent = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
    os.makedirs(out, exist_ok=True)
    suite, cases = load_suite()
    kernels, out_cases = {}, []
    for name in dict.fromkeys(p[0] for p in PLAN):  # the suite's online kernel first, as the baseline
        c = cases[name]
        k = c["launches"][0]["kernel"]
        if k not in kernels:
            kernels[k] = suite["kernels"][k]
            compile_kernel(tlec, kernels[k], out, k)
        out_cases.append(renamed_case(c, f"{name}__online"))
    for name, cluster, block, warps in PLAN:
        kname = f"softmax_cluster_c{cluster}_b{block}_w{warps}"
        kernels[kname] = {"source": "examples/softmax_cluster.tle", "entry": "softmax_cluster",
                          "signature": f"*fp32:16, *fp32:16, i32:16, i32:16, i32:16, {block}, {cluster}",
                          "num_warps": warps, "archs": ["sm_90a"]}
        compile_kernel(tlec, kernels[kname], out, kname)
        c = renamed_case(cases[name], f"{name}__cluster{cluster}_w{warps}")
        c["triton_launches"] = copy.deepcopy(c["launches"])
        c["launches"] = [{"kernel": kname, "grid": [f"M*{cluster}"], "args": ["y", "x", "N", "N", "N"]}]
        out_cases.append(c)
    for name, cluster, block, warps, clusters in PERSISTENT if persistent else []:
        kname = f"softmax_cluster_persistent_c{cluster}_b{block}_w{warps}"
        if kname not in kernels:
            kernels[kname] = {"source": os.path.relpath(persistent, os.path.dirname(os.path.dirname(out))),
                              "entry": "softmax_cluster",
                              "signature": f"*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16, {block}, {cluster}",
                              "num_warps": warps, "archs": ["sm_90a"]}
            compile_kernel(tlec, kernels[kname], out, kname, source=persistent)
        c = renamed_case(cases[name], f"{name}__persistent{cluster}_w{warps}_g{clusters}")
        c["triton_launches"] = copy.deepcopy(c["launches"])
        c["launches"] = [{"kernel": kname, "grid": [f"{clusters}*{cluster}"], "args": ["y", "x", "N", "N", "M", "N"]}]
        out_cases.append(c)
    write_suite(out, suite, kernels, out_cases)


if __name__ == "__main__":
    main()
