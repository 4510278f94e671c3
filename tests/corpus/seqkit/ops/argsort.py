# Row argsort and top-k indices with a bitonic network of the library's own, as serving libraries
# write their sorts: the stages are @triton.jit helpers reached through `from triton.language import
# core`, the keys are compared as floats and swapped as integers of the width
# triton.language.standard's _get_int_dtype gives (Triton 3.6 takes core.get_int_dtype only through
# it inside a kernel), and the kernel is made with triton.jit(fn, do_not_specialize=[...]).
import triton
import triton.language as tl
from triton.language import core
from triton.language.standard import _get_int_dtype, _log2, zeros_like

from ..language import check_block, program_row


@triton.jit
def _halves(v, side, shape: core.constexpr, out_shape: core.constexpr):
    # Each element's partner's value (side 1) or its own (side 0), in every pair of the stage.
    y = core.reshape(v, shape)
    picked = tl.sum(y * side, 1)[:, None, :]
    return core.reshape(core.broadcast_to(picked, shape), out_shape).to(v.dtype)


@triton.jit
def _compare_and_swap(x, ids, flip, i: core.constexpr, n_dims: core.constexpr):
    shape: core.constexpr = [2**i, 2, 2**(n_dims - i - 1)]
    side = core.arange(0, 2)[None, :, None]
    left = _halves(x, 1 - side, shape, x.shape)
    right = _halves(x, side, shape, x.shape)
    left_ids = _halves(ids, 1 - side, shape, x.shape)
    right_ids = _halves(ids, side, shape, x.shape)
    idtype = _get_int_dtype(bitwidth=x.dtype.primitive_bitwidth, signed=True)
    ix = x.to(idtype, bitcast=True)
    swap = (left > right) != flip
    ix = ix ^ core.where(swap, left.to(idtype, bitcast=True) ^ right.to(idtype, bitcast=True), zeros_like(ix))
    ids = ids ^ core.where(swap, left_ids ^ right_ids, zeros_like(ids))
    return ix.to(x.dtype, bitcast=True), ids


@triton.jit
def _bitonic_argsort(x, ids, n_dims: core.constexpr, descending: core.constexpr):
    for stage in core.static_range(1, n_dims + 1):
        if stage < n_dims:
            # runs of 2**stage sorted up and down in turn, so that pairs of runs merge
            # (the shape is not bound to a constexpr name: Triton 3.6 rejects rebinding one)
            flip = core.reshape(core.broadcast_to(core.arange(0, 2)[None, :, None],
                                                  [2**(n_dims - 1 - stage), 2, 2**stage]), x.shape)
        else:
            flip = descending
        for i in core.static_range(stage):
            x, ids = _compare_and_swap(x, ids, flip, i + (n_dims - stage), n_dims)
    return x, ids


def _argsort_rows(x_ptr, vals_ptr, ids_ptr, stride, K: tl.constexpr, BLOCK: tl.constexpr,
                  DESCENDING: tl.constexpr):
    tl.static_assert(check_block(BLOCK) and K <= BLOCK, f"K={K} needs a row of at least K keys")
    row = program_row()
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols)
    vals, ids = _bitonic_argsort(x, cols, _log2(BLOCK), DESCENDING)
    keep = cols < K
    tl.store(vals_ptr + row * stride + cols, vals, mask=keep)
    tl.store(ids_ptr + row * stride + cols, ids, mask=keep)


argsort_rows_kernel = triton.jit(_argsort_rows, do_not_specialize=["stride"])
