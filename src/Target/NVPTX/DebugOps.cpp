// tl.device_print and tl.device_assert: calls of the CUDA system calls `vprintf` and
// `__assertfail` (PTX ISA §10, "System calls"), formatted as Triton 3.6 does
// (lib/Conversion/TritonGPUToLLVM/PrintOpToLLVM.cpp, AssertOpToLLVM.cpp).
#include "Emitter.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace tle::nvptx {

using ir::DType;

llvm::Value *Emitter::globalString(const std::string &text, const std::string &name) {
  llvm::Constant *init = llvm::ConstantDataArray::getString(ctx, text, /*AddNull=*/true);
  // Constants are uniqued: an equal string made before has this very initializer.
  for (llvm::GlobalVariable &g : m.globals())
    if (g.hasInitializer() && g.getInitializer() == init && g.isConstant() && g.getName().starts_with(name))
      return B.CreateAddrSpaceCast(&g, B.getPtrTy());
  auto *gv = new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage, init,
                                      name, nullptr, llvm::GlobalValue::NotThreadLocal, 1);
  gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  gv->setAlignment(llvm::Align(1));
  return B.CreateAddrSpaceCast(gv, B.getPtrTy());
}

namespace {

/// The printf conversion of one value (Triton's getFormatSubstr).
std::string formatOf(ir::ScalarType t, bool hex) {
  if (t.isPointer())
    return "%p";
  unsigned w = ir::bitWidth(t.dtype);
  if (hex)
    return "0x%0" + std::to_string(w / 4) + (w > 32 ? "ll" : "") + "x";
  if (ir::isFloat(t.dtype))
    return "%f";
  if (w == 64)
    return ir::isSigned(t.dtype) ? "%lli" : "%llu";
  return ir::isSigned(t.dtype) ? "%i" : "%u";
}

} // namespace

void Emitter::emitPrint(const ir::Op &op) {
  auto *i32 = B.getInt32Ty();
  llvm::FunctionCallee vprintf =
      m.getOrInsertFunction("vprintf", llvm::FunctionType::get(i32, {B.getPtrTy(), B.getPtrTy()}, false));
  std::vector<llvm::Value *> pid;
  for (unsigned id : {unsigned(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                      unsigned(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y),
                      unsigned(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z)})
    pid.push_back(declareIntrinsicCall(id, {}, {}));
  // printf(fmt, args...) as vprintf(fmt, &struct{args...}): each argument at its natural
  // alignment; floats as double, narrow integers widened to 32 bits. One argument buffer per
  // struct type (calls are sequential).
  std::map<llvm::StructType *, llvm::Value *> buffers;
  auto call = [&](const std::string &fmt, const std::vector<llvm::Value *> &args, llvm::Value *pred) {
    llvm::Value *fmtPtr = globalString(fmt + "\n", "printfFormat");
    std::vector<llvm::Type *> tys;
    for (llvm::Value *a : args)
      tys.push_back(a->getType());
    auto *sty = llvm::StructType::get(ctx, tys);
    llvm::Value *&buf = buffers[sty];
    if (!buf) {
      llvm::IRBuilder<> E(entry_, entry_->getFirstInsertionPt());
      buf = E.CreateAlloca(sty, nullptr, "printfArgs");
    }
    auto *then = llvm::BasicBlock::Create(ctx, "print", B.GetInsertBlock()->getParent());
    auto *cont = llvm::BasicBlock::Create(ctx, "print.done", B.GetInsertBlock()->getParent());
    B.CreateCondBr(pred, then, cont);
    B.SetInsertPoint(then);
    for (size_t i = 0; i < args.size(); ++i)
      B.CreateStore(args[i], B.CreateStructGEP(sty, buf, static_cast<unsigned>(i)));
    B.CreateCall(vprintf, {fmtPtr, buf});
    B.CreateBr(cont);
    B.SetInsertPoint(cont);
  };
  llvm::Value *thread0 = firstThread(B.CreateOr(laneId(), B.CreateShl(warpId(), 5)));
  std::string pidFmt = "pid (%u, %u, %u)";
  if (op.operands.empty())
    return call(pidFmt + op.printPrefix(), pid, thread0);
  bool hex = op.printHex();
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const ir::Value *v = op.operands[k];
    ir::ScalarType et = v->type.elem;
    auto widen = [&](llvm::Value *x) -> llvm::Value * {
      if (et.isPointer())
        return B.CreatePtrToInt(x, B.getInt64Ty());
      if (ir::isFloat(et.dtype)) {
        if (hex)
          return B.CreateZExtOrTrunc(B.CreateBitCast(x, B.getIntNTy(ir::bitWidth(et.dtype))),
                                     ir::bitWidth(et.dtype) > 32 ? B.getInt64Ty() : i32);
        if (et.dtype == DType::F16 || et.dtype == DType::BF16)
          x = B.CreateFPExt(x, B.getFloatTy());
        return et.dtype == DType::F64 ? x : B.CreateFPExt(x, B.getDoubleTy());
      }
      unsigned w = ir::bitWidth(et.dtype);
      if (w >= 32)
        return x;
      return ir::isSigned(et.dtype) && !hex ? B.CreateSExt(x, i32) : B.CreateZExt(x, i32);
    };
    std::string suffix = op.printPrefix() + (op.operands.size() > 1 ? "(operand " + std::to_string(k) + ") " : "") +
                         formatOf(et, hex);
    if (v->type.isScalar()) {
      std::vector<llvm::Value *> args = pid;
      args.push_back(widen(scalar(v)));
      call(pidFmt + " idx ()" + suffix, args, thread0);
      continue;
    }
    const ir::Layout &l = *v->layout;
    std::string idxFmt = " idx (";
    for (size_t d = 0; d < v->type.shape.size(); ++d) {
      int64_t dim = v->type.shape[d];
      int width = dim > 1 ? static_cast<int>(std::ceil(std::log10(static_cast<double>(dim)))) : 0;
      idxFmt += std::string(d ? ", " : "") + "%" + (width ? std::to_string(width) : "") + "u";
    }
    idxFmt += ")";
    llvm::Value *owner = ownerPredicate(l);
    int dupMask = ir::replicatedRegisterBits(l);
    const std::vector<llvm::Value *> &R = regs(v);
    for (int r = 0; r < l.numRegs(); ++r) {
      if (r & dupMask)
        continue;
      std::vector<llvm::Value *> args = pid;
      for (llvm::Value *c : coord(l, r))
        args.push_back(c);
      args.push_back(widen(R[static_cast<size_t>(r)]));
      call(pidFmt + idxFmt + suffix, args, owner);
    }
  }
}

