#!/usr/bin/env python3
"""Shows that each GPU-stage pass's lit tests catch a broken version of the pass: for each pass,
a deliberate bug is written into its source, tlec is rebuilt, the pass's tests run (each must now
fail at least once), and the source is restored. Prints a Markdown table; exit 1 when a broken
pass passes its tests, or when the tests fail before any bug is written.

Usage: python3 scripts/pass_mutations.py [BUILD_DIR]   (default: build; needs ninja and lit)
The build is left rebuilt from the restored sources."""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
LIT = "/usr/lib/llvm-19/build/utils/lit/lit.py"

# (pass, source, text, broken text, the bug, the pass's tests: globs under tests/)
MUTATIONS = [
    ("allocate-shared", "src/Transforms/AllocateShared.cpp", "for (bool moved = true; moved;) {",
     "for (bool moved = false; moved;) {", "every buffer at offset 0, whatever is live beside it",
     ["lit/passes/allocate_shared*"]),
    ("insert-barriers", "src/Transforms/InsertBarriers.cpp", "  Inserter(out, f).block(f.body);",
     "  (void)Inserter(out, f);", "no barrier between conflicting accesses",
     ["lit/passes/insert_barriers*"]),
    ("pipeline", "src/Transforms/Pipeline.cpp", "        planDotOperands(root);", "        (void)root;",
     "no dot operand placed in pipeline slots", ["lit/passes/pipeline_cp_async.tir", "lit/passes/pipeline_tma*.tir",
                                                  "lit/passes/pipeline_text.tir"]),
    ("pipeline-fills", "src/Transforms/PipelineFills.cpp", "(c->intValue() + 1) % wrap_",
     "(c->intValue() + 2) % wrap_", "a fill after a constant-numbered one skips a slot",
     ["lit/passes/pipeline_fills*"]),
    ("warp-specialize", "src/Transforms/WarpSpecialize.cpp", "      out.workerWarps += static_cast<int>(w);",
     "      (void)w;", "the workers' warps not added to the launch", ["lit/gpuops/warp_specialize*.tir"]),
]


def run(cmd):
    return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def build():
    r = run(["ninja", "-C", BUILD, "tlec"])
    if r.returncode != 0:
        sys.exit("pass_mutations: the build failed:\n" + r.stdout[-4000:])


def failures(tests):
    """The number of failing tests among `tests` (lit test paths in the build tree)."""
    r = run([sys.executable, LIT, "-q"] + tests)
    m = re.search(r"Failed Tests \((\d+)\)", r.stdout)
    return int(m.group(1)) if m else (0 if r.returncode == 0 else len(tests))


def main():
    rows, ok = [], True
    for name, src, text, broken, bug, globs in MUTATIONS:
        # The sources' paths, as lit takes them under the build tree (where its site config is).
        tests = sorted(os.path.join(BUILD, "tests", os.path.relpath(t, os.path.join(ROOT, "tests")))
                       for g in globs for t in glob.glob(os.path.join(ROOT, "tests", g)))
        if not tests:
            sys.exit(f"pass_mutations: no tests match {globs} under tests/")
        build()  # the restored sources of the previous mutation
        before = failures(tests)
        path = os.path.join(ROOT, src)
        with open(path) as f:
            original = f.read()
        if original.count(text) != 1:
            sys.exit(f"pass_mutations: {src} no longer holds '{text}' once: update the mutation")
        try:
            with open(path, "w") as f:
                f.write(original.replace(text, broken))
            build()
            after = failures(tests)
        finally:
            with open(path, "w") as f:
                f.write(original)
        caught = before == 0 and after > 0
        ok &= caught
        rows.append(f"| {name} | {bug} | {len(tests)} | {before} | {after} | {'caught' if caught else 'NOT CAUGHT'} |")
    build()
    print("| pass | deliberate bug | tests | failing before | failing with the bug | |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    print("\n".join(rows))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
