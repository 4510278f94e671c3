# Limits and dtypes the kernels read, from torch when it is installed.
import triton
import triton.language as tl

try:
    import torch

    FP8_E4M3_MAX = torch.finfo(torch.float8_e4m3fn).max
    FP8_E5M2_MAX = torch.finfo(torch.float8_e5m2).max
    FP16_MAX = torch.finfo(torch.float16).max
    FP32_EPS = torch.finfo(torch.float32).eps
    INT8_MAX = torch.iinfo(torch.int8).max
    INT8_MIN = torch.iinfo(torch.int8).min
    TORCH_FP8 = torch.float8_e4m3fn
except ImportError:
    FP8_E4M3_MAX = 448.0
    FP8_E5M2_MAX = 57344.0
    FP16_MAX = 65504.0
    FP32_EPS = 1.1920928955078125e-07
    INT8_MAX = 127
    INT8_MIN = -128
    TORCH_FP8 = None

__all__ = ["triton", "tl", "FP8_E4M3_MAX", "FP8_E5M2_MAX", "FP16_MAX", "FP32_EPS", "INT8_MAX", "INT8_MIN"]
