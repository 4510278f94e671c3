// Asynchronous dot-operand pipelines: cp.async (PTX ISA §9.7.9.25) copies global tiles straight
// into multi-buffered shared-memory slots, num_stages - 1 loop iterations ahead of the tl.dot
// that reads them (with ldmatrix for mma.sync, or through wgmma descriptors from the swizzled
// layout); cp.async.wait_group and a barrier make a slot's data visible before use.
#include "Emitter.h"
#include "tle/Transforms/DotLowering.h"
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/Scratch.h"
#include "tle/Transforms/TensorMaps.h"

#include <llvm/IR/InlineAsm.h>

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <set>
#include <functional>

namespace tle::nvptx {

using ir::OpKind;

void Emitter::loadPipelines() {
  // The pipeline pass's decisions (tle/Transforms/Pipeline.h) as the tables emission reads.
  buffers_ = f.pipelines;
  asyncOf_ = transforms::pipelineValues(f, &asyncTransposed_);
  // pipeline-fills wrote a producer/consumer split as a warp_specialize op with its fills.
  if (transforms::producerConsumerSplit(f))
    diags.fatal(f.loc, "internal error: a warp-specialised kernel reached the backend without its warp_specialize "
                       "partitions (run pipeline-fills)");
  bool swizzled = std::any_of(buffers_.begin(), buffers_.end(), [](const AsyncBuffer &b) { return b.swizzle > 0; });
  ir::walk(f.body, [&](ir::Op &o) {
    swizzled |= o.kind == OpKind::Dot && useWgmma(o);
    const bool tma = o.kind == OpKind::Store && o.isTmaStore();
    genericGlobalWrites_ |= transforms::writesGlobalMemory(o) && !tma;
    if (!tma)
      return;
    swizzled = true;
    tmaStores_[&o] = o.storeTensorMap();
    if (o.tmaStaging() < 0)
      return;
    transforms::TmaStoreStaging plan = transforms::tmaStoreStaging(o);
    TmaStaging st;
    st.offset = o.tmaStaging();
    st.bytes = plan.bytes;
    st.buffers = plan.buffers;
    st.boxes = plan.boxes;
    tmaStaging_[&o] = st;
  });
  // wgmma's and TMA stores' swizzled areas need the 1024-byte alignment of the swizzle pattern.
  if (swizzled)
    smemAlign_ = 1024;
  // The kernel's shared memory as allocate-shared laid it out: the IR's buffers, the pipeline
  // area at userBytes_, the ops' scratch areas (each op's sharedOffset).
  sharedBytes_ = f.sharedBytes - userBytes_;
  scratchNeeds_ = transforms::scratchNeeds(f, asyncOf_);
}

llvm::Value *Emitter::slotOffset(const AsyncBuffer &buf, llvm::Value *slot) {
  return B.CreateAdd(B.getInt32(static_cast<uint32_t>(buf.base)),
                     B.CreateMul(slot, B.getInt32(static_cast<uint32_t>(buf.slotBytes))));
}

llvm::Value *Emitter::privateCopyBase(const AsyncBuffer &buf, llvm::Value *slot) {
  return B.CreateAdd(slotOffset(buf, slot), B.CreateMul(tid_, B.getInt32(static_cast<uint32_t>(buf.copyBytes))));
}

void Emitter::copyIntoPrivateSlot(const AsyncBuffer &buf, llvm::Value *slot, const ir::Value *ptrs,
                                  const ir::Value *mask, const ir::Layout &l) {
  std::vector<llvm::Value *> P = regsIn(ptrs, l);
  std::vector<llvm::Value *> M;
  if (mask)
    M = regsIn(mask, l);
  int dupMask = ir::replicatedRegisterBits(l);
  const uint32_t threads = 32u * static_cast<uint32_t>(f.numWarps);
  const uint32_t cb = static_cast<uint32_t>(buf.copyBytes);
  llvm::Value *base = privateCopyBase(buf, slot);
  // cp.async.cg (L2 only) copies 16 bytes; 4 and 8 go through .ca (PTX ISA §9.7.9.25.3).
  std::string text = std::string("cp.async.") + (cb == 16 ? "cg" : "ca") + ".shared.global [$0], [$1], " +
                     std::to_string(cb) + ", $2;";
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt32Ty(), B.getInt64Ty(), B.getInt32Ty()}, false);
  auto *cp = llvm::InlineAsm::get(fty, text, "r,l,r", true);
  int perCopy = static_cast<int>(cb / buf.elemBytes);
  for (int g = 0; g < l.numRegs(); g += perCopy) {
    if (g & dupMask)
      continue;
    uint32_t k = static_cast<uint32_t>(g / perCopy);
    llvm::Value *off = k ? B.CreateAdd(base, B.getInt32(k * threads * cb)) : base;
    llvm::Value *dst = B.CreatePtrToInt(smemRaw(off), B.getInt32Ty());
    // A masked-off vector copies 0 bytes and zero-fills its chunk (no global access).
    llvm::Value *size = M.empty() ? B.getInt32(cb) : B.CreateSelect(M[g], B.getInt32(cb), B.getInt32(0));
    B.CreateCall(fty, cp, {dst, B.CreatePtrToInt(P[g], B.getInt64Ty()), size});
  }
}

