#!/usr/bin/env python3
"""Differential check of the corpus against Triton: each kernel of tests/corpus/kernels.txt run
through Triton's JIT and through tlec + libtle_rt (tle-run --target gpu) on the same seeded
inputs, every pointer argument compared afterwards.

Two steps:

  triton_diff.py prepare --tle-run TLE_RUN [--out SPECS.json] [--jobs N]
      (any machine) writes a launch spec for every corpus entry it can launch: the arguments
      are synthesised from the signature (below) and the spec is kept only when the kernel runs
      on tle-run's CPU target with --check-bounds within 60 s, so every access stays inside
      the arrays.
      The committed specs are tests/corpus/triton_diff_specs.json.

  triton_diff.py check [--specs SPECS.json]
      (CI, ctest corpus.triton-diff-specs) the committed specs still match the manifest.

  triton_diff.py run --tle-run TLE_RUN [--specs SPECS.json] --out DIR [--jobs N] [--filter RE]
      (a CUDA GPU with torch and triton) runs every spec both ways and writes DIR/results.json
      and DIR/results.md; prints one line per kernel and a summary. Exit status 0 when every
      kernel Triton runs matches (bit-exact, or within tolerance where the results may differ in
      rounding) and tle-run ran every kernel, 1 otherwise (a kernel Triton rejects is listed with
      Triton's message), 77 ("SKIPPED: ...") without torch, triton or a GPU. A difference gets a
      third opinion: tlec's CPU target on the same inputs.

Synthesised arguments (one rule for every kernel, no hand-written shapes): a pointer is an array
of ELEMENTS (2^20) elements of its dtype (floats normal(0, 1) rounded to the dtype, fp8 from small
exponents, integers in [0, 8), or zeros where small values make the kernel read outside its
arrays or spin on a lock, booleans at random: index-like values stay small); an integer
scalar is 256 when the signature says it is a multiple of 16 (`i32:16`) and 200 otherwise (neither
1 nor a multiple of 16, so both compilers specialise alike; as strides, both exceed the tiles'
widths, so the rows of a tile do not overlap); a float scalar 0.75; constexprs as
the signature gives them (dtype names such as fp16 as Triton's dtypes); one program (with the
synthesised strides, several programs may write overlapping elements, whose final values would
depend on the programs' order). `-D` options of an entry become constexpr
keywords for Triton. A host tensor descriptor (`tensordesc<fp16[64, 64]>`) describes a
row-major 256 x 256 tensor of its own (tle-run's NAME_base, NAME_shape<d>, NAME_stride<d>;
Triton's `TensorDescriptor`), compared like a pointer's array. Entries with other tlec options
are not launched (listed with the reason).

Triton runs with TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1: the corpus's kernels read plain module
constants, as libraries written for earlier Triton versions do; tlec accepts them (a global is
read at compile time), Triton 3.6 only with that switch.

Comparison: bit-exact first (NaNs with NaNs); otherwise floating-point outputs pass within
atol + rtol * |triton| (fp32/fp64 1e-4, fp16/bf16 1e-2, fp8 0.125, with NaNs and infinities in
the same places): two correct compilers may round a reduction or a fused multiply-add
differently. The fp16 output of a tl.dot accumulated in fp16 (FP16_ACCUMULATION) also gets one
fp16 rounding of its largest value per 16 of the reduction length, where the hardware may round
the accumulator. Integer and boolean outputs must be identical.
"""
import argparse
import ast
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus_manifest  # noqa: E402

ELEMENTS = 1 << 20
DESC_SIZE = 256  # a tensor descriptor's tensor: DESC_SIZE along every dim
GRID = [1]  # one program: synthesised strides let programs overlap, and overlapping writes race
SPECS = os.path.join(corpus_manifest.CORPUS_DIR, "triton_diff_specs.json")

