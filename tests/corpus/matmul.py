"""GEMM kernels as a tutorial builds them: C = A @ B with fp32 accumulation, output tiles
visited in groups of rows so that neighbouring programs share A and B in L2, block sizes chosen
by @triton.autotune, an optional fused activation; a persistent version walking the tiles with a
grid-stride tl.range; and one that remaps a 2-D grid with tl.swizzle2d."""
import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


def _configs():
    out = []
    for bm, bn, bk, stages, warps in [(128, 256, 64, 3, 8), (128, 128, 32, 4, 4), (64, 128, 32, 4, 4),
                                      (64, 64, 64, 3, 4), (32, 64, 32, 5, 2)]:
        out.append(triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP": 8}, num_stages=stages, num_warps=warps))
    return out


@triton.jit
def leaky_relu(v, slope=0.01):
    return tl.where(v >= 0, v, v * slope)


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
                  ACTIVATION: tl.constexpr):
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    # GROUP rows of tiles form a group, walked column by column
    per_group = GROUP * tiles_n
    group = pid // per_group
    row0 = group * GROUP
    rows_here = min(tiles_m - row0, GROUP)
    tm = row0 + (pid % per_group) % rows_here
    tn = (pid % per_group) // rows_here
    tl.assume(tm >= 0)
    tl.assume(tn >= 0)
    tl.assume(s_am > 0)
    tl.assume(s_bn > 0)

    rm = (tm * BM + tl.arange(0, BM)) % M
    rn = (tn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    pa = a_ptr + rm[:, None] * s_am + rk[None, :] * s_ak
    pb = b_ptr + rk[:, None] * s_bk + rn[None, :] * s_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        left = K - kt * BK
        a = tl.load(pa, mask=rk[None, :] < left, other=0.0)
        b = tl.load(pb, mask=rk[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc)
        pa += BK * s_ak
        pb += BK * s_bk
    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    out = acc.to(tl.float16)
    om = tm * BM + tl.arange(0, BM)
    on = tn * BN + tl.arange(0, BN)
    tl.store(c_ptr + om[:, None] * s_cm + on[None, :] * s_cn, out, mask=(om[:, None] < M) & (on[None, :] < N))


@triton.jit
def tile_coords(t, per_group, tiles_m, GROUP):
    row0 = (t // per_group) * GROUP
    rows_here = min(tiles_m - row0, GROUP)
    return row0 + t % rows_here, (t % per_group) // rows_here


@triton.jit
def matmul_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                             s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                             GROUP: tl.constexpr, NUM_SMS: tl.constexpr):
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    k_steps = tl.cdiv(K, BK)
    per_group = GROUP * tiles_n
    kk = tl.arange(0, BK)
    for t in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_SMS, flatten=True, warp_specialize=False):
        tm, tn = tile_coords(t, per_group, tiles_m, GROUP)
        rm = tm * BM + tl.arange(0, BM)
        rn = tn * BN + tl.arange(0, BN)
        # clamp out-of-range rows and columns to 0 instead of masking the loads
        rm_safe = tl.max_contiguous(tl.multiple_of(tl.where(rm < M, rm, 0), BM), BM)
        rn_safe = tl.max_contiguous(tl.multiple_of(tl.where(rn < N, rn, 0), BN), BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ks in range(k_steps):
            k = ks * BK + kk
            a = tl.load(a_ptr + rm_safe[:, None] * s_am + k[None, :] * s_ak, mask=kk[None, :] < K - ks * BK, other=0.0)
            b = tl.load(b_ptr + k[:, None] * s_bk + rn_safe[None, :] * s_bn, mask=kk[:, None] < K - ks * BK, other=0.0)
            acc = tl.dot(a, b, acc)
        ok = (rm[:, None] < M) & (rn[None, :] < N)
        tl.store(c_ptr + rm[:, None] * s_cm + rn[None, :] * s_cn, acc.to(c_ptr.dtype.element_ty), mask=ok)


@triton.jit
def matmul_swizzle_kernel(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    # 2-D grid remapped by tl.swizzle2d; bf16 operands, the fp32 result stored as is.
    i, j = tl.swizzle2d(tl.program_id(0), tl.program_id(1), tl.num_programs(0), tl.num_programs(1), GROUP)
    rm = i * BM + tl.arange(0, BM)
    rn = j * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    pa = a_ptr + (rm[:, None] * s_am + rk[None, :] * s_ak)
    pb = b_ptr + (rk[:, None] * s_bk + rn[None, :] * s_bn)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(pa, mask=(rm[:, None] < M) & (rk[None, :] < K - k0), other=0.)
        b = tl.load(pb, mask=(rk[:, None] < K - k0) & (rn[None, :] < N), other=0.)
        acc += tl.dot(a, b, out_dtype=tl.float32)
        pa += BK * s_ak
        pb += BK * s_bk
    tl.store(c_ptr + (rm[:, None] * s_cm + rn[None, :] * s_cn), acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b, activation=""):
    assert a.shape[1] == b.shape[0] and a.is_contiguous()
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]), )
    matmul_kernel[grid](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(), ACTIVATION=activation)
    return c


def matmul_persistent(a, b):
    (M, K), N = a.shape, b.shape[1]
    sms = torch.cuda.get_device_properties("cuda").multi_processor_count
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    tiles = triton.cdiv(M, 128) * triton.cdiv(N, 128)
    matmul_persistent_kernel[(min(sms, tiles), )](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(), BM=128,
                                                  BN=128, BK=64, GROUP=8, NUM_SMS=sms, num_stages=3, num_warps=8)
    return c


if __name__ == "__main__":
    a = torch.randn((1024, 512), device=DEVICE, dtype=torch.float16)
    b = torch.randn((512, 768), device=DEVICE, dtype=torch.float16)
    ref = a @ b
    torch.testing.assert_close(matmul(a, b), ref, atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(matmul(a, b, "leaky_relu"), torch.nn.functional.leaky_relu(ref), atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(matmul_persistent(a, b), ref, atol=1e-2, rtol=1e-2)
