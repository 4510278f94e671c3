# Row sorts and top-k on triton.language.standard's own bitonic internals, as libraries that need
# a sort the public API lacks write them: a merge of two sorted halves (_bitonic_merge on a row
# whose halves run up and down), a sort with the direction chosen per row group
# (_bitonic_merge_hypercube on the [2] * n hypercube), and sort_impl's top-k.
import triton
import triton.language as tl
from triton.language.standard import _bitonic_merge, _bitonic_merge_hypercube, _log2, sort_impl

from ..language import check_block, program_row


@triton.jit
def merge_sorted_halves_kernel(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr, DESCENDING: tl.constexpr):
    # a and b are rows of BLOCK // 2 keys each, sorted ascending: b reversed after a is bitonic,
    # and the last stage of the network sorts it.
    tl.static_assert(check_block(BLOCK))
    row = program_row()
    half = tl.arange(0, BLOCK // 2)
    a = tl.sort(tl.load(a_ptr + row * (BLOCK // 2) + half))
    b = tl.sort(tl.load(b_ptr + row * (BLOCK // 2) + half), descending=True)
    both = tl.reshape(tl.join(a, b).trans(1, 0), [1, BLOCK])
    merged = _bitonic_merge(both, _log2(BLOCK), DESCENDING, _log2(BLOCK))
    tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), tl.reshape(merged, [BLOCK]))


@triton.jit
def _sort_cube(h, N_DIMS: tl.constexpr, ROW_DIMS: tl.constexpr):
    # Sorts each run of 2**ROW_DIMS elements of the cube; the final direction alternates with the
    # next index bit, so even runs come out ascending and odd ones descending.
    for stage in tl.static_range(1, ROW_DIMS + 1):
        h = _bitonic_merge_hypercube(h, stage, 2)
    return h


@triton.jit
def zigzag_sort_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    tl.static_assert(check_block(BLOCK) and ROWS >= 2)
    offs = tl.arange(0, ROWS)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :]
    x = tl.load(x_ptr + offs)
    n_dims: tl.constexpr = _log2(ROWS * BLOCK)
    h = _sort_cube(tl.reshape(x, [2] * n_dims), n_dims, _log2(BLOCK))
    tl.store(out_ptr + offs, tl.reshape(h, [ROWS, BLOCK]))


@triton.jit
def row_topk_kernel(x_ptr, vals_ptr, stride, K: tl.constexpr, BLOCK: tl.constexpr, LARGEST: tl.constexpr):
    row = program_row()
    x = tl.load(x_ptr + row * stride + tl.arange(0, BLOCK))[None, :]
    top = sort_impl(x, k=K, descending=LARGEST)
    tl.store(vals_ptr + row * K + tl.arange(0, K)[None, :], top)
