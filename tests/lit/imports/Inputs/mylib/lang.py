# A small "language extension" module: program-id wrappers over tl.
from mylib.triton_utils import tl, triton


@triton.jit
def pid_x():
    return tl.program_id(0)


@triton.jit
def block_offsets(BLOCK: tl.constexpr):
    return pid_x() * BLOCK + tl.arange(0, BLOCK)
