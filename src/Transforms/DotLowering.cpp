// Dot lowering selection.
#include "tle/Transforms/DotLowering.h"

#include <algorithm>

namespace tle::transforms {

DotPlan planDot(const ir::Op &dot, int numWarps) {
  const ir::Type &a = dot.operands[0]->type;
  int64_t M = a.shape[0], K = a.shape[1], N = dot.operands[1]->type.shape[1];
  ir::DType in = a.dtype();
  DotPlan p;
  bool f16 = in == ir::DType::F16 || in == ir::DType::BF16 || ir::isFP8(in);
  bool tf32 = in == ir::DType::F32 && dot.dotPrecision() == ir::DotPrecision::TF32;
  bool i8 = (in == ir::DType::I8 || in == ir::DType::U8) && dot.result()->type.dtype() == ir::DType::I32;
  if (M % 16 == 0 && N % 8 == 0 &&
      ((f16 && K % 16 == 0) || (tf32 && K % 8 == 0) || (i8 && K % 32 == 0))) {
    ir::MmaKind mk = f16 ? ir::MmaKind::F16 : tf32 ? ir::MmaKind::TF32 : ir::MmaKind::I8;
    p.kind = f16 ? DotPlan::Kind::MmaF16 : tf32 ? DotPlan::Kind::MmaTF32 : DotPlan::Kind::MmaI8;
    p.acc = ir::mmaAccLayout(M, N, numWarps);
    p.a = ir::mmaOperandLayout(0, mk, M, N, K, numWarps);
    p.b = ir::mmaOperandLayout(1, mk, M, N, K, numWarps);
    return p;
  }
  p.kind = DotPlan::Kind::Fma;
  p.acc = ir::blockedLayout({M, N}, numWarps, 4);
  p.a = ir::fmaOperandLayout(0, p.acc, K);
  p.b = ir::fmaOperandLayout(1, p.acc, K);
  return p;
}

bool nativeFp8Dot(const ir::Op &dot, const std::string &arch, int numWarps) {
  const ir::Type &a = dot.operands[0]->type, &b = dot.operands[1]->type;
  if (!ir::isFP8(a.dtype()) || !ir::isFP8(b.dtype()) || arch != "sm_90a")
    return false;
  int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  return numWarps % 4 == 0 && M % (16 * numWarps) == 0 && N % 16 == 0 && K % 32 == 0 &&
         dot.result()->type.dtype() == ir::DType::F32;
}

bool wgmmaDot(const ir::Op &dot, const std::string &arch, int numWarps) {
  if (ir::isFP8(dot.operands[0]->type.dtype()))
    return nativeFp8Dot(dot, arch, numWarps);
  if (arch != "sm_90a")
    return false;
  DotPlan plan = planDot(dot, numWarps);
  if (plan.kind == DotPlan::Kind::Fma)
    return false;
  int64_t M = dot.operands[0]->type.shape[0], K = dot.operands[0]->type.shape[1];
  int64_t N = dot.operands[1]->type.shape[1];
  // Whole warpgroups, all warps along M (the accumulator layout gives warps to M first), and
  // every operand dim at least 32 bytes (the narrowest swizzle) and a whole number of k steps.
  int64_t kStep = 32 / static_cast<int64_t>(ir::storageBytes(dot.operands[0]->type.dtype()));
  ir::DType acc = plan.kind == DotPlan::Kind::MmaI8 ? ir::DType::I32 : ir::DType::F32;
  return numWarps % 4 == 0 && M % (16 * numWarps) == 0 && N % 16 == 0 && K % kStep == 0 &&
         dot.result()->type.dtype() == acc;
}

bool chunkableStaging(const ir::Op &dot, int64_t chunk, const std::string &arch, int numWarps) {
  if (wgmmaDot(dot, arch, numWarps))
    return false;
  DotPlan::Kind kind = planDot(dot, numWarps).kind;
  if (kind != DotPlan::Kind::MmaF16 && kind != DotPlan::Kind::MmaI8)
    return false;
  int64_t K = dot.operands[0]->type.shape[1], kStep = kind == DotPlan::Kind::MmaF16 ? 16 : 32;
  if (chunk < kStep || chunk >= K || K % chunk != 0 || (chunk & (chunk - 1)) != 0)
    return false;
  return dot.operands[0]->layout && dot.operands[1]->layout;
}

bool wgmmaNeedsKMajor(ir::DType t) { return ir::storageBytes(t) != 2; }

bool mmaSyncSlotOperand(const ir::Op &dot, unsigned k, bool transposed, const std::string &arch, int numWarps) {
  if (k > 1 || (transposed && k == 0) || wgmmaDot(dot, arch, numWarps))
    return false;
  switch (planDot(dot, numWarps).kind) {
  case DotPlan::Kind::MmaF16:
    return !transposed;
  case DotPlan::Kind::MmaTF32:
    return true;
  case DotPlan::Kind::MmaI8:
    return k == 0 || transposed;
  default:
    return false;
  }
}

unsigned widenFp8Dots(ir::Function &f) {
  std::vector<ir::Op *> dots;
  ir::walk(f.body, [&](ir::Op &op) {
    if (op.kind == ir::OpKind::Dot && (ir::isFP8(op.operands[0]->type.dtype()) || ir::isFP8(op.operands[1]->type.dtype())) &&
        !nativeFp8Dot(op, f.arch, f.numWarps))
      dots.push_back(&op);
  });
  for (ir::Op *dot : dots) {
    ir::Block *blk = dot->parent;
    auto it = std::find_if(blk->ops.begin(), blk->ops.end(), [&](const std::unique_ptr<ir::Op> &o) { return o.get() == dot; });
    ir::Builder b(blk);
    b.setInsertionPoint(blk, it);
    for (unsigned k = 0; k < 2; ++k)
      dot->operands[k] = b.cast(dot->loc, dot->operands[k], ir::ScalarType{ir::DType::F16});
  }
  return static_cast<unsigned>(dots.size());
}

int64_t asyncSlotBytes(int64_t rows, int64_t cols, int64_t elemBytes, bool swizzled) {
  if (swizzled)
    return (rows * cols * elemBytes + 1023) / 1024 * 1024;
  return (rows * (cols + 16 / elemBytes) * elemBytes + 127) / 128 * 128;
}

} // namespace tle::transforms
