#!/usr/bin/env python3
"""Builds the suite of this directory's two jobs: the online softmax cases of
bench/suites/memory_bound.json with the kernel from three sources (`a`: bench/kernels/softmax.tle;
`b`: its first pass at `tl.range(num_stages=2)`; `r`: its second pass over the chunks in reverse
order) at 4K, 8K and 16K columns per chunk (8, 16 and 32 warps).

Usage: make_variants.py OUT_DIR TLEC
Writes OUT_DIR/variants.json, the two variant sources and OUT_DIR/kernels/*.sm_90a.cubin; run tle
and Triton on it with
`TLE_BENCH_ARGS="--kernel-dir OUT_DIR/kernels" bash bench/run_suite.sh RESULT_DIR OUT_DIR/variants.json`
(OUT_DIR two directories below the repository root, as for the other make_variants.py scripts).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from variant_suite import ROOT, compile_kernel, load_suite, renamed_case, write_suite  # noqa: E402

FIRST = """    for off in range(0, n_cols, BLOCK):
        mask = off + cols < n_cols
        x = tl.load(x_row + off + cols, mask=mask, other=-float('inf'), eviction_policy="evict_last")"""
SECOND = """    for off in tl.range(0, n_cols, BLOCK, num_stages=2):
        mask = off + cols < n_cols"""
REVERSED = """    n_chunks = tl.cdiv(n_cols, BLOCK)
    for i in tl.range(0, n_chunks, num_stages=2):
        off = (n_chunks - 1 - i) * BLOCK
        mask = off + cols < n_cols"""


def main():
    out, tlec = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    src = open(os.path.join(ROOT, "bench", "kernels", "softmax.tle")).read()
    assert FIRST in src and SECOND in src, "bench/kernels/softmax.tle's online kernel changed"
    sources = {"a": os.path.join(ROOT, "bench", "kernels", "softmax.tle"),
               "b": os.path.join(out, "softmax_b.tle"), "r": os.path.join(out, "softmax_r.tle")}
    open(sources["b"], "w").write(src.replace(FIRST, FIRST.replace("range(0, n_cols, BLOCK)",
                                                                   "tl.range(0, n_cols, BLOCK, num_stages=2)")))
    open(sources["r"], "w").write(src.replace(SECOND, REVERSED))
    suite, cases = load_suite()
    plan = [("softmax_online_1024x65536", v, blk, w) for v in "abr" for blk, w in ((4096, 8), (8192, 16), (16384, 32))]
    plan += [("softmax_online_2048x32768", v, blk, w) for v in "abr" for blk, w in ((4096, 8), (8192, 16), (16384, 32))]
    plan += [("softmax_online_4096x16384", v, 8192, 16) for v in "ar"]
    kernels, out_cases = {}, []
    for name, v, blk, w in plan:
        kname = f"on_{v}_{blk}_w{w}"
        if kname not in kernels:
            kernels[kname] = {"source": os.path.relpath(sources[v], ROOT), "entry": "softmax_online_kernel",
                              "signature": f"*fp32:16, *fp32:16, i32:16, i32:16, i32:16, {blk}", "num_warps": w}
            compile_kernel(tlec, kernels[kname], out, kname, source=sources[v])
        out_cases.append(renamed_case(cases[name], f"{name}_{kname}", kname))
    write_suite(out, suite, kernels, out_cases)


if __name__ == "__main__":
    main()
