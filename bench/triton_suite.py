#!/usr/bin/env python3
"""Runs a tle-bench suite's .tle kernels under Triton and the matching torch operators, and merges the result with tle-bench's JSON into one report.

Subcommands:
  run    --suite bench/suites/memory_bound.json --out triton.json [--case SUBSTR]... [--set NAME=VALUE]...
         For every case: the same buffers (shapes, dtypes, generators) as tle-bench, the same .tle
         source loaded as a Python module (importlib SourceFileLoader) and launched by Triton with the
         suite's constexprs, num_warps and grid; outputs checked against a float64 torch reference with
         tle-bench's tolerances; then triton.testing.do_bench (median; it flushes the L2 with a 256 MiB
         memset before every repetition) of the Triton launch(es), of the torch operator, and of a torch
         device-to-device copy of bytes/2 (the same traffic).
  merge  --tle tle.json --triton triton.json --out-dir DIR [--gpu-info gpu.txt] [--clocks clocks.csv]
         Writes DIR/report.json and DIR/report.md: per case our GB/s, its fraction of the copy bandwidth,
         the ratio to Triton and to torch (time of the other / our time: > 1 means tle is faster), and
         geometric means. Runs without a GPU.
"""
import argparse
import ast
import csv
import importlib.machinery
import importlib.util
import json
import math
import os
import platform
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_COPY_FRACTION = 0.90  # issue 5: at least 90% of the copy bandwidth
TARGET_TRITON_RATIO = 1.0    # issue 5: at least 1.0x Triton

# ------------------------------------------------------------------------------------------------
# Suite files (the same rules as bench/harness/Suite.cpp)
# ------------------------------------------------------------------------------------------------


def eval_expr(text, env):
    """Evaluates a suite expression with Python semantics over env (see bench/harness/Expr.h)."""
    if isinstance(text, (int, float)):
        return text
    funcs = {
        "cdiv": lambda a, b: -(-a // b),
        "min": min,
        "max": max,
        "next_power_of_2": lambda n: 1 if n <= 1 else 1 << (int(n) - 1).bit_length(),
        "int": int,
        "float": float,
    }
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
           ast.Pow: lambda a, b: a ** b}

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise ValueError(f"in expression '{text}': unknown name '{node.id}'")
            return env[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in funcs and not node.keywords:
            return funcs[node.func.id](*[ev(a) for a in node.args])
        raise ValueError(f"in expression '{text}': unsupported syntax")

    return ev(ast.parse(str(text).strip(), mode="eval"))


def parse_call(s):
    """'normal(0, 2)' -> ('normal', ['0', '2'])."""
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*", s)
    if not m:
        raise ValueError(f"bad init '{s}'")
    args = []
    if m.group(2) is not None and m.group(2).strip():
        depth, cur = 0, ""
        for ch in m.group(2):
            if ch == "," and depth == 0:
                args.append(cur)
                cur = ""
                continue
            depth += ch == "("
            depth -= ch == ")"
            cur += ch
        args.append(cur)
    return m.group(1), args


def header_fields(source_path):
    """-s, -n, -w and -D of the `# Compile: tlec ...` line of a .tle file."""
    out = {"signature": None, "entry": None, "num_warps": None, "defines": {}}
    with open(source_path) as f:
        for line in f:
            if line.startswith("# Compile: tlec "):
                words = re.findall(r'"[^"]*"|\S+', line[len("# Compile: "):])
                words = [w.strip('"') for w in words]
                for i, w in enumerate(words[:-1]):
                    if w == "-s":
                        out["signature"] = words[i + 1]
                    elif w == "-n":
                        out["entry"] = words[i + 1]
                    elif w == "-w":
                        out["num_warps"] = int(words[i + 1])
                    elif w == "-D":
                        k, v = words[i + 1].split("=", 1)
                        out["defines"][k] = v
                break
    return out


def load_suite(path):
    with open(path) as f:
        suite = json.load(f)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(path))))
    for name, k in suite["kernels"].items():
        k.setdefault("defines", {})
        if not k.get("signature"):
            h = header_fields(os.path.join(root, k["source"]))
            k["signature"] = h["signature"]
            k.setdefault("entry", h["entry"])
            if "num_warps" not in k and h["num_warps"]:
                k["num_warps"] = h["num_warps"]
            if not k["defines"]:
                k["defines"] = h["defines"]
        k.setdefault("num_warps", 4)
        k["path"] = os.path.join(root, k["source"])
    suite.setdefault("reps", 100)
    return suite, root


def parse_literal(s):
    s = s.strip()
    if s in ("True", "False"):
        return s == "True"
    try:
        return int(s)
    except ValueError:
        return float(s)


def kernel_params(spec):
    """(entry name, parameter names) of a suite kernel, read from its source with ast (no import:
    a TLE kernel may use modules Triton lacks). Without "entry", the file's one decorated function."""
    tree = ast.parse(open(spec["path"]).read())
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)
           and (n.name == spec.get("entry") or (not spec.get("entry") and n.decorator_list))]
    if len(fns) != 1:
        raise ValueError(f"{spec['source']}: name the kernel (\"entry\")")
    return fns[0].name, [a.arg for a in fns[0].args.args]


