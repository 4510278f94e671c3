# Program ids and offsets of the package's kernels (one program per token and head block).
from .._compat import tl, triton

MAX_HEAD_DIM = 256


@triton.jit
def token_id():
    return tl.program_id(0).to(tl.int64)


@triton.jit
def head_block(BLOCK_H: tl.constexpr):
    return tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)


@triton.jit
def half_dims(HEAD_DIM: tl.constexpr):
    tl.static_assert(HEAD_DIM <= MAX_HEAD_DIM)
    return tl.arange(0, HEAD_DIM // 2)
