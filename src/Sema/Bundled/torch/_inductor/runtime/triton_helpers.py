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
def exp(x, use_fast_math: tl.constexpr):
    """e^x: tl.math.exp with use_fast_math, else libdevice's (correctly rounded to 1 ulp)."""
    if use_fast_math:
        return math.exp(x)
    else:
        return libdevice.exp(x)


@triton.jit
def _maximum_strict(a, b):
    """maximum() that also orders -0.0 below +0.0."""
    take_a = (a > b) | ((a == b) & (libdevice.signbit(b) != 0))
    if is_floating(a):
        take_a = take_a | (a != a)
    return tl.where(take_a, a, b)


@triton.jit
def _online_max(lhs_max, rhs_max, strict_signed_zero: tl.constexpr):
    if strict_signed_zero:
        return _maximum_strict(lhs_max, rhs_max)
    else:
        return maximum(lhs_max, rhs_max)


@triton.jit
def online_softmax_reduce(lhs_max, lhs_sum, dim, use_fast_math: tl.constexpr,
                          strict_signed_zero: tl.constexpr = False):
    """Online-softmax partials (running max, sum of exp(x - max)) merged along dim: the max and
    the sum rescaled to it (a row whose max is -inf keeps its sum)."""
    if strict_signed_zero:
        out_max = tl.reduce(lhs_max, dim, _maximum_strict)
    else:
        out_max = max2(lhs_max, dim)
    out_max_keep = tl.expand_dims(out_max, dim)
    delta = tl.where(out_max_keep == float("-inf"), 0.0, lhs_max - out_max_keep)
    return out_max, tl.sum(lhs_sum * exp(delta, use_fast_math), dim)


@triton.jit
def online_softmax_combine(lhs_max, lhs_sum, rhs_max, use_fast_math: tl.constexpr,
                           strict_signed_zero: tl.constexpr = False):
    """The accumulator (lhs_max, lhs_sum) advanced by one new value rhs_max per element (its
    own sum is exp(0) = 1): the new max and both sums rescaled to it."""
    out_max = _online_max(lhs_max, rhs_max, strict_signed_zero)
    lhs_scale = tl.where(out_max == float("-inf"), 1.0, exp(lhs_max - out_max, use_fast_math))
    rhs_scale = tl.where(out_max == float("-inf"), 1.0, exp(rhs_max - out_max, use_fast_math))
    return out_max, lhs_sum * lhs_scale + rhs_scale


@triton.jit
def online_softmax_combine_with_sum(lhs_max, lhs_sum, rhs_max, rhs_sum, use_fast_math: tl.constexpr,
                                    strict_signed_zero: tl.constexpr = False):
    """online_softmax_combine of two partials, each with its own sum."""
    out_max = _online_max(lhs_max, rhs_max, strict_signed_zero)
    lhs_scale = tl.where(out_max == float("-inf"), 1.0, exp(lhs_max - out_max, use_fast_math))
    rhs_scale = tl.where(out_max == float("-inf"), 1.0, exp(rhs_max - out_max, use_fast_math))
    return out_max, lhs_sum * lhs_scale + rhs_sum * rhs_scale


@triton.jit
def select_one(x, mask, dim, keep_dims: tl.constexpr = False):
    """The element of x where mask holds, one per slice along dim, bit for bit (summed as the
    unsigned integers of x's width: -0.0 and NaN payloads survive)."""
    bits: tl.constexpr = tl.core.get_int_dtype(x.dtype.primitive_bitwidth, False)
    picked = tl.where(mask, x.to(bits, bitcast=True), 0).to(bits)
    return tl.sum(picked, dim, keep_dims=keep_dims).to(bits).to(x.dtype, bitcast=True)