def split_signature(spec):
    """(entry name, runtime parameter names in order, their signature types, constexpr dict) for a
    suite kernel."""
    entry, params = kernel_params(spec)
    defines = {k: parse_literal(str(v)) for k, v in spec["defines"].items()}
    rest = [p for p in params if p not in defines]
    entries = [e.strip() for e in spec["signature"].split(",")]
    if len(entries) != len(rest):
        raise ValueError(f"signature '{spec['signature']}' has {len(entries)} entries for {len(rest)} parameters {rest}")
    runtime, types, constexprs = [], [], dict(defines)
    for p, e in zip(rest, entries):
        base = e.split(":")[0]
        if re.fullmatch(r"\*?(i1|i8|i16|i32|i64|u8|u16|u32|u64|fp16|bf16|fp32|fp64)", base):
            runtime.append(p)
            types.append(base)
        else:
            constexprs[p] = parse_literal(e)
    return entry, runtime, types, constexprs


def launch_values(launch, spec, env):
    """One suite launch evaluated: (entry name, constexprs, [(param, type, value)], grid), a value
    being a buffer name for pointers and an int or float for scalars (as the signature types it)."""
    entry, runtime, types, constexprs = split_signature(spec)
    lenv = dict(env)
    lenv.update({k: v for k, v in constexprs.items() if isinstance(v, (int, float))})
    if len(launch["args"]) != len(runtime):
        raise ValueError(f"kernel {launch['kernel']}: {len(launch['args'])} arguments for {len(runtime)} parameters")
    vals = []
    for p, ty, a in zip(runtime, types, launch["args"]):
        if ty.startswith("*"):
            vals.append((p, ty, a))
        else:
            v = eval_expr(a, lenv)
            vals.append((p, ty, float(v) if ty.startswith(("fp", "bf")) else int(v)))
    grid = tuple(int(eval_expr(g, lenv)) for g in launch["grid"])
    return entry, constexprs, vals, grid


def load_tle_module(path, cache={}):
    """Imports a .tle file as a Python module (file-backed, so Triton can read the kernel source)."""
    if path in cache:
        return cache[path]
    sys.dont_write_bytecode = True
    name = "tle_bench_" + re.sub(r"\W", "_", os.path.relpath(path, ROOT))
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    cache[path] = module
    return module


# ------------------------------------------------------------------------------------------------
# Families: derived inputs, float64 references, tolerances (as bench/harness/Families.cpp), torch ops
# ------------------------------------------------------------------------------------------------


def rtol_for(dtype, fp32_rtol):
    import torch
    return {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float64: min(fp32_rtol, 1e-9)}.get(dtype, fp32_rtol)


def prepare(family, b, env):
    import torch
    if family == "layernorm_bwd":
        xd = b["x"].double()
        mean = xd.mean(-1)
        var = ((xd - mean[:, None]) ** 2).mean(-1)
        b["mean"].copy_(mean)
        b["rstd"].copy_(1.0 / torch.sqrt(var + env["eps"]))


def references(family, b, env):
    """{output name: (float64 reference, atol, fp32 rtol)}."""
    import torch
    if family == "vector_add":
        return {"z": (b["x"].double() + b["y"].double(), 1e-7, 1e-6)}
    if family == "softmax":
        return {"y": (torch.softmax(b["x"].double(), -1), 1e-8, 1e-4)}
    if family == "layernorm_fwd":
        xd = b["x"].double()
        mean = xd.mean(-1)
        var = ((xd - mean[:, None]) ** 2).mean(-1)
        rstd = 1.0 / torch.sqrt(var + env["eps"])
        y = (xd - mean[:, None]) * rstd[:, None] * b["w"].double() + b["b"].double()
        return {"y": (y, 2e-3, 1e-4), "mean": (mean, 1e-5, 1e-4), "rstd": (rstd, 1e-6, 1e-4)}
    if family == "rmsnorm_fwd":
        xd = b["x"].double()
        rstd = 1.0 / torch.sqrt((xd * xd).mean(-1) + env["eps"])
        return {"y": (xd * rstd[:, None] * b["w"].double(), 2e-3, 1e-4), "rstd": (rstd, 1e-6, 1e-4)}
    if family == "layernorm_bwd":
        xd, dy, w = b["x"].double(), b["dy"].double(), b["w"].double()
        mean, rstd = b["mean"].double(), b["rstd"].double()
        xhat = (xd - mean[:, None]) * rstd[:, None]
        wdy = w * dy
        c1 = (xhat * wdy).mean(-1)
        c2 = wdy.mean(-1)
        dx = (wdy - (xhat * c1[:, None] + c2[:, None])) * rstd[:, None]
        dw = (dy * xhat).sum(0)
        db = dy.sum(0)
        return {"dx": (dx, 5e-3, 1e-4), "dw": (dw, 1e-2 + 1e-3 * dw.abs().max().item(), 1e-4),
                "db": (db, 1e-2 + 1e-3 * db.abs().max().item(), 1e-4)}
    if family == "cross_entropy_fwd":
        ld = b["logits"].double()
        t = b["target"].long()
        return {"loss": (torch.logsumexp(ld, -1) - ld.gather(1, t[:, None])[:, 0], 1e-4, 1e-5)}
    if family == "silu_and_mul":
        xd = b["x"].double()
        h = xd.shape[-1] // 2
        g, u = xd[:, :h], xd[:, h:]
        return {"y": (g * torch.sigmoid(g) * u, 2e-3, 1e-4)}
    if family == "tensor_sum":
        xd = b["x"].double()
        return {"out": (xd.sum().reshape(1), 2e-6 * xd.abs().sum().item(), 0.0)}
    if family == "cumsum":
        return {"y": (torch.cumsum(b["x"].double(), -1), 2e-3, 1e-4)}
    raise ValueError(f"unknown family {family}")


