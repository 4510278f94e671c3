"""Row softmax, tutorial style: a persistent kernel that keeps one row in registers and strides
over the rows with a software-pipelined tl.range; a two-pass online softmax for rows longer than
one tile; and the backward pass. The host code sizes the grid from the device's properties."""
import torch

import triton
import triton.language as tl
from triton.runtime import driver

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols,
                   BLOCK: tl.constexpr, num_stages: tl.constexpr):
    first_row = tl.program_id(0)
    n_progs = tl.num_programs(0)
    for r in tl.range(first_row, n_rows, n_progs, num_stages=num_stages):
        cols = tl.arange(0, BLOCK)
        valid = cols < n_cols
        vals = tl.load(in_ptr + r * in_stride + cols, mask=valid, other=-float("inf"))
        shifted = vals - tl.max(vals, axis=0)
        e = tl.exp(shifted)
        result = e / tl.sum(e, axis=0)
        tl.store(out_ptr + r * out_stride + cols, result, mask=valid)


@triton.jit
def online_softmax_kernel(out_ptr, in_ptr, row_stride, n_cols, TILE: tl.constexpr, LOG: tl.constexpr = False):
    # Pass 1 keeps a running maximum per lane and the sum rescaled to it; pass 2 writes.
    r = tl.program_id(0).to(tl.int64)
    src = in_ptr + r * row_stride
    dst = out_ptr + r * row_stride
    run_max = tl.full([TILE], value=float("-inf"), dtype=tl.float32)
    run_sum = tl.zeros([TILE], dtype=tl.float32)
    for c0 in range(0, n_cols, TILE):
        c = c0 + tl.arange(0, TILE)
        v = tl.load(src + c, mask=c < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(run_max, v)
        # a lane that has only seen -inf would compute exp(nan): keep it at zero
        run_sum = tl.where(m_new == float("-inf"), 0.0, run_sum * tl.exp(run_max - m_new) + tl.exp(v - m_new))
        run_max = m_new
    row_max = tl.max(run_max, 0)
    row_sum = tl.sum(run_sum * tl.exp(run_max - row_max), 0)
    for c0 in range(0, n_cols, TILE):
        c = c0 + tl.arange(0, TILE)
        keep = c < n_cols
        v = tl.load(src + c, mask=keep, other=float("-inf")).to(tl.float32)
        if LOG:
            o = v - row_max - tl.log(row_sum)
        else:
            o = tl.exp(v - row_max) / row_sum
        tl.store(dst + c, o.to(out_ptr.dtype.element_ty), mask=keep)


@triton.jit
def softmax_bwd_kernel(dx_ptr, dy_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    # dx = y * (dy - <dy, y>)
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    keep = c < n_cols
    g = tl.load(dy_ptr + r * stride + c, mask=keep, other=0.).to(tl.float32)
    p = tl.load(y_ptr + r * stride + c, mask=keep, other=0.).to(tl.float32)
    inner = tl.sum(g * p, axis=0)
    tl.store(dx_ptr + r * stride + c, p * (g - inner), mask=keep)


@triton.jit
def softmax_builtin_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    # the same row softmax through the library function tl.softmax
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + r * stride + c, mask=c < n_cols, other=-float("inf")).to(tl.float32)
    tl.store(out_ptr + r * stride + c, tl.softmax(x, ieee_rounding=False), mask=c < n_cols)


_props = driver.active.utils.get_device_properties(DEVICE.index)
_SMS = _props["multiprocessor_count"]
_REGS = _props["max_num_regs"]
_SMEM = _props["max_shared_mem"]


def softmax(x, num_warps=8):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    stages = 4 if _SMEM > 200_000 else 2
    y = torch.empty_like(x)
    compiled = softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), rows, cols, BLOCK=block,
                                     num_stages=stages, num_warps=num_warps, grid=(1, ))
    compiled._init_handles()
    per_sm = min(_REGS // max(compiled.n_regs * 32 * num_warps, 1), _SMEM // max(compiled.metadata.shared, 1))
    programs = min(_SMS * max(per_sm, 1), rows)
    compiled[(programs, 1, 1)](y, x, x.stride(0), y.stride(0), rows, cols, block, stages)
    return y


class Softmax(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x):
        y = softmax(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensors
        dx = torch.empty_like(y)
        softmax_bwd_kernel[(y.shape[0], )](dx, dy, y, y.stride(0), y.shape[1], BLOCK=triton.next_power_of_2(y.shape[1]))
        return dx


def long_softmax(x, log=False):
    out = torch.empty_like(x)
    online_softmax_kernel[(x.shape[0], )](out, x, x.stride(0), x.shape[1], TILE=1024, LOG=log)
    return out


if __name__ == "__main__":
    x = torch.randn(1000, 777, device=DEVICE)
    torch.testing.assert_close(softmax(x), torch.softmax(x, dim=1))
    torch.testing.assert_close(long_softmax(x, log=True), torch.log_softmax(x, dim=1))
