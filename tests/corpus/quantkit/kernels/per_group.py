# Per-group (per-token-group) quantization to fp8 or int8 and dequantization back to fp16 / bf16.
import triton
import triton.language as tl

from .. import config
from .._compat import FP32_EPS, INT8_MIN, INT8_MAX


@triton.jit
def _group_absmax(x, GROUPS: tl.constexpr, GROUP: tl.constexpr):
    g = tl.reshape(tl.abs(x), (GROUPS, GROUP))
    return tl.max(g, axis=1)


@triton.jit
def per_group_quant_kernel(
    x_ptr, q_ptr, s_ptr, n_cols, stride_x, stride_q,
    GROUP: tl.constexpr, BLOCK: tl.constexpr, COLUMN_MAJOR_SCALES: tl.constexpr,
):
    GROUPS: tl.constexpr = config.groups_per_block(BLOCK, GROUP)
    QMAX: tl.constexpr = config.qmax_of(q_ptr.dtype.element_ty)
    tl.static_assert(GROUPS >= 1, f"{BLOCK=} must hold at least one group of {GROUP}")
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    scales = tl.maximum(_group_absmax(x, GROUPS, GROUP), FP32_EPS) / QMAX
    y = tl.reshape(tl.reshape(x, (GROUPS, GROUP)) / scales[:, None], (BLOCK,))
    if q_ptr.dtype.element_ty == tl.int8:
        y = tl.clamp(y, INT8_MIN, INT8_MAX)
        y = tl.where(y >= 0, y + 0.5, y - 0.5)
    else:
        y = tl.clamp(y, -QMAX, QMAX)
    tl.store(q_ptr + row * stride_q + cols, y.to(q_ptr.dtype.element_ty), mask=cols < n_cols)
    g = tl.arange(0, GROUPS)
    if COLUMN_MAJOR_SCALES:
        tl.store(s_ptr + g * tl.num_programs(0) + row, scales)
    else:
        tl.store(s_ptr + row * GROUPS + g, scales)


@triton.jit
def dequant_kernel(q_ptr, s_ptr, out_ptr, n_cols, GROUP: tl.constexpr, BLOCK: tl.constexpr, ROUNDING: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    q = tl.load(q_ptr + row * n_cols + cols, mask=mask, other=0).to(tl.float32)
    s = tl.load(s_ptr + row * (BLOCK // GROUP) + cols // GROUP, mask=mask, other=0.0)
    y = (q * s).to(out_ptr.dtype.element_ty, fp_downcast_rounding=ROUNDING)
    tl.store(out_ptr + row * n_cols + cols, y, mask=mask)
