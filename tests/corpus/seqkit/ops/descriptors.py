# Kernels taking host tensor descriptors (Triton's TensorDescriptor arguments; AOT signature
# `tensordesc<fp16[64, 64]>`): tiled copies, an element-wise add, a GEMM, row softmax and a
# scaled down-cast, each tile addressed by its descriptor's block.
import triton
import triton.language as tl


@triton.jit
def desc_copy_kernel(in_desc, out_desc):
    BM: tl.constexpr = in_desc.block_shape[0]
    BN: tl.constexpr = in_desc.block_shape[1]
    tl.static_assert(out_desc.block_shape == in_desc.block_shape, f"blocks differ: {BM}x{BN}")
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    out_desc.store([m, n], in_desc.load([m, n]))


@triton.jit
def desc_add_kernel(a_desc, b_desc, c_desc):
    BM: tl.constexpr = c_desc.block_shape[0]
    BN: tl.constexpr = c_desc.block_shape[1]
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    c = a_desc.load([m, n]).to(tl.float32) + b_desc.load([m, n]).to(tl.float32)
    c_desc.store([m, n], c.to(c_desc.dtype))


@triton.jit
def desc_matmul_kernel(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    tl.static_assert(a_desc.block_shape == (BM, BK), f"A's block must be [{BM}, {BK}]")
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([k, pid_n * BN]), acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@triton.jit
def desc_row_softmax_kernel(x_desc, y_desc):
    BM: tl.constexpr = x_desc.block_shape[0]
    m = tl.program_id(0) * BM
    x = x_desc.load([m, 0]).to(tl.float32)
    y = tl.softmax(x, dim=1, keep_dims=True)
    y_desc.store([m, 0], y.to(y_desc.dtype))


@triton.jit
def desc_scale_cast_kernel(x_desc, y_desc, scale):
    BM: tl.constexpr = x_desc.block_shape[0]
    BN: tl.constexpr = x_desc.block_shape[1]
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    y = (x_desc.load([m, n]) * scale).to(y_desc.dtype, fp_downcast_rounding="rtz")
    y_desc.store([m, n], y)
