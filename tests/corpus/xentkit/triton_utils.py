# The triton names the package uses, re-exported for its modules.
import triton
import triton.language as tl
from triton.language.standard import _log2, _sum_combine

__all__ = ["triton", "tl", "_log2", "_sum_combine"]
