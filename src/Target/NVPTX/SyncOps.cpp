// The GPU synchronisation and asynchronous-copy ops of the tile IR (ir::isGpuSyncOp, named
// barriers): mbarriers (PTX ISA §9.7.13.15), proxy fences (§9.7.13.4), named barriers
// (§9.7.13.1), cp.async with its groups (§9.7.9.25.3), TMA copies of the IR's tensor maps with
// their bulk groups (§9.7.9.25.5.2), each translated alone: the op says which threads run its
// instruction, and nothing here plans or places anything.
#include "Emitter.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/InlineAsm.h>

namespace tle::nvptx {

using ir::OpKind;

namespace {

/// `text` as a convergent inline-asm statement with side effects that clobbers memory (the
/// ops order memory; convergent keeps LLVM from duplicating a barrier into divergent paths).
void emitAsm(llvm::IRBuilder<> &B, const std::string &text, const std::string &constraints,
             const std::vector<llvm::Value *> &args) {
  std::vector<llvm::Type *> types;
  for (llvm::Value *a : args)
    types.push_back(a->getType());
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), types, false);
  std::string cons = constraints.empty() ? "~{memory}" : constraints + ",~{memory}";
  llvm::CallInst *call = B.CreateCall(fty, llvm::InlineAsm::get(fty, text, cons, /*hasSideEffects=*/true), args);
  call->addFnAttr(llvm::Attribute::Convergent);
}

} // namespace

llvm::Value *Emitter::mbarrierAddress(const ir::Value *bar) {
  return addressOperand(scalar(bar), ir::AddrSpace::Shared).first;
}

llvm::Value *Emitter::syncThreads(ir::Arrivers who) {
  switch (who) {
  case ir::Arrivers::Cta: return firstThread(tid_);
  case ir::Arrivers::Warp: return B.CreateICmpEQ(lane_, B.getInt32(0));
  case ir::Arrivers::Warpgroup: return B.CreateICmpEQ(B.CreateAnd(tid_, B.getInt32(127)), B.getInt32(0));
  case ir::Arrivers::Thread: break;
  }
  return B.getTrue();
}

void Emitter::emitSyncOp(const ir::Op &op) {
  const ir::SyncAttrs &a = op.sync;
  if (op.kind == OpKind::Barrier || op.kind == OpKind::BarrierArrive) {
    // bar.sync / bar.arrive with their id (and thread count) as immediates.
    std::string text = std::string(op.kind == OpKind::Barrier ? "bar.sync " : "bar.arrive ") +
                       std::to_string(a.barrierId) + (a.threads ? ", " + std::to_string(a.threads) : "") + ";";
    emitAsm(B, text, "", {});
    return;
  }
  bool sm80 = op.kind == OpKind::AsyncCopyMbarrierArrive || op.kind == OpKind::AsyncCommitGroup ||
              op.kind == OpKind::AsyncWaitGroup;
  if (smVersion() < (sm80 ? 80u : 90u))
    diags.fatal(op.loc, std::string("'") + ir::name(op.kind) + "' needs sm_" + (sm80 ? "80" : "90") +
                            " or newer; here the target is " + arch);
  llvm::Value *thread0 = nullptr;
  auto first = [&] { return thread0 ? thread0 : (thread0 = syncThreads(ir::Arrivers::Cta)); };
  switch (op.kind) {
  case OpKind::MbarrierInit:
    emitAsm(B, "@$1 mbarrier.init.shared::cta.b64 [$0], " + std::to_string(a.count) + ";", "r,b",
            {mbarrierAddress(op.operands[0]), first()});
    return;
  case OpKind::MbarrierArrive:
    return emitMbarrierArrive(op);
  case OpKind::MbarrierExpectTx:
    emitAsm(B, "@$1 mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$0], " + std::to_string(a.tx) + ";", "r,b",
            {mbarrierAddress(op.operands[0]), first()});
    return;
  case OpKind::MbarrierWait: {
    llvm::Value *phase = scalar(op.operands[1]);
    llvm::Value *parity = phase->getType()->isIntegerTy(1) ? B.CreateZExt(phase, B.getInt32Ty())
                                                            : B.CreateAnd(phase, B.getInt32(1));
    return waitMbarrierParity(mbarrierAddress(op.operands[0]), parity, op.loc, true, remotelyArrived(op.operands[0]));
  }
  case OpKind::MbarrierInval:
    emitAsm(B, "@$1 mbarrier.inval.shared::cta.b64 [$0];", "r,b", {mbarrierAddress(op.operands[0]), first()});
    return;
  case OpKind::FenceProxyAsync:
    emitAsm(B, op.sync.global ? "fence.proxy.async.global;" : "fence.proxy.async.shared::cta;", "", {});
    return;
  case OpKind::FenceMbarrierInit:
    emitAsm(B, "fence.mbarrier_init.release.cluster;", "", {});
    return;
  case OpKind::AsyncCopyMbarrierArrive:
    emitAsm(B, "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [$0];", "r", {mbarrierAddress(op.operands[0])});
    return;
  case OpKind::AsyncCommitGroup:
    emitAsm(B, "cp.async.commit_group;", "", {});
    return;
  case OpKind::AsyncWaitGroup:
    emitAsm(B, a.all ? std::string("cp.async.wait_all;") : "cp.async.wait_group " + std::to_string(a.pending) + ";", "",
            {});
    return;
  default:
    diags.fatal(op.loc, std::string("internal error: '") + ir::name(op.kind) + "' is not a synchronisation op");
  }
}

