"""Serving-engine kernels in the style of vLLM: decode attention over a paged KV cache (a block
table maps each sequence's logical blocks to physical cache blocks; 64-bit stride annotations;
an fp8 cache dequantized when the cache's dtype says so), the sequence lookup of a packed batch
by binary search in a helper with a while loop, and a fused-MoE GEMM over tokens sorted by
expert with padding blocks."""
import torch

import triton
import triton.language as tl

FP8_DTYPE = torch.float8_e4m3fn


@triton.jit
def seq_of_token(starts_ptr, target, num_seqs, BLOCK_Q: tl.constexpr, COUNT_Q_BLOCKS: tl.constexpr):
    # the last sequence whose start (in tokens, or in q-blocks) is <= target
    lo: tl.int32 = 0
    hi = num_seqs
    while lo < hi:
        mid = (lo + hi) // 2
        start = tl.load(starts_ptr + mid)
        key = start // BLOCK_Q + mid if COUNT_Q_BLOCKS else start
        if key <= target:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@triton.jit
def paged_decode_attention_kernel(
        out_ptr, q_ptr, k_cache_ptr, v_cache_ptr, block_table_ptr, seq_lens_ptr, k_scale_ptr, v_scale_ptr,
        softmax_scale,
        Q_PER_KV: tl.constexpr,
        bt_stride: tl.int64,
        q_stride_tok: tl.int64,
        q_stride_head: tl.int64,
        o_stride_tok: tl.int64,
        o_stride_head: tl.int64,
        kc_stride_block: tl.int64,
        kc_stride_slot: tl.int64,
        kc_stride_head: tl.int64,
        vc_stride_block: tl.int64,
        vc_stride_slot: tl.int64,
        vc_stride_head: tl.int64,
        PAGE: tl.constexpr,
        HEAD_DIM: tl.constexpr,
        FILL_MASKED: tl.constexpr = False,
):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    kv_head = head // Q_PER_KV
    ctx_len = tl.load(seq_lens_ptr + seq)
    if ctx_len == 0:
        return
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + seq * q_stride_tok + head * q_stride_head + d).to(tl.float32)
    if k_cache_ptr.dtype.element_ty.is_fp8():
        k_scale = tl.load(k_scale_ptr)
        v_scale = tl.load(v_scale_ptr)
    else:
        k_scale = 1.0
        v_scale = 1.0
    run_max = tl.full([1], float("-inf"), dtype=tl.float32)
    run_sum = tl.full([1], 1.0, dtype=tl.float32)
    acc = tl.zeros([1, HEAD_DIM], dtype=tl.float32)
    slot = tl.arange(0, PAGE)
    for page in range(0, tl.cdiv(ctx_len, PAGE)):
        phys = tl.load(block_table_ptr + seq * bt_stride + page).to(tl.int64)
        tok = page * PAGE + slot
        live = tok < ctx_len
        # masked-off cache slots: zero-filled, or left to the load's default (other=None)
        fill = 0.0 if FILL_MASKED else None
        k = tl.load(k_cache_ptr + phys * kc_stride_block + kv_head * kc_stride_head + slot[:, None] * kc_stride_slot +
                    d[None, :], mask=live[:, None], other=fill)
        v = tl.load(v_cache_ptr + phys * vc_stride_block + kv_head * vc_stride_head + slot[:, None] * vc_stride_slot +
                    d[None, :], mask=live[:, None], other=fill)
        kf = k.to(tl.float32) * k_scale
        vf = v.to(tl.float32) * v_scale
        scores = tl.sum(kf * q[None, :], axis=1)[None, :] * softmax_scale
        scores = tl.where(live[None, :], scores, float("-inf"))
        new_max = tl.maximum(run_max, tl.max(scores, axis=1))
        p = tl.exp(scores - new_max[:, None])
        rescale = tl.exp(run_max - new_max)
        run_sum = run_sum * rescale + tl.sum(p, axis=1)
        acc = acc * rescale[:, None] + tl.sum(p[:, :, None] * vf[None, :, :], axis=1)
        run_max = new_max
    out = acc / run_sum[:, None]
    tl.store(out_ptr + seq * o_stride_tok + head * o_stride_head + d[None, :], out.to(out_ptr.dtype.element_ty))


