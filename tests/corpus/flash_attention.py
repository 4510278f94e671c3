"""Fused attention forward in the flash-attention style: a program owns BLOCK_M queries of one
(batch, head), streams the keys and values in BLOCK_N tiles with an online softmax in base 2, and
splits the causal case into the tiles below the diagonal (no mask) and the diagonal tiles (masked)
through a helper called twice with a different STAGE. Also the backward pre-processing step
(delta = rowsum(o * do)) and a decoding kernel that splits a long KV sequence across programs."""
import math

import torch

import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def _attn_tile_loop(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, start_m, qk_scale, n_ctx,
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr,
                    offs_m, offs_n):
    # STAGE 1: key tiles strictly left of the diagonal; 2: the diagonal tiles; 3: every tile.
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, n_ctx
    d = tl.arange(0, HEAD_DIM)
    for start_n in tl.range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        # K is read transposed: a [HEAD_DIM, BLOCK_N] tile
        k = tl.load(k_base + cols[None, :] * stride_kn + d[:, None], mask=cols[None, :] < n_ctx, other=0.0)
        qk = tl.dot(q, k)
        if STAGE == 2:
            causal = offs_m[:, None] >= cols[None, :]
            qk = qk * qk_scale + tl.where(causal, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            qk = tl.where(cols[None, :] < n_ctx, qk, float("-inf"))
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_base + cols[:, None] * stride_vn + d[None, :], mask=cols[:, None] < n_ctx, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attn_fwd_kernel(Q, K, V, sm_scale, M, Out,
                    stride_qz, stride_qh, stride_qm,
                    stride_kz, stride_kh, stride_kn,
                    stride_vz, stride_vh, stride_vn,
                    stride_oz, stride_oh, stride_om,
                    H, N_CTX,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_base = Q + off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_base = K + off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_base = V + off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_base = Out + off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * LOG2E
    q = tl.load(q_base + offs_m[:, None] * stride_qm + d[None, :], mask=offs_m[:, None] < N_CTX, other=0.0)
    # STAGE 3 is causal: first the unmasked tiles, then the diagonal; 1 is full attention
    if STAGE & 1:
        acc, l_i, m_i = _attn_tile_loop(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, start_m, qk_scale,
                                        N_CTX, BLOCK_M, HEAD_DIM, BLOCK_N, 4 - STAGE, offs_m, offs_n)
    if STAGE & 2:
        acc, l_i, m_i = _attn_tile_loop(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, start_m, qk_scale,
                                        N_CTX, BLOCK_M, HEAD_DIM, BLOCK_N, 2, offs_m, offs_n)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i, mask=offs_m < N_CTX)
    tl.store(o_base + offs_m[:, None] * stride_om + d[None, :], acc.to(Out.dtype.element_ty),
             mask=offs_m[:, None] < N_CTX)


@triton.jit
def attn_bwd_preprocess_kernel(O, DO, Delta, N_CTX, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    off_hz = tl.program_id(1)
    off_n = tl.arange(0, HEAD_DIM)
    o = tl.load(O + off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :])
    do = tl.load(DO + off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :]).to(tl.float32)
    delta = tl.sum(o * do, axis=1)
    tl.store(Delta + off_hz * N_CTX + off_m, delta)


@triton.jit
def split_kv_decode_kernel(q_ptr, k_ptr, v_ptr, part_out, part_lse, seq_len, sm_scale,
                           stride_kt, stride_vt, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                           NUM_SPLITS: tl.constexpr):
    # One query row (decode); program (split) covers a contiguous slice of the KV sequence.
    split = tl.program_id(0)
    per_split = tl.cdiv(seq_len, NUM_SPLITS)
    lo = split * per_split
    hi = tl.minimum(lo + per_split, seq_len)
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + d).to(tl.float32)
    m = float("-inf")
    l = 0.0
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    for t0 in range(lo, hi, BLOCK_N):
        t = t0 + tl.arange(0, BLOCK_N)
        live = t < hi
        k = tl.load(k_ptr + t[:, None] * stride_kt + d[None, :], mask=live[:, None], other=0.0).to(tl.float32)
        s = tl.sum(k * q[None, :], axis=1) * sm_scale
        s = tl.where(live, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        corr = tl.exp(m - m_new)
        v = tl.load(v_ptr + t[:, None] * stride_vt + d[None, :], mask=live[:, None], other=0.0).to(tl.float32)
        acc = acc * corr + tl.sum(p[:, None] * v, axis=0)
        l = l * corr + tl.sum(p, axis=0)
        m = m_new
    tl.store(part_out + split * HEAD_DIM + d, acc / l)
    tl.store(part_lse + split, m + tl.log(l))


@triton.jit
def merge_split_kv_kernel(part_out, part_lse, Out, num_splits, HEAD_DIM: tl.constexpr, MAX_SPLITS: tl.constexpr):
    # combines the partial results of split_kv_decode_kernel with their log-sum-exps
    sp = tl.arange(0, MAX_SPLITS)
    d = tl.arange(0, HEAD_DIM)
    lse = tl.load(part_lse + sp, mask=sp < num_splits, other=float("-inf"))
    w = tl.exp(lse - tl.max(lse, axis=0))
    w = w / tl.sum(w, axis=0)
    parts = tl.load(part_out + sp[:, None] * HEAD_DIM + d[None, :], mask=(sp < num_splits)[:, None], other=0.0)
    out = tl.sum(parts * w[:, None], axis=0)
    tl.store(Out + d, out.to(Out.type.element_ty))


def attention(q, k, v, causal, sm_scale=None):
    B, H, N, D = q.shape
    sm_scale = sm_scale or 1.0 / math.sqrt(D)
    o = torch.empty_like(q)
    M = torch.empty((B, H, N), device=q.device, dtype=torch.float32)
    grid = (triton.cdiv(N, 128), B * H, 1)
    attn_fwd_kernel[grid](q, k, v, sm_scale, M, o, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3],
                          H, N, HEAD_DIM=D, BLOCK_M=128, BLOCK_N=64, STAGE=3 if causal else 1, num_warps=8,
                          num_stages=3)
    return o, M


if __name__ == "__main__":
    q, k, v = (torch.randn((2, 4, 1024, 64), device="cuda", dtype=torch.float16) for _ in range(3))
    out, _ = attention(q, k, v, causal=True)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out, ref, atol=2e-2, rtol=0)
