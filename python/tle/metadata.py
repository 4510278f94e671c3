"""The __tle_metadata document of a tlec module read from its bytes (a cubin's ELF symbol table or
the PTX global), without a driver; and the parameter types it spells (include/tle/Runtime/Metadata.h)."""
import json
import re
import struct

SYMBOL = "__tle_metadata"
_PTX_GLOBAL = re.compile(rb"__tle_metadata\[(\d+)\]\s*=\s*\{([0-9,\s]*)\}")

# Scalar parameter types: (struct format of the value as the kernel takes it, bytes).
SCALARS = {
    "i1": ("?", 1), "i8": ("b", 1), "i16": ("h", 2), "i32": ("i", 4), "i64": ("q", 8),
    "u8": ("B", 1), "u16": ("H", 2), "u32": ("I", 4), "u64": ("Q", 8),
    "fp16": ("e", 2), "bf16": ("H", 2), "fp32": ("f", 4), "fp64": ("d", 8),
}
INT_RANGES = {
    "i8": (-2**7, 2**7 - 1), "i16": (-2**15, 2**15 - 1), "i32": (-2**31, 2**31 - 1),
    "i64": (-2**63, 2**63 - 1), "u8": (0, 2**8 - 1), "u16": (0, 2**16 - 1),
    "u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1),
}


class MetadataError(ValueError):
    """The bytes are not a tlec module, or its __tle_metadata is missing or malformed."""


def _elf_symbol(img, name):
    """The bytes of symbol `name` in a 64-bit little-endian ELF image, or None."""
    if img[:4] != b"\x7fELF" or img[4] != 2 or img[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", img, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", img, 0x3A)

    def section(i):
        return shoff + i * shentsize

    for i in range(shnum):
        sh = section(i)
        if struct.unpack_from("<I", img, sh + 4)[0] != 2:  # SHT_SYMTAB
            continue
        link, = struct.unpack_from("<I", img, sh + 0x28)
        strtab, = struct.unpack_from("<Q", img, section(link) + 0x18)
        off, size = struct.unpack_from("<QQ", img, sh + 0x18)
        for e in range(off, off + size - 23, 24):
            st_name, = struct.unpack_from("<I", img, e)
            end = img.index(b"\0", strtab + st_name)
            if img[strtab + st_name:end].decode("utf-8", "replace") != name:
                continue
            shndx, = struct.unpack_from("<H", img, e + 6)
            value, sym_size = struct.unpack_from("<QQ", img, e + 8)
            if shndx == 0 or shndx >= shnum:
                return None
            sec = section(shndx)
            addr, sec_off = struct.unpack_from("<QQ", img, sec + 0x10)
            at = sec_off + (value - addr if value >= addr else value)
            return bytes(img[at:at + sym_size])
    return None


def read_module_metadata(image):
    """The parsed __tle_metadata (a dict: format, version, target, compiler, source_hash when
    recorded, kernels) of a cubin image or PTX text (bytes). Raises MetadataError when there is
    none or it does not parse."""
    raw = None
    if image[:4] == b"\x7fELF":
        try:
            raw = _elf_symbol(image, SYMBOL)
        except (struct.error, ValueError, IndexError) as e:
            raise MetadataError("unreadable ELF image: %s" % e)
    else:
        m = _PTX_GLOBAL.search(image)
        if m:
            raw = bytes(int(b) for b in m.group(2).split(b",") if b.strip())
    if raw is None:
        raise MetadataError("the module has no %s (was it compiled by tlec?)" % SYMBOL)
    try:
        doc = json.loads(raw.split(b"\0", 1)[0].decode("utf-8"))
    except ValueError as e:
        raise MetadataError("malformed %s: %s" % (SYMBOL, e))
    if not isinstance(doc, dict) or doc.get("format") != "tle-module" or not isinstance(doc.get("kernels"), list):
        raise MetadataError("%s is not a tle-module document" % SYMBOL)
    return doc


def kernel_metadata(doc, name=None):
    """The kernel entry called `name` of a module document (its only kernel when `name` is None
    or the module has one kernel). Raises MetadataError naming the kernels there are."""
    kernels = doc["kernels"]
    for k in kernels:
        if k.get("name") == name:
            return k
    if len(kernels) == 1:
        return kernels[0]
    raise MetadataError("the module has no kernel %r (kernels: %s)"
                        % (name, ", ".join(k.get("name", "?") for k in kernels)))


def pack_scalar(type_, value):
    """The bytes a scalar parameter of tlec type `type_` takes for Python `value` (bf16 rounded to
    nearest even from float32). Raises KeyError for an unknown type, struct.error when out of range."""
    fmt, _ = SCALARS[type_]
    if type_ == "bf16":
        bits, = struct.unpack("<I", struct.pack("<f", value))
        if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
            return struct.pack("<H", (bits >> 16) | 0x40)  # a quiet NaN
        return struct.pack("<H", ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF)
    return struct.pack("<" + fmt, value)