@triton.jit
def packed_token_seq_ids_kernel(starts_ptr, seq_ids_ptr, num_tokens, num_seqs,
                                BLOCK_Q: tl.constexpr, BLOCK: tl.constexpr):
    # for each token of a packed batch, the sequence it belongs to (one binary search per token)
    pid = tl.program_id(0)
    for i in tl.static_range(BLOCK):
        tok = pid * BLOCK + i
        if tok < num_tokens:
            s = seq_of_token(starts_ptr, tok, num_seqs, BLOCK_Q, False)
            tl.store(seq_ids_ptr + tok, s)


@triton.jit
def fused_moe_kernel(x_ptr, w_ptr, out_ptr, gate_ptr, token_order_ptr, block_expert_ptr, n_padded_ptr,
                     N, K, n_slots, n_valid,
                     sx_tok, sx_k, sw_exp, sw_k, sw_n, so_slot, so_n,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
                     APPLY_GATE: tl.constexpr, TOP_K: tl.constexpr, OUT_DTYPE: tl.constexpr):
    # Rows are (token, choice) slots sorted by expert and padded so that each BM-row block has
    # one expert (block_expert[b], or -1 for a block of padding). x is [tokens, K], w is
    # [experts, K, N], out is [tokens * TOP_K, N].
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(n_slots, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GROUP * tiles_n
    row0 = (pid // per_group) * GROUP
    rows_here = min(tiles_m - row0, GROUP)
    tm = row0 + (pid % per_group) % rows_here
    tn = (pid % per_group) // rows_here
    if tm * BM >= tl.load(n_padded_ptr):
        return

    slots = tl.load(token_order_ptr + tm * BM + tl.arange(0, BM).to(tl.int64))
    real = slots < n_valid
    expert = tl.load(block_expert_ptr + tm).to(tl.int64)
    cols = tn * BN + tl.arange(0, BN)
    dst = out_ptr + so_slot * slots[:, None] + so_n * cols[None, :]
    dst_ok = real[:, None] & (cols[None, :] < N)
    if expert == -1:
        tl.store(dst, tl.zeros((BM, BN), dtype=OUT_DTYPE), mask=dst_ok)
        return

    wcols = cols.to(tl.int64) % N
    kk = tl.arange(0, BK)
    xp = x_ptr + (slots[:, None] // TOP_K) * sx_tok + kk[None, :] * sx_k
    wp = w_ptr + expert * sw_exp + kk[:, None] * sw_k + wcols[None, :] * sw_n
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        xa = tl.load(xp, mask=real[:, None] & (kk[None, :] < K - k0), other=0.0)
        wb = tl.load(wp, mask=kk[:, None] < K - k0, other=0.0)
        acc += tl.dot(xa, wb)
        xp += BK * sx_k
        wp += BK * sw_k
    if APPLY_GATE:
        acc *= tl.load(gate_ptr + slots, mask=real, other=0)[:, None]
    tl.store(dst, acc.to(OUT_DTYPE), mask=dst_ok)


def fused_moe(x, w, gates, token_order, block_expert, n_padded, top_k, block_m=64, block_n=64, block_k=32):
    n_slots = token_order.shape[0]
    E, K, N = w.shape
    out = torch.empty((x.shape[0] * top_k, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(n_slots, block_m) * triton.cdiv(N, block_n), )
    fused_moe_kernel[grid](x, w, out, gates, token_order, block_expert, n_padded, N, K, n_slots, x.shape[0] * top_k,
                           x.stride(0), x.stride(1), w.stride(0), w.stride(1), w.stride(2), out.stride(0),
                           out.stride(1), BM=block_m, BN=block_n, BK=block_k, GROUP=8, APPLY_GATE=gates is not None,
                           TOP_K=top_k, OUT_DTYPE=tl.bfloat16 if x.dtype == torch.bfloat16 else tl.float16)
    return out
