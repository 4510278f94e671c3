# actkit: fused activation and quantization kernels in the layout of inference libraries: a
# re-export module (_triton), activation helpers, constants with a conditional torch import, and
# kernel modules under kernels/ with relative imports.
from . import activations
from .kernels.fused_act import silu_and_mul_kernel, gelu_and_mul_kernel
from .kernels.quant import *