def compare(got, want, atol, rtol):
    import torch
    g = got.double()
    err = (g - want).abs()
    err = torch.where(torch.isfinite(g), err, torch.full_like(err, float("inf")))
    bad = int((~(err <= atol + rtol * want.abs())).sum().item())
    return {"elements": want.numel(), "bad": bad, "max_abs": float(err.max().item()) if want.numel() else 0.0,
            "atol": atol, "rtol": rtol}


def check_outputs(family, b, env, outputs=None):
    refs = references(family, b, env)
    res = []
    for name, (want, atol, rtol32) in refs.items():
        if outputs is not None and name not in outputs:
            continue
        got = outputs[name] if outputs is not None else b[name]
        r = compare(got.reshape(want.shape), want, atol, rtol_for(got.dtype, rtol32))
        r["output"] = name
        res.append(r)
    return res


def torch_op(family, b, env):
    """(description, a callable running the torch operator, {output name: tensor it produces})."""
    import torch
    import torch.nn.functional as F
    if family == "vector_add":
        return "torch.add(x, y, out=z)", lambda: torch.add(b["x"], b["y"], out=b["z"]), lambda: {"z": b["z"]}
    if family == "softmax":
        return "torch.softmax(x, -1)", lambda: torch.softmax(b["x"], -1), lambda: {"y": torch.softmax(b["x"], -1)}
    n = b["x"].shape[-1] if "x" in b else None
    if family == "layernorm_fwd":
        f = lambda: F.layer_norm(b["x"], (n,), b["w"], b["b"], env["eps"])
        return "F.layer_norm", f, lambda: {"y": f()}
    if family == "rmsnorm_fwd":
        f = lambda: F.rms_norm(b["x"], (n,), b["w"], env["eps"])
        return "F.rms_norm", f, lambda: {"y": f()}
    if family == "layernorm_bwd":
        m = b["x"].shape[0]
        mean, rstd = b["mean"].view(m, 1), b["rstd"].view(m, 1)
        bias = torch.zeros_like(b["w"])
        f = lambda: torch.ops.aten.native_layer_norm_backward(b["dy"], b["x"], [n], mean, rstd, b["w"], bias,
                                                              [True, True, True])

        def outs():
            dx, dw, db = f()
            return {"dx": dx, "dw": dw, "db": db}
        return "aten.native_layer_norm_backward", f, outs
    if family == "cross_entropy_fwd":
        f = lambda: F.cross_entropy(b["logits"], b["target"], reduction="none")
        return "F.cross_entropy(reduction='none')", f, lambda: {"loss": f()}
    if family == "silu_and_mul":
        h = b["x"].shape[-1] // 2
        f = lambda: F.silu(b["x"][:, :h]) * b["x"][:, h:]
        return "F.silu(gate) * up", f, lambda: {"y": f()}
    if family == "tensor_sum":
        f = lambda: torch.sum(b["x"])
        return "torch.sum(x)", f, lambda: {"out": f().reshape(1)}
    if family == "cumsum":
        f = lambda: torch.cumsum(b["x"], -1)
        return "torch.cumsum(x, -1)", f, lambda: {"y": f()}
    raise ValueError(f"unknown family {family}")


# ------------------------------------------------------------------------------------------------
# run
# ------------------------------------------------------------------------------------------------


def bench(fn, warmup_ms, rep_ms):
    import triton.testing
    med, mn, mx = triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=[0.5, 0.0, 1.0])
    return {"median_ms": float(med), "min_ms": float(mn), "max_ms": float(mx)}


