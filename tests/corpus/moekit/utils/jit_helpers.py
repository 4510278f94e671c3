# @triton.jit helpers of the routing kernels.
import triton
import triton.language as tl

from .constants import FP32_MIN

__all__ = ["masked_softmax", "row_program"]


@triton.jit
def masked_softmax(x, mask):
    x = tl.where(mask, x, FP32_MIN)
    e = tl.exp(x - tl.max(x, axis=0))
    e = tl.where(mask, e, 0.0)
    return e / tl.sum(e, axis=0)


@triton.jit
def row_program():
    return tl.program_id(0).to(tl.int64)
