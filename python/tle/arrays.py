"""Device arrays as the bridge sees them: a torch tensor, any object with __cuda_array_interface__,
or a DLPack producer, reduced to a device address, a dtype name of tlec's signatures and a device."""
import ctypes

# torch dtype spellings (str(tensor.dtype)) -> tlec signature type names.
_TORCH_DTYPES = {
    "torch.bool": "i1", "torch.int8": "i8", "torch.int16": "i16", "torch.int32": "i32",
    "torch.int64": "i64", "torch.uint8": "u8", "torch.uint16": "u16", "torch.uint32": "u32",
    "torch.uint64": "u64", "torch.float16": "fp16", "torch.bfloat16": "bf16",
    "torch.float32": "fp32", "torch.float64": "fp64", "torch.float8_e4m3fn": "fp8e4nv",
    "torch.float8_e5m2": "fp8e5",
}

# __cuda_array_interface__ typestr kinds and item sizes -> type names (NumPy's array interface).
_TYPESTR = {
    ("b", 1): "i1", ("i", 1): "i8", ("i", 2): "i16", ("i", 4): "i32", ("i", 8): "i64",
    ("u", 1): "u8", ("u", 2): "u16", ("u", 4): "u32", ("u", 8): "u64",
    ("f", 2): "fp16", ("f", 4): "fp32", ("f", 8): "fp64",
}

# DLPack DLDataType (code, bits) -> type names: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6.
_DLPACK = {
    (0, 8): "i8", (0, 16): "i16", (0, 32): "i32", (0, 64): "i64",
    (1, 8): "u8", (1, 16): "u16", (1, 32): "u32", (1, 64): "u64",
    (2, 16): "fp16", (2, 32): "fp32", (2, 64): "fp64", (4, 16): "bf16", (6, 8): "i1", (1, 1): "i1",
}
_DLPACK_CUDA_DEVICES = (2, 3, 13)  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged


class ArrayView:
    """What a launch needs of an array argument.

    ptr: the device address of element 0 (an int); dtype: the element type as tlec spells it
    ("fp32", "bf16", "i1", ...); device: the CUDA device ordinal, or None when the object does not
    say (__cuda_array_interface__); kind: "torch", "cuda_array_interface" or "dlpack"."""

    __slots__ = ("ptr", "dtype", "device", "kind")

    def __init__(self, ptr, dtype, device, kind):
        self.ptr, self.dtype, self.device, self.kind = ptr, dtype, device, kind

    def __repr__(self):
        return "ArrayView(ptr=0x%x, dtype=%s, device=%s, kind=%s)" % (self.ptr, self.dtype, self.device, self.kind)


def is_torch_tensor(obj):
    """True for a torch.Tensor (checked without importing torch)."""
    return type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr") and hasattr(obj, "dtype")


def is_array(obj):
    """True when `obj` is passed as a pointer argument (a tensor or an array-like object)."""
    return is_torch_tensor(obj) or hasattr(obj, "__cuda_array_interface__") or hasattr(obj, "__dlpack__")


def _from_torch(t):
    dtype = _TORCH_DTYPES.get(str(t.dtype))
    if dtype is None:
        raise TypeError("torch dtype %s has no tlec type" % t.dtype)
    if t.device.type != "cuda":
        raise TypeError("the tensor is on %s; kernels take CUDA tensors" % t.device)
    return ArrayView(t.data_ptr(), dtype, t.device.index or 0, "torch")


def _from_cai(obj):
    cai = obj.__cuda_array_interface__
    typestr = cai.get("typestr", "")
    if len(typestr) < 3 or typestr[0] == ">" or not typestr[2:].isdigit():
        raise TypeError("__cuda_array_interface__ typestr %r is not a little-endian scalar type" % typestr)
    dtype = _TYPESTR.get((typestr[1], int(typestr[2:])))
    if dtype is None:
        raise TypeError("__cuda_array_interface__ typestr %r has no tlec type" % typestr)
    if cai.get("mask") is not None:
        raise TypeError("masked arrays (__cuda_array_interface__ 'mask') are not supported")
    return ArrayView(int(cai["data"][0] or 0), dtype, None, "cuda_array_interface")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    """DLPack's DLTensor (dlpack.h), the head of a "dltensor" capsule's DLManagedTensor."""
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _capsule_pointer(capsule, name):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get(capsule, name)


def _from_dlpack(obj):
    capsule = obj.__dlpack__()
    ptr = _capsule_pointer(capsule, b"dltensor")
    t = DLTensor.from_address(ptr)
    if t.device.device_type not in _DLPACK_CUDA_DEVICES:
        raise TypeError("the DLPack tensor is on device type %d; kernels take CUDA memory" % t.device.device_type)
    dtype = _DLPACK.get((t.dtype.code, t.dtype.bits)) if t.dtype.lanes == 1 else None
    if dtype is None:
        raise TypeError("DLPack dtype (code %d, bits %d, lanes %d) has no tlec type"
                        % (t.dtype.code, t.dtype.bits, t.dtype.lanes))
    return ArrayView((t.data or 0) + t.byte_offset, dtype, t.device.device_id, "dlpack")


def array_view(obj):
    """The ArrayView of `obj` (torch first, then __cuda_array_interface__, then DLPack).
    Raises TypeError when `obj` is none of them or its dtype or device cannot be used."""
    if is_torch_tensor(obj):
        return _from_torch(obj)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cai(obj)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj)
    raise TypeError("%s is not a tensor (no __cuda_array_interface__ or __dlpack__)" % type(obj).__name__)
