# Cross entropy over rows of logits, chunked along the vocabulary: forward with label smoothing,
# optional class weights and z-loss, backward written in place, and a row logsumexp.
from ..triton_utils import tl, triton
from ..utils import NEG_INF, LOG2E, LN2, online_lse_update
from .. import utils


@triton.jit
def cross_entropy_fwd_kernel(
    logits_ptr, labels_ptr, loss_ptr, lse_ptr, weight_ptr, n_cols, stride, ignore_index,
    label_smoothing, lse_square_scale, BLOCK: tl.constexpr, N_COLS_HINT: tl.constexpr,
):
    CHUNKS: tl.constexpr = utils.num_chunks(N_COLS_HINT, BLOCK)
    tl.static_assert(CHUNKS >= 1, f"{N_COLS_HINT} columns in blocks of {BLOCK}")
    row = tl.program_id(0).to(tl.int64)
    label = tl.load(labels_ptr + row)
    base = logits_ptr + row * stride
    if label == ignore_index:
        tl.store(loss_ptr + row, 0.0)
        return
    m = NEG_INF
    d = 0.0
    total = 0.0
    for c in range(0, n_cols, BLOCK):
        cols = c + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < n_cols, other=NEG_INF).to(tl.float32)
        m, d = online_lse_update(m, d, x)
        total += tl.sum(tl.where(cols < n_cols, x, 0.0), axis=0)
    lse = m + tl.log2(d) * LN2
    x_label = tl.load(base + label).to(tl.float32)
    loss = lse - x_label
    if label_smoothing > 0:
        smooth = lse - total / n_cols
        loss = loss * (1 - label_smoothing) + smooth * label_smoothing
    if weight_ptr is not None:
        loss = loss * tl.load(weight_ptr + label).to(tl.float32)
    loss += lse_square_scale * lse * lse
    tl.store(loss_ptr + row, loss)
    if lse_ptr is not None:
        tl.store(lse_ptr + row, lse)


@triton.jit
def cross_entropy_bwd_kernel(
    logits_ptr, labels_ptr, lse_ptr, grad_loss_ptr, n_cols, stride, ignore_index,
    label_smoothing, BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    label = tl.load(labels_ptr + row)
    base = logits_ptr + row * stride
    lse = tl.load(lse_ptr + row)
    g = tl.load(grad_loss_ptr) if label != ignore_index else 0.0
    for c in range(0, n_cols, BLOCK):
        cols = c + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(base + cols, mask=mask, other=0.0).to(tl.float32)
        p = tl.exp2((x - lse) * LOG2E)
        p = p - (1 - label_smoothing) * (cols == label) - label_smoothing / n_cols
        tl.store(base + cols, (p * g).to(logits_ptr.dtype.element_ty), mask=mask)


def _logsumexp(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = NEG_INF
    d = 0.0
    for c in range(0, n_cols, BLOCK):
        cols = c + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=NEG_INF).to(tl.float32)
        m, d = online_lse_update(m, d, x)
    tl.store(out_ptr + row, m + tl.log(d))


logsumexp_kernel = triton.jit(_logsumexp)
