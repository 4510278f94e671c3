import triton
import triton.language as tl

from cycpkg import LATER


@triton.jit
def kernel(x_ptr):
    tl.store(x_ptr, LATER)
