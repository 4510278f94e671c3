// Dot lowering selection.
#include "tle/Transforms/DotLowering.h"

namespace tle::transforms {

DotPlan planDot(const ir::Op &dot, int numWarps) {
  const ir::Type &a = dot.operands[0]->type;
  int64_t M = a.shape[0], K = a.shape[1], N = dot.operands[1]->type.shape[1];
  ir::DType in = a.dtype();
  DotPlan p;
  bool f16 = in == ir::DType::F16 || in == ir::DType::BF16;
  bool tf32 = in == ir::DType::F32 && dot.ival == static_cast<int64_t>(ir::DotPrecision::TF32);
  if ((f16 && M % 16 == 0 && N % 8 == 0 && K % 16 == 0) || (tf32 && M % 16 == 0 && N % 8 == 0 && K % 8 == 0)) {
    ir::MmaKind mk = f16 ? ir::MmaKind::F16 : ir::MmaKind::TF32;
    p.kind = f16 ? DotPlan::Kind::MmaF16 : DotPlan::Kind::MmaTF32;
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

} // namespace tle::transforms
