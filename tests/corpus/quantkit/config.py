# Compile-time configuration helpers: constexpr functions the kernels call on their constexprs.
import triton
import triton.language as tl

from ._compat import FP8_E4M3_MAX, FP8_E5M2_MAX, INT8_MAX


@triton.constexpr_function
def qmax_of(dtype):
    # the largest magnitude a quantized dtype holds
    if dtype == tl.float8e4nv:
        return FP8_E4M3_MAX
    if dtype == tl.float8e5:
        return FP8_E5M2_MAX
    return float(INT8_MAX)


@triton.constexpr_function
def is_pow2(n):
    return n > 0 and (n & (n - 1)) == 0


@triton.constexpr_function
def groups_per_block(block, group):
    assert block % group == 0
    return block // group


def _storage_dtype(bits):
    return tl.dtype(f"uint{bits}")


storage_dtype = triton.constexpr_function(_storage_dtype)
