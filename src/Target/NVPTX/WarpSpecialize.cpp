// Warp specialisation of a TMA-fed loop (tl.range(warp_specialize=True)) on sm_90a: a producer
// warpgroup issues the TMA copies into the pipeline's slots, each after the consumers released
// the slot, while the consumer warps run the kernel without issuing copies or waiting at a
// block-wide barrier before each refill. Slot handshakes are mbarriers (PTX ISA §9.7.13.15):
// a slot's "full" barrier completes when its copy has landed (arrival count 1, expect-tx bytes),
// its "empty" barrier when every consumer thread has retired its reads of the slot (arrival
// count = consumer threads). Register budgets move from the producer to the consumers with
// setmaxnreg (PTX ISA §9.7.17.1).
#include "Emitter.h"
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/RegisterEstimate.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <functional>

namespace tle::nvptx {

using ir::OpKind;


void Emitter::undefResults(const ir::Op &op) {
  for (auto &r : op.results) {
    const ir::Value *v = r.get();
    if (isAsync(v) || v->type.isScalar()) {
      vals_[v] = {llvm::UndefValue::get(isAsync(v) ? B.getInt32Ty() : llvmType(v->type.elem))};
      continue;
    }
    int n = v->layout ? v->layout->numRegs() : 1;
    vals_[v] = std::vector<llvm::Value *>(static_cast<size_t>(n), llvm::UndefValue::get(llvmType(v->type.elem)));
  }
}

llvm::Value *Emitter::emptyBarrierAddr(const AsyncBuffer &buf, llvm::Value *slot) {
  llvm::Value *off = B.CreateAdd(B.getInt32(static_cast<uint32_t>(buf.barBase + 8 * buf.slots)),
                                 B.CreateMul(slot, B.getInt32(8)));
  return B.CreatePtrToInt(smemRaw(off), B.getInt32Ty());
}

void Emitter::waitSlotReleased(llvm::Value *emptyBar, llvm::Value *count, int slots) {
  // Fill c reuses the slot of fill c - slots, released in the phase before fill c's own: parity
  // 1 - (c / slots) % 2. Before the first release (c < slots) that is parity 1 of a fresh
  // barrier, which counts as complete, so the first round of fills does not wait.
  llvm::Value *parity = B.CreateZExt(B.CreateICmpULT(count, B.getInt32(static_cast<uint32_t>(slots))), B.getInt32Ty());
  waitTmaPhase(emptyBar, parity);
}

void Emitter::releaseSlot(const AsyncBuffer &buf, llvm::Value *slot, llvm::Value *pred) {
  if (releasePerWarpgroup_)
    pred = B.CreateAnd(pred, B.CreateICmpEQ(B.CreateAnd(tid_, B.getInt32(127)), B.getInt32(0)));
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt32Ty(), B.getInt1Ty()}, false);
  B.CreateCall(fty,
               llvm::InlineAsm::get(fty, "@$1 mbarrier.arrive.release.cta.shared::cta.b64 _, [$0];", "r,b", true),
               {emptyBarrierAddr(buf, slot), pred});
}

bool Emitter::dotReads(const ir::Block &b, int cls) const {
  return std::any_of(b.ops.begin(), b.ops.end(), [&](const auto &o) {
    return o->kind == OpKind::Dot && ((isAsync(o->operands[0]) && asyncOf_.at(o->operands[0]) == cls) ||
                                      (isAsync(o->operands[1]) && asyncOf_.at(o->operands[1]) == cls));
  });
}

