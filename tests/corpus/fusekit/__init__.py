# fusekit: fused normalization and activation kernels laid out as fused-op libraries lay them
# out: a _triton re-export module, constants from torch.finfo and torch dtypes in a constants
# module, constexpr-function configuration, optional inputs (bias, residual, mask) as pointers
# tested with `is None`, and kernels made with the decorator and with triton.jit(fn).
from .kernels import norms, activations, elementwise
