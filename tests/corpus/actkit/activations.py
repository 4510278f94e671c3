# @triton.jit activation helpers, each computing in fp32.
from ._triton import tl, triton
from .constants import SQRT_2_OVER_PI, GELU_COEF


@triton.jit
def silu(x):
    x = x.to(tl.float32)
    return x / (1.0 + tl.exp(-x))


@triton.jit
def tanh_approx(x):
    # tanh(x) = 2 sigmoid(2x) - 1
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0


@triton.jit
def gelu_tanh(x):
    x = x.to(tl.float32)
    inner = SQRT_2_OVER_PI * (x + GELU_COEF * x * x * x)
    return 0.5 * x * (1.0 + tanh_approx(inner))


@triton.jit
def relu(x):
    return tl.maximum(x, 0.0)
