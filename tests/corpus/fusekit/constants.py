# Numeric limits and dtypes, evaluated from torch.
import torch

from ._triton import tl, triton

FP16_MAX = torch.finfo(torch.float16).max
BF16_MAX = torch.finfo(torch.bfloat16).max
FP8_MAX = torch.finfo(torch.float8_e4m3fn).max
FP32_TINY = torch.finfo(torch.float32).tiny
ACC_DTYPE = torch.float32
DTYPE_NAMES = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}


@triton.constexpr_function
def finite_max(dtype):
    # the largest finite value of a storage dtype
    if dtype == tl.float16:
        return FP16_MAX
    if dtype == tl.bfloat16:
        return BF16_MAX
    if dtype == tl.float8e4nv:
        return FP8_MAX
    return torch.finfo(torch.float32).max


@triton.constexpr_function
def rows_per_program(n_cols, block):
    # small rows share a program
    return max(1, 4096 // block) if n_cols <= 1024 else 1
