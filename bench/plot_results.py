#!/usr/bin/env python3
"""Draws the benchmark plots (PNG) from the JSON results that the benchmark scripts write.

Usage: bench/plot_results.py [--results bench/results] [--out DIR]

Reads, when present:
  memory_bound/report.json          (bench/run_suite.sh)      -> memory_bound.png
  matmul/matmul_compare_<dt>.json    (bench/matmul_compare.py) -> matmul_<dt>.png
  attention/attention.json          (bench/attention_bench.py) -> attention.png
and writes the PNGs into --out (default: the results directory, next to their data). Each plot
has one line (or bar) per implementation: tle, Triton 3.6, the vendor library or torch operator,
and for memory-bound kernels the device-to-device copy of the same bytes. Needs matplotlib
(Debian: python3-matplotlib); draws nothing and says so without it. Runs without a GPU.
"""
import argparse
import json
import os
import sys

MARKERS = {"tle": "o", "Triton 3.6": "s", "torch": "^", "copy": "x"}
COLORS = {"tle": "#1f77b4", "Triton 3.6": "#ff7f0e", "Triton 3.6 (3 stages)": "#ff7f0e",
          "Triton 3.6 (1 stage)": "#ffbb78", "cuBLAS": "#2ca02c", "torch": "#2ca02c",
          "torch SDPA": "#2ca02c", "copy": "#7f7f7f"}


def load(path):
    with open(path) as f:
        return json.load(f)


def plot_memory_bound(plt, report, out):
    """GB/s per case, grouped by kernel family (one panel each), one marker line per implementation."""
    rows = report["rows"]
    families = []
    for r in rows:
        if r["family"] not in families:
            families.append(r["family"])
    cols = 3
    nrows = (len(families) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.6 * nrows), squeeze=False)
    for i, fam in enumerate(families):
        ax = axes[i // cols][i % cols]
        rs = [r for r in rows if r["family"] == fam]
        labels = [r["label"].split(" ", 1)[1] if " " in r["label"] else r["label"] for r in rs]
        x = list(range(len(rs)))
        series = [("tle", "tle_gbps"), ("Triton 3.6", "triton_gbps"), ("torch", "torch_gbps"), ("copy", "copy_gbps")]
        for name, key in series:
            ys = [r.get(key) for r in rs]
            if all(y is None for y in ys):
                continue
            ax.plot(x, [y if y is not None else float("nan") for y in ys], marker=MARKERS[name], label=name,
                    color=COLORS[name], linestyle="--" if name == "copy" else "-")
        ax.set_title(fam)
        ax.set_xticks(x)
        ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=7)
        ax.set_ylabel("GB/s")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7)
    for j in range(len(families), nrows * cols):
        axes[j // cols][j % cols].axis("off")
    dev = report.get("device")
    dev = dev.get("name", "the GPU") if isinstance(dev, dict) else (dev or "the GPU")
    fig.suptitle(f"Memory-bound kernels on {dev}: achieved bandwidth (GB/s)", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_matmul(plt, data, out):
    """TFLOP/s per shape, one panel per tile configuration."""
    res = data["results"]
    configs = []
    for r in res:
        if r["config"] not in configs:
            configs.append(r["config"])
    fig, axes = plt.subplots(1, len(configs), figsize=(6.0 * len(configs), 4.0), squeeze=False)
    for i, cfg in enumerate(configs):
        ax = axes[0][i]
        rs = [r for r in res if r["config"] == cfg]
        labels = [f"{r['m']}x{r['n']}x{r['k']}" for r in rs]
        x = list(range(len(rs)))
        for name, key in [("tle", "tle_tflops"), ("Triton 3.6", "triton_tflops"), ("cuBLAS", "cublas_tflops")]:
            ax.plot(x, [r.get(key, float("nan")) for r in rs], marker="o", label=name, color=COLORS[name])
        ax.set_title(f"{data.get('dtype', '')} matmul, {cfg}")
        ax.set_xticks(x)
        ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=7)
        ax.set_ylabel("TFLOP/s")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_attention(plt, data, out):
    """TFLOP/s against sequence length, one panel per (head dim, causal)."""
    res = data["results"]
    keys = []
    for r in res:
        k = (r["D"], r["causal"])
        if k not in keys:
            keys.append(k)
    fig, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys), 3.6), squeeze=False)
    for i, (d, c) in enumerate(keys):
        ax = axes[0][i]
        rs = sorted((r for r in res if (r["D"], r["causal"]) == (d, c)), key=lambda r: r["N"])
        ns = [r["N"] for r in rs]
        for name, key in [("tle", "tle_tflops"), ("Triton 3.6 (3 stages)", "triton3_tflops"),
                          ("Triton 3.6 (1 stage)", "triton1_tflops"), ("torch SDPA", "sdpa_tflops")]:
            ax.plot(ns, [r.get(key, float("nan")) for r in rs], marker="o", label=name, color=COLORS[name])
        ax.set_xscale("log", base=2)
        ax.set_title(f"head dim {d}, {'causal' if c else 'non-causal'}", fontsize=9)
        ax.set_xlabel("N_CTX")
        ax.set_ylabel("TFLOP/s")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7)
    fig.suptitle("Attention forward, fp16", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--results", default=os.path.join(root, "results"))
    ap.add_argument("--out", default=None, help="directory of the PNGs (default: next to each JSON)")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_results.py: matplotlib is not installed (Debian: python3-matplotlib); no plots drawn")
        return 0
    jobs = [(os.path.join(args.results, "memory_bound", "report.json"), "memory_bound", "memory_bound.png",
             plot_memory_bound)]
    for dt in ("fp16", "bf16"):
        jobs.append((os.path.join(args.results, "matmul", f"matmul_compare_{dt}.json"), "matmul", f"matmul_{dt}.png",
                     plot_matmul))
    jobs.append((os.path.join(args.results, "attention", "attention.json"), "attention", "attention.png",
                 plot_attention))
    drawn = 0
    for src, sub, name, fn in jobs:
        if not os.path.exists(src):
            continue
        out_dir = args.out or os.path.join(args.results, sub)
        os.makedirs(out_dir, exist_ok=True)
        out = os.path.join(out_dir, name)
        fn(plt, load(src), out)
        print(f"plot_results.py: {out}")
        drawn += 1
    if not drawn:
        print(f"plot_results.py: no result files under {args.results}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
