"""A launch's arguments checked against a compiled kernel's metadata (count, pointer-ness, dtypes,
integer ranges, divisibility promises) and packed as the kernel's parameters; grids and streams."""
import struct
import sys

from .arrays import array_view, is_array, is_torch_tensor
from .errors import ArgumentError
from .metadata import INT_RANGES, SCALARS, pack_scalar


def _where(kmeta, index, param):
    return "%s: argument %d (%r, %s)" % (kmeta["name"], index, param["name"], param["type"])


def pack_pointer(kmeta, index, param, value, view=None):
    """(bytes, ArrayView) of a pointer argument; ArgumentError unless `value` is an array of the
    parameter's dtype whose address keeps the divisibility promise. `view`: its ArrayView when
    already made."""
    if view is None:
        if not is_array(value):
            raise ArgumentError("%s takes a tensor but was given a %s" % (_where(kmeta, index, param), type(value).__name__))
        try:
            view = array_view(value)
        except TypeError as e:
            raise ArgumentError("%s: %s" % (_where(kmeta, index, param), e))
    if "*" + view.dtype != param["type"]:
        raise ArgumentError("%s takes a %s tensor but was given a %s tensor"
                            % (_where(kmeta, index, param), param["type"][1:], view.dtype))
    div = param.get("divisibility", 1)
    if div > 1 and view.ptr % div:
        raise ArgumentError("%s: address 0x%x is not a multiple of %d bytes, as the kernel was compiled to assume"
                            % (_where(kmeta, index, param), view.ptr, div))
    return struct.pack("<Q", view.ptr), view


def pack_scalar_arg(kmeta, index, param, value):
    """The bytes of a scalar argument; ArgumentError for a tensor, a non-number, an integer out of
    the type's range or not keeping the divisibility promise, or a float for an integer."""
    type_ = param["type"]
    if type_ in INT_RANGES and type(value) is int:  # the common case first
        lo, hi = INT_RANGES[type_]
        div = param.get("divisibility", 1)
        if lo <= value <= hi and (div <= 1 or value % div == 0):
            return pack_scalar(type_, value)
    where = _where(kmeta, index, param)
    if type_ not in SCALARS:
        raise ArgumentError("%s: the bridge cannot pass parameters of type %s" % (where, type_))
    if is_array(value):
        raise ArgumentError("%s is a scalar but was given a tensor" % where)
    if type_ == "i1":
        if not isinstance(value, (bool, int)) or value not in (0, 1):
            raise ArgumentError("%s takes a bool but was given %r" % (where, value))
        return struct.pack("<?", bool(value))
    if type_ in INT_RANGES:
        if isinstance(value, float) or not isinstance(value, int):
            raise ArgumentError("%s takes an integer but was given %r" % (where, value))
        lo, hi = INT_RANGES[type_]
        if not lo <= value <= hi:
            raise ArgumentError("%s: %d is outside %s's range [%d, %d]" % (where, value, type_, lo, hi))
        div = param.get("divisibility", 1)
        if div > 1 and value % div:
            raise ArgumentError("%s: %d is not a multiple of %d, as the kernel was compiled to assume"
                                % (where, value, div))
        return pack_scalar(type_, value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentError("%s takes a number but was given %r" % (where, value))
    return pack_scalar(type_, float(value))


def pack_arguments(kmeta, bound, views=None):
    """(list of bytes per runtime parameter in ABI order, list of ArrayViews) for `bound`
    {name: value}, checked against kernel metadata `kmeta`. `views`: {name: ArrayView} already
    made for some arguments."""
    packed, out_views = [], []
    for index, param in enumerate(kmeta.get("params", [])):
        name = param["name"]
        if name not in bound:
            raise ArgumentError("%s: the compiled kernel's parameter %r has no argument (host tensor "
                                "descriptors' parts are not passed by the bridge)" % (kmeta["name"], name))
        if param["type"][0] == "*":
            data, view = pack_pointer(kmeta, index, param, bound[name], views.get(name) if views else None)
            out_views.append(view)
        else:
            data = pack_scalar_arg(kmeta, index, param, bound[name])
        packed.append(data)
    return packed, out_views


def normalize_grid(grid, meta, name):
    """(x, y, z) from a grid: an int, a tuple/list of 1 to 3 ints, or a callable taking the meta
    dict (every argument by parameter name, the constexprs, num_warps, num_stages) and returning
    one of those. ArgumentError for anything else or a dimension below 1."""
    if callable(grid):
        grid = grid(meta)
    dims = (grid,) if isinstance(grid, int) else tuple(grid) if isinstance(grid, (tuple, list)) else None
    if dims is None or not 1 <= len(dims) <= 3:
        raise ArgumentError("%s: the grid must be an int or a tuple of 1 to 3 ints, not %r" % (name, grid))
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int) or d < 1:
            raise ArgumentError("%s: grid %r: every dimension must be an integer of at least 1" % (name, tuple(dims)))
    return tuple(dims) + (1,) * (3 - len(dims))


def launch_device(views, bound):
    """The device ordinal of the call's tensors (torch and DLPack say; None when none does).
    ArgumentError when they are on different devices."""
    devices = {v.device for v in views if v.device is not None}
    if len(devices) > 1:
        raise ArgumentError("the tensors are on different devices (%s)" % ", ".join(str(d) for d in sorted(devices)))
    return devices.pop() if devices else None


def stream_handle(stream, device, bound):
    """The CUstream to launch on, as an int: `stream` when given (an int, or an object with
    `cuda_stream` such as torch.cuda.Stream); else torch's current stream on `device` when a
    torch tensor is an argument; else 0, the legacy default stream."""
    if stream is not None:
        return int(getattr(stream, "cuda_stream", stream))
    torch = sys.modules.get("torch")
    if torch is not None and any(is_torch_tensor(v) for v in bound.values()):
        return torch.cuda.current_stream(device if device is not None else torch.cuda.current_device()).cuda_stream
    return 0
