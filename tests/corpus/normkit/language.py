# A small language extension: program-id wrappers and row helpers over tl.
from .triton_utils import tl, triton


@triton.jit
def row_id():
    return tl.program_id(0).to(tl.int64)


@triton.jit
def row_offsets(BLOCK_SIZE: tl.constexpr):
    return tl.arange(0, BLOCK_SIZE)


@triton.jit
def row_ptr(base, row, stride):
    return base + row * stride
