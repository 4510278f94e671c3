# KL divergence and Jensen-Shannon divergence between rows of log-probabilities.
import triton
import triton.language as tl

from ..utils import LN2


@triton.jit
def kl_div_kernel(
    y_pred_ptr, y_true_ptr, loss_ptr, n_cols, stride, eps, BLOCK: tl.constexpr, LOG_TARGET: tl.constexpr,
    REDUCE: tl.constexpr,
):
    tl.static_assert(REDUCE == "none" or REDUCE == "sum", f"reduction {REDUCE!r} is not supported here")
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    p = tl.load(y_pred_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    q = tl.load(y_true_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    if LOG_TARGET:
        kl = tl.exp(q) * (q - p)
    else:
        kl = q * (tl.log(tl.maximum(q, eps)) - p)
    if REDUCE == "none":
        tl.store(loss_ptr + row * stride + cols, kl, mask=mask)
    else:
        tl.store(loss_ptr + row, tl.sum(tl.where(mask, kl, 0.0), axis=0))


@triton.jit
def jsd_kernel(x_ptr, y_ptr, loss_ptr, dx_ptr, n_cols, stride, beta, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    y = tl.load(y_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    px = tl.exp(x)
    py = tl.exp(y)
    m = beta * px + (1 - beta) * py
    log_m = tl.log(tl.maximum(m, 1e-30))
    loss = beta * px * (x - log_m) + (1 - beta) * py * (y - log_m)
    tl.store(loss_ptr + row, tl.sum(tl.where(mask, loss, 0.0), axis=0) / LN2 * LN2)
    if dx_ptr is not None:
        tl.store(dx_ptr + row * stride + cols, beta * px * (x - log_m), mask=mask)
