"""RMSNorm in the forms serving and training libraries ship: forward with an optional fused
residual add (the sum written back for the next layer), the backward pass with per-program
partial weight gradients, and a row L2-normalization."""
import torch

import triton
import triton.language as tl


@triton.jit
def _rms(x, n_cols, eps):
    # returns the normalised row and 1/rms, both fp32
    ms = tl.sum(x * x, axis=0) / n_cols
    r = tl.rsqrt(ms + eps)
    return x * r, r


@triton.jit
def rms_norm_fwd_kernel(x_ptr, residual_ptr, w_ptr, y_ptr, rstd_ptr, stride, n_cols, eps,
                        HAS_RESIDUAL: tl.constexpr, OFFSET: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    x = tl.load(x_ptr + row * stride + c, mask=m, other=0.0)
    if HAS_RESIDUAL:
        x += tl.load(residual_ptr + row * stride + c, mask=m, other=0.0)
        tl.store(residual_ptr + row * stride + c, x, mask=m)
    xn, r = _rms(x.to(tl.float32), n_cols, eps)
    w = tl.load(w_ptr + c, mask=m, other=0.0).to(tl.float32)
    y = xn * (w + OFFSET)
    tl.store(y_ptr + row * stride + c, y.to(y_ptr.dtype.element_ty), mask=m)
    tl.store(rstd_ptr + row, r)


@triton.jit
def rms_norm_bwd_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_part_ptr, stride, n_rows, n_cols,
                        rows_per_program, OFFSET: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    w = tl.load(w_ptr + c, mask=m, other=0.0).to(tl.float32) + OFFSET
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    first = pid * rows_per_program
    last = min(first + rows_per_program, n_rows)
    for row in range(first, last):
        x = tl.load(x_ptr + row * stride + c, mask=m, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * stride + c, mask=m, other=0.0).to(tl.float32)
        r = tl.load(rstd_ptr + row)
        xn = x * r
        wdy = w * dy
        dx = r * (wdy - xn * (tl.sum(wdy * xn, axis=0) / n_cols))
        tl.store(dx_ptr + row * stride + c, dx.to(dx_ptr.dtype.element_ty), mask=m)
        dw += dy * xn
    tl.store(dw_part_ptr + pid * n_cols + c, dw, mask=m)


@triton.jit
def l2_normalize_kernel(x_ptr, y_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + c, mask=c < n_cols, other=0.0).to(tl.float32)
    norm = tl.sum(x * x, axis=0).sqrt()
    tl.store(y_ptr + row * stride + c, x / tl.maximum(norm, eps), mask=c < n_cols)


def rms_norm(x, weight, eps=1e-6, residual=None, offset=0.0):
    x2 = x.reshape(-1, x.shape[-1])
    rows, cols = x2.shape
    y = torch.empty_like(x2)
    rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
    rms_norm_fwd_kernel[(rows, )](x2, residual if residual is not None else x2, weight, y, rstd, x2.stride(0), cols,
                                  eps, HAS_RESIDUAL=residual is not None, OFFSET=offset,
                                  BLOCK=triton.next_power_of_2(cols))
    return y.view_as(x), rstd