@triton.jit
def _sort_key(x, descending: tl.constexpr):
    """uint64 keys in bits 31..62 whose ascending order is x's ascending order (descending's
    when `descending`; NaN above +inf, -0.0 equal to +0.0), for 1- to 32-bit dtypes."""
    tl.static_assert(x.dtype.primitive_bitwidth <= 32, "sort_with_index: values of at most 32 bits")
    if x.dtype.is_floating():
        x = tl.where(x != x, float("nan"), tl.where(x == 0, 0.0, x)).to(x.dtype)
        ux = x.to(tl.float32).to(tl.uint32, bitcast=True)
        key = tl.where((ux >> 31) != 0, ~ux, ux | 0x80000000)
    elif x.dtype.is_int_signed():
        key = x.to(tl.int32).to(tl.uint32, bitcast=True) ^ 0x80000000
    else:
        key = x.to(tl.uint32)
    if descending:
        key = ~key
    return key.to(tl.uint64) << 31


@triton.jit
def sort_with_index(x, idxs, rnumel, dim: tl.constexpr = None, stable: tl.constexpr = False,
                    descending: tl.constexpr = False):
    """x sorted along its last dim (the only one supported, as in torch), with idxs permuted
    alike; the elements whose idxs >= rnumel go last, equal values keep their order (stable in
    every case; torch's NaN sorts above +inf). Returns (values, idxs), the values bit for bit."""
    x, idxs = tl.broadcast(x, idxs)
    AXIS: tl.constexpr = len(x.shape) - 1
    tl.static_assert(dim is None or dim == AXIS, "sort_with_index sorts along the last dimension")
    N: tl.constexpr = x.shape[AXIS]
    pos = tl.arange(0, N)
    for _ in tl.static_range(AXIS):
        pos = pos[None]
    key = _sort_key(x, descending)
    if rnumel is not None:  # invalid elements last: bit 63 above every key
        key = tl.where(idxs < rnumel, key, key | (tl.full([], 1, tl.uint64) << 63))
    key = key | tl.broadcast_to(pos, x.shape).to(tl.uint64)  # ties in position order
    order = (tl.sort(key, AXIS) & 0x7FFFFFFF).to(tl.int32)
    return tl.gather(x, order, AXIS), tl.gather(idxs, order, AXIS)


@triton.jit
def bucketize_binary_search(values, boundaries_ptr, BOUNDARIES_SIZE, BOUNDARIES_UNDERLYING_NUMEL,
                            BOUNDARIES_STRIDE, boundary_indices, indexing_dtype, right, sorter_ptr,
                            SORTER_STRIDE, sorter_indices, BLOCK_SHAPE=None):
    """torch.bucketize / searchsorted of each value in its set of BOUNDARIES_SIZE sorted
    boundaries (starting at boundaries_ptr + boundary_indices, BOUNDARIES_STRIDE apart; through
    sorter_ptr's permutation when given): the index of the first boundary above the value (at
    or above with right=False), as indexing_dtype. BLOCK_SHAPE (some torch releases pass it)
    is the values' shape, unused."""
    low = tl.zeros(values.shape, dtype=indexing_dtype)
    high = tl.full(values.shape, BOUNDARIES_SIZE, dtype=indexing_dtype)
    span = BOUNDARIES_SIZE + 1
    while span > 1:
        mid = (high + low) // 2
        inside = ((mid * BOUNDARIES_STRIDE + boundary_indices) < BOUNDARIES_UNDERLYING_NUMEL) & (mid < BOUNDARIES_SIZE)
        if sorter_ptr is None:
            at = mid
        else:
            at = tl.load(sorter_ptr + sorter_indices + SORTER_STRIDE * mid, mask=inside, other=0)
        bound = tl.load(boundaries_ptr + boundary_indices + BOUNDARIES_STRIDE * at, mask=inside, other=0)
        if right:
            above = values >= bound
        else:
            above = values > bound
        low = tl.where(above & inside, mid + 1, low)
        high = tl.where(above, high, mid)
        span = (span + 1) // 2
    return low