std::vector<llvm::Value *> &Emitter::materializePrivate(const ir::Value *v) {
  auto it = privateRegs_.find(v);
  if (it != privateRegs_.end())
    return it->second;
  const AsyncBuffer &buf = asyncBuffer(v);
  // This thread's own copies are complete (the pipeline pass's async_wait_group before the
  // first reader); no other thread reads them, so no barrier.
  const ir::Layout &l = *v->layout;
  int dupMask = ir::replicatedRegisterBits(l);
  const uint32_t threads = 32u * static_cast<uint32_t>(f.numWarps);
  const uint32_t cb = static_cast<uint32_t>(buf.copyBytes);
  int perCopy = static_cast<int>(cb / buf.elemBytes);
  llvm::Type *et = llvmType(v->type.elem);
  auto *vt = llvm::FixedVectorType::get(et, static_cast<unsigned>(perCopy));
  llvm::Value *base = privateCopyBase(buf, scalar(v));
  std::vector<llvm::Value *> out(static_cast<size_t>(l.numRegs()), nullptr);
  for (int g = 0; g < l.numRegs(); g += perCopy) {
    if (g & dupMask)
      continue;
    uint32_t k = static_cast<uint32_t>(g / perCopy);
    llvm::Value *off = k ? B.CreateAdd(base, B.getInt32(k * threads * cb)) : base;
    // Volatile: the copy that wrote these bytes is an asm statement LLVM cannot see into; the
    // read must stay after the wait.
    llvm::Value *x = B.CreateAlignedLoad(vt, smemRaw(off), llvm::Align(cb), /*isVolatile=*/true);
    for (int j = 0; j < perCopy && g + j < l.numRegs(); ++j)
      out[static_cast<size_t>(g + j)] = B.CreateExtractElement(x, static_cast<uint64_t>(j));
  }
  for (int i = 0; i < l.numRegs(); ++i)
    if (!out[static_cast<size_t>(i)])
      out[static_cast<size_t>(i)] = out[static_cast<size_t>(i & ~dupMask)];
  return privateRegs_[v] = out;
}

llvm::Value *Emitter::swizzledOffset(llvm::Value *row, llvm::Value *col, int64_t rows, int swizzle, unsigned eb) {
  uint32_t perRow = static_cast<uint32_t>(swizzle / static_cast<int>(eb)); // elements per swizzle row
  llvm::Value *blk = B.CreateLShr(col, log2i(perRow));
  llvm::Value *inRow = B.CreateAnd(col, perRow - 1);
  llvm::Value *off = B.CreateAdd(B.CreateMul(blk, B.getInt32(static_cast<uint32_t>(rows * swizzle))),
                                 B.CreateAdd(B.CreateMul(row, B.getInt32(static_cast<uint32_t>(swizzle))),
                                             B.CreateMul(inRow, B.getInt32(eb))));
  // XOR the 16-byte chunk index (bits 4..) with the row within the 8-row group (bits 7..).
  uint32_t chunkMask = static_cast<uint32_t>(swizzle / 16 - 1);
  llvm::Value *sel = B.CreateAnd(B.CreateLShr(off, 7), chunkMask);
  return B.CreateXor(off, B.CreateShl(sel, 4));
}

