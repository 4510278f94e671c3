import triton
import triton.language as tl

from typecheck.config import OFFSET, SCALE


@triton.jit
def k(y_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(y_ptr + r, r * SCALE + OFFSET)