@triton.jit
def pack_value_flag(value, flag, DTYPE_VALUE_AS_UINT: tl.constexpr, DTYPE_PACK: tl.constexpr):
    """value's bits above flag's in one DTYPE_PACK word (twice value's width)."""
    WIDTH: tl.constexpr = DTYPE_VALUE_AS_UINT.primitive_bitwidth
    return flag.to(DTYPE_PACK) | (value.to(DTYPE_VALUE_AS_UINT, bitcast=True).to(DTYPE_PACK) << WIDTH)


@triton.jit
def unpack_value(pack, DTYPE_VALUE: tl.constexpr, DTYPE_VALUE_AS_UINT: tl.constexpr):
    """The value of a pack_value_flag word, as DTYPE_VALUE."""
    WIDTH: tl.constexpr = DTYPE_VALUE_AS_UINT.primitive_bitwidth
    return (pack >> WIDTH).to(DTYPE_VALUE_AS_UINT).to(DTYPE_VALUE, bitcast=True)


@triton.jit
def unpack_flag(pack, DTYPE_FLAG: tl.constexpr):
    """The flag of a pack_value_flag word."""
    return pack.to(DTYPE_FLAG)


@triton.jit
def _lookback_step(prefix, value, flag, target, index, combine_fn):
    """One step of the look-back: block `target`'s value folded into the prefix (it is the
    prefix when target is the block just before), and the next block to read (none after an
    inclusive prefix, flag 2)."""
    if target == index - 1:
        prefix = value
    else:
        prefix = combine_fn(value, prefix)
    if flag == 2:
        target = -1
    else:
        target = target - 1
    return prefix, target


@triton.jit
def _inclusive_prefix(prefix, block_value, index, combine_fn):
    """The block's inclusive prefix: its value after the exclusive prefix of the blocks before."""
    inclusive = block_value
    if index > 0:
        inclusive = combine_fn(prefix, block_value)
    return inclusive


@triton.jit
def exclusive_scan_decoupled_lookback(scratch_base, block_value, index, combine_fn,
                                      DTYPE_VALUE_AS_UINT: tl.constexpr, DTYPE_PACK: tl.constexpr):
    """The exclusive scan by combine_fn of the scalar block_value over blocks 0..index-1
    (Merrill and Garland's single-pass scan with decoupled look-back): scratch_base[i] holds
    block i's (value, flag) in one word, flag 1 for its own value and 2 for its inclusive
    prefix; 0 (not yet written) is waited for. For values of at most 32 bits."""
    if index > 0:
        own = pack_value_flag(block_value, tl.full([], 1, DTYPE_VALUE_AS_UINT), DTYPE_VALUE_AS_UINT, DTYPE_PACK)
        tl.atomic_xchg(scratch_base + index, own, sem="relaxed")
    prefix = tl.zeros([], block_value.dtype)
    target = index - 1
    while target >= 0:
        flag = tl.full([], 0, DTYPE_VALUE_AS_UINT)
        pack = tl.full([], 0, DTYPE_PACK)
        while flag == 0:
            pack = tl.atomic_add(scratch_base + target, 0, sem="relaxed")
            flag = unpack_flag(pack, DTYPE_VALUE_AS_UINT)
        value = unpack_value(pack, block_value.dtype, DTYPE_VALUE_AS_UINT)
        prefix, target = _lookback_step(prefix, value, flag, target, index, combine_fn)
    inclusive = _inclusive_prefix(prefix, block_value, index, combine_fn)
    done = pack_value_flag(inclusive, tl.full([], 2, DTYPE_VALUE_AS_UINT), DTYPE_VALUE_AS_UINT, DTYPE_PACK)
    tl.atomic_xchg(scratch_base + index, done, sem="relaxed")
    return prefix


