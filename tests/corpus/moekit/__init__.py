# moekit: mixture-of-experts routing kernels in the layout of MoE libraries: a utils package that
# re-exports its constants and @triton.jit helpers (`from .constants import *`), limits from
# torch.finfo behind `try: import torch`, and the routing kernels in routing.py.
from .routing import topk_softmax_kernel, expert_histogram_kernel
