# xentkit: loss kernels (cross entropy with label smoothing and z-loss, KL divergence, JSD,
# log-softmax) laid out as fused-kernel libraries lay them out: a re-export module, a utils module
# with constants from torch.finfo and constexpr helpers, and ops/ modules with optional pointer
# parameters tested with `is None`.
from .ops.cross_entropy import cross_entropy_fwd_kernel, cross_entropy_bwd_kernel, logsumexp_kernel
from .ops.divergence import kl_div_kernel, jsd_kernel
from .ops.softmax import log_softmax_kernel, softmax_std_kernel
