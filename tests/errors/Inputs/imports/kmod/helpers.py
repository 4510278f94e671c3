# Helpers of the import error tests: a @jit helper and host code.
import triton
import triton.language as tl


@triton.jit
def double(x):
    return x * 2


def host_fn(x):
    return x
