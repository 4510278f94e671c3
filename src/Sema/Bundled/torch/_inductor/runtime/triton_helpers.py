# torch._inductor.runtime.triton_helpers, built into the compiler: the device helpers that the
# Triton kernels PyTorch's Inductor generates call (triton_helpers.maximum, .welford, ...), so
# that those kernels compile where torch is not installed. Written for TLE from the helpers'
# semantics (torch's NaN-propagating min/max, Welford's online variance, first-index argmin /
# argmax); names and parameters follow torch's, so generated kernels compile unchanged.
import triton
import triton.language as tl
from triton.language.extra import libdevice

# `from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math`
math = tl.math


def set_driver_to_gpu():
    """Host-side driver selection in torch; nothing to do at compile time."""
    return None


def set_driver_to_cpu():
    """Host-side driver selection in torch; nothing to do at compile time."""
    return None


@triton.jit
def promote_to_tensor(x):
    """x as a tile (a scalar becomes a [1] tile of its dtype)."""
    return x + tl.zeros((1,), tl.int1)


@triton.jit
def is_floating(x):
    """Whether x (a tile or a scalar) has a floating-point dtype (a constexpr)."""
    return promote_to_tensor(x).dtype.is_floating()


@triton.jit
def div_floor_integer(a, b):
    """Python's floor division of integers (rounds toward minus infinity)."""
    quot = a // b
    rem = a % b
    return tl.where((rem != 0) & ((a < 0) != (b < 0)), quot - 1, quot)


@triton.jit
def remainder_integer(a, b):
    """Python's remainder of integers (the sign of the divisor)."""
    rem = a % b
    return tl.where((rem != 0) & ((a < 0) != (b < 0)), rem + b, rem)


@triton.jit
def _prod_accumulate(a, b):
    return a * b


@triton.jit
def prod(input, axis):
    """The product of input along axis."""
    return tl.reduce(input, axis, _prod_accumulate)


@triton.jit
def minimum(a, b):
    """The smaller of a and b elementwise; NaN wins, as torch.minimum."""
    take_a = a < b
    if is_floating(a):
        take_a = take_a | (a != a)
    return tl.where(take_a, a, b)


@triton.jit
def maximum(a, b):
    """The larger of a and b elementwise; NaN wins, as torch.maximum."""
    take_a = a > b
    if is_floating(a):
        take_a = take_a | (a != a)
    return tl.where(take_a, a, b)


@triton.jit
def min2(a, dim):
    """The NaN-propagating minimum of a along dim."""
    return tl.reduce(a, dim, minimum)


@triton.jit
def max2(a, dim):
    """The NaN-propagating maximum of a along dim."""
    return tl.reduce(a, dim, maximum)


@triton.jit
def _pick_with_index(take_a, a_value, a_index, b_value, b_index):
    """(a_value, a_index) where take_a (a is strictly better), a NaN a_value where b_value is not
    NaN, or equal values (two NaNs too) with the lower index; else (b_value, b_index)."""
    same = a_value == b_value
    if is_floating(a_value):
        a_nan = a_value != a_value
        b_nan = b_value != b_value
        take_a = take_a | (a_nan & ~b_nan)
        same = same | (a_nan & b_nan)
    take_a = take_a | (same & (a_index < b_index))
    return tl.where(take_a, a_value, b_value), tl.where(take_a, a_index, b_index)


@triton.jit
def minimum_with_index(a_value, a_index, b_value, b_index):
    """The smaller (value, index) pair: NaN wins, ties go to the lower index (torch.argmin)."""
    return _pick_with_index(a_value < b_value, a_value, a_index, b_value, b_index)


@triton.jit
def maximum_with_index(a_value, a_index, b_value, b_index):
    """The larger (value, index) pair: NaN wins, ties go to the lower index (torch.argmax)."""
    return _pick_with_index(a_value > b_value, a_value, a_index, b_value, b_index)


@triton.jit
def min_with_index(value, index, dim):
    """(min, its first index) of value along dim."""
    return tl.reduce((value, index), dim, minimum_with_index)


@triton.jit
def max_with_index(value, index, dim):
    """(max, its first index) of value along dim."""
    return tl.reduce((value, index), dim, maximum_with_index)


@triton.jit
def welford_reduce(value, mean, m2, weight, first_iteration):
    """One step of Welford's online mean / sum of squared deviations (m2) / count (weight),
    elementwise: the first iteration starts each accumulator from value."""
    if first_iteration:
        new_weight = tl.full(weight.shape, 1, weight.dtype)
        new_mean = value
        new_m2 = tl.zeros_like(m2)
    else:
        delta = value - mean
        new_weight = weight + 1
        new_mean = mean + delta / new_weight
        new_m2 = m2 + delta * (value - new_mean)
    return new_mean, new_m2, new_weight


@triton.jit
def welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    """Two Welford partials merged (Chan et al.'s parallel formula); empty partials are
    weight 0."""
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return (mean_1 + delta * w2_over_w, m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w, new_weight)


@triton.jit
def welford(mean, m2, weight, dim):
    """The Welford partials (mean, m2, weight) merged along dim."""
    return tl.reduce((mean, m2, weight), dim, welford_combine)


@triton.jit
def device_assert_then(cond, msg, r):
    """tl.device_assert(cond, msg), then r."""
    tl.device_assert(cond, msg)
    return r


@triton.jit
def randint64(seed, offset, low, high):
    """int64 random integers in [low, high) from two 32-bit Philox outputs."""
    r0, r1, r2, r3 = tl.randint4x(seed, offset)
    bits = r0.to(tl.uint64) | (r1.to(tl.uint64) << 32)
    span = (high - low).to(tl.uint64)
    return (bits % span).to(tl.int64) + low


@triton.jit
def _any_combine(a, b):
    return a | b


@triton.jit
def any(a, dim):
    """Whether any element of a along dim is nonzero."""
    return tl.reduce(a, dim, _any_combine)


@triton.jit
def online_softmax_combine(lhs_max, lhs_sum, rhs_max, rhs_sum):
    """Two online-softmax partials (running max, sum of exp(x - max)) merged."""
    out_max = maximum(lhs_max, rhs_max)
    lhs_scale = tl.where(out_max == float("-inf"), 1.0, tl.exp(lhs_max - out_max))
    rhs_scale = tl.where(out_max == float("-inf"), 1.0, tl.exp(rhs_max - out_max))
    return out_max, lhs_sum * lhs_scale + rhs_sum * rhs_scale
