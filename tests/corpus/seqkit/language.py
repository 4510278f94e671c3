# The package's small language extension: program-id helpers and compile-time checks.
import triton
import triton.language as tl


@triton.jit
def program_row():
    return tl.program_id(0).to(tl.int64)


def _check_block(block):
    return block >= 16 and (block & (block - 1)) == 0


check_block = triton.constexpr_function(_check_block)


@triton.constexpr_function
def chunk_label(name, chunk):
    return f"{name}[{chunk}]"
