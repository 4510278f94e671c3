# outer.mid.triton.kern: its relative import reaches its own package; `triton` is the language.
import triton
import triton.language as tl
from triton.language import core

from ._consts import OFFSET

get_int_dtype = triton.constexpr_function(core.get_int_dtype)


@triton.jit
def add_offset(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + tl.full([BLOCK], OFFSET, get_int_dtype(32, True)))