llvm::Value *Emitter::fillSlot(const AsyncBuffer &buf, llvm::Value *c) {
  if (buf.tmaMap < 0)
    return c;
  llvm::Value *s = B.getInt32(static_cast<uint32_t>(buf.slots));
  return B.CreateSelect(B.CreateICmpUGE(c, s), B.CreateSub(c, s), c);
}

llvm::Value *Emitter::asyncSlotIndex(const ir::Value *v) { return fillSlot(asyncBuffer(v), scalar(v)); }

llvm::Value *Emitter::asyncSlotAddr(const ir::Value *v) {
  const AsyncBuffer &buf = asyncBuffer(v);
  return B.CreatePtrToInt(smemRaw(slotOffset(buf, asyncSlotIndex(v))), B.getInt32Ty());
}

// --- TMA (PTX ISA §9.7.9.25.5 cp.async.bulk.tensor, §9.7.13.15 mbarrier) ---------------------

llvm::Value *Emitter::tensorMapAddr(int k) {
  return B.CreatePtrToInt(kernel_->getArg(static_cast<unsigned>(f.params.size() + k)), B.getInt64Ty());
}

llvm::Value *Emitter::tmaBarrierAddr(const AsyncBuffer &buf, llvm::Value *slot) {
  llvm::Value *off = B.CreateAdd(B.getInt32(static_cast<uint32_t>(buf.barBase)), B.CreateMul(slot, B.getInt32(8)));
  return B.CreatePtrToInt(smemRaw(off), B.getInt32Ty());
}

void Emitter::emitPipelineOp(const ir::Op &op) {
  if (op.kind == OpKind::PipelineWait) {
    if (!isTma(op.operands[0]))
      diags.fatal(op.loc, "'pipeline_wait' waits for a tile that a TMA pipeline's slots hold (a load marked "
                          "pipeline=k of a TMA pipeline, its loop-carried values or a tl.trans view); this one is not");
    return waitTma(op.operands[0]);
  }
  if (op.kind == OpKind::TensormapPrefetch) {
    auto *pty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt64Ty(), B.getInt1Ty()}, false);
    B.CreateCall(pty, llvm::InlineAsm::get(pty, "@$1 prefetch.tensormap [$0];", "l,b", true),
                 {tensorMapAddr(op.sync.map), B.CreateICmpEQ(tid_, B.getInt32(0))});
    return;
  }
  const AsyncBuffer &buf = buffers_.at(size_t(op.sync.pipeline));
  if (op.kind == OpKind::PipelineValue) { // its registers are the fill number (the slot and phase)
    vals_[op.result()] = {scalar(op.operands[0])};
    return;
  }
  if (op.kind == OpKind::PipelineSlot) {
    vals_[op.result()] = {smemRaw(slotOffset(buf, fillSlot(buf, scalar(op.operands[0]))))};
    return;
  }
  if (!op.operands.empty()) { // the slot of a fill number known at run time
    llvm::Value *slot = fillSlot(buf, scalar(op.operands[0]));
    if (op.sync.empty)
      slot = B.CreateAdd(slot, B.getInt32(static_cast<uint32_t>(buf.slots)));
    llvm::Value *off = B.CreateAdd(B.getInt32(static_cast<uint32_t>(buf.barBase)), B.CreateMul(slot, B.getInt32(8)));
    vals_[op.result()] = {smemRaw(off)};
    return;
  }
  int64_t off = buf.barBase + 8 * (op.sync.slot + (op.sync.empty ? buf.slots : 0));
  vals_[op.result()] = {smemRaw(B.getInt32(static_cast<uint32_t>(off)))};
}

void Emitter::waitTma(const ir::Value *v) {
  const AsyncBuffer &buf = asyncBuffer(v);
  llvm::Value *c = scalar(v);
  llvm::Value *parity = B.CreateZExt(B.CreateICmpUGE(c, B.getInt32(static_cast<uint32_t>(buf.slots))), B.getInt32Ty());
  waitMbarrierParity(tmaBarrierAddr(buf, asyncSlotIndex(v)), parity, v->def ? v->def->loc : SourceLoc(), false);
}


