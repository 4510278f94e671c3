// Structured control flow: for loops (with their pipelined async slots), if and while.
#include "Emitter.h"
#include "tle/Transforms/TensorMaps.h"

#include <algorithm>

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/Support/MathExtras.h>

#include <cassert>
#include <cmath>

namespace tle::nvptx {

using ir::DType;
using ir::OpKind;

void Emitter::emitFor(const ir::Op &op) {
  const ir::Block &body = *op.regions[0];
  llvm::Value *lb = scalar(op.operands[0]), *ub = scalar(op.operands[1]), *step = scalar(op.operands[2]);
  bool sg = ir::isSigned(op.operands[0]->type.dtype());
  llvm::BasicBlock *pre = B.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(ctx, "for.header", kernel_);
  auto *loop = llvm::BasicBlock::Create(ctx, "for.body", kernel_);
  auto *exit = llvm::BasicBlock::Create(ctx, "for.exit", kernel_);
  // A loop that leaves wgmma groups in flight across iterations (wgmma_drain) is emitted rotated
  // (guard, body, test at the bottom) with the final wait on the exit edge alone: ptxas
  // serializes every wgmma of the loop (C7514) when a path that may still have groups in flight
  // reaches other code before the wait.
  const bool rotated = op.wgmmaDrain();
  // The pipeline pass's waits for tiles copied before the loop (attention's Q), placed right
  // before it: emitted here, after the loop's blocks are created.
  std::vector<const ir::Op *> waits = std::move(loopWaits_);
  loopWaits_.clear();
  for (const ir::Op *w : waits)
    emitOp(*w);
  pre = B.GetInsertBlock(); // the waits end in a block of their own
  auto lessThan = [&](llvm::Value *a, llvm::Value *b) { return sg ? B.CreateICmpSLT(a, b) : B.CreateICmpULT(a, b); };
  if (rotated)
    B.CreateCondBr(lessThan(lb, ub), header, exit);
  else
    B.CreateBr(header);
  B.SetInsertPoint(header);
  llvm::PHINode *iv = B.CreatePHI(lb->getType(), 2, "iv");
  iv->addIncoming(lb, pre);
  vals_[body.args[0].get()] = {iv};
  std::vector<std::vector<llvm::PHINode *>> phis;
  for (size_t i = 3; i < op.operands.size(); ++i) {
    // The initial value in the argument's layout: layout assignment leaves an init whose
    // registers only need renumbering (a layout with replicated register bits) unconverted.
    const std::vector<llvm::Value *> init = regsLike(op.operands[i], body.args[i - 2].get());
    std::vector<llvm::PHINode *> ps;
    std::vector<llvm::Value *> asVals;
    for (llvm::Value *x : init) {
      llvm::PHINode *p = B.CreatePHI(x->getType(), 2);
      p->addIncoming(x, pre);
      ps.push_back(p);
      asVals.push_back(p);
    }
    phis.push_back(ps);
    vals_[body.args[i - 2].get()] = asVals;
    vals_[op.result(static_cast<unsigned>(i - 3))] = asVals;
  }
  if (rotated)
    B.CreateBr(loop);
  else
    B.CreateCondBr(lessThan(iv, ub), loop, exit);
  B.SetInsertPoint(loop);
  emitBlock(body);
  for (auto &a : body.args)
    privateRegs_.erase(a.get());
  const ir::Op *yield = body.terminator();
  llvm::BasicBlock *latch = B.GetInsertBlock();
  std::vector<std::vector<llvm::Value *>> nexts;
  for (size_t i = 0; i < phis.size(); ++i) {
    const ir::Value *y = yield->operands[i];
    nexts.push_back(y->type.isScalar() ? std::vector<llvm::Value *>{scalar(y)}
                                       : regsIn(y, *op.result(static_cast<unsigned>(i))->layout));
  }
  llvm::Value *ivNext = B.CreateAdd(iv, step, "iv.next");
  for (size_t i = 0; i < phis.size(); ++i)
    for (size_t k = 0; k < phis[i].size(); ++k)
      phis[i][k]->addIncoming(nexts[i][k], latch);
  iv->addIncoming(ivNext, latch);
  if (!rotated) {
    B.CreateBr(header);
    B.SetInsertPoint(exit);
    return;
  }
  auto *drain = llvm::BasicBlock::Create(ctx, "for.drain", kernel_);
  B.CreateCondBr(lessThan(ivNext, ub), header, drain);
  B.SetInsertPoint(drain);
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
  B.CreateCall(fty, llvm::InlineAsm::get(fty, "wgmma.wait_group.sync.aligned 0;", "", true));
  B.CreateBr(exit);
  // The loop's results: the initial values when it runs no iteration, the last yield's after.
  B.SetInsertPoint(exit);
  for (size_t i = 0; i < phis.size(); ++i) {
    std::vector<llvm::Value *> res;
    for (size_t k = 0; k < phis[i].size(); ++k) {
      llvm::PHINode *p = B.CreatePHI(phis[i][k]->getType(), 2);
      p->addIncoming(phis[i][k]->getIncomingValueForBlock(pre), pre);
      p->addIncoming(nexts[i][k], drain);
      res.push_back(p);
    }
    vals_[op.result(static_cast<unsigned>(i))] = res;
  }
}

std::vector<llvm::Value *> Emitter::regsLike(const ir::Value *v, const ir::Value *like) {
  if (like->type.isScalar())
    return {scalar(v)};
  return regsIn(v, *like->layout);
}

bool Emitter::issueRegion(const ir::Op &ifOp) const {
  if (!ifOp.results.empty() || ifOp.regions[1]->ops.size() != 1 || firstThreadOnly_)
    return false;
  for (const auto &o : ifOp.regions[0]->ops) {
    switch (o->kind) {
    case OpKind::TmaLoad: case OpKind::TmaStore: case OpKind::TmaStoreCommit: case OpKind::TmaStoreWait:
    case OpKind::Yield:
      continue;
    case OpKind::MbarrierArrive: // one arrival of the CTA on its own mbarrier
      if (o->sync.per == ir::Arrivers::Cta && o->operands.size() == 1)
        continue;
      return false;
    case OpKind::Constant: case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::AddPtr:
    case OpKind::Cast:
      if (o->result()->type.isScalar())
        continue;
      return false;
    default:
      return false;
    }
  }
  return true;
}

void Emitter::emitIf(const ir::Op &op) {
  llvm::Value *cond = scalar(op.operands[0]);
  const bool issue = issueRegion(op);
  if (issue)
    cond = B.CreateAnd(firstThread(tid_), cond);
  struct Restore {
    bool &flag, old;
    ~Restore() { flag = old; }
  } restore{firstThreadOnly_, firstThreadOnly_};
  auto *thenB = llvm::BasicBlock::Create(ctx, "if.then", kernel_);
  auto *elseB = llvm::BasicBlock::Create(ctx, "if.else", kernel_);
  auto *merge = llvm::BasicBlock::Create(ctx, "if.end", kernel_);
  B.CreateCondBr(cond, thenB, elseB);
  std::vector<std::vector<llvm::Value *>> outs[2];
  llvm::BasicBlock *ends[2];
  llvm::BasicBlock *starts[2] = {thenB, elseB};
  for (int r = 0; r < 2; ++r) {
    B.SetInsertPoint(starts[r]);
    firstThreadOnly_ = issue && r == 0;
    emitBlock(*op.regions[r]);
    const ir::Op *yield = op.regions[r]->terminator();
    for (size_t i = 0; i < op.results.size(); ++i)
      outs[r].push_back(regsLike(yield->operands[i], op.result(static_cast<unsigned>(i))));
    ends[r] = B.GetInsertBlock();
    B.CreateBr(merge);
  }
  B.SetInsertPoint(merge);
  for (size_t i = 0; i < op.results.size(); ++i) {
    std::vector<llvm::Value *> vs;
    for (size_t k = 0; k < outs[0][i].size(); ++k) {
      llvm::PHINode *p = B.CreatePHI(outs[0][i][k]->getType(), 2);
      p->addIncoming(outs[0][i][k], ends[0]);
      p->addIncoming(outs[1][i][k], ends[1]);
      vs.push_back(p);
    }
    vals_[op.result(static_cast<unsigned>(i))] = vs;
  }
}

void Emitter::emitWhile(const ir::Op &op) {
  const ir::Block &before = *op.regions[0], &after = *op.regions[1];
  llvm::BasicBlock *pre = B.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(ctx, "while.cond", kernel_);
  auto *body = llvm::BasicBlock::Create(ctx, "while.body", kernel_);
  auto *exit = llvm::BasicBlock::Create(ctx, "while.end", kernel_);
  B.CreateBr(header);
  B.SetInsertPoint(header);
  std::vector<std::vector<llvm::PHINode *>> phis;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    std::vector<llvm::Value *> init = regsLike(op.operands[i], before.args[i].get());
    std::vector<llvm::PHINode *> ps;
    std::vector<llvm::Value *> asVals;
    for (llvm::Value *x : init) {
      llvm::PHINode *p = B.CreatePHI(x->getType(), 2);
      p->addIncoming(x, pre);
      ps.push_back(p);
      asVals.push_back(p);
    }
    phis.push_back(ps);
    vals_[before.args[i].get()] = asVals;
  }
  emitBlock(before);
  const ir::Op *cond = before.terminator();
  for (size_t i = 0; i < op.results.size(); ++i) {
    auto fwd = regsLike(cond->operands[i + 1], op.result(static_cast<unsigned>(i)));
    vals_[op.result(static_cast<unsigned>(i))] = fwd;
    vals_[after.args[i].get()] = fwd;
  }
  B.CreateCondBr(scalar(cond->operands[0]), body, exit);
  B.SetInsertPoint(body);
  emitBlock(after);
  const ir::Op *yield = after.terminator();
  llvm::BasicBlock *latch = B.GetInsertBlock();
  for (size_t i = 0; i < phis.size(); ++i) {
    auto next = regsLike(yield->operands[i], before.args[i].get());
    for (size_t k = 0; k < phis[i].size(); ++k)
      phis[i][k]->addIncoming(next[k], latch);
  }
  B.CreateBr(header);
  B.SetInsertPoint(exit);
}

} // namespace tle::nvptx