void Emitter::emitAssert(const ir::Op &op) {
  const ir::Value *c = op.operands[0];
  std::vector<llvm::Value *> R = c->type.isTile() ? regs(c) : std::vector<llvm::Value *>{scalar(c)};
  llvm::Value *anyFalse = B.getFalse();
  for (llvm::Value *x : R)
    anyFalse = B.CreateOr(anyFalse, B.CreateNot(x));
  // void __assertfail(const char *message, const char *file, unsigned line, const char *function,
  //                   size_t charSize)
  llvm::FunctionCallee fail = m.getOrInsertFunction(
      "__assertfail", llvm::FunctionType::get(B.getVoidTy(),
                                              {B.getPtrTy(), B.getPtrTy(), B.getInt32Ty(), B.getPtrTy(), B.getInt64Ty()},
                                              false));
  auto *then = llvm::BasicBlock::Create(ctx, "assert.fail", B.GetInsertBlock()->getParent());
  auto *cont = llvm::BasicBlock::Create(ctx, "assert.ok", B.GetInsertBlock()->getParent());
  B.CreateCondBr(anyFalse, then, cont);
  B.SetInsertPoint(then);
  std::string file = op.loc.file ? diags.sources().path(op.loc.file) : std::string("unknown");
  B.CreateCall(fail, {globalString(op.assertMessage(), "assertMessage_"), globalString(file, "assertFile_"),
                      B.getInt32(op.loc.line), globalString(f.name, "assertFunc_"), B.getInt64(1)});
  B.CreateBr(cont);
  B.SetInsertPoint(cont);
  // As Triton: a barrier after a tile assert, so that no thread runs ahead into an op that may
  // fault where the assert failed.
  if (c->type.isTile())
    barrier();
}

llvm::Value *Emitter::globalTimer() {
  auto *fty = llvm::FunctionType::get(B.getInt64Ty(), false);
  return B.CreateCall(fty, llvm::InlineAsm::get(fty, "mov.u64 $0, %globaltimer;", "=l", true));
}

void Emitter::reportTimeout(const std::string &fmt, llvm::Value *value) {
  llvm::FunctionCallee vprintf = m.getOrInsertFunction(
      "vprintf", llvm::FunctionType::get(B.getInt32Ty(), {B.getPtrTy(), B.getPtrTy()}, false));
  std::vector<llvm::Value *> args = {value};
  for (unsigned id : {unsigned(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                      unsigned(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y),
                      unsigned(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z)})
    args.push_back(declareIntrinsicCall(id, {}, {}));
  args.push_back(tid_);
  std::vector<llvm::Type *> tys;
  for (llvm::Value *a : args)
    tys.push_back(a->getType());
  auto *sty = llvm::StructType::get(ctx, tys);
  llvm::IRBuilder<> E(entry_, entry_->getFirstInsertionPt());
  llvm::Value *buf = E.CreateAlloca(sty, nullptr, "timeoutArgs");
  auto *print = llvm::BasicBlock::Create(ctx, "timeout.print", kernel_);
  auto *trap = llvm::BasicBlock::Create(ctx, "timeout.trap", kernel_);
  B.CreateCondBr(B.CreateICmpEQ(laneId(), B.getInt32(0)), print, trap);
  B.SetInsertPoint(print);
  for (size_t i = 0; i < args.size(); ++i)
    B.CreateStore(args[i], B.CreateStructGEP(sty, buf, static_cast<unsigned>(i)));
  B.CreateCall(vprintf, {globalString(fmt + "\n", "timeoutFormat"), buf});
  B.CreateBr(trap);
  B.SetInsertPoint(trap);
  B.CreateCall(llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::trap));
}

} // namespace tle::nvptx
