#!/usr/bin/env python3
"""What layout assignment does over the project's kernels: for every compile of
scripts/compare_ptx.py's list (the corpus, the GPU test kernels, the examples and the benchmark
kernels, each for sm_90a and sm_80), `tlec --layout-stats --emit=gpu`, summed per group.

Usage: scripts/layout_stats.py TLEC [--jobs N] [--each]

Per group: the tiles given a layout, the convert_layout ops inserted (each moves a tile through
shared memory), and the conversions avoided: operands whose layout differs from the one their use
needs but whose registers only need renumbering, and cheap index arithmetic recomputed in the
needed layout instead of converted; also the elementwise results kept in an anchored operand's
layout (transforms::LayoutAssignmentStats). --each prints one line per compile. Exit status 1 when
a compile fails.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_ptx import ROOT, compiles  # noqa: E402

LINE = re.compile(r"tlec: layout stats: (\S+): (\d+) tiles, (\d+) convert_layout inserted; conversions avoided: "
                  r"(\d+) by renumbering registers, (\d+) by recomputing index arithmetic; (\d+) elementwise")
FIELDS = ("tiles", "convert_layout", "renumbered", "recomputed", "kept")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tlec")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--each", action="store_true", help="one line per compile")
    a = ap.parse_args()

    def one(w):
        name, args, arch = w
        p = subprocess.run([a.tlec] + args + ["--arch", arch, "--emit=gpu", "--layout-stats", "-o", os.devnull],
                           capture_output=True, text=True, cwd=ROOT)
        m = LINE.search(p.stderr)
        return name, arch, p.returncode, [int(x) for x in m.groups()[1:]] if m else None

    groups, failed = {}, 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for name, arch, rc, vals in ex.map(one, compiles()):
            if rc != 0 or vals is None:
                failed += 1
                print(f"failed: {name} ({arch}): exit status {rc}")
                continue
            if a.each:
                print(f"{name} ({arch}): " + ", ".join(f"{k} {v}" for k, v in zip(FIELDS, vals)))
            g = name.split("/")[0]
            tot = groups.setdefault(g, [0] * (len(FIELDS) + 1))
            tot[0] += 1
            for i, v in enumerate(vals):
                tot[i + 1] += v
    print("| group | compiles | " + " | ".join(FIELDS) + " |")
    print("| --- |" + " ---: |" * (len(FIELDS) + 1))
    total = [0] * (len(FIELDS) + 1)
    for g in sorted(groups):
        print(f"| {g} | " + " | ".join(str(x) for x in groups[g]) + " |")
        total = [t + x for t, x in zip(total, groups[g])]
    print("| all | " + " | ".join(str(x) for x in total) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
