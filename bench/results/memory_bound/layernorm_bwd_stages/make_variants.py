#!/usr/bin/env python3
"""Builds the suite of this directory's measurement: the layernorm backward cases of
bench/suites/memory_bound.json with the dx kernel compiled from two sources, the loop at
num_stages=2 (the source before) and at num_stages=3 (bench/kernels/layernorm_bwd.tle now).

Usage: make_variants.py TLEC OLD_SOURCE OUT_DIR
Writes OUT_DIR/variants.json and OUT_DIR/kernels/*.sm_90a.cubin; run it with
`tle-bench OUT_DIR/variants.json --kernel-dir OUT_DIR/kernels` (OUT_DIR two directories below the
repository root: the suite names its sources relative to its grandparent directory).
"""
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from variant_suite import ROOT, compile_kernel, load_suite, write_suite  # noqa: E402


def main():
    tlec, old_source, out = sys.argv[1:4]
    suite = load_suite()
    kernels, cases = {}, []
    for case in suite["cases"]:
        if not case["name"].startswith("layernorm_bwd"):
            continue
        for tag, source in (("ns2", old_source), ("ns3", os.path.join(ROOT, "bench", "kernels", "layernorm_bwd.tle"))):
            c = copy.deepcopy(case)
            for launch in c["launches"]:
                k = copy.deepcopy(suite["kernels"][launch["kernel"]])
                if k["entry"] != "layernorm_bwd_dx_kernel":
                    kernels.setdefault(launch["kernel"], k)
                    compile_kernel(tlec, k, out, launch["kernel"])
                    continue
                kname = f"{launch['kernel']}__{tag}"
                kernels[kname] = k
                compile_kernel(tlec, k, out, kname, source=source)
                launch["kernel"] = kname
            c["name"] = c["label"] = f"{case['name']}__{tag}"
            cases.append(c)
    write_suite(suite, kernels, cases, out)


if __name__ == "__main__":
    main()
