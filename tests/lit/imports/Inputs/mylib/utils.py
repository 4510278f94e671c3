# Helpers and constants, with host-only code that kernels do not use (evaluated lazily).
from mylib.triton_utils import tl, triton
import torch

BLOCK = 8
SCALE: tl.constexpr = 2.0


@triton.jit
def twice(x):
    # SCALE is read in this module, whoever calls twice
    return x * SCALE


def empty_like(x):  # host code: a kernel cannot call it
    return torch.empty_like(x)


class Launcher:
    grid = lambda meta: (triton.cdiv(meta["n"], BLOCK),)
