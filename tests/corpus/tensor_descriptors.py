"""Kernels that build tensor descriptors on the device (tl.make_tensor_descriptor), as the newer
tutorials and MoE kernels do: a GEMM that loads its operand tiles through descriptors and stores
the result through one, and a padded 2-D copy using the functional forms
tl.load_tensor_descriptor / tl.store_tensor_descriptor. Device-side descriptors need a scratch
allocator in Triton's JIT, which the host code sets."""
from typing import Optional

import torch

import triton
import triton.language as tl


def _scratch(size: int, alignment: int, stream: Optional[int]):
    return torch.empty(size, device="cuda", dtype=torch.int8)


triton.set_allocator(_scratch)


@triton.jit
def descriptor_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    dtype = c_ptr.dtype.element_ty
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    pid = tl.program_id(0)
    n_tiles_m = tl.cdiv(M, BLOCK_M)
    off_m = (pid % n_tiles_m) * BLOCK_M
    off_n = (pid // n_tiles_m) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, num_stages=3):
        a = a_desc.load([off_m, k])
        b = b_desc.load([off_n, k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(dtype))


@triton.jit
def descriptor_pad_copy_kernel(src_ptr, dst_ptr, R, C, src_stride, dst_stride,
                               BR: tl.constexpr, BC: tl.constexpr, PAD_NAN: tl.constexpr):
    # Copies an R x C matrix into a larger buffer; blocks that overhang the source read its padding.
    src = tl.make_tensor_descriptor(src_ptr, [R, C], [src_stride, 1], [BR, BC],
                                  padding_option="nan" if PAD_NAN else "zero")
    dst = tl.make_tensor_descriptor(dst_ptr, [tl.cdiv(R, BR) * BR, tl.cdiv(C, BC) * BC], [dst_stride, 1], [BR, BC])
    tl.static_assert(len(src.block_shape) == 2)
    r0 = tl.program_id(0) * BR
    c0 = tl.program_id(1) * BC
    tile = tl.load_tensor_descriptor(src, [r0, c0])
    if PAD_NAN:
        tile = tl.where(tile != tile, 0.0, tile)
    tl.store_tensor_descriptor(dst, [r0, c0], tile)


def descriptor_matmul(a, b_t):
    M, K = a.shape
    N = b_t.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128), )
    descriptor_matmul_kernel[grid](a, b_t, c, M, N, K, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8)
    return c
