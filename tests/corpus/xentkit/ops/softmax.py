# Row softmax through triton.language.standard and log-softmax with a combine-function reduction.
from ..triton_utils import tl, triton, _log2, _sum_combine
from triton.language import standard as std


@triton.jit
def softmax_std_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    tl.static_assert(_log2(BLOCK) >= 4, f"BLOCK={BLOCK} is below 16")
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
    y = std.softmax(x, ieee_rounding=True)
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


@triton.jit
def log_softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    m = tl.reduce(x, 0, std._elementwise_max)
    e = tl.where(mask, tl.exp(x - m), 0.0)
    s = tl.reduce(e, 0, _sum_combine)
    tl.store(y_ptr + row * stride + cols, (x - m - tl.log(s)).to(y_ptr.dtype.element_ty), mask=mask)