def run_case(case, suite, env0, args, torch_dtype):
    import torch
    dev = torch.device("cuda")
    res = {"name": case["name"], "label": case.get("label", case["name"]), "family": case["family"]}
    env = dict(env0)
    overrides = dict(args.set or [])
    for k, v in overrides.items():
        if k not in case.get("vars", {}):
            env[k] = eval_expr(v, env)
    for k, v in case.get("vars", {}).items():
        env[k] = eval_expr(overrides.get(k, v), env)
    b, io_bytes = {}, 0
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)
    for name, spec in case["buffers"].items():
        shape = [int(eval_expr(d, env)) for d in spec["shape"]]
        dt = torch_dtype[spec["dtype"]]
        role = spec.get("role", "input")
        init, iargs = parse_call(spec.get("init", "normal" if role == "input" else "zeros"))
        iargs = [eval_expr(a, env) for a in iargs]
        if role == "output":
            t = torch.full(shape, float("nan"), dtype=dt, device=dev) if dt.is_floating_point else \
                torch.full(shape, -1, dtype=dt, device=dev)
        elif role == "scratch" or init in ("zeros", "derived"):
            t = torch.zeros(shape, dtype=dt, device=dev)
        elif init == "normal":
            mean, std = (iargs + [0.0, 1.0][len(iargs):])[:2]
            t = (torch.randn(shape, device=dev, generator=gen) * std + mean).to(dt)
        elif init == "uniform":
            lo, hi = (iargs + [0.0, 1.0][len(iargs):])[:2]
            t = (torch.rand(shape, device=dev, generator=gen) * (hi - lo) + lo).to(dt)
        elif init == "randint":
            t = torch.randint(int(iargs[0]), int(iargs[1]), shape, device=dev, generator=gen).to(dt)
        elif init == "ones":
            t = torch.ones(shape, dtype=dt, device=dev)
        elif init == "full":
            t = torch.full(shape, iargs[0], dtype=dt, device=dev)
        else:
            raise ValueError(f"unknown init {init}")
        b[name] = t
        if role != "scratch":
            io_bytes += t.numel() * t.element_size()
    prepare(case["family"], b, env)
    nbytes = float(eval_expr(case["bytes"], env)) if "bytes" in case else float(io_bytes)
    res["bytes"] = nbytes
    res["vars"] = {k: env[k] for k in case.get("vars", {})}

    # With --tle-cubins: tle's own cubins of the case (its "launches"), launched through libtle_rt
    # with ctypes and timed by the same do_bench in this process, so that the ratio to Triton
    # does not depend on two harnesses.
    if args.tle_cubins:
        try:
            res["tle_same_process"] = run_tle(case, suite, env, b, args, nbytes)
        except Exception as e:  # reported per case; Triton's side still runs
            res["tle_same_process"] = {"correct": False, "error": f"{type(e).__name__}: {e}"}

    # Triton launches of the same .tle sources (or, for a tle kernel that uses constructs Triton
    # lacks, such as a thread-block cluster, the baseline the case names in "triton_launches").
    launches, kinfo = [], []
    for l in case.get("triton_launches", case["launches"]):
        spec = suite["kernels"][l["kernel"]]
        entry, constexprs, vals, grid = launch_values(l, spec, env)
        kern = getattr(load_tle_module(spec["path"]), entry)
        kwargs = dict(constexprs)
        kwargs.update({p: b[v] if ty.startswith("*") else v for p, ty, v in vals})
        launches.append((kern, grid, kwargs, spec["num_warps"]))
        kinfo.append({"kernel": l["kernel"], "entry": kern.fn.__name__, "grid": list(grid),
                      "num_warps": spec["num_warps"], "constexprs": constexprs})

    compiled = [None] * len(launches)

    def run_triton():
        for i, (kern, grid, kwargs, nw) in enumerate(launches):
            compiled[i] = kern[grid](**kwargs, num_warps=nw)

    t0 = time.time()
    run_triton()
    torch.cuda.synchronize()
    res["triton_first_call_s"] = time.time() - t0
    for i, c in enumerate(compiled):
        md = getattr(c, "metadata", None)
        for attr in ("n_regs", "n_spills"):
            try:
                kinfo[i][attr] = int(getattr(c, attr))
            except Exception:
                pass
        if md is not None and hasattr(md, "num_stages"):
            kinfo[i]["num_stages"] = int(md.num_stages)
    res["triton_kernels"] = kinfo
    checks = check_outputs(case["family"], b, env)
    ok = all(c["bad"] == 0 for c in checks)
    res["triton"] = {"correct": ok, "check": checks}
    for c in checks:
        print(f"    triton check {c['output']:<6} max_abs {c['max_abs']:.3e} bad {c['bad']}/{c['elements']}")
    if ok:
        res["triton"].update(bench(run_triton, args.warmup_ms, args.rep_ms))
        res["triton"]["gbps"] = nbytes / (res["triton"]["median_ms"] * 1e-3) / 1e9

    # The torch operator.
    desc, op, outs = torch_op(case["family"], b, env)
    tres = {"op": desc}
    try:
        tchecks = check_outputs(case["family"], b, env, outputs=outs())
        tres["correct"] = all(c["bad"] == 0 for c in tchecks)
        tres["check"] = tchecks
        tres.update(bench(op, args.warmup_ms, args.rep_ms))
        tres["gbps"] = nbytes / (tres["median_ms"] * 1e-3) / 1e9
    except Exception as e:  # an operator missing from this torch
        tres["error"] = f"{type(e).__name__}: {e}"
    res["torch"] = tres

    # Copy of the same traffic.
    copy_bytes = int(nbytes / 2) // 16 * 16
    src = torch.empty(copy_bytes // 4, dtype=torch.float32, device=dev).fill_(1.0)
    dst = torch.empty_like(src)
    cres = bench(lambda: dst.copy_(src), args.warmup_ms, args.rep_ms)
    cres["bytes"] = copy_bytes
    cres["gbps"] = 2.0 * copy_bytes / (cres["median_ms"] * 1e-3) / 1e9
    res["copy"] = cres
    return res


def _runtime(path, cache={}):
    """libtle_rt through ctypes, opened once per path."""
    from tle_ctypes import open_runtime
    if path not in cache:
        cache[path] = open_runtime(path)
    return cache[path]


def run_tle(case, suite, env, b, args, nbytes):
    """Times the case's tle launches (cubins DIR/<kernel>.sm_90a.cubin) through libtle_rt after
    checking their outputs (written over NaN or -1) like Triton's; {"correct", "median_ms", "gbps"}."""
    import ctypes
    import torch
    from tle_ctypes import TleKernel
    lib = _runtime(args.tle_lib)
    ctype = {"i1": ctypes.c_int8, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
             "i64": ctypes.c_int64, "u8": ctypes.c_uint8, "u16": ctypes.c_uint16, "u32": ctypes.c_uint32,
             "u64": ctypes.c_uint64, "fp32": ctypes.c_float, "fp64": ctypes.c_double}
    launches = []
    for l in case["launches"]:
        entry, _, vals, grid = launch_values(l, suite["kernels"][l["kernel"]], env)
        cvals = [ctypes.c_uint64(b[v].data_ptr()) if ty.startswith("*") else ctype[ty](v) for _, ty, v in vals]
        path = os.path.join(args.tle_cubins, f"{l['kernel']}.sm_90a.cubin")
        launches.append((TleKernel(lib, path, entry), grid, cvals))

    def run():
        stream = torch.cuda.current_stream().cuda_stream
        for k, grid, vals in launches:
            k.launch(grid, stream, vals)

    for name, spec in case["buffers"].items():
        if spec.get("role") == "output":
            t = b[name]
            t.fill_(float("nan") if t.dtype.is_floating_point else -1)
    run()
    torch.cuda.synchronize()
    checks = check_outputs(case["family"], b, env)
    out = {"correct": all(c["bad"] == 0 for c in checks), "check": checks}
    if out["correct"]:
        out.update(bench(run, args.warmup_ms, args.rep_ms))
        out["gbps"] = nbytes / (out["median_ms"] * 1e-3) / 1e9
    return out


def cmd_run(args):
    import torch
    import triton
    torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64,
                   "i32": torch.int32, "i64": torch.int64}
    suite, root = load_suite(args.suite)
    props = torch.cuda.get_device_properties(0)
    doc = {"tool": "triton_suite.py", "suite": suite["suite"], "suite_file": os.path.relpath(os.path.abspath(args.suite), ROOT),
           "device": {"name": props.name, "sm_count": props.multi_processor_count,
                      "compute_capability": f"{props.major}.{props.minor}",
                      "memory_bytes": props.total_memory},
           "versions": {"torch": torch.__version__, "triton": triton.__version__, "python": platform.python_version(),
                        "cuda": torch.version.cuda},
           "method": {"timer": "triton.testing.do_bench: CUDA events, 256 MiB L2 flush before every repetition; median",
                      "warmup_ms": args.warmup_ms, "rep_ms": args.rep_ms,
                      "triton": "the suite's .tle source loaded as a module; constexprs and num_warps from the suite, "
                                "Triton's default num_stages; first_call_s includes the JIT compile",
                      "copy": "torch copy_ of bytes/2 (rounded down to 16), i.e. the same traffic"},
           "cases": []}
    env0 = {"SMS": props.multi_processor_count}
    cases = [c for c in suite["cases"]
             if not args.case or any(f in c["name"] or f == c["family"] for f in args.case)]
    start = time.time()
    status = 0
    for i, case in enumerate(cases):
        print(f"[{i + 1}/{len(cases)} {time.time() - start:.0f}s] {case.get('label', case['name'])}", flush=True)
        try:
            res = run_case(case, suite, env0, args, torch_dtype)
            if not res["triton"]["correct"]:
                status = 1
            t, to, c = res["triton"], res["torch"], res["copy"]
            if "tle_same_process" in res:
                tl_ = res["tle_same_process"]
                if not tl_["correct"]:
                    status = 1
                print(f"    tle (this process) {tl_.get('median_ms', float('nan')):.4f} ms "
                      f"{tl_.get('gbps', float('nan')):.0f} GB/s, vs Triton "
                      f"{t.get('median_ms', float('nan')) / tl_.get('median_ms', float('nan')):.3f}x", flush=True)
            print(f"    triton {t.get('median_ms', float('nan')):.4f} ms {t.get('gbps', float('nan')):.0f} GB/s | "
                  f"{to['op']} {to.get('median_ms', float('nan')):.4f} ms {to.get('gbps', float('nan')):.0f} GB/s | "
                  f"copy {c['gbps']:.0f} GB/s", flush=True)
        except Exception as e:
            import traceback
            traceback.print_exc()
            res = {"name": case["name"], "label": case.get("label", case["name"]), "family": case["family"],
                   "error": f"{type(e).__name__}: {e}"}
            status = 1
        doc["cases"].append(res)
        doc["elapsed_s"] = time.time() - start
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        torch.cuda.empty_cache()
    print(f"triton_suite.py: {len(cases)} cases in {time.time() - start:.1f} s; wrote {args.out}")
    return status


