# Writes each token's key and value into a paged cache at its slot (slot -1: a padding token),
# optionally scaled to fp8.
from ropekit._compat import tl, triton
from ropekit.ops import index as idx


@triton.jit
def reshape_and_cache_kernel(
    key_ptr, value_ptr, key_cache_ptr, value_cache_ptr, slot_mapping_ptr,
    key_stride, value_stride, block_stride, k_scale, v_scale,
    NUM_HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, FP8: tl.constexpr,
):
    tok = idx.token_id()
    slot = tl.load(slot_mapping_ptr + tok).to(tl.int64)
    if slot < 0:
        return
    block = slot // BLOCK_SIZE
    offset = slot % BLOCK_SIZE
    offs = tl.arange(0, NUM_HEADS * HEAD_DIM)
    k = tl.load(key_ptr + tok * key_stride + offs)
    v = tl.load(value_ptr + tok * value_stride + offs)
    dst = block * block_stride + offset * NUM_HEADS * HEAD_DIM + offs
    if FP8:
        tl.store(key_cache_ptr + dst, (k.to(tl.float32) / k_scale).to(key_cache_ptr.dtype.element_ty))
        tl.store(value_cache_ptr + dst, (v.to(tl.float32) / v_scale).to(value_cache_ptr.dtype.element_ty))
    else:
        tl.store(key_cache_ptr + dst, k)
        tl.store(value_cache_ptr + dst, v)
