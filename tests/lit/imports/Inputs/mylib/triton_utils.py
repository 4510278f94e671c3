# The package's one place that imports Triton: the other modules import tl and triton from here.
import triton
import triton.language as tl
