"""Sorting and selection inside a tile, as MoE routers and samplers do: sort a row, top-k by
sorting (value, index) pairs packed into one integer key, the expert histogram of a block of
routing decisions, a row permutation with tl.gather, an MoE router with tl.topk (launched as a
programmatic dependent) and a merge of two sorted runs with tl.bitonic_merge."""
import triton
import triton.language as tl


@triton.jit
def sort_rows_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr, DESCENDING: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    pad = float("-inf") if DESCENDING else float("inf")
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=pad)
    y = tl.sort(x, descending=DESCENDING)
    tl.store(out_ptr + row * stride + cols, y, mask=m)


@triton.jit
def _pack(values, idx):
    # fp32 bits made order-preserving as unsigned, index in the low 32 bits (inverted so that the
    # lowest index wins a tie when sorting in descending order)
    bits = values.to(tl.uint32, bitcast=True)
    flipped = tl.where((bits >> 31) != 0, ~bits, bits | 0x80000000)
    return (flipped.to(tl.uint64) << 32) | (~idx.to(tl.uint32)).to(tl.uint64)


@triton.jit
def topk_kernel(logits_ptr, val_ptr, idx_ptr, n, stride, K: tl.constexpr, BLOCK: tl.constexpr):
    tl.static_assert(K <= BLOCK, "K must fit in one block")
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + row * stride + cols, mask=cols < n, other=float("-inf"))
    keys = tl.sort(_pack(x, cols), dim=0, descending=True)
    top_idx = (~(keys & 0xFFFFFFFF).to(tl.uint32)).to(tl.int32)
    hi = (keys >> 32).to(tl.uint32)
    bits = tl.where((hi >> 31) != 0, hi & 0x7FFFFFFF, ~hi)
    top_val = bits.to(tl.float32, bitcast=True)
    keep = cols < K
    tl.store(val_ptr + row * K + cols, top_val, mask=keep)
    tl.store(idx_ptr + row * K + cols, top_idx, mask=keep)


@triton.jit
def expert_histogram_kernel(expert_ids_ptr, counts_ptr, n_tokens, NUM_EXPERTS: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ids = tl.load(expert_ids_ptr + i, mask=i < n_tokens, other=0)
    hist = tl.histogram(ids, NUM_EXPERTS, mask=i < n_tokens)
    tl.atomic_add(counts_ptr + tl.arange(0, NUM_EXPERTS), hist, sem="relaxed")


@triton.jit
def permute_rows_kernel(x_ptr, perm_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    # out[i, :] = x[perm[i], :] for one R x C tile held in registers
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    perm = tl.load(perm_ptr + r)
    idx = tl.broadcast_to(perm[:, None], (R, C))
    out = tl.gather(x, idx, axis=0)
    tl.store(out_ptr + r[:, None] * C + c[None, :], out)
    # and a lookup along the columns: the column order reversed
    rev = tl.broadcast_to((C - 1 - c)[None, :], (R, C))
    tl.store(out_ptr + R * C + r[:, None] * C + c[None, :], tl.gather(x, rev, 1))


@triton.jit
def gather_tokens_kernel(table_ptr, ids_ptr, out_ptr, V: tl.constexpr, D: tl.constexpr, T: tl.constexpr):
    # A small vocabulary table [V, D] kept in registers; out[t, :] = table[ids[t], :] with the
    # tensor-method spelling of gather.
    v = tl.arange(0, V)
    t = tl.arange(0, T)
    d = tl.arange(0, D)
    table = tl.load(table_ptr + v[:, None] * D + d[None, :])
    ids = tl.load(ids_ptr + t)
    rows = table.gather(tl.broadcast_to(ids[:, None], (T, D)), axis=0)
    tl.store(out_ptr + t[:, None] * D + d[None, :], rows)


@triton.jit
def router_topk_kernel(logits_ptr, val_ptr, capped_ptr, n, stride, cap, K: tl.constexpr, BLOCK: tl.constexpr):
    # An MoE router launched as a programmatic dependent of the kernel that writes the logits:
    # wait for it, read the row, then let the next kernel start while this one selects.
    tl.extra.cuda.gdc_wait()
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    base = tl.max_constancy(row * stride + tl.zeros([BLOCK], dtype=tl.int32), BLOCK)
    x = tl.load(logits_ptr + base + cols, mask=cols < n, other=float("-inf"))
    tl.extra.cuda.gdc_launch_dependents()
    top = tl.topk(x, K)
    k = tl.arange(0, K)
    out_off, k_b = tl.broadcast(row * K, k)
    tl.store(val_ptr + out_off + k_b, top)
    # does the row hold a logit above the cap? ([1, BLOCK] -> [1])
    over = tl.expand_dims(x > cap, (0,))
    tl.store(capped_ptr + row + tl.arange(0, 1), tl.reduce_or(over, 1).to(tl.int8))


@triton.jit
def merge_sorted_kernel(a_ptr, b_ptr, out_ptr, H: tl.constexpr):
    # two ascending runs of H values merged into one: `a` followed by `b` reversed is bitonic
    i = tl.arange(0, 2 * H)
    first = i < H
    va = tl.load(a_ptr + i, mask=first, other=0.0)
    vb = tl.load(b_ptr + (2 * H - 1 - i), mask=~first, other=0.0)
    tl.store(out_ptr + i, tl.bitonic_merge(tl.where(first, va, vb)))
