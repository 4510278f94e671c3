# A helper module next to the kernel file that imports it (found without -I: the file's own
# directory is searched when it is in no package). Not a lit test: lit runs .tle and .tir files.
import triton
import triton.language as tl

OFFSET = 0.5


@triton.jit
def add_offset(x):
    return x + OFFSET
