#!/usr/bin/env python3
"""Builds the suite of this directory's attribution run: the layernorm backward cases of
bench/suites/memory_bound.json at the suite's configurations, the dx kernel compiled by four
tlec builds: before the two compiler changes, with the shared reduce exchange only, with the
scalar prefetch only (the final build with Emitter::reduceBatch returning no reduces), and with
both.

Usage: make_variants.py OUT_DIR TLEC_BEFORE TLEC_BATCH TLEC_SCALAR TLEC_NOW
Writes OUT_DIR/variants.json and OUT_DIR/kernels/*.sm_90a.cubin; run it with
`tle-bench OUT_DIR/variants.json --kernel-dir OUT_DIR/kernels` (OUT_DIR two directories below the
repository root, as for the other make_variants.py scripts).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from variant_suite import Variant, build, suite_cases  # noqa: E402


def main():
    out, before, batch, scalar, now = sys.argv[1:6]
    os.makedirs(out, exist_ok=True)
    dx = lambda k: k["entry"] == "layernorm_bwd_dx_kernel"  # noqa: E731
    variants = [Variant("before", before, applies=dx), Variant("batch", batch, applies=dx),
                Variant("scalar", scalar, applies=dx), Variant("now", now, applies=dx)]
    # Twice, interleaved, to show the spread between repetitions.
    build(out, suite_cases("layernorm_bwd") * 2, variants)
    path = os.path.join(out, "variants.json")
    suite = json.load(open(path))
    seen = set()
    for c in suite["cases"]:
        if c["name"] in seen:
            c["name"] = c["label"] = c["name"] + "__r2"
        seen.add(c["name"])
    json.dump(suite, open(path, "w"), indent=1)


if __name__ == "__main__":
    main()