# signature dtype -> (numpy dtype of the .npy file, torch dtype name, kind)
DTYPES = {
    "fp64": ("float64", "float64", "float"), "fp32": ("float32", "float32", "float"),
    "fp16": ("float16", "float16", "float"), "bf16": ("uint16", "bfloat16", "bf16"),
    "fp8e4nv": ("uint8", "float8_e4m3fn", "fp8e4"), "fp8e5": ("uint8", "float8_e5m2", "fp8e5"),
    "i64": ("int64", "int64", "int"), "i32": ("int32", "int32", "int"), "i16": ("int16", "int16", "int"),
    "i8": ("int8", "int8", "int"), "u64": ("uint64", "uint64", "int"), "u32": ("uint32", "uint32", "int"),
    "u16": ("uint16", "uint16", "int"), "u8": ("uint8", "uint8", "int"), "i1": ("bool", "bool", "bool"),
}
# dtype names a signature may give as a constexpr value, as Triton's dtypes
SIGNATURE_DTYPES = {"fp64": "float64", "fp32": "float32", "fp16": "float16", "bf16": "bfloat16",
                    "fp8e4nv": "float8e4nv", "fp8e5": "float8e5", "i64": "int64", "i32": "int32",
                    "i16": "int16", "i8": "int8", "u64": "uint64", "u32": "uint32", "u16": "uint16", "u8": "uint8",
                    "i1": "int1"}
TOLERANCE = {"float64": 1e-4, "float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2, "float8_e4m3fn": 0.125,
             "float8_e5m2": 0.125}
# Kernels whose fp16 output is a tl.dot accumulated in fp16 (out_dtype=tl.float16): the integer
# parameter holding the reduction length K. The accumulator is rounded to fp16 at least once per
# MMA instruction (k = FP16_MMA_K) and where else is the hardware's, so two correct compilers may
# differ by up to half an fp16 ulp of the partial sums at each of the K / FP16_MMA_K steps.
FP16_ACCUMULATION = {"dot_variants.fp16_acc_gemm_kernel": "K"}
FP16_MMA_K = 16
FP16_UNIT_ROUNDOFF = 2.0 ** -11


