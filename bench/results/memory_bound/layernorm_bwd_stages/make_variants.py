#!/usr/bin/env python3
"""Builds the suite of this directory's measurement: the layernorm backward cases of
bench/suites/memory_bound.json with the dx kernel compiled from two sources: its row loop at
num_stages=2 (bench/kernels/layernorm_bwd.tle) and at num_stages=3 (a copy written to OUT_DIR).

Usage: make_variants.py TLEC OUT_DIR
Writes OUT_DIR/variants.json and OUT_DIR/kernels/*.sm_90a.cubin; run it with
`tle-bench OUT_DIR/variants.json --kernel-dir OUT_DIR/kernels` (OUT_DIR two directories below the
repository root: the suite names its sources relative to its grandparent directory).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from variant_suite import ROOT, Variant, build, suite_cases  # noqa: E402


def main():
    tlec, out = sys.argv[1:3]
    source = open(os.path.join(ROOT, "bench", "kernels", "layernorm_bwd.tle")).read()
    assert "num_progs, num_stages=2)" in source, "the row loop of layernorm_bwd_dx_kernel is expected at num_stages=2"
    os.makedirs(out, exist_ok=True)
    ns3 = os.path.join(out, "layernorm_bwd_ns3.tle")
    open(ns3, "w").write(source.replace("num_progs, num_stages=2)", "num_progs, num_stages=3)"))
    dx = lambda k: k["entry"] == "layernorm_bwd_dx_kernel"  # noqa: E731
    build(out, suite_cases("layernorm_bwd"), [Variant("ns2", tlec, applies=dx),
                                              Variant("ns3", tlec, source=ns3, applies=dx)])


if __name__ == "__main__":
    main()
