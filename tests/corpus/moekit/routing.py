# Top-k softmax gating (one token per program: softmax over the experts, then the k largest
# weights, renormalised) and the per-expert token histogram used to align tokens to experts.
import triton
import triton.language as tl

from .utils import FP32_MIN, FP32_EPS, MAX_TOPK, masked_softmax
from moekit.utils import jit_helpers as jh


@triton.jit
def topk_softmax_kernel(
    logits_ptr, weights_ptr, ids_ptr, num_experts, stride,
    TOPK: tl.constexpr, BLOCK_E: tl.constexpr, RENORMALIZE: tl.constexpr,
):
    tl.static_assert(TOPK <= MAX_TOPK)
    row = jh.row_program()
    offs = tl.arange(0, BLOCK_E)
    mask = offs < num_experts
    logits = tl.load(logits_ptr + row * stride + offs, mask=mask, other=0.0).to(tl.float32)
    probs = masked_softmax(logits, mask)
    total = 0.0
    for k in tl.static_range(TOPK):
        best = tl.argmax(probs, axis=0)
        w = tl.max(probs, axis=0)
        tl.store(ids_ptr + row * TOPK + k, best.to(tl.int32))
        tl.store(weights_ptr + row * TOPK + k, w)
        total += w
        probs = tl.where(offs == best, FP32_MIN, probs)
    if RENORMALIZE:
        for k in tl.static_range(TOPK):
            w = tl.load(weights_ptr + row * TOPK + k)
            tl.store(weights_ptr + row * TOPK + k, w / (total + FP32_EPS))


@triton.jit
def expert_histogram_kernel(ids_ptr, counts_ptr, num_ids, num_experts, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < num_ids
    ids = tl.load(ids_ptr + offs, mask=mask, other=0)
    valid = mask & (ids < num_experts)
    tl.atomic_add(counts_ptr + ids, tl.full((BLOCK,), 1, tl.int32), mask=valid)