void Emitter::copyIntoSlot(const AsyncBuffer &buf, llvm::Value *slotBase, const ir::Value *ptrs, const ir::Value *mask,
                           const ir::Layout &l) {
  std::vector<llvm::Value *> P = regsIn(ptrs, l);
  std::vector<llvm::Value *> M;
  if (mask)
    M = regsIn(mask, l);
  llvm::Value *owner = ownerPredicate(l);
  int dupMask = ir::replicatedRegisterBits(l);
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt32Ty(), B.getInt64Ty(), B.getInt32Ty(), B.getInt1Ty()}, false);
  auto *cp = llvm::InlineAsm::get(fty, "@$3 cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,r,b", true);
  int perCopy = 16 / static_cast<int>(buf.elemBytes); // elements in one 16-byte cp.async
  // Swizzled slots: a register's row bits from 8 up and its column bits of whole swizzle rows
  // move the chunk by a constant (they leave the XOR selector, the row within its 8-row group,
  // unchanged), provided they are added, not XORed, to the thread's coordinate. Those chunks
  // are addressed as an earlier chunk's offset plus an immediate, which keeps one shared address
  // register per group instead of one per copy.
  int64_t perRow = buf.swizzle ? buf.swizzle / static_cast<int64_t>(buf.elemBytes) : 0;
  bool constSteps = buf.swizzle && l.rank() == 2 && buf.rows % 8 == 0 && ir::registerBitsDisjoint(l);
  std::map<std::pair<int64_t, int64_t>, llvm::Value *> groupOffset;
  for (int g = 0; g < l.numRegs(); g += perCopy) {
    if (g & dupMask)
      continue;
    llvm::Value *inSlot;
    if (constSteps) {
      ir::Layout::Basis rc = l.regCoord(g);
      int64_t rowStep = rc[0] & ~int64_t(7), colStep = rc[1] & ~(perRow - 1);
      std::pair<int64_t, int64_t> low{rc[0] - rowStep, rc[1] - colStep};
      llvm::Value *&base = groupOffset[low];
      if (!base) {
        const auto &lw = laneWarpCoord(l);
        llvm::Value *row = low.first ? B.CreateAdd(lw[0], B.getInt32(static_cast<uint32_t>(low.first))) : lw[0];
        llvm::Value *col = low.second ? B.CreateAdd(lw[1], B.getInt32(static_cast<uint32_t>(low.second))) : lw[1];
        base = B.CreateAdd(slotBase, swizzledOffset(row, col, buf.rows, buf.swizzle, buf.elemBytes));
      }
      int64_t delta = rowStep * buf.swizzle + (colStep / perRow) * buf.rows * buf.swizzle;
      inSlot = delta ? B.CreateAdd(base, B.getInt32(static_cast<uint32_t>(delta))) : base;
    } else {
      std::vector<llvm::Value *> c = coord(l, g);
      llvm::Value *off =
          buf.swizzle ? swizzledOffset(c[0], c[1], buf.rows, buf.swizzle, buf.elemBytes)
                      : B.CreateMul(B.CreateAdd(B.CreateMul(c[0], B.getInt32(static_cast<uint32_t>(buf.ld))), c[1]),
                                    B.getInt32(buf.elemBytes));
      inSlot = B.CreateAdd(slotBase, off);
    }
    llvm::Value *dst = B.CreatePtrToInt(smemRaw(inSlot), B.getInt32Ty());
    // A masked-off vector copies 0 bytes and zero-fills the slot (no global access).
    llvm::Value *size = M.empty() ? B.getInt32(16) : B.CreateSelect(M[g], B.getInt32(16), B.getInt32(0));
    B.CreateCall(fty, cp, {dst, B.CreatePtrToInt(P[g], B.getInt64Ty()), size, owner});
  }
}

void Emitter::emitSlotCopy(const ir::Op &copy) {
  const ir::Op &slot = *copy.operands[0]->def; // a pipeline_slot (verified)
  const AsyncBuffer &buf = buffers_.at(size_t(slot.sync.pipeline));
  const ir::Value *mask = copy.operands.size() > 2 ? copy.operands[2] : nullptr;
  if (buf.privateSlots)
    return copyIntoPrivateSlot(buf, scalar(slot.operands[0]), copy.operands[1], mask, *copy.operands[1]->layout);
  copyIntoSlot(buf, slotOffset(buf, fillSlot(buf, scalar(slot.operands[0]))), copy.operands[1], mask,
               *copy.operands[1]->layout);
}

} // namespace tle::nvptx
