// Warp specialisation of a TMA-fed loop (tl.range(warp_specialize=True)) on sm_90a: a producer
// warpgroup issues the TMA copies into the pipeline's slots, each after the consumers released
// the slot, while the consumer warps run the kernel without issuing copies or waiting at a
// block-wide barrier before each refill. Slot handshakes are mbarriers (PTX ISA §9.7.13.15):
// a slot's "full" barrier completes when its copy has landed (arrival count 1, expect-tx bytes),
// its "empty" barrier when every consumer thread has retired its reads of the slot (arrival
// count = consumer threads). Register budgets move from the producer to the consumers with
// setmaxnreg (PTX ISA §9.7.17.1).
#include "Emitter.h"
#include "tle/Transforms/RegisterEstimate.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <functional>

namespace tle::nvptx {

using ir::OpKind;

namespace {

/// Warps in the producer role: one warpgroup, since setmaxnreg applies to whole warpgroups.
constexpr int kProducerWarps = 4;
/// The producer's register budget after setmaxnreg.dec: it computes a few scalars.
constexpr int kProducerRegisters = 40;
/// The consumers' budget never exceeds this (leaves ptxas headroom below the 255 limit).
constexpr int kMaxConsumerRegisters = 240;

/// Registers ptxas must find free for a wgmma's operands beyond its accumulator (descriptors,
/// addresses, the loop's counters), from the smallest budgets it accepted.
constexpr int kWgmmaHeadroom = 32;

/// Blocks per SM a specialised kernel is compiled for: ptxas allocates every role within the
/// kernel's `.maxnreg` (setmaxnreg moves registers between warpgroups at run time, but does not
/// raise what ptxas may use after it), so two blocks only where the shared memory allows it and
/// the consumers' widest wgmma still fits in 65536 / (2 x threads) registers.
int blocksPerSM(int64_t sharedBytes, int threads, int wgmmaRegisters) {
  int64_t perBlock = std::max<int64_t>(sharedBytes, 0) + 1024; // 228 KiB per SM, 1 KiB per block reserved
  int blocks = static_cast<int>(std::clamp<int64_t>(228 * 1024 / perBlock, 1, 2));
  blocks = std::min(blocks, 2048 / threads);
  if (blocks == 2 && 65536 / (2 * threads) / 8 * 8 < wgmmaRegisters + kWgmmaHeadroom)
    blocks = 1;
  return blocks;
}

} // namespace

int Emitter::wgmmaAccumulatorRegisters() const {
  // One m64nNk instruction per warpgroup holds N / 2 fp32 (or int32) accumulators per thread;
  // N is the accumulator's columns, divided among the warpgroups that M (in 64-row blocks) does
  // not occupy.
  int most = 0;
  int groups = std::max(1, f.numWarps / 4);
  ir::walk(f.body, [&](ir::Op &op) {
    if (op.kind != OpKind::Dot || !useWgmma(op) || op.operands[2]->type.shape.size() != 2)
      return;
    const auto &shape = op.operands[2]->type.shape;
    int64_t mGroups = std::max<int64_t>(1, std::min<int64_t>(groups, shape[0] / 64));
    int64_t n = std::min<int64_t>(256, shape[1] / std::max<int64_t>(1, groups / mGroups));
    most = std::max(most, static_cast<int>(n / 2));
  });
  return most;
}

bool Emitter::producerSlice(std::string &why) {
  slice_.clear();
  std::set<const ir::Value *> seen;
  std::function<bool(const ir::Op &)> needOp;
  std::function<bool(const ir::Value *)> need = [&](const ir::Value *v) -> bool {
    if (!seen.insert(v).second)
      return true;
    if (v->def) {
      const ir::Op &d = *v->def;
      if (d.kind == OpKind::For) { // a loop result: its initial value and what the body yields
        unsigned k = v->index;
        return needOp(d) && need(d.operands[3 + k]) && need(d.regions[0]->terminator()->operands[k]);
      }
      return needOp(d);
    }
    const ir::Block *blk = v->owner;
    if (blk == &f.body)
      return true; // a kernel param
    const ir::Op *owner = blk->parent;
    if (!owner || owner->kind != OpKind::For) {
      why = "a copy's coordinates depend on a value carried by a 'while' loop";
      return false;
    }
    if (!needOp(*owner))
      return false;
    if (v->index == 0)
      return true; // the induction variable
    unsigned k = v->index - 1;
    return need(owner->operands[3 + k]) && need(blk->terminator()->operands[k]);
  };
  needOp = [&](const ir::Op &op) -> bool {
    if (!slice_.insert(&op).second)
      return true;
    if (op.parent != &f.body) {
      const ir::Op *outer = op.parent->parent;
      if (!outer || outer->kind != OpKind::For) {
        why = "a copy or its coordinates are computed inside an 'if' or 'while'";
        return false;
      }
      if (!needOp(*outer))
        return false;
    }
    if (op.kind == OpKind::For)
      return need(op.operands[0]) && need(op.operands[1]) && need(op.operands[2]);
    if (op.kind == OpKind::Load && isTma(op.result())) {
      size_t rank = op.blockShape().size();
      for (size_t i = 4 + 2 * rank; i < op.operands.size(); ++i) // offsets, then guards
        if (!need(op.operands[i]))
          return false;
      return true;
    }
    bool scalarOnly = std::all_of(op.results.begin(), op.results.end(),
                                  [](const auto &r) { return r->type.isScalar(); });
    // Scalar loads too (a block's offset read from an index array): nothing before the copies
    // writes global memory (the TMA rule), so the producer reads what the consumers would.
    bool computes = op.kind == OpKind::Constant || op.kind == OpKind::ProgramId || op.kind == OpKind::NumPrograms ||
                    (ir::isElementwise(op.kind) && op.kind != OpKind::InlineAsm) ||
                    (op.kind == OpKind::Load && !isAsync(op.result()));
    if (!scalarOnly || !computes) {
      why = "a copy's coordinates depend on an op other than scalar arithmetic (" + std::string(ir::name(op.kind)) + ")";
      return false;
    }
    for (const ir::Value *v : op.operands)
      if (!need(v))
        return false;
    return true;
  };
  bool ok = true;
  ir::walk(f.body, [&](ir::Op &op) {
    if (ok && op.kind == OpKind::Load && isTma(op.result()))
      ok = needOp(op);
  });
  return ok;
}

void Emitter::planWarpSpecialization() {
  const ir::Op *loop = nullptr;
  ir::walk(f.body, [&](ir::Op &op) {
    if (op.kind != OpKind::For || !op.warpSpecialize())
      return;
    if (!loop)
      loop = &op;
    else // one producer per kernel: the first loop that asks for it
      diags.warning(op.loc, "tl.range(warp_specialize=True) is ignored: only one loop of a kernel is "
                            "specialised, the first that asks for it");
  });
  if (!loop)
    return;
  auto decline = [&](const std::string &why) {
    diags.warning(loop->loc, "tl.range(warp_specialize=True) is ignored: " + why);
  };
  for (auto &op : f.body.ops)
    if (op->kind == OpKind::WarpSpecialize)
      return decline("the kernel has its own warp_specialize partitions");
  if (arch != "sm_90a")
    return decline("warp specialisation needs TMA and setmaxnreg (sm_90a); the target is " + arch);
  if (loop->parent != &f.body)
    return decline("only a loop at the kernel's top level is specialised (in a persistent kernel, the loop over "
                   "the tiles)");
  bool fills = false, elsewhere = false;
  ir::walk(f.body, [&](ir::Op &op) {
    if (op.kind != OpKind::Load || !isTma(op.result()))
      return;
    // In the loop's body, or in a pipelined loop nested in it (dynamicFills).
    const ir::Op *top = &op;
    while (top->parent && top->parent != &f.body)
      top = top->parent->parent;
    fills |= top == loop;
    elsewhere |= op.parent != &f.body && top != loop;
  });
  if (!fills)
    return decline("no load in the loop is copied with TMA (a pipelined tensor-descriptor load that feeds tl.dot, "
                   "before the kernel's first global store; docs/compiler.md, \"TMA for tensor descriptors\")");
  if (elsewhere)
    return decline("another loop also has TMA copies");
  if (f.numWarps % 4 != 0)
    return decline("the consumers must be whole warpgroups (num_warps a multiple of 4), not " +
                   std::to_string(f.numWarps) + " warps");
  if (f.numWarps + kProducerWarps > 32)
    return decline("num_warps " + std::to_string(f.numWarps) + " leaves no room for a producer warpgroup "
                   "(1024 threads per block)");
  int threads = 32 * (f.numWarps + kProducerWarps);
  int64_t regs = transforms::registerCeiling(f.numWarps + kProducerWarps) / 8 * 8;
  int accumulators = wgmmaAccumulatorRegisters();
  if (regs < accumulators + kWgmmaHeadroom)
    return decline("with a producer warpgroup the " + std::to_string(threads) + " threads get " + std::to_string(regs) +
                   " registers each, too few for the consumers' wgmma accumulators (" + std::to_string(accumulators) +
                   " per instruction); use fewer warps");
  std::string why;
  if (!producerSlice(why))
    return decline(why);
  ws_ = true;
  // A slot that only wgmma reads (not restaged through registers) is released once per consumer
  // warpgroup: a wgmma is one warpgroup-wide operation, so when one of its threads has seen the
  // group retire (wgmma.wait_group), the whole warpgroup's reads of the slot are done. Slots
  // that threads read themselves are released by every thread.
  releasePerWarpgroup_ = std::none_of(buffers_.begin(), buffers_.end(), [](const AsyncBuffer &buf) {
    return buf.tmaMap >= 0 && (buf.restaged || buf.privateSlots);
  });
  f.producerWarps = kProducerWarps;
}

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

int Emitter::slotReleaseArrivals() const { return releasePerWarpgroup_ ? f.numWarps / 4 : 32 * f.numWarps; }

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
  auto *consumer = llvm::BasicBlock::Create(ctx, "ws.consumer", kernel_);
  auto *producer = llvm::BasicBlock::Create(ctx, "ws.producer", kernel_);
  B.CreateCondBr(B.CreateICmpUGE(warp_, B.getInt32(static_cast<uint32_t>(f.numWarps))), producer, consumer);
  split_ = true;
  std::map<int, int> prologue = prologueLoads_;

