# A kernel of the namespace subpackage nspkg.details: a relative import and an absolute one
# through it.
import triton
import triton.language as tl

from ._helpers import twice
from nspkg.details._helpers import SCALE


@triton.jit
def scale_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % SCALE == 0)
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, twice(tl.load(x_ptr + offs)) * SCALE)
