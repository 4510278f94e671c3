# Limits of the routing math; torch supplies them when it is installed.
try:
    import torch

    FP32_MIN = torch.finfo(torch.float32).min
    FP32_EPS = torch.finfo(torch.float32).eps
except ImportError:
    FP32_MIN = -3.4028234663852886e38
    FP32_EPS = 1.1920928955078125e-07

MAX_TOPK = 8
__all__ = ["FP32_MIN", "FP32_EPS", "MAX_TOPK"]