# ------------------------------------------------------------------------------------------------
# merge
# ------------------------------------------------------------------------------------------------


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarize_clocks(path):
    """min/median/max of the SM and memory clocks and the power sampled by nvidia-smi during the run
    (rows: timestamp, clocks.sm, clocks.mem, power.draw, temperature.gpu, utilization.gpu), over the
    samples where the GPU was busy (utilization > 0) when there are any."""
    if not path or not os.path.exists(path):
        return None
    rows = []
    with open(path) as fh:
        for row in csv.reader(fh):
            vals = [v.strip().split(" ")[0] for v in row]
            try:
                rows.append((int(vals[1]), int(vals[2]), float(vals[3]), float(vals[5]) if len(vals) > 5 else 1.0))
            except (IndexError, ValueError):
                continue
    busy = [r for r in rows if r[3] > 0]
    used = busy or rows

    def mmm(v):
        if not v:
            return None
        s = sorted(v)
        return {"min": s[0], "median": s[len(s) // 2], "max": s[-1], "samples": len(s)}
    return {"sm_mhz": mmm([r[0] for r in used]), "mem_mhz": mmm([r[1] for r in used]),
            "power_w": mmm([r[2] for r in used]), "busy_samples": len(busy), "all_samples": len(rows)}


def merge(tle, tri, gpu_info=None, clocks=None):
    rows = []
    by_name = {}
    for c in (tle or {}).get("cases", []):
        by_name.setdefault(c["name"], {})["tle"] = c
    for c in (tri or {}).get("cases", []):
        by_name.setdefault(c["name"], {})["py"] = c
    order = [c["name"] for c in (tle or tri or {}).get("cases", [])]
    order += [n for n in by_name if n not in order]
    for name in order:
        t = by_name[name].get("tle", {})
        p = by_name[name].get("py", {})
        r = {"name": name, "label": t.get("label") or p.get("label") or name, "family": t.get("family") or p.get("family"),
             "bytes": t.get("bytes") or p.get("bytes")}
        tt = t.get("tle") or {}
        r["tle_ms"] = tt.get("median_ms")
        r["tle_min_ms"], r["tle_max_ms"] = tt.get("min_ms"), tt.get("max_ms")
        r["tle_gbps"] = tt.get("gbps")
        r["copy_gbps"] = (t.get("copy") or {}).get("gbps")
        r["tle_fraction_of_copy"] = t.get("fraction_of_copy")
        r["tle_correct"] = t.get("correct")
        r["tle_error"] = t.get("error")
        r["tle_kernels"] = [{k: v for k, v in kk.items() if k in ("name", "num_warps", "registers", "local_bytes", "grid")}
                            for kk in t.get("kernels", [])]
        pt = p.get("triton") or {}
        r["triton_ms"], r["triton_gbps"], r["triton_correct"] = pt.get("median_ms"), pt.get("gbps"), pt.get("correct")
        r["triton_kernels"] = p.get("triton_kernels", [])
        r["triton_first_call_s"] = p.get("triton_first_call_s")
        r["torch_copy_gbps"] = (p.get("copy") or {}).get("gbps")
        r["triton_fraction_of_copy"] = (r["triton_gbps"] / r["torch_copy_gbps"]
                                        if r["triton_gbps"] and r["torch_copy_gbps"] else None)
        pto = p.get("torch") or {}
        r["torch_op"], r["torch_ms"], r["torch_gbps"] = pto.get("op"), pto.get("median_ms"), pto.get("gbps")
        r["torch_correct"] = pto.get("correct")
        r["torch_fraction_of_copy"] = (r["torch_gbps"] / r["torch_copy_gbps"]
                                       if r["torch_gbps"] and r["torch_copy_gbps"] else None)
        r["py_error"] = p.get("error") or pto.get("error")
        r["ratio_to_triton"] = r["triton_ms"] / r["tle_ms"] if r["tle_ms"] and r["triton_ms"] else None
        r["ratio_to_torch"] = r["torch_ms"] / r["tle_ms"] if r["tle_ms"] and r["torch_ms"] else None
        # tle's cubins timed in Triton's process (triton_suite.py run --tle-cubins), when present.
        sp = p.get("tle_same_process") or {}
        r["tle_same_process_ms"] = sp.get("median_ms")
        r["tle_same_process_correct"] = sp.get("correct")
        r["ratio_to_triton_same_process"] = (r["triton_ms"] / r["tle_same_process_ms"]
                                             if r["tle_same_process_ms"] and r["triton_ms"] else None)
        misses = []
        if r["tle_fraction_of_copy"] is not None and r["tle_fraction_of_copy"] < TARGET_COPY_FRACTION:
            misses.append(f"{r['tle_fraction_of_copy']:.2f} of copy")
        if r["ratio_to_triton"] is not None and r["ratio_to_triton"] < TARGET_TRITON_RATIO:
            misses.append(f"{r['ratio_to_triton']:.2f}x Triton")
        spills = [k for k in r["tle_kernels"] if k.get("local_bytes")]
        if spills:
            misses.append("spills: " + ", ".join(f"{k['name']} {k['local_bytes']} B" for k in spills))
        if r["tle_correct"] is False:
            misses.append("WRONG OUTPUT")
        if r["tle_error"]:
            misses.append("tle error")
        r["misses"] = misses
        rows.append(r)
    summary = {
        "cases": len(rows),
        "geomean_tle_fraction_of_copy": geomean([r["tle_fraction_of_copy"] for r in rows]),
        "geomean_triton_fraction_of_copy": geomean([r["triton_fraction_of_copy"] for r in rows]),
        "geomean_ratio_to_triton": geomean([r["ratio_to_triton"] for r in rows]),
        "geomean_ratio_to_torch": geomean([r["ratio_to_torch"] for r in rows]),
        "cases_meeting_copy_target": sum(1 for r in rows if (r["tle_fraction_of_copy"] or 0) >= TARGET_COPY_FRACTION),
        "cases_meeting_triton_target": sum(1 for r in rows if (r["ratio_to_triton"] or 0) >= TARGET_TRITON_RATIO),
        "targets": {"fraction_of_copy": TARGET_COPY_FRACTION, "ratio_to_triton": TARGET_TRITON_RATIO},
    }
    same = [r["ratio_to_triton_same_process"] for r in rows if r["ratio_to_triton_same_process"]]
    if same:
        summary["geomean_ratio_to_triton_same_process"] = geomean(same)
        summary["cases_meeting_triton_target_same_process"] = sum(1 for x in same if x >= TARGET_TRITON_RATIO)
        summary["cases_same_process"] = len(same)
    return {"summary": summary, "rows": rows, "device": (tle or {}).get("device") or (tri or {}).get("device"),
            "versions": (tri or {}).get("versions"), "tle_method": (tle or {}).get("method"),
            "triton_method": (tri or {}).get("method"), "gpu_info": gpu_info, "clocks": clocks,
            "tle": tle, "triton_torch": tri}


def f(v, spec):
    return "–" if v is None else format(v, spec)


def markdown(rep):
    dev = rep.get("device") or {}
    s = rep["summary"]
    L = [f"# Memory-bound suite on {dev.get('name', '?')} ({dev.get('sm_count', '?')} SMs)", ""]
    v = rep.get("versions") or {}
    m = rep.get("tle_method") or {}
    if v:
        L.append(f"- Triton {v.get('triton')}, torch {v.get('torch')} (CUDA {v.get('cuda')}); tle-bench: "
                 f"{m.get('reps', '?')} reps after {m.get('warmup', '?')} warm-up, L2 flushed before each rep, median.")
    ck = rep.get("clocks") or {}
    if ck.get("sm_mhz"):
        what = "busy" if ck.get("busy_samples") else "all"
        L.append(f"- Clocks during the run (nvidia-smi every 500 ms, {ck['sm_mhz']['samples']} {what} samples): SM "
                 f"{ck['sm_mhz']['min']}–{ck['sm_mhz']['max']} MHz (median {ck['sm_mhz']['median']}), memory "
                 f"{ck['mem_mhz']['min']}–{ck['mem_mhz']['max']} MHz, power up to {ck['power_w']['max']:.0f} W.")
    L.append("- GB/s = (inputs read once + outputs written once) / median time. *of copy* = over a device-to-device "
             "copy of the same traffic in the same process (cuMemcpyDtoD for tle, torch copy_ for Triton/torch). "
             "*vs Triton*, *vs torch* = their median time / ours (> 1: tle faster).")
    L += ["", "| case | tle ms | tle GB/s | of copy | Triton GB/s | of copy | vs Triton | torch GB/s | vs torch | check | notes |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rep["rows"]:
        chk = "ok" if r["tle_correct"] else ("ERROR" if r["tle_error"] else ("WRONG" if r["tle_correct"] is False else "–"))
        if r["triton_correct"] is False:
            chk += ", Triton WRONG"
        notes = "; ".join(r["misses"])
        L.append(f"| {r['label']} | {f(r['tle_ms'], '.4f')} | {f(r['tle_gbps'], '.0f')} | {f(r['tle_fraction_of_copy'], '.3f')} | "
                 f"{f(r['triton_gbps'], '.0f')} | {f(r['triton_fraction_of_copy'], '.3f')} | {f(r['ratio_to_triton'], '.3f')} | "
                 f"{f(r['torch_gbps'], '.0f')} | {f(r['ratio_to_torch'], '.3f')} | {chk} | {notes} |")
    L += ["", f"Geometric means over the cases: tle {f(s['geomean_tle_fraction_of_copy'], '.3f')} of copy bandwidth "
              f"(Triton {f(s['geomean_triton_fraction_of_copy'], '.3f')}); tle vs Triton "
              f"{f(s['geomean_ratio_to_triton'], '.3f')}x; tle vs torch {f(s['geomean_ratio_to_torch'], '.3f')}x. "
              f"Targets (issue 5): >= {TARGET_COPY_FRACTION} of copy on {s['cases_meeting_copy_target']}/{s['cases']} cases, "
              f">= {TARGET_TRITON_RATIO}x Triton on {s['cases_meeting_triton_target']}/{s['cases']}.", ""]
    if s.get("cases_same_process"):
        L += ["## tle and Triton timed in one process", "",
              "tle's cubins launched through libtle_rt from Triton's process (`triton_suite.py run --tle-cubins`), "
              "timed by the same `triton.testing.do_bench` as Triton, after the same output check.", "",
              "| case | tle ms (this process) | Triton ms | vs Triton (one process) | vs Triton (tle-bench) | check |",
              "|---|---:|---:|---:|---:|---|"]
        for r in rep["rows"]:
            if r["tle_same_process_ms"] is None and r["tle_same_process_correct"] is None:
                continue
            chk = "ok" if r["tle_same_process_correct"] else "WRONG"
            L.append(f"| {r['label']} | {f(r['tle_same_process_ms'], '.4f')} | {f(r['triton_ms'], '.4f')} | "
                     f"{f(r['ratio_to_triton_same_process'], '.3f')} | {f(r['ratio_to_triton'], '.3f')} | {chk} |")
        L += ["", f"Geometric mean, one process: {f(s['geomean_ratio_to_triton_same_process'], '.3f')}x Triton; "
                  f">= {TARGET_TRITON_RATIO}x on {s['cases_meeting_triton_target_same_process']}/{s['cases_same_process']}.", ""]
    L += ["## Kernels", "", "| case | tle kernel: warps, regs, spill B, grid | Triton: regs, spills, stages | Triton first call s | torch op |",
          "|---|---|---|---:|---|"]
    for r in rep["rows"]:
        tk = "; ".join(f"{k.get('name')}: {k.get('num_warps')}w, {k.get('registers', '?')} r, {k.get('local_bytes', '?')} B, "
                       f"{'x'.join(str(g) for g in k.get('grid', []) if g != 1) or 1}" for k in r["tle_kernels"])
        pk = "; ".join(f"{k.get('n_regs', '?')} r, {k.get('n_spills', '?')} sp, {k.get('num_stages', '?')} st"
                       for k in r["triton_kernels"])
        L.append(f"| {r['label']} | {tk or '–'} | {pk or '–'} | {f(r['triton_first_call_s'], '.2f')} | {r['torch_op'] or '–'} |")
    errs = [r for r in rep["rows"] if r["tle_error"] or r["py_error"]]
    if errs:
        L += ["", "## Errors", ""]
        for r in errs:
            if r["tle_error"]:
                L.append(f"- {r['name']} (tle-bench): {r['tle_error']}")
            if r["py_error"]:
                L.append(f"- {r['name']} (triton_suite.py): {r['py_error']}")
    return "\n".join(L) + "\n"


def cmd_merge(args):
    def load(p):
        if p and os.path.exists(p):
            with open(p) as fh:
                return json.load(fh)
        return None
    tle, tri = load(args.tle), load(args.triton)
    if tle is None and tri is None:
        print("triton_suite.py merge: neither JSON exists", file=sys.stderr)
        return 2
    gpu_info = None
    if args.gpu_info and os.path.exists(args.gpu_info):
        with open(args.gpu_info) as fh:
            gpu_info = fh.read()
    rep = merge(tle, tri, gpu_info, summarize_clocks(args.clocks))
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "report.json"), "w") as fh:
        json.dump(rep, fh, indent=1)
        fh.write("\n")
    md = markdown(rep)
    with open(os.path.join(args.out_dir, "report.md"), "w") as fh:
        fh.write(md)
    print(f"wrote {args.out_dir}/report.json and report.md")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="time the suite under Triton and torch")
    r.add_argument("--suite", default=os.path.join(ROOT, "bench", "suites", "memory_bound.json"))
    r.add_argument("--out", required=True)
    r.add_argument("--case", action="append", help="substring of case names (or a family); repeatable")
    r.add_argument("--set", action="append", type=lambda s: tuple(s.split("=", 1)), help="NAME=VALUE override")
    r.add_argument("--warmup-ms", type=int, default=25)
    r.add_argument("--rep-ms", type=int, default=100)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--tle-cubins", default="", help="also time tle's cubins of each case from this directory "
                   "(<kernel>.sm_90a.cubin) through libtle_rt in this process, with the same timer as Triton")
    r.add_argument("--tle-lib", default=os.path.join(ROOT, "build", "runtime", "libtle_rt.so"),
                   help="libtle_rt for --tle-cubins")
    m = sub.add_parser("merge", help="merge tle-bench and triton_suite.py JSON into report.{json,md}")
    m.add_argument("--tle")
    m.add_argument("--triton")
    m.add_argument("--gpu-info")
    m.add_argument("--clocks")
    m.add_argument("--out-dir", required=True)
    args = ap.parse_args()
    return cmd_run(args) if args.cmd == "run" else cmd_merge(args)


if __name__ == "__main__":
    sys.exit(main())
