// Per-register elementwise ops: arithmetic, casts (fp8 included) and tl.inline_asm_elementwise.
#include "Emitter.h"
#include "tle/Target/Fp8.h"
#include "tle/Target/Intrinsics.h"

#include <algorithm>

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/Support/MathExtras.h>

#include <cassert>
#include <cmath>

namespace tle::nvptx {

using ir::DType;
using ir::OpKind;

llvm::Value *Emitter::castFp8(llvm::Value *a, DType from, DType to, bool towardZero) {
  llvm::Type *f32 = B.getFloatTy();
  auto asm1 = [&](llvm::Type *rt, llvm::ArrayRef<llvm::Value *> args, const std::string &text, const char *cons) {
    std::vector<llvm::Type *> tys;
    for (llvm::Value *v : args)
      tys.push_back(v->getType());
    auto *fty = llvm::FunctionType::get(rt, tys, false);
    return B.CreateCall(fty, llvm::InlineAsm::get(fty, text, cons, false), args);
  };
  auto fmt = [](DType t) { return t == DType::F8E4M3 ? "e4m3x2" : "e5m2x2"; };
  // To fp32, exactly.
  llvm::Value *x;
  if (ir::isFP8(from)) {
    if (hasFp8Cvt()) {
      llvm::Value *pair = asm1(B.getInt32Ty(), {B.CreateZExt(a, B.getInt16Ty())},
                               std::string("cvt.rn.f16x2.") + fmt(from) + " $0, $1;", "=r,h");
      x = B.CreateFPExt(B.CreateBitCast(B.CreateTrunc(pair, B.getInt16Ty()), B.getHalfTy()), f32);
    } else {
      x = target::fp8ToF32(B, a, from);
    }
    if (to == DType::I1)
      return B.CreateFCmpUNE(x, llvm::ConstantFP::get(f32, 0.0));
    if (ir::isInteger(to))
      return declareIntrinsicCall(ir::isSigned(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
                                  {llvmType(ir::ScalarType{to}), f32}, {x});
    if (!ir::isFP8(to))
      return to == DType::F32 ? x : to == DType::F64 ? B.CreateFPExt(x, B.getDoubleTy())
                                                     : B.CreateFPTrunc(x, llvmType(ir::ScalarType{to})); // exact
  } else if (from == DType::F64) {
    x = target::f64ToF32RoundToOdd(B, a); // one correct rounding below
  } else if (ir::isFloat(from)) {
    x = from == DType::F32 ? a : B.CreateFPExt(a, f32); // exact
  } else {
    // Integers: |v| >= 2^24 saturates in fp8 either way, so rounding to fp32 first is exact enough.
    x = ir::isSigned(from) ? B.CreateSIToFP(a, f32) : B.CreateUIToFP(a, f32);
  }
  // fp32 to fp8.
  if (hasFp8Cvt() && !towardZero) {
    // cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, hi, lo: the low byte converts `lo`.
    llvm::Value *pair = asm1(B.getInt16Ty(), {llvm::ConstantFP::get(f32, 0.0), x},
                             std::string("cvt.rn.satfinite.") + fmt(to) + ".f32 $0, $1, $2;", "=h,f,f");
    return B.CreateTrunc(pair, B.getInt8Ty());
  }
  return target::f32ToFp8(B, x, to, towardZero);
}

llvm::Value *Emitter::elementwise(const ir::Op &op, const std::vector<llvm::Value *> &in) {
  DType t = op.operands[0]->type.dtype();
  bool fl = ir::isFloat(t), sg = ir::isSigned(t);
  llvm::Value *a = in[0], *b = in.size() > 1 ? in[1] : nullptr;
  auto viaF32 = [&](auto fn) -> llvm::Value * {
    if (t == DType::F32)
      return fn(a, b);
    llvm::Value *x = B.CreateFPExt(a, B.getFloatTy());
    llvm::Value *y = b ? B.CreateFPExt(b, B.getFloatTy()) : nullptr;
    return B.CreateFPTrunc(fn(x, y), a->getType());
  };
  switch (op.kind) {
  case OpKind::Add: return fl ? B.CreateFAdd(a, b) : B.CreateAdd(a, b);
  case OpKind::Sub: return fl ? B.CreateFSub(a, b) : B.CreateSub(a, b);
  case OpKind::Mul: return fl ? B.CreateFMul(a, b) : B.CreateMul(a, b);
  case OpKind::FDiv:
    if (t == DType::F64)
      return B.CreateFDiv(a, b);
    if (op.isDivRn()) // correctly rounded: LLVM's fdiv lowers to div.rn
      return viaF32([&](llvm::Value *x, llvm::Value *y) -> llvm::Value * { return B.CreateFDiv(x, y); });
    return viaF32([&](llvm::Value *x, llvm::Value *y) -> llvm::Value * {
      // Triton's fp32 '/': div.full.f32 (approximate, ~2 ulp).
      auto *fty = llvm::FunctionType::get(B.getFloatTy(), {B.getFloatTy(), B.getFloatTy()}, false);
      auto *asmv = llvm::InlineAsm::get(fty, "div.full.f32 $0, $1, $2;", "=f,f,f", false);
      return B.CreateCall(fty, asmv, {x, y});
    });
  case OpKind::IDiv: return sg ? B.CreateSDiv(a, b) : B.CreateUDiv(a, b);
  case OpKind::IRem: return sg ? B.CreateSRem(a, b) : B.CreateURem(a, b);
  case OpKind::FRem: {
    // C fmod, exact: libdevice's __nv_fmod(f). LLVM's frem expands to x - trunc(x / y) * y on
    // NVPTX, which overflows to inf for tiny divisors (found by the conformance suite on the GPU).
    auto fmodOf = [&](llvm::Value *x, llvm::Value *y) -> llvm::Value * {
      llvm::Type *ft = x->getType();
      auto *fty = llvm::FunctionType::get(ft, {ft, ft}, false);
      llvm::FunctionCallee callee = m.getOrInsertFunction(ft->isDoubleTy() ? "__nv_fmod" : "__nv_fmodf", fty);
      if (auto *fn = llvm::dyn_cast<llvm::Function>(callee.getCallee()))
        fn->setDoesNotAccessMemory();
      return B.CreateCall(callee, {x, y});
    };
    return t == DType::F64 ? fmodOf(a, b) : viaF32(fmodOf);
  }
  case OpKind::And: return B.CreateAnd(a, b);
  case OpKind::Or: return B.CreateOr(a, b);
  case OpKind::Xor: return B.CreateXor(a, b);
  case OpKind::Shl: return B.CreateShl(a, b);
  case OpKind::Shr: return sg ? B.CreateAShr(a, b) : B.CreateLShr(a, b);
  case OpKind::Max: case OpKind::Min:
    return combine(op.kind == OpKind::Max ? ir::ReduceKind::Max : ir::ReduceKind::Min, t, a, b);
  case OpKind::UMulHi: {
    // zext, multiply, shift: the NVPTX backend selects mul.hi.u32 / mul.hi.u64.
    unsigned n = a->getType()->getIntegerBitWidth();
    llvm::Type *wide = B.getIntNTy(2 * n);
    llvm::Value *p = B.CreateMul(B.CreateZExt(a, wide), B.CreateZExt(b, wide));
    return B.CreateTrunc(B.CreateLShr(p, llvm::ConstantInt::get(wide, n)), a->getType());
  }
  case OpKind::Cmp: {
    if (fl) {
      llvm::CmpInst::Predicate p;
      switch (op.predicate()) {
      case ir::CmpPred::Eq: p = llvm::CmpInst::FCMP_OEQ; break;
      case ir::CmpPred::Ne: p = llvm::CmpInst::FCMP_UNE; break;
      case ir::CmpPred::Lt: p = llvm::CmpInst::FCMP_OLT; break;
      case ir::CmpPred::Le: p = llvm::CmpInst::FCMP_OLE; break;
      case ir::CmpPred::Gt: p = llvm::CmpInst::FCMP_OGT; break;
      default: p = llvm::CmpInst::FCMP_OGE; break;
      }
      return B.CreateFCmp(p, a, b);
    }
    llvm::CmpInst::Predicate p;
    switch (op.predicate()) {
    case ir::CmpPred::Eq: p = llvm::CmpInst::ICMP_EQ; break;
    case ir::CmpPred::Ne: p = llvm::CmpInst::ICMP_NE; break;
    case ir::CmpPred::Lt: p = sg ? llvm::CmpInst::ICMP_SLT : llvm::CmpInst::ICMP_ULT; break;
    case ir::CmpPred::Le: p = sg ? llvm::CmpInst::ICMP_SLE : llvm::CmpInst::ICMP_ULE; break;
    case ir::CmpPred::Gt: p = sg ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_UGT; break;
    default: p = sg ? llvm::CmpInst::ICMP_SGE : llvm::CmpInst::ICMP_UGE; break;
    }
    return B.CreateICmp(p, a, b);
  }
  case OpKind::Select: return B.CreateSelect(in[0], in[1], in[2]);
  case OpKind::Neg: return fl ? B.CreateFNeg(a) : B.CreateNeg(a);
  case OpKind::Not: return B.CreateNot(a);
  case OpKind::Exp: case OpKind::Exp2:
    // As Triton 3.6 emits them for fp32: exp2 is ex2.approx.ftz.f32 (results below 2^-126
    // flush to zero), exp is ex2.approx.f32 of x * log2 e. The non-ftz form costs ptxas a
    // compare and two multiplies per element to scale denormals (in attention's exp2-based
    // online softmax, 102 of the 454 instructions of the head-dim-128 loop body).
    if (t != DType::F32)
      break;
    if (op.kind == OpKind::Exp2)
      return declareIntrinsicCall(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {a});
    return declareIntrinsicCall(llvm::Intrinsic::nvvm_ex2_approx_f, {},
                                {B.CreateFMul(a, llvm::ConstantFP::get(a->getType(), M_LOG2E))});
  case OpKind::Log: case OpKind::Log2: {
    if (t != DType::F32)
      break;
    llvm::Value *l2 = declareIntrinsicCall(llvm::Intrinsic::nvvm_lg2_approx_f, {}, {a});
    return op.kind == OpKind::Log ? B.CreateFMul(l2, llvm::ConstantFP::get(a->getType(), M_LN2)) : l2;
  }
  case OpKind::Sqrt: return declareIntrinsicCall(llvm::Intrinsic::sqrt, {a->getType()}, {a});
  case OpKind::Rsqrt:
    if (t != DType::F32)
      break;
    return declareIntrinsicCall(llvm::Intrinsic::nvvm_rsqrt_approx_f, {}, {a});
  case OpKind::Abs:
    if (fl)
      return declareIntrinsicCall(llvm::Intrinsic::fabs, {a->getType()}, {a});
    if (!sg)
      return a;
    return declareIntrinsicCall(llvm::Intrinsic::abs, {a->getType()}, {a, B.getFalse()});
  case OpKind::Cast: {
    DType to = op.result()->type.dtype();
    llvm::Type *ty = llvmType(op.result()->type.elem);
    if (ir::isFP8(t) || ir::isFP8(to))
      return castFp8(a, t, to, op.roundsTowardZero());
    if (to == DType::I1)
      return fl ? B.CreateFCmpUNE(a, llvm::ConstantFP::get(a->getType(), 0.0))
                : B.CreateICmpNE(a, llvm::ConstantInt::get(a->getType(), 0));
    if (fl && ir::isFloat(to) && op.roundsTowardZero() && ir::bitWidth(to) < ir::bitWidth(t)) {
      // Round toward zero: cvt.rz (PTX ISA §9.7.9.21).
      llvm::Value *x = t == DType::F64 && to != DType::F32 ? B.CreateFPTrunc(a, B.getFloatTy()) : a;
      std::string src = x->getType()->isDoubleTy() ? "f64" : "f32";
      std::string dst = to == DType::F32 ? "f32" : to == DType::F16 ? "f16" : "bf16";
      bool half = to != DType::F32;
      auto *fty = llvm::FunctionType::get(half ? static_cast<llvm::Type *>(B.getInt16Ty()) : ty, {x->getType()}, false);
      std::string cons = std::string(half ? "=h," : "=f,") + (src == "f64" ? "d" : "f");
      llvm::Value *r = B.CreateCall(fty, llvm::InlineAsm::get(fty, "cvt.rz." + dst + "." + src + " $0, $1;", cons, false), {x});
      return half ? B.CreateBitCast(r, ty) : r;
    }
    if (fl && ir::isFloat(to))
      return ir::bitWidth(to) > ir::bitWidth(t) || (t == DType::F16 && to == DType::BF16) ||
                     (t == DType::BF16 && to == DType::F16)
                 ? (ir::bitWidth(to) == ir::bitWidth(t) ? B.CreateFPTrunc(B.CreateFPExt(a, B.getFloatTy()), ty)
                                                        : B.CreateFPExt(a, ty))
                 : B.CreateFPTrunc(a, ty);
    if (fl) {
      // Saturating, NaN -> 0 (PTX cvt.rzi semantics, and the CPU target's): fptosi/fptoui
      // would make out-of-range values poison (wrapped on the GPU: conformance suite).
      llvm::Value *x = ir::bitWidth(t) < 32 ? B.CreateFPExt(a, B.getFloatTy()) : a;
      return declareIntrinsicCall(ir::isSigned(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
                                  {ty, x->getType()}, {x});
    }
    if (ir::isFloat(to))
      return sg ? B.CreateSIToFP(a, ty) : B.CreateUIToFP(a, ty);
    return B.CreateIntCast(a, ty, sg);
  }
  case OpKind::Bitcast: {
    llvm::Type *to = llvmType(op.result()->type.elem);
    if (a->getType()->isPointerTy() && to->isIntegerTy())
      return B.CreatePtrToInt(a, to);
    if (a->getType()->isIntegerTy() && to->isPointerTy())
      return B.CreateIntToPtr(a, to);
    return B.CreateBitCast(a, to);
  }
  case OpKind::Fma:
    return declareIntrinsicCall(llvm::Intrinsic::fma, {a->getType()}, {in[0], in[1], in[2]});
  case OpKind::ExternCall: {
    if (op.callee().rfind("llvm.", 0) == 0) { // an LLVM intrinsic (a user's extern_elementwise)
      std::string why;
      if (llvm::Value *r = target::callNamedIntrinsic(B, op.callee(), llvmType(op.result()->type.elem), in,
                                                      "llvm.nvvm.", why))
        return r;
      diags.fatal(op.loc, "extern_elementwise(): " + why);
    }
    // A libdevice function, linked into the module before optimisation (Backend.cpp).
    externCallers_.emplace(op.callee(), op.loc);
    std::vector<llvm::Type *> tys;
    for (llvm::Value *x : in)
      tys.push_back(x->getType());
    auto *fty = llvm::FunctionType::get(llvmType(op.result()->type.elem), tys, false);
    llvm::FunctionCallee callee = m.getOrInsertFunction(op.callee(), fty);
    if (auto *fn = llvm::dyn_cast<llvm::Function>(callee.getCallee()))
      fn->setDoesNotAccessMemory();
    return B.CreateCall(callee, in);
  }
  case OpKind::AddPtr: {
    ir::ScalarType pointee{op.operands[0]->type.elem.pointee};
    llvm::Value *off = b;
    // The offset is signed; unsigned offsets are zero-extended (IR.h, AddPtr).
    if (off->getType()->getIntegerBitWidth() < 64 && ir::isUnsigned(op.operands[1]->type.dtype()))
      off = B.CreateZExt(off, B.getInt64Ty());
    else if (off->getType()->getIntegerBitWidth() < 32)
      off = B.CreateSExt(off, B.getInt32Ty());
    return B.CreateGEP(storageType(pointee), a, off);
  }
  default:
    break;
  }
  diags.fatal(op.loc, std::string("'") + ir::name(op.kind) + "' on " + ir::name(t) + " is not supported by the NVPTX backend yet");
}

void Emitter::emitInlineAsm(const ir::Op &op) {
  // One asm statement per `pack` consecutive registers of the thread, as Triton packs them: each
  // operand and result takes pack / per registers (ir::inlineAsmElementsPerRegister: values
  // narrower than 32 bits share a 32-bit register), operands of one value consecutive, outputs
  // first; each register is the constraint's type (checked in Sema and by the verifier: r/f 32,
  // l/d 64, h 16 bits), its elements a vector bitcast to it, or one narrower integer extended
  // into it (a result truncated out of it).
  const int pack = static_cast<int>(op.asmPack());
  const ir::Value *r0 = op.result();
  const int n = r0->type.isTile() ? r0->layout->numRegs() : 1;
  if (n % pack)
    diags.fatal(op.loc, "tl.inline_asm_elementwise with pack=" + std::to_string(pack) + " needs a multiple of " +
                            std::to_string(pack) + " elements per thread; this tile's layout gives each thread " +
                            std::to_string(n));
  std::vector<std::string> toks = ir::splitInlineAsmConstraints(op.asmConstraints());
  auto regType = [&](const std::string &tok) -> llvm::Type * {
    char c = tok.back();
    return c == 'r' ? B.getInt32Ty() : c == 'l' ? B.getInt64Ty() : c == 'h' ? B.getInt16Ty() : c == 'f' ? B.getFloatTy()
                                                                                                  : B.getDoubleTy();
  };
  const size_t nout = op.results.size();
  std::vector<std::vector<llvm::Value *>> ins;
  for (const ir::Value *v : op.operands)
    ins.push_back(v->type.isScalar() ? std::vector<llvm::Value *>(size_t(n), scalar(v)) : regsIn(v, *r0->layout));
  // value -> the constraint's register: a vector of its elements, bitcast (same bit width); one
  // narrower integer (a u8 in "r" with pack=1) extended by its signedness.
  auto toReg = [&](const std::vector<llvm::Value *> &elems, llvm::Type *rt, bool isSigned) -> llvm::Value * {
    llvm::Value *v = elems[0];
    if (elems.size() == 1 && v->getType()->isIntegerTy() && rt->isIntegerTy() &&
        v->getType()->getIntegerBitWidth() < rt->getIntegerBitWidth())
      return isSigned ? B.CreateSExt(v, rt) : B.CreateZExt(v, rt);
    if (elems.size() > 1) {
      llvm::Value *vec = llvm::UndefValue::get(llvm::FixedVectorType::get(elems[0]->getType(), elems.size()));
      for (size_t k = 0; k < elems.size(); ++k)
        vec = B.CreateInsertElement(vec, elems[k], uint64_t(k));
      v = vec;
    }
    return v->getType() == rt ? v : B.CreateBitCast(v, rt);
  };
  auto per = [&](const ir::Value *v) { return static_cast<int>(ir::inlineAsmElementsPerRegister(v->type, pack)); };
  std::vector<llvm::Type *> outTys, inTys;
  size_t tok = 0;
  for (size_t i = 0; i < nout; ++i)
    for (int r = 0; r < pack / per(op.result(unsigned(i))); ++r)
      outTys.push_back(regType(toks[tok++]));
  for (size_t i = 0; i < op.operands.size(); ++i)
    for (int r = 0; r < pack / per(op.operands[i]); ++r)
      inTys.push_back(regType(toks[tok++]));
  llvm::Type *ret = outTys.size() == 1 ? outTys[0] : static_cast<llvm::Type *>(llvm::StructType::get(ctx, outTys));
  auto *fty = llvm::FunctionType::get(ret, inTys, false);
  std::string cons;
  for (size_t i = 0; i < toks.size(); ++i)
    cons += (i ? "," : "") + toks[i];
  auto *asmv = llvm::InlineAsm::get(fty, op.asmText(), cons, /*hasSideEffects=*/!op.asmPure());
  std::vector<std::vector<llvm::Value *>> outs(nout, std::vector<llvm::Value *>(size_t(n)));
  for (int g = 0; g < n; g += pack) {
    std::vector<llvm::Value *> args;
    for (size_t i = 0; i < ins.size(); ++i) {
      const int e = per(op.operands[i]);
      for (int r = 0; r < pack / e; ++r)
        args.push_back(toReg(std::vector<llvm::Value *>(ins[i].begin() + g + r * e, ins[i].begin() + g + (r + 1) * e),
                             inTys[args.size()], ir::isSigned(op.operands[i]->type.dtype())));
    }
    llvm::Value *call = B.CreateCall(fty, asmv, args);
    unsigned slot = 0;
    for (size_t i = 0; i < nout; ++i) {
      llvm::Type *et = llvmType(op.result(unsigned(i))->type.elem);
      const int e = per(op.result(unsigned(i)));
      for (int r = 0; r < pack / e; ++r) {
        llvm::Value *rv = outTys.size() == 1 ? call : B.CreateExtractValue(call, {slot});
        ++slot;
        if (e == 1) {
          bool narrower = et->isIntegerTy() && rv->getType()->isIntegerTy() &&
                          et->getIntegerBitWidth() < rv->getType()->getIntegerBitWidth();
          outs[i][size_t(g + r)] = rv->getType() == et ? rv : narrower ? B.CreateTrunc(rv, et) : B.CreateBitCast(rv, et);
          continue;
        }
        llvm::Value *vec = B.CreateBitCast(rv, llvm::FixedVectorType::get(et, unsigned(e)));
        for (int k = 0; k < e; ++k)
          outs[i][size_t(g + r * e + k)] = B.CreateExtractElement(vec, uint64_t(k));
      }
    }
  }
  for (size_t i = 0; i < nout; ++i)
    vals_[op.result(unsigned(i))] = outs[i];
}

} // namespace tle::nvptx
