# Chunked prefix sums over (optionally variable-length) sequences.
import triton
import triton.language as tl
from triton.language.standard import _sum_combine

from ..language import check_block, chunk_label, program_row


@triton.jit
def chunk_cumsum_kernel(x_ptr, y_ptr, cu_seqlens_ptr, T, H: tl.constexpr, BT: tl.constexpr, REVERSE: tl.constexpr):
    tl.static_assert(check_block(BT), chunk_label("BT", BT) + " must be a power of two of at least 16")
    i_t = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = i_bh // H
    i_h = i_bh % H
    if cu_seqlens_ptr is not None:
        bos = tl.load(cu_seqlens_ptr + i_b).to(tl.int64)
        eos = tl.load(cu_seqlens_ptr + i_b + 1).to(tl.int64)
        seq_len = (eos - bos).to(tl.int32)
    else:
        bos = (i_b * T).to(tl.int64)
        seq_len = T
    offs = i_t * BT + tl.arange(0, BT)
    mask = offs < seq_len
    x = tl.load(x_ptr + (bos + offs) * H + i_h, mask=mask, other=0).to(tl.float32)
    y = tl.associative_scan(x, 0, _sum_combine, reverse=REVERSE)
    tl.store(y_ptr + (bos + offs) * H + i_h, y.to(y_ptr.dtype.element_ty), mask=mask)


def _reverse_cumsum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = program_row()
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    # reversed cumulative sum: flip, scan, flip back
    y = tl.flip(tl.cumsum(tl.flip(x, 0), 0), 0)
    tl.store(y_ptr + row * n + offs, y, mask=offs < n)


reverse_cumsum_kernel = triton.jit(_reverse_cumsum)


@triton.jit
def segment_sum_kernel(x_ptr, seg_ptr, out_ptr, n, BLOCK: tl.constexpr, NUM_SEGMENTS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    seg = tl.load(seg_ptr + offs, mask=mask, other=0)
    for s in tl.static_range(NUM_SEGMENTS):
        part = tl.reduce(tl.where(seg == s, x, 0.0), 0, _sum_combine)
        tl.atomic_add(out_ptr + s, part)
