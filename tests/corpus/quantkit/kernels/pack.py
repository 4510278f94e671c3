# int4 packing: two signed 4-bit values per byte (low nibble first), and the unpacking back.
from quantkit._compat import tl, triton
from quantkit.config import storage_dtype


@triton.jit
def pack_int4_kernel(x_ptr, packed_ptr, n_pairs, BLOCK: tl.constexpr, BITS: tl.constexpr):
    tl.static_assert(BITS == 8 or BITS == 16, f"unsupported storage width {BITS}")
    STORE: tl.constexpr = storage_dtype(BITS)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_pairs
    lo = tl.load(x_ptr + 2 * offs, mask=mask, other=0).to(tl.int32)
    hi = tl.load(x_ptr + 2 * offs + 1, mask=mask, other=0).to(tl.int32)
    packed = (lo & 0xF) | ((hi & 0xF) << 4)
    tl.store(packed_ptr + offs, packed.to(STORE), mask=mask)


@triton.jit
def unpack_int4_kernel(packed_ptr, out_ptr, n_pairs, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_pairs
    p = tl.load(packed_ptr + offs, mask=mask, other=0).to(tl.int32)
    lo = (p << 28) >> 28  # sign-extend the low nibble
    hi = (p << 24) >> 28
    both = tl.interleave(lo, hi).to(out_ptr.dtype.element_ty)
    offs2 = tl.program_id(0) * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + offs2, both, mask=offs2 < 2 * n_pairs)
