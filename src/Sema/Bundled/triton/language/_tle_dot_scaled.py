# tl.dot_scaled, built into the compiler: the matrix product of two blocks in the OCP
# microscaling (MX) formats, emulated as Triton 3.6 emulates it on GPUs without native MX
# instructions (sm_90 and sm_80): each operand is decoded to bf16, multiplied by its scales, and
# the two are multiplied by tl.dot with fp32 accumulation. Written for TLE from Triton's
# documented semantics and the OCP Microscaling Formats (MX) v1.0 specification:
# - formats "e2m1" (fp4, two to a uint8: the first element in the low nibble), "e4m3", "e5m2"
#   (fp8, as tl.float8e4nv / tl.float8e5 or their uint8 bits), "bf16", "fp16";
# - scales [M, K // G] for lhs and [N, K // G] for rhs (not transposed), one per group of G
#   consecutive K elements: uint8 E8M0 (2 ** (s - 127); 255 is NaN, or +inf with fast_math) or
#   float8e4nv; None for no scaling;
# - lhs_k_pack / rhs_k_pack: e2m1 packed along K (the default), or along M / N.
import triton
import triton.language as tl


@triton.jit
def _e2m1_to_bf16(nib):
    """The values of fp4 e2m1 codes (int32 0..15: sign, two exponent bits, one mantissa bit):
    0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives, as bf16."""
    e = (nib >> 1) & 3
    m = (nib & 1).to(tl.float32)
    mag = tl.where(e == 0, m * 0.5, (1.0 + m * 0.5) * (1 << tl.maximum(e - 1, 0)).to(tl.float32))
    return tl.where((nib & 8) != 0, -mag, mag).to(tl.bfloat16)


@triton.jit
def _unpack_e2m1(x, AXIS: tl.constexpr):
    """uint8 x holding two e2m1 codes per byte along AXIS (0 or 1), as bf16 with that dim doubled:
    element 2i from the low nibble of byte i, 2i + 1 from the high."""
    b = x.to(tl.int32, bitcast=False) & 0xFF
    lo = _e2m1_to_bf16(b & 0xF)
    hi = _e2m1_to_bf16(b >> 4)
    both = tl.join(lo, hi)  # [R, C, 2]
    if AXIS == 1:
        return tl.reshape(both, (x.shape[0], 2 * x.shape[1]))
    return tl.reshape(tl.permute(both, (0, 2, 1)), (2 * x.shape[0], x.shape[1]))


@triton.jit
def _decode(x, FORMAT: tl.constexpr, PACK_AXIS: tl.constexpr):
    """The operand x in FORMAT as bf16 (fp16 stays fp16)."""
    tl.static_assert(FORMAT == "e2m1" or FORMAT == "e4m3" or FORMAT == "e5m2" or FORMAT == "bf16" or
                     FORMAT == "fp16", "dot_scaled(): a format is one of e2m1, e4m3, e5m2, bf16, fp16")
    if FORMAT == "e2m1":
        tl.static_assert(x.dtype == tl.uint8 or x.dtype == tl.int8,
                         "dot_scaled(): an e2m1 operand is uint8, two values to a byte")
        return _unpack_e2m1(x, PACK_AXIS)
    elif FORMAT == "e4m3":
        if x.dtype == tl.uint8 or x.dtype == tl.int8:
            x = x.to(tl.float8e4nv, bitcast=True)
        tl.static_assert(x.dtype == tl.float8e4nv, "dot_scaled(): an e4m3 operand is float8e4nv or uint8")
        return x.to(tl.bfloat16)
    elif FORMAT == "e5m2":
        if x.dtype == tl.uint8 or x.dtype == tl.int8:
            x = x.to(tl.float8e5, bitcast=True)
        tl.static_assert(x.dtype == tl.float8e5, "dot_scaled(): an e5m2 operand is float8e5 or uint8")
        return x.to(tl.bfloat16)
    elif FORMAT == "bf16":
        if x.dtype == tl.int16 or x.dtype == tl.uint16:
            x = x.to(tl.bfloat16, bitcast=True)
        tl.static_assert(x.dtype == tl.bfloat16, "dot_scaled(): a bf16 operand is bfloat16")
        return x
    else:
        if x.dtype == tl.int16 or x.dtype == tl.uint16:
            x = x.to(tl.float16, bitcast=True)
        tl.static_assert(x.dtype == tl.float16, "dot_scaled(): an fp16 operand is float16")
        return x


@triton.jit
def _scale_values(s, FAST_MATH: tl.constexpr):
    """Scales as bf16: E8M0 codes (uint8) 2 ** (s - 127), 255 NaN (+inf with fast_math); or
    float8e4nv scales' values."""
    if s.dtype == tl.float8e4nv:
        return s.to(tl.bfloat16)
    tl.static_assert(s.dtype == tl.uint8 or s.dtype == tl.int8,
                     "dot_scaled(): scales are uint8 (E8M0) or float8e4nv")
    b = s.to(tl.int32) & 0xFF
    v = (b << 7).to(tl.int16).to(tl.bfloat16, bitcast=True)
    if not FAST_MATH:
        v = tl.where(b == 255, float("nan"), v.to(tl.float32)).to(tl.bfloat16)
    return v


@triton.jit
def _apply_scales(v, s, FAST_MATH: tl.constexpr, K_AXIS: tl.constexpr):
    """v (bf16, K along K_AXIS) times its scales s ([rows, K // G], rows the other dim of v), each
    applied to G consecutive K elements."""
    sv = _scale_values(s, FAST_MATH)
    R: tl.constexpr = s.shape[0]
    NG: tl.constexpr = s.shape[1]
    K: tl.constexpr = v.shape[K_AXIS]
    tl.static_assert(R == v.shape[1 - K_AXIS] and K % NG == 0,
                     "dot_scaled(): a scale is [M, K // group] for lhs and [N, K // group] for rhs")
    G: tl.constexpr = K // NG
    if K_AXIS == 1:
        full = tl.reshape(tl.broadcast_to(sv[:, :, None], (R, NG, G)), (R, K))
    else:
        full = tl.reshape(tl.broadcast_to(tl.trans(sv)[:, None, :], (NG, G, R)), (K, R))
    return (v.to(tl.float32) * full.to(tl.float32)).to(v.dtype)


@triton.jit
def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False,
               lhs_k_pack=True, rhs_k_pack=True, out_dtype=tl.float32):
    """Triton's tl.dot_scaled: acc + (lhs * its scales) @ (rhs * its scales), lhs [M, K] and rhs
    [K, N] in their formats (e2m1 two to a byte along K, or along M / N without k_pack), the
    product in fp32 (out_dtype) from bf16 operands."""
    a = _decode(lhs, lhs_format, 1 if lhs_k_pack else 0)
    b = _decode(rhs, rhs_format, 0 if rhs_k_pack else 1)
    if lhs_scale is not None:
        a = _apply_scales(a, lhs_scale, fast_math, 1)
    if rhs_scale is not None:
        b = _apply_scales(b, rhs_scale, fast_math, 0)
    if a.dtype != b.dtype:  # bf16 with fp16: both bf16
        a = a.to(tl.bfloat16)
        b = b.to(tl.bfloat16)
    return tl.dot(a, b, acc, out_dtype=out_dtype)
