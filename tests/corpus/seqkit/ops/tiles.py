# Tiled copies: a grouped (swizzled) tile order, transposes through ravel, and interleaving.
import triton
import triton.language as tl

from ..language import check_block


@triton.jit
def swizzled_copy_kernel(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP: tl.constexpr):
    tl.static_assert(check_block(BM) and check_block(BN))
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    pid_m, pid_n = tl.swizzle2d(tl.program_id(0), tl.program_id(1), grid_m, grid_n, GROUP)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], tile, mask=mask)


@triton.jit
def transpose_ravel_kernel(x_ptr, y_ptr, B: tl.constexpr):
    r = tl.arange(0, B)
    tile = tl.load(x_ptr + r[:, None] * B + r[None, :])
    flat = tl.ravel(tl.trans(tile))
    tl.store(y_ptr + tl.arange(0, B * B), flat)


@triton.jit
def interleave_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n, other=0.0)
    b = tl.load(b_ptr + offs, mask=offs < n, other=0.0)
    out = tl.interleave(a, b)
    o = tl.program_id(0) * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + o, out, mask=o < 2 * n)
