#!/usr/bin/env python3
"""Every example kernel through the PyTorch bridge (python/tle) on the GPU, checked against a torch
reference, and, where the example is plain Triton, the same source run by Triton on the same
tensors. One line per example; exit 1 on any failure, 77 (SKIPPED) without torch, CUDA or a GPU.

Usage: tests/gpu/bridge_examples.py [--build DIR] [--only NAME,...] [--no-triton] [--cache-dir DIR]
The bridge runs DIR/src/tlec and DIR/runtime/libtle_rt.so (DIR: the build tree, default
<repo>/build) unless TLE_TLEC / TLE_RT_LIBRARY say otherwise."""
import argparse
import importlib.machinery
import importlib.util
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


def skip(reason):
    print("SKIPPED: %s" % reason)
    sys.exit(77)


def triton_kernel(example, name):
    """The @triton.jit function `name` of examples/<example>.tle imported as Python, or None for
    an example that is not plain Triton (it uses TLE's own layers)."""
    path = os.path.join(EXAMPLES, example + ".tle")
    with open(path) as f:
        if "experimental.tle" in f.read():
            return None
    loader = importlib.machinery.SourceFileLoader("tle_bridge_example_" + example, path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[loader.name] = mod
    loader.exec_module(mod)
    return getattr(mod, name)


class Case:
    """One example: kernel name, launch options, and a setup(torch) returning (args, constexprs,
    grid, outputs (list of tensors the kernel writes), reference (list of expected tensors), tol)."""

    def __init__(self, example, kernel, setup, num_warps=4, num_stages=None, sm90_only=False):
        self.example, self.kernel, self.setup = example, kernel, setup
        self.num_warps, self.num_stages, self.sm90_only = num_warps, num_stages, sm90_only


def _sms(torch):
    return torch.cuda.get_device_properties(0).multi_processor_count


def vector_add(torch):
    n = 98431
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    z = torch.full((n,), float("nan"), device="cuda")
    return (x, y, z, n), {"BLOCK": 1024}, lambda m: (-(-m["n_elements"] // m["BLOCK"]),), [z], [x + y], 1e-6


def softmax(torch):
    rows, cols = 1823, 781
    x = torch.randn(rows, cols, device="cuda")
    y = torch.full_like(x, float("nan"))
    grid = (min(rows, 4 * _sms(torch)),)
    return (y, x, x.stride(0), y.stride(0), rows, cols), {"BLOCK_SIZE": 1024}, grid, [y], [torch.softmax(x, 1)], 1e-5


def depthwise_conv1d(torch):
    batch, channels, steps, taps = 3, 200, 1000, 4
    x = torch.randn(batch, channels, steps, device="cuda")
    w, bias = torch.randn(channels, taps, device="cuda"), torch.randn(channels, device="cuda")
    out = torch.full_like(x, float("nan"))
    ref = torch.nn.functional.conv1d(x, w[:, None, :], bias, padding=taps - 1, groups=channels)[..., :steps]
    consts = {"BLOCK_C": 32, "BLOCK_T": 64, "K": taps}
    return ((x, w, bias, out, channels, steps), consts,
            lambda m: (-(-steps // m["BLOCK_T"]), -(-channels // m["BLOCK_C"]), batch), [out], [ref], 1e-4)


def layernorm(torch):
    m, n, eps = 1151, 8192, 1e-5
    x = torch.randn(m, n, device="cuda")
    w, b = torch.rand(n, device="cuda") + 0.5, torch.randn(n, device="cuda")
    y = torch.full_like(x, float("nan"))
    mean, rstd = torch.full((m,), float("nan"), device="cuda"), torch.full((m,), float("nan"), device="cuda")
    ref_y = torch.nn.functional.layer_norm(x, (n,), w, b, eps)
    ref_rstd = 1 / torch.sqrt(((x - x.mean(1, keepdim=True)) ** 2).mean(1) + eps)
    return ((x, y, w, b, mean, rstd, x.stride(0), n, eps), {"BLOCK_SIZE": 1024}, (m,), [y, mean, rstd],
            [ref_y, x.mean(1), ref_rstd], 1e-4)


def _matmul(torch, m, n, k, blocks, grid_of, dtype=None, bias=False):
    dtype = dtype or torch.float16
    a = (torch.randn(m, k, device="cuda") / k ** 0.25).to(dtype)
    b = (torch.randn(k, n, device="cuda") / k ** 0.25).to(dtype)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float()
    args = [a, b, c]
    if bias:
        bias_t = torch.randn(n, device="cuda").half()
        args.append(bias_t)
        ref = torch.relu(ref + bias_t.float())
    args += [m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)]
    names = ("BLOCK_M", "BLOCK_N", "BLOCK_K", blocks[4] if len(blocks) > 4 else "GROUP_M")
    constexprs = dict(zip(names, blocks[:4]))
    tiles = -(-m // blocks[0]) * -(-n // blocks[1])
    return tuple(args), constexprs, grid_of(tiles, torch), [c], [ref.half()], 1e-2


def _tiles(tiles, torch):
    return (tiles,)


def _persistent(tiles, torch):
    return (min(_sms(torch), tiles),)


def matmul_fp8(torch):
    m, n, k = 1024, 1024, 1024
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    bt = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    ref = (a.float() @ bt.float().T).half()
    args = (a, bt, c, m, n, k, a.stride(0), a.stride(1), bt.stride(0), bt.stride(1), c.stride(0), c.stride(1))
    consts = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8}
    return args, consts, (8 * 8,), [c], [ref], 1e-2


def matmul_tn(torch):
    m, n, k = 1000, 1024, 512
    a = torch.randint(-128, 128, (m, k), device="cuda", dtype=torch.int8)
    bt = torch.randint(-128, 128, (n, k), device="cuda", dtype=torch.int8)
    c = torch.full((m, n), -1, device="cuda", dtype=torch.int32)
    ref = (a.double() @ bt.double().T).int()
    args = (a, bt, c, m, n, k, a.stride(0), a.stride(1), bt.stride(0), bt.stride(1), c.stride(0), c.stride(1))
    consts = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}
    return args, consts, (-(-m // 128) * -(-n // 128),), [c], [ref], 0.0


def _attention_ref(torch, q, k, v, scale, causal):
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    if causal:
        n = q.shape[2]
        s = s.masked_fill(torch.ones(n, n, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v.float()


def _qkv(torch, z, h, n, d):
    return [torch.randn(z, h, n, d, device="cuda", dtype=torch.float16) for _ in range(3)]


def attention(torch):
    z, h, n, d, scale = 2, 4, 1024, 64, 0.125
    q, k, v = _qkv(torch, z, h, n, d)
    o = torch.full_like(q, float("nan"))
    args = (q, k, v, o, scale, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3], h, n)
    consts = {"HEAD_DIM": d, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": False}
    return args, consts, (n // 128, z * h), [o], [_attention_ref(torch, q, k, v, scale, False).half()], 1e-2


def _attention_desc(torch, block_n):
    """attention_tma.tle's and attention_fa3.tle's arguments (Q, K, V, Out, sm_scale, Z, H, N_CTX)."""
    z, h, n, d, scale = 2, 4, 1024, 64, 0.125
    q, k, v = _qkv(torch, z, h, n, d)
    o = torch.full_like(q, float("nan"))
    consts = {"HEAD_DIM": d, "BLOCK_M": 128, "BLOCK_N": block_n, "CAUSAL": False}
    return ((q, k, v, o, scale, z, h, n), consts, (n // 128, z * h), [o],
            [_attention_ref(torch, q, k, v, scale, False).half()], 1e-2)


def attention_tma(torch):
    return _attention_desc(torch, 64)


def attention_fa3(torch):
    return _attention_desc(torch, 128)


def _softmax_cluster(torch, cluster, cols):
    rows = 64
    x = torch.randn(rows, cols, device="cuda")
    y = torch.full_like(x, float("nan"))
    return ((y, x, y.stride(0), x.stride(0), cols), {"BLOCK": 16384, "CLUSTER": cluster}, (rows * cluster,), [y],
            [torch.softmax(x, 1)], 1e-5)


CASES = [
    Case("vector_add", "add_kernel", vector_add),
    Case("softmax", "softmax_kernel", softmax),
    Case("layernorm", "layer_norm_fwd", layernorm),
    Case("depthwise_conv1d", "depthwise_conv1d_kernel", depthwise_conv1d),
    Case("matmul", "matmul_kernel", lambda t: _matmul(t, 1000, 1024, 512, (128, 128, 32, 8), _tiles)),
    Case("matmul_tma", "matmul_kernel", lambda t: _matmul(t, 1000, 1024, 512, (128, 256, 64, 8), _tiles), 8),
    Case("matmul_decode", "matmul_kernel", lambda t: _matmul(t, 16, 4096, 4096, (16, 64, 128, 8), _tiles)),
    Case("matmul_persistent", "matmul_kernel",
         lambda t: _matmul(t, 1000, 1024, 512, (128, 128, 32, 8), _persistent)),
    Case("matmul_persistent_tma", "matmul_kernel",
         lambda t: _matmul(t, 1000, 1024, 512, (128, 128, 64, 8), _persistent)),
    Case("matmul_persistent_ws", "matmul_kernel",
         lambda t: _matmul(t, 1000, 1024, 512, (128, 128, 64, 8), _persistent)),
    Case("matmul_ws", "matmul_kernel", lambda t: _matmul(t, 1000, 1024, 512, (128, 256, 64, 8), _tiles), 8),
    Case("matmul_epilogue", "matmul_kernel",
         lambda t: _matmul(t, 1000, 1024, 512, (128, 128, 64, 8), _persistent, bias=True)),
    Case("matmul_splitk_cluster", "matmul_kernel",
         lambda t: _matmul(t, 64, 2048, 4096, (64, 128, 128, 2, "SPLIT_K"), lambda tiles, _: (tiles * 2,)), 4, 3, True),
    Case("matmul_fp8", "matmul_kernel", matmul_fp8, 8),
    Case("matmul_tn", "matmul_tn_kernel", matmul_tn),
    Case("attention", "attn_fwd", attention, 8),
    Case("attention_tma", "attn_fwd", attention_tma, 8),
    Case("attention_fa3", "attn_fwd", attention_fa3, 4, None, True),
    Case("softmax_cluster", "softmax_cluster", lambda t: _softmax_cluster(t, 4, 60000), 16, None, True),
    Case("softmax_cluster_staged", "softmax_cluster_staged", lambda t: _softmax_cluster(t, 2, 65536), 16, None, True),
]


# The examples across GPUs need a communicator on every rank: tests/gpu/comm_gpu.sh runs them.
ACROSS_GPUS = {"all_gather", "all_gather_gemm", "gemm_reduce_scatter"}


def max_error(torch, outs, refs):
    """Largest |out - ref| relative to the largest |ref| (1 when an output holds NaN)."""
    worst = 0.0
    for out, ref in zip(outs, refs):
        out, ref = out.double(), ref.double()
        if torch.isnan(out).any():
            return 1.0
        worst = max(worst, ((out - ref).abs().max() / ref.abs().max().clamp(min=1e-30)).item())
    return worst


def run_case(torch, tle, case, use_triton, cache_dir):
    torch.manual_seed(0)
    args, consts, grid, outs, refs, tol = case.setup(torch)
    kernel = tle.jit(os.path.join(EXAMPLES, case.example + ".tle"), case.kernel, num_warps=case.num_warps,
                     num_stages=case.num_stages, cache_dir=cache_dir)
    spec = kernel[grid](*args, **consts)
    torch.cuda.synchronize()
    err = max_error(torch, outs, refs)
    ok = err <= tol
    line = "%-24s %s  tle err %.2e (tol %.0e)" % (case.example, "PASS" if ok else "FAIL", err, tol)
    tle_outs = [o.clone() for o in outs]
    fn = triton_kernel(case.example, case.kernel) if use_triton else None
    if fn is None:
        line += "  triton -" if use_triton else ""
    else:
        try:
            for o in outs:
                o.fill_(float("nan") if o.is_floating_point() else -1)
            options = {"num_warps": case.num_warps}
            if case.num_stages:
                options["num_stages"] = case.num_stages
            fn[grid](*args, **consts, **options)
            torch.cuda.synchronize()
            line += "  triton err %.2e  tle-vs-triton %.2e" % (max_error(torch, outs, refs),
                                                                max_error(torch, tle_outs, outs))
        except Exception as e:  # Triton's own limits are reported, not counted against the bridge
            line += "  triton n/a (%s: %s)" % (type(e).__name__, str(e).splitlines()[0][:80] if str(e) else "")
    return ok, line + "  [%s%s]" % (spec.signature, ", cached" if spec.module.hit else "")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--only", default="")
    p.add_argument("--no-triton", action="store_true")
    p.add_argument("--cache-dir", default=None)
    a = p.parse_args()
    os.environ.setdefault("TLE_TLEC", os.path.join(a.build, "src", "tlec"))
    os.environ.setdefault("TLE_RT_LIBRARY", os.path.join(a.build, "runtime", "libtle_rt.so"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    try:
        import torch
    except ImportError:
        skip("torch is not installed")
    if not torch.cuda.is_available():
        skip("torch sees no CUDA GPU")
    import tle
    use_triton = not a.no_triton
    if use_triton:
        try:
            import triton
            triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
        except (ImportError, AttributeError):
            use_triton = False
    major, _ = torch.cuda.get_device_capability()
    only = set(filter(None, a.only.split(",")))
    cache_dir = a.cache_dir or tempfile.mkdtemp(prefix="tle-bridge-cache-")
    print("bridge examples on %s (sm_%d%s), tlec %s" % (torch.cuda.get_device_name(), major * 10,
                                                         "a" if major >= 9 else "", os.environ["TLE_TLEC"]))
    failures = 0
    missing = sorted({f[:-4] for f in os.listdir(EXAMPLES) if f.endswith(".tle")} - {c.example for c in CASES} -
                     ACROSS_GPUS)
    for example in missing if not only else ():
        print("%-24s FAIL  no case in tests/gpu/bridge_examples.py" % example)
        failures += 1
    for case in CASES:
        if only and case.example not in only:
            continue
        if case.sm90_only and major < 9:
            print("%-24s SKIP  thread-block clusters need sm_90a" % case.example)
            continue
        try:
            ok, line = run_case(torch, tle, case, use_triton, cache_dir)
        except Exception as e:
            ok, line = False, "%-24s FAIL  %s: %s" % (case.example, type(e).__name__, str(e).strip()[:400])
        failures += not ok
        print(line, flush=True)
    print("bridge examples: %d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
