"""Shared pieces of the Python benchmark companions: loading an example's @triton.jit kernel
from its .tle source (every .tle is valid Python for Triton), and launching tlec cubins through
libtle_rt's C ABI (tle_rt.h) with ctypes on torch tensors."""
import ctypes
import importlib.machinery
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_example_kernel(example, name):
    """The @triton.jit function `name` of examples/<example>.tle, imported as a Python module."""
    path = os.path.join(ROOT, "examples", example + ".tle")
    loader = importlib.machinery.SourceFileLoader("tle_example_" + example, path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[loader.name] = mod
    loader.exec_module(mod)
    return getattr(mod, name)


def open_runtime(lib_path):
    """libtle_rt with the C ABI's argument types declared."""
    lib = ctypes.CDLL(lib_path)
    lib.tle_rt_last_error.restype = ctypes.c_char_p
    lib.tle_rt_module_load_file.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.tle_rt_module_get_kernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.tle_rt_launch.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p,
                                  ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    return lib


class TleKernel:
    """Kernel `name` of a cubin, launched on torch's current stream with ctypes argument values
    (pointers as c_uint64, scalars with their exact C type); errors raise RuntimeError with
    libtle_rt's message."""

    def __init__(self, lib, path, name):
        self.lib = lib
        mod = ctypes.c_void_p()
        if lib.tle_rt_module_load_file(0, path.encode(), ctypes.byref(mod)) != 0:
            raise RuntimeError(lib.tle_rt_last_error().decode())
        k = ctypes.c_void_p()
        if lib.tle_rt_module_get_kernel(mod, name.encode(), ctypes.byref(k)) != 0:
            raise RuntimeError(lib.tle_rt_last_error().decode())
        self.k = k

    def launch(self, grid, stream, vals):
        arr = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(x), ctypes.c_void_p) for x in vals])
        gx, gy, gz = (tuple(grid) + (1, 1))[:3]
        if self.lib.tle_rt_launch(self.k, gx, gy, gz, ctypes.c_void_p(stream), arr, len(vals)) != 0:
            raise RuntimeError(self.lib.tle_rt_last_error().decode())
