"""Element-wise math: rotary position embedding (cos / sin tables computed in the kernel),
libdevice functions, the tl / tl.math spellings of the fast and the correctly rounded functions,
NaN-aware clamping, fp64 code, and an integer hash built from umulhi, shifts and xors."""
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def rotary_kernel(x_ptr, pos_ptr, out_ptr, n_heads, stride_t, stride_h, base,
                  HEAD_DIM: tl.constexpr, BLOCK_H: tl.constexpr, INTERLEAVED: tl.constexpr):
    # x is [T, H, HEAD_DIM]; rotate pairs of features by pos * base^(-2i / HEAD_DIM)
    t = tl.program_id(0)
    pos = tl.load(pos_ptr + t).to(tl.float32)
    h = tl.arange(0, BLOCK_H)
    i = tl.arange(0, HEAD_DIM // 2)
    inv_freq = tl.exp2(-(2.0 * i.to(tl.float32) / HEAD_DIM) * tl.log2(base))
    # reduced to one turn first: sin / cos of large arguments lose accuracy
    angle = (pos * inv_freq) % 6.283185307179586
    cos = tl.cos(angle)[None, :]
    sin = tl.sin(angle)[None, :]
    hm = (h < n_heads)[:, None]
    row = x_ptr + t * stride_t + h[:, None] * stride_h
    if INTERLEAVED:
        # pairs (2i, 2i + 1): load both halves as one [H, D/2, 2] tile and split it
        pair = tl.load(row + tl.arange(0, HEAD_DIM)[None, :], mask=hm, other=0.0).to(tl.float32)
        x1, x2 = tl.split(tl.reshape(pair, (BLOCK_H, HEAD_DIM // 2, 2)))
        o = tl.join(x1 * cos - x2 * sin, x2 * cos + x1 * sin)
        o = tl.reshape(o, (BLOCK_H, HEAD_DIM))
        tl.store(out_ptr + t * stride_t + h[:, None] * stride_h + tl.arange(0, HEAD_DIM)[None, :],
                 o.to(out_ptr.dtype.element_ty), mask=hm)
    else:
        # pairs (i, i + D/2)
        x1 = tl.load(row + i[None, :], mask=hm, other=0.0).to(tl.float32)
        x2 = tl.load(row + HEAD_DIM // 2 + i[None, :], mask=hm, other=0.0).to(tl.float32)
        dst = out_ptr + t * stride_t + h[:, None] * stride_h
        tl.store(dst + i[None, :], (x1 * cos - x2 * sin).to(out_ptr.dtype.element_ty), mask=hm)
        tl.store(dst + HEAD_DIM // 2 + i[None, :], (x2 * cos + x1 * sin).to(out_ptr.dtype.element_ty), mask=hm)


@triton.jit
def libdevice_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=1.0)
    y = tl.load(y_ptr + i, mask=m, other=1.0)
    a = libdevice.pow(tl.abs(x), y) + libdevice.atan2(y, x)
    b = libdevice.trunc(x * 3.5) + libdevice.rint(y * 2.5) + libdevice.log1p(tl.abs(y))
    c = libdevice.tanh(x) * libdevice.exp(-libdevice.log(1.0 + x * x))
    d = libdevice.fmod(x, 0.75) + libdevice.hypot(x, y) + libdevice.expm1(y * 0.1)
    r = a + b + c + d
    r = tl.where(libdevice.isnan(r) | libdevice.isinf(r), 0.0, r)
    tl.store(out_ptr + i, r, mask=m)


@triton.jit
def precise_math_kernel(x_ptr, y_ptr, out_ptr, n, lo, hi, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=1.0)
    y = tl.load(y_ptr + i, mask=m, other=1.0)
    fast = tl.exp(x) + tl.log(tl.abs(y) + 1) + tl.math.exp2(y) + tl.math.log2(tl.abs(x) + 1) + tl.rsqrt(x * x + 1)
    exact = tl.sqrt_rn(x * x) + tl.div_rn(x, y) + tl.fdiv(x, y, ieee_rounding=True) + tl.sqrt(y * y)
    approx = tl.fdiv(x, y) + tl.math.rsqrt(y * y + 2.0)
    rounded = tl.floor(x) + tl.ceil(y) + tl.math.floor(y * 0.5)
    fused = tl.fma(x, y, fast) + tl.math.fma(exact, 0.5, approx)
    big = tl.maximum(fused, rounded, propagate_nan=tl.PropagateNan.ALL)
    small = tl.minimum(fused, rounded)
    out = tl.clamp(big - small, lo, hi, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr + i, out, mask=m)


@triton.jit
def fp64_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    tl.static_assert(x.dtype == tl.float64)
    y = tl.exp(x) / (1.0 + tl.sqrt(x * x)) + tl.sin(x) * tl.cos(x) - tl.erf(x)
    acc = tl.zeros([BLOCK], dtype=tl.float64) + y
    tl.store(out_ptr + i, acc + tl.sum(y, axis=0), mask=i < n)


@triton.jit
def hash_mix(h, k):
    # a murmur-style mixing step on uint32 words
    k = k * 0xCC9E2D51
    k = (k << 15) | (k >> 17)
    h = h ^ (k * 0x1B873593)
    h = (h << 13) | (h >> 19)
    return h * 5 + 0xE6546B64


@triton.jit
def integer_hash_kernel(keys_ptr, out_ptr, buckets_ptr, n, n_buckets, seed, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    k = tl.load(keys_ptr + i, mask=m, other=0)  # uint64 keys
    lo = (k & 0xFFFFFFFF).to(tl.uint32)
    hi = (k >> 32).to(tl.uint32)
    h = tl.full([BLOCK], 0, tl.uint32) + seed.to(tl.uint32)
    h = hash_mix(h, lo)
    h = hash_mix(h, hi)
    h ^= h >> 16
    h *= 0x85EBCA6B
    h ^= h >> 13
    # multiply-shift range reduction into [0, n_buckets)
    bucket = tl.umulhi(h, tl.full([BLOCK], 0, tl.uint32) + n_buckets.to(tl.uint32))
    tl.store(out_ptr + i, h, mask=m)
    # signed division and remainder truncate toward zero; 16-bit lanes stay 16-bit
    s = (h.to(tl.int32) // 7) % 5
    small = s.to(tl.int16) - (bucket % 3).to(tl.int16)
    tl.store(buckets_ptr + i, small.to(tl.uint16) ^ ~bucket.to(tl.uint16), mask=m)
