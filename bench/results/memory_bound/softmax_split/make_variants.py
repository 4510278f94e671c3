#!/usr/bin/env python3
"""Builds the suite of this directory's job: the online softmax cases of
bench/suites/memory_bound.json run by softmax_split_kernel (SPLIT below, appended to a copy of
bench/kernels/softmax.tle: the first HEAD columns of the row held in registers, the rest through
the online passes in BLOCK-wide chunks) at several HEAD / BLOCK / warp counts, and by the suite's
softmax_online_kernel for comparison in the same job.

Usage: make_variants.py OUT_DIR TLEC
Writes OUT_DIR/variants.json, OUT_DIR/softmax_split.tle and OUT_DIR/kernels/*.sm_90a.cubin; run
tle and Triton on it with
`TLE_BENCH_ARGS="--kernel-dir OUT_DIR/kernels" bash bench/run_suite.sh RESULT_DIR OUT_DIR/variants.json`
(OUT_DIR two directories below the repository root, as for the other make_variants.py scripts).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from variant_suite import ROOT, compile_kernel, load_suite, renamed_case, write_suite  # noqa: E402

SIG = "*fp32:16, *fp32:16, i32:16, i32:16, i32:16"
SPLIT = """


@triton.jit
def softmax_split_kernel(y_ptr, x_ptr, y_row_stride, x_row_stride, n_cols, HEAD: tl.constexpr,
                         BLOCK: tl.constexpr):
    # The first HEAD columns stay in registers as one tile; the rest go through the online
    # passes in BLOCK-wide chunks. Only the rest is read twice, so half as many bytes must stay
    # in the L2 between the passes as in softmax_online_kernel when HEAD is half the row.
    row = tl.program_id(0)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    head_cols = tl.arange(0, HEAD)
    head_mask = head_cols < n_cols
    head = tl.load(x_row + head_cols, mask=head_mask, other=-float('inf'), eviction_policy="evict_first")
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], -1.0e30, tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(HEAD, n_cols, BLOCK):
        mask = off + cols < n_cols
        x = tl.load(x_row + off + cols, mask=mask, other=-float('inf'), eviction_policy="evict_last")
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.maximum(tl.max(head, axis=0), tl.max(m, axis=0))
    head_num = tl.exp(head - row_max)
    inv_sum = 1.0 / (tl.sum(head_num, axis=0) + tl.sum(s * tl.exp(m - row_max), axis=0))
    tl.store(y_row + head_cols, head_num * inv_sum, mask=head_mask, eviction_policy="evict_first")
    for off in tl.range(HEAD, n_cols, BLOCK, num_stages=2):
        mask = off + cols < n_cols
        x = tl.load(x_row + off + cols, mask=mask, other=-float('inf'), eviction_policy="evict_first")
        tl.store(y_row + off + cols, tl.exp(x - row_max) * inv_sum, mask=mask, eviction_policy="evict_first")

"""


def main():
    out, tlec = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    split_source = os.path.join(out, "softmax_split.tle")
    open(split_source, "w").write(open(os.path.join(ROOT, "bench", "kernels", "softmax.tle")).read() + SPLIT)
    suite, cases = load_suite()
    # (case, HEAD or None for the online kernel, BLOCK, warps)
    plan = [("softmax_online_1024x65536", None, 16384, 32),
            ("softmax_online_1024x65536", 32768, 2048, 32),
            ("softmax_online_1024x65536", 32768, 4096, 32),
            ("softmax_online_1024x65536", 32768, 8192, 32),
            ("softmax_online_1024x65536", 16384, 4096, 16),
            ("softmax_online_2048x32768", None, 8192, 16),
            ("softmax_online_2048x32768", 16384, 4096, 16),
            ("softmax_online_2048x32768", 16384, 2048, 16),
            ("softmax_online_2048x32768", 16384, 4096, 32),
            ("softmax_online_4096x16384", None, 8192, 16),
            ("softmax_online_4096x16384", 8192, 2048, 16)]
    kernels, out_cases = {}, []
    for name, head, blk, w in plan:
        if head is None:
            kname = f"online_{blk}_w{w}"
            k = {"source": "bench/kernels/softmax.tle", "entry": "softmax_online_kernel",
                 "signature": f"{SIG}, {blk}", "num_warps": w}
        else:
            kname = f"split_{head}_{blk}_w{w}"
            k = {"source": os.path.relpath(split_source, ROOT), "entry": "softmax_split_kernel",
                 "signature": f"{SIG}, {head}, {blk}", "num_warps": w}
        if kname not in kernels:
            kernels[kname] = k
            compile_kernel(tlec, k, out, kname, source=os.path.join(ROOT, k["source"]))
        out_cases.append(renamed_case(cases[name], f"{name}_{kname}", kname))
    write_suite(out, suite, kernels, out_cases)


if __name__ == "__main__":
    main()
