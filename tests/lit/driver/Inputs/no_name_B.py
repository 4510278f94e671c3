# A kernel whose module defines no B (tests/lit/driver/signature_name_B.tle).
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, V: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + V)
