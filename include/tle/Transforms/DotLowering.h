// Dot lowering selection: how a tl.dot runs on the GPU (mma.sync tensor-core instructions or
// FMA on the CUDA cores) and the layouts its operands and accumulator must have.
#pragma once

#include "tle/IR/IR.h"
#include "tle/IR/Layout.h"

namespace tle::transforms {

/// The lowering chosen for one Dot op.
struct DotPlan {
  enum class Kind { MmaF16, MmaTF32, Fma } kind = Kind::Fma;
  ir::Layout acc; ///< layout of the accumulator and the result
  ir::Layout a;   ///< layout operand A [M,K] must be in
  ir::Layout b;   ///< layout operand B [K,N] must be in
};

/// Chooses the lowering: fp16/bf16 inputs use mma.sync m16n8k16 with fp32 accumulation; fp32
/// inputs with TF32 precision use mma.sync m16n8k8 (tf32); everything else (fp32 "ieee", fp64,
/// integers) uses FMA with a blocked accumulator. Depends only on shapes, dtypes, precision and
/// `numWarps`, so layout assignment and code generation agree.
DotPlan planDot(const ir::Op &dot, int numWarps);

} // namespace tle::transforms
