"""LayerNorm forward and backward, tutorial style. The forward pass makes three sweeps over a row
(mean, variance, output). The backward pass computes dx per row and folds the row's dw / db
contributions into one of GROUP partial buffers under a spin lock (atomic_cas to take it,
atomic_xchg to release it and to mark the buffer initialised); a second kernel sums the buffers.
The host code wraps both in a torch.autograd.Function."""
import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def layer_norm_fwd_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, row_stride, n_cols, eps,
                          BLOCK: tl.constexpr):
    r = tl.program_id(0)
    x_ptr += r * row_stride
    y_ptr += r * row_stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + c, mask=c < n_cols, other=0.).to(tl.float32)
    mu = tl.sum(acc, axis=0) / n_cols
    sq = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        d = tl.load(x_ptr + c, mask=c < n_cols, other=0.).to(tl.float32) - mu
        d = tl.where(c < n_cols, d, 0.)
        sq += d * d
    inv_std = 1 / tl.sqrt(tl.sum(sq, axis=0) / n_cols + eps)
    tl.store(mean_ptr + r, mu)
    tl.store(rstd_ptr + r, inv_std)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        m = c < n_cols
        gamma = tl.load(w_ptr + c, mask=m)
        beta = tl.load(b_ptr + c, mask=m)
        v = tl.load(x_ptr + c, mask=m, other=0.).to(tl.float32)
        tl.store(y_ptr + c, (v - mu) * inv_std * gamma + beta, mask=m)


@triton.jit
def layer_norm_bwd_dx_kernel(dx_ptr, dy_ptr, dw_part, db_part, x_ptr, w_ptr, mean_ptr, rstd_ptr, locks,
                             row_stride, n_cols, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    base = r * row_stride
    xv = tl.load(x_ptr + base + c, mask=m, other=0).to(tl.float32)
    g = tl.load(dy_ptr + base + c, mask=m, other=0).to(tl.float32)
    gamma = tl.load(w_ptr + c, mask=m).to(tl.float32)
    mu = tl.load(mean_ptr + r)
    inv_std = tl.load(rstd_ptr + r)
    xhat = tl.where(m, (xv - mu) * inv_std, 0.)
    wg = tl.where(m, gamma * g, 0.)
    k1 = tl.sum(xhat * wg, axis=0) / n_cols
    k2 = tl.sum(wg, axis=0) / n_cols
    tl.store(dx_ptr + base + c, (wg - (xhat * k1 + k2)) * inv_std, mask=m)

    # rows r, r + GROUP, r + 2 GROUP, ... share partial buffer `slot`
    slot = r % GROUP
    lock = locks + slot
    initialised = locks + GROUP + slot
    pdw = dw_part + slot * n_cols + c
    pdb = db_part + slot * n_cols + c
    my_dw = (g * xhat).to(w_ptr.dtype.element_ty)
    my_db = g.to(w_ptr.dtype.element_ty)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(initialised) == 0:
        tl.atomic_xchg(initialised, 1)
    else:
        my_dw += tl.load(pdw, mask=m)
        my_db += tl.load(pdb, mask=m)
    tl.store(pdw, my_dw, mask=m)
    tl.store(pdb, my_db, mask=m)
    # every thread must have stored before the lock is given back
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def layer_norm_bwd_dwdb_kernel(dw_part, db_part, dw_ptr, db_ptr, n_parts, n_cols,
                               BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    sum_w = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    sum_b = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for r0 in range(0, n_parts, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = (r[:, None] < n_parts) & (c[None, :] < n_cols)
        off = r[:, None] * n_cols + c[None, :]
        sum_w += tl.load(dw_part + off, mask=m, other=0.)
        sum_b += tl.load(db_part + off, mask=m, other=0.)
    tl.store(dw_ptr + c, tl.sum(sum_w, axis=0), mask=c < n_cols)
    tl.store(db_ptr + c, tl.sum(sum_b, axis=0), mask=c < n_cols)


def _group_for(n_cols):
    for limit, group in ((1024, 256), (4096, 128), (8192, 96)):
        if n_cols <= limit:
            return group
    return 64


class LayerNormFn(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, weight, bias, eps=1e-5):
        x2 = x.reshape(-1, x.shape[-1])
        rows, cols = x2.shape
        block = min(65536 // x.element_size(), triton.next_power_of_2(cols))
        warps = min(max(block // 256, 1), 8)
        y = torch.empty_like(x2)
        mean = torch.empty(rows, dtype=torch.float32, device=x.device)
        rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
        layer_norm_fwd_kernel[(rows, )](x2, y, weight, bias, mean, rstd, x2.stride(0), cols, eps, BLOCK=block,
                                        num_warps=warps)
        ctx.save_for_backward(x2, weight, mean, rstd)
        ctx.block, ctx.warps = block, warps
        return y.view_as(x)

    @staticmethod
    def backward(ctx, dy):
        x2, w, mean, rstd = ctx.saved_tensors
        rows, cols = x2.shape
        group = _group_for(cols)
        locks = torch.zeros(2 * group, dtype=torch.int32, device=x2.device)
        dw_part = torch.zeros((group, cols), dtype=w.dtype, device=x2.device)
        db_part = torch.zeros_like(dw_part)
        dx = torch.empty_like(x2)
        layer_norm_bwd_dx_kernel[(rows, )](dx, dy.reshape(rows, cols), dw_part, db_part, x2, w, mean, rstd, locks,
                                           x2.stride(0), cols, GROUP=group, BLOCK=ctx.block, num_warps=ctx.warps)
        dw = torch.empty_like(w)
        db = torch.empty_like(w)
        layer_norm_bwd_dwdb_kernel[(triton.cdiv(cols, 128), )](dw_part, db_part, dw, db, min(group, rows), cols,
                                                               BLOCK_R=32, BLOCK_C=128)
        return dx.view_as(dy), dw, db, None


if __name__ == "__main__":
    x = torch.randn(512, 4096, device=DEVICE, dtype=torch.float16, requires_grad=True)
    w = torch.rand(4096, device=DEVICE, dtype=torch.float16, requires_grad=True)
    b = torch.rand(4096, device=DEVICE, dtype=torch.float16, requires_grad=True)
    y = LayerNormFn.apply(x, w, b)
    ref = torch.nn.functional.layer_norm(x, (4096, ), w, b)
    torch.testing.assert_close(y, ref, atol=1e-2, rtol=0)
