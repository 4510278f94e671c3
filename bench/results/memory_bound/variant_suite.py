"""Shared by the make_variants.py scripts of the directories beside this file: each builds a
variant suite (cases of bench/suites/memory_bound.json whose kernels are compiled several ways,
each way a tagged copy of the case) for one measurement with
`tle-bench OUT/variants.json --kernel-dir OUT/kernels`. OUT must sit two directories below the
repository root: the suite names its sources relative to its grandparent directory."""
import copy
import json
import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


class Variant:
    """One way to compile: `tag` names it (kernel K becomes K__tag, case C becomes C__tag);
    `tlec` compiles; `source` replaces the kernel's source file; `signature(sig)` rewrites its
    signature; `applies(kernel)` says which kernels it changes (the others are compiled once,
    unchanged, under their own names)."""

    def __init__(self, tag, tlec, source=None, signature=None, applies=None):
        self.tag, self.tlec, self.source = tag, tlec, source
        self.signature = signature or (lambda s: s)
        self.applies = applies or (lambda k: True)


def compile_kernel(tlec, kernel, out, name, source=None):
    """Compiles suite kernel entry `kernel` (from `source` if given) for sm_90a into
    OUT/kernels/NAME.sm_90a.cubin."""
    os.makedirs(os.path.join(out, "kernels"), exist_ok=True)
    subprocess.run([tlec, source or os.path.join(ROOT, kernel["source"]), "-n", kernel["entry"],
                    "-s", kernel["signature"], "-w", str(kernel["num_warps"]), "--arch", "sm_90a",
                    "-o", os.path.join(out, "kernels", f"{name}.sm_90a.cubin")], check=True)


def build(out, case_names, variants):
    """Writes OUT/variants.json and OUT/kernels/: every suite case named in `case_names` (in
    that order), once per variant."""
    suite = json.load(open(os.path.join(ROOT, "bench", "suites", "memory_bound.json")))
    cases = {c["name"]: c for c in suite["cases"]}
    kernels, out_cases = {}, []
    for name in case_names:
        for v in variants:
            c = copy.deepcopy(cases[name])
            for launch in c["launches"]:
                k = copy.deepcopy(suite["kernels"][launch["kernel"]])
                kname = launch["kernel"]
                if v.applies(k):
                    kname = f"{kname}__{v.tag}"
                    k["signature"] = v.signature(k["signature"])
                if kname not in kernels:
                    kernels[kname] = k
                    compile_kernel(v.tlec, k, out, kname, source=v.source if v.applies(k) else None)
                launch["kernel"] = kname
            c["name"] = c["label"] = f"{name}__{v.tag}"
            out_cases.append(c)
    suite["kernels"], suite["cases"] = kernels, out_cases
    json.dump(suite, open(os.path.join(out, "variants.json"), "w"), indent=1)


def suite_cases(prefix):
    """The names of the suite's cases starting with `prefix`, in suite order."""
    suite = json.load(open(os.path.join(ROOT, "bench", "suites", "memory_bound.json")))
    return [c["name"] for c in suite["cases"] if c["name"].startswith(prefix)]


def load_suite():
    """bench/suites/memory_bound.json, and its cases by name."""
    suite = json.load(open(os.path.join(ROOT, "bench", "suites", "memory_bound.json")))
    return suite, {c["name"]: c for c in suite["cases"]}


def renamed_case(case, name, kernel=None):
    """A copy of suite case `case` named (and labelled) `name`, its first launch running `kernel`
    when given."""
    c = copy.deepcopy(case)
    c["name"] = c["label"] = name
    if kernel:
        c["launches"][0]["kernel"] = kernel
    return c


def write_suite(out, suite, kernels, cases):
    """Writes OUT/variants.json: `suite` with these kernels and cases."""
    suite["kernels"], suite["cases"] = kernels, cases
    json.dump(suite, open(os.path.join(out, "variants.json"), "w"), indent=1)
