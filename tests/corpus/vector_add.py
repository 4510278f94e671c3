"""Element-wise kernels on flat vectors, written the way a first Triton program is, with the
host code around them: torch wrappers, an autotune decorator, a benchmark and a __main__ block.

tlec compiles the kernels of this file as it stands; the host code is parsed and skipped.
"""
import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
SIZES = [2**p for p in range(12, 27)]


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=w) for b, w in [(512, 2), (1024, 4), (4096, 8)]],
    key=["n"],
)
@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(axis=0) * BLOCK
    idx = start + tl.arange(0, BLOCK)
    # every block starts on a multiple of BLOCK and is contiguous
    idx = tl.max_contiguous(tl.multiple_of(idx, BLOCK), BLOCK)
    in_bounds = idx < n
    a = tl.load(a_ptr + idx, mask=in_bounds)
    b = tl.load(b_ptr + idx, mask=in_bounds)
    tl.store(c_ptr + idx, a + b, mask=in_bounds)


@triton.jit
def axpby_kernel(x_ptr, y_ptr, out_ptr, alpha, beta, n,
                 BLOCK: tl.constexpr, WIDE_INDEX: tl.constexpr = False):
    """out = alpha * x + beta * y, computed in fp32 and stored in out's element type."""
    pid = tl.program_id(0)
    if WIDE_INDEX:
        first = pid.to(tl.int64) * BLOCK
    else:
        first = pid * BLOCK
    idx = first + tl.arange(0, BLOCK)
    ok = idx < n
    xv = tl.load(x_ptr + idx, mask=ok, other=0.0).to(tl.float32)
    yv = tl.load(y_ptr + idx, mask=ok, other=0.0).to(tl.float32)
    res = alpha * xv + beta * yv
    tl.store(out_ptr + idx, res.to(out_ptr.dtype.element_ty), mask=ok)


@triton.jit
def grid_stride_copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    # Fewer programs than blocks: each one walks the vector with the whole grid as its stride.
    me = tl.program_id(0)
    stride = tl.num_programs(0) * BLOCK
    for first in range(me * BLOCK, n, stride):
        idx = first + tl.arange(0, BLOCK)
        live = idx < n
        chunk = tl.load(src + idx, mask=live, eviction_policy="evict_first")
        tl.store(dst + idx, chunk, mask=live, cache_modifier=".cg")


def add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.shape == b.shape and a.is_cuda and b.is_cuda
    c = torch.empty_like(a)
    n = c.numel()
    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]), )](a, b, c, n)
    return c


def axpby(x, y, alpha=1.0, beta=1.0, out=None):
    out = torch.empty_like(x) if out is None else out
    n = x.numel()
    axpby_kernel[(triton.cdiv(n, 1024), )](x, y, out, alpha, beta, n, BLOCK=1024, WIDE_INDEX=n >= 2**31)
    return out


def copy(src):
    dst = torch.empty_like(src)
    sms = torch.cuda.get_device_properties(src.device).multi_processor_count
    grid_stride_copy_kernel[(4 * sms, )](src, dst, src.numel(), BLOCK=2048, num_warps=8)
    return dst


@triton.testing.perf_report(
    triton.testing.Benchmark(x_names=["n"], x_vals=SIZES, x_log=True, line_arg="impl",
                             line_vals=["triton", "torch"], line_names=["Triton", "torch"],
                             ylabel="GB/s", plot_name="add", args={}))
def bench(n, impl):
    a = torch.rand(n, device=DEVICE)
    b = torch.rand(n, device=DEVICE)
    fn = (lambda: add(a, b)) if impl == "triton" else (lambda: a + b)
    ms = triton.testing.do_bench(fn)
    return 3 * a.numel() * a.element_size() / ms * 1e-6


if __name__ == "__main__":
    torch.manual_seed(1)
    a = torch.rand(100_003, device=DEVICE)
    b = torch.rand(100_003, device=DEVICE)
    torch.testing.assert_close(add(a, b), a + b)
    torch.testing.assert_close(axpby(a, b, 0.5, -2.0), 0.5 * a - 2.0 * b)
    torch.testing.assert_close(copy(a), a)
    bench.run(print_data=True)
