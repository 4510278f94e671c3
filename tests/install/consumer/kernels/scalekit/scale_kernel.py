# A kernel of a package: tl and triton from the package's re-export module (a relative import),
# the helper from a library on the include path.
from .triton_utils import tl, triton
from kutil import scaled


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, scaled(tl.load(x_ptr + offs, mask=mask)), mask=mask)
