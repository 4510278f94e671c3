# Per-token dynamic quantization to fp8 (e4m3) and int8: one program per row.
from .._triton import *
from ..constants import FP8_E4M3_MAX, FP8_MIN_SCALE, INT8_MAX

__all__ = ["per_token_quant_fp8_kernel", "per_token_quant_int8_kernel"]


@triton.jit
def per_token_quant_fp8_kernel(x_ptr, q_ptr, scale_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=0)
    scale = tl.maximum(amax / FP8_E4M3_MAX, FP8_MIN_SCALE)
    q = tl.clamp(x / scale, -FP8_E4M3_MAX, FP8_E4M3_MAX)
    tl.store(q_ptr + row * stride + cols, q.to(tl.float8e4nv), mask=mask)
    tl.store(scale_ptr + row, scale)


@triton.jit
def per_token_quant_int8_kernel(x_ptr, q_ptr, scale_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-10)
    scale = amax / INT8_MAX
    q = x / scale
    q = tl.where(q >= 0, q + 0.5, q - 0.5).to(tl.int8)
    tl.store(q_ptr + row * stride + cols, q, mask=mask)
    tl.store(scale_ptr + row, scale)
