"""Chunked linear-attention building blocks in the style of flash-linear-attention: kernels
over [B, T, H] / [B, T, H, K] tensors processed BT time steps at a time, with block pointers,
optional variable-length batches (cu_seqlens plus a chunk index table, switched on by a
heuristic when the argument is not None), autotuned warps, and module-level aliases of the
exponential as such code keeps them."""
import torch

import triton
import triton.language as tl

exp = tl.exp


def prepare_chunk_indices(cu_seqlens, chunk_size):
    lens = (cu_seqlens[1:] - cu_seqlens[:-1]).tolist()
    idx = [(n, t) for n, l in enumerate(lens) for t in range(triton.cdiv(l, chunk_size))]
    return torch.tensor(idx, dtype=torch.int32, device=cu_seqlens.device)


@triton.heuristics({"IS_VARLEN": lambda args: args["cu_seqlens"] is not None})
@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in [1, 2, 4, 8]], key=["BT", "REVERSE"])
@triton.jit(do_not_specialize=["T"])
def chunk_local_cumsum_kernel(s, o, cu_seqlens, chunk_indices, T, H: tl.constexpr, BT: tl.constexpr,
                              REVERSE: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos, eos = i_b * T, i_b * T + T
    # one head's [T] slice, H apart in memory
    p_s = tl.make_block_ptr(s + bos * H + i_h, (T, ), (H, ), (i_t * BT, ), (BT, ), (0, ))
    p_o = tl.make_block_ptr(o + bos * H + i_h, (T, ), (H, ), (i_t * BT, ), (BT, ), (0, ))
    b_s = tl.load(p_s, boundary_check=(0, )).to(tl.float32)
    b_o = tl.cumsum(b_s, axis=0, reverse=REVERSE)
    tl.store(p_o, b_o.to(o.dtype.element_ty), boundary_check=(0, ))


@triton.jit
def chunk_decay_kernel(g, o, T, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr):
    # o[t, k] = exp(g[t, k] - g[last of chunk, k]): decays relative to the chunk's end
    i_k, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    base = (i_b * T * H + i_h) * K
    p_g = tl.make_block_ptr(g + base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    p_o = tl.make_block_ptr(o + base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    last = min(i_t * BT + BT, T) - 1
    o_k = i_k * BK + tl.arange(0, BK)
    b_gn = tl.load(g + base + last * H * K + o_k, mask=o_k < K, other=0.).to(tl.float32)
    b_g = tl.load(p_g, boundary_check=(0, 1)).to(tl.float32)
    b_o = exp(b_g - b_gn[None, :])
    tl.store(p_o, b_o.to(o.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def chunk_gate_apply_kernel(q, g, o, T, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr):
    # o = q * exp(g), the result cast to the element type of the output block pointer
    i_k, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    base = (i_b * T * H + i_h) * K
    p_q = tl.make_block_ptr(q + base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    p_g = tl.make_block_ptr(g + base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    p_o = tl.make_block_ptr(o + base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    b_q = tl.load(p_q, boundary_check=(0, 1)).to(tl.float32)
    b_g = tl.load(p_g, boundary_check=(0, 1)).to(tl.float32)
    tl.store(p_o, (b_q * tl.exp(b_g)).to(p_o.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def chunk_kkt_kernel(k, beta, A, T, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr):
    # A = strictly lower triangle of (beta * K) K^T within each chunk of BT steps
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    bos = i_b * T
    o_t = i_t * BT + tl.arange(0, BT)
    p_beta = tl.make_block_ptr(beta + bos * H + i_h, (T, ), (H, ), (i_t * BT, ), (BT, ), (0, ))
    b_beta = tl.load(p_beta, boundary_check=(0, ))
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        p_k = tl.make_block_ptr(k + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        b_k = tl.load(p_k, boundary_check=(0, 1))
        b_kb = b_k * b_beta[:, None]
        b_A += tl.dot(b_kb.to(b_k.dtype), tl.trans(b_k))
    b_A = tl.where((o_t[:, None] > o_t[None, :]) & (o_t[:, None] < T), b_A, 0)
    p_A = tl.make_block_ptr(A + (bos * H + i_h) * BT, (T, BT), (H * BT, 1), (i_t * BT, 0), (BT, BT), (1, 0))
    tl.store(p_A, b_A.to(A.dtype.element_ty), boundary_check=(0, 1))
