// The kernel's own shared buffers (tle.gpu.alloc) and thread-block clusters (tle.remote,
// tle.distributed_barrier): a buffer's address at the offset allocate-shared gave it, how other
// CTAs' shared memory is addressed (PTX ISA §9.7.9.24, mapa) and the cluster barrier (§9.7.13.3,
// barrier.cluster), whole or split.
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

void Emitter::emitClusterArrive(const ir::Op &op) {
  if (smVersion() < 90)
    diags.fatal(op.loc, "a cluster barrier needs sm_90 or newer; here the target is " + arch);
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
  const char *text = op.sync.relaxed ? "barrier.cluster.arrive.relaxed;" : "barrier.cluster.arrive.release;";
  B.CreateCall(fty, llvm::InlineAsm::get(fty, text, "~{memory}", true));
}

void Emitter::emitClusterWait(SourceLoc loc) {
  if (smVersion() < 90)
    diags.fatal(loc, "a cluster barrier needs sm_90 or newer; here the target is " + arch);
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
  B.CreateCall(fty, llvm::InlineAsm::get(fty, "barrier.cluster.wait.acquire;", "~{memory}", true));
}

void Emitter::emitLocalAlloc(const ir::Op &op) {
  if (op.sharedOffset < 0 || op.sharedOffset >= f.sharedBytes)
    diags.fatal(op.loc, "internal error: shared buffer not placed by allocate-shared");
  smemRaw(B.getInt32(0)); // creates the shared buffer's symbol
  vals_[op.result()] = {B.CreateGEP(B.getInt8Ty(), smem_, B.getInt32(static_cast<uint32_t>(op.sharedOffset)))};
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
}

} // namespace tle::nvptx
