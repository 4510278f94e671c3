# Element-wise kernels: bias + dropout + residual, masked scaled softmax, saturating casts, and a
# mean over the last dimension kept as a column.
import triton
import triton.language as tl

from .. import constants as C


@triton.jit
def bias_dropout_add_kernel(x_ptr, bias_ptr, residual_ptr, out_ptr, n, n_cols, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if bias_ptr is not None:
        x += tl.load(bias_ptr + offs % n_cols, mask=mask, other=0.0).to(tl.float32)
    keep = tl.rand(seed, offs) > p
    x = tl.where(keep, x / (1 - p), 0.0)
    x += tl.load(residual_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, x.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def scaled_masked_softmax_kernel(x_ptr, mask_ptr, y_ptr, n_cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    valid = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=valid, other=0.0).to(tl.float32) * scale
    if mask_ptr is not None:
        m = tl.load(mask_ptr + row * n_cols + cols, mask=valid, other=1)
        valid = valid & (m == 0)
    x = tl.where(valid, x, float("-inf"))
    y = tl.softmax(x)
    tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


@triton.jit
def saturating_cast_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ROUNDING: tl.constexpr):
    HI: tl.constexpr = C.finite_max(y_ptr.dtype.element_ty)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    x = tl.clamp(x, -HI, HI)
    tl.store(y_ptr + offs, x.to(y_ptr.dtype.element_ty, fp_downcast_rounding=ROUNDING), mask=offs < n)


@triton.jit
def row_mean_kernel(x_ptr, y_ptr, n_rows, n_cols, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    m = tl.sum(x, axis=1, keep_dims=True) / n_cols
    tl.store(y_ptr + rows[:, None] + cols[None, :] * 0, m, mask=(rows[:, None] < n_rows) & (cols[None, :] == 0))


@triton.jit
def axpy_kernel(x_ptr, y_ptr, a, n, BLOCK: tl.constexpr):
    tl.static_assert(C.ACC_DTYPE == tl.float32, f"accumulating in {C.ACC_DTYPE}")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = tl.load(y_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, a * x + y, mask=offs < n)
