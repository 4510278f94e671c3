"""Where the time of one top-k selector row goes: bench/topk/topk.tle's topk_radix_cluster_push
compiled with PHASES = 0..4 (it stops after that many phases: 0 the launch alone, 1 the row's
load, 2 the first radix pass, 3 every pass, 4 the whole kernel with its compaction), each timed
at batch 1 (do_bench medians, L2 flushed, interleaved rounds) after the whole kernel is checked
against torch.topk as an index set.

Usage: python3 bench/topk_phases.py --tlec TLEC --lib LIBTLE_RT --out DIR [--n 131072] [--rounds 5]
"""
import argparse
import ctypes
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "bench", "topk", "topk.tle")
# (name, BLOCK, RADIX, CLUSTER, warps): topk_bench.py's push variants at 1 x 131K.
CONFIGS = [("push8_16k", 16384, 11, 8, 16), ("push8_16k_r10", 16384, 10, 8, 16), ("push16_8k_r10", 8192, 10, 16, 16)]
PHASES = ["launch", "+ load", "+ pass 0", "+ later passes", "+ compaction (whole kernel)"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tlec", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=131072)
    ap.add_argument("--k", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    import torch
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from profile_common import time_rounds
    from tle_ctypes import TleKernel, open_runtime
    lib = open_runtime(args.lib)
    os.makedirs(args.out, exist_ok=True)
    n, k = args.n, args.k
    x = torch.randn(1, n, device="cuda", generator=torch.Generator(device="cuda").manual_seed(0))
    starts = torch.zeros(1, device="cuda", dtype=torch.int32)
    ends = torch.full((1,), n, device="cuda", dtype=torch.int32)
    out = torch.empty(1, k, device="cuda", dtype=torch.int32)
    stream = torch.cuda.current_stream().cuda_stream
    vals = [ctypes.c_uint64(t.data_ptr()) for t in (x, starts, ends, out)] + [ctypes.c_int32(n)]
    want = set(torch.topk(x, k, dim=1).indices[0].tolist())
    timed = {}
    for name, block, radix, cluster, warps in CONFIGS:
        for phases in range(len(PHASES)):
            path = os.path.join(args.out, f"{name}_p{phases}.cubin")
            sig = f"*fp32:16, *i32, *i32, *i32:16, i32:16, {k}, {block}, {radix}, {cluster}, {phases}"
            subprocess.run([args.tlec, SOURCE, "-n", "topk_radix_cluster_push", "-s", sig, "-w", str(warps),
                            "--arch", "sm_90a", "-o", path], check=True)
            kern = TleKernel(lib, path, "topk_radix_cluster_push")
            timed[(name, phases)] = lambda kern=kern, c=cluster: kern.launch((c,), stream, vals)
        out.fill_(-7)
        timed[(name, len(PHASES) - 1)]()
        torch.cuda.synchronize()
        if set(out[0].tolist()) != want:
            sys.exit(f"{name}: the selected indices differ from torch.topk's")
    ms = time_rounds(timed, args.rounds, 5, 25)
    print(f"{torch.cuda.get_device_name()}: top-k phases at 1 x {n}, k = {k} (µs, median of {args.rounds} rounds)")
    for name, *_ in CONFIGS:
        prev = 0.0
        for phases, label in enumerate(PHASES):
            t = statistics.median(ms[(name, phases)]) * 1e3
            print(f"{name:16s} {label:28s} {t:7.2f}  (+{t - prev:5.2f})")
            prev = t


if __name__ == "__main__":
    main()
