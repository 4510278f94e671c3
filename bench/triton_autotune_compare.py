"""Triton's side of `tle-bench --tune`: @triton.autotune over the same config list, and cold compile times.

Subcommands (run on the GPU machine, with Triton 3.6 and torch):

  autotune --configs CONFIGS.json --out OUT.json
      CONFIGS.json is written by `tle-bench --tune SPEC.json --export-configs CONFIGS.json`: the tune
      spec, its case and every candidate (constexprs, num_warps, num_stages, launch variables). The
      kernel source is loaded as a Python module (a .tle file is valid Triton), wrapped in
      triton.autotune(configs=[triton.Config(...) for each candidate], key=[]) and called once on the
      case's buffers with a fresh, empty TRITON_CACHE_DIR: that call compiles and benchmarks every
      config, so its wall time is Triton's tuning time. Launch variables (a persistent kernel's
      program count) become an extra, unused constexpr parameter of a copy of the source so that the
      grid function can read them from the config. Records the wall time, the best config, its median
      time (triton.testing.do_bench) and a correctness check against torch.

  compile --tlec TLEC --out OUT.json [--examples vector_add,softmax,...] [--repeat 3]   (default: every example)
      Cold compile time per example kernel (the `# Compile: tlec ...` line of examples/<name>.tle):
      tlec as a fresh process to a cubin, and Triton compiling the same @triton.jit function with
      the same signature, constexprs and num_warps via JITFunction.warmup in a fresh process with a
      fresh, empty TRITON_CACHE_DIR (Triton's import is timed separately and not counted). Medians.

  report --tle-json A.json [B.json...] --triton-json T.json [T2.json...] --compile-json C.json --out REPORT.md
      Merges tle-bench --tune's JSON, this script's autotune results and the compile times into one
      markdown report (tuning wall time ratio, best-config quality, cold compile ratio).
"""
import argparse
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Names visible to the spec's expressions (Python semantics, as tle-bench's Expr).
def _cdiv(a, b):
    return -(-a // b)


def _next_pow2(n):
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


EXPR_FUNCS = {"cdiv": _cdiv, "min": min, "max": max, "next_power_of_2": _next_pow2, "int": int, "float": float}


def ev(expr, env):
    if isinstance(expr, (int, float)):
        return expr
    return eval(str(expr), {"__builtins__": {}}, {**EXPR_FUNCS, **env})


def sig_entries(sig):
    return [s.strip() for s in sig.split(",") if s.strip()]


# ------------------------------------------------------------------------------------------------
# autotune
# ------------------------------------------------------------------------------------------------

def load_kernel(source_path, entry, extra_constexprs):
    """The @triton.jit function `entry` of `source_path`; with extra constexpr names, of a copy of
    the source whose `def entry(...)` gains them as trailing `NAME: tl.constexpr` parameters."""
    import importlib.machinery
    import importlib.util
    text = open(source_path).read()
    if extra_constexprs:
        m = re.search(r"def\s+" + re.escape(entry) + r"\s*\(", text)
        if not m:
            raise SystemExit(f"{source_path}: no def {entry}")
        depth, i = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        close = i - 1
        before = text[:close].rstrip()
        sep = "" if before.endswith(",") else ","
        text = before + sep + "".join(f" {n}: tl.constexpr," for n in extra_constexprs) + text[close:]
    tmpdir = tempfile.mkdtemp(prefix="tle-triton-src-")
    path = os.path.join(tmpdir, os.path.basename(source_path).replace(".tle", "") + "_tuned.py")
    with open(path, "w") as f:
        f.write(text)
    loader = importlib.machinery.SourceFileLoader("tle_tuned_" + entry, path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[loader.name] = mod
    loader.exec_module(mod)
    return getattr(mod, entry)


def make_buffers(torch, case, env):
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64,
              "i32": torch.int32, "i64": torch.int64}
    bufs = {}
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    for name, b in case["buffers"].items():
        shape = [int(ev(s, env)) for s in b["shape"]]
        dt = dtypes[b["dtype"]]
        role = b.get("role", "input")
        if role != "input":
            bufs[name] = torch.full(shape, float("nan"), device="cuda", dtype=dt) if dt.is_floating_point \
                else torch.zeros(shape, device="cuda", dtype=dt)
            continue
        init = b.get("init", "normal")
        m = re.match(r"(\w+)\s*(?:\((.*)\))?", init)
        kind, args = m.group(1), [float(ev(a, env)) for a in (m.group(2) or "").split(",") if a.strip()]
        if kind == "normal":
            mean, std = (args + [0.0, 1.0][len(args):])[:2]
            t = torch.randn(shape, device="cuda", generator=gen, dtype=torch.float32) * std + mean
        elif kind == "uniform":
            lo, hi = args
            t = torch.rand(shape, device="cuda", generator=gen, dtype=torch.float32) * (hi - lo) + lo
        elif kind == "zeros":
            t = torch.zeros(shape, device="cuda")
        elif kind == "ones":
            t = torch.ones(shape, device="cuda")
        else:
            raise SystemExit(f"buffer {name}: init {init} not supported here")
        bufs[name] = t.to(dt)
    return bufs


def reference_check(torch, family, bufs):
    """(ok, max_abs_err) of the family's output against torch."""
    if family == "matmul":
        want = torch.matmul(bufs["a"].float(), bufs["b"].float())
        got = bufs["c"].float()
        tol = 1e-3 * math.sqrt(bufs["a"].shape[1]) + 2e-3 * want.abs()
    elif family == "softmax":
        want = torch.softmax(bufs["x"].double(), dim=-1)
        got = bufs["y"].double()
        tol = 1e-8 + 1e-4 * want.abs()
    else:
        return None, None
    err = (got - want).abs()
    ok = bool(torch.isfinite(got).all()) and bool((err <= tol).all())
    return ok, float(err.max())


def cmd_autotune(args):
    cache = tempfile.mkdtemp(prefix="tle-triton-cache-")
    os.environ["TRITON_CACHE_DIR"] = cache  # cold: nothing compiled before
    t_import = time.perf_counter()
    import torch
    import triton
    import triton.testing
    t_import = time.perf_counter() - t_import
    ex = json.load(open(args.configs))
    spec = json.load(open(os.path.join(ROOT, ex["spec"]) if not os.path.isabs(ex["spec"]) else ex["spec"]))
    case = next(c for c in spec["cases"] if c["name"] == ex["case"])
    env = dict(ex["vars"])
    launch_vars = sorted({n for c in ex["configs"] for n in c.get("launch", {})})
    fn = load_kernel(os.path.join(ROOT, ex["source"]), ex["entry"], launch_vars)
    chosen = ex["configs"]
    if args.max_configs and len(chosen) > args.max_configs:  # an evenly spaced subset, for a short run
        step = len(chosen) / args.max_configs
        chosen = [chosen[int(i * step)] for i in range(args.max_configs)]
    configs = []
    for c in chosen:
        kw = dict(c["constexprs"])
        kw.update(c.get("launch", {}))
        configs.append(triton.Config(kw, num_warps=c["num_warps"], num_stages=c["num_stages"]))
    tuned = triton.autotune(configs=configs, key=[])(fn)

    bufs = make_buffers(torch, case, env)
    launch = case["launches"][0]
    runtime_args = iter(launch["args"])
    call_args = []
    for s in sig_entries(ex["signature"]):
        if re.fullmatch(r"-?\d+", s):  # a parameter specialised to this value (e.g. a unit stride)
            call_args.append(int(s))
            continue
        a = next(runtime_args)
        call_args.append(bufs[a] if a in bufs else ev(a, env))

    def grid(meta):
        genv = {**env, **meta}
        return tuple(int(ev(g, genv)) for g in launch["grid"])

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    tuned[grid](*call_args)
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    best = tuned.best_config
    best_kw = dict(best.kwargs)
    best_json = {"constexprs": {k: v for k, v in best_kw.items() if k not in launch_vars},
                 "num_warps": best.num_warps, "num_stages": best.num_stages}
    if launch_vars:
        best_json["launch"] = {k: best_kw[k] for k in launch_vars}
    # The best config's time, as Triton's own benchmark measures it (median, L2 cleared).
    ms = triton.testing.do_bench(lambda: tuned[grid](*call_args), return_mode="median")
    for name, b in case["buffers"].items():
        if b.get("role") == "output":
            bufs[name].fill_(float("nan"))
    tuned[grid](*call_args)
    torch.cuda.synchronize()
    ok, err = reference_check(torch, case["family"], bufs)
    timings = getattr(tuned, "configs_timings", None) or {}
    n_valid = sum(1 for v in timings.values() if all(math.isfinite(x) for x in (v if isinstance(v, list) else [v])))
    out = {"tool": "triton.autotune", "triton": triton.__version__, "torch": torch.__version__,
           "device": torch.cuda.get_device_name(), "case": ex["case"], "spec": ex["spec"],
           "configs": len(configs), "configs_exported": len(ex["configs"]), "configs_valid": n_valid, "autotune_wall_s": wall, "import_s": t_import,
           "best_config": best_json, "best_median_ms": ms, "correct": ok, "max_abs_err": err,
           "triton_cache_dir": "fresh, empty"}
    print(json.dumps(out, indent=1))
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


# ------------------------------------------------------------------------------------------------
# compile
# ------------------------------------------------------------------------------------------------

def all_examples():
    """Every examples/*.tle with a `# Compile: tlec` line, by name."""
    names = []
    for f in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        if f.endswith(".tle") and any(l.startswith("# Compile: tlec ") for l in open(os.path.join(ROOT, "examples", f))):
            names.append(f[:-len(".tle")])
    return names


def compile_line(example):
    path = os.path.join(ROOT, "examples", example + ".tle")
    for line in open(path):
        if line.startswith("# Compile: tlec "):
            words = shlex.split(line[len("# Compile: "):])
            o = {"path": path, "entry": None, "sig": None, "warps": 4, "stages": None, "defines": {}}
            for i, w in enumerate(words[:-1]):
                nxt = words[i + 1]
                if w == "-n":
                    o["entry"] = nxt
                elif w == "-s":
                    o["sig"] = nxt
                elif w == "-w":
                    o["warps"] = int(nxt)
                elif w in ("-ns", "--num-stages"):
                    o["stages"] = int(nxt)
                elif w == "-D":
                    k, v = nxt.split("=", 1)
                    o["defines"][k] = int(v)
            return o
    raise SystemExit(f"{path}: no `# Compile: tlec` line")


TRITON_CHILD = r'''
import json, os, sys, time, re
t0 = time.perf_counter()
import torch, triton
t_import = time.perf_counter() - t0
import importlib.machinery, importlib.util
cfg = json.loads(sys.argv[1])
loader = importlib.machinery.SourceFileLoader("cold_" + cfg["module"], cfg["path"])
spec = importlib.util.spec_from_loader(loader.name, loader)
mod = importlib.util.module_from_spec(spec)
loader.exec_module(mod)
fn = getattr(mod, cfg["entry"]) if cfg["entry"] else next(
    v for v in vars(mod).values() if isinstance(v, triton.runtime.jit.JITFunction))
dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64,
          "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8,
          "fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2}
names = fn.arg_names
sig = [s.strip() for s in cfg["sig"].split(",") if s.strip()]
args, kwargs = [], {}
for i, s in enumerate(sig):
    t = s.split(":")[0]
    div = s.split(":")[1] if ":" in s else ""
    if t.startswith("*"):
        args.append(dtypes[t[1:]])          # warmup() takes dtypes for pointers
    elif t in ("fp16", "bf16", "fp32", "fp64"):
        args.append(0.5)
    elif re.fullmatch(r"-?\d+", t):
        args.append(int(t))                 # constexpr or a runtime int specialised to 1
    else:
        args.append(16 if div == "16" else 17)
for k, v in cfg["defines"].items():
    kwargs[k] = v
opts = {"num_warps": cfg["warps"]}
if cfg["stages"]:
    opts["num_stages"] = cfg["stages"]
t1 = time.perf_counter()
fn.warmup(*args, grid=(1,), **kwargs, **opts)
t_compile = time.perf_counter() - t1
print(json.dumps({"import_s": t_import, "compile_s": t_compile}))
'''


def cmd_compile(args):
    results = []
    for ex in args.examples.split(","):
        c = compile_line(ex)
        tle_times, tri_times, tri_import, err = [], [], [], None
        for r in range(args.repeat):
            out = os.path.join(tempfile.mkdtemp(prefix="tle-cold-"), ex + ".cubin")
            cmd = [args.tlec, c["path"], "-s", c["sig"], "-w", str(c["warps"]), "--arch", args.arch, "-o", out]
            if c["entry"]:
                cmd += ["-n", c["entry"]]
            if c["stages"]:
                cmd += ["-ns", str(c["stages"])]
            for k, v in c["defines"].items():
                cmd += ["-D", f"{k}={v}"]
            t0 = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True)
            tle_times.append(time.perf_counter() - t0)
            if p.returncode != 0:
                err = "tlec: " + p.stderr[:300]
            env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(prefix="tle-cold-triton-"))
            cfg = {"module": f"{ex}_{r}", "path": c["path"], "entry": c["entry"], "sig": c["sig"],
                   "warps": c["warps"], "stages": c["stages"], "defines": c["defines"]}
            p = subprocess.run([sys.executable, "-c", TRITON_CHILD, json.dumps(cfg)], capture_output=True, text=True,
                               env=env, timeout=300)
            if p.returncode != 0:
                err = "triton: " + p.stderr[-600:]
                continue
            j = json.loads(p.stdout.strip().splitlines()[-1])
            tri_times.append(j["compile_s"])
            tri_import.append(j["import_s"])
        row = {"example": ex, "tlec_s": statistics.median(tle_times),
               "triton_s": statistics.median(tri_times) if tri_times else None,
               "triton_import_s": statistics.median(tri_import) if tri_import else None,
               "tlec_runs": tle_times, "triton_runs": tri_times, "num_warps": c["warps"], "signature": c["sig"]}
        if row["triton_s"]:
            row["triton_over_tlec"] = row["triton_s"] / row["tlec_s"]
        if err:
            row["error"] = err
        print(json.dumps({k: v for k, v in row.items() if not k.endswith("_runs")}), flush=True)
        results.append(row)
        # Rewritten after each example, so that a run stopped by a time limit keeps what it measured.
        with open(args.out, "w") as f:
            json.dump({"repeat": args.repeat, "arch": args.arch, "rows": results}, f, indent=1)


