"""Host checks of bench/moe_align_bench.py without a GPU (ctest bench.moe-align-host): its torch
reference and output check, on torch's CPU device, against the plain-Triton kernels run on tlec's
CPU target (tle-run) and against the plain-Python reference of tests/lit/cpu/Inputs/moe_align_cpu.py;
the check must accept the kernels' outputs and catch each kind of wrong output; the Markdown
report of a made-up run. Prints "moe_align bench host checks passed", or "SKIPPED: <why>" and
exits 77 without torch.

Usage: moe_align_bench_test.py TLE_RUN WORK_DIR
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def load(path, name):
    """The module at `path`."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def kernel_outputs(cpu, tle_run, work, torch, ids, experts, block_size):
    """sorted_ids, expert_ids and post_pad of the plain kernels on the CPU target, as tensors."""
    p2 = 1 << max(0, experts - 1).bit_length()
    sorted_ids, expert_ids, post_pad, _ = cpu.align(tle_run, cpu_source(), work, ids.tolist(), experts, p2,
                                                     block_size, 0)
    return dict(sorted_ids=torch.tensor(sorted_ids, dtype=torch.int32),
                expert_ids=torch.tensor(expert_ids, dtype=torch.int32),
                post_pad=torch.tensor([post_pad], dtype=torch.int32))


def cpu_source():
    return os.path.join(ROOT, "bench", "moe_align", "moe_align.tle")


def mutations(torch, ref, out, numel):
    """(what, wrong outputs) pairs, each one kind of mistake the check must catch."""
    res = []
    o = {k: v.clone() for k, v in out.items()}
    o["post_pad"][0] += 1
    res.append(("post_pad", o))
    o = {k: v.clone() for k, v in out.items()}
    o["expert_ids"][0] += 1
    res.append(("expert_ids", o))
    o = {k: v.clone() for k, v in out.items()}
    o["sorted_ids"][-1] = 0
    res.append(("tail", o))
    valid = ref["valid"].nonzero().flatten()
    experts = ref["place_expert"][valid]
    a = int(valid[0])
    b = int(valid[(experts != experts[0]).nonzero()[0]]) if bool((experts != experts[0]).any()) else None
    if b is not None:  # two entries of different experts swapped
        o = {k: v.clone() for k, v in out.items()}
        o["sorted_ids"][a], o["sorted_ids"][b] = int(out["sorted_ids"][b]), int(out["sorted_ids"][a])
        res.append(("swap across experts", o))
    o = {k: v.clone() for k, v in out.items()}
    o["sorted_ids"][a] = numel
    res.append(("lost entry", o))
    pad = (~ref["valid"]).nonzero().flatten()
    if pad.numel():
        o = {k: v.clone() for k, v in out.items()}
        o["sorted_ids"][int(pad[0])] = 0
        res.append(("padding", o))
    return res


def main():
    tle_run, work = sys.argv[1:3]
    try:
        import torch
    except ImportError as e:
        print(f"SKIPPED: needs torch ({e})")
        return 77
    os.makedirs(work, exist_ok=True)
    bench = load(os.path.join(HERE, "moe_align_bench.py"), "moe_align_bench")
    cpu = load(os.path.join(ROOT, "tests", "lit", "cpu", "Inputs", "moe_align_cpu.py"), "moe_align_cpu")
    bench.DEVICE = "cpu"
    cases = [(16, 8, 50, "uniform"), (16, 8, 50, "zipf"), (12, 4, 3, "uniform"), (32, 16, 40, "zipf")]
    for experts, block_size, tokens, routing in cases:
        ids = bench.make_topk_ids(torch, tokens, experts, routing, seed=tokens)
        assert ids.dtype == torch.int32 and ids.numel() == tokens * bench.TOP_K
        per_token = ids.view(tokens, bench.TOP_K)
        assert all(len(set(r.tolist())) == bench.TOP_K for r in per_token), "experts repeat within a token"
        ref = bench.reference(torch, ids, experts, block_size)
        counts, post_pad, expert_ids, _ = cpu.reference(ids.tolist(), experts, block_size)
        assert ref["post_pad"] == post_pad and ref["expert_ids"].tolist() == expert_ids, (experts, block_size)
        assert ref["counts"].tolist() == counts
        out = kernel_outputs(cpu, tle_run, work, torch, ids, experts, block_size)
        err = bench.check(torch, ref, ids, out)
        assert err is None, f"E={experts} B={block_size} tokens={tokens}: {err}"
        for what, wrong in mutations(torch, ref, out, ids.numel()):
            assert bench.check(torch, ref, ids, wrong) is not None, f"the check missed a wrong {what}"
    zipf = bench.make_topk_ids(torch, 4096, 64, "zipf", seed=1)
    hot = torch.bincount(zipf.long(), minlength=64).sort(descending=True).values
    assert int(hot[0]) > 3 * int(hot[32]), "zipf routing is not skewed"
    row = dict(experts=256, block_size=64, tokens=bench.TARGET_TOKENS, routing="uniform", variants={
        n: dict(correct=True, us=us, do_bench_us=2 * us, timing="graph", config="c")
        for n, us in zip(bench.VARIANTS, (40, 41, 20, 25, 60))})
    bench.summarize(row)
    assert row["best_tle"] == "tle_coop" and row["triton_over_best_tle"] == 2.0 and row["meets_target_us"]
    md = bench.markdown(dict(device="GPU", triton="3.6", torch="2", method="m", rows=[row]))
    assert "| 256 | 64 | 163840 | uniform | 40.00 | 41.00 (0.98x) | 20.00 (2.00x) | 25.00 (1.60x) | 60.00 (0.67x) |" in md, md
    assert "faster than Triton at every shape: yes" in md and "target 30 µs: met" in md, md
    direct = md[md.index("## Direct launches"):]
    assert "| 256 | 64 | 163840 | uniform | 80.00 | 82.00 (0.98x) | 40.00 (2.00x) | 50.00 (1.60x) | 120.00 (0.67x) | 2.00x |" in direct, md
    specs = bench.cubin_specs([256, 512], [64, 128])
    assert len(specs) == 1 + 4 * (2 + len(bench.COOP_WARPS) * (1 + len(bench.STAGES)) + len(bench.CLUSTER_WARPS))
    print("moe_align bench host checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
