// The kernel's own shared buffers (tle.gpu.alloc) and thread-block clusters (tle.remote,
// tle.distributed_barrier): where the buffers live, how other CTAs' shared memory is addressed
// (PTX ISA §9.7.9.24, mapa), the cluster barrier (§9.7.13.3, barrier.cluster), and the CTA
// barriers that order the threads' accesses to the buffers.
#include "Emitter.h"

#include <llvm/IR/InlineAsm.h>

#include <optional>

namespace tle::nvptx {

using ir::AddrSpace;
using ir::OpKind;

const char *Emitter::stateSpace(AddrSpace s) {
  switch (s) {
  case AddrSpace::Global: return "global";
  case AddrSpace::Shared: return "shared";
  case AddrSpace::Cluster: return "shared::cluster";
  }
  return "global";
}

std::pair<llvm::Value *, const char *> Emitter::addressOperand(llvm::Value *p, AddrSpace s) {
  if (s == AddrSpace::Shared)
    return {B.CreatePtrToInt(p, B.getInt32Ty()), "r"};
  return {B.CreatePtrToInt(p, B.getInt64Ty()), "l"};
}

void Emitter::planUserBuffers() {
  int64_t at = 0;
  size_t i = 0;
  std::optional<size_t> lastAccess, lastBarrier, anyBarrier; // top-level ops holding them
  for (auto &top : f.body.ops) {
    ir::Op *t = top.get();
    auto visit = [&](ir::Op &op) {
      bool clusterAccess = (op.kind == OpKind::Load || op.kind == OpKind::Store || op.kind == OpKind::AtomicRMW ||
                            op.kind == OpKind::AtomicCAS) &&
                           op.operands[0]->type.elem.space == AddrSpace::Cluster;
      if (clusterAccess)
        lastAccess = i;
      if (op.kind == OpKind::ClusterBarrier)
        anyBarrier = i;
      if (op.kind == OpKind::ClusterBarrier && &op == t) // one every path reaches (not in an if or a loop)
        lastBarrier = i;
      if (op.kind != OpKind::LocalAlloc)
        return;
      int64_t bytes = ir::numElements(op.ints) * ir::storageBytes(op.result()->type.elem.pointee);
      userOffsets_[&op] = at;
      at += (bytes + 15) / 16 * 16;
    };
    visit(*t);
    for (auto &r : t->regions)
      ir::walk(*r, visit);
    ++i;
  }
  userBytes_ = at ? (at + 1023) / 1024 * 1024 : 0;
  // A cluster barrier at the top level (so on every path) after the last access already keeps
  // every CTA's shared memory alive until all accesses are done; otherwise the exit needs one
  // (clusterExitArrive), after the last access and the last barrier of any kind (an arrive
  // must not come before a barrier's own arrive and wait).
  remoteAccess_ = lastAccess && (!lastBarrier || *lastBarrier <= *lastAccess);
  clusterExitArriveAfter_ = remoteAccess_ ? std::max(*lastAccess, anyBarrier.value_or(0)) : 0;
}

void Emitter::clusterExitArrive() {
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
  B.CreateCall(fty, llvm::InlineAsm::get(fty, "barrier.cluster.arrive.release;", "~{memory}", true));
}

void Emitter::clusterExitWait() {
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
  B.CreateCall(fty, llvm::InlineAsm::get(fty, "barrier.cluster.wait.acquire;", "~{memory}", true));
}

void Emitter::emitLocalAlloc(const ir::Op &op) {
  smemRaw(B.getInt32(0)); // creates the shared buffer's symbol
  vals_[op.result()] = {B.CreateGEP(B.getInt8Ty(), smem_, B.getInt32(static_cast<uint32_t>(userOffsets_.at(&op))))};
}

void Emitter::emitRemotePtr(const ir::Op &op) {
  if (smVersion() < 90)
    diags.fatal(op.loc, "tle.remote needs thread-block clusters (sm_90 or newer); here the target is " + arch);
  const ir::Value *ptr = op.operands[0];
  bool tile = ptr->type.isTile();
  std::vector<llvm::Value *> P = tile ? regsIn(ptr, *op.result()->layout) : std::vector<llvm::Value *>{scalar(ptr)};
  llvm::Value *rank = scalar(op.operands[1]);
  llvm::Type *i64 = B.getInt64Ty();
  auto *fty = llvm::FunctionType::get(i64, {i64, B.getInt32Ty()}, false);
  auto *mapa = llvm::InlineAsm::get(fty, "mapa.shared::cluster.u64 $0, $1, $2;", "=l,l,r", /*hasSideEffects=*/false);
  llvm::Type *rty = llvmType(op.result()->type.elem);
  std::vector<llvm::Value *> out;
  for (llvm::Value *p : P)
    out.push_back(B.CreateIntToPtr(B.CreateCall(fty, mapa, {B.CreatePtrToInt(p, i64), rank}), rty));
  vals_[op.result()] = out;
}

void Emitter::emitClusterBarrier(SourceLoc loc) {
  if (smVersion() < 90)
    diags.fatal(loc, "tle.distributed_barrier over a cluster needs sm_90 or newer; here the target is " + arch);
  // Not the .aligned forms: the barrier may sit under a branch that only some warps take.
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
  B.CreateCall(fty, llvm::InlineAsm::get(fty, "barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;",
                                         "~{memory}", /*hasSideEffects=*/true));
  sharedWritePending_ = sharedReadPending_ = sharedAtomicPending_ = false; // it is a CTA barrier too
}

void Emitter::orderSharedAccess(const ir::Value *ptr, SharedAccess kind) {
  if (ptr->type.elem.space != AddrSpace::Shared)
    return;
  // Loads after loads and atomics after atomics need no order; anything else may touch what
  // another thread touched. A scalar store is thread 0's alone, so one after another keeps
  // program order without a barrier.
  bool scalarStore = kind == SharedAccess::Write && ptr->type.isScalar();
  bool conflict = false;
  switch (kind) {
  case SharedAccess::Read: conflict = sharedWritePending_ || sharedAtomicPending_; break;
  case SharedAccess::Write:
    conflict = sharedReadPending_ || sharedAtomicPending_ || (sharedWritePending_ && !(scalarStore && scalarStoresOnly_));
    break;
  case SharedAccess::Atomic: conflict = sharedReadPending_ || sharedWritePending_; break;
  }
  if (conflict)
    barrier();
  if (kind == SharedAccess::Write) {
    scalarStoresOnly_ = (!sharedWritePending_ || scalarStoresOnly_) && scalarStore;
    sharedWritePending_ = true;
  } else {
    (kind == SharedAccess::Read ? sharedReadPending_ : sharedAtomicPending_) = true;
  }
}

void Emitter::orderSharedAroundRegions(const ir::Op &op, bool after) {
  bool kinds[3] = {false, false, false}; // read, write, atomic
  for (auto &r : op.regions)
    ir::walk(*r, [&](ir::Op &o) {
      bool access = o.kind == OpKind::Load || o.kind == OpKind::Store || o.kind == OpKind::AtomicRMW ||
                    o.kind == OpKind::AtomicCAS;
      if (access && o.operands[0]->type.elem.space == AddrSpace::Shared)
        kinds[o.kind == OpKind::Load ? 0 : o.kind == OpKind::Store ? 1 : 2] = true;
    });
  int count = kinds[0] + kinds[1] + kinds[2];
  if (!count)
    return;
  if (after) { // what any iteration or branch may have left pending
    sharedReadPending_ |= kinds[0];
    sharedAtomicPending_ |= kinds[2];
    if (kinds[1]) {
      sharedWritePending_ = true;
      scalarStoresOnly_ = false;
    }
    return;
  }
  if (sharedReadPending_ || sharedWritePending_ || sharedAtomicPending_)
    barrier();
  // The previous iteration's accesses, for the first one of the next (a lone kind that needs
  // no order with itself, loads or atomics, needs none).
  if (op.kind != OpKind::If && (count > 1 || kinds[1])) {
    sharedReadPending_ = kinds[0];
    sharedWritePending_ = kinds[1];
    sharedAtomicPending_ = kinds[2];
    scalarStoresOnly_ = false;
  }
}

} // namespace tle::nvptx
