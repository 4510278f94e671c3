# triton.language.target_info, built into the compiler: Triton 3.6's compile-time questions about
# the target a kernel is compiled for, answered for the target given to the compiler (--arch:
# CUDA sm_90a or sm_80). Written for TLE from Triton's documented behaviour; names and arguments
# follow Triton's, so kernels that branch on them (triton_kernels' MXFP conversions) compile
# unchanged.
import triton
from triton.runtime import driver

__all__ = ["current_target", "is_cuda", "cuda_capability_geq", "is_hip", "is_hip_cdna3", "is_hip_cdna4"]


@triton.constexpr_function
def current_target():
    """The target compiled for: backend "cuda", arch 90 or 80, warp_size 32."""
    return driver.active.get_current_target()


@triton.constexpr_function
def is_cuda():
    """Whether the target is an NVIDIA GPU (always, for this compiler)."""
    return current_target().backend == "cuda"


@triton.constexpr_function
def cuda_capability_geq(major, minor=0):
    """Whether the target's compute capability is at least major.minor (sm_90a: 9.0)."""
    return current_target().backend == "cuda" and current_target().arch >= major * 10 + minor


@triton.constexpr_function
def is_hip():
    """Whether the target is an AMD GPU (never, for this compiler)."""
    return current_target().backend == "hip"


@triton.constexpr_function
def is_hip_cdna3():
    return False


@triton.constexpr_function
def is_hip_cdna4():
    return False
