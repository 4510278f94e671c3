# ropekit: rotary embeddings and paged KV-cache writes in the layout of inference-engine kernel
# packages: a compatibility module (_compat) that re-exports triton, tl and libdevice behind
# conditional imports, program-id and offset helpers in ops/index.py, kernel modules in ops/.
from .ops.rotary import rotary_embedding_kernel
from .ops.kv_cache import reshape_and_cache_kernel
