"""Reductions the way kernel libraries write them: a Welford mean / variance through tl.reduce
with a three-value combine function, row argmax / argmin and the value-index form of tl.max,
whole-tile min / max / sum with keep_dims, and an integer checksum with tl.xor_sum."""
import torch

import triton
import triton.language as tl


@triton.jit
def welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    w_b = tl.where(n == 0, 0.0, n_b / n)
    delta = mean_b - mean_a
    return mean_a + delta * w_b, m2_a + m2_b + delta * delta * n_a * w_b, n


@triton.jit
def var_mean_kernel(x_ptr, mean_ptr, var_ptr, n_rows, n_cols, stride, CORRECTION: tl.constexpr,
                    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    row_ok = rows < n_rows
    acc_mean = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    acc_m2 = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    acc_n = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)[None, :]
        m = row_ok & (cols < n_cols)
        x = tl.load(x_ptr + rows * stride + cols, mask=m, other=0.0).to(tl.float32)
        # a one-element Welford update per lane
        n_new = acc_n + m.to(tl.float32)
        delta = x - acc_mean
        acc_mean = tl.where(m, acc_mean + delta / tl.maximum(n_new, 1.0), acc_mean)
        acc_m2 = tl.where(m, acc_m2 + delta * (x - acc_mean), acc_m2)
        acc_n = n_new
    mean, m2, count = tl.reduce((acc_mean, acc_m2, acc_n), axis=1, combine_fn=welford_combine)
    var = m2 / tl.maximum(count - CORRECTION, 1.0)
    out_rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    tl.store(mean_ptr + out_rows, mean, mask=out_rows < n_rows)
    tl.store(var_ptr + out_rows, var, mask=out_rows < n_rows)


@triton.jit
def argmax_argmin_kernel(x_ptr, amax_ptr, amin_ptr, vmax_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=float("-inf"))
    tl.store(amax_ptr + row, tl.argmax(x, axis=0))
    lo = tl.where(m, x, float("inf"))
    tl.store(amin_ptr + row, tl.argmin(lo, 0, tie_break_left=True))
    best, where = tl.max(x, axis=0, return_indices=True, return_indices_tie_break_left=True)
    tl.store(vmax_ptr + row, best + where.to(best.dtype) * 0)


@triton.jit
def tile_stats_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    # min, max and sum of an R x C tile, per row (keep_dims) and of everything (axis=None)
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + r * C + c)
    row_min = tl.min(x, axis=1, keep_dims=True)
    row_max = x.max(axis=1, keep_dims=True)
    spread = (x - row_min) / (row_max - row_min + 1e-6)
    tl.store(x_ptr + r * C + c, spread)
    tl.store(out_ptr + 0, tl.min(x))
    tl.store(out_ptr + 1, tl.max(x, axis=None))
    tl.store(out_ptr + 2, tl.sum(x))
    tl.store(out_ptr + 3, x.sum())
    low, where = tl.min(x, axis=1, return_indices=True)
    tl.store(out_ptr + 4 + tl.arange(0, R), low + where)


@triton.jit
def xor_checksum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    words = tl.load(x_ptr + i, mask=i < n, other=0)
    # mix in the position so that swapped words change the result
    mixed = words ^ (i.to(words.dtype) * 0x9E3779B1)
    tl.store(out_ptr + tl.program_id(0), tl.xor_sum(mixed, axis=0))


def var_mean(x, correction=1):
    R, C = x.shape
    mean = torch.empty(R, device=x.device)
    var = torch.empty(R, device=x.device)
    var_mean_kernel[(triton.cdiv(R, 4), )](x, mean, var, R, C, x.stride(0), CORRECTION=correction, BLOCK_R=4,
                                          BLOCK_C=256)
    return var, mean
