# The package's re-export of triton and tl.
import triton
import triton.language as tl
