#!/usr/bin/env python3
"""Checks that the compiler's and the runtime's sources compile with clang in C++17 mode (the
compiler of the fuzz build, tests/fuzz/run.sh), so that a construct g++ accepts and clang refuses
cannot stop the fuzz target from building unnoticed (a lambda capturing a structured binding is
C++20: g++ 12 accepts it silently in C++17 mode, clang 14 rejects it).

Usage: scripts/check_clang_syntax.py BUILD_DIR [--clang CLANG++] [--jobs N]

Reads BUILD_DIR/compile_commands.json and runs `CLANG++ -fsyntax-only` with each source's
definitions, include paths and standard, for the sources under src/, runtime/ (the mock driver
included) and tests/fuzz/ (the fuzz targets, with TLE_LIBFUZZER defined as in their libFuzzer
build, so the code only that build compiles is checked too). Exit status 0
when all compile, 1 when one does not (its errors are printed), 77 when no clang++ is found
(ctest reports the test as skipped).
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Debian's ANTLR runtime headers need this shim with clang and libstdc++ (see the header).
ANTLR_SHIM = os.path.join(ROOT, "tests", "fuzz", "antlr4_clang_compat.h")
FUZZ_DIR = os.path.join(ROOT, "tests", "fuzz") + os.sep


def flags(command):
    """The definitions, include paths and -std of a compile command."""
    args = shlex.split(command)
    out = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-I", "-isystem", "-D", "-include"):
            out += [a, args[i + 1]]
            i += 2
            continue
        if a.startswith(("-I", "-D", "-std=")):
            out.append(a)
        i += 1
    return out


def check(clang, entry):
    src = entry["file"]
    cmd = [clang, "-fsyntax-only", "-w"] + flags(entry["command"])
    if os.sep + "Frontend" + os.sep in src:
        cmd += ["-include", ANTLR_SHIM]
    if os.path.abspath(src).startswith(FUZZ_DIR):
        cmd += ["-DTLE_LIBFUZZER"]
    r = subprocess.run(cmd + [src], cwd=entry["directory"], capture_output=True, text=True)
    return src, r.returncode, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build_dir")
    ap.add_argument("--clang", default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    clang = a.clang or next((c for c in ("clang++", "clang++-19", "clang++-14") if shutil.which(c)), None)
    if not clang or not shutil.which(clang):
        print("check_clang_syntax: no clang++ found; skipped")
        return 77
    db = json.load(open(os.path.join(a.build_dir, "compile_commands.json")))
    dirs = tuple(os.path.join(ROOT, d) + os.sep for d in ("src", "runtime", os.path.join("tests", "fuzz")))
    # The fuzz targets share sources (ReplayMain.cpp): each file once.
    seen = set()
    entries = []
    for e in db:
        f = os.path.abspath(os.path.join(e["directory"], e["file"]))
        if f.startswith(dirs) and f not in seen:
            seen.add(f)
            entries.append(e)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for src, rc, err in pool.map(lambda e: check(clang, e), entries):
            if rc:
                failed += 1
                print("%s does not compile with %s:\n%s" % (os.path.relpath(src, ROOT), clang, err))
    print("check_clang_syntax: %d sources, %d failed (%s)" % (len(entries), failed, clang))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
