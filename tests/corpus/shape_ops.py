"""Kernels that move data between tile shapes: complex multiplication on interleaved (re, im)
pairs with tl.split / tl.join, interleaving two planes back into pairs, a [B, M, N] -> [B, N, M]
permute done in registers, and a kernel that builds a tile from two halves with tl.cat and
reverses it."""
import triton
import triton.language as tl


@triton.jit
def complex_mul_kernel(a_ptr, b_ptr, c_ptr, n_pairs, BLOCK: tl.constexpr):
    # a, b, c hold n_pairs complex numbers as (re, im) fp32 pairs
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    k = tl.arange(0, 2)
    offs = p[:, None] * 2 + k[None, :]
    m = (p < n_pairs)[:, None]
    a = tl.load(a_ptr + offs, mask=m, other=0.0)
    b = tl.load(b_ptr + offs, mask=m, other=0.0)
    a_re, a_im = tl.split(a)
    b_re, b_im = b.split()
    c = tl.join(a_re * b_re - a_im * b_im, a_re * b_im + a_im * b_re)
    tl.store(c_ptr + offs, c, mask=m)


@triton.jit
def interleave_planes_kernel(re_ptr, im_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    re = tl.load(re_ptr + i, mask=i < n, other=0)
    im = tl.load(im_ptr + i, mask=i < n, other=0)
    pairs = tl.interleave(re, im)  # re0 im0 re1 im1 ...
    j = tl.program_id(0) * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + j, pairs, mask=j < 2 * n)
    # the same through join + ravel
    also = tl.ravel(tl.join(re, im))
    tl.store(out_ptr + 2 * n + j, also, mask=j < 2 * n)


@triton.jit
def batched_transpose_kernel(x_ptr, y_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    b = tl.arange(0, B)[:, None, None]
    r = tl.arange(0, M)[None, :, None]
    c = tl.arange(0, N)[None, None, :]
    x = tl.load(x_ptr + b * M * N + r * N + c)
    y = tl.permute(x, (0, 2, 1))
    bt = tl.arange(0, B)[:, None, None]
    rt = tl.arange(0, N)[None, :, None]
    ct = tl.arange(0, M)[None, None, :]
    tl.store(y_ptr + bt * M * N + rt * M + ct, y)
    # the last two dims of a 2-D view swapped three ways
    flat = tl.reshape(x, (B * M, N))
    t1 = tl.trans(flat)
    t2 = flat.T
    t3 = flat.trans(1, 0)
    i = tl.arange(0, N)[:, None]
    j = tl.arange(0, B * M)[None, :]
    tl.store(y_ptr + B * M * N + i * (B * M) + j, t1 + t2 - t3)


@triton.jit
def cat_flip_kernel(lo_ptr, hi_ptr, out_ptr, HALF: tl.constexpr):
    i = tl.arange(0, HALF)
    lo = tl.load(lo_ptr + i)
    hi = tl.load(hi_ptr + i)
    both = tl.cat(lo, hi, can_reorder=True)
    tl.static_assert(both.shape[0] == 2 * HALF)
    j = tl.arange(0, 2 * HALF)
    # cat may reorder: only order-independent results are stored
    tl.store(out_ptr, tl.sum(both, axis=0))
    rev = tl.flip(tl.load(lo_ptr + j))
    tl.store(out_ptr + 1 + j, rev)
    # a row vector broadcast against a column to an outer sum, then viewed as one long vector
    col = tl.expand_dims(lo, 1)
    row = tl.expand_dims(hi, 0)
    outer = tl.broadcast_to(col, (HALF, HALF)) + row
    flat = tl.view(outer, (HALF * HALF, ))
    tl.store(out_ptr + 1 + 2 * HALF + tl.arange(0, HALF * HALF), tl.sum(flat) + tl.zeros_like(flat))
