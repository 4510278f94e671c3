// tl.device_print and tl.device_assert on the CPU target: calls of the runtime helpers in
// Kernel.cpp, one per element (row-major order within a program).
#include "Lowering.h"

namespace tle::cpu::detail {

using ir::DType;

llvm::Value *Lowering::bitsOf(llvm::Value *v, ir::ScalarType t) {
  if (t.isPointer())
    return B.CreatePtrToInt(v, B.getInt64Ty());
  if (t.dtype == DType::F32)
    v = B.CreateBitCast(v, B.getInt32Ty());
  else if (t.dtype == DType::F64)
    v = B.CreateBitCast(v, B.getInt64Ty());
  return v->getType()->getIntegerBitWidth() < 64 ? B.CreateZExt(v, B.getInt64Ty()) : v;
}

llvm::Value *Lowering::indexArray(const Index &idx) {
  if (idx.empty())
    return llvm::ConstantPointerNull::get(B.getPtrTy());
  llvm::IRBuilder<> E(entry_, entry_->begin());
  auto *arr = E.CreateAlloca(llvm::ArrayType::get(B.getInt64Ty(), idx.size()), nullptr, "index");
  for (size_t d = 0; d < idx.size(); ++d)
    B.CreateStore(idx[d], B.CreateConstInBoundsGEP2_64(arr->getAllocatedType(), arr, 0, d));
  return arr;
}

void Lowering::emitPrint(const ir::Op &op) {
  int site = addSite("print", op.loc);
  sites_[size_t(site)].text = op.printPrefix();
  sites_[size_t(site)].hex = op.printHex();
  for (const ir::Value *v : op.operands)
    sites_[size_t(site)].types.push_back(v->type);
  auto fn = m_.getOrInsertFunction(kPrintFn, llvm::FunctionType::get(B.getVoidTy(),
                                                                     {B.getInt32Ty(), B.getInt32Ty(), B.getInt64Ty(),
                                                                      B.getPtrTy(), B.getInt32Ty(), B.getInt32Ty(),
                                                                      B.getInt32Ty()},
                                                                     false));
  auto call = [&](int operand, llvm::Value *bits, llvm::Value *index) {
    B.CreateCall(fn, {B.getInt32(uint32_t(site)), B.getInt32(uint32_t(operand)), bits, index, pid_[0], pid_[1], pid_[2]});
  };
  if (op.operands.empty())
    return call(-1, B.getInt64(0), llvm::ConstantPointerNull::get(B.getPtrTy()));
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const ir::Value *v = op.operands[k];
    if (v->type.isScalar()) {
      call(int(k), bitsOf(scalar(v), v->type.elem), llvm::ConstantPointerNull::get(B.getPtrTy()));
      continue;
    }
    forEach(v->type.shape, [&](const Index &i) { call(int(k), bitsOf(elem(v, i), v->type.elem), indexArray(i)); });
  }
}

void Lowering::emitAssert(const ir::Op &op) {
  int site = addSite("assert", op.loc);
  sites_[size_t(site)].text = op.assertMessage();
  const ir::Value *c = op.operands[0];
  sites_[size_t(site)].types.push_back(c->type);
  auto fn = m_.getOrInsertFunction(kAssertFn, llvm::FunctionType::get(B.getVoidTy(),
                                                                      {B.getInt32Ty(), B.getPtrTy(), B.getInt32Ty(),
                                                                       B.getInt32Ty(), B.getInt32Ty()},
                                                                      false));
  // Where the condition is false: report, and end this program (the GPU's __assertfail traps).
  auto one = [&](const Index &i) {
    llvm::Value *ok = elem(c, i);
    auto *fail = llvm::BasicBlock::Create(ctx_, "assert.fail", kernel_);
    auto *cont = llvm::BasicBlock::Create(ctx_, "assert.ok", kernel_);
    B.CreateCondBr(ok, cont, fail);
    B.SetInsertPoint(fail);
    B.CreateCall(fn, {B.getInt32(uint32_t(site)), indexArray(i), pid_[0], pid_[1], pid_[2]});
    B.CreateRetVoid();
    B.SetInsertPoint(cont);
  };
  if (c->type.isScalar())
    return one({});
  forEach(c->type.shape, one);
}

} // namespace tle::cpu::detail
