#!/usr/bin/env python3
# Compiles the project's kernels with two tlec builds and reports, per kernel, whether their PTX is identical and each one's shared bytes.
#
# Usage: compare_compilers.py --old TLEC --new TLEC [--source-dir REPO] [--jobs N] [--markdown FILE]
#                             [--diff-dir DIR]
# Kernels: those of tests/determinism/check_determinism.py (every example for sm_80 and sm_90a, the
# first RUN line of each lit kernel under tests/lit/{ptx,control,tile,gpu}, every GPU-test kernel
# variant). Shared bytes are the metadata's `shared_bytes` (the kernel's dynamic shared memory).
# With --diff-dir, the two PTX files of each kernel that differs are written there. Exit status 0
# when both compilers compile every kernel (whatever the differences), 1 otherwise.
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "determinism"))
from check_determinism import find_cases  # noqa: E402

def compile_ptx(tlec, case):
    """Returns (ptx text, shared bytes or None, error or None)."""
    _, path, sig, warps, arch = case
    p = subprocess.run([tlec, path, "-s", sig, "-w", warps, "--arch", arch, "--emit=ptx"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        return None, None, p.stderr.decode(errors="replace").strip()
    ptx = p.stdout.decode(errors="replace")
    m = re.search(r'"shared_bytes":([0-9]+)', decode_metadata(ptx))
    return ptx, int(m.group(1)) if m else None, None


def decode_metadata(ptx):
    """The metadata document, from the PTX's `__tle_metadata` byte array."""
    m = re.search(r"__tle_metadata\[[0-9]+\]\s*=\s*\{([0-9, ]+)\}", ptx)
    if not m:
        return ""
    return bytes(int(b) for b in m.group(1).split(",") if b.strip()).decode(errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--source-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--markdown", help="write the table as Markdown to this file")
    ap.add_argument("--diff-dir", help="write both PTX files of every kernel that differs here")
    args = ap.parse_args()
    cases = find_cases(os.path.abspath(args.source_dir))

    def one(case):
        return case, compile_ptx(args.old, case), compile_ptx(args.new, case)

    rows, failed = [], False
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for case, (optx, osh, oerr), (nptx, nsh, nerr) in pool.map(one, cases):
            name = case[0]
            if oerr or nerr:
                failed = True
                rows.append((name, osh, nsh, "error: " + (nerr or oerr).splitlines()[-1]))
                continue
            same = optx == nptx
            rows.append((name, osh, nsh, "identical" if same else "differs"))
            if not same and args.diff_dir:
                os.makedirs(args.diff_dir, exist_ok=True)
                for tag, text in (("old", optx), ("new", nptx)):
                    with open(os.path.join(args.diff_dir, "%s.%s.ptx" % (name, tag)), "w") as f:
                        f.write(text)
    lines = ["| kernel | shared bytes before | after | PTX |", "| --- | ---: | ---: | --- |"]
    for name, osh, nsh, what in rows:
        lines.append("| %s | %s | %s | %s |" % (name, osh, nsh, what))
    grew = [r[0] for r in rows if r[1] is not None and r[2] is not None and r[2] > r[1]]
    shrank = [r[0] for r in rows if r[1] is not None and r[2] is not None and r[2] < r[1]]
    differs = sum(1 for r in rows if r[3] == "differs")
    summary = "%d kernels: %d with identical PTX, %d differ; shared bytes grew in %d, shrank in %d" % (
        len(rows), sum(1 for r in rows if r[3] == "identical"), differs, len(grew), len(shrank))
    text = "\n".join(lines) + "\n\n" + summary + "\n"
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    print(text if not args.markdown else summary)
    if grew:
        print("grew: " + ", ".join(grew))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
