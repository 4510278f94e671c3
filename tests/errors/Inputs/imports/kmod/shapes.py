# A @jit helper with an error in its body (an arange whose length is not a power of two).
import triton
import triton.language as tl


@triton.jit
def bad_range(x):
    return x + tl.arange(0, 3)
