"""Fused activation kernels in the style of LLM kernel libraries: GELU (exact erf or tanh
approximation) forward and backward, SiLU-and-mul (SwiGLU) forward and backward on a [T, 2D]
input, and softplus. Loads are upcast to fp32 and results cast back with
`ptr.dtype.element_ty`; tanh comes from libdevice, imported with a fallback as libraries do."""
import torch

import triton
import triton.language as tl

try:
    from triton.language.extra.libdevice import tanh
except ModuleNotFoundError:
    from triton.language.extra.cuda.libdevice import tanh

from triton.language.extra import libdevice

SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)


@triton.jit
def gelu_fwd_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, APPROXIMATE: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=0.0).to(tl.float32)
    if APPROXIMATE:
        inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        y = 0.5 * x * (1.0 + libdevice.tanh(inner))
    else:
        y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + i, y.to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def gelu_bwd_kernel(dy_ptr, x_ptr, dx_ptr, n, BLOCK: tl.constexpr):
    # exact GELU: d/dx [x * Phi(x)] = Phi(x) + x * phi(x)
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + i, mask=m, other=0.0).to(tl.float32)
    cdf = 0.5 * (1.0 + libdevice.erf(x * 0.7071067811865476))
    pdf = tl.exp(-0.5 * x * x) * 0.3989422804014327
    tl.store(dx_ptr + i, (dy * (cdf + x * pdf)).to(dx_ptr.dtype.element_ty), mask=m)


@triton.jit
def silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def silu_and_mul_kernel(x_ptr, out_ptr, d, stride_x, stride_o, BLOCK_D: tl.constexpr):
    # x is [T, 2d]: out = silu(x[:, :d]) * x[:, d:]
    t = tl.program_id(0).to(tl.int64)
    for d0 in tl.range(0, d, BLOCK_D):
        c = d0 + tl.arange(0, BLOCK_D)
        m = c < d
        gate = tl.load(x_ptr + t * stride_x + c, mask=m, other=0.0).to(tl.float32)
        up = tl.load(x_ptr + t * stride_x + d + c, mask=m, other=0.0)
        out = silu(gate).to(up.dtype) * up
        tl.store(out_ptr + t * stride_o + c, out, mask=m)


@triton.jit
def swiglu_bwd_kernel(dy_ptr, a_ptr, b_ptr, da_ptr, db_ptr, n_cols, stride, BLOCK: tl.constexpr):
    # y = silu(a) * b; writes da and db in place of the saved activations' gradient buffers
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    off = row * stride + c
    dy = tl.load(dy_ptr + off, mask=m, other=0)
    a = tl.load(a_ptr + off, mask=m, other=0).to(tl.float32)
    b = tl.load(b_ptr + off, mask=m, other=0)
    sig = tl.sigmoid(a)
    silu_a = a * sig
    db = dy * silu_a
    da = dy * (silu_a * (1 - sig) + sig) * b
    tl.store(da_ptr + off, da.to(da_ptr.dtype.element_ty), mask=m)
    tl.store(db_ptr + off, db.to(db_ptr.dtype.element_ty), mask=m)


@triton.jit
def geglu_tanh_kernel(a_ptr, b_ptr, c_ptr, n_cols, stride, BLOCK: tl.constexpr):
    # c = gelu_tanh(a) * b with the `tanh` imported at the top of the file
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    a = tl.load(a_ptr + row * stride + cols, mask=m, other=0).to(tl.float32)
    b = tl.load(b_ptr + row * stride + cols, mask=m, other=0)
    t = tanh(SQRT_2_OVER_PI * (a + 0.044715 * a * a * a))
    gelu_a = 0.5 * a * (1 + t)
    tl.store(c_ptr + row * stride + cols, gelu_a.to(b.dtype) * b, mask=m)


@triton.jit
def softplus_kernel(x_ptr, y_ptr, n, beta, threshold, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m).to(tl.float32)
    bx = beta * x
    soft = libdevice.log1p(tl.exp(bx)) / beta
    tl.store(y_ptr + i, tl.where(bx > threshold, x, soft), mask=m)


def silu_and_mul(x):
    T, D2 = x.shape
    out = torch.empty((T, D2 // 2), device=x.device, dtype=x.dtype)
    silu_and_mul_kernel[(T, )](x, out, D2 // 2, x.stride(0), out.stride(0), BLOCK_D=1024)
    return out


class GELU(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, approximate="none"):
        y = torch.empty_like(x)
        n = x.numel()
        gelu_fwd_kernel[(triton.cdiv(n, 1024), )](x, y, n, BLOCK=1024, APPROXIMATE=approximate == "tanh")
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensors
        dx = torch.empty_like(x)
        gelu_bwd_kernel[(triton.cdiv(x.numel(), 1024), )](dy, x, dx, x.numel(), BLOCK=1024)
        return dx, None
