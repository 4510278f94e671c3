// Tile IR -> host LLVM IR for the CPU target: structured control flow (for, if, while) and the
// values their regions yield.
#include "Lowering.h"

namespace tle::cpu::detail {

void Lowering::emitSignalWait(const ir::Op &op) {
  // One program is one thread: it spins on an acquire load until the counter reaches the target
  // (the signals come from other threads: another rank's kernel run at the same time), then
  // takes the target from it unless `keep` (IR.h, SignalWait).
  llvm::Value *slot = scalar(op.operands[0]), *target = scalar(op.operands[1]);
  auto *spin = llvm::BasicBlock::Create(ctx_, "signal.spin", kernel_);
  auto *done = llvm::BasicBlock::Create(ctx_, "signal.done", kernel_);
  B.CreateBr(spin);
  B.SetInsertPoint(spin);
  llvm::LoadInst *cur = B.CreateLoad(B.getInt64Ty(), slot);
  cur->setAtomic(llvm::AtomicOrdering::Acquire);
  cur->setAlignment(llvm::Align(8));
  B.CreateCondBr(B.CreateICmpULT(cur, target), spin, done);
  B.SetInsertPoint(done);
  if (!op.sync.keep)
    B.CreateAtomicRMW(llvm::AtomicRMWInst::Sub, slot, target, llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic);
}

using ir::DType;
using ir::OpKind;

std::vector<llvm::Value *> Lowering::emitYield(const ir::Op &term, const std::vector<const ir::Value *> &yielded,
                                               const std::vector<const ir::Value *> &dest) {
  // Temporaries first (they read carried buffers that are about to change), then the direct
  // writes, then the temporaries' copies.
  const std::vector<int> &how = plan_.yieldTemps.at(&term);
  size_t n = dest.size();
  std::vector<llvm::Value *> next(n, nullptr);
  for (size_t i = 0; i < n; ++i)
    if (dest[i]->type.isTile() && how[i] >= 0)
      writeTile(buffers_[static_cast<size_t>(how[i])], yielded[i]);
  for (size_t i = 0; i < n; ++i)
    if (dest[i]->type.isTile() && how[i] == -1)
      writeTile(buffer(dest[i]), yielded[i]);
  for (size_t i = 0; i < n; ++i)
    if (dest[i]->type.isTile() && how[i] >= 0)
      copyTile(buffer(dest[i]), buffers_[static_cast<size_t>(how[i])], dest[i]->type);
  for (size_t i = 0; i < n; ++i)
    if (dest[i]->type.isScalar())
      next[i] = scalar(yielded[i]);
  return next;
}

namespace {
std::vector<const ir::Value *> valuesOf(const std::vector<std::unique_ptr<ir::Value>> &v, size_t from = 0) {
  std::vector<const ir::Value *> out;
  for (size_t i = from; i < v.size(); ++i)
    out.push_back(v[i].get());
  return out;
}
std::vector<const ir::Value *> operandsOf(const ir::Op &op, size_t from = 0) {
  return std::vector<const ir::Value *>(op.operands.begin() + static_cast<long>(from), op.operands.end());
}
} // namespace

bool Lowering::emitIf(const ir::Op &op) {
  llvm::Value *cond = scalar(op.operands[0]);
  auto *thenB = llvm::BasicBlock::Create(ctx_, "if.then", kernel_);
  auto *elseB = llvm::BasicBlock::Create(ctx_, "if.else", kernel_);
  auto *merge = llvm::BasicBlock::Create(ctx_, "if.end", kernel_);
  B.CreateCondBr(cond, thenB, elseB);
  std::vector<const ir::Value *> dest = valuesOf(op.results);
  std::vector<llvm::Value *> outs[2];
  llvm::BasicBlock *ends[2];
  llvm::BasicBlock *starts[2] = {thenB, elseB};
  for (int r = 0; r < 2; ++r) {
    B.SetInsertPoint(starts[r]);
    memo_.clear();
    if (!emitBlock(*op.regions[static_cast<size_t>(r)]))
      return false;
    const ir::Op &yield = *op.regions[static_cast<size_t>(r)]->terminator();
    outs[r] = emitYield(yield, operandsOf(yield), dest);
    ends[r] = B.GetInsertBlock();
    B.CreateBr(merge);
  }
  B.SetInsertPoint(merge);
  memo_.clear();
  for (size_t i = 0; i < dest.size(); ++i) {
    if (!outs[0][i])
      continue;
    llvm::PHINode *p = B.CreatePHI(outs[0][i]->getType(), 2);
    p->addIncoming(outs[0][i], ends[0]);
    p->addIncoming(outs[1][i], ends[1]);
    scalars_[dest[i]] = p;
  }
  return true;
}

bool Lowering::emitWhile(const ir::Op &op) {
  const ir::Block &before = *op.regions[0], &after = *op.regions[1];
  std::vector<const ir::Value *> bargs = valuesOf(before.args), aargs = valuesOf(after.args);
  std::vector<llvm::Value *> init(bargs.size(), nullptr);
  for (size_t i = 0; i < bargs.size(); ++i) {
    if (bargs[i]->type.isTile())
      writeTile(buffer(bargs[i]), op.operands[i]);
    else
      init[i] = scalar(op.operands[i]);
  }
  llvm::BasicBlock *pre = B.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(ctx_, "while.before", kernel_);
  auto *body = llvm::BasicBlock::Create(ctx_, "while.after", kernel_);
  auto *exit = llvm::BasicBlock::Create(ctx_, "while.end", kernel_);
  B.CreateBr(header);
  B.SetInsertPoint(header);
  memo_.clear();
  std::vector<llvm::PHINode *> phis(bargs.size(), nullptr);
  for (size_t i = 0; i < bargs.size(); ++i) {
    if (!init[i])
      continue;
    phis[i] = B.CreatePHI(init[i]->getType(), 2);
    phis[i]->addIncoming(init[i], pre);
    scalars_[bargs[i]] = phis[i];
  }
  if (!emitBlock(before))
    return false;
  const ir::Op &cond = *before.terminator();
  std::vector<const ir::Value *> results = valuesOf(op.results);
  std::vector<llvm::Value *> fwd = emitYield(cond, operandsOf(cond, 1), results);
  for (size_t i = 0; i < results.size(); ++i)
    if (fwd[i])
      scalars_[results[i]] = scalars_[aargs[i]] = fwd[i];
  B.CreateCondBr(scalar(cond.operands[0]), body, exit);

  B.SetInsertPoint(body);
  memo_.clear();
  if (!emitBlock(after))
    return false;
  const ir::Op &yield = *after.terminator();
  std::vector<llvm::Value *> next = emitYield(yield, operandsOf(yield), bargs);
  llvm::BasicBlock *latch = B.GetInsertBlock();
  for (size_t i = 0; i < bargs.size(); ++i)
    if (phis[i])
      phis[i]->addIncoming(next[i], latch);
  B.CreateBr(header);
  B.SetInsertPoint(exit);
  memo_.clear();
  return true;
}

bool Lowering::emitFor(const ir::Op &op) {
  const ir::Block &body = *op.regions[0];
  DType ivt = op.operands[0]->type.dtype();
  bool sg = ir::isSigned(ivt);
  llvm::Type *ity = regType(op.operands[0]->type.elem);
  auto asIv = [&](const ir::Value *v) {
    return B.CreateIntCast(scalar(v), ity, ir::isSigned(v->type.dtype()));
  };
  llvm::Value *lb = scalar(op.operands[0]), *ub = asIv(op.operands[1]), *step = asIv(op.operands[2]);
  size_t n = op.results.size();
  std::vector<const ir::Value *> dest;
  std::vector<llvm::Value *> init(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const ir::Value *r = op.result(static_cast<unsigned>(i));
    dest.push_back(r);
    if (r->type.isTile())
      writeTile(buffer(r), op.operands[3 + i]);
    else
      init[i] = scalar(op.operands[3 + i]);
  }
  int site = addSite("for loop", op.loc);
  auto *failBB = llvm::BasicBlock::Create(ctx_, "for.badstep", kernel_);
  auto *guard = llvm::BasicBlock::Create(ctx_, "for.guard", kernel_);
  auto *loop = llvm::BasicBlock::Create(ctx_, "for.body", kernel_);
  auto *exit = llvm::BasicBlock::Create(ctx_, "for.exit", kernel_);
  llvm::Value *bad = sg ? B.CreateICmpSLE(step, llvm::ConstantInt::get(ity, 0))
                        : B.CreateICmpEQ(step, llvm::ConstantInt::get(ity, 0));
  B.CreateCondBr(bad, failBB, guard);
  B.SetInsertPoint(failBB);
  B.CreateCall(failFn_, {B.getInt32(site), B.CreateIntCast(step, B.getInt64Ty(), sg)});
  B.CreateBr(exit);
  B.SetInsertPoint(guard);
  B.CreateCondBr(sg ? B.CreateICmpSLT(lb, ub) : B.CreateICmpULT(lb, ub), loop, exit);

  B.SetInsertPoint(loop);
  llvm::PHINode *iv = B.CreatePHI(ity, 2, "iv");
  iv->addIncoming(lb, guard);
  scalars_[body.args[0].get()] = iv;
  std::vector<llvm::PHINode *> phis(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    if (!init[i])
      continue;
    phis[i] = B.CreatePHI(init[i]->getType(), 2);
    phis[i]->addIncoming(init[i], guard);
    scalars_[body.args[i + 1].get()] = phis[i];
  }
  if (!emitBlock(body))
    return false;
  std::vector<llvm::Value *> next = emitYield(*body.terminator(), operandsOf(*body.terminator()), dest);
  llvm::Value *sum = intrinsic(sg ? llvm::Intrinsic::sadd_with_overflow : llvm::Intrinsic::uadd_with_overflow,
                               {ity}, {iv, step});
  llvm::Value *ivNext = B.CreateExtractValue(sum, 0);
  llvm::Value *ovf = B.CreateExtractValue(sum, 1);
  llvm::Value *more = B.CreateAnd(B.CreateNot(ovf), sg ? B.CreateICmpSLT(ivNext, ub) : B.CreateICmpULT(ivNext, ub));
  llvm::BasicBlock *latch = B.GetInsertBlock();
  iv->addIncoming(ivNext, latch);
  for (size_t i = 0; i < n; ++i)
    if (phis[i])
      phis[i]->addIncoming(next[i], latch);
  B.CreateCondBr(more, loop, exit);

  B.SetInsertPoint(exit);
  for (size_t i = 0; i < n; ++i) {
    if (!init[i])
      continue;
    llvm::PHINode *res = B.CreatePHI(init[i]->getType(), 3);
    res->addIncoming(init[i], failBB);
    res->addIncoming(init[i], guard);
    res->addIncoming(next[i], latch);
    scalars_[op.result(static_cast<unsigned>(i))] = res;
  }
  memo_.clear();
  return true;
}

} // namespace tle::cpu::detail
