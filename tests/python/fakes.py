"""Stand-ins for device arrays in tests without a GPU or torch: host buffers exposing
__cuda_array_interface__ or __dlpack__ (the driver test double takes host addresses as device memory)."""
import ctypes
import struct

_CTYPES = {"<f4": ctypes.c_float, "<f8": ctypes.c_double, "<i4": ctypes.c_int32, "<i8": ctypes.c_int64,
           "|i1": ctypes.c_int8, "|u1": ctypes.c_uint8, "<f2": ctypes.c_uint16, "<u2": ctypes.c_uint16,
           "|b1": ctypes.c_bool, "<i2": ctypes.c_int16}


class FakeArray:
    """`n` elements of `typestr` in a host buffer (16-byte aligned), seen from element `offset`."""

    def __init__(self, values, typestr="<f4", offset=0):
        ctype = _CTYPES[typestr]
        if typestr == "<f2":  # half values stored as their bits
            values = [struct.unpack("<H", struct.pack("<e", v))[0] for v in values]
        self.buf = (ctype * (len(values) + offset + 16))()
        self.base = ctypes.addressof(self.buf)
        pad = (-self.base) % 16 // ctypes.sizeof(ctype)
        self.start = pad + offset
        for i, v in enumerate(values):
            self.buf[self.start + i] = v
        self.n = len(values)
        self.__cuda_array_interface__ = {
            "shape": (len(values),), "typestr": typestr, "version": 3, "strides": None,
            "data": (self.base + self.start * ctypes.sizeof(ctype), False)}

    def values(self):
        raw = list(self.buf[self.start:self.start + self.n])
        if self.__cuda_array_interface__["typestr"] == "<f2":
            return [struct.unpack("<e", struct.pack("<H", v))[0] for v in raw]
        return raw


class FakeTorchTensor:
    """What the bridge reads of a torch.Tensor (its type's module starts with "torch"): dtype,
    device (type, index) and data_ptr(); no memory behind it."""

    __module__ = "torch.fake"

    class _Device:
        def __init__(self, type_, index):
            self.type, self.index = type_, index

        def __str__(self):
            return "%s:%s" % (self.type, self.index)

    def __init__(self, dtype, ptr=0x7f0000010000, device="cuda", index=0):
        self.dtype, self._ptr, self.device = "torch." + dtype, ptr, FakeTorchTensor._Device(device, index)

    def data_ptr(self):
        return self._ptr


class DLPackArray:
    """A host buffer exported only through __dlpack__ as a kDLCUDA tensor of DLPack dtype
    (code, bits) (the capsule's deleter is left null: the object owns the memory)."""

    def __init__(self, values, code=2, bits=32, device_type=2):
        from tle.arrays import DLTensor
        self.array = FakeArray(values, {(2, 32): "<f4", (0, 32): "<i4"}.get((code, bits), "<f4"))
        self.shape = (ctypes.c_int64 * 1)(len(values))
        self.tensor = DLTensor()
        self.tensor.data = self.array.__cuda_array_interface__["data"][0]
        self.tensor.device.device_type, self.tensor.device.device_id = device_type, 0
        self.tensor.ndim, self.tensor.shape = 1, self.shape
        self.tensor.dtype.code, self.tensor.dtype.bits, self.tensor.dtype.lanes = code, bits, 1
        # DLManagedTensor = {DLTensor dl_tensor; void *manager_ctx; void (*deleter)(...)}
        self.managed = (ctypes.c_byte * (ctypes.sizeof(DLTensor) + 16))()
        ctypes.memmove(self.managed, ctypes.addressof(self.tensor), ctypes.sizeof(DLTensor))

    def __dlpack__(self, stream=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor", None)

    def __dlpack_device__(self):
        return (2, 0)

    def values(self):
        return self.array.values()
