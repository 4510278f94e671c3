# Numeric limits of the quantized formats; torch supplies them when it is installed.
try:
    import torch

    FP8_E4M3_MAX = torch.finfo(torch.float8_e4m3fn).max
    INT8_MAX = torch.iinfo(torch.int8).max
except ImportError:
    FP8_E4M3_MAX = 448.0
    INT8_MAX = 127

FP8_MIN_SCALE = 1.0 / (FP8_E4M3_MAX * 512.0)
SQRT_2_OVER_PI = 0.7978845608028654
GELU_COEF = 0.044715
