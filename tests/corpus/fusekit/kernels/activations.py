# Gated activations (SwiGLU, GeGLU with the tanh approximation), squared ReLU, logit soft-capping
# and a SiLU-and-multiply that quantizes its output to fp8.
from .._triton import tl, triton, libdevice
from ..constants import finite_max


@triton.jit
def _silu(x):
    return x * tl.sigmoid(x)


def _swiglu_fwd(gate_ptr, up_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (_silu(g) * u).to(out_ptr.dtype.element_ty), mask=mask)


swiglu_fwd_kernel = triton.jit(_swiglu_fwd)


@triton.jit
def geglu_tanh_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(x_ptr + row * 2 * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(x_ptr + row * 2 * n_cols + n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    inner = 0.7978845608028654 * (a + 0.044715 * a * a * a)
    gelu = 0.5 * a * (1 + libdevice.tanh(inner))
    tl.store(out_ptr + row * n_cols + cols, (gelu * b).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def relu_squared_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    r = tl.maximum(x, 0.0)
    tl.store(y_ptr + offs, r * r, mask=offs < n)


@triton.jit
def softcap_kernel(x_ptr, y_ptr, n, cap, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    y = cap * libdevice.tanh(x / cap)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=offs < n)


@triton.jit
def silu_mul_fp8_kernel(x_ptr, out_ptr, scale_ptr, n_cols, BLOCK: tl.constexpr):
    QMAX: tl.constexpr = finite_max(out_ptr.dtype.element_ty)
    tl.static_assert(QMAX == 448.0, f"fp8 e4m3 output expected, got max {QMAX}")
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    g = tl.load(x_ptr + row * 2 * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(x_ptr + row * 2 * n_cols + n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    y = _silu(g) * u
    scale = tl.load(scale_ptr)
    tl.store(out_ptr + row * n_cols + cols, tl.clamp(y / scale, -QMAX, QMAX).to(tl.float8e4nv), mask=mask)


@triton.jit
def gelu_erf_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, VEC: tl.constexpr):
    tl.static_assert(BLOCK % VEC == 0, f"BLOCK={BLOCK} is not a multiple of VEC={VEC}")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(offs, VEC), VEC)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    y = 0.5 * x * (1 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=offs < n)
