# A @jit helper and the constant it reads.
import triton

FACTOR = 3.0


@triton.jit
def scaled(x):
    return x * FACTOR
