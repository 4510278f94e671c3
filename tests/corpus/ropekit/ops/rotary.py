# Rotary position embedding (NeoX layout: the two halves of each head rotate together), in place
# on q and k, with cos / sin looked up by each token's position.
from .._compat import tl, triton, libdevice
from .index import token_id, head_block, half_dims
from . import index


@triton.jit
def rotate(x1, x2, cos, sin):
    return x1 * cos - x2 * sin, x2 * cos + x1 * sin


@triton.jit
def rotary_embedding_kernel(
    q_ptr, k_ptr, cos_sin_ptr, positions_ptr, q_token_stride, k_token_stride, head_stride,
    num_q_heads, num_k_heads,
    HEAD_DIM: tl.constexpr, BLOCK_H: tl.constexpr,
):
    tok = token_id()
    heads = head_block(BLOCK_H)
    dims = half_dims(HEAD_DIM)
    pos = tl.load(positions_ptr + tok)
    cos = tl.load(cos_sin_ptr + pos * HEAD_DIM + dims).to(tl.float32)
    sin = tl.load(cos_sin_ptr + pos * HEAD_DIM + HEAD_DIM // 2 + dims).to(tl.float32)
    half = HEAD_DIM // 2
    # q
    qmask = (heads < num_q_heads)[:, None]
    q1p = q_ptr + tok * q_token_stride + heads[:, None] * head_stride + dims[None, :]
    q1 = tl.load(q1p, mask=qmask, other=0.0).to(tl.float32)
    q2 = tl.load(q1p + half, mask=qmask, other=0.0).to(tl.float32)
    r1, r2 = rotate(q1, q2, cos[None, :], sin[None, :])
    tl.store(q1p, r1.to(q_ptr.dtype.element_ty), mask=qmask)
    tl.store(q1p + half, r2.to(q_ptr.dtype.element_ty), mask=qmask)
    # k
    kmask = (heads < num_k_heads)[:, None]
    k1p = k_ptr + tok * k_token_stride + heads[:, None] * head_stride + dims[None, :]
    k1 = tl.load(k1p, mask=kmask, other=0.0).to(tl.float32)
    k2 = tl.load(k1p + half, mask=kmask, other=0.0).to(tl.float32)
    s1, s2 = rotate(k1, k2, cos[None, :], sin[None, :])
    tl.store(k1p, s1.to(k_ptr.dtype.element_ty), mask=kmask)
    tl.store(k1p + half, s2.to(k_ptr.dtype.element_ty), mask=kmask)
