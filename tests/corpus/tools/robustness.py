#!/usr/bin/env python3
"""Feeds tlec damaged versions of every corpus file: it must answer with a diagnostic or compile.

Usage: robustness.py --tlec TLEC [--work-dir DIR] [--timeout S] [--jobs N] [--seed N]
                     [--line-cuts N] [--char-cuts N] [--shuffles N] [FILE ...]

For each corpus file (tests/corpus/*.py and the kernel modules of its packages, damaged inside a
copy of their package; or the FILEs given) the variants are:
  * truncations after N sampled line counts and at N sampled character offsets (inside tokens,
    strings and indentation alike);
  * line shuffles: the whole file shuffled, a window of lines of one jit function shuffled, two
    lines of one function swapped, a line moved to elsewhere in the file.
Positions and shuffles come from a random generator seeded with --seed and the file's name, so a
run is reproducible. Each variant is compiled to PTX with one of the file's manifest entries
(kernel, signature, warps; round-robin) and --timeout seconds.

tlec passes on a variant when it exits with status 0 or 1 and its output has none of the
markers of an internal failure (INTERNAL_MARKERS). A crash (a signal or another exit status), a
hang (the timeout) or such a marker is a failure: the variant is kept under
DIR/failures/ with the command that fails on it, and printed. Exit status 1 if any variant fails.
"""
import argparse
import ast
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus_manifest  # noqa: E402

INTERNAL_MARKERS = ["internal error", "Assertion", "Stack dump", "LLVM ERROR", "UNREACHABLE", "terminate called",
                    "Segmentation fault", "AddressSanitizer", "runtime error:"]