@triton.jit
def exclusive_scan_decoupled_lookback_64(scratch_base, block_value, index, combine_fn):
    """exclusive_scan_decoupled_lookback for 64-bit values: block i's uint64 scratch words
    3i (flag: 1 own value, 2 inclusive prefix, released after the value), 3i + 1 (its value)
    and 3i + 2 (its inclusive prefix)."""
    if index > 0:
        tl.store(scratch_base + 3 * index + 1, block_value.to(tl.uint64, bitcast=True))
        tl.debug_barrier()
        tl.atomic_xchg(scratch_base + 3 * index, tl.full([], 1, tl.uint64), sem="release")
    prefix = tl.zeros([], block_value.dtype)
    target = index - 1
    while target >= 0:
        flag = tl.full([], 0, tl.uint64)
        while flag == 0:
            flag = tl.atomic_add(scratch_base + 3 * target, 0, sem="acquire")
        value = tl.load(scratch_base + 3 * target + flag.to(tl.int32)).to(block_value.dtype, bitcast=True)
        prefix, target = _lookback_step(prefix, value, flag, target, index, combine_fn)
    inclusive = _inclusive_prefix(prefix, block_value, index, combine_fn)
    tl.store(scratch_base + 3 * index + 2, inclusive.to(tl.uint64, bitcast=True))
    tl.debug_barrier()
    tl.atomic_xchg(scratch_base + 3 * index, tl.full([], 2, tl.uint64), sem="release")
    return prefix


@triton.jit
def frexp(x):
    """(mantissa, exponent) with x = mantissa * 2^exponent and |mantissa| in [0.5, 1), as
    torch.frexp: the mantissa in x's dtype, the exponent int32; 0, inf and NaN give themselves
    and exponent 0. Subnormals are scaled into the normal range first."""
    if x.dtype == tl.float64:
        TINY: tl.constexpr = 2.2250738585072014e-308  # the smallest normal fp64
        sub = (tl.abs(x) < TINY) & (x != 0)
        bits = tl.where(sub, x * 18014398509481984.0, x).to(tl.uint64, bitcast=True)  # * 2^54
        field = ((bits >> 52) & 0x7FF).to(tl.int32)
        exponent = field - 1022 - tl.where(sub, 54, 0)
        keep = ~(tl.full([], 0x7FF, tl.uint64) << 52)  # sign and fraction
        mantissa = ((bits & keep) | (tl.full([], 1022, tl.uint64) << 52)).to(tl.float64, bitcast=True)
        special = (x == 0) | (field == 0x7FF)
        return tl.where(special, x, mantissa), tl.where(special, 0, exponent)
    else:
        f = x.to(tl.float32)
        TINY32: tl.constexpr = 1.1754943508222875e-38  # the smallest normal fp32
        sub = (tl.abs(f) < TINY32) & (f != 0)
        bits = tl.where(sub, f * 16777216.0, f).to(tl.uint32, bitcast=True)  # * 2^24
        field = ((bits >> 23) & 0xFF).to(tl.int32)
        exponent = field - 126 - tl.where(sub, 24, 0)
        mantissa = ((bits & 0x807FFFFF) | 0x3F000000).to(tl.float32, bitcast=True)
        special = (f == 0) | (field == 0xFF)
        return tl.where(special, f, mantissa).to(x.dtype), tl.where(special, 0, exponent)


@triton.jit
def x_grid_barrier(sem):
    """Waits until every program with this program's y and z ids has arrived (Inductor's
    cooperative reductions; all of them must be resident). sem: a uint32 counter per (y, z), 0 or
    0x80000000 before the first use; program 0 adds 0x80000000 - (num_programs(0) - 1) and the
    others 1, so its top bit flips once all have arrived, and it is ready for the next use."""
    tl.debug_barrier()
    expected = tl.num_programs(0).to(tl.uint32)
    if tl.program_id(0) == 0:
        arrive = tl.full([], 0x80000000, tl.uint32) - (expected - 1)
    else:
        arrive = tl.full([], 1, tl.uint32)
    old = tl.atomic_add(sem, arrive, sem="release")
    now = tl.atomic_add(sem, 0, sem="acquire")
    while ((old ^ now) & 0x80000000) == 0:
        now = tl.atomic_add(sem, 0, sem="acquire")
    tl.debug_barrier()