void Emitter::releaseAfterLoop(const ir::Op &loop, llvm::Value *ran) {
  // The loop's last iteration released the slot its predecessor read (emitAsyncLoad); the slot
  // of the last fill, read by that iteration, is released here, once its reads retired: a
  // wgmma group left in flight was waited for on the loop's exit edge, other readers within
  // the iteration.
  // Refills: the classes the body carries (a prologue's fills in an outer loop's body are not).
  const ir::Block &body = *loop.regions[0];
  std::set<int> carried, refilled;
  for (auto &a : body.args)
    if (isTma(a.get()))
      carried.insert(asyncOf_.at(a.get()));
  for (auto &o : body.ops)
    if (o->kind == OpKind::Load && isTma(o->result()) && asyncBuffer(o->result()).dynamicFills &&
        carried.count(asyncOf_.at(o->result())) && dotReads(body, asyncOf_.at(o->result())))
      refilled.insert(asyncOf_.at(o->result()));
  for (int cls : refilled) {
    const AsyncBuffer &buf = buffers_[static_cast<size_t>(cls)];
    llvm::Value *c = takeCount(counterSlot(releaseCount_, cls), static_cast<uint32_t>(2 * buf.slots), ran);
    releaseSlot(buf, B.CreateURem(c, B.getInt32(static_cast<uint32_t>(buf.slots))), ran);
  }
}

void Emitter::emitSpecialized() {
  if (f.producerRegisters <= 0 || f.maxRegisters <= 0)
    diags.fatal(f.loc, "internal error: the warp-specialize pass has not set the producer/consumer register budgets");
  // The pipeline pass's setup at the body's start (the slots' mbarriers, the tensor maps) is
  // the whole CTA's, before the roles split.
  for (auto &op : f.body.ops) {
    OpKind k = op->kind;
    bool setup = k == OpKind::PipelineMbarrier || k == OpKind::MbarrierInit || k == OpKind::TensormapPrefetch ||
                 k == OpKind::FenceMbarrierInit || k == OpKind::FenceProxyAsync ||
                 (k == OpKind::Barrier && op->sync.barrierId < 0);
    if (!setup)
      break;
    emitOp(*op);
    beforeSplit_.insert(op.get());
  }
  auto *consumer = llvm::BasicBlock::Create(ctx, "ws.consumer", kernel_);
  auto *producer = llvm::BasicBlock::Create(ctx, "ws.producer", kernel_);
  B.CreateCondBr(B.CreateICmpUGE(warp_, B.getInt32(static_cast<uint32_t>(f.numWarps))), producer, consumer);
  split_ = true;
  std::map<int, int> prologue = prologueLoads_;

  B.SetInsertPoint(consumer);
  emitBlock(f.body);
  B.CreateRetVoid();

  B.SetInsertPoint(producer);
  // One warp issues the copies (its first thread); the warpgroup's other warps only take part
  // in setmaxnreg (warpgroup-wide), then leave.
  auto *issuer = llvm::BasicBlock::Create(ctx, "ws.issuer", kernel_);
  auto *idle = llvm::BasicBlock::Create(ctx, "ws.idle", kernel_);
  B.CreateCondBr(B.CreateICmpEQ(warp_, B.getInt32(static_cast<uint32_t>(f.numWarps))), issuer, idle);
  B.SetInsertPoint(idle);
  B.CreateRetVoid();
  B.SetInsertPoint(issuer);
  producer_ = true;
  prologueLoads_ = prologue;
  emitBlock(f.body);
  producer_ = false;
  B.CreateRetVoid();

  // The warp-specialize pass's register budgets (setmaxnreg moves registers between the roles
  // within the block's maxnreg).
  auto *vty = llvm::FunctionType::get(B.getVoidTy(), false);
  llvm::IRBuilder<> P(producer, producer->getFirstInsertionPt());
  P.CreateCall(vty, llvm::InlineAsm::get(vty, "setmaxnreg.dec.sync.aligned.u32 " + std::to_string(f.producerRegisters) + ";",
                                         "", true));
  if (f.consumerRegisters) {
    llvm::IRBuilder<> C(consumer, consumer->getFirstInsertionPt());
    C.CreateCall(vty, llvm::InlineAsm::get(vty, "setmaxnreg.inc.sync.aligned.u32 " + std::to_string(f.consumerRegisters) + ";",
                                           "", true));
  }
}

} // namespace tle::nvptx
