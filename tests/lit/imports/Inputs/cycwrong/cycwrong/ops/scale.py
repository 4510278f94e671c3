# The kernel module of cycwrong (tests/lit/imports/import_cycle_try.tle, the failing case runs it).
import triton
import triton.language as tl

from cycwrong.config import HAS_EXT


@triton.jit
def scale_kernel(x_ptr, y_ptr, s, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * s + HAS_EXT)
