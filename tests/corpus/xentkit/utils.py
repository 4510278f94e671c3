# Constants and helpers of the loss kernels.
import torch

from .triton_utils import triton, tl

NEG_INF = -torch.finfo(torch.float32).max
LOG2E: tl.constexpr = tl.constexpr(1.4426950408889634)
LN2: tl.constexpr = tl.constexpr(0.6931471805599453)


@triton.constexpr_function
def num_chunks(n, block):
    return (n + block - 1) // block


@triton.jit
def online_lse_update(m, d, x):
    # one step of the online logsumexp: running max m and scaled denominator d
    m_new = tl.maximum(m, tl.max(x, axis=0))
    d = d * tl.exp2((m - m_new) * LOG2E) + tl.sum(tl.exp2((x - m_new) * LOG2E), axis=0)
    return m_new, d
