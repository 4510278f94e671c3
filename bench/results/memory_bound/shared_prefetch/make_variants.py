#!/usr/bin/env python3
"""Builds the suite of this directory's measurement: the cases of bench/suites/memory_bound.json
whose kernels have loops with an explicit num_stages (layernorm backward's dx and dw/db kernels),
each kernel compiled by two tlec builds: before and after prefetched rows moved from registers to
shared memory.

Usage: make_variants.py OLD_TLEC NEW_TLEC OUT_DIR
Writes OUT_DIR/variants.json (kernels K__old and K__new, one case per suite case and build) and
OUT_DIR/kernels/*.sm_90a.cubin; run it with `tle-bench OUT_DIR/variants.json --kernel-dir
OUT_DIR/kernels` (OUT_DIR two directories below the repository root: the suite names its sources
relative to its grandparent directory).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from variant_suite import Variant, build, suite_cases  # noqa: E402


def main():
    old, new, out = sys.argv[1:4]
    build(out, suite_cases("layernorm_bwd"), [Variant("old", old), Variant("new", new)])


if __name__ == "__main__":
    main()
