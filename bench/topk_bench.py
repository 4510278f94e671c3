#!/usr/bin/env python3
"""Top-k benchmark (issue 34's must-show): bench/topk/topk.tle's radix-select kernels compiled by
tlec (launched through libtle_rt's C ABI with ctypes), the plain-Triton kernel of the same
source run by Python Triton, and torch.topk, on the DeepSeek-V3.2 indexer's selector shapes (k
2048, batch 1 and 64, sequences of 32K, 131K and 512K, each row with its own valid range) and
the radix top-k shapes (k 128 to 2048 over 8K to 256K values, batch 1 and 64).

Usage: python3 bench/topk_bench.py --tlec build/src/tlec --out DIR [--lib LIBTLE_RT] [--rounds N]
                                   [--quick] [--only selector|radix] [--cubins DIR] [--variants A,B]
       python3 bench/topk_bench.py --tlec build/src/tlec --out DIR --build-only [--emit ptx]

Every variant's output is checked against torch.topk before anything is timed: per row, the
indices are distinct and inside the row's valid range, their values sorted equal torch.topk's
values of the masked row (so every selected value is >= the k-th largest; ties may pick any of
the equal values), and a row with fewer than k valid columns holds all of them and -1 after.
Timing is the house method (bench/profile_common.py): triton.testing.do_bench (CUDA events, an
L2 flush before each repetition, median) in interleaved rounds, the median of the rounds.
torch.topk runs on the rows with the invalid columns already set to -inf (masking not timed).
Writes DIR/topk_bench.json and DIR/topk_bench.md (microseconds, ratios to torch.topk).
Prints 'SKIPPED: <why>' and exits 77 without torch, Triton or a GPU; exits 1 if a check fails."""
import argparse
import ctypes
import importlib.machinery
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "bench", "topk", "topk.tle")
SIG_X = "*fp32:16, *i32, *i32, *i32:16"

# variant -> (kernel, BLOCK, RADIX, CLUSTER or 0, warps); tlec compiles one cubin per (variant, k).
# A CTA whose part of a row fits one BLOCK reads it once (its keys stay in registers).
VARIANTS = {
    "tle_plain": ("topk_radix", 4096, 11, 0, 16),
    "tle_smem": ("topk_radix_smem", 8192, 11, 0, 16),
    "tle_cluster2_16k": ("topk_radix_cluster", 16384, 11, 2, 16),
    "tle_cluster4_8k": ("topk_radix_cluster", 8192, 11, 4, 16),
    "tle_cluster8_4k": ("topk_radix_cluster", 4096, 11, 8, 16),
    "tle_cluster8_16k": ("topk_radix_cluster", 16384, 11, 8, 16),
    "tle_push2_16k": ("topk_radix_cluster_push", 16384, 11, 2, 16),
    "tle_push4_8k": ("topk_radix_cluster_push", 8192, 11, 4, 16),
    "tle_push8_4k": ("topk_radix_cluster_push", 4096, 11, 8, 16),
    "tle_push8_16k": ("topk_radix_cluster_push", 16384, 11, 8, 16),
    # 32 warps (a thread half the keys): faster on batch-64 rows of 131K and 512K on an H100.
    "tle_push2_16k_w32": ("topk_radix_cluster_push", 16384, 11, 2, 32),
    "tle_push8_16k_w32": ("topk_radix_cluster_push", 16384, 11, 8, 32),
    # 10-bit digits: half the push tables and the scans of 11-bit ones, one pass more at most.
    "tle_push8_16k_r10": ("topk_radix_cluster_push", 16384, 10, 8, 16),
    # Clusters of 16 CTAs (non-portable; H100 and H200): the push tables of 2^11 bins would not
    # fit in shared memory (2 * 16 * 2048 * 4 bytes), so that variant counts 2^10 bins per pass.
    "tle_cluster16_8k": ("topk_radix_cluster", 8192, 11, 16, 16),
    "tle_push16_8k": ("topk_radix_cluster_push", 8192, 10, 16, 16),
    # 16 CTAs merging 10-bit counts (the fastest at 1 x 131K on an H200).
    "tle_cluster16_8k_r10": ("topk_radix_cluster", 8192, 10, 16, 16),
    # One cluster exchange: after the first pass rank 0 selects among the threshold bin's keys.
    "tle_cand8_16k": ("topk_radix_cluster_cand", 16384, 11, 8, 16),
    "tle_cand8_16k_r10": ("topk_radix_cluster_cand", 16384, 10, 8, 16),
    "tle_cand16_8k_r10": ("topk_radix_cluster_cand", 8192, 10, 16, 16),
}
PLAIN_RADIX = VARIANTS["tle_plain"][2]  # the plain kernel's scratch also serves a run without it
TRITON_CONFIG = ("topk_radix", 4096, 11, 16)  # Python Triton runs the plain kernel: BLOCK, RADIX, warps

