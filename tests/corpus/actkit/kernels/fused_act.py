# Gated activations: out = act(gate) * up over rows of [gate | up], one program per (row, block).
from .._triton import tl, triton
from ..activations import silu, gelu_tanh
from .. import activations as act


@triton.jit
def silu_and_mul_kernel(out_ptr, in_ptr, d, stride_in, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < d
    gate = tl.load(in_ptr + row * stride_in + offs, mask=mask, other=0.0)
    up = tl.load(in_ptr + row * stride_in + d + offs, mask=mask, other=0.0)
    y = silu(gate) * up.to(tl.float32)
    tl.store(out_ptr + row * stride_out + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def gelu_and_mul_kernel(out_ptr, in_ptr, d, stride_in, stride_out, APPROX: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < d
    gate = tl.load(in_ptr + row * stride_in + offs, mask=mask, other=0.0)
    up = tl.load(in_ptr + row * stride_in + d + offs, mask=mask, other=0.0)
    if APPROX:
        g = gelu_tanh(gate)
    else:
        x = gate.to(tl.float32)
        g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    y = act.relu(g * up.to(tl.float32)) if APPROX == 2 else g * up.to(tl.float32)
    tl.store(out_ptr + row * stride_out + offs, y.to(out_ptr.dtype.element_ty), mask=mask)
