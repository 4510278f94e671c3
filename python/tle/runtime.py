"""libtle_rt's C ABI (include/tle/Runtime/tle_rt.h) through ctypes: loading module images on a
device, looking kernels up and launching them with packed arguments on a CUDA stream."""
import ctypes
import os
import sys
import threading

from .errors import NoDriverError, RuntimeLibraryError

_STATUS = {1: "no driver", 2: "driver", 3: "metadata", 4: "invalid argument", 5: "other"}
_lock = threading.Lock()
_library = None


def _find_library(explicit=None):
    from .compiler import _installed
    for candidate in (explicit, os.environ.get("TLE_RT_LIBRARY"), _installed("libtle_rt")):
        if candidate and os.path.isfile(candidate):
            return candidate
    return "libtle_rt.so"  # the dynamic loader's search (LD_LIBRARY_PATH, ld.so.cache)


def _declare(lib):
    vp, sz, u = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint
    lib.tle_rt_last_error.restype = ctypes.c_char_p
    lib.tle_rt_device_count.argtypes = [ctypes.POINTER(ctypes.c_int)]
    lib.tle_rt_device_synchronize.argtypes = [ctypes.c_int]
    lib.tle_rt_module_cache_get.argtypes = [vp, ctypes.c_int, ctypes.c_char_p, sz, ctypes.POINTER(vp)]
    lib.tle_rt_module_unload.argtypes = [vp]
    lib.tle_rt_module_metadata.argtypes = [vp]
    lib.tle_rt_module_metadata.restype = ctypes.c_char_p
    lib.tle_rt_module_get_kernel.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(vp)]
    lib.tle_rt_kernel_release.argtypes = [vp]
    lib.tle_rt_kernel_num_params.argtypes = [vp]
    lib.tle_rt_kernel_num_params.restype = sz
    lib.tle_rt_launch.argtypes = [vp, u, u, u, vp, ctypes.POINTER(vp), sz]
    lib.tle_rt_stream_device.argtypes = [vp, ctypes.POINTER(ctypes.c_int)]
    return lib


def library(path=None):
    """The loaded libtle_rt (once per process): `path`, else $TLE_RT_LIBRARY, else the one
    installed beside this package, else the loader's search. Raises RuntimeLibraryError."""
    global _library
    with _lock:
        if _library is None:
            name = _find_library(path)
            try:
                _library = _declare(ctypes.CDLL(name))
            except OSError as e:
                raise RuntimeLibraryError("cannot load libtle_rt (%s): %s; set TLE_RT_LIBRARY" % (name, e))
        return _library


def check(status, what=""):
    """Raises the exception of a failed tle_rt_status with libtle_rt's message."""
    if status == 0:
        return
    message = (library().tle_rt_last_error() or b"").decode("utf-8", "replace")
    text = "%s%s" % (what + ": " if what and what not in message else "", message or _STATUS.get(status, "error"))
    raise (NoDriverError if status == 1 else RuntimeLibraryError)(text, status)


def device_count():
    """Number of CUDA devices (NoDriverError when the driver cannot be used)."""
    n = ctypes.c_int()
    check(library().tle_rt_device_count(ctypes.byref(n)))
    return n.value


def stream_device(stream):
    """The device ordinal CUstream `stream` (an int; 0 = legacy default stream) belongs to."""
    d = ctypes.c_int()
    check(library().tle_rt_stream_device(ctypes.c_void_p(stream or None), ctypes.byref(d)))
    return d.value


def synchronize(device=0):
    """Waits for all work on `device`'s primary context."""
    check(library().tle_rt_device_synchronize(device))


class LoadedKernel:
    """Kernel `name` of a module image loaded on `device` through libtle_rt's process-wide,
    content-keyed module cache (the same image loads once per device)."""

    def __init__(self, image, name, device, label="module"):
        lib = library()
        self._lib, self.device, self.name = lib, device, name
        self._module, self._kernel = ctypes.c_void_p(), ctypes.c_void_p()
        # PTX goes in NUL-terminated with size 0, a cubin with its size.
        data, size = (image, len(image)) if image[:4] == b"\x7fELF" else (image + b"\0", 0)
        check(lib.tle_rt_module_cache_get(None, device, data, size, ctypes.byref(self._module)),
              "loading %s on device %d" % (label, device))
        status = lib.tle_rt_module_get_kernel(self._module, name.encode(), ctypes.byref(self._kernel))
        if status != 0:
            lib.tle_rt_module_unload(self._module)
            self._module = None
            check(status, label)
        self.num_params = lib.tle_rt_kernel_num_params(self._kernel)

    def launch(self, grid, stream, arg_bytes):
        """Launches on grid (x, y, z) and CUstream `stream` (an int, 0 = legacy default stream)
        with one bytes object per runtime parameter (already packed); libtle_rt checks the count,
        divisibility and grid again and raises through `check`."""
        n = len(arg_bytes)
        # One buffer, one 8-byte aligned slot per argument (every parameter takes at most 8 bytes).
        values = ctypes.create_string_buffer(b"".join(b.ljust(8, b"\0") for b in arg_bytes), 8 * max(n, 1))
        base = ctypes.addressof(values)
        args = (ctypes.c_void_p * max(n, 1))(*range(base, base + 8 * n, 8))
        check(self._lib.tle_rt_launch(self._kernel, grid[0], grid[1], grid[2], ctypes.c_void_p(stream or None),
                                      args, n), "launching %s" % self.name)

    def __del__(self):
        lib = getattr(self, "_lib", None)
        if lib is None or sys.is_finalizing():  # at exit the process releases everything
            return
        if getattr(self, "_kernel", None):
            lib.tle_rt_kernel_release(self._kernel)
        if getattr(self, "_module", None):
            lib.tle_rt_module_unload(self._module)