  B.SetInsertPoint(consumer);
  emitBlock(f.body);
  if (!buffers_.empty()) {
    auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
    B.CreateCall(fty, llvm::InlineAsm::get(fty, "cp.async.wait_all;", "", true));
    drainTma();
  }
  drainTmaStores();
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

  // Register budgets. The block's registers are fixed at launch (maxnreg per thread); the
  // producer gives most of its share back and the consumers take it (blocksPerSM: ptxas still
  // compiles the consumers within maxnreg).
  int threads = 32 * (f.numWarps + kProducerWarps);
  int blocks = blocksPerSM(sharedBytes_, threads, wgmmaAccumulatorRegisters());
  int maxRegs = static_cast<int>(transforms::registerCeiling(blocks * (f.numWarps + kProducerWarps))) / 8 * 8;
  int consumerRegs = (maxRegs * threads - kProducerRegisters * 32 * kProducerWarps) / (32 * f.numWarps) / 8 * 8;
  consumerRegs = std::min(consumerRegs, kMaxConsumerRegisters);
  f.maxRegisters = maxRegs;
  auto *vty = llvm::FunctionType::get(B.getVoidTy(), false);
  llvm::IRBuilder<> P(producer, producer->getFirstInsertionPt());
  P.CreateCall(vty, llvm::InlineAsm::get(vty, "setmaxnreg.dec.sync.aligned.u32 " + std::to_string(kProducerRegisters) + ";",
                                         "", true));
  if (consumerRegs > maxRegs) { // setmaxnreg.inc must not lower the count
    llvm::IRBuilder<> C(consumer, consumer->getFirstInsertionPt());
    C.CreateCall(vty, llvm::InlineAsm::get(vty, "setmaxnreg.inc.sync.aligned.u32 " + std::to_string(consumerRegs) + ";",
                                           "", true));
  }
}

} // namespace tle::nvptx
