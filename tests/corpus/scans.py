"""Scans: running sums and products along a row (forward and reversed), a first-order linear
recurrence h[t] = a[t] * h[t-1] + b[t] solved in one tl.associative_scan over (a, b) pairs, and
a segmented sum whose combine function restarts at segment heads."""
import triton
import triton.language as tl


@triton.jit
def cumsum_cumprod_kernel(x_ptr, sum_ptr, prod_ptr, n_cols, stride, BLOCK: tl.constexpr, REVERSE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=0)
    s = tl.cumsum(x, axis=0, reverse=REVERSE)
    tl.store(sum_ptr + row * stride + cols, s, mask=m)
    # padding with ones keeps the products of the live prefix intact
    ones = tl.where(m, x, 1)
    p = tl.cumprod(ones, 0, reverse=REVERSE)
    tl.store(prod_ptr + row * stride + cols, p, mask=m)


@triton.jit
def affine_combine(a1, b1, a2, b2):
    # apply (a1, b1) first, then (a2, b2): h -> a2 * (a1 * h + b1) + b2
    return a1 * a2, b1 * a2 + b2


@triton.jit
def linear_recurrence_kernel(a_ptr, b_ptr, h_ptr, h0_ptr, T, stride_b, BLOCK_T: tl.constexpr):
    seq = tl.program_id(0)
    t = tl.arange(0, BLOCK_T)
    h = tl.load(h0_ptr + seq)
    for t0 in range(0, T, BLOCK_T):
        m = t0 + t < T
        a = tl.load(a_ptr + seq * stride_b + t0 + t, mask=m, other=1.0).to(tl.float32)
        b = tl.load(b_ptr + seq * stride_b + t0 + t, mask=m, other=0.0).to(tl.float32)
        a_acc, b_acc = tl.associative_scan((a, b), axis=0, combine_fn=affine_combine)
        out = a_acc * h + b_acc
        tl.store(h_ptr + seq * stride_b + t0 + t, out, mask=m)
        # the state after the last live step of this chunk
        h = tl.sum(tl.where(t == tl.minimum(T - t0, BLOCK_T) - 1, out, 0.0), axis=0)


@triton.jit
def segmented_add(v1, f1, v2, f2):
    # f marks the first element of a segment
    return tl.where(f2 != 0, v2, v1 + v2), f1 | f2


@triton.jit
def segmented_sum_kernel(x_ptr, head_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i)
    heads = tl.load(head_ptr + i).to(tl.int32)
    sums, _ = tl.associative_scan((x, heads), 0, segmented_add, reverse=False)
    tl.store(out_ptr + i, sums)


@triton.jit
def chained_scan_kernel(x_ptr, out_ptr, prefix_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    # A one-pass cumulative sum over the whole vector: program p waits until program p - 1 has
    # published the inclusive prefix up to its block (flag = 1), then publishes its own. Programs
    # must be scheduled in order (a launch with no more programs than fit on the GPU at once).
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    local = tl.cumsum(x, axis=0)
    carry = 0.0
    if pid > 0:
        while tl.load(flag_ptr + pid - 1, volatile=True) == 0:
            pass
        carry = tl.load(prefix_ptr + pid - 1, volatile=True)
    tl.store(prefix_ptr + pid, carry + tl.sum(x, axis=0))
    tl.debug_barrier()
    tl.atomic_xchg(flag_ptr + pid, 1, sem="release")
    tl.store(out_ptr + i, local + carry, mask=i < n)
