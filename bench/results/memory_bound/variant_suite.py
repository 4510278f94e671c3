"""Shared by the make_variants.py scripts of the directories beside this file: each builds a
variant suite (bench/suites/memory_bound.json's kernels compiled another way, as extra kernels
and cases) for one before/after measurement with `tle-bench VARIANTS --kernel-dir KERNELS`."""
import json
import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


def load_suite():
    """bench/suites/memory_bound.json as a dict."""
    return json.load(open(os.path.join(ROOT, "bench", "suites", "memory_bound.json")))


def compile_kernel(tlec, kernel, out, name, source=None):
    """Compiles suite kernel entry `kernel` (its source, or `source` instead) with `tlec` for
    sm_90a into OUT/kernels/NAME.sm_90a.cubin."""
    os.makedirs(os.path.join(out, "kernels"), exist_ok=True)
    subprocess.run([tlec, source or os.path.join(ROOT, kernel["source"]), "-n", kernel["entry"],
                    "-s", kernel["signature"], "-w", str(kernel["num_warps"]), "--arch", "sm_90a",
                    "-o", os.path.join(out, "kernels", f"{name}.sm_90a.cubin")], check=True)


def write_suite(suite, kernels, cases, out):
    """Writes OUT/variants.json: `suite` with its kernels and cases replaced."""
    suite = dict(suite, kernels=kernels, cases=cases)
    json.dump(suite, open(os.path.join(out, "variants.json"), "w"), indent=1)