SELECTOR = [(b, n, 2048) for b in (1, 64) for n in (32768, 131072, 524288)]
RADIX = [(b, n, k) for b in (1, 64) for n in (8192, 32768, 131072, 262144) for k in (128, 512, 2048)]


def hist_cols():
    """Columns of the plain kernel's scratch histogram (NPASS * 2^RADIX) for both its runs."""
    return max(((32 + r - 1) // r) << r for r in (PLAIN_RADIX, TRITON_CONFIG[2]))


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(77)


def signature(variant, k):
    kernel, block, radix, cluster, _ = VARIANTS[variant]
    sig = SIG_X + (", *i32:16" if kernel == "topk_radix" else "") + f", i32:16, {k}, {block}, {radix}"
    return sig + (f", {cluster}" if cluster else "")


def build_cubins(tlec, out_dir, ks, ext="cubin"):
    """tlec's cubins (or PTX, ext "ptx") of every variant at every k: {(variant, k): path};
    stops on an error."""
    os.makedirs(out_dir, exist_ok=True)
    paths = {}
    for variant, (kernel, _, _, _, warps) in VARIANTS.items():
        for k in ks:
            path = os.path.join(out_dir, f"{variant}_k{k}.sm_90a.{ext}")
            cmd = [tlec, SOURCE, "-n", kernel, "-s", signature(variant, k), "-w", str(warps), "--arch", "sm_90a",
                   "-o", path]
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                sys.exit(f"tlec failed: {' '.join(cmd)}\n{res.stderr}")
            paths[(variant, k)] = path
    return paths


def load_triton_kernel():
    """The plain kernel of bench/topk/topk.tle as Python Triton imports it."""
    loader = importlib.machinery.SourceFileLoader("tle_bench_topk", SOURCE)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[loader.name] = mod
    loader.exec_module(mod)
    return mod.topk_radix


def make_case(torch, batch, n, k, ranged, seed):
    """x [batch, n] fp32 normal values; starts/ends int32 [batch]. With `ranged`, the rows' valid
    ranges differ (DeepSeek's indexer: row i of a prefill sees a prefix of its own length); the
    last row ends at n and the shortest keeps at least 2k columns."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(batch, n, device="cuda", dtype=torch.float32, generator=g)
    starts = torch.zeros(batch, device="cuda", dtype=torch.int32)
    ends = torch.full((batch,), n, device="cuda", dtype=torch.int32)
    if ranged and batch > 1:
        lens = torch.linspace(max(2 * k, n // 4), n, batch, device="cuda").round().to(torch.int32)
        starts = ((n - lens) // 3).to(torch.int32)  # offset ranges, not only prefixes
        ends = starts + lens
    return x, starts, ends


def masked(torch, x, starts, ends):
    cols = torch.arange(x.shape[1], device=x.device)[None, :]
    ok = (cols >= starts[:, None].long()) & (cols < ends[:, None].long())
    return torch.where(ok, x, torch.full_like(x, float("-inf")))


def check(torch, name, out, x, starts, ends, k, ref_vals):
    """'' if out [batch, k] int32 selects the k largest of every row's valid range, else why not."""
    n_valid = (ends - starts).clamp(min=0).long()
    want = n_valid.clamp(max=k)
    sel = out >= 0
    if not torch.equal(sel.sum(1), want):
        return f"{name}: selected counts {sel.sum(1).tolist()[:8]} want {want.tolist()[:8]}"
    idx = out.long()
    inside = (idx >= starts[:, None].long()) & (idx < ends[:, None].long())
    if not bool((inside | ~sel).all()) or not bool((out[~sel] == -1).all()):
        return f"{name}: an index outside its row's valid range (or padding other than -1)"
    srt = torch.where(sel, idx, torch.full_like(idx, -1)).sort(dim=1).values
    if bool(((srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)).any()):
        return f"{name}: a repeated index"
    vals = torch.gather(x, 1, idx.clamp(min=0))
    vals = torch.where(sel, vals, torch.full_like(vals, float("-inf"))).sort(dim=1, descending=True).values
    if not torch.equal(vals, ref_vals):
        bad = (vals != ref_vals).any(dim=1).nonzero().flatten().tolist()
        return f"{name}: selected values differ from torch.topk's in rows {bad[:8]}"
    return ""


class Launcher:
    """Launches of every variant on one case's tensors: name -> callable writing `out`."""

    def __init__(self, torch, lib, cubins, triton_kernel):
        from tle_ctypes import TleKernel
        self.torch = torch
        self.kernels = {key: TleKernel(lib, path, VARIANTS[key[0]][0]) for key, path in cubins.items()}
        self.triton_kernel = triton_kernel
        self.broken = {}  # variant -> why its launch raised (left out from then on)

    def first_run(self, name, fn):
        """Runs fn once; '' or why it raised (the variant is then left out of later shapes)."""
        try:
            fn()
            self.torch.cuda.synchronize()
            return ""
        except Exception as e:  # a compile or launch error: report it, time the others
            msg = str(e).strip().splitlines()
            print(f"{name} raised {type(e).__name__}:\n" + "\n".join(msg[-30:]), flush=True)
            self.broken[name] = f"{name}: {type(e).__name__}: {msg[-1] if msg else ''}"
            return self.broken[name]

    def calls(self, x, starts, ends, out, hist, k):
        torch = self.torch
        batch = x.shape[0]
        stream = torch.cuda.current_stream().cuda_stream
        ptr = lambda t: ctypes.c_uint64(t.data_ptr())
        stride = ctypes.c_int32(x.stride(0))
        calls = {}
        for variant, (kernel, _, _, cluster, _) in VARIANTS.items():
            kern = self.kernels[(variant, k)]
            vals = [ptr(x), ptr(starts), ptr(ends), ptr(out)] + ([ptr(hist)] if kernel == "topk_radix" else [])
            vals.append(stride)
            grid = (batch * max(cluster, 1),)
            calls[variant] = lambda kern=kern, vals=vals, grid=grid: kern.launch(grid, stream, vals)
        if self.triton_kernel is not None:
            _, block, radix, warps = TRITON_CONFIG
            tk = self.triton_kernel
            calls["triton_plain"] = lambda: tk[(batch,)](x, starts, ends, out, hist, x.stride(0), K=k, BLOCK=block,
                                                         RADIX=radix, num_warps=warps)
        calls["torch_topk"] = None  # filled by the caller (needs the masked rows)
        return {name: fn for name, fn in calls.items() if name not in self.broken}


def run_case(torch, launcher, time_rounds, args, suite, batch, n, k, seed):
    x, starts, ends = make_case(torch, batch, n, k, suite == "selector", seed)
    xm = masked(torch, x, starts, ends)
    ref_vals = torch.topk(xm, k, dim=1).values
    out = torch.empty(batch, k, device="cuda", dtype=torch.int32)
    hist = torch.empty(batch, hist_cols(), device="cuda", dtype=torch.int32)
    calls = launcher.calls(x, starts, ends, out, hist, k)
    calls["torch_topk"] = lambda: torch.topk(xm, k, dim=1)
    row = {"suite": suite, "batch": batch, "seq": n, "k": k, "checks": {}}
    failures = []
    for name, fn in calls.items():
        if name == "torch_topk":
            continue
        out.fill_(12345)
        why = launcher.first_run(name, fn) or check(torch, name, out, x, starts, ends, k, ref_vals)
        row["checks"][name] = why or "ok"
        if why:
            failures.append(why)
    timed = {name: fn for name, fn in calls.items() if row["checks"].get(name, "ok") == "ok"}
    ms = time_rounds(timed, args.rounds, args.warmup_ms, args.rep_ms)
    row["us"] = {name: statistics.median(v) * 1e3 for name, v in ms.items()}
    if args.rounds > 1:
        row["us_rounds"] = {name: [t * 1e3 for t in v] for name, v in ms.items()}
    return row, failures


def tie_check(torch, launcher, k=256):
    """Rows of few distinct values (ties decide) and one constant row, checked, not timed."""
    x = torch.randint(-3, 4, (4, 20000), device="cuda").float()
    x[3] = 0.5
    starts = torch.tensor([0, 5, 1000, 0], device="cuda", dtype=torch.int32)
    ends = torch.tensor([20000, 19995, 1000 + k // 2, 20000], device="cuda", dtype=torch.int32)
    ref_vals = torch.topk(masked(torch, x, starts, ends), k, dim=1).values
    out = torch.empty(4, k, device="cuda", dtype=torch.int32)
    hist = torch.empty(4, hist_cols(), device="cuda", dtype=torch.int32)
    failures = []
    for name, fn in launcher.calls(x, starts, ends, out, hist, k).items():
        if fn is None:
            continue
        out.fill_(12345)
        why = launcher.first_run(name, fn) or check(torch, name + " (ties)", out, x, starts, ends, k, ref_vals)
        print(f"  ties k={k} {name}: {why or 'ok'}", flush=True)
        if why:
            failures.append(why)
    return failures


def best_tle(us):
    """(name, µs) of the fastest TLE variant of a row's times, or (None, nan)."""
    tle = {n: v for n, v in us.items() if n.startswith("tle_")}
    return min(tle.items(), key=lambda kv: kv[1]) if tle else (None, float("nan"))


def summary(rows):
    """Issue 34's targets against the rows: the selector at batch 1 x 131K (20 µs) and batch 64 x
    32K (40 µs) by the best TLE variant, and how many shapes it beats torch.topk at."""
    def sel(batch, seq):
        hit = [best_tle(r["us"])[1] for r in rows if r["suite"] == "selector" and r["batch"] == batch and r["seq"] == seq]
        return hit[0] if hit else float("nan")
    faster = sum(1 for r in rows if best_tle(r["us"])[1] < r["us"].get("torch_topk", 0))
    return (f"selector batch 1 x 131072: {sel(1, 131072):.1f} µs (target 20); batch 64 x 32768: {sel(64, 32768):.1f} µs "
            f"(target 40); the best TLE variant is faster than torch.topk at {faster} of {len(rows)} shapes")


def markdown(rows, names):
    lines = ["| suite | batch | seq | k | " + " | ".join(f"{n} (µs)" for n in names) + " | best tle | best / torch.topk |",
             "| --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in names) + " | --- | ---: |"]
    for r in rows:
        us = r["us"]
        name, t = best_tle(us)
        ratio = us["torch_topk"] / t if name and "torch_topk" in us else float("nan")
        cells = [f"{us[n]:.1f}" if n in us else "fail" for n in names]
        lines.append(f"| {r['suite']} | {r['batch']} | {r['seq']} | {r['k']} | " + " | ".join(cells)
                     + f" | {name} | {ratio:.2f}x faster |")
    return "\n".join(lines) + "\n\n" + summary(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tlec", required=True, help="the tlec that builds the cubins")
    ap.add_argument("--out", required=True, help="folder for topk_bench.json, topk_bench.md (and the cubins)")
    ap.add_argument("--cubins", default="", help="folder for the cubins (default: DIR/cubins)")
    ap.add_argument("--lib", default="", help="libtle_rt.so (default: $TLE_RT_LIBRARY, else beside tlec's build)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup-ms", type=float, default=5)
    ap.add_argument("--rep-ms", type=float, default=25)
    ap.add_argument("--only", choices=["selector", "radix"], default=None)
    ap.add_argument("--quick", action="store_true", help="a few shapes only (a smoke test)")
    ap.add_argument("--variants", default="", help="comma-separated TLE variants to build and time (default: all)")
    ap.add_argument("--build-only", action="store_true", help="build every variant's cubin (no GPU, torch or triton)")
    ap.add_argument("--emit", choices=["cubin", "ptx"], default="cubin", help="with --build-only: PTX instead")
    args = ap.parse_args()
    if args.variants:
        keep = args.variants.split(",")
        unknown = [v for v in keep if v not in VARIANTS]
        if unknown:
            sys.exit(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
        for v in [v for v in VARIANTS if v not in keep]:
            del VARIANTS[v]
    if args.build_only:
        cubins = build_cubins(args.tlec, args.cubins or os.path.join(args.out, "cubins"),
                              sorted({c[2] for c in SELECTOR + RADIX} | {256}), args.emit)
        print(f"built {len(cubins)} {args.emit} files of {len(VARIANTS)} variants")
        return
    try:
        import torch
    except ImportError:
        skip("torch is not installed")
    try:
        import triton  # noqa: F401
    except ImportError:
        skip("triton is not installed")
    if not torch.cuda.is_available():
        skip("no CUDA GPU")
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from profile_common import time_rounds
    from tle_ctypes import open_runtime
    lib_path = args.lib or os.environ.get("TLE_RT_LIBRARY") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(args.tlec))), "runtime", "libtle_rt.so")
    lib = open_runtime(lib_path)
    cases = [("selector", *c) for c in SELECTOR] + [("radix", *c) for c in RADIX]
    if args.only:
        cases = [c for c in cases if c[0] == args.only]
    if args.quick:
        cases = [c for c in cases if c[2] <= 32768 or c[0] == "selector" and c[1] == 1][:6]
    t0 = time.time()
    cubins = build_cubins(args.tlec, args.cubins or os.path.join(args.out, "cubins"), sorted({c[3] for c in cases} | {256}))
    try:
        triton_kernel = load_triton_kernel()
    except Exception as e:  # the source does not import under this Triton: time the rest
        print(f"Triton cannot import {SOURCE}: {type(e).__name__}: {e}")
        triton_kernel = None
    launcher = Launcher(torch, lib, cubins, triton_kernel)
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}; "
          f"cubins built in {time.time() - t0:.1f} s", flush=True)
    failures = tie_check(torch, launcher)
    rows = []
    for i, (suite, batch, n, k) in enumerate(cases):
        row, bad = run_case(torch, launcher, time_rounds, args, suite, batch, n, k, seed=i)
        failures += bad
        rows.append(row)
        us = row["us"]
        print(f"{suite:8s} b={batch:2d} n={n:6d} k={k:4d}  " + "  ".join(f"{name} {v:8.1f}" for name, v in us.items())
              + "  µs" + "".join(f"\n  FAIL {w}" for w in bad), flush=True)
    names = list(VARIANTS) + ["triton_plain", "torch_topk"]
    os.makedirs(args.out, exist_ok=True)
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
            "tlec": subprocess.run([args.tlec, "--version"], capture_output=True, text=True).stdout.strip(),
            "variants": {v: dict(zip(("kernel", "BLOCK", "RADIX", "CLUSTER", "warps"), c))
                                                            for v, c in VARIANTS.items()},
            "triton_config": dict(zip(("kernel", "BLOCK", "RADIX", "warps"), TRITON_CONFIG)),
            "method": "triton.testing.do_bench medians (CUDA events, L2 flushed before each repetition), "
                      f"median of {args.rounds} interleaved rounds, warmup {args.warmup_ms} ms, rep {args.rep_ms} ms",
            "seconds": time.time() - t0, "summary": summary(rows), "failures": failures, "results": rows}
    with open(os.path.join(args.out, "topk_bench.json"), "w") as f:
        json.dump(meta, f, indent=2)
    with open(os.path.join(args.out, "topk_bench.md"), "w") as f:
        f.write(f"Top-k on {meta['device']} (torch {meta['torch']}, Triton {meta['triton']}); {meta['method']}.\n\n")
        f.write(markdown(rows, names))
    print(markdown(rows, names))
    print(f"{len(rows)} shapes in {time.time() - t0:.0f} s; " + (f"{len(failures)} check failures" if failures else "all checks passed"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