void Emitter::emitMbarrierArrive(const ir::Op &op) {
  const ir::SyncAttrs &a = op.sync;
  bool remote = op.operands.size() > 1;
  llvm::Value *addr = mbarrierAddress(op.operands[0]);
  if (remote) {
    // The same offset in the shared memory of the cluster's CTA `rank` (a 32-bit
    // shared::cluster address).
    auto *fty = llvm::FunctionType::get(B.getInt32Ty(), {B.getInt32Ty(), B.getInt32Ty()}, false);
    addr = B.CreateCall(fty, llvm::InlineAsm::get(fty, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r", false),
                        {addr, scalar(op.operands[1])});
  }
  std::string space = remote ? ".release.cluster.shared::cluster.b64" : ".shared::cta.b64";
  std::string text = a.tx ? "mbarrier.arrive.expect_tx" + space + " _, [$0], " + std::to_string(a.tx) + ";"
                          : "mbarrier.arrive" + space + " _, [$0]" +
                                (a.count != 1 ? ", " + std::to_string(a.count) : std::string()) + ";";
  if (a.per == ir::Arrivers::Thread || (a.per == ir::Arrivers::Cta && firstThreadOnly_)) // no predicate
    return emitAsm(B, text, "r", {addr});
  emitAsm(B, "@$1 " + text, "r,b", {addr, syncThreads(a.per)});
}

namespace {
/// The local_alloc that mbarrier pointer `v` (an addptr chain) points into, or null.
const ir::Op *allocOf(const ir::Value *v) {
  while (v && v->def && v->def->kind == OpKind::AddPtr)
    v = v->def->operands[0];
  return v && v->def && v->def->kind == OpKind::LocalAlloc ? v->def : nullptr;
}
} // namespace

bool Emitter::remotelyArrived(const ir::Value *bar) {
  if (!remoteMbarriersKnown_) {
    remoteMbarriersKnown_ = true;
    ir::walk(f.body, [&](ir::Op &op) {
      if (op.kind == OpKind::MbarrierArrive && op.operands.size() > 1)
        if (const ir::Op *a = allocOf(op.operands[0]))
          remoteMbarriers_.insert(a);
    });
  }
  const ir::Op *a = allocOf(bar);
  return a && remoteMbarriers_.count(a);
}

void Emitter::waitMbarrierParity(llvm::Value *bar, llvm::Value *parity, SourceLoc site, bool clobberMemory,
                                 bool cluster) {
  // try_wait returns after a time limit even when the phase is incomplete: loop until it is.
  auto *fty = llvm::FunctionType::get(B.getInt32Ty(), {B.getInt32Ty(), B.getInt32Ty()}, false);
  auto *tryWait = llvm::InlineAsm::get(
      fty,
      std::string("{ .reg .pred p; mbarrier.try_wait.parity") + (cluster ? ".acquire.cluster" : "") +
          ".shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }",
      clobberMemory ? "=r,r,r,~{memory}" : "=r,r,r", true);
  llvm::Value *start = f.boundedWaits ? globalTimer() : nullptr;
  llvm::BasicBlock *loop = llvm::BasicBlock::Create(ctx, "mbarrier.wait", kernel_);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx, "mbarrier.done", kernel_);
  B.CreateBr(loop);
  B.SetInsertPoint(loop);
  llvm::Value *ok = B.CreateICmpNE(B.CreateCall(fty, tryWait, {bar, parity}), B.getInt32(0));
  if (!start) {
    B.CreateCondBr(ok, done, loop);
    B.SetInsertPoint(done);
    return;
  }
  // A bounded wait: past the bound, lane 0 of each waiting warp says where, then all trap.
  llvm::BasicBlock *check = llvm::BasicBlock::Create(ctx, "mbarrier.check", kernel_);
  llvm::BasicBlock *expired = llvm::BasicBlock::Create(ctx, "mbarrier.expired", kernel_);
  B.CreateCondBr(ok, done, check);
  B.SetInsertPoint(check);
  llvm::Value *late = B.CreateICmpUGT(B.CreateSub(globalTimer(), start), B.getInt64(uint64_t(ir::kBoundedWaitNs)));
  B.CreateCondBr(late, expired, loop);
  B.SetInsertPoint(expired);
  std::string where = (site.file ? diags.sources().path(site.file) : std::string("unknown")) + ":" +
                      std::to_string(site.line);
  reportTimeout("tle: " + where + ": mbarrier wait timed out after " + std::to_string(ir::kBoundedWaitNs / 1000000000) +
                    " s: the phase of parity %u never completed (block (%u, %u, %u), thread %u)",
                parity);
  B.CreateBr(done); // not reached: the trap ends the kernel
  B.SetInsertPoint(done);
}

