# Constants, @triton.jit helpers and host-side launch helpers shared by the kernels.
import functools

from normkit.triton_utils import tl, triton, fast_rsqrt

try:
    import torch
except ImportError:  # the helpers below are host code: kernels never reach them
    torch = None

MAX_FUSED_SIZE = 65536
DEFAULT_EPS = 1e-6
# Offsets of the two normalization flavours' weights (Gemma adds 1 to the weight).
WEIGHT_OFFSET_LLAMA: tl.constexpr = 0.0
WEIGHT_OFFSET_GEMMA: tl.constexpr = 1.0


@triton.jit
def inv_rms(x, n_cols, eps):
    """1 / sqrt(mean(x^2) + eps) of a row held in fp32."""
    mean_sq = tl.sum(x * x, axis=0) / n_cols
    return fast_rsqrt(mean_sq + eps)


@triton.jit
def to_fp32(x):
    return x.to(tl.float32)


@functools.lru_cache
def calculate_settings(n):
    block = triton.next_power_of_2(n)
    if block > MAX_FUSED_SIZE:
        raise RuntimeError("row too long for a fused kernel: %d" % n)
    num_warps = 4
    if block >= 32768:
        num_warps = 32
    elif block >= 8192:
        num_warps = 16
    elif block >= 2048:
        num_warps = 8
    return block, num_warps


def ensure_contiguous(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args = [a.contiguous() if hasattr(a, "contiguous") else a for a in args]
        return fn(*args, **kwargs)
    return wrapper
