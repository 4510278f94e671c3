"""Loss kernels in the style of fused-loss libraries: cross entropy over a large vocabulary that
computes the loss and writes the gradient into the logits buffer in the same two passes (online
log-sum-exp, label smoothing, ignore_index with an early return, mean or sum reduction), and a
KL divergence with a log-space or probability target."""
import torch

import triton
import triton.language as tl

MAX_FUSED_SIZE = 65536 // 2


@triton.jit
def cross_entropy_kernel(logits_ptr, row_stride, labels_ptr, loss_ptr, vocab, n_counted, ignore_index,
                         smoothing: tl.constexpr, MEAN: tl.constexpr, BLOCK: tl.constexpr):
    # With smoothing s the target is (1 - s) on the label plus s / vocab everywhere:
    #   loss = lse - (1 - s) * x[label] - s * mean(x),   dloss/dx = softmax(x) - target
    row = tl.program_id(0).to(tl.int64)
    logits_ptr += row * row_stride
    label = tl.load(labels_ptr + row)
    if label == ignore_index:
        # no loss, and a zero gradient
        for c0 in tl.range(0, vocab, BLOCK):
            c = c0 + tl.arange(0, BLOCK)
            tl.store(logits_ptr + c, 0.0, mask=c < vocab)
        return

    # pass 1: log-sum-exp of the row, online, and the sum of the logits
    run_max = float("-inf")
    run_sum = 0.0
    x_sum = 0.0
    for c0 in tl.range(0, vocab, BLOCK, loop_unroll_factor=2):
        c = c0 + tl.arange(0, BLOCK)
        x = tl.load(logits_ptr + c, mask=c < vocab, other=float("-inf")).to(tl.float32)
        if smoothing > 0:
            x_sum += tl.sum(tl.where(c < vocab, x, 0.0))
        new_max = tl.maximum(run_max, tl.max(x))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(x - new_max))
        run_max = new_max
    lse = run_max + tl.log(run_sum)
    x_label = tl.load(logits_ptr + label).to(tl.float32)

    # pass 2: the gradient, in place of the logits, scaled for a mean
    scale = 1.0 / n_counted if MEAN else 1.0
    for c0 in tl.range(0, vocab, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        x = tl.load(logits_ptr + c, mask=c < vocab, other=float("-inf")).to(tl.float32)
        target = tl.where(c == label, 1.0 - smoothing, 0.0) + smoothing / vocab
        tl.store(logits_ptr + c, ((tl.exp(x - lse) - target) * scale).to(logits_ptr.dtype.element_ty),
                 mask=c < vocab)

    loss = lse - (1.0 - smoothing) * x_label
    if smoothing > 0:
        loss -= smoothing * x_sum / vocab
    tl.store(loss_ptr + row, loss * scale)


@triton.jit
def kl_div_kernel(y_pred_ptr, y_true_ptr, loss_ptr, n_cols, stride, eps,
                  LOG_TARGET: tl.constexpr, REDUCE_ROWS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    y_pred_ptr += row * stride
    y_true_ptr += row * stride
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        m = c < n_cols
        lp = tl.load(y_pred_ptr + c, mask=m, other=0.0).to(tl.float32)
        t = tl.load(y_true_ptr + c, mask=m, other=0.0).to(tl.float32)
        if not LOG_TARGET:
            part = t * (tl.log(tl.maximum(t, eps)) - lp)
        else:
            part = tl.exp(t) * (t - lp)
        if REDUCE_ROWS:
            total += part
        else:
            tl.store(loss_ptr + row * stride + c, part, mask=m)
    if REDUCE_ROWS:
        tl.store(loss_ptr + row, tl.sum(total, axis=0))


@triton.jit
def jsd_kernel(x_ptr, y_ptr, loss_ptr, dx_ptr, stride, n_cols, beta: tl.constexpr, BLOCK: tl.constexpr):
    # generalised Jensen-Shannon divergence between log-probabilities x (student) and y (teacher),
    # with its gradient with respect to x
    row = tl.program_id(0).to(tl.int64)
    x_ptr += row * stride
    y_ptr += row * stride
    dx_ptr += row * stride
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        m = c < n_cols
        x = tl.load(x_ptr + c, mask=m, other=float("-inf")).cast(tl.float32)
        y = tl.load(y_ptr + c, mask=m, other=float("-inf")).cast(tl.float32)
        q = tl.exp(x)
        p = tl.exp(y)
        mix = beta * p + (1 - beta) * q
        log_mix = tl.log(mix)
        loss = beta * p * y + (1 - beta) * q * x - mix * log_mix
        dx = (1 - beta) * q * (x - log_mix)
        tl.store(loss_ptr + row * stride + c, tl.where(m, loss, 0.0), mask=m)
        tl.store(dx_ptr + c, dx, mask=m)


def cross_entropy_forward(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    BT, V = logits.shape
    BLOCK = min(MAX_FUSED_SIZE, triton.next_power_of_2(V))
    loss = torch.zeros(BT, dtype=torch.float32, device=logits.device)
    n_counted = (target != ignore_index).sum().item()
    cross_entropy_kernel[(BT, )](logits, logits.stride(-2), target, loss, V, n_counted, ignore_index,
                                 smoothing=label_smoothing, MEAN=reduction == "mean", BLOCK=BLOCK, num_warps=32)
    return loss.sum() if reduction != "none" else loss, logits
