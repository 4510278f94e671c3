# Per-tensor fp8 quantization: a static scale, or a dynamic one found with an atomic max.
from .._compat import tl, triton, FP32_EPS
from ..config import qmax_of, is_pow2


@triton.jit
def static_scaled_fp8_quant_kernel(out_ptr, in_ptr, scale_ptr, scale_ub_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(is_pow2(BLOCK), f"BLOCK must be a power of two, got {BLOCK}")
    QMAX: tl.constexpr = qmax_of(out_ptr.dtype.element_ty)
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(in_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    scale = tl.load(scale_ptr)
    if scale_ub_ptr is not None:
        scale = tl.minimum(scale, tl.load(scale_ub_ptr))
    y = tl.clamp(x / scale, -QMAX, QMAX)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def _dynamic_scale(in_ptr, scale_ptr, n, QDTYPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(in_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=0)
    tl.atomic_max(scale_ptr, tl.maximum(amax / qmax_of(QDTYPE), FP32_EPS))


dynamic_scale_kernel = triton.jit(_dynamic_scale)


def _scaled_dequant(q_ptr, scale_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    q = tl.load(q_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = q * tl.load(scale_ptr)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty, fp_downcast_rounding="rtne"), mask=mask)


scaled_dequant_kernel = triton.jit(_scaled_dequant, do_not_specialize=["n"])
