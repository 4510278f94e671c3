import triton
import triton.language as tl

SCALE = 4


@triton.jit
def twice(x):
    return x * 2
