# RMSNorm forward and the backward of its input, in the style of fused-norm libraries.
from ..triton_utils import tl, triton
from ..utils import inv_rms, to_fp32, WEIGHT_OFFSET_LLAMA, DEFAULT_EPS
from .. import language as nl
from ..utils import ensure_contiguous, calculate_settings


@triton.jit
def rms_norm_fwd_kernel(
    Y, Y_row_stride, X, X_row_stride, W, RSTD, n_cols, eps,
    offset: tl.constexpr, BLOCK_SIZE: tl.constexpr,
):
    row = nl.row_id()
    cols = nl.row_offsets(BLOCK_SIZE)
    mask = cols < n_cols
    x = to_fp32(tl.load(nl.row_ptr(X, row, X_row_stride) + cols, mask=mask, other=0.0))
    w = to_fp32(tl.load(W + cols, mask=mask, other=0.0))
    rstd = inv_rms(x, n_cols, eps)
    tl.store(RSTD + row, rstd)
    y = x * rstd * (w + offset + WEIGHT_OFFSET_LLAMA)
    tl.store(nl.row_ptr(Y, row, Y_row_stride) + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def rms_norm_bwd_dx_kernel(
    DY, dy_row_stride, DX, dx_row_stride, X, x_row_stride, W, RSTD, n_cols,
    offset: tl.constexpr, BLOCK_SIZE: tl.constexpr,
):
    row = nl.row_id()
    cols = nl.row_offsets(BLOCK_SIZE)
    mask = cols < n_cols
    dy = to_fp32(tl.load(nl.row_ptr(DY, row, dy_row_stride) + cols, mask=mask, other=0.0))
    x = to_fp32(tl.load(nl.row_ptr(X, row, x_row_stride) + cols, mask=mask, other=0.0))
    w = to_fp32(tl.load(W + cols, mask=mask, other=0.0)) + offset
    rstd = tl.load(RSTD + row)
    m = dy * w
    dx = rstd * m - rstd * rstd * rstd * (tl.sum(m * x, axis=0) / n_cols) * x
    tl.store(nl.row_ptr(DX, row, dx_row_stride) + cols, dx.to(DX.dtype.element_ty), mask=mask)


@ensure_contiguous
def rms_norm_forward(x, w, eps=DEFAULT_EPS):
    import torch
    n_rows, n_cols = x.shape
    block, warps = calculate_settings(n_cols)
    y = torch.empty_like(x)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    rms_norm_fwd_kernel[(n_rows,)](y, y.stride(0), x, x.stride(0), w, rstd, n_cols, eps,
                                   offset=0.0, BLOCK_SIZE=block, num_warps=warps)
    return y, rstd
