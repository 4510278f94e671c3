#!/usr/bin/env python3
"""Builds the suite of this directory's measurement: memory-bound cases of
bench/suites/memory_bound.json whose kernels are compiled without ':16' on their integer
arguments (row lengths and strides not known to be multiples of 16, as an ahead-of-time signature
without hints gives them), by two tlec builds, next to the suite's own hinted compile.

Usage: make_variants.py OLD_TLEC NEW_TLEC OUT_DIR
Writes OUT_DIR/variants.json (kernels K__hint, K__nohint_old, K__nohint_new per suite kernel K,
one case per kernel and suite case) and OUT_DIR/kernels/*.sm_90a.cubin; run it with
`tle-bench OUT_DIR/variants.json --kernel-dir OUT_DIR/kernels`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from variant_suite import Variant, build  # noqa: E402

CASES = ["vector_add_2^24", "vector_add_2^27", "softmax_tile_65536x1024", "softmax_tile_16384x4096",
         "softmax_tile_4096x16384", "softmax_online_4096x16384", "layernorm_fwd_16384x4096",
         "layernorm_bwd_16384x4096", "rmsnorm_fwd_16384x4096", "cross_entropy_fwd_4096x32000",
         "silu_and_mul_4096x4096"]


def main():
    old, new, out = sys.argv[1:4]
    unhinted = lambda sig: sig.replace("i32:16", "i32")  # noqa: E731
    build(out, CASES, [Variant("hint", new), Variant("nohint_old", old, signature=unhinted),
                       Variant("nohint_new", new, signature=unhinted)])


if __name__ == "__main__":
    main()
