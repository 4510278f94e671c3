#!/usr/bin/env python3
"""Times examples/softmax.tle under Triton, torch.softmax and a torch copy, and merges tle-bench-softmax's JSON into one report.

The .tle file is loaded as a Python module (importlib SourceFileLoader): its body is an ordinary
@triton.jit kernel, so Triton compiles the very source tlec compiles. Timing uses
triton.testing.do_bench (median, with its 256 MiB L2 flush before every repetition), the same
method tle-bench-softmax uses with CUDA events.

Usage:
  python3 bench/triton_softmax.py --tle-json OUT/tle_softmax.json --out-dir OUT
  python3 bench/triton_softmax.py --rows 4096 --cols 4096 --out-dir OUT   # Triton/torch only
Writes OUT/softmax_report.json and OUT/softmax_report.md.
"""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import platform
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_tle_module(path):
    """Imports a .tle file as a Python module; Triton's inspect-based source lookup works because
    the module is file-backed (its __file__ is the .tle path)."""
    sys.dont_write_bytecode = True  # no __pycache__ next to the examples
    name = "tle_example_" + os.path.splitext(os.path.basename(path))[0]
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


def bench(fn, warmup_ms, rep_ms):
    """Median / min / p10 / p90 milliseconds of fn under triton.testing.do_bench."""
    import triton.testing

    q = triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=[0.5, 0.0, 0.1, 0.9])
    med, mn, p10, p90 = (float(v) for v in q)
    return {"median_ms": med, "min_ms": mn, "p10_ms": p10, "p90_ms": p90}


def run_triton_side(args, grids, num_warps_list):
    import torch
    import triton

    mod = load_tle_module(os.path.abspath(args.source))
    kernel = mod.softmax_kernel
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    rows, cols = args.rows, args.cols
    block = triton.next_power_of_2(cols)
    torch.manual_seed(0)
    x = torch.randn(rows, cols, device=dev, dtype=torch.float32) * 2.0
    y = torch.empty_like(x)
    ref = torch.softmax(x.double(), dim=-1)
    traffic = 2.0 * rows * cols * 4  # bytes read + written

    def gbps(ms):
        return traffic / (ms * 1e-3) / 1e9

    results = []

    def check(out, name):
        err = (out.double() - ref).abs()
        max_abs = err.max().item()
        ok = bool((err <= 2e-6 + 1e-5 * ref).all().item()) and bool(torch.isfinite(out).all().item())
        print(f"  check {name:<40} max_abs {max_abs:.3e}  {'PASS' if ok else 'FAIL'}", flush=True)
        return max_abs, ok

    for grid in grids:
        for nw in num_warps_list:
            name = f"triton softmax (grid {grid}, {nw} warps)"
            extra = {} if args.num_stages is None else {"num_stages": args.num_stages}

            def launch(grid=grid, nw=nw):
                kernel[(grid,)](y, x, x.stride(0), y.stride(0), rows, cols, BLOCK_SIZE=block,
                                num_warps=nw, **extra)

            y.fill_(float("nan"))
            launch()
            torch.cuda.synchronize()
            max_abs, ok = check(y, name)
            r = {"name": name, "kind": "triton", "grid": grid, "num_warps": nw,
                 "num_stages": args.num_stages, "block_size": block, "max_abs": max_abs, "correct": ok}
            if ok:
                r.update(bench(launch, args.warmup_ms, args.rep_ms))
                r["gbps"] = gbps(r["median_ms"])
            results.append(r)

    max_abs, ok = check(torch.softmax(x, dim=-1), "torch.softmax")
    r = {"name": "torch.softmax", "kind": "torch", "max_abs": max_abs, "correct": ok}
    r.update(bench(lambda: torch.softmax(x, dim=-1), args.warmup_ms, args.rep_ms))
    r["gbps"] = gbps(r["median_ms"])
    results.append(r)

    dst = torch.empty_like(x)
    r = {"name": "torch copy_ (same bytes)", "kind": "copy"}
    r.update(bench(lambda: dst.copy_(x), args.warmup_ms, args.rep_ms))
    r["gbps"] = gbps(r["median_ms"])
    results.append(r)

    return {
        "device": {"name": props.name, "sm_count": props.multi_processor_count,
                   "compute_capability": f"{props.major}.{props.minor}"},
        "versions": {"torch": torch.__version__, "triton": triton.__version__,
                     "python": platform.python_version(), "cuda": torch.version.cuda},
        "source": os.path.relpath(args.source, ROOT),
        "shape": [rows, cols],
        "method": {"timer": "triton.testing.do_bench (CUDA events, 256 MiB L2 flush per rep), median",
                   "warmup_ms": args.warmup_ms, "rep_ms": args.rep_ms},
        "results": results,
    }