def jit_function_ranges(text):
    """(first, last) 0-based line ranges of the bodies of @jit functions."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    out = []
    for n in tree.body:
        if isinstance(n, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in n.decorator_list):
            out.append((n.body[0].lineno - 1, n.end_lineno - 1))
    return out


def variants(path, text, rng, line_cuts, char_cuts, shuffles):
    """Yields (label, damaged text)."""
    lines = text.splitlines(keepends=True)
    n = len(lines)
    cuts = sorted(set(rng.randrange(1, n) for _ in range(line_cuts)))
    for k in cuts:
        yield "truncated after line %d" % k, "".join(lines[:k])
    offs = sorted(set(rng.randrange(1, len(text)) for _ in range(char_cuts)))
    for c in offs:
        yield "truncated at character %d" % c, text[:c]
    ranges = jit_function_ranges(text) or [(0, n - 1)]
    for i in range(shuffles):
        kind = i % 4
        order = list(range(n))
        if kind == 0:
            rng.shuffle(order)
            label = "all lines shuffled"
        else:
            first, last = ranges[rng.randrange(len(ranges))]
            if last - first < 2:
                continue
            if kind == 1:
                a = rng.randrange(first, last)
                b = min(last + 1, a + rng.randrange(2, 9))
                window = order[a:b]
                rng.shuffle(window)
                order[a:b] = window
                label = "lines %d-%d shuffled" % (a + 1, b)
            elif kind == 2:
                a, b = rng.sample(range(first, last + 1), 2)
                order[a], order[b] = order[b], order[a]
                label = "lines %d and %d swapped" % (a + 1, b + 1)
            else:
                a = rng.randrange(first, last + 1)
                line = order.pop(a)
                b = rng.randrange(0, n)
                order.insert(b, line)
                label = "line %d moved to line %d" % (a + 1, b + 1)
        yield "%s (seed %d)" % (label, i), "".join(lines[j] for j in order)


def run_variant(tlec, entry, src, out, timeout):
    cmd = [tlec, src, "-n", entry.kernel]
    if entry.signature:
        cmd += ["-s", entry.signature]
    cmd += ["-w", str(entry.warps)] + entry.extra + ["--arch", "sm_90a", "--emit=ptx", "-o", out]
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return cmd, None, "", time.monotonic() - start
    return cmd, p.returncode, p.stdout.decode("utf-8", "replace"), time.monotonic() - start


def verdict(rc, output, timeout):
    if rc is None:
        return "hang (no answer within %d s)" % timeout
    if rc < 0:
        return "killed by signal %d" % -rc
    if rc not in (0, 1):
        return "exit status %d" % rc
    for m in INTERNAL_MARKERS:
        if m in output:
            return "output contains %r" % m
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tlec", required=True)
    ap.add_argument("--work-dir")
    ap.add_argument("--timeout", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--line-cuts", type=int, default=10)
    ap.add_argument("--char-cuts", type=int, default=10)
    ap.add_argument("--shuffles", type=int, default=8)
    ap.add_argument("files", nargs="*", help="corpus files (default: all of tests/corpus/*.py)")
    args = ap.parse_args()

    work = args.work_dir or tempfile.mkdtemp(prefix="tle-corpus-robustness-")
    cases_dir = os.path.join(work, "cases")
    fail_dir = os.path.join(work, "failures")
    shutil.rmtree(cases_dir, ignore_errors=True)
    shutil.rmtree(fail_dir, ignore_errors=True)
    os.makedirs(cases_dir)

    entries, _ = corpus_manifest.read()
    files = [os.path.abspath(f) for f in args.files] or corpus_manifest.corpus_files(packages=True)
    jobs = []
    for path in files:
        name = os.path.relpath(path, corpus_manifest.CORPUS_DIR)  # as kernels.txt names it
        if name.startswith(".."):
            name = os.path.basename(path)
        mine = [e for e in entries if e.file == name]
        if not mine:
            print("skipped %s: no manifest entry" % name)
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        rng = random.Random(args.seed * 1000003 + zlib.crc32(name.encode()))
        for i, (label, damaged) in enumerate(variants(path, text, rng, args.line_cuts, args.char_cuts,
                                                      args.shuffles)):
            # the damaged file keeps the original's name so that diagnostics read naturally
            d = os.path.join(cases_dir, "%s.%03d" % (os.path.splitext(name)[0].replace("/", "."), i))
            os.makedirs(d)
            if "/" in name:  # a kernel module of a package: damaged inside a copy of its package
                top = name.split("/")[0]
                shutil.copytree(os.path.join(corpus_manifest.CORPUS_DIR, top), os.path.join(d, top))
            src = os.path.join(d, name)
            with open(src, "w", encoding="utf-8") as f:
                f.write(damaged)
            jobs.append((name, label, mine[i % len(mine)], src, os.path.join(d, "out.ptx")))

    failures = []
    slowest = (0.0, None)
    counts = {0: 0, 1: 0}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = [pool.submit(run_variant, args.tlec, e, src, out, args.timeout) for (_, _, e, src, out) in jobs]
        for (name, label, e, src, out), fut in zip(jobs, futs):
            case = os.path.dirname(out)  # the case's directory (a package's copy included)
            cmd, rc, output, secs = fut.result()
            if secs > slowest[0]:
                slowest = (secs, "%s, %s" % (name, label))
            why = verdict(rc, output, args.timeout)
            if why is None:
                counts[rc] += 1
                continue
            keep = os.path.join(fail_dir, os.path.basename(case))
            shutil.copytree(case, keep)
            kept_src = os.path.join(keep, name)
            shown = ["tlec"] + [kept_src if a == src else a for a in cmd[1:]]
            with open(os.path.join(keep, "command.txt"), "w", encoding="utf-8") as f:
                f.write(" ".join(repr(a) if (" " in a or not a) else a for a in shown) + "\n")
            with open(os.path.join(keep, "output.txt"), "w", encoding="utf-8") as f:
                f.write(output)
            failures.append((name, label, why, kept_src, output))
            print("FAIL  %s, %s: %s\n      input: %s\n%s" % (name, label, why, kept_src,
                                                             "\n".join("      " + l for l in output.splitlines()[-8:])),
                  flush=True)
    shutil.rmtree(cases_dir, ignore_errors=True)
    print("%d damaged inputs from %d files: %d compiled, %d diagnosed, %d failed (slowest %.1f s: %s)" %
          (len(jobs), len(files), counts[0], counts[1], len(failures), slowest[0], slowest[1]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
