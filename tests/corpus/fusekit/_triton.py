# Re-exports of triton for the package's modules.
import triton
import triton.language as tl
from triton.language.extra import libdevice

__all__ = ["triton", "tl", "libdevice"]
