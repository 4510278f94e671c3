# The one place the package imports Triton; kernel modules import tl and triton from here.
import triton
import triton.language as tl

try:
    from triton.language.extra.libdevice import rsqrt as fast_rsqrt
except ImportError:
    from triton.language.math import rsqrt as fast_rsqrt