# ------------------------------------------------------------------------------------------------
# report
# ------------------------------------------------------------------------------------------------

def cmd_report(args):
    lines = ["# tle-bench --tune vs Triton's @triton.autotune", ""]
    tri = [json.load(open(p)) for p in args.triton_json if os.path.exists(p)]
    tri_by_case = {t["case"]: t for t in tri}
    lines += ["## Tuning over the same config list", "",
              "| case | configs | tle valid / timed | tle compile s | tle prune s | tle GPU s | tle total s | "
              "Triton autotune s | tle / Triton time | tle best ms | Triton best ms | tle best vs Triton best | "
              "exhaustive gap |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in args.tle_json:
        if not os.path.exists(p):
            continue
        doc = json.load(open(p))
        for c in doc.get("cases", []):
            w = c.get("wall_s", {})
            t = tri_by_case.get(c["case"], {})
            total = w.get("total")
            ratio = f"{total / t['autotune_wall_s']:.3f}" if total and t.get("autotune_wall_s") else ""
            best = c.get("winner", {}).get("median_ms")
            tbest = t.get("best_median_ms")
            quality = f"{tbest / best:.3f}x" if best and tbest else ""
            gap = c.get("exhaustive", {}).get("pruned_winner_gap_pct")
            mode = "exhaustive" if "exhaustive" in c else ("cache hit" if c.get("cache") == "hit" else "pruned")
            lines.append(
                f"| {c['case']} ({mode}) | {c.get('space', {}).get('candidates', '')} | "
                f"{c.get('prune', {}).get('valid', '')} / {c.get('gpu', {}).get('timed', '')} | "
                f"{w.get('compile', 0):.2f} | {w.get('prune', 0):.3f} | {w.get('gpu', 0):.2f} | "
                f"{(total or 0):.2f} | {t.get('autotune_wall_s', float('nan')):.1f} | {ratio} | "
                f"{'' if best is None else '%.4f' % best} | {'' if tbest is None else '%.4f' % tbest} | {quality} | "
                f"{'' if gap is None else '%.2f%%' % gap} |")
    lines += ["", "tle / Triton time: target < 0.1. tle best vs Triton best: Triton's best time over tle's "
              "(> 1: tle's tuned kernel is faster). Exhaustive gap: the pruned winner's time over the best of "
              "all valid candidates, minus 1 (target <= 3 %).", ""]
    for t in tri:
        lines.append(f"- Triton {t['case']}: best `{json.dumps(t['best_config'])}`, correct: {t['correct']} "
                     f"(Triton {t['triton']}, torch {t['torch']}, {t['device']})")
    if args.compile_json and os.path.exists(args.compile_json):
        comp = json.load(open(args.compile_json))
        lines += ["", "## Cold compile, one kernel (median of %d)" % comp["repeat"], "",
                  "| example | num_warps | tlec s (process) | Triton s (fresh cache, import excluded) | Triton / tlec |",
                  "|---|---:|---:|---:|---:|"]
        for r in comp["rows"]:
            tri_s = r.get("triton_s")
            tri_txt = "" if tri_s is None else "%.3f" % tri_s
            ratio_txt = "" if tri_s is None else "%.2f" % (tri_s / r["tlec_s"])
            note = (" error: " + r["error"][:120]) if r.get("error") else ""
            lines.append(f"| {r['example']} | {r['num_warps']} | {r['tlec_s']:.3f} | {tri_txt} | {ratio_txt} |{note}")
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("autotune")
    a.add_argument("--configs", required=True)
    a.add_argument("--out", required=True)
    a.add_argument("--max-configs", type=int, default=0,
                   help="autotune over an evenly spaced subset of this many configs (0: all)")
    c = sub.add_parser("compile")
    c.add_argument("--tlec", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--examples", default=",".join(all_examples()),
                   help="comma-separated names under examples/ (default: every example with a `# Compile:` line)")
    c.add_argument("--repeat", type=int, default=3)
    c.add_argument("--arch", default="sm_90a")
    r = sub.add_parser("report")
    r.add_argument("--tle-json", nargs="+", default=[])
    r.add_argument("--triton-json", nargs="+", default=[])
    r.add_argument("--compile-json", default="")
    r.add_argument("--out", required=True)
    args = ap.parse_args()
    {"autotune": cmd_autotune, "compile": cmd_compile, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    main()
