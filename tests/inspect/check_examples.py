#!/usr/bin/env python3
"""tle-inspect on every example module of the build (examples/<name>.<arch>.cubin, or .ptx without
the CUDA toolkit): the JSON report must agree with the metadata tlec wrote and with the module's
own ELF sections, and damaged copies of each module (truncated, bytes flipped) must be refused with
exit status 1 or read, never crash or hang.

Usage: check_examples.py TLE_INSPECT EXAMPLES_BUILD_DIR
"""
import json
import os
import random
import subprocess
import sys


def run(tool, path, timeout=20):
    p = subprocess.run([tool, "--json", path], capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check_report(name, arch, kind, rep, errors):
    def expect(cond, what):
        if not cond:
            errors.append(f"{name}: {what}")

    expect(rep["kind"] == kind, f"kind {rep['kind']!r}, want {kind!r}")
    expect(rep["target"] == arch, f"target {rep['target']!r}, want {arch!r}")
    expect(rep["metadata"] is True, "no metadata")
    expect(rep["compiler"].startswith("tlec "), f"compiler {rep['compiler']!r}")
    h = rep["source_hash"]
    expect(isinstance(h, str) and len(h) == 64 and all(c in "0123456789abcdef" for c in h), f"source hash {h!r}")
    kernels = rep["kernels"]
    expect(len(kernels) == 1, f"{len(kernels)} kernels, want 1")
    if not kernels:
        return
    k = kernels[0]
    res = k["resources"]
    expect(res is not None, "no resources for the metadata's kernel (entry symbol not found)")
    if res is None:
        return
    nw = k["num_warps"]
    expect(k["block"] == [32 * nw, 1, 1], f"block {k['block']} for {nw} warps")
    expect(res["required_block"] == k["block"], f"required block {res['required_block']} != block {k['block']}")
    expect(res["param_count"] == len(k["params"]) + len(k.get("tensor_maps", [])),
           f"{res['param_count']} ABI parameters for {len(k['params'])} params and "
           f"{len(k.get('tensor_maps', []))} tensor maps")
    if k["cluster"] != [1, 1, 1]:
        expect(res["cluster"] == k["cluster"], f"cluster {res['cluster']} != metadata {k['cluster']}")
        expect(res["explicit_cluster"], "a clustered kernel without an explicit cluster")
    if kind == "cubin":
        expect(rep["elf"]["arch"] == arch.rstrip("a"), f"ELF arch {rep['elf']['arch']} for {arch}")
        expect("ptxas" in rep["elf"]["assembler"], f"assembler {rep['elf']['assembler']!r}")
        expect(arch in rep["elf"]["assembler_options"], f"assembler options {rep['elf']['assembler_options']!r}")
        regs = res["registers"]
        expect(isinstance(regs, int) and 1 <= regs <= 255, f"registers {regs}")
        cap = res["max_registers"]
        expect(cap is None or regs <= cap, f"registers {regs} above the cap {cap}")
        expect(isinstance(res["stack_frame_bytes"], int) and res["stack_frame_bytes"] >= 0,
               f"stack frame {res['stack_frame_bytes']}")
        expect(isinstance(res["code_bytes"], int) and res["code_bytes"] > 0, f"code bytes {res['code_bytes']}")
        expect(isinstance(res["param_bytes"], int) and res["param_bytes"] >= 8 * len(k["params"]) // 2,
               f"param bytes {res['param_bytes']}")
    else:
        expect(rep["ptx"]["target"] == arch, f"PTX target {rep['ptx']['target']}")
        expect(res["registers"] is None, "registers known for PTX")


def damaged(data, rng):
    """Truncations at many offsets and a few byte flips."""
    n = len(data)
    cuts = sorted({0, 1, 4, 16, 52, 63, 64, 65, n // 2, n - 1} | {rng.randrange(n) for _ in range(24)})
    for c in cuts:
        if 0 <= c < n:
            yield f"truncated at {c}", data[:c]
    for _ in range(24):
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(min(n, 4096) if rng.random() < 0.7 else n)
            b[i] = rng.randrange(256)
        yield "bytes changed", bytes(b)


def main():
    tool, build = sys.argv[1], sys.argv[2]
    modules = sorted(f for f in os.listdir(build) if f.endswith((".cubin", ".ptx")))
    if not modules:
        print(f"no example modules in {build}")
        return 1
    errors = []
    rng = random.Random(39)
    tmp = os.path.join(build, "inspect-damaged.bin")
    damaged_runs = 0
    for f in modules:
        stem, kind = f.rsplit(".", 1)
        name, arch = stem.rsplit(".", 1)
        path = os.path.join(build, f)
        rc, out, err = run(tool, path)
        if rc != 0:
            errors.append(f"{f}: exit {rc}: {err.strip()}")
            continue
        check_report(f, arch, kind, json.loads(out), errors)
        # The text form names the kernel, its registers and the source hash.
        text = subprocess.run([tool, path], capture_output=True, text=True, timeout=20).stdout
        if "kernel " not in text or "registers:" not in text or "  source hash: " not in text:
            errors.append(f"{f}: text report lacks the kernel, registers or source hash line")
        data = open(path, "rb").read()
        for what, bad in damaged(data, rng):
            with open(tmp, "wb") as out_f:
                out_f.write(bad)
            try:
                rc, out, err = run(tool, tmp, timeout=10)
            except subprocess.TimeoutExpired:
                errors.append(f"{f} ({what}): tle-inspect hung")
                continue
            damaged_runs += 1
            if rc not in (0, 1) or (rc == 1 and not err.startswith("tle-inspect: error: ")):
                errors.append(f"{f} ({what}): exit {rc}: {err.strip()[:200]}")
            if rc == 0:
                json.loads(out)  # whatever it read is a JSON document
    if os.path.exists(tmp):
        os.remove(tmp)
    for e in errors:
        print("FAIL " + e)
    print(f"{len(modules)} example modules inspected, {damaged_runs} damaged copies read or refused, "
          f"{len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
