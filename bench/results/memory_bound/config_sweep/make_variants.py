"""Config sweep of the memory-bound suite's weakest rows: writes a suite of variant kernels (other
num_warps, other program counts) and compiles them, for tle-bench.

Usage: python3 make_variants.py TLEC DIR
  DIR is a folder directly under the repository root (tle-bench resolves kernel sources from a
  suite's grandparent folder, as for bench/suites/*.json). Writes DIR/suites/variants.json and
  DIR/kernels/NAME.sm_90a.cubin; then run
  tle-bench DIR/suites/variants.json --kernel-dir DIR/kernels --md variants.md
"""
import copy
import json
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
tlec, out = sys.argv[1], os.path.abspath(sys.argv[2])
suite = json.load(open(os.path.join(root, "bench", "suites", "memory_bound.json")))
kernels, cases = suite["kernels"], {c["name"]: c for c in suite["cases"]}
new_kernels, new_cases = {}, []


def variant(case, kernel, warps, programs=None):
    """Case `case` with its launch of `kernel` at `warps` warps (and P = `programs`)."""
    c = copy.deepcopy(cases[case])
    name = f"{kernel}_w{warps}"
    new_kernels[name] = dict(copy.deepcopy(kernels[kernel]), num_warps=warps)
    for launch in c["launches"]:
        if launch["kernel"] == kernel:
            launch["kernel"] = name
        elif launch["kernel"] not in new_kernels:
            new_kernels[launch["kernel"]] = kernels[launch["kernel"]]
    if programs:
        c["vars"]["P"] = programs
    c["name"] = c["label"] = f"{case}__w{warps}" + (f"_P{programs.replace(' ', '').replace('*', 'x')}" if programs else "")
    new_cases.append(c)


variant("layernorm_bwd_8192x8192", "layernorm_bwd_dx_8k", 16)
variant("layernorm_bwd_8192x8192", "layernorm_bwd_dx_8k", 32)
variant("layernorm_bwd_8192x8192", "layernorm_bwd_dx_8k", 8)
variant("layernorm_bwd_16384x4096", "layernorm_bwd_dx_4k", 16)
variant("layernorm_bwd_16384x4096", "layernorm_bwd_dx_4k", 8)
variant("layernorm_bwd_16384x4096", "layernorm_bwd_dx_4k", 8, "min(M, 2 * SMS)")
variant("layernorm_bwd_65536x1024", "layernorm_bwd_dx_1k", 4)
variant("layernorm_bwd_65536x1024", "layernorm_bwd_dx_1k", 4, "min(M, 6 * SMS)")
variant("layernorm_bwd_65536x1024", "layernorm_bwd_dx_1k", 4, "min(M, 8 * SMS)")
variant("layernorm_bwd_65536x1024", "layernorm_bwd_dx_1k", 8, "min(M, 3 * SMS)")
for w in (16, 8, 32):
    variant("layernorm_fwd_4096x16384", "layernorm_fwd_16k", w)
for w in (8, 4, 16):
    variant("layernorm_fwd_16384x4096", "layernorm_fwd_4k", w)
for w in (32, 16):
    variant("softmax_online_1024x65536", "softmax_online_16k", w)
for w in (16, 32, 8):
    variant("softmax_online_2048x32768", "softmax_online_8k", w)
for w in (4, 8):
    variant("silu_and_mul_4096x4096", "silu_and_mul", w)

suite["kernels"], suite["cases"] = new_kernels, new_cases
os.makedirs(os.path.join(out, "suites"), exist_ok=True)
os.makedirs(os.path.join(out, "kernels"), exist_ok=True)
with open(os.path.join(out, "suites", "variants.json"), "w") as f:
    json.dump(suite, f, indent=1)
for name, k in new_kernels.items():
    subprocess.run([tlec, os.path.join(root, k["source"]), "-n", k["entry"], "-s", k["signature"],
                    "-w", str(k["num_warps"]), "--arch", "sm_90a",
                    "-o", os.path.join(out, "kernels", f"{name}.sm_90a.cubin")], check=True)
print(f"{len(new_kernels)} kernels, {len(new_cases)} cases in {out}")
