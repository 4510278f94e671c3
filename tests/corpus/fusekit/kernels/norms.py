# RMSNorm with a fused residual add, LayerNorm with optional affine parameters, GroupNorm and L2
# normalization.
from .._triton import tl, triton
from ..constants import ACC_DTYPE, FP32_TINY


@triton.jit
def fused_add_rms_norm_kernel(
    x_ptr, residual_ptr, w_ptr, out_ptr, residual_out_ptr, n_cols, stride, eps, BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(ACC_DTYPE)
    if residual_ptr is not None:
        x += tl.load(residual_ptr + row * stride + cols, mask=mask, other=0.0).to(ACC_DTYPE)
        if residual_out_ptr is not None:
            tl.store(residual_out_ptr + row * stride + cols, x.to(residual_out_ptr.dtype.element_ty), mask=mask)
    var = tl.sum(x * x, axis=0) / n_cols
    y = x * tl.rsqrt(var + eps) * tl.load(w_ptr + cols, mask=mask, other=0.0).to(ACC_DTYPE)
    tl.store(out_ptr + row * stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def layer_norm_affine_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    rstd = 1 / tl.sqrt(tl.sum(xc * xc, axis=0) / n_cols + eps)
    y = xc * rstd
    if w_ptr is not None:
        y = y * tl.load(w_ptr + cols, mask=mask, other=1.0).to(tl.float32)
    if b_ptr is not None:
        y = y + tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
    if mean_ptr is not None:
        tl.store(mean_ptr + row, mean)
        tl.store(rstd_ptr + row, rstd)


@triton.jit
def group_norm_kernel(x_ptr, y_ptr, gamma_ptr, beta_ptr, C, HW, eps, GROUPS: tl.constexpr, BLOCK_C: tl.constexpr,
                      BLOCK_HW: tl.constexpr):
    n = tl.program_id(0).to(tl.int64)
    g = tl.program_id(1)
    c_per_g = C // GROUPS
    c = g * c_per_g + tl.arange(0, BLOCK_C)
    hw = tl.arange(0, BLOCK_HW)
    mask = (tl.arange(0, BLOCK_C)[:, None] < c_per_g) & (hw[None, :] < HW)
    offs = n * C * HW + c[:, None] * HW + hw[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    cnt = c_per_g * HW
    mean = tl.sum(tl.sum(x, axis=1), axis=0) / cnt
    xc = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(tl.sum(xc * xc, axis=1, keep_dims=True), axis=0) / cnt + eps)
    gamma = tl.load(gamma_ptr + c, mask=tl.arange(0, BLOCK_C) < c_per_g, other=1.0)
    beta = tl.load(beta_ptr + c, mask=tl.arange(0, BLOCK_C) < c_per_g, other=0.0)
    y = xc * rstd * gamma[:, None] + beta[:, None]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def _l2_norm(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    norm = tl.sqrt(tl.maximum(tl.sum(x * x, axis=0), FP32_TINY))
    tl.store(y_ptr + row * n_cols + cols, (x / norm).to(y_ptr.dtype.element_ty), mask=cols < n_cols)


l2_norm_kernel = triton.jit(_l2_norm)
