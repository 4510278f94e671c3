// fp8 <-> f32 in LLVM IR: bit manipulation plus one fp32 addition for subnormal rounding.
#include "tle/Target/Fp8.h"

#include <llvm/IR/Intrinsics.h>

#include <cmath>

namespace tle::target {

namespace {
struct Format {
  unsigned mant;     ///< mantissa bits
  int bias;          ///< exponent bias
  uint32_t maxCode;  ///< the largest finite magnitude's code
};
Format formatOf(ir::DType t) { return t == ir::DType::F8E4M3 ? Format{3, 7, 0x7E} : Format{2, 15, 0x7B}; }

llvm::Value *f32Bits(llvm::IRBuilderBase &B, float x) {
  uint32_t u;
  static_assert(sizeof u == sizeof x);
  __builtin_memcpy(&u, &x, 4);
  return B.getInt32(u);
}
} // namespace

llvm::Value *fp8ToF32(llvm::IRBuilderBase &B, llvm::Value *bits, ir::DType t) {
  Format f = formatOf(t);
  llvm::Value *x = B.CreateZExt(bits, B.getInt32Ty());
  llvm::Value *sign = B.CreateShl(B.CreateAnd(x, 0x80), 24);
  llvm::Value *em = B.CreateAnd(x, 0x7F);
  // Normal: exponent and mantissa move into place, the exponent is rebiased to 127.
  llvm::Value *normal = B.CreateAdd(B.CreateShl(em, 23 - f.mant), B.getInt32(uint32_t(127 - f.bias) << 23));
  // Subnormal (exponent field 0): mantissa * 2^(1 - bias - mant), exact in fp32.
  llvm::Value *sub = B.CreateBitCast(
      B.CreateFMul(B.CreateUIToFP(em, B.getFloatTy()),
                   llvm::ConstantFP::get(B.getFloatTy(), std::ldexp(1.0, 1 - f.bias - int(f.mant)))),
      B.getInt32Ty());
  llvm::Value *r = B.CreateSelect(B.CreateICmpULT(em, B.getInt32(1u << f.mant)), sub, normal);
  if (t == ir::DType::F8E4M3) {
    r = B.CreateSelect(B.CreateICmpEQ(em, B.getInt32(0x7F)), B.getInt32(0x7FC00000), r);
  } else {
    r = B.CreateSelect(B.CreateICmpEQ(em, B.getInt32(0x7C)), B.getInt32(0x7F800000), r);
    r = B.CreateSelect(B.CreateICmpUGT(em, B.getInt32(0x7C)), B.getInt32(0x7FC00000), r);
  }
  return B.CreateBitCast(B.CreateOr(r, sign), B.getFloatTy());
}

llvm::Value *f32ToFp8(llvm::IRBuilderBase &B, llvm::Value *fv, ir::DType t, bool towardZero) {
  Format f = formatOf(t);
  unsigned drop = 23 - f.mant;
  llvm::Value *b = B.CreateBitCast(fv, B.getInt32Ty());
  llvm::Value *a = B.CreateAnd(b, 0x7FFFFFFF);
  llvm::Value *sign = B.CreateAnd(B.CreateLShr(b, 24), 0x80);
  llvm::Value *isNan = B.CreateICmpUGT(a, B.getInt32(0x7F800000));
  llvm::Value *rebiased = B.CreateSub(a, B.getInt32(uint32_t(127 - f.bias) << 23));
  llvm::Value *absF = B.CreateBitCast(a, B.getFloatTy());
  llvm::Value *normal, *sub;
  if (towardZero) {
    normal = B.CreateLShr(rebiased, drop);
    // |x| < smallest normal: |x| in units of the smallest subnormal, truncated.
    llvm::Value *scaled =
        B.CreateFMul(absF, llvm::ConstantFP::get(B.getFloatTy(), std::ldexp(1.0, f.bias + int(f.mant) - 1)));
    sub = B.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {B.getInt32Ty(), B.getFloatTy()}, {scaled});
  } else {
    // Round the dropped bits to nearest even; a carry moves into the exponent as it should.
    llvm::Value *bias = B.CreateAdd(B.getInt32((1u << (drop - 1)) - 1), B.CreateAnd(B.CreateLShr(rebiased, drop), 1));
    normal = B.CreateLShr(B.CreateAdd(rebiased, bias), drop);
    // |x| < smallest normal: adding C, whose fp32 ulp is the smallest subnormal, leaves |x| in
    // those units, rounded to nearest even by the FPU, in C's low mantissa bits.
    float c = std::ldexp(1.0f, 1 - f.bias - int(f.mant) + 23);
    llvm::Value *s = B.CreateFAdd(absF, llvm::ConstantFP::get(B.getFloatTy(), c));
    sub = B.CreateSub(B.CreateBitCast(s, B.getInt32Ty()), f32Bits(B, c));
  }
  llvm::Value *minNormal = B.getInt32(uint32_t(128 - f.bias) << 23);
  llvm::Value *v = B.CreateSelect(B.CreateICmpUGE(a, minNormal), normal, sub);
  v = B.CreateSelect(B.CreateICmpUGT(v, B.getInt32(f.maxCode)), B.getInt32(f.maxCode), v); // satfinite (and inf)
  v = B.CreateSelect(isNan, B.getInt32(0x7F), v);
  return B.CreateTrunc(B.CreateOr(v, sign), B.getInt8Ty());
}

llvm::Value *f64ToF32RoundToOdd(llvm::IRBuilderBase &B, llvm::Value *d) {
  llvm::Type *f64 = B.getDoubleTy();
  llvm::Value *t = B.CreateFPTrunc(d, B.getFloatTy()); // to nearest even
  llvm::Value *back = B.CreateFPExt(t, f64);
  llvm::Value *inexact = B.CreateFCmpONE(back, d);
  llvm::Value *bigger = B.CreateFCmpOGT(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                        B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d));
  llvm::Value *tb = B.CreateBitCast(t, B.getInt32Ty());
  tb = B.CreateSelect(B.CreateAnd(inexact, bigger), B.CreateSub(tb, B.getInt32(1)), tb); // toward zero
  tb = B.CreateSelect(inexact, B.CreateOr(tb, 1), tb);
  return B.CreateBitCast(tb, B.getFloatTy());
}

} // namespace tle::target
