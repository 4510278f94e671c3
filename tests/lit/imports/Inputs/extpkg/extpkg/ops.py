# The kernels of extpkg (tests/lit/imports/package_extension.tle).
import triton
import triton.language as tl

from extpkg import _ext


@triton.jit
def scale_kernel(x_ptr, y_ptr, s, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * s)


@triton.jit
def reads_ext(x_ptr):
    tl.store(x_ptr, _ext.SCALE)
