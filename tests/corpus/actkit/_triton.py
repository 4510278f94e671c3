# Triton, re-exported: the package's modules write `from ._triton import tl, triton`.
import triton
from triton import language as tl

__all__ = ["tl", "triton"]
