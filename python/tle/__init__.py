"""TLE's PyTorch bridge: compile .tle kernels with tlec (cached by content) and launch them through
libtle_rt as kernel[grid](*tensors_and_scalars, **constexprs) on torch tensors or any object with
__cuda_array_interface__ or __dlpack__, on torch's current stream. Imports without torch."""
from .arrays import ArrayView, array_view
from .compiler import Compiler, cache_key, default_cache_dir, find_tlec
from .errors import ArgumentError, CompileError, NoDriverError, RuntimeLibraryError, TleError
from .kernel import JITKernel, ModuleKernel, Specialization, jit, load
from .metadata import MetadataError, read_module_metadata
from .runtime import device_count, synchronize

__all__ = ["ArgumentError", "ArrayView", "CompileError", "Compiler", "JITKernel", "MetadataError",
           "ModuleKernel", "NoDriverError", "RuntimeLibraryError", "Specialization", "TleError",
           "array_view", "cache_key", "cdiv", "default_cache_dir", "device_count", "find_tlec", "jit",
           "load", "next_power_of_2", "read_module_metadata", "synchronize"]


def cdiv(a, b):
    """Ceiling division of integers, as triton.cdiv."""
    return -(-a // b)


def next_power_of_2(n):
    """The smallest power of two >= n (1 for n <= 1), as triton.next_power_of_2."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()
