"""Atomics as libraries use them: a scatter-add for embedding gradients (relaxed, gpu scope), a
split-K GEMM whose programs add their partial products into C, global min / max of a tensor with
atomic_min / atomic_max on fp32 and int32, flag words updated with atomic_and / or / xor, and a
ticket counter that hands the last program of a grid the final reduction (acq_rel)."""
import torch

import triton
import triton.language as tl


@triton.jit
def embedding_bwd_scatter_kernel(grad_out_ptr, ids_ptr, grad_w_ptr, n_tokens, D, stride_g, stride_w,
                                 BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    tm = t < n_tokens
    ids = tl.load(ids_ptr + t, mask=tm, other=0).to(tl.int64)
    m = tm[:, None] & (d[None, :] < D)
    g = tl.load(grad_out_ptr + t[:, None] * stride_g + d[None, :], mask=m, other=0.0)
    tl.atomic_add(grad_w_ptr + ids[:, None] * stride_w + d[None, :], g.to(tl.float32), mask=m, sem="relaxed",
                  scope="gpu")


@triton.jit
def splitk_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    n_tiles_n = tl.cdiv(N, BLOCK_N)
    rm = (pid // n_tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % n_tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(pid_k * BLOCK_K, K, BLOCK_K * SPLIT_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.)
        b = tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if SPLIT_K == 1:
        tl.store(c_ptrs, acc, mask=mask)
    else:
        tl.atomic_add(c_ptrs, acc, mask=mask, sem="release")


@triton.jit
def global_minmax_kernel(x_ptr, fmin_ptr, fmax_ptr, imin_ptr, imax_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=0.0)
    tl.atomic_min(fmin_ptr, tl.min(tl.where(m, x, float("inf")), axis=0))
    tl.atomic_max(fmax_ptr, tl.max(tl.where(m, x, float("-inf")), axis=0))
    # the same per element, on integers rounded from x
    q = x.to(tl.int32)
    tl.atomic_min(imin_ptr + (i % 4), q, mask=m, sem="relaxed", scope="cta")
    tl.atomic_max(imax_ptr + (i % 4), q, mask=m)


@triton.jit
def flag_bits_kernel(words_ptr, set_ptr, clear_ptr, toggle_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    word = i // 32
    bit = (1 << (i % 32)).to(tl.uint32)
    s = tl.load(set_ptr + i, mask=m, other=0) != 0
    c = tl.load(clear_ptr + i, mask=m, other=0) != 0
    t = tl.load(toggle_ptr + i, mask=m, other=0) != 0
    tl.atomic_or(words_ptr + word, bit, mask=m & s, sem="relaxed")
    tl.atomic_and(words_ptr + word, ~bit, mask=m & c, sem="acq_rel", scope="gpu")
    old = tl.atomic_xor(words_ptr + word, bit, mask=m & t, scope="sys")
    tl.store(toggle_ptr + i, ((old & bit) != 0).to(tl.int8), mask=m & t)


@triton.jit
def last_block_sum_kernel(x_ptr, partial_ptr, counter_ptr, out_ptr, n, BLOCK: tl.constexpr,
                          MAX_PROGRAMS: tl.constexpr):
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + i, mask=i < n, other=0.0), axis=0)
    tl.store(partial_ptr + pid, s)
    ticket = tl.atomic_add(counter_ptr, 1, sem="acq_rel")
    if ticket == tl.num_programs(0) - 1:
        # every other program has published its partial sum
        j = tl.arange(0, MAX_PROGRAMS)
        parts = tl.load(partial_ptr + j, mask=j < tl.num_programs(0), other=0.0, volatile=True)
        tl.store(out_ptr, tl.sum(parts, axis=0))
        tl.atomic_xchg(counter_ptr, 0)


def embedding_backward(grad_out, ids, num_embeddings):
    T, D = grad_out.shape
    grad_w = torch.zeros((num_embeddings, D), device=grad_out.device, dtype=torch.float32)
    grid = (triton.cdiv(T, 32), triton.cdiv(D, 128))
    embedding_bwd_scatter_kernel[grid](grad_out, ids, grad_w, T, D, grad_out.stride(0), grad_w.stride(0),
                                       BLOCK_T=32, BLOCK_D=128)
    return grad_w
