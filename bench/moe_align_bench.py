#!/usr/bin/env python3
"""MoE align-block-size on the GPU: the plain-Triton version under Triton and under tlec, and TLE's cooperative-grid and cluster variants, checked, then timed side by side.

Sources: bench/moe_align/moe_align.tle (three plain-Triton kernels: count, prefix, scatter; the
Triton baseline, run by Triton 3.6 from the same file and compiled by tlec) and
bench/moe_align/moe_align_tle.tle (moe_align_coop: one cooperative launch with a grid barrier;
moe_align_cluster: one launch of a single 8-CTA cluster). tlec's cubins are launched through
libtle_rt's C ABI (bench/tle_ctypes.py) on torch's stream.

Shapes (issue 34): 256 and 512 experts, top-8, blocks of 64 and 128, 256 / 4096 / 163,840 tokens,
routing uniform (8 distinct experts per token) and Zipf-skewed (weights 1 / rank^1.2, 8 distinct
per token, drawn with the Gumbel top-k trick). Every variant's outputs are checked against a
torch reference before it is timed: num_tokens_post_pad and expert_ids exactly, each expert's
valid places holding exactly its entries (any order), padding and tail equal to numel.

Timing: each variant's call (all its launches) is captured CALLS times into a CUDA graph; a
replay is timed with CUDA events and divided by CALLS (launch overhead excluded, L2 warm, as in
an engine that replays its graphs); the median over --replays replays is one round's time; the
variants take turns in rotating order for --rounds rounds and the table shows the median round.
Where a capture fails, that variant is timed the same way on direct launches (marked "stream").
The TLE variants' launch configurations (warps; the cooperative grid) are picked per shape by a
short run over a few candidates first; the plain version runs at one configuration (BLOCK 1024,
4 warps) under both compilers. A second table has triton.testing.do_bench's times of direct
launches (launch overhead included, L2 flushed before each; --no-do-bench leaves it out).

Usage:
  python3 bench/moe_align_bench.py --tlec build/src/tlec --out DIR [--lib build/runtime/libtle_rt.so]
      [--experts 256,512] [--block-sizes 64,128] [--tokens 256,4096,163840] [--routing uniform,zipf]
      [--rounds 5] [--replays 10] [--calls 20] [--no-tune] [--no-do-bench] [--build-only [--emit ptx]]
Writes DIR/moe_align.json and DIR/moe_align.md (and the cubins under DIR/cubins). Exit status:
0 when every variant was correct, 1 otherwise, 77 ("SKIPPED: <why>") without torch, triton or a
CUDA device; --build-only builds the cubins and exits (no torch needed).
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLAIN_SOURCE = os.path.join(ROOT, "bench", "moe_align", "moe_align.tle")
TLE_SOURCE = os.path.join(ROOT, "bench", "moe_align", "moe_align_tle.tle")
SKIP = 77
TOP_K = 8
PLAIN_BLOCK, PLAIN_WARPS = 1024, 4   # entries per count/scatter program, warps (both compilers)
FUSED_BLOCK = 2048                   # entries per step of the TLE variants' loops
CLUSTER = 8                          # CTAs of moe_align_cluster's one cluster
COOP_WARPS, CLUSTER_WARPS = (4, 8), (8, 16)
STAGES = (4096, 16384)               # staging entries per CTA of moe_align_coop_staged
TARGET_TOKENS, TARGET_US = 163840, 30.0  # issue 34: at most 30 us at 163,840 tokens
VARIANTS = ("triton", "tlec_plain", "tle_coop", "tle_coop_staged", "tle_cluster")
TLE_VARIANTS = ("tle_coop", "tle_coop_staged", "tle_cluster")
DEVICE = "cuda"                      # where inputs and references live (a host check may set "cpu")
LABELS = {"triton": "Triton 3.6 (plain)", "tlec_plain": "tlec (plain)", "tle_coop": "TLE cooperative",
          "tle_coop_staged": "TLE cooperative, staged",
          "tle_cluster": "TLE cluster"}


def skip(why):
    """Prints SKIPPED and exits 77."""
    print(f"SKIPPED: {why}", flush=True)
    sys.exit(SKIP)


def experts_p2(experts):
    """The next power of two >= experts (the kernels' tile of experts)."""
    return 1 << max(0, experts - 1).bit_length()


def blocks_per_step(block_size):
    """Blocks whose expert_ids and padding one program (one step) fills: 4096 places."""
    return max(1, 4096 // block_size)


def cubin_specs(experts_list, block_sizes):
    """Every cubin the run needs: dicts of stem, source, kernel, signature and warps."""
    specs = [dict(stem="moe_count", source=PLAIN_SOURCE, kernel="moe_count_kernel",
                  sig=f"*i32:16, *i32:16, i32, {PLAIN_BLOCK}", warps=PLAIN_WARPS)]
    for e in experts_list:
        p2 = experts_p2(e)
        for b in block_sizes:
            nb = blocks_per_step(b)
            specs.append(dict(stem=f"moe_prefix_e{e}_b{b}", source=PLAIN_SOURCE, kernel="moe_prefix_kernel",
                              sig=f"*i32:16, *i32, {e}, {p2}, {b}", warps=PLAIN_WARPS))
            specs.append(dict(stem=f"moe_scatter_e{e}_b{b}", source=PLAIN_SOURCE, kernel="moe_scatter_kernel",
                              sig=f"*i32:16, *i32:16, *i32:16, *i32:16, i32, i32, {p2}, {b}, {PLAIN_BLOCK}, {nb}",
                              warps=PLAIN_WARPS))
            for w in COOP_WARPS:
                specs.append(dict(stem=f"moe_coop_e{e}_b{b}_w{w}", source=TLE_SOURCE, kernel="moe_align_coop",
                                  sig=f"*i32:16, *i32:16, *i32:16, *i32, *i32:16, i32, {e}, {p2}, {b}, "
                                      f"{FUSED_BLOCK}, {nb}", warps=w))
                for st in STAGES:
                    specs.append(dict(stem=f"moe_coop_staged_e{e}_b{b}_w{w}_s{st}", source=TLE_SOURCE,
                                      kernel="moe_align_coop_staged",
                                      sig=f"*i32:16, *i32:16, *i32:16, *i32, *i32:16, i32, {e}, {p2}, {b}, "
                                          f"{FUSED_BLOCK}, {nb}, {st}", warps=w))
            for w in CLUSTER_WARPS:
                specs.append(dict(stem=f"moe_cluster_e{e}_b{b}_w{w}", source=TLE_SOURCE,
                                  kernel="moe_align_cluster",
                                  sig=f"*i32:16, *i32:16, *i32:16, *i32, i32, {e}, {p2}, {b}, {FUSED_BLOCK}, "
                                      f"{nb}, {CLUSTER}", warps=w))
    return specs


def build_cubins(tlec, specs, out_dir, arch, emit="cubin", jobs=8):
    """Compiles every spec with tlec into out_dir/STEM.ARCH.cubin (or .ptx with emit="ptx", where
    there is no ptxas); returns stem -> path. Raises RuntimeError with tlec's message when one
    fails."""
    os.makedirs(out_dir, exist_ok=True)

    def one(spec):
        path = os.path.join(out_dir, f"{spec['stem']}.{arch}.{emit}")
        cmd = [tlec, spec["source"], "-n", spec["kernel"], "-s", spec["sig"], "-w", str(spec["warps"]),
               "--arch", arch, "-o", path] + (["--emit=ptx"] if emit == "ptx" else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"tlec failed ({' '.join(cmd)}):\n{r.stderr}")
        return spec["stem"], path
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return dict(pool.map(one, specs))


def find_runtime(tlec, lib):
    """libtle_rt: --lib, else beside a build tree's tlec (build/runtime), an install's (lib/) or
    tlec itself."""
    if lib:
        return lib
    here = os.path.dirname(os.path.abspath(tlec))
    for cand in (os.path.join(here, "..", "runtime", "libtle_rt.so"), os.path.join(here, "..", "lib", "libtle_rt.so"),
                 os.path.join(here, "libtle_rt.so")):
        if os.path.exists(cand):
            return os.path.normpath(cand)
    raise RuntimeError(f"no libtle_rt.so near {tlec}; pass --lib")


# ------------------------------------------------------------------------------------------------
# Inputs and the reference (torch, on the GPU)
# ------------------------------------------------------------------------------------------------


def make_topk_ids(torch, tokens, experts, routing, seed):
    """int32 [tokens * TOP_K]: TOP_K distinct experts per token, uniformly or Zipf-skewed."""
    gen = torch.Generator(device=DEVICE).manual_seed(seed)
    u = torch.rand(tokens, experts, device=DEVICE, generator=gen).clamp_(1e-20, 1.0)
    if routing == "uniform":
        score = u
    else:  # Gumbel top-k: TOP_K draws without replacement, weights 1 / rank^1.2 over shuffled experts
        rank = torch.randperm(experts, device=DEVICE, generator=gen).to(torch.float32) + 1.0
        score = -1.2 * torch.log(rank)[None, :] - torch.log(-torch.log(u))
    return score.topk(TOP_K, dim=1).indices.to(torch.int32).reshape(-1).contiguous()


def reference(torch, topk_ids, experts, block_size):
    """counts, starts, post_pad, expert_ids and each valid place's expert of moe_align_block_size."""
    numel = topk_ids.numel()
    counts = torch.bincount(topk_ids.long(), minlength=experts)
    nblk = (counts + block_size - 1) // block_size
    starts = (torch.cumsum(nblk, 0) - nblk) * block_size
    total_blocks = int(nblk.sum())
    max_len = numel + experts * (block_size - 1)
    max_blocks = (max_len + block_size - 1) // block_size
    expert_ids = torch.full((max_blocks,), -1, dtype=torch.int32, device=DEVICE)
    ar = torch.arange(experts, device=DEVICE)
    expert_ids[:total_blocks] = torch.repeat_interleave(ar, nblk).to(torch.int32)
    place_expert = torch.repeat_interleave(ar, nblk * block_size)
    offset = torch.arange(total_blocks * block_size, device=DEVICE) - starts[place_expert]
    valid = offset < counts[place_expert]
    return dict(counts=counts, post_pad=total_blocks * block_size, expert_ids=expert_ids,
                place_expert=place_expert, valid=valid, max_len=max_len)


def check(torch, ref, topk_ids, out):
    """The first difference of out (sorted_ids, expert_ids, post_pad) from ref, or None."""
    numel = topk_ids.numel()
    post_pad = int(out["post_pad"][0])
    if post_pad != ref["post_pad"]:
        return f"num_tokens_post_pad {post_pad}, expected {ref['post_pad']}"
    if not torch.equal(out["expert_ids"], ref["expert_ids"]):
        b = int((out["expert_ids"] != ref["expert_ids"]).nonzero()[0])
        return f"expert_ids[{b}] = {int(out['expert_ids'][b])}, expected {int(ref['expert_ids'][b])}"
    head = out["sorted_ids"][:post_pad]
    vals = head[ref["valid"]].long()
    if bool(((vals < 0) | (vals >= numel)).any()):
        return "a valid place holds an index outside [0, numel)"
    if not torch.equal(torch.sort(vals).values, torch.arange(numel, device=DEVICE)):
        return "the valid places do not hold every index exactly once"
    if not torch.equal(topk_ids[vals].long(), ref["place_expert"][ref["valid"]]):
        return "an index sits in another expert's run"
    if bool((head[~ref["valid"]] != numel).any()) or bool((out["sorted_ids"][post_pad:] != numel).any()):
        return f"a padding or tail place is not {numel}"
    return None


# ------------------------------------------------------------------------------------------------
# The variants: each a callable making one moe_align_block_size call on its own outputs
# ------------------------------------------------------------------------------------------------


def outputs(torch, ref):
    """Output buffers of one variant."""
    max_blocks = ref["expert_ids"].numel()
    return dict(sorted_ids=torch.empty(ref["max_len"], dtype=torch.int32, device="cuda"),
                expert_ids=torch.empty(max_blocks, dtype=torch.int32, device="cuda"),
                post_pad=torch.empty(1, dtype=torch.int32, device="cuda"))


def plain_grids(numel, max_len, block_size):
    """Grids of the count and scatter kernels."""
    max_blocks = (max_len + block_size - 1) // block_size
    count = (numel + PLAIN_BLOCK - 1) // PLAIN_BLOCK
    nb = blocks_per_step(block_size)
    return count, max(count, (max_blocks + nb - 1) // nb)


def triton_variant(torch, mod, ids, out, ws, experts, block_size, max_len):
    """The plain version's three launches under Triton."""
    numel, p2, nb = ids.numel(), experts_p2(experts), blocks_per_step(block_size)
    g_count, g_scatter = plain_grids(numel, max_len, block_size)

    def run():
        mod.moe_count_kernel[(g_count,)](ids, ws, numel, BLOCK=PLAIN_BLOCK, num_warps=PLAIN_WARPS)
        mod.moe_prefix_kernel[(1,)](ws, out["post_pad"], NUM_EXPERTS=experts, EXPERTS_P2=p2,
                                    BLOCK_SIZE=block_size, num_warps=PLAIN_WARPS)
        mod.moe_scatter_kernel[(g_scatter,)](ids, out["sorted_ids"], out["expert_ids"], ws, numel, max_len,
                                             EXPERTS_P2=p2, BLOCK_SIZE=block_size, BLOCK=PLAIN_BLOCK,
                                             BLOCKS=nb, num_warps=PLAIN_WARPS)
    return run


def ptrs(*tensors):
    """ctypes values of the tensors' device addresses."""
    return [ctypes.c_uint64(t.data_ptr()) for t in tensors]


def tlec_plain_variant(torch, kernels, ids, out, ws, experts, block_size, max_len):
    """The plain version's three launches of tlec's cubins."""
    numel = ids.numel()
    g_count, g_scatter = plain_grids(numel, max_len, block_size)
    count, prefix, scatter = kernels
    a_count = ptrs(ids, ws) + [ctypes.c_int32(numel)]
    a_prefix = ptrs(ws, out["post_pad"])
    a_scatter = ptrs(ids, out["sorted_ids"], out["expert_ids"], ws) + [ctypes.c_int32(numel), ctypes.c_int32(max_len)]

    def run():
        stream = torch.cuda.current_stream().cuda_stream
        count.launch((g_count,), stream, a_count)
        prefix.launch((1,), stream, a_prefix)
        scatter.launch((g_scatter,), stream, a_scatter)
    run.keep = (ids, out, ws)  # the launches hold only their addresses
    return run


def coop_variant(torch, kernel, ids, out, ws, ctas):
    """moe_align_coop on `ctas` CTAs."""
    args = ptrs(ids, out["sorted_ids"], out["expert_ids"], out["post_pad"], ws) + [ctypes.c_int32(ids.numel())]

    def run():
        kernel.launch((ctas,), torch.cuda.current_stream().cuda_stream, args)
    run.keep = (ids, out, ws)
    return run


def cluster_variant(torch, kernel, ids, out):
    """moe_align_cluster on one cluster."""
    args = ptrs(ids, out["sorted_ids"], out["expert_ids"], out["post_pad"]) + [ctypes.c_int32(ids.numel())]

    def run():
        kernel.launch((CLUSTER,), torch.cuda.current_stream().cuda_stream, args)
    run.keep = (ids, out)
    return run


def checked(torch, run, ref, ids, out):
    """Runs a variant once on poisoned outputs and checks it: None or the first difference."""
    for t in out.values():
        t.fill_(-7)
    run()
    torch.cuda.synchronize()
    return check(torch, ref, ids, out)


# ------------------------------------------------------------------------------------------------
# Timing
# ------------------------------------------------------------------------------------------------


class Timed:
    """A variant's call as a CUDA graph of `calls` calls (or, where capture fails, direct calls);
    us() times one replay (or burst) with CUDA events, per call."""

    def __init__(self, torch, run, calls):
        self.torch, self.run, self.calls, self.graph, self.mode = torch, run, calls, None, "graph"
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            run()
            run()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        try:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(calls):
                    run()
            g.replay()
            torch.cuda.synchronize()
            self.graph = g
        except Exception as e:  # a launch that cannot be captured: time direct launches
            self.mode, self.why = "stream", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            torch.cuda.synchronize()

    def once(self):
        if self.graph is not None:
            self.graph.replay()
        else:
            for _ in range(self.calls):
                self.run()

    def us(self, replays):
        """Median microseconds per call over `replays` timed replays (after one untimed)."""
        t = self.torch
        self.once()
        times = []
        for _ in range(replays):
            start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            start.record()
            self.once()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1000.0 / self.calls)
        return statistics.median(times)


def rounds_us(timed, rounds, replays):
    """key -> per-round median us, the keys taking turns in rotating order."""
    keys = list(timed)
    res = {k: [] for k in keys}
    for r in range(rounds):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            res[k].append(timed[k].us(replays))
    return res


# ------------------------------------------------------------------------------------------------
# One shape
# ------------------------------------------------------------------------------------------------


def tune(torch, cands, ref, ids, calls, replays):
    """The fastest correct candidate (config, run, out, us) or None, and a note per candidate;
    cands are (config, run, out). Candidates that fail their check or cannot launch are noted and
    left out; a lone candidate is only checked."""
    best, notes = None, {}
    for config, run, out in cands:
        try:
            err = checked(torch, run, ref, ids, out)
        except Exception as e:  # a cooperative grid larger than the device holds, a compile error...
            notes[config] = f"failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            print(f"  {config}: {notes[config]}", flush=True)
            continue
        if err:
            notes[config] = f"wrong: {err}"
            print(f"  {config}: {notes[config]}", flush=True)
            continue
        if len(cands) == 1:
            notes[config] = "correct"
            return (config, run, out, 0.0), notes
        us = Timed(torch, run, calls).us(replays)
        notes[config] = round(us, 3)
        if best is None or us < best[3]:
            best = (config, run, out, us)
    return best, notes


def candidates(torch, ctx, ids, ref, experts, block_size, tune_all):
    """variant -> [(config, run, outputs)]: one configuration of the plain version per compiler,
    a few of each TLE variant (one with --no-tune). Every candidate has its own outputs (and
    workspace)."""
    p2, max_len, k, sms = experts_p2(experts), ref["max_len"], ctx["kernels"], ctx["sms"]
    zeros = lambda n: torch.zeros(n, dtype=torch.int32, device="cuda")  # noqa: E731
    plain = f"BLOCK={PLAIN_BLOCK}, {PLAIN_WARPS} warps, 3 launches"
    out_t, out_p = outputs(torch, ref), outputs(torch, ref)
    plain_kernels = (k["moe_count"], k[f"moe_prefix_e{experts}_b{block_size}"],
                     k[f"moe_scatter_e{experts}_b{block_size}"])
    res = {"triton": [(plain, triton_variant(torch, ctx["triton_mod"], ids, out_t, zeros(4 * p2), experts,
                                             block_size, max_len), out_t)],
           "tlec_plain": [(plain, tlec_plain_variant(torch, plain_kernels, ids, out_p, zeros(4 * p2), experts,
                                                     block_size, max_len), out_p)],
           "tle_coop": [], "tle_coop_staged": [], "tle_cluster": []}
    # Up to four CTAs per SM (their shared histograms are small), down to one per eight SMs; a grid
    # that cannot be co-resident is refused at launch and left out.
    ctas_list = sorted({sms * 4, sms * 2} | {max(1, sms >> i) for i in range(4)}, reverse=True) if tune_all else [sms]
    for w in (COOP_WARPS if tune_all else COOP_WARPS[-1:]):
        for ctas in ctas_list:
            out = outputs(torch, ref)
            run = coop_variant(torch, k[f"moe_coop_e{experts}_b{block_size}_w{w}"], ids, out, zeros(p2 + 1), ctas)
            res["tle_coop"].append((f"{ctas} CTAs, {w} warps", run, out))
            for st in (STAGES if tune_all else STAGES[:1]):
                out = outputs(torch, ref)
                run = coop_variant(torch, k[f"moe_coop_staged_e{experts}_b{block_size}_w{w}_s{st}"], ids, out,
                                   zeros(p2 + 1), ctas)
                res["tle_coop_staged"].append((f"{ctas} CTAs, {w} warps, {st} staged", run, out))
    for w in (CLUSTER_WARPS if tune_all else CLUSTER_WARPS[-1:]):
        out = outputs(torch, ref)
        run = cluster_variant(torch, k[f"moe_cluster_e{experts}_b{block_size}_w{w}"], ids, out)
        res["tle_cluster"].append((f"{CLUSTER} CTAs (1 cluster), {w} warps", run, out))
    return res


def run_shape(torch, ctx, experts, block_size, tokens, routing, args):
    """Checks and times every variant at one shape; returns the row."""
    ids = make_topk_ids(torch, tokens, experts, routing, seed=experts * 7 + block_size * 3 + tokens)
    ref = reference(torch, ids, experts, block_size)
    row = dict(experts=experts, block_size=block_size, tokens=tokens, top_k=TOP_K, numel=ids.numel(),
               routing=routing, post_pad=ref["post_pad"], variants={})
    cands = candidates(torch, ctx, ids, ref, experts, block_size, not args.no_tune)
    timed = {}
    for name in VARIANTS:
        best, notes = tune(torch, cands[name], ref, ids, args.calls, max(3, args.replays // 3))
        v = dict(correct=best is not None, candidates=notes)
        row["variants"][name] = v
        if best is None:
            continue
        v["config"] = best[0]
        timed[name] = Timed(torch, best[1], args.calls)
        v["timing"] = timed[name].mode
        if timed[name].mode != "graph":
            v["capture_error"] = timed[name].why
        if args.do_bench:
            import triton.testing
            v["do_bench_us"] = 1000.0 * triton.testing.do_bench(best[1], warmup=10, rep=50, return_mode="median")
    for name, us in rounds_us(timed, args.rounds, args.replays).items():
        row["variants"][name]["us"] = statistics.median(us)
        row["variants"][name]["us_rounds"] = [round(x, 3) for x in us]
    summarize(row)
    return row


def summarize(row):
    """Adds the best TLE variant, its ratio to Triton (Triton's time / its time) and the target."""
    v = row["variants"]
    tle = [(v[n]["us"], n) for n in TLE_VARIANTS if "us" in v.get(n, {})]
    if tle:
        row["best_tle_us"], row["best_tle"] = min(tle)
    if tle and "us" in v.get("triton", {}):
        row["triton_over_best_tle"] = v["triton"]["us"] / row["best_tle_us"]
    if row["tokens"] == TARGET_TOKENS and tle:
        row["meets_target_us"] = row["best_tle_us"] <= TARGET_US


# ------------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------------


def table(rows, key):
    """Markdown rows of the times under `key` ("us": graphs; "do_bench_us": direct launches), each
    with its ratio to Triton's, and the best TLE variant's ratio."""
    lines = ["| experts | block | tokens | routing | " + " | ".join(LABELS[n] + " µs" for n in VARIANTS)
             + " | Triton / best TLE |",
             "| ---: | ---: | ---: | --- | " + " | ".join("---:" for _ in VARIANTS) + " | ---: |"]
    for r in rows:
        cells, tri = [], r["variants"].get("triton", {}).get(key)
        for n in VARIANTS:
            v = r["variants"].get(n, {})
            if key not in v:
                cells.append("failed" if not v.get("correct") else "-")
                continue
            ratio = "" if n == "triton" or tri is None else f" ({tri / v[key]:.2f}x)"
            stream = key == "us" and v.get("timing") != "graph"
            cells.append(f"{v[key]:.2f}{ratio}" + (" stream" if stream else ""))
        tle = [r["variants"][n][key] for n in TLE_VARIANTS if key in r["variants"].get(n, {})]
        best = f"{tri / min(tle):.2f}x" if tle and tri is not None else "-"
        lines.append(f"| {r['experts']} | {r['block_size']} | {r['tokens']} | {r['routing']} | "
                     + " | ".join(cells) + f" | {best} |")
    return lines


def markdown(doc):
    """The report: per shape each variant's time and its ratio to Triton (CUDA graphs; then direct
    launches when they were timed), the verdicts on the issue's targets, the configurations."""
    rows = doc["rows"]
    lines = [f"# MoE align-block-size ({doc['device']}, Triton {doc['triton']}, torch {doc['torch']})", "",
             doc["method"], ""] + table(rows, "us")
    lines += ["", "Ratios in parentheses: Triton's time / the variant's (> 1: faster than Triton)."]
    ratios = [r["triton_over_best_tle"] for r in rows if "triton_over_best_tle" in r]
    if ratios:
        lines.append(f"- Best TLE variant faster than Triton at every shape: {'yes' if min(ratios) > 1 else 'no'} "
                     f"(lowest ratio {min(ratios):.2f}x).")
    target = [r for r in rows if "meets_target_us" in r]
    if target:
        worst = max(r["best_tle_us"] for r in target)
        lines.append(f"- At {TARGET_TOKENS} tokens the best TLE variant takes at most {worst:.2f} µs "
                     f"(target {TARGET_US:.0f} µs: {'met' if all(r['meets_target_us'] for r in target) else 'missed'}).")
    lines.append("- Configurations picked per shape: " + "; ".join(
        f"{r['experts']}/{r['block_size']}/{r['tokens']}/{r['routing']}: coop "
        f"{r['variants'].get('tle_coop', {}).get('config', '-')}, staged "
        f"{r['variants'].get('tle_coop_staged', {}).get('config', '-')}, cluster "
        f"{r['variants'].get('tle_cluster', {}).get('config', '-')}" for r in rows) + ".")
    if any("do_bench_us" in v for r in rows for v in r["variants"].values()):
        lines += ["", "## Direct launches (triton.testing.do_bench: launch overhead included, L2 flushed)", ""]
        lines += table(rows, "do_bench_us")
    return "\n".join(lines) + "\n"


def write_report(out_dir, doc):
    """Writes OUT_DIR/moe_align.json and OUT_DIR/moe_align.md; returns the Markdown."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "moe_align.json"), "w") as f:
        json.dump(doc, f, indent=1)
    md = markdown(doc)
    with open(os.path.join(out_dir, "moe_align.md"), "w") as f:
        f.write(md)
    return md


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tlec", required=True, help="the tlec that builds the cubins")
    p.add_argument("--out", required=True, help="output directory (moe_align.json, moe_align.md, cubins/)")
    p.add_argument("--lib", default="", help="libtle_rt.so (default: found from --tlec)")
    p.add_argument("--arch", default="sm_90a")
    p.add_argument("--experts", default="256,512")
    p.add_argument("--block-sizes", default="64,128")
    p.add_argument("--tokens", default="256,4096,163840")
    p.add_argument("--routing", default="uniform,zipf", help="uniform and/or zipf")
    p.add_argument("--rounds", type=int, default=5, help="rounds (rotating order); the median is reported")
    p.add_argument("--replays", type=int, default=10, help="timed graph replays per round; their median")
    p.add_argument("--calls", type=int, default=20, help="calls captured in one graph")
    p.add_argument("--no-tune", action="store_true", help="one configuration per TLE variant (the last candidate)")
    p.add_argument("--no-do-bench", dest="do_bench", action="store_false",
                   help="leave out the second table: direct launches timed by triton.testing.do_bench")
    p.add_argument("--build-only", action="store_true", help="build the cubins and exit")
    p.add_argument("--emit", choices=["cubin", "ptx"], default="cubin",
                   help="with --build-only: PTX instead of cubins (no ptxas needed)")
    a = p.parse_args(argv)
    try:
        a.experts = [int(x) for x in a.experts.split(",")]
        a.block_sizes = [int(x) for x in a.block_sizes.split(",")]
        a.tokens = [int(x) for x in a.tokens.split(",")]
    except ValueError:
        p.error("--experts, --block-sizes and --tokens take comma-separated integers")
    a.routing = a.routing.split(",")
    if any(x not in ("uniform", "zipf") for x in a.routing):
        p.error("--routing takes uniform and/or zipf")
    if min(a.experts) < TOP_K or min(a.block_sizes) < 1 or min(a.tokens) < 1:
        p.error(f"experts must be at least {TOP_K} (top-{TOP_K}), block sizes and tokens at least 1")
    if min(a.rounds, a.replays, a.calls) < 1:
        p.error("--rounds, --replays and --calls must be positive")
    return a


def gpu_modules():
    """torch and triton, or SKIPPED."""
    try:
        import torch
        import triton
    except ImportError as e:
        skip(f"needs torch and triton in this python3 ({e})")
    if not torch.cuda.is_available():
        skip("no CUDA device (torch.cuda.is_available() is False)")
    return torch, triton


def main(argv=None):
    args = parse_args(argv)
    cubin_dir = os.path.join(args.out, "cubins")
    if args.build_only:
        paths = build_cubins(args.tlec, cubin_specs(args.experts, args.block_sizes), cubin_dir, args.arch, args.emit)
        print(f"built {len(paths)} {args.emit} files for {args.arch} in {cubin_dir}")
        return 0
    torch, triton = gpu_modules()
    t0 = time.time()
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from tle_ctypes import TleKernel, open_runtime
    from triton_softmax import load_tle_module
    specs = cubin_specs(args.experts, args.block_sizes)
    paths = build_cubins(args.tlec, specs, cubin_dir, args.arch)
    lib = open_runtime(find_runtime(args.tlec, args.lib))
    ctx = dict(kernels={s["stem"]: TleKernel(lib, paths[s["stem"]], s["kernel"]) for s in specs},
               triton_mod=load_tle_module(PLAIN_SOURCE),
               sms=torch.cuda.get_device_properties(0).multi_processor_count)
    print(f"built and loaded {len(specs)} cubins in {time.time() - t0:.1f} s", flush=True)
    method = (f"Median over {args.rounds} rounds (rotating order) of the median over {args.replays} replays of a "
              f"CUDA graph of {args.calls} calls, per call (launch overhead excluded, L2 warm); every output "
              f"checked against a torch reference first; top-{TOP_K}; TLE variants' launch configurations "
              f"picked per shape from a few candidates.")
    doc = dict(device=torch.cuda.get_device_name(), sm_count=ctx["sms"], triton=triton.__version__,
               torch=torch.__version__, arch=args.arch, method=method, rows=[])
    rows = doc["rows"]
    for e in args.experts:
        for b in args.block_sizes:
            for n in args.tokens:
                for routing in args.routing:
                    row = run_shape(torch, ctx, e, b, n, routing, args)
                    rows.append(row)
                    print(f"E={e:4d} B={b:4d} tokens={n:7d} {routing:7s} " + "  ".join(
                        f"{n2} {v['us']:8.2f} us" if v.get("correct") else f"{n2} FAILED"
                        for n2, v in row["variants"].items()), flush=True)
                    doc["seconds"] = round(time.time() - t0, 1)
                    md = write_report(args.out, doc)  # after every shape, so that a stop keeps them
    print(md)
    return 0 if all(v.get("correct") for r in rows for v in r["variants"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
