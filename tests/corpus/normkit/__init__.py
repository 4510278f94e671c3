# normkit: normalization kernels laid out as kernel libraries lay them out: a re-export module
# (triton_utils), helpers and constants (utils), a small language extension (language) and kernel
# modules under ops/ that reach them through relative and absolute imports.
from .ops.rms_norm import rms_norm_fwd_kernel, rms_norm_bwd_dx_kernel
from .ops.layer_norm import layer_norm_fwd_kernel

__all__ = ["rms_norm_fwd_kernel", "rms_norm_bwd_dx_kernel", "layer_norm_fwd_kernel"]
__version__ = "0.3.1"
