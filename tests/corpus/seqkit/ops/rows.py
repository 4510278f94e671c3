# Row-wise argmax, top-k, sort and checksums.
import triton
import triton.language as tl
from triton.language import standard as std

from .. import language as sl


@triton.jit
def argmax_rows_kernel(x_ptr, idx_ptr, val_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = sl.program_row()
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
    v, i = tl.reduce((x, cols), 0, std._argmax_combine_tie_break_left)
    tl.store(idx_ptr + row, i)
    if val_ptr is not None:
        tl.store(val_ptr + row, v)


@triton.jit
def argmin_rows_kernel(x_ptr, idx_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = sl.program_row()
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("inf"))
    _, i = tl.reduce((x, cols), 0, std._argmin_combine_tie_break_fast)
    tl.store(idx_ptr + row, i)


@triton.jit
def topk_rows_kernel(x_ptr, out_ptr, stride, K: tl.constexpr, BLOCK: tl.constexpr):
    tl.static_assert(K <= BLOCK, f"K={K} exceeds the row block {BLOCK}")
    row = sl.program_row()
    x = tl.load(x_ptr + row * stride + tl.arange(0, BLOCK))
    top = tl.topk(x, K)
    tl.store(out_ptr + row * K + tl.arange(0, K), top)


@triton.jit
def sort_rows_kernel(x_ptr, y_ptr, stride, BLOCK: tl.constexpr, DESCENDING: tl.constexpr):
    row = sl.program_row()
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols)
    tl.store(y_ptr + row * stride + cols, tl.sort(x, descending=DESCENDING))


@triton.jit
def xor_checksum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_xor(out_ptr, tl.xor_sum(x, axis=0))
    tl.atomic_or(out_ptr + 1, tl.reduce(x, 0, std._or_combine))


@triton.jit
def row_max_kernel(x_ptr, val_ptr, idx_ptr, n_rows, n_cols, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=float("-inf"))
    v, i = tl.max(x, axis=1, return_indices=True, keep_dims=True)
    tl.store(val_ptr + rows[:, None], v, mask=rows[:, None] < n_rows)
    if idx_ptr is not None:
        tl.store(idx_ptr + rows[:, None], i, mask=rows[:, None] < n_rows)
