# A package whose __init__ re-exports a kernel of a submodule (it imports the kernel's file).
from .ops.scale import scale_kernel

__version__ = "0.1"