def merge(tle, py):
    """The merged report: every row with GB/s and its ratio to the copy of the same run, plus
    tle-vs-Triton speedups at matching (grid, num_warps)."""
    rows = []
    summary = {}
    tle_copy = None
    if tle:
        tle_copy = next((r for r in tle["results"] if r["kind"] == "copy"), None)
        nw = tle["kernel"]["num_warps"]
        for r in tle["results"]:
            rows.append({"impl": r["name"], "source": "tle-bench-softmax (C++)", "kind": r["kind"],
                         "grid": r.get("grid"), "num_warps": nw if r["kind"] == "tle" else None,
                         "median_ms": r["median_ms"], "p10_ms": r["p10_ms"], "p90_ms": r["p90_ms"],
                         "gbps": r["gbps"],
                         "vs_copy": r["gbps"] / tle_copy["gbps"] if tle_copy else None})
    py_copy = None
    if py:
        py_copy = next((r for r in py["results"] if r["kind"] == "copy"), None)
        for r in py["results"]:
            if "median_ms" not in r:
                rows.append({"impl": r["name"] + " (WRONG OUTPUT, not timed)", "source": "triton_softmax.py",
                             "kind": r["kind"], "grid": r.get("grid"), "num_warps": r.get("num_warps"),
                             "median_ms": None, "p10_ms": None, "p90_ms": None, "gbps": None, "vs_copy": None})
                continue
            rows.append({"impl": r["name"], "source": "triton_softmax.py", "kind": r["kind"],
                         "grid": r.get("grid"), "num_warps": r.get("num_warps"),
                         "median_ms": r["median_ms"], "p10_ms": r["p10_ms"], "p90_ms": r["p90_ms"],
                         "gbps": r["gbps"],
                         "vs_copy": r["gbps"] / py_copy["gbps"] if py_copy else None})
    timed = [r for r in rows if r["median_ms"] is not None]
    ours = [r for r in timed if r["kind"] == "tle"]
    triton_rows = [r for r in timed if r["kind"] == "triton"]
    torch_rows = [r for r in timed if r["kind"] == "torch"]
    comparisons = []
    for o in ours:
        match = [t for t in triton_rows if t["grid"] == o["grid"] and t["num_warps"] == o["num_warps"]]
        for t in match:
            comparisons.append({"tle": o["impl"], "triton": t["impl"],
                                "speedup_tle_over_triton": t["median_ms"] / o["median_ms"]})
    if ours:
        best_ours = min(ours, key=lambda r: r["median_ms"])
        summary["best_tle"] = {"impl": best_ours["impl"], "median_ms": best_ours["median_ms"],
                               "gbps": best_ours["gbps"], "vs_copy": best_ours["vs_copy"]}
    if triton_rows:
        best_tr = min(triton_rows, key=lambda r: r["median_ms"])
        summary["best_triton"] = {"impl": best_tr["impl"], "median_ms": best_tr["median_ms"],
                                  "gbps": best_tr["gbps"], "vs_copy": best_tr["vs_copy"]}
    if torch_rows:
        summary["torch_softmax"] = {"median_ms": torch_rows[0]["median_ms"], "gbps": torch_rows[0]["gbps"],
                                    "vs_copy": torch_rows[0]["vs_copy"]}
    if ours and triton_rows:
        summary["speedup_best_tle_over_best_triton"] = (summary["best_triton"]["median_ms"]
                                                        / summary["best_tle"]["median_ms"])
    if ours and torch_rows:
        summary["speedup_best_tle_over_torch"] = torch_rows[0]["median_ms"] / summary["best_tle"]["median_ms"]
    summary["matched_comparisons"] = comparisons
    return {"rows": rows, "summary": summary, "tle": tle, "triton_torch": py}


def fmt(v, spec):
    return "–" if v is None else format(v, spec)


