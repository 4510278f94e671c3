// Dot lowering selection: how a tl.dot runs on the GPU (mma.sync tensor-core instructions or
// FMA on the CUDA cores) and the layouts its operands and accumulator must have.
#pragma once

#include "tle/IR/IR.h"
#include "tle/IR/Layout.h"

namespace tle::transforms {

/// The lowering chosen for one Dot op.
struct DotPlan {
  enum class Kind { MmaF16, MmaTF32, MmaI8, Fma } kind = Kind::Fma;
  ir::Layout acc; ///< layout of the accumulator and the result
  ir::Layout a;   ///< layout operand A [M,K] must be in
  ir::Layout b;   ///< layout operand B [K,N] must be in
};

/// Chooses the lowering: fp16/bf16 inputs use mma.sync m16n8k16 with fp32 accumulation (fp8
/// inputs, which reach the backend only as native wgmma dots, take the same layouts); fp32
/// inputs with TF32 precision use mma.sync m16n8k8 (tf32); int8 / uint8 inputs (int32
/// accumulation, Triton's rule for integer dots) use mma.sync m16n8k32 when K % 32 == 0;
/// everything else (fp32 "ieee", fp64, other integers) uses FMA with a blocked accumulator. Depends only on shapes, dtypes, precision and
/// `numWarps`, so layout assignment and code generation agree.
DotPlan planDot(const ir::Op &dot, int numWarps);

/// Whether a tl.dot of fp8 operands (fp8e4nv / fp8e5, in any pair) runs as it is: on sm_90a with
/// wgmma.mma_async m64nNk32 (PTX ISA §9.7.15), which needs whole warpgroups along M
/// (M % (16 num_warps) == 0, num_warps % 4 == 0), N % 16 == 0, K % 32 == 0 and an fp32
/// accumulator. Reads `dot.parent`'s function for nothing: `arch` and `numWarps` come in.
bool nativeFp8Dot(const ir::Op &dot, const std::string &arch, int numWarps);

/// Whether a tl.dot runs on Hopper's wgmma.mma_async (PTX ISA §9.7.15): on sm_90a, an fp8 dot
/// that nativeFp8Dot accepts, or an fp16/bf16, tf32 or int8/uint8 dot of a tensor-core plan
/// (planDot) over whole warpgroups with all warps along M (M % (16 num_warps) == 0,
/// num_warps % 4 == 0), N % 16 == 0 and K a whole number of 32-byte k steps (k16, k8, k32).
bool wgmmaDot(const ir::Op &dot, const std::string &arch, int numWarps);

/// Whether wgmma reads operands of dtype `t` from shared memory only K-major (PTX ISA §9.7.15.5.1:
/// the transpose flags exist for 16-bit types only): true for tf32 (fp32 storage), fp8 and int8.
bool wgmmaNeedsKMajor(ir::DType t);

/// Whether a tl.dot that runs on mma.sync (not wgmma: wgmmaDot is false) reads its operand `k`
/// (0: A, 1: B) straight from a cp.async slot of padded rows, with the operand loaded as is
/// (`transposed` false: A as [M, K], B as [K, N]) or as tl.trans of an [N, K] tile (`transposed`,
/// B only). fp16/bf16 (m16n8k16): A and B as loaded, both read with ldmatrix (B with .trans).
/// tf32 (m16n8k8): A as loaded, B either way (its 32-bit fragments are read one by one, PTX ISA
/// §9.7.14.5.7). int8/uint8 (m16n8k32): A as loaded, B only transposed, since ldmatrix has no
/// transpose for bytes (§9.7.14.5.8); an int8 B given as [K, N] is staged from registers.
bool mmaSyncSlotOperand(const ir::Op &dot, unsigned k, bool transposed, const std::string &arch, int numWarps);
/// Whether a tl.dot on mma.sync whose operands the backend stages from registers (neither is
/// in a pipeline slot; fp16/bf16 or int8/uint8, not wgmma) can stage them `chunk` columns of K
/// at a time (Op::dotStageK): `chunk` a power of two of at least one k step (16, or 32 for
/// int8) that divides K and is less than it, both operands' layouts assigned. A thread stages
/// in each round the registers that hold that round's K columns (decided per register when its
/// lanes' and warps' bases move K by less than `chunk`, else by a run-time test).
bool chunkableStaging(const ir::Op &dot, int64_t chunk, const std::string &arch, int numWarps);

/// Bytes of one shared-memory slot of a pipelined [rows, cols] dot operand (elemBytes each), as
/// the NVPTX backend lays it out: for wgmma (`swizzled`) unpadded rows, the slot rounded up to
/// 1024 bytes (the swizzle pattern's alignment); for mma.sync rows padded by 16 bytes against
/// bank conflicts, the slot rounded up to 128 bytes. Shared by `prefetch` (how deep a pipeline
/// fits) and the backend (where the slots go), so that the two agree.
int64_t asyncSlotBytes(int64_t rows, int64_t cols, int64_t elemBytes, bool swizzled);

/// Rewrites every tl.dot with fp8 operands that nativeFp8Dot rejects (other shapes, other
/// architectures, the CPU target) to take its operands widened to fp16, which holds every fp8e4nv
/// and fp8e5 value exactly: the same products and fp32 sums. The pass `widen-fp8-dots`, run
/// first thing on both targets, before canonicalize (which then shares the casts). Returns how
/// many dots it rewrote.
unsigned widenFp8Dots(ir::Function &f);

} // namespace tle::transforms
