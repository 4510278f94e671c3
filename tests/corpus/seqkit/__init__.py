# seqkit: sequence and row operations in the style of linear-attention and serving libraries:
# chunked scans over variable-length sequences (cu_seqlens, optional with `is None`), row
# argmax / top-k / sort, a bitonic argsort of its own, checksums, and tiled copies; a language
# module with program-id helpers and kernels made both with the decorator and with triton.jit(fn).
from .ops import scan, rows, tiles, argsort
