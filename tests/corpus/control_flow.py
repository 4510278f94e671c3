"""Data-dependent control flow: a search that stops at the first match, a convergence loop, a
bisection in a helper, a token sampler that skips masked vocabulary chunks, and an early exit
from inside a loop. The first four kernels use `break` and `continue`, which TLE accepts in every
loop form and Triton 3.6 rejects; the others are plain Triton."""
import triton
import triton.language as tl


@triton.jit
def first_index_kernel(x_ptr, out_ptr, n, target, BLOCK: tl.constexpr):
    # index of the first element equal to target, or -1
    row = tl.program_id(0)
    found = -1
    for start in range(0, n, BLOCK):
        i = start + tl.arange(0, BLOCK)
        hit = (tl.load(x_ptr + row * n + i, mask=i < n, other=target + 1) == target) & (i < n)
        if tl.max(hit.to(tl.int32), axis=0) > 0:
            found = tl.min(tl.where(hit, i, n), axis=0)
            break
    tl.store(out_ptr + row, found)


@triton.jit
def newton_rsqrt_kernel(x_ptr, y_ptr, n, tol, MAX_ITERS: tl.constexpr, BLOCK: tl.constexpr):
    # y = 1/sqrt(x) by Newton iterations until every lane has converged
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=1.0)
    y = tl.rsqrt(x)
    it = 0
    while it < MAX_ITERS:
        y_next = y * (1.5 - 0.5 * x * y * y)
        err = tl.max(tl.abs(y_next - y), axis=0)
        y = y_next
        it += 1
        if err < tol:
            break
    tl.store(y_ptr + i, y, mask=m)


@triton.jit
def bisect(lo, hi, target, n_steps: tl.constexpr = 30):
    # root of x^3 + x - target on [lo, hi], per lane; returns the bracket
    for _ in tl.static_range(n_steps):
        mid = (lo + hi) * 0.5
        f = mid * mid * mid + mid - target
        lo = tl.where(f < 0, mid, lo)
        hi = tl.where(f < 0, hi, mid)
        if tl.max(hi - lo, axis=0) < 1e-6:
            break
    return lo, hi


@triton.jit
def cubic_root_kernel(t_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    t = tl.load(t_ptr + i, mask=i < n, other=0.0)
    lo, hi = bisect(tl.zeros_like(t) - 10.0, tl.zeros_like(t) + 10.0, t)
    lo2, _ = bisect(lo, hi, t, n_steps=4)
    tl.store(out_ptr + i, (lo2 + hi) * 0.5, mask=i < n)


@triton.jit
def masked_argmax_sampler_kernel(logits_ptr, allowed_ptr, out_ptr, vocab, stride, BLOCK: tl.constexpr):
    # greedy sampling restricted to allowed chunks: chunks with no allowed token are skipped
    row = tl.program_id(0).to(tl.int64)
    best = float("-inf")
    best_idx = 0
    for c0 in tl.range(0, vocab, BLOCK):
        chunk_ok = tl.load(allowed_ptr + c0 // BLOCK)
        if chunk_ok == 0:
            continue
        c = c0 + tl.arange(0, BLOCK)
        x = tl.load(logits_ptr + row * stride + c, mask=c < vocab, other=float("-inf"))
        v, j = tl.max(x, axis=0, return_indices=True)
        if v > best:
            best = v
            best_idx = c0 + j
    tl.store(out_ptr + row, best_idx)


@triton.jit
def ragged_rows_sum_kernel(x_ptr, offsets_ptr, out_ptr, BLOCK: tl.constexpr):
    # rows of different lengths packed one after another; an empty row writes 0 and exits early
    row = tl.program_id(0)
    start = tl.load(offsets_ptr + row)
    end = tl.load(offsets_ptr + row + 1)
    if end <= start:
        tl.store(out_ptr + row, 0.0)
        return
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    pos = start
    while pos < end:
        i = pos + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + i, mask=i < end, other=0.0)
        pos += BLOCK
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, total if total == total else 0.0)


@triton.jit
def stop_on_sentinel_kernel(x_ptr, out_ptr, n, sentinel, BLOCK: tl.constexpr):
    # copies blocks until one contains the sentinel; the program ends from inside the loop
    for start in range(0, n, BLOCK):
        i = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + i, mask=i < n, other=0)
        tl.store(out_ptr + i, x, mask=i < n)
        if tl.sum((x == sentinel).to(tl.int32), axis=0) > 0:
            return
    tl.store(out_ptr + n, -1)
