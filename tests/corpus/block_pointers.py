"""Kernels written with block pointers (tl.make_block_ptr / tl.advance), as fla- and
FlagGems-style code does: a GEMM whose operand tiles are advanced along K with boundary checks and
zero padding, a tiled transpose that reads through a column-major block pointer, and a chunked
cumulative sum over the time axis of a [B, T, D] tensor."""
import torch

import triton
import triton.language as tl


@triton.jit
def block_ptr_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                            stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_blk = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                              offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_blk = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                              offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        a = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc=acc, out_dtype=tl.float32)
        a_blk = tl.advance(a_blk, (0, BLOCK_K))
        b_blk = tl.advance(b_blk, (BLOCK_K, 0))
    c_blk = tl.make_block_ptr(c_ptr, (M, N), (stride_cm, stride_cn), (pid_m * BLOCK_M, pid_n * BLOCK_N),
                              (BLOCK_M, BLOCK_N), (1, 0))
    tl.store(c_blk, acc.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def transpose_kernel(src, dst, R, C, stride_sr, stride_dr, TILE_R: tl.constexpr, TILE_C: tl.constexpr):
    # dst[C, R] = src[R, C]^T: read a [TILE_C, TILE_R] tile of src^T (a column-major view), store it.
    i = tl.program_id(0)
    j = tl.program_id(1)
    src_t = tl.make_block_ptr(src, shape=(C, R), strides=(1, stride_sr), offsets=(j * TILE_C, i * TILE_R),
                              block_shape=(TILE_C, TILE_R), order=(0, 1))
    tile = tl.load(src_t, boundary_check=(0, 1))
    out = tl.make_block_ptr(dst, shape=(C, R), strides=(stride_dr, 1), offsets=(j * TILE_C, i * TILE_R),
                            block_shape=(TILE_C, TILE_R), order=(1, 0))
    tl.store(out, tile, boundary_check=(1, 0))


@triton.jit
def chunk_cumsum_kernel(x, out, T, D: tl.constexpr, BT: tl.constexpr, BD: tl.constexpr, REVERSE: tl.constexpr):
    # Cumulative sum along T for one (batch, feature block), BT time steps at a time.
    i_d, i_b = tl.program_id(0), tl.program_id(1)
    carry = tl.zeros([BD], dtype=tl.float32)
    n_chunks = tl.cdiv(T, BT)
    for i in range(n_chunks):
        i_t = n_chunks - 1 - i if REVERSE else i
        p_x = tl.make_block_ptr(x + i_b * T * D, (T, D), (D, 1), (i_t * BT, i_d * BD), (BT, BD), (1, 0))
        p_o = tl.make_block_ptr(out + i_b * T * D, (T, D), (D, 1), (i_t * BT, i_d * BD), (BT, BD), (1, 0))
        b_x = tl.load(p_x, boundary_check=(0, 1)).to(tl.float32)
        b_c = tl.cumsum(b_x, axis=0, reverse=REVERSE) + carry[None, :]
        tl.store(p_o, b_c.to(out.dtype.element_ty), boundary_check=(0, 1))
        carry += tl.sum(b_x, 0)


def transpose(x):
    R, C = x.shape
    y = torch.empty((C, R), device=x.device, dtype=x.dtype)
    transpose_kernel[(triton.cdiv(R, 64), triton.cdiv(C, 64))](x, y, R, C, x.stride(0), y.stride(0), TILE_R=64,
                                                              TILE_C=64)
    return y
