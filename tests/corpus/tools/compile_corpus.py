#!/usr/bin/env python3
"""Compiles every kernel of tests/corpus/kernels.txt with tlec for sm_90a.

Usage: compile_corpus.py --tlec TLEC [--out-dir DIR] [--emit cubin|ptx] [--jobs N] [--rejected]

Writes DIR/NAME.cubin (or .ptx) per entry and prints one line per failure with tlec's output.
--rejected compiles the "# rejected:" entries instead and reports those that now compile (so
that they can be moved into the manifest). Exit status 0 when every entry compiled (with
--rejected: always 0 unless the manifest cannot be read).
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus_manifest  # noqa: E402


def compile_one(tlec, entry, out_dir, emit, timeout):
    out = os.path.join(out_dir, "%s.%s" % (entry.name, emit))
    cmd = [tlec] + entry.tlec_args() + ["--arch", "sm_90a", "-o", out]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return entry, cmd, None, "timed out after %d s" % timeout
    return entry, cmd, p.returncode, p.stdout.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tlec", required=True)
    ap.add_argument("--out-dir")
    ap.add_argument("--emit", choices=["cubin", "ptx"], default="cubin")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--rejected", action="store_true")
    args = ap.parse_args()

    entries, rejected = corpus_manifest.read()
    todo = rejected if args.rejected else entries
    out_dir = args.out_dir or tempfile.mkdtemp(prefix="tle-corpus-")
    os.makedirs(out_dir, exist_ok=True)
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for entry, cmd, rc, output in pool.map(lambda e: compile_one(args.tlec, e, out_dir, args.emit, args.timeout),
                                               todo):
            ok = rc == 0
            if args.rejected:
                state = "now compiles" if ok else "still rejected"
                print("%-60s %s" % (entry.name, state))
                if not ok:
                    print("    " + (output.strip().splitlines() or ["(no output)"])[0])
                continue
            if ok:
                print("ok    %s" % entry.name)
            else:
                failed.append(entry)
                print("FAIL  %s (exit status %s)\n  %s\n%s" % (entry.name, rc, " ".join(cmd), output))
    if args.rejected:
        return 0
    print("%d of %d corpus compilations succeeded" % (len(todo) - len(failed), len(todo)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
