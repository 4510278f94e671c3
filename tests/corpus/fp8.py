"""FP8 kernels in the style of inference libraries: per-token dynamic quantization to e4m3 with a
saturating clamp, a bf16 -> e5m2 cast for gradients (round toward zero on request), and a
scaled FP8 GEMM that reads A as [M, K] and B as [N, K] (both K-contiguous, "TN") and multiplies
by the per-row and per-column scales in the epilogue."""
import torch

import triton
import triton.language as tl

FP8_E4M3_MAX = tl.constexpr(448.0)
FP8_E5M2_MAX: tl.constexpr = tl.constexpr(57344.0)


@triton.jit
def per_token_quant_fp8_kernel(x_ptr, q_ptr, scale_ptr, n_cols, stride_x, stride_q, eps,
                               BLOCK: tl.constexpr, FP8_MAX: tl.constexpr = FP8_E4M3_MAX):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=m, other=0.0).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x)), eps)
    scale = amax / FP8_MAX
    q = tl.clamp(x / scale, -FP8_MAX, FP8_MAX).to(q_ptr.dtype.element_ty)
    tl.store(q_ptr + row * stride_q + cols, q, mask=m)
    tl.store(scale_ptr + row, scale)


@triton.jit
def cast_to_e5m2_kernel(src_ptr, dst_ptr, back_ptr, n, BLOCK: tl.constexpr, RTZ: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(src_ptr + i, mask=m)
    if RTZ:
        y = x.to(tl.float8e5, fp_downcast_rounding="rtz")
    else:
        y = tl.cast(x, tl.float8e5)
    tl.store(dst_ptr + i, y, mask=m)
    # and back through e4m3 (saturating) to the source type
    z = y.to(tl.float8e4nv).to(x.dtype)
    tl.store(back_ptr + i, z, mask=m)


@triton.jit
def scaled_fp8_matmul_kernel(a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr, M, N, K,
                             stride_am, stride_bn, stride_cm,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             PROMOTE_EVERY: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None].to(tl.int64) * stride_am + rk[None, :]
    b_ptrs = b_ptr + rn[:, None].to(tl.int64) * stride_bn + rk[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k0), other=0.0)
        b = tl.load(b_ptrs, mask=(rn[:, None] < N) & (rk[None, :] < K - k0), other=0.0)
        if PROMOTE_EVERY > 0:
            acc = tl.dot(a, b.T, acc, max_num_imprecise_acc=PROMOTE_EVERY)
        else:
            acc = tl.dot(a, tl.trans(b), acc, out_dtype=tl.float32)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    sa = tl.load(a_scale_ptr + rm, mask=rm < M, other=1.0)
    sb = tl.load(b_scale_ptr + rn, mask=rn < N, other=1.0)
    out = acc * sa[:, None] * sb[None, :]
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], out.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def per_tensor_quant_e5m2_kernel(x_ptr, q_ptr, scale_ptr, n, BLOCK: tl.constexpr):
    # scale computed beforehand (amax / FP8_E5M2_MAX); quantize with saturation
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inv = 1.0 / tl.load(scale_ptr)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0).to(tl.float32)
    q = tl.clamp(x * inv, -FP8_E5M2_MAX, FP8_E5M2_MAX)
    tl.store(q_ptr + i, q.to(tl.float8e5), mask=i < n)


def quantize(x):
    M, N = x.shape
    q = torch.empty((M, N), device=x.device, dtype=torch.float8_e4m3fn)
    s = torch.empty((M, ), device=x.device, dtype=torch.float32)
    per_token_quant_fp8_kernel[(M, )](x, q, s, N, x.stride(0), q.stride(0), 1e-10, BLOCK=triton.next_power_of_2(N))
    return q, s
