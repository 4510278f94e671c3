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
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from variant_suite import compile_kernel, load_suite, write_suite  # noqa: E402


def main():
    builds = {"old": sys.argv[1], "new": sys.argv[2]}
    out = sys.argv[3]
    suite = load_suite()
    kernels, cases = {}, []
    for case in suite["cases"]:
        if not case["name"].startswith("layernorm_bwd"):
            continue
        for tag, tlec in builds.items():
            c = copy.deepcopy(case)
            for launch in c["launches"]:
                k = suite["kernels"][launch["kernel"]]
                kname = f"{launch['kernel']}__{tag}"
                if kname not in kernels:
                    kernels[kname] = k
                    compile_kernel(tlec, k, out, kname)
                launch["kernel"] = kname
            c["name"] = c["label"] = f"{case['name']}__{tag}"
            cases.append(c)
    write_suite(suite, kernels, cases, out)


if __name__ == "__main__":
    main()