void Emitter::emitTmaOp(const ir::Op &op) {
  if (smVersion() < 90)
    diags.fatal(op.loc, std::string("'") + ir::name(op.kind) + "' needs sm_90 or newer; here the target is " + arch);
  smemAlign_ = std::max(smemAlign_, 1024); // the buffers' 1024-byte offsets must be absolute
  if (op.kind == OpKind::TmaStoreCommit || op.kind == OpKind::TmaStoreWait) {
    std::string text = op.kind == OpKind::TmaStoreCommit
                           ? "cp.async.bulk.commit_group;"
                           : std::string("cp.async.bulk.wait_group") + (op.sync.read ? ".read " : " ") +
                                 std::to_string(op.sync.pending) + ";";
    return onThreadZero([&] { emitAsm(B, text, "", {}); });
  }
  // Operands: the shared buffer, the tensor map's address, the coordinates innermost first
  // (PTX's order; the IR lists them outermost first), and a load's mbarrier.
  bool load = op.kind == OpKind::TmaLoad;
  size_t first = load ? 2 : 1, rank = op.operands.size() - first;
  std::vector<llvm::Value *> args = {addressOperand(scalar(op.operands[0]), ir::AddrSpace::Shared).first,
                                     tensorMapAddr(op.sync.map)};
  std::string coords;
  for (size_t i = 0; i < rank; ++i) {
    args.push_back(scalar(op.operands[op.operands.size() - 1 - i]));
    coords += (i ? ", $" : "$") + std::to_string(i + 2);
  }
  std::string cons = "r,l";
  for (size_t i = 0; i < rank; ++i)
    cons += ",r";
  std::string dims = std::to_string(rank) + "d";
  std::string text;
  if (load) {
    args.push_back(mbarrierAddress(op.operands[1]));
    cons += ",r";
    std::string mask;
    if (op.sync.multicast) { // every CTA of the cluster: ctaMask bits 0..n-1
      args.push_back(B.getInt16(static_cast<uint16_t>((1u << op.sync.multicast) - 1)));
      cons += ",h";
      mask = ", $" + std::to_string(rank + 3);
    }
    text = "cp.async.bulk.tensor." + dims + ".shared::cluster.global.tile.mbarrier::complete_tx::bytes" +
           (op.sync.multicast ? ".multicast::cluster" : "") + " [$0], [$1, {" + coords + "}], [$" +
           std::to_string(rank + 2) + "]" + mask + ";";
  } else {
    text = "cp.async.bulk.tensor." + dims + ".global.shared::cta.tile.bulk_group [$1, {" + coords + "}], [$0];";
  }
  // One thread in a branch: predicating the copy instead makes ptxas loop over the warp's lanes.
  // A multicast copy is issued by thread 0 of one CTA of the cluster.
  onThreadZero([&] {
    if (!op.sync.multicast)
      return emitAsm(B, text, cons, args);
    auto *rty = llvm::FunctionType::get(B.getInt32Ty(), false);
    llvm::Value *rank = B.CreateCall(rty, llvm::InlineAsm::get(rty, "mov.u32 $0, %cluster_ctarank;", "=r", false));
    auto *issue = llvm::BasicBlock::Create(ctx, "tma.multicast", kernel_);
    auto *done = llvm::BasicBlock::Create(ctx, "tma.multicast.done", kernel_);
    B.CreateCondBr(B.CreateICmpEQ(rank, B.getInt32(static_cast<uint32_t>(op.sync.issuer))), issue, done);
    B.SetInsertPoint(issue);
    emitAsm(B, text, cons, args);
    B.CreateBr(done);
    B.SetInsertPoint(done);
  });
}

