# Triton and libdevice as the rest of the package imports them, whatever the Triton version.
import triton
import triton.language as tl

try:
    from triton.language.extra.cuda import libdevice
except ImportError:
    try:
        from triton.language.extra import libdevice
    except ImportError:
        from triton.language import math as libdevice

try:
    import torch

    HAS_TORCH = True
except ImportError:
    HAS_TORCH = False