def split_signature(sig):
    """Splits at top-level commas (tensordesc<fp16[64, 64]> holds some)."""
    out, depth, cur = [], 0, ""
    for ch in sig:
        if ch in "<[(":
            depth += 1
        elif ch in ">])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def param_names(path, kernel):
    """The kernel's parameter names, from the Python source (a top-level def of that name)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    if kernel in defs:
        return [a.arg for a in defs[kernel].args.args]
    for node in tree.body:  # kernel = triton.jit(fn, ...)
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == kernel for t in node.targets)
                and isinstance(node.value, ast.Call) and node.value.args and isinstance(node.value.args[0], ast.Name)
                and node.value.args[0].id in defs):
            return [a.arg for a in defs[node.value.args[0].id].args.args]
    return None


def make_spec(entry):
    """A launch spec for `entry`, or (None, reason)."""
    extra, defines = list(entry.extra), {}
    while extra:
        if extra[0] == "-D" and len(extra) >= 2 and "=" in extra[1]:
            k, v = extra[1].split("=", 1)
            defines[k] = v
            extra = extra[2:]
        else:
            return None, "tlec option %s" % extra[0]
    path = os.path.join(corpus_manifest.CORPUS_DIR, entry.file)
    names = param_names(path, entry.kernel)
    if names is None:
        return None, "no top-level def %s" % entry.kernel
    sig = split_signature(entry.signature)
    names = [n for n in names if n not in defines]
    if len(sig) != len(names):
        return None, "signature has %d entries for %d parameters" % (len(sig), len(names))
    params = []
    for name, s in zip(names, sig):
        m = re.fullmatch(r"tensordesc<(\w+)\[([0-9, ]+)\]>", s)
        if m:  # a host tensor descriptor over a row-major DESC_SIZE^rank tensor of its own
            block = [int(b) for b in m.group(2).split(",")]
            if m.group(1) not in DTYPES or not 1 <= len(block) <= 5:
                return None, "tensor descriptor %s" % s
            params.append({"name": name, "kind": "desc", "dtype": m.group(1), "block": block,
                           "shape": [DESC_SIZE] * len(block)})
            continue
        m = re.fullmatch(r"\*(\w+)(:16)?", s)
        if m:
            if m.group(1) not in DTYPES:
                return None, "pointer dtype %s" % m.group(1)
            params.append({"name": name, "kind": "ptr", "dtype": m.group(1)})
            continue
        m = re.fullmatch(r"([iu](?:1|8|16|32|64)|fp16|fp32|fp64|bf16)(:16|:1)?", s)
        if m:
            t = m.group(1)
            if t == "i1":
                value = True
            elif t.startswith(("i", "u")):
                value = 256 if m.group(2) == ":16" else 200
            else:
                value = 0.75
            params.append({"name": name, "kind": "scalar", "dtype": t, "value": value})
            continue
        params.append({"name": name, "kind": "constexpr", "value": s})
    return {"name": entry.name, "file": entry.file, "kernel": entry.kernel, "signature": entry.signature,
            "num_warps": entry.warps, "defines": defines, "params": params, "grid": GRID,
            "elements": ELEMENTS}, None


def tle_run_cmd(tle_run, spec, target):
    cmd = [tle_run, os.path.join(corpus_manifest.CORPUS_DIR, spec["file"]), "-n", spec["kernel"], "-s",
           spec["signature"], "-w", str(spec["num_warps"]), "--grid", ", ".join(map(str, spec["grid"])),
           "--target", target, "-q"]
    for k, v in spec["defines"].items():
        cmd += ["-D", "%s=%s" % (k, v)]
    return cmd


def make_inputs(spec, work):
    """Writes one .npy per pointer parameter (seeded by the kernel's name) and returns their paths."""
    import numpy as np
    rng = np.random.default_rng(zlib.crc32(spec["name"].encode()))
    paths = {}
    n = spec["elements"]
    for p in spec["params"]:
        if p["kind"] not in ("ptr", "desc"):
            continue
        n = spec["elements"] if p["kind"] == "ptr" else int(np.prod(p["shape"]))
        npy, _, kind = DTYPES[p["dtype"]]
        if kind == "float":
            a = rng.standard_normal(n).astype(npy)
        elif kind == "bf16":
            a = (rng.standard_normal(n).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        elif kind == "fp8e4":
            a = ((rng.integers(0, 2, n) << 7) | (rng.integers(5, 10, n) << 3) | rng.integers(0, 8, n)).astype(np.uint8)
        elif kind == "fp8e5":
            a = ((rng.integers(0, 2, n) << 7) | (rng.integers(13, 18, n) << 2) | rng.integers(0, 4, n)).astype(np.uint8)
        elif kind == "bool":
            a = rng.integers(0, 2, n).astype(np.bool_)
        elif spec.get("int_fill") == "zeros":
            a = np.zeros(n, npy)
        else:
            a = rng.integers(0, 8, n).astype(npy)
        path = os.path.join(work, "%s.%s.npy" % (spec["name"], p["name"]))
        np.save(path, a)
        paths[p["name"]] = path
    return paths


def run_tle(tle_run, spec, target, inputs, work, check_bounds=False, timeout=300):
    """Runs the kernel with tle-run; returns (ok, message, {name: output .npy path})."""
    import numpy as np
    cmd = tle_run_cmd(tle_run, spec, target)
    outs = {}
    for p in spec["params"]:
        if p["kind"] == "desc":  # tle-run's spelling: NAME_base, NAME_shape<d>, NAME_stride<d> (the last is 1)
            outs[p["name"]] = os.path.join(work, "%s.%s.%s.npy" % (spec["name"], p["name"], target))
            base = p["name"] + "_base"
            cmd += ["--arg", "%s=%s" % (base, inputs[p["name"]]), "--save", "%s=%s" % (base, outs[p["name"]])]
            shape = p["shape"]
            for d, extent in enumerate(shape):
                cmd += ["--arg", "%s_shape%d=%d" % (p["name"], d, extent)]
            for d in range(len(shape) - 1):
                cmd += ["--arg", "%s_stride%d=%d" % (p["name"], d, int(np.prod(shape[d + 1:])))]
        elif p["kind"] == "ptr":
            outs[p["name"]] = os.path.join(work, "%s.%s.%s.npy" % (spec["name"], p["name"], target))
            cmd += ["--arg", "%s=%s" % (p["name"], inputs[p["name"]]), "--save", "%s=%s" % (p["name"], outs[p["name"]])]
        elif p["kind"] == "scalar":
            v = p["value"]
            cmd += ["--arg", "%s=%s" % (p["name"], ("true" if v else "false") if isinstance(v, bool) else v)]
    if check_bounds:
        cmd += ["--check-bounds"]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "tle-run timed out", outs
    if r.returncode != 0:
        return False, r.stdout.decode("utf-8", "replace").strip()[-400:], outs
    return True, "", outs


def prepare_one(tle_run, entry):
    spec, reason = make_spec(entry)
    if spec is None:
        return entry.name, None, reason
    # Integer arrays hold small values; where those make the kernel read outside its arrays or
    # spin (a lock word that is never 0), zeros instead.
    for fill in ("random", "zeros"):
        spec["int_fill"] = fill
        with tempfile.TemporaryDirectory() as work:
            inputs = make_inputs(spec, work)
            ok, msg, _ = run_tle(tle_run, spec, "cpu", inputs, work, check_bounds=True, timeout=60)
        if ok:
            return entry.name, spec, None
        if not any(p["kind"] in ("ptr", "desc") and DTYPES[p["dtype"]][2] == "int" for p in spec["params"]):
            break
    return entry.name, None, ("cpu run: " + msg.splitlines()[-1]) if msg else "cpu run failed"


def prepare(args):
    entries, _ = corpus_manifest.read()
    specs, skipped = [], {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, spec, reason in pool.map(lambda e: prepare_one(args.tle_run, e), entries):
            if spec:
                specs.append(spec)
            else:
                skipped[name] = reason
                print("skip %s: %s" % (name, reason))
    specs.sort(key=lambda s: s["name"])
    with open(args.out, "w", encoding="utf-8") as f:  # one spec per line
        f.write('{"not_launched": %s,\n "specs": [\n' % json.dumps(dict(sorted(skipped.items()))))
        f.write(",\n".join("  " + json.dumps(s, sort_keys=True) for s in specs))
        f.write("\n ]}\n")
    print("%d launch specs, %d entries not launched -> %s" % (len(specs), len(skipped), args.out))
    return 0


def check(args):
    """The committed specs still describe the manifest: each spec is what make_spec builds for its
    entry today (same file, kernel, signature, warps and constexprs), and every entry has a spec
    or a reason it is not launched. Needs neither a GPU nor tle-run."""
    entries, _ = corpus_manifest.read()
    with open(args.specs, encoding="utf-8") as f:
        data = json.load(f)
    specs = {s["name"]: s for s in data["specs"]}
    problems = []
    for e in entries:
        want, reason = make_spec(e)
        have = specs.pop(e.name, None)
        if have is None and e.name not in data["not_launched"]:
            problems.append("%s: no launch spec and no reason (rerun prepare)" % e.name)
        elif have is not None and want is None:
            problems.append("%s: has a spec but is not launchable now: %s" % (e.name, reason))
        elif have is not None and {k: v for k, v in have.items() if k != "int_fill"} != want:
            problems.append("%s: its spec no longer matches the manifest (rerun prepare)" % e.name)
    problems += ["%s: a spec for no manifest entry" % n for n in specs]
    launched = {s["name"]: s for s in data["specs"]}
    for name, param in FP16_ACCUMULATION.items():  # each names a launched kernel's integer scalar
        if not any(p["name"] == param and p["kind"] == "scalar" for p in launched.get(name, {}).get("params", [])):
            problems.append("%s: FP16_ACCUMULATION names no launched kernel with a scalar '%s'" % (name, param))
    for p in problems:
        print(p)
    print("%d specs, %d problems" % (len(data["specs"]), len(problems)))
    return 1 if problems else 0


# --- the GPU side -------------------------------------------------------------------------------


def triton_run(spec, inputs, work):
    """Runs the kernel through Triton's JIT on the same inputs; returns {name: output .npy path}."""
    import importlib
    import numpy as np
    import torch
    import triton
    import triton.language as tl
    from triton.runtime.jit import JITFunction
    if corpus_manifest.CORPUS_DIR not in sys.path:
        sys.path.insert(0, corpus_manifest.CORPUS_DIR)
    module = importlib.import_module(os.path.splitext(spec["file"])[0].replace("/", "."))
    fn = getattr(module, spec["kernel"])
    while not isinstance(fn, JITFunction):  # autotune / heuristics wrappers: the signature fixes every constexpr
        fn = fn.fn
    env = {"tl": tl, "triton": triton, "True": True, "False": False, "None": None}
    env.update({k: getattr(tl, v) for k, v in SIGNATURE_DTYPES.items()})
    # Every argument by name (a -D constexpr may sit between runtime parameters).
    kwargs, tensors = {}, {}
    for p in spec["params"]:
        if p["kind"] == "desc":
            from triton.tools.tensor_descriptor import TensorDescriptor
            t = to_torch(np.load(inputs[p["name"]]), DTYPES[p["dtype"]][1]).cuda()
            tensors[p["name"]] = (t, DTYPES[p["dtype"]][0])
            view = t.view(*p["shape"])
            kwargs[p["name"]] = TensorDescriptor(view, list(view.shape), list(view.stride()), p["block"])
        elif p["kind"] == "ptr":
            t = to_torch(np.load(inputs[p["name"]]), DTYPES[p["dtype"]][1]).cuda()
            tensors[p["name"]] = (t, DTYPES[p["dtype"]][0])
            kwargs[p["name"]] = t
        elif p["kind"] == "scalar":
            kwargs[p["name"]] = p["value"]
        else:
            kwargs[p["name"]] = eval(p["value"], vars(module) | env)  # noqa: S307 - the corpus's own constexprs
    for k, v in spec["defines"].items():
        kwargs[k] = eval(v, vars(module) | env)  # noqa: S307
    fn[tuple(spec["grid"])](**kwargs, num_warps=spec["num_warps"])
    torch.cuda.synchronize()
    outs = {}
    for name, (t, storage) in tensors.items():
        path = os.path.join(work, "%s.%s.triton.npy" % (spec["name"], name))
        np.save(path, to_numpy(t.cpu(), storage))
        outs[name] = path
    return outs


def _signed(np_dtype):
    """The signed integer NumPy dtype of `np_dtype`'s width (torch converts those everywhere)."""
    import numpy as np
    return {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[np.dtype(np_dtype).itemsize]


def to_torch(a, torch_dtype):
    """A NumPy array as a torch tensor of `torch_dtype` (same element width), bits unchanged."""
    import torch
    if a.dtype.kind in "fb":
        return torch.from_numpy(a).view(getattr(torch, torch_dtype))
    return torch.from_numpy(a.view(_signed(a.dtype))).view(getattr(torch, torch_dtype))


def to_numpy(t, np_dtype):
    """A CPU tensor's bits as a NumPy array of `np_dtype` (same element width)."""
    import numpy as np
    import torch
    if np_dtype in ("bool", "float16", "float32", "float64"):
        return t.numpy()
    signed = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[np.dtype(np_dtype).itemsize]
    return t.view(signed).numpy().view(np_dtype)


def compare_one(spec, name, a_path, b_path):
    """'exact', 'close' or 'DIFFERENT' for one pointer argument's two results."""
    return next(r[1] for r in compare(spec, {name: a_path}, {name: b_path}, only=name))


def compare(spec, tle_out, tri_out, only=None):
    """[(name, verdict, detail)] with verdict 'exact', 'close' or 'DIFFERENT'."""
    import numpy as np
    import torch
    rows = []
    for p in spec["params"]:
        if p["kind"] not in ("ptr", "desc") or (only and p["name"] != only):
            continue
        a, b = np.load(tle_out[p["name"]]), np.load(tri_out[p["name"]])
        if a.tobytes() == b.tobytes():
            rows.append((p["name"], "exact", ""))
            continue
        tname = DTYPES[p["dtype"]][1]
        if tname not in TOLERANCE:
            bad = np.flatnonzero(a != b)
            rows.append((p["name"], "DIFFERENT", "%d elements differ, first at %d: tle %s, triton %s" %
                         (bad.size, bad[0], a[bad[0]], b[bad[0]])))
            continue
        x = to_torch(a, tname).double()
        y = to_torch(b, tname).double()
        nan_same = torch.equal(torch.isnan(x), torch.isnan(y))
        fin = torch.isfinite(x) & torch.isfinite(y)
        inf_same = torch.equal(x[~torch.isnan(x) & ~fin], y[~torch.isnan(y) & ~fin]) if nan_same else False
        tol = TOLERANCE[tname]
        err = (x[fin] - y[fin]).abs()
        atol, note = accumulation_atol(spec, tname, y[fin])
        ok = nan_same and inf_same and bool((err <= tol + atol + tol * y[fin].abs()).all())
        worst = float(err.max()) if err.numel() else 0.0
        rows.append((p["name"], "close" if ok else "DIFFERENT",
                     "max abs difference %.3g, %d of %d elements differ%s" %
                     (worst, int((x != y).sum()), x.numel(), note)))
    return rows


def accumulation_atol(spec, tname, y):
    """(extra absolute tolerance, note) for a fp16-accumulated tl.dot's fp16 output: one rounding
    of the largest result (the partial sums' scale) per MMA step of the reduction; (0, "") else."""
    param = FP16_ACCUMULATION.get(spec["name"])
    if param is None or tname != "float16" or not y.numel():
        return 0.0, ""
    k = next(p["value"] for p in spec["params"] if p["name"] == param)
    steps = -(-int(k) // FP16_MMA_K)
    atol = steps * FP16_UNIT_ROUNDOFF * float(y.abs().max())
    return atol, " (fp16 accumulation over K=%d: %d roundings, atol %.3g)" % (k, steps, atol)


def error_chain(e, limit=2400):
    """An exception and the exceptions that caused it, outermost first, on one line: Triton reports
    an error inside a @jit helper as a CompilationError at the call whose cause says what failed.
    A long text keeps its beginning and its end (the innermost cause)."""
    parts, seen = [], set()
    while e is not None and id(e) not in seen and len(parts) < 8:
        seen.add(id(e))
        parts.append(" / ".join(line.strip() for line in ("%s: %s" % (type(e).__name__, e)).splitlines()
                                if line.strip()))
        e = e.__cause__ or e.__context__
    text = " <- caused by: ".join(parts)
    return text if len(text) <= limit else text[:limit // 3] + " ... " + text[-(2 * limit) // 3:]


def run_one(tle_run, spec, work):
    inputs = make_inputs(spec, work)
    ok, msg, tle_out = run_tle(tle_run, spec, "gpu", inputs, work)
    if not ok:
        return spec["name"], [("-", "TLE FAILED", msg.splitlines()[-1] if msg else "")]
    try:
        tri_out = triton_run(spec, inputs, work)
    except Exception as e:  # noqa: BLE001 - a Triton failure is a result, not a crash
        return spec["name"], [("-", "TRITON FAILED", error_chain(e))]
    rows = compare(spec, tle_out, tri_out)
    if worst_verdict(rows) == "DIFFERENT":
        # A third opinion: tlec's CPU target on the same inputs, against both.
        ok, msg, cpu_out = run_tle(tle_run, spec, "cpu", inputs, work)
        if ok:
            for name, verdict, _ in list(rows):
                if verdict == "DIFFERENT":
                    vs_gpu = compare_one(spec, name, cpu_out[name], tle_out[name])
                    vs_tri = compare_one(spec, name, cpu_out[name], tri_out[name])
                    rows.append((name, "note", "tlec's cpu target: %s to tlec gpu, %s to triton" % (vs_gpu, vs_tri)))
    return spec["name"], rows


def run(args):
    try:
        import numpy  # noqa: F401
        import torch
        import triton  # noqa: F401
    except ImportError as e:
        print("SKIPPED: %s" % e)
        return 77
    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device")
        return 77
    with open(args.specs, encoding="utf-8") as f:
        specs = json.load(f)["specs"]
    if args.filter:
        specs = [s for s in specs if re.search(args.filter, s["name"])]
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="triton-diff-")
    # Library-style kernels read plain module constants (FP8_MAX = 448.0), which tlec accepts and
    # Triton 3.6 only with this switch (without it only tl.constexpr(...) globals).
    os.environ.setdefault("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", "1")
    results = {}
    ctx = __import__("multiprocessing").get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=ctx) as pool:
        futures = [pool.submit(run_one, args.tle_run, s, work) for s in specs]
        for fut in concurrent.futures.as_completed(futures):
            name, rows = fut.result()
            results[name] = rows
            verdict = worst_verdict(rows)
            print("%-10s %s %s" % (verdict, name, "; ".join("%s: %s %s" % r for r in rows if r[1] != "exact")))
    write_results(args.out, specs, results, torch.cuda.get_device_name())
    # A kernel Triton cannot run has no reference: reported, not a failure of tlec's.
    bad = [n for n, rows in results.items() if worst_verdict(rows) in ("DIFFERENT", "TLE FAILED")]
    counts = {v: sum(1 for rows in results.values() if worst_verdict(rows) == v)
              for v in ("exact", "close", "DIFFERENT", "TLE FAILED", "TRITON FAILED")}
    print("%d kernels: %s" % (len(results), ", ".join("%d %s" % (c, v) for v, c in counts.items())))
    return 1 if bad else 0


ORDER = ["note", "exact", "close", "DIFFERENT", "TRITON FAILED", "TLE FAILED"]


def worst_verdict(rows):
    return max((r[1] for r in rows), key=ORDER.index, default="exact")


def write_results(out, specs, results, device):
    import triton
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"device": device, "triton": triton.__version__, "results": results}, f, indent=1, sort_keys=True)
        f.write("\n")
    lines = ["# Corpus kernels: tlec + libtle_rt against Triton %s's JIT (%s)" % (triton.__version__, device), "",
             "`python3 tests/corpus/tools/triton_diff.py run --tle-run build/src/tle-run --out DIR`; inputs and "
             "rules in the script's docstring.", "", "| kernel | verdict | details |", "| --- | --- | --- |"]
    for s in specs:
        rows = results.get(s["name"], [])
        detail = "; ".join("%s: %s %s" % r for r in rows if r[1] != "exact")
        lines.append("| %s | %s | %s |" % (s["name"], worst_verdict(rows), detail.replace("|", "\\|")))
    with open(os.path.join(out, "results.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--tle-run", required=True)
    p.add_argument("--out", default=SPECS)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    r = sub.add_parser("run")
    r.add_argument("--tle-run", required=True)
    r.add_argument("--specs", default=SPECS)
    r.add_argument("--out", required=True)
    r.add_argument("--jobs", type=int, default=8)
    r.add_argument("--filter")
    c = sub.add_parser("check")
    c.add_argument("--specs", default=SPECS)
    args = ap.parse_args()
    if args.step == "check":
        return check(args)
    args.tle_run = os.path.abspath(args.tle_run)
    return prepare(args) if args.step == "prepare" else run(args)


if __name__ == "__main__":
    sys.exit(main())
