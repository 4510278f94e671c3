#!/usr/bin/env python3
"""Writes small .npy test inputs and expected outputs without numpy (the GPU checks' helper).

Usage: write_npy.py DIR NAME:DTYPE:SHAPE:EXPR ...
  DTYPE  f2 (fp16), f4 (fp32) or i4 (int32); SHAPE like 128x64; EXPR a Python expression of the
  flat index i (e.g. "i % 1000 + 1", or a reference such as a sum over a range), evaluated for
  every element in row-major order.
The file holds the .npy format's magic, its header dict, then the raw little-endian data.
"""
import struct
import sys

FORMATS = {"f2": ("e", "<f2", float), "f4": ("f", "<f4", float), "i4": ("i", "<i4", int)}


def write(path, dtype, shape, values):
    fmt, descr, _ = FORMATS[dtype]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(tuple(shape)))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"  # data starts 64-byte aligned
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def main():
    out = sys.argv[1]
    for spec in sys.argv[2:]:
        name, dtype, shape, expr = spec.split(":", 3)
        dims = [int(d) for d in shape.split("x")]
        n = 1
        for d in dims:
            n *= d
        cast = FORMATS[dtype][2]
        code = compile(expr, spec, "eval")  # i is a global, so generator expressions see it too
        write(f"{out}/{name}.npy", dtype, dims, [cast(eval(code, {"i": i})) for i in range(n)])


if __name__ == "__main__":
    main()
