// Per-element semantics of the tile IR on the host: arithmetic, comparisons, casts with
// bit-exact fp16/bf16 rounding, integer division without traps, clamped shifts, math.
#include "Lowering.h"

#include "HostMath.h"
#include "tle/Target/CPU/HostArray.h"
#include "tle/Target/Fp8.h"
#include "tle/Target/Intrinsics.h"

#include <llvm/IR/Intrinsics.h>

#include <map>

namespace tle::cpu::detail {

using ir::DType;
using ir::OpKind;

namespace {
bool isSmallFloat(DType t) { return t == DType::F16 || t == DType::BF16; }

/// High half of the unsigned double-width product of two N-bit integers (tl.umulhi).
llvm::Value *umulhi(llvm::IRBuilder<> &B, llvm::Value *a, llvm::Value *b) {
  unsigned n = a->getType()->getIntegerBitWidth();
  llvm::Type *wide = B.getIntNTy(2 * n);
  llvm::Value *p = B.CreateMul(B.CreateZExt(a, wide), B.CreateZExt(b, wide));
  return B.CreateTrunc(B.CreateLShr(p, llvm::ConstantInt::get(wide, n)), a->getType());
}
} // namespace

llvm::Value *Lowering::intrinsic(unsigned id, llvm::ArrayRef<llvm::Type *> tys, llvm::ArrayRef<llvm::Value *> args) {
  llvm::Function *fn = llvm::Intrinsic::getDeclaration(&m_, static_cast<llvm::Intrinsic::ID>(id), tys);
  return B.CreateCall(fn, args);
}

llvm::Value *Lowering::constant(ir::ScalarType t, int64_t ival, double fval) {
  switch (t.dtype) {
  case DType::F32: case DType::F64:
    return llvm::ConstantFP::get(regType(t), fval);
  case DType::F16:
    return B.getInt16(halfFromDouble(fval));
  case DType::BF16:
    return B.getInt16(bf16FromDouble(fval));
  case DType::F8E4M3: case DType::F8E5M2:
    return B.getInt8(ir::fp8FromDouble(fval, t.dtype));
  case DType::I1:
    return B.getInt1(ival & 1);
  case DType::Ptr:
    return llvm::Constant::getNullValue(B.getPtrTy());
  default: {
    unsigned w = ir::bitWidth(t.dtype);
    uint64_t v = static_cast<uint64_t>(ival);
    if (w < 64)
      v &= (uint64_t(1) << w) - 1;
    return llvm::ConstantInt::get(regType(t), v);
  }
  }
}

// ---------------------------------------------------------------------------------------------
// 16-bit floats are kept as their bit patterns (i16) and computed in fp32. The conversions are
// integer code (no libcalls, no dependence on F16C/AVX512-BF16), exact and vectorisable.

llvm::Value *Lowering::toF32(llvm::Value *v, DType t) {
  if (ir::isFP8(t))
    return target::fp8ToF32(B, v, t);
  if (t == DType::BF16)
    return B.CreateBitCast(B.CreateShl(B.CreateZExt(v, B.getInt32Ty()), 16), B.getFloatTy());
  if (t != DType::F16)
    return v;
  llvm::Value *x = B.CreateZExt(v, B.getInt32Ty());
  llvm::Value *sign = B.CreateShl(B.CreateAnd(x, 0x8000), 16);
  llvm::Value *em = B.CreateAnd(x, 0x7FFF);
  llvm::Value *shifted = B.CreateShl(em, 13);
  llvm::Value *normal = B.CreateAdd(shifted, B.getInt32(0x38000000));    // rebias 15 -> 127
  llvm::Value *infNan = B.CreateAdd(shifted, B.getInt32(0x70000000));    // exponent 31 -> 255
  llvm::Value *sub = B.CreateBitCast(                                    // m * 2^-24, exact
      B.CreateFMul(B.CreateUIToFP(em, B.getFloatTy()), llvm::ConstantFP::get(B.getFloatTy(), 0x1p-24)),
      B.getInt32Ty());
  llvm::Value *bits = B.CreateSelect(B.CreateICmpULT(em, B.getInt32(0x400)), sub,
                                     B.CreateSelect(B.CreateICmpUGE(em, B.getInt32(0x7C00)), infNan, normal));
  return B.CreateBitCast(B.CreateOr(bits, sign), B.getFloatTy());
}

llvm::Value *Lowering::fromF32(llvm::Value *f, DType t) {
  if (ir::isFP8(t))
    return target::f32ToFp8(B, f, t, /*towardZero=*/false);
  if (!isSmallFloat(t))
    return f;
  llvm::Value *b = B.CreateBitCast(f, B.getInt32Ty());
  llvm::Value *a = B.CreateAnd(b, 0x7FFFFFFF);
  llvm::Value *isNan = B.CreateICmpUGT(a, B.getInt32(0x7F800000));
  if (t == DType::BF16) {
    // Round to nearest even on the top 16 bits; overflow carries into infinity.
    llvm::Value *bias = B.CreateAdd(B.getInt32(0x7FFF), B.CreateAnd(B.CreateLShr(b, 16), 1));
    llvm::Value *r = B.CreateLShr(B.CreateAdd(b, bias), 16);
    llvm::Value *nan = B.CreateOr(B.CreateLShr(b, 16), 0x40);
    return B.CreateTrunc(B.CreateSelect(isNan, nan, r), B.getInt16Ty());
  }
  llvm::Value *sign = B.CreateAnd(B.CreateLShr(b, 16), 0x8000);
  // Normal results: rebias the exponent and round the 13 dropped mantissa bits to nearest even.
  llvm::Value *r = B.CreateSub(a, B.getInt32(0x38000000));
  r = B.CreateAdd(r, B.CreateAdd(B.getInt32(0xFFF), B.CreateAnd(B.CreateLShr(r, 13), 1)));
  llvm::Value *normal = B.CreateLShr(r, 13);
  // Subnormal results (|x| < 2^-14): adding 0.5 leaves the value in units of 2^-24, rounded
  // to nearest even by the FPU, in the low mantissa bits.
  llvm::Value *s = B.CreateFAdd(B.CreateBitCast(a, B.getFloatTy()), llvm::ConstantFP::get(B.getFloatTy(), 0.5));
  llvm::Value *subnormal = B.CreateSub(B.CreateBitCast(s, B.getInt32Ty()), B.getInt32(0x3F000000));
  llvm::Value *v = B.CreateSelect(B.CreateICmpUGE(a, B.getInt32(0x38800000)), normal, subnormal);
  v = B.CreateSelect(B.CreateICmpUGE(a, B.getInt32(0x477FF000)), B.getInt32(0x7C00), v); // >= 65520: inf
  v = B.CreateSelect(isNan, B.getInt32(0x7E00), v);
  return B.CreateTrunc(B.CreateOr(v, sign), B.getInt16Ty());
}

llvm::Value *Lowering::f64ToF32Odd(llvm::Value *d) { return target::f64ToF32RoundToOdd(B, d); }

llvm::Value *Lowering::fromF32TowardZero(llvm::Value *f, DType t) {
  if (ir::isFP8(t))
    return target::f32ToFp8(B, f, t, /*towardZero=*/true);
  if (!isSmallFloat(t))
    return f;
  llvm::Value *b = B.CreateBitCast(f, B.getInt32Ty());
  llvm::Value *a = B.CreateAnd(b, 0x7FFFFFFF);
  llvm::Value *isNan = B.CreateICmpUGT(a, B.getInt32(0x7F800000));
  if (t == DType::BF16) {
    llvm::Value *hi = B.CreateLShr(b, 16);
    return B.CreateTrunc(B.CreateSelect(isNan, B.CreateOr(hi, 0x40), hi), B.getInt16Ty());
  }
  llvm::Value *sign = B.CreateAnd(B.CreateLShr(b, 16), 0x8000);
  llvm::Value *normal = B.CreateLShr(B.CreateSub(a, B.getInt32(0x38000000)), 13);
  llvm::Value *subnormal = intrinsic(llvm::Intrinsic::fptoui_sat, {B.getInt32Ty(), B.getFloatTy()},
                                     {B.CreateFMul(B.CreateBitCast(a, B.getFloatTy()),
                                                   llvm::ConstantFP::get(B.getFloatTy(), 0x1p24))});
  llvm::Value *v = B.CreateSelect(B.CreateICmpUGE(a, B.getInt32(0x38800000)), normal, subnormal);
  v = B.CreateSelect(B.CreateICmpUGE(a, B.getInt32(0x477FE000)), B.getInt32(0x7BFF), v); // > max: max
  v = B.CreateSelect(B.CreateICmpEQ(a, B.getInt32(0x7F800000)), B.getInt32(0x7C00), v);
  v = B.CreateSelect(isNan, B.getInt32(0x7E00), v);
  return B.CreateTrunc(B.CreateOr(v, sign), B.getInt16Ty());
}

llvm::Value *Lowering::f64ToF32TowardZero(llvm::Value *d) {
  llvm::Value *t = B.CreateFPTrunc(d, B.getFloatTy());
  llvm::Value *bigger = B.CreateFCmpOGT(intrinsic(llvm::Intrinsic::fabs, {B.getDoubleTy()}, {B.CreateFPExt(t, B.getDoubleTy())}),
                                        intrinsic(llvm::Intrinsic::fabs, {B.getDoubleTy()}, {d}));
  llvm::Value *tb = B.CreateBitCast(t, B.getInt32Ty());
  return B.CreateBitCast(B.CreateSelect(bigger, B.CreateSub(tb, B.getInt32(1)), tb), B.getFloatTy());
}

llvm::Value *Lowering::intToSmallFloat(llvm::Value *v, bool sg, DType to) {
  // Integer -> fp32 rounded to odd (keep 24 significant bits, OR the dropped ones into the
  // last), then fp32 -> fp16/bf16 to nearest even: one correct rounding.
  llvm::Type *i64 = B.getInt64Ty();
  llvm::Value *x = sg ? B.CreateSExt(v, i64) : B.CreateZExt(v, i64);
  llvm::Value *neg = sg ? B.CreateICmpSLT(x, B.getInt64(0)) : B.getFalse();
  llvm::Value *a = B.CreateSelect(neg, B.CreateNeg(x), x);
  llvm::Value *nb = B.CreateSub(B.getInt64(64), intrinsic(llvm::Intrinsic::ctlz, {i64}, {a, B.getFalse()}));
  llvm::Value *s = B.CreateSelect(B.CreateICmpUGT(nb, B.getInt64(24)), B.CreateSub(nb, B.getInt64(24)), B.getInt64(0));
  llvm::Value *t = B.CreateLShr(a, s);
  llvm::Value *low = B.CreateAnd(a, B.CreateSub(B.CreateShl(B.getInt64(1), s), B.getInt64(1)));
  t = B.CreateOr(t, B.CreateZExt(B.CreateICmpNE(low, B.getInt64(0)), i64));
  llvm::Value *fl = B.CreateUIToFP(t, B.getFloatTy());
  llvm::Value *scale =
      B.CreateBitCast(B.CreateShl(B.CreateAdd(B.CreateTrunc(s, B.getInt32Ty()), B.getInt32(127)), 23), B.getFloatTy());
  fl = B.CreateFMul(fl, scale);
  fl = B.CreateSelect(neg, B.CreateFNeg(fl), fl);
  return fromF32(fl, to);
}

llvm::Value *Lowering::cast(llvm::Value *v, ir::ScalarType fromT, ir::ScalarType toT, bool towardZero) {
  DType from = fromT.dtype, to = toT.dtype;
  if (fromT == toT)
    return v;
  llvm::Type *ty = regType(toT);
  if (from == DType::Ptr || to == DType::Ptr) {
    if (from == DType::Ptr && to == DType::Ptr)
      return v;
    if (to == DType::I1)
      return B.CreateIsNotNull(v);
    return from == DType::Ptr ? B.CreatePtrToInt(v, ty) : B.CreateIntToPtr(B.CreateZExtOrTrunc(v, B.getInt64Ty()), ty);
  }
  bool fromFloat = ir::isFloat(from), toFloat = ir::isFloat(to);
  if (to == DType::I1) {
    if (fromFloat) {
      llvm::Value *x = from == DType::F64 ? v : toF32(v, from);
      return B.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
    }
    return B.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (fromFloat && toFloat && towardZero && ir::bitWidth(to) <= ir::bitWidth(from)) {
    llvm::Value *x = from == DType::F64 ? f64ToF32TowardZero(v) : toF32(v, from); // exact, or truncated
    return to == DType::F32 ? x : fromF32TowardZero(x, to);
  }
  if (fromFloat && toFloat) {
    if (from == DType::F64) {
      llvm::Value *f = B.CreateFPTrunc(v, B.getFloatTy());
      return to == DType::F32 ? f : fromF32(f64ToF32Odd(v), to);
    }
    llvm::Value *x = toF32(v, from); // exact
    if (to == DType::F64)
      return B.CreateFPExt(x, B.getDoubleTy());
    return fromF32(x, to);
  }
  if (fromFloat) {
    // Saturating, NaN -> 0 (as PTX cvt.rzi does), so out-of-range values are defined.
    llvm::Value *x = from == DType::F64 ? v : toF32(v, from);
    return intrinsic(ir::isSigned(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
                     {ty, x->getType()}, {x});
  }
  bool sg = ir::isSigned(from);
  if (toFloat) {
    if (isSmallFloat(to) || ir::isFP8(to))
      return intToSmallFloat(v, sg, to);
    return sg ? B.CreateSIToFP(v, ty) : B.CreateUIToFP(v, ty);
  }
  return B.CreateIntCast(v, ty, sg);
}

// ---------------------------------------------------------------------------------------------

llvm::Value *Lowering::intDivRem(bool rem, bool sg, llvm::Value *a, llvm::Value *b) {
  // Division by zero yields 0 (TLE defines it; the host must not trap), and INT_MIN / -1 wraps
  // to INT_MIN with remainder 0 (x86 would trap on it).
  llvm::Type *ty = a->getType();
  llvm::Value *zero = llvm::ConstantInt::get(ty, 0), *one = llvm::ConstantInt::get(ty, 1);
  llvm::Value *isZero = B.CreateICmpEQ(b, zero);
  if (!sg) {
    llvm::Value *safe = B.CreateSelect(isZero, one, b);
    return B.CreateSelect(isZero, zero, rem ? B.CreateURem(a, safe) : B.CreateUDiv(a, safe));
  }
  llvm::Value *isM1 = B.CreateICmpEQ(b, llvm::ConstantInt::getSigned(ty, -1));
  llvm::Value *safe = B.CreateSelect(B.CreateOr(isZero, isM1), one, b);
  if (rem)
    return B.CreateSelect(B.CreateOr(isZero, isM1), zero, B.CreateSRem(a, safe));
  return B.CreateSelect(isZero, zero, B.CreateSelect(isM1, B.CreateNeg(a), B.CreateSDiv(a, safe)));
}

llvm::Value *Lowering::shift(OpKind k, bool sg, llvm::Value *a, llvm::Value *b) {
  // Amounts >= the bit width (as unsigned) clamp like PTX shl/shr: 0, or the sign for shr.s.
  llvm::Type *ty = a->getType();
  unsigned w = ty->getIntegerBitWidth();
  llvm::Value *big = B.CreateICmpUGE(b, llvm::ConstantInt::get(ty, w));
  llvm::Value *amt = B.CreateSelect(big, llvm::ConstantInt::get(ty, w - 1), b);
  if (k == OpKind::Shl)
    return B.CreateSelect(big, llvm::ConstantInt::get(ty, 0), B.CreateShl(a, amt));
  if (sg)
    return B.CreateAShr(a, amt);
  return B.CreateSelect(big, llvm::ConstantInt::get(ty, 0), B.CreateLShr(a, amt));
}

llvm::Value *Lowering::floatUnary(OpKind k, llvm::Value *x) {
  llvm::Type *ty = x->getType();
  switch (k) {
  case OpKind::Exp: return intrinsic(llvm::Intrinsic::exp, {ty}, {x});
  case OpKind::Exp2: return intrinsic(llvm::Intrinsic::exp2, {ty}, {x});
  case OpKind::Log: return intrinsic(llvm::Intrinsic::log, {ty}, {x});
  case OpKind::Log2: return intrinsic(llvm::Intrinsic::log2, {ty}, {x});
  case OpKind::Sqrt: return intrinsic(llvm::Intrinsic::sqrt, {ty}, {x});
  case OpKind::Rsqrt:
    return B.CreateFDiv(llvm::ConstantFP::get(ty, 1.0), intrinsic(llvm::Intrinsic::sqrt, {ty}, {x}));
  default: return nullptr;
  }
}

llvm::Value *Lowering::combine(ir::ReduceKind k, DType t, llvm::Value *a, llvm::Value *b) {
  bool fl = ir::isFloat(t), sg = ir::isSigned(t);
  if (fl) {
    llvm::Value *x = toF32(a, t), *y = toF32(b, t), *r = nullptr;
    switch (k) {
    case ir::ReduceKind::Sum: r = B.CreateFAdd(x, y); break;
    case ir::ReduceKind::Prod: r = B.CreateFMul(x, y); break;
    case ir::ReduceKind::Max: r = intrinsic(llvm::Intrinsic::maxnum, {x->getType()}, {x, y}); break;
    case ir::ReduceKind::Min: r = intrinsic(llvm::Intrinsic::minnum, {x->getType()}, {x, y}); break;
    case ir::ReduceKind::Combine: break; // a region: Lowering::combineValues
    }
    return r ? fromF32(r, t) : nullptr;
  }
  if (t == DType::Ptr)
    return nullptr;
  switch (k) {
  case ir::ReduceKind::Sum: return B.CreateAdd(a, b);
  case ir::ReduceKind::Prod: return B.CreateMul(a, b);
  case ir::ReduceKind::Max: return intrinsic(sg ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, {a->getType()}, {a, b});
  case ir::ReduceKind::Min: return intrinsic(sg ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, {a->getType()}, {a, b});
  case ir::ReduceKind::Combine: break; // a region: Lowering::combineValues
  }
  return nullptr;
}

llvm::Value *Lowering::fma(DType t, llvm::Value *a, llvm::Value *b, llvm::Value *c) {
  if (!isSmallFloat(t))
    return intrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, b, c});
  // fp16 / bf16: the product is exact in fp64; TwoSum gives the exact error of the sum, which
  // turns the fp64 result into round-to-odd; two more round-to-odd / nearest-even steps then
  // give the correctly rounded 16-bit result.
  llvm::Type *d = B.getDoubleTy();
  auto up = [&](llvm::Value *v) { return B.CreateFPExt(toF32(v, t), d); };
  llvm::Value *p = B.CreateFMul(up(a), up(b)), *z = up(c);
  llvm::Value *sum = B.CreateFAdd(p, z);
  llvm::Value *bb = B.CreateFSub(sum, p);
  llvm::Value *err = B.CreateFAdd(B.CreateFSub(p, B.CreateFSub(sum, bb)), B.CreateFSub(z, bb));
  llvm::Value *sb = B.CreateBitCast(sum, B.getInt64Ty());
  llvm::Value *inexact = B.CreateFCmpONE(err, llvm::ConstantFP::get(d, 0.0));
  llvm::Value *opposite = B.CreateICmpSLT(B.CreateXor(sb, B.CreateBitCast(err, B.getInt64Ty())), B.getInt64(0));
  sb = B.CreateSelect(B.CreateAnd(inexact, opposite), B.CreateSub(sb, B.getInt64(1)), sb);
  sb = B.CreateSelect(inexact, B.CreateOr(sb, 1), sb);
  return fromF32(f64ToF32Odd(B.CreateBitCast(sb, d)), t);
}

llvm::Value *Lowering::bitFunction(const std::string &fn, llvm::Value *x) {
  // libdevice's integer functions: __nv_popc / __nv_clz / __nv_ffs (i32 results) and __nv_brev,
  // each with an `ll` variant on 64 bits.
  std::string base = fn;
  if (base.size() > 2 && base.compare(base.size() - 2, 2, "ll") == 0)
    base.resize(base.size() - 2);
  llvm::Type *ty = x->getType();
  auto i32 = [&](llvm::Value *v) { return B.CreateZExtOrTrunc(v, B.getInt32Ty()); };
  if (base == "popc")
    return i32(intrinsic(llvm::Intrinsic::ctpop, {ty}, {x}));
  if (base == "clz")
    return i32(intrinsic(llvm::Intrinsic::ctlz, {ty}, {x, B.getFalse()}));
  if (base == "brev")
    return intrinsic(llvm::Intrinsic::bitreverse, {ty}, {x});
  if (base == "ffs") { // 1 + the lowest set bit's index; 0 for 0
    llvm::Value *tz = intrinsic(llvm::Intrinsic::cttz, {ty}, {x, B.getFalse()});
    llvm::Value *zero = llvm::ConstantInt::get(ty, 0);
    return i32(B.CreateSelect(B.CreateICmpEQ(x, zero), zero, B.CreateAdd(tz, llvm::ConstantInt::get(ty, 1))));
  }
  return nullptr;
}

llvm::Value *Lowering::externCall(const ir::Op &op, const std::vector<llvm::Value *> &in) {
  const std::string &symbol = op.callee();
  llvm::Type *want = regType(op.result()->type.elem);
  if (symbol.rfind("llvm.", 0) == 0) { // an LLVM intrinsic (a user's extern_elementwise)
    bool small = isSmallFloat(op.result()->type.dtype());
    for (const ir::Value *o : op.operands)
      small = small || isSmallFloat(o->type.dtype());
    std::string why = small ? "on the cpu target an LLVM intrinsic takes no fp16 or bf16 values" : "";
    if (llvm::Value *r = small ? nullptr : target::callNamedIntrinsic(B, symbol, want, in, "", why))
      return r;
    unsupported(op, "extern_elementwise(): " + why);
    return nullptr;
  }
  llvm::Value *r = libdeviceCall(op, in);
  if (!r)
    unsupported(op, "libdevice's '" + symbol + "' has no host implementation for these dtypes");
  else if (r->getType() != want)
    unsupported(op, "the call of libdevice's '" + symbol + "' declares the result " + op.result()->type.elem.str() +
                        ", which the function does not return");
  return r && r->getType() == want ? r : nullptr;
}

llvm::Value *Lowering::typedLibdevice(const ir::Op &op, const std::vector<llvm::Value *> &in) {
  const std::string fn = op.callee().substr(5);
  const DType from = op.operands[0]->type.dtype(), to = op.result()->type.dtype();
  llvm::Type *rt = regType(op.result()->type.elem);
  llvm::Value *a = in[0];
  if (fn.find("_as_") != std::string::npos) // float_as_int, longlong_as_double, ...
    return B.CreateBitCast(a, rt);
  if (fn == "double2hiint" || fn == "double2loint") {
    llvm::Value *bits = B.CreateBitCast(a, B.getInt64Ty());
    return B.CreateTrunc(fn == "double2hiint" ? B.CreateLShr(bits, 32) : bits, B.getInt32Ty());
  }
  if (fn == "hiloint2double") {
    llvm::Value *hi = B.CreateShl(B.CreateZExt(a, B.getInt64Ty()), 32), *lo = B.CreateZExt(in[1], B.getInt64Ty());
    return B.CreateBitCast(B.CreateOr(hi, lo), rt);
  }
  if (fn == "saturatef") { // clamp to [0, 1], NaN to 0
    llvm::Value *lo = intrinsic(llvm::Intrinsic::maxnum, {rt}, {a, llvm::ConstantFP::get(rt, 0.0)});
    return intrinsic(llvm::Intrinsic::minnum, {rt}, {lo, llvm::ConstantFP::get(rt, 1.0)});
  }
  size_t two = fn.find('2');
  if (from != to && two != std::string::npos && fn.size() > 3 && fn[fn.size() - 3] == '_') {
    const std::string mode = fn.substr(fn.size() - 2);
    if (ir::isFloat(from) && ir::isInteger(to)) { // the rounding, then PTX cvt's saturation (NaN 0)
      static const std::map<std::string, unsigned> rounding = {{"rn", llvm::Intrinsic::roundeven},
                                                               {"rz", llvm::Intrinsic::trunc},
                                                               {"rd", llvm::Intrinsic::floor},
                                                               {"ru", llvm::Intrinsic::ceil}};
      llvm::Value *r = intrinsic(rounding.at(mode), {a->getType()}, {a});
      return intrinsic(ir::isSigned(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
                       {rt, a->getType()}, {r});
    }
    if (mode != "rn") // the host converts to nearest only
      return nullptr;
    if (ir::isInteger(from))
      return ir::isSigned(from) ? B.CreateSIToFP(a, rt) : B.CreateUIToFP(a, rt);
    return B.CreateFPTrunc(a, rt); // double2float_rn
  }
  if (fn == "mulhi" || fn == "umulhi" || fn == "mul64hi" || fn == "umul64hi") {
    unsigned w = a->getType()->getIntegerBitWidth();
    bool sg = ir::isSigned(from);
    auto wide = [&](llvm::Value *v) { return sg ? B.CreateSExt(v, B.getIntNTy(2 * w)) : B.CreateZExt(v, B.getIntNTy(2 * w)); };
    return B.CreateTrunc(B.CreateLShr(B.CreateMul(wide(a), wide(in[1])), w), a->getType());
  }
  if (fn == "mul24" || fn == "umul24") { // the low 32 bits of the product of the low 24 bits
    auto low24 = [&](llvm::Value *v) {
      return fn == "mul24" ? B.CreateAShr(B.CreateShl(v, 8), 8) : B.CreateAnd(v, B.getInt32(0xFFFFFF));
    };
    return B.CreateMul(low24(a), low24(in[1]));
  }
  if (fn == "hadd" || fn == "uhadd" || fn == "rhadd" || fn == "urhadd") { // (a + b [+ 1]) >> 1 without overflow
    bool sg = fn[0] != 'u';
    auto wide = [&](llvm::Value *v) { return sg ? B.CreateSExt(v, B.getInt64Ty()) : B.CreateZExt(v, B.getInt64Ty()); };
    llvm::Value *sum = B.CreateAdd(wide(a), wide(in[1]));
    if (fn.find("rhadd") != std::string::npos)
      sum = B.CreateAdd(sum, B.getInt64(1));
    return B.CreateTrunc(sg ? B.CreateAShr(sum, 1) : B.CreateLShr(sum, 1), B.getInt32Ty());
  }
  if (fn == "byte_perm") { // result byte i = byte (s >> 4i) & 7 of the 8 bytes {b, a}
    llvm::Value *bytes = B.CreateOr(B.CreateShl(B.CreateZExt(in[1], B.getInt64Ty()), 32), B.CreateZExt(a, B.getInt64Ty()));
    llvm::Value *r = B.getInt32(0);
    for (unsigned i = 0; i < 4; ++i) {
      llvm::Value *sel = B.CreateAnd(B.CreateLShr(in[2], 4 * i), 7);
      llvm::Value *byte = B.CreateAnd(B.CreateLShr(bytes, B.CreateShl(B.CreateZExt(sel, B.getInt64Ty()), 3)), 0xFF);
      r = B.CreateOr(r, B.CreateShl(B.CreateTrunc(byte, B.getInt32Ty()), 8 * i));
    }
    return r;
  }
  return nullptr;
}

llvm::Value *Lowering::libdeviceCall(const ir::Op &op, const std::vector<llvm::Value *> &in) {
  // libdevice names: __nv_<fn>f on fp32, __nv_<fn> on fp64; predicates __nv_is...f/d -> i32.
  if (op.callee().rfind("__nv_", 0) != 0 || in.empty())
    return nullptr;
  for (llvm::Value *x : in) // the host functions take operands of one type
    if (x->getType() != in[0]->getType())
      return nullptr;
  if (llvm::Value *r = typedLibdevice(op, in))
    return r;
  std::string fn = op.callee().substr(5);
  DType t = op.operands[0]->type.dtype();
  if (ir::isInteger(t))
    return bitFunction(fn, in[0]);
  if (t != DType::F32 && t != DType::F64)
    return nullptr;
  llvm::Type *ty = in[0]->getType();
  // The function name without its type suffix: "f" on fp32, "d" on the fp64 predicates.
  std::string base = fn;
  bool predicate64 = fn == "isnand" || fn == "isinfd" || fn == "signbitd";
  if ((t == DType::F32 && !base.empty() && base.back() == 'f') || (t == DType::F64 && predicate64))
    base.pop_back();
  llvm::Value *a = in[0], *b = in.size() > 1 ? in[1] : nullptr;
  auto i32 = [&](llvm::Value *c) { return B.CreateZExt(c, B.getInt32Ty()); };
  if (base == "isnan") return i32(B.CreateFCmpUNO(a, a));
  if (base == "isinf")
    return i32(B.CreateFCmpOEQ(intrinsic(llvm::Intrinsic::fabs, {ty}, {a}), llvm::ConstantFP::getInfinity(ty)));
  if (base == "signbit")
    return i32(B.CreateICmpSLT(B.CreateBitCast(a, B.getIntNTy(ty->getPrimitiveSizeInBits())),
                               llvm::ConstantInt::get(B.getIntNTy(ty->getPrimitiveSizeInBits()), 0)));
  static const std::map<std::string, unsigned> unary = {
      {"floor", llvm::Intrinsic::floor}, {"ceil", llvm::Intrinsic::ceil},   {"trunc", llvm::Intrinsic::trunc},
      {"round", llvm::Intrinsic::round}, {"rint", llvm::Intrinsic::rint},   {"sqrt", llvm::Intrinsic::sqrt},
      {"exp", llvm::Intrinsic::exp},     {"log", llvm::Intrinsic::log},     {"exp2", llvm::Intrinsic::exp2},
      {"log2", llvm::Intrinsic::log2}};
  if (auto it = unary.find(base); it != unary.end() && !b)
    return intrinsic(it->second, {ty}, {a});
  if (base == "rsqrt" && !b)
    return B.CreateFDiv(llvm::ConstantFP::get(ty, 1.0), intrinsic(llvm::Intrinsic::sqrt, {ty}, {a}));
  if (base == "copysign" && b)
    return intrinsic(llvm::Intrinsic::copysign, {ty}, {a, b});
  if (base == "fmod" && b)
    return B.CreateFRem(a, b);
  const HostMathFn *h = hostMathFunction(fn);
  if (!h || h->arity != in.size() || h->isDouble != (t == DType::F64))
    return nullptr;
  std::vector<llvm::Type *> params(in.size(), ty);
  llvm::FunctionCallee callee = m_.getOrInsertFunction(h->symbol, llvm::FunctionType::get(ty, params, false));
  if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setOnlyAccessesInaccessibleMemory();
  }
  return B.CreateCall(callee, in);
}

llvm::Value *Lowering::apply(const ir::Op &op, const std::vector<llvm::Value *> &in) {
  const ir::Value *first = op.kind == OpKind::Select ? op.operands[1] : op.operands[0];
  DType t = first->type.dtype();
  bool fl = ir::isFloat(t), sg = ir::isSigned(t), isInt = ir::isInteger(t);
  llvm::Value *a = in[0], *b = in.size() > 1 ? in[1] : nullptr;
  auto f32 = [&](auto fn) -> llvm::Value * { return fromF32(fn(toF32(a, t), b ? toF32(b, t) : nullptr), t); };
  switch (op.kind) {
  case OpKind::Add:
    if (fl) return f32([&](llvm::Value *x, llvm::Value *y) { return B.CreateFAdd(x, y); });
    return isInt ? B.CreateAdd(a, b) : nullptr;
  case OpKind::Sub:
    if (fl) return f32([&](llvm::Value *x, llvm::Value *y) { return B.CreateFSub(x, y); });
    return isInt ? B.CreateSub(a, b) : nullptr;
  case OpKind::Mul:
    if (fl) return f32([&](llvm::Value *x, llvm::Value *y) { return B.CreateFMul(x, y); });
    return isInt ? B.CreateMul(a, b) : nullptr;
  case OpKind::FDiv:
    if (!fl) return nullptr;
    return f32([&](llvm::Value *x, llvm::Value *y) { return B.CreateFDiv(x, y); });
  case OpKind::FRem:
    if (!fl) return nullptr;
    return f32([&](llvm::Value *x, llvm::Value *y) { return B.CreateFRem(x, y); });
  case OpKind::IDiv: case OpKind::IRem:
    return isInt ? intDivRem(op.kind == OpKind::IRem, sg, a, b) : nullptr;
  case OpKind::And: return isInt ? B.CreateAnd(a, b) : nullptr;
  case OpKind::Or: return isInt ? B.CreateOr(a, b) : nullptr;
  case OpKind::Xor: return isInt ? B.CreateXor(a, b) : nullptr;
  case OpKind::Shl: case OpKind::Shr:
    return isInt ? shift(op.kind, sg, a, b) : nullptr;
  case OpKind::Max: case OpKind::Min:
    return combine(op.kind == OpKind::Max ? ir::ReduceKind::Max : ir::ReduceKind::Min, t, a, b);
  case OpKind::UMulHi:
    return isInt ? umulhi(B, a, b) : nullptr;
  case OpKind::Cmp: {
    if (fl) {
      llvm::Value *x = toF32(a, t), *y = toF32(b, t);
      switch (op.predicate()) {
      case ir::CmpPred::Eq: return B.CreateFCmpOEQ(x, y);
      case ir::CmpPred::Ne: return B.CreateFCmpUNE(x, y);
      case ir::CmpPred::Lt: return B.CreateFCmpOLT(x, y);
      case ir::CmpPred::Le: return B.CreateFCmpOLE(x, y);
      case ir::CmpPred::Gt: return B.CreateFCmpOGT(x, y);
      case ir::CmpPred::Ge: return B.CreateFCmpOGE(x, y);
      }
      return nullptr;
    }
    switch (op.predicate()) {
    case ir::CmpPred::Eq: return B.CreateICmpEQ(a, b);
    case ir::CmpPred::Ne: return B.CreateICmpNE(a, b);
    case ir::CmpPred::Lt: return sg ? B.CreateICmpSLT(a, b) : B.CreateICmpULT(a, b);
    case ir::CmpPred::Le: return sg ? B.CreateICmpSLE(a, b) : B.CreateICmpULE(a, b);
    case ir::CmpPred::Gt: return sg ? B.CreateICmpSGT(a, b) : B.CreateICmpUGT(a, b);
    case ir::CmpPred::Ge: return sg ? B.CreateICmpSGE(a, b) : B.CreateICmpUGE(a, b);
    }
    return nullptr;
  }
  case OpKind::Select:
    return B.CreateSelect(in[0], in[1], in[2]);
  case OpKind::Neg:
    if (isSmallFloat(t)) return B.CreateXor(a, 0x8000);
    if (fl) return B.CreateFNeg(a);
    return isInt ? B.CreateNeg(a) : nullptr;
  case OpKind::Not:
    return isInt ? B.CreateNot(a) : nullptr;
  case OpKind::Abs:
    if (isSmallFloat(t)) return B.CreateAnd(a, 0x7FFF);
    if (fl) return intrinsic(llvm::Intrinsic::fabs, {a->getType()}, {a});
    if (!isInt) return nullptr;
    return sg ? intrinsic(llvm::Intrinsic::abs, {a->getType()}, {a, B.getFalse()}) : a;
  case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt:
  case OpKind::Rsqrt:
    if (!fl) return nullptr;
    return fromF32(floatUnary(op.kind, toF32(a, t)), t);
  case OpKind::Cast:
    return cast(a, op.operands[0]->type.elem, op.result()->type.elem, op.roundsTowardZero());
  case OpKind::Fma:
    return fl ? fma(t, in[0], in[1], in[2]) : nullptr;
  case OpKind::ExternCall:
    return externCall(op, in);
  case OpKind::Bitcast: {
    llvm::Type *to = regType(op.result()->type.elem);
    if (a->getType() == to) return a;
    if (a->getType()->isPointerTy()) return B.CreatePtrToInt(a, to);
    if (to->isPointerTy()) return B.CreateIntToPtr(a, to);
    if (a->getType()->getPrimitiveSizeInBits() != to->getPrimitiveSizeInBits()) return nullptr;
    return B.CreateBitCast(a, to);
  }
  case OpKind::AddPtr: {
    if (!op.operands[0]->type.elem.isPointer()) return nullptr;
    ir::ScalarType pointee{op.operands[0]->type.elem.pointee};
    DType ot = op.operands[1]->type.dtype();
    llvm::Value *off = B.CreateIntCast(b, B.getInt64Ty(), ir::isSigned(ot));
    return B.CreateGEP(memType(pointee), a, off);
  }
  default:
    return nullptr;
  }
}

} // namespace tle::cpu::detail