int Emitter::asyncCopyBytes(const ir::Op &op) {
  const ir::Value *dst = op.operands[0], *src = op.operands[1];
  const ir::Value *mask = op.operands.size() > 2 ? op.operands[2] : nullptr;
  const ir::Layout &l = *src->layout;
  int eb = static_cast<int>(ir::storageBytes(src->type.elem.pointee));
  int64_t run = ir::contiguousRegisters(l, l.rank() - 1); // registers adjacent in the last dim
  if (op.sync.vec) {
    if (run * eb < op.sync.vec)
      diags.fatal(op.loc, "async_copy vec=" + std::to_string(op.sync.vec) + " needs " +
                              std::to_string(op.sync.vec / eb) + " contiguous elements per thread; its layout holds " +
                              std::to_string(run));
    return op.sync.vec;
  }
  int64_t elems = std::min<int64_t>(vectorWidth(src, mask), vectorWidth(dst, nullptr));
  int bytes = static_cast<int>(std::min<int64_t>(elems * eb, 16));
  while (bytes & (bytes - 1)) // a power of two
    bytes &= bytes - 1;
  if (bytes < 4)
    diags.fatal(op.loc, "async_copy copies 4, 8 or 16 bytes per cp.async, but the pointers are known contiguous and "
                        "aligned for " + std::to_string(bytes) + " bytes only (give vec= to promise more)");
  return bytes;
}

void Emitter::emitAsyncCopy(const ir::Op &op) {
  if (smVersion() < 80)
    diags.fatal(op.loc, "'async_copy' needs sm_80 or newer; here the target is " + arch);
  if (op.operands[0]->type.isScalar())
    return emitSlotCopy(op);
  const ir::Value *src = op.operands[1];
  const ir::Layout &l = *src->layout; // the layout pass gives every operand the source's
  std::vector<llvm::Value *> S = regsIn(src, l), D = regsIn(op.operands[0], l);
  std::vector<llvm::Value *> M;
  if (op.operands.size() > 2)
    M = regsIn(op.operands[2], l);
  const int bytes = asyncCopyBytes(op);
  const int perCopy = bytes / static_cast<int>(ir::storageBytes(src->type.elem.pointee));
  bool cg = op.sync.cache == ir::CopyCache::CG || (op.sync.cache == ir::CopyCache::Auto && bytes == 16);
  std::string text = std::string("cp.async.") + (cg ? "cg" : "ca") + ".shared.global [$0], [$1], " +
                     std::to_string(bytes) + ", $2;";
  // Each element once: one register of a replicated group, one thread of those holding it.
  llvm::Value *owner = ownerPredicate(l);
  bool everyThread = llvm::isa<llvm::ConstantInt>(owner) && llvm::cast<llvm::ConstantInt>(owner)->isOne();
  int dupMask = ir::replicatedRegisterBits(l);
  for (int g = 0; g < l.numRegs(); g += perCopy) {
    if (g & dupMask)
      continue;
    llvm::Value *dst = addressOperand(D[g], ir::AddrSpace::Shared).first;
    llvm::Value *from = B.CreatePtrToInt(S[g], B.getInt64Ty());
    // A masked-off vector reads 0 bytes and zero-fills its destination.
    llvm::Value *size = M.empty() ? B.getInt32(bytes) : B.CreateSelect(M[g], B.getInt32(bytes), B.getInt32(0));
    if (everyThread)
      emitAsm(B, text, "r,l,r", {dst, from, size});
    else
      emitAsm(B, "@$3 " + text, "r,l,r,b", {dst, from, size, owner});
  }
}

} // namespace tle::nvptx
