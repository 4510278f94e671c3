# A kernel of selfpkg storing the package's Y.
import triton
import triton.language as tl
from . import Y


@triton.jit
def k(p):
    tl.store(p, Y)