def markdown(report):
    tle, py = report["tle"], report["triton_torch"]
    src = tle or py
    dev = src["device"]
    shape = src["shape"]
    lines = [f"# Softmax {shape[0]}x{shape[1]} fp32 on {dev['name']} ({dev['sm_count']} SMs)", ""]
    if tle:
        k = tle["kernel"]
        lines.append(f"- tle: `{os.path.basename(tle['cubin'])}` ({k.get('compiler') or 'tlec'}), "
                     f"num_warps {k['num_warps']}, BLOCK_SIZE {k['constexprs'].get('BLOCK_SIZE')}, "
                     f"{k['registers']} registers; driver {tle['device']['driver_version']}; "
                     f"{tle['method']['reps']} timed reps after {tle['method']['warmup']} warm-up, "
                     f"L2 flushed ({tle['method']['l2_flush_bytes'] >> 20} MiB memset) before each; median.")
    if py:
        v = py["versions"]
        lines.append(f"- Triton {v['triton']}, torch {v['torch']} (CUDA {v['cuda']}): same source "
                     f"`{py['source']}`, timed with triton.testing.do_bench (median, L2 flushed).")
    lines.append("- GB/s = (bytes read + bytes written) / median time; *vs copy* = that bandwidth over a "
                 "device-to-device copy of the same bytes timed in the same process (cuMemcpyDtoD for "
                 "the C++ rows, torch `copy_` for the Python rows).")
    lines += ["", "| implementation | grid | num_warps | median ms | p10–p90 ms | GB/s | vs copy |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for r in report["rows"]:
        p = "–" if r["p10_ms"] is None else f"{r['p10_ms']:.4f}–{r['p90_ms']:.4f}"
        lines.append(f"| {r['impl']} | {fmt(r['grid'], 'd')} | {fmt(r['num_warps'], 'd')} | "
                     f"{fmt(r['median_ms'], '.4f')} | {p} | {fmt(r['gbps'], '.0f')} | {fmt(r['vs_copy'], '.3f')} |")
    s = report["summary"]
    lines += ["", "## Ratios", ""]
    for c in s.get("matched_comparisons", []):
        lines.append(f"- {c['tle']} vs {c['triton']}: {c['speedup_tle_over_triton']:.3f}x "
                     f"({'tle faster' if c['speedup_tle_over_triton'] > 1 else 'Triton faster'})")
    if "speedup_best_tle_over_best_triton" in s:
        lines.append(f"- best tle ({s['best_tle']['impl']}) vs best Triton ({s['best_triton']['impl']}): "
                     f"{s['speedup_best_tle_over_best_triton']:.3f}x")
    if "speedup_best_tle_over_torch" in s:
        lines.append(f"- best tle vs torch.softmax: {s['speedup_best_tle_over_torch']:.3f}x")
    for key, label in (("best_tle", "best tle"), ("best_triton", "best Triton"), ("torch_softmax", "torch.softmax")):
        if key in s and s[key].get("vs_copy") is not None:
            lines.append(f"- {label}: {s[key]['gbps']:.0f} GB/s = {s[key]['vs_copy']:.3f} of the copy's bandwidth")
    if tle and not tle.get("correct", True):
        lines.append("- **tle output was wrong: not timed** (see tle_softmax.json `correctness`)")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tle-json", help="tle-bench-softmax's --out file (optional)")
    ap.add_argument("--source", default=os.path.join(ROOT, "examples", "softmax.tle"))
    ap.add_argument("--rows", type=int, help="default: the tle JSON's shape, else 4096")
    ap.add_argument("--cols", type=int, help="default: the tle JSON's shape, else 4096")
    ap.add_argument("--grids", help="comma-separated grids; default: those of the tle JSON, "
                                    "else min(rows, 4*SMs) and rows")
    ap.add_argument("--num-warps", help="comma-separated; default: the tle kernel's num_warps, 4 and 8")
    ap.add_argument("--num-stages", type=int, default=None, help="default: Triton's default")
    ap.add_argument("--warmup-ms", type=int, default=25)
    ap.add_argument("--rep-ms", type=int, default=200)
    ap.add_argument("--out-dir", required=True)
    args = ap.parse_args()

    tle = None
    if args.tle_json:
        with open(args.tle_json) as f:
            tle = json.load(f)
    shape = tle["shape"] if tle else [4096, 4096]
    args.rows = args.rows or shape[0]
    args.cols = args.cols or shape[1]
    if args.grids:
        grids = [int(g) for g in args.grids.split(",")]
    elif tle and tle.get("results"):
        grids = [r["grid"] for r in tle["results"] if r["kind"] == "tle"]
    elif tle:
        grids = [r["grid"] for r in tle["correctness"]]
    else:
        import torch
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        grids = sorted({min(args.rows, 4 * sms), args.rows})
    if args.num_warps:
        warps = [int(w) for w in args.num_warps.split(",")]
    else:
        warps = [tle["kernel"]["num_warps"]] if tle else []
        warps += [w for w in (4, 8) if w not in warps]

    print(f"triton_softmax.py: {args.rows}x{args.cols}, grids {grids}, num_warps {warps}", flush=True)
    py = run_triton_side(args, grids, warps)
    report = merge(tle, py)
    os.makedirs(args.out_dir, exist_ok=True)
    jpath = os.path.join(args.out_dir, "softmax_report.json")
    mpath = os.path.join(args.out_dir, "softmax_report.md")
    with open(jpath, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    md = markdown(report)
    with open(mpath, "w") as f:
        f.write(md)
    print(md)
    print(f"wrote {jpath} and {mpath}")
    bad = [r for r in py["results"] if r.get("correct") is False]
    return 1 if bad or (tle and not tle.get("correct", True)) else 0


if __name__ == "__main__":
    sys.exit(main())
