// The kernel's own shared buffers (tle.gpu.alloc) and thread-block clusters (tle.remote,
// tle.distributed_barrier): a buffer's address at the offset allocate-shared gave it, how other
// CTAs' shared memory is addressed (PTX ISA §9.7.9.24, mapa) and the cluster barrier (§9.7.13.3,
// barrier.cluster), whole or split; and the grid-wide barrier of a cooperative launch.
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

void Emitter::emitGridBarrier() {
  // The counter: one u32 of the module in global memory, zero at load. Each barrier adds 2^31 in
  // all (CTA 0: 2^31 - (CTAs - 1), every other CTA: 1), so its top bit flips once every CTA has
  // arrived, whatever the count before; thread 0 of each CTA waits for that flip.
  llvm::Type *i32 = B.getInt32Ty();
  llvm::GlobalVariable *counter = m.getNamedGlobal("__tle_grid_barrier");
  if (!counter)
    counter = new llvm::GlobalVariable(m, i32, false, llvm::GlobalValue::InternalLinkage, B.getInt32(0),
                                       "__tle_grid_barrier", nullptr, llvm::GlobalValue::NotThreadLocal, 1);
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt64Ty()}, false);
  // The labels are local to the braces, so the block may appear several times in a kernel.
  const char *text = "{\n\t"
                     ".reg .pred %gb_p;\n\t"
                     ".reg .b32 %gb_n, %gb_d, %gb_inc, %gb_old, %gb_cur;\n\t"
                     "bar.sync 0;\n\t"
                     "mov.u32 %gb_d, %tid.x;\n\t"
                     "setp.ne.u32 %gb_p, %gb_d, 0;\n\t"
                     "@%gb_p bra GB_DONE;\n\t"
                     "mov.u32 %gb_n, %nctaid.x;\n\t"
                     "mov.u32 %gb_d, %nctaid.y;\n\t"
                     "mul.lo.u32 %gb_n, %gb_n, %gb_d;\n\t"
                     "mov.u32 %gb_d, %nctaid.z;\n\t"
                     "mul.lo.u32 %gb_n, %gb_n, %gb_d;\n\t"
                     "mov.u32 %gb_d, %ctaid.x;\n\t"
                     "mov.u32 %gb_cur, %ctaid.y;\n\t"
                     "or.b32 %gb_d, %gb_d, %gb_cur;\n\t"
                     "mov.u32 %gb_cur, %ctaid.z;\n\t"
                     "or.b32 %gb_d, %gb_d, %gb_cur;\n\t"
                     "setp.eq.u32 %gb_p, %gb_d, 0;\n\t"
                     "mov.u32 %gb_inc, 1;\n\t"
                     "@%gb_p sub.u32 %gb_inc, 0x80000001, %gb_n;\n\t"
                     "atom.add.release.gpu.global.u32 %gb_old, [$0], %gb_inc;\n"
                     "GB_WAIT:\n\t"
                     "ld.acquire.gpu.global.u32 %gb_cur, [$0];\n\t"
                     "xor.b32 %gb_cur, %gb_cur, %gb_old;\n\t"
                     "setp.lt.s32 %gb_p, %gb_cur, 0;\n\t"
                     "@!%gb_p bra GB_WAIT;\n"
                     "GB_DONE:\n\t"
                     "bar.sync 0;\n\t"
                     "}";
  B.CreateCall(fty, llvm::InlineAsm::get(fty, text, "l,~{memory}", /*hasSideEffects=*/true),
               {B.CreatePtrToInt(counter, B.getInt64Ty())});
}

void Emitter::emitSubmeshBarrier(const ir::Op &op) {
  if (smVersion() < 90)
    diags.fatal(op.loc, "tle.distributed_barrier over a sub-mesh needs sm_90 or newer; here the target is " + arch);
  const std::vector<int64_t> &members = op.submeshMembers();
  llvm::Type *i32 = B.getInt32Ty();
  auto *rty = llvm::FunctionType::get(i32, false);
  llvm::Value *rank = B.CreateCall(rty, llvm::InlineAsm::get(rty, "mov.u32 $0, %cluster_ctarank;", "=r", false));
  llvm::Value *member = B.getFalse();
  for (int64_t m : members)
    member = B.CreateOr(member, B.CreateICmpEQ(rank, B.getInt32(static_cast<uint32_t>(m))));
  // The leader's 2^31 - (members - 1) and the others' 1 sum to 2^31 a round: the top bit of the
  // counter flips once all have arrived, whatever the round (its low 31 bits return to zero).
  const uint32_t lead = 0x80000000u - static_cast<uint32_t>(members.size() - 1);
  llvm::Value *inc = B.CreateSelect(B.CreateICmpEQ(rank, B.getInt32(static_cast<uint32_t>(members[0]))),
                                    B.getInt32(lead), B.getInt32(1));
  auto *mty = llvm::FunctionType::get(i32, {i32, i32}, false);
  llvm::Value *leader =
      B.CreateCall(mty, llvm::InlineAsm::get(mty, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r", false),
                   {addressOperand(scalar(op.operands[0]), ir::AddrSpace::Shared).first,
                    B.getInt32(static_cast<uint32_t>(members[0]))});
  llvm::Value *arrive = B.CreateAnd(member, firstThread(tid_));
  // The labels are local to the braces, so the block may appear several times in a kernel.
  const char *text = "{\n\t"
                     ".reg .pred %sb_p;\n\t"
                     ".reg .b32 %sb_old, %sb_cur;\n\t"
                     "bar.sync 0;\n\t"
                     "@!$2 bra SB_DONE;\n\t"
                     "atom.release.cluster.shared::cluster.add.u32 %sb_old, [$0], $1;\n"
                     "SB_WAIT:\n\t"
                     "ld.acquire.cluster.shared::cluster.u32 %sb_cur, [$0];\n\t"
                     "xor.b32 %sb_cur, %sb_cur, %sb_old;\n\t"
                     "setp.lt.s32 %sb_p, %sb_cur, 0;\n\t"
                     "@!%sb_p bra SB_WAIT;\n"
                     "SB_DONE:\n\t"
                     "bar.sync 0;\n\t"
                     "}";
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), {i32, i32, B.getInt1Ty()}, false);
  B.CreateCall(fty, llvm::InlineAsm::get(fty, text, "r,r,b,~{memory}", /*hasSideEffects=*/true), {leader, inc, arrive});
}

void Emitter::emitDeviceBarrier(const ir::Op &op) {
  // Every CTA of this GPU arrives (grid barrier); CTA 0's thread 0 then exchanges an epoch with
  // every peer through the communicator's signal area, whose words are addressed by NCCL's rule
  // for a symmetric window (ncclGetPeerPointer: the window record's lsaFlatBase at byte 8, lsaRank
  // at 16, worldRank at 20, stride4G at 24; peer p's copy at lsaFlatBase + ((lsaRank + p -
  // worldRank) * stride4G << 32)); a second grid barrier holds the other CTAs until it is done.
  // The fences make the grid's writes, ordered before thread 0 by the grid barrier, visible to
  // the peers at system scope, and the peers' writes visible to the grid after.
  emitGridBarrier();
  llvm::Value *comm = B.CreatePtrToInt(scalar(op.operands[0]), B.getInt64Ty());
  const char *text = "{\n\t"
                     ".reg .pred %db_p;\n\t"
                     ".reg .b32 %db_t, %db_rank, %db_n, %db_slots, %db_peer, %db_lsa, %db_world, %db_stride, %db_i;\n\t"
                     ".reg .b64 %db_win, %db_base, %db_own, %db_addr, %db_e, %db_cur, %db_off;\n\t"
                     "mov.u32 %db_t, %tid.x;\n\t"
                     "mov.u32 %db_i, %ctaid.x;\n\t"
                     "or.b32 %db_t, %db_t, %db_i;\n\t"
                     "mov.u32 %db_i, %ctaid.y;\n\t"
                     "or.b32 %db_t, %db_t, %db_i;\n\t"
                     "mov.u32 %db_i, %ctaid.z;\n\t"
                     "or.b32 %db_t, %db_t, %db_i;\n\t"
                     "setp.ne.u32 %db_p, %db_t, 0;\n\t"
                     "@%db_p bra DB_DONE;\n\t"
                     "ld.global.u32 %db_rank, [$0];\n\t"
                     "ld.global.u32 %db_n, [$0+4];\n\t"
                     "ld.global.u64 %db_win, [$0+8];\n\t"
                     "ld.global.u32 %db_slots, [$0+16];\n\t"
                     "ld.global.u64 %db_base, [%db_win+8];\n\t"
                     "ld.global.u32 %db_lsa, [%db_win+16];\n\t"
                     "ld.global.u32 %db_world, [%db_win+20];\n\t"
                     "ld.global.u32 %db_stride, [%db_win+24];\n\t"
                     "mul.lo.u32 %db_i, %db_lsa, %db_stride;\n\t"
                     "cvt.u64.u32 %db_off, %db_i;\n\t"
                     "shl.b64 %db_off, %db_off, 32;\n\t"
                     "add.u64 %db_own, %db_base, %db_off;\n\t"
                     "add.u32 %db_i, %db_slots, %db_n;\n\t"
                     "mul.wide.u32 %db_off, %db_i, 8;\n\t"
                     "add.u64 %db_addr, %db_own, %db_off;\n\t"
                     "ld.global.u64 %db_e, [%db_addr];\n\t"
                     "add.u64 %db_e, %db_e, 1;\n\t"
                     "fence.acq_rel.sys;\n\t"
                     "mov.u32 %db_peer, 0;\n"
                     "DB_ARRIVE:\n\t"
                     "setp.ge.u32 %db_p, %db_peer, %db_n;\n\t"
                     "@%db_p bra DB_WAITS;\n\t"
                     "setp.eq.u32 %db_p, %db_peer, %db_rank;\n\t"
                     "@%db_p bra DB_NEXT_ARRIVE;\n\t"
                     "add.u32 %db_i, %db_lsa, %db_peer;\n\t"
                     "sub.u32 %db_i, %db_i, %db_world;\n\t"
                     "mul.lo.u32 %db_i, %db_i, %db_stride;\n\t"
                     "cvt.u64.u32 %db_off, %db_i;\n\t"
                     "shl.b64 %db_off, %db_off, 32;\n\t"
                     "add.u64 %db_addr, %db_base, %db_off;\n\t"
                     "add.u32 %db_i, %db_slots, %db_rank;\n\t"
                     "mul.wide.u32 %db_off, %db_i, 8;\n\t"
                     "add.u64 %db_addr, %db_addr, %db_off;\n\t"
                     "st.release.sys.global.u64 [%db_addr], %db_e;\n"
                     "DB_NEXT_ARRIVE:\n\t"
                     "add.u32 %db_peer, %db_peer, 1;\n\t"
                     "bra DB_ARRIVE;\n"
                     "DB_WAITS:\n\t"
                     "mov.u32 %db_peer, 0;\n"
                     "DB_WAIT:\n\t"
                     "setp.ge.u32 %db_p, %db_peer, %db_n;\n\t"
                     "@%db_p bra DB_END;\n\t"
                     "setp.eq.u32 %db_p, %db_peer, %db_rank;\n\t"
                     "@%db_p bra DB_NEXT_WAIT;\n\t"
                     "add.u32 %db_i, %db_slots, %db_peer;\n\t"
                     "mul.wide.u32 %db_off, %db_i, 8;\n\t"
                     "add.u64 %db_addr, %db_own, %db_off;\n"
                     "DB_SPIN:\n\t"
                     "ld.acquire.sys.global.u64 %db_cur, [%db_addr];\n\t"
                     "setp.lt.u64 %db_p, %db_cur, %db_e;\n\t"
                     "@%db_p bra DB_SPIN;\n"
                     "DB_NEXT_WAIT:\n\t"
                     "add.u32 %db_peer, %db_peer, 1;\n\t"
                     "bra DB_WAIT;\n"
                     "DB_END:\n\t"
                     "fence.acq_rel.sys;\n\t"
                     "add.u32 %db_i, %db_slots, %db_n;\n\t"
                     "mul.wide.u32 %db_off, %db_i, 8;\n\t"
                     "add.u64 %db_addr, %db_own, %db_off;\n\t"
                     "st.global.u64 [%db_addr], %db_e;\n"
                     "DB_DONE:\n\t"
                     "}";
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt64Ty()}, false);
  B.CreateCall(fty, llvm::InlineAsm::get(fty, text, "l,~{memory}", /*hasSideEffects=*/true), {comm});
  emitGridBarrier();
}

void Emitter::emitSignalWait(const ir::Op &op) {
  llvm::Value *slot = B.CreatePtrToInt(scalar(op.operands[0]), B.getInt64Ty());
  const char *text = "{\n\t"
                     ".reg .pred %sw_p;\n\t"
                     ".reg .b32 %sw_t;\n\t"
                     ".reg .b64 %sw_cur, %sw_neg;\n\t"
                     "mov.u32 %sw_t, %tid.x;\n\t"
                     "setp.ne.u32 %sw_p, %sw_t, 0;\n\t"
                     "@%sw_p bra SW_DONE;\n"
                     "SW_SPIN:\n\t"
                     "ld.acquire.sys.global.u64 %sw_cur, [$0];\n\t"
                     "setp.lt.u64 %sw_p, %sw_cur, $1;\n\t"
                     "@%sw_p bra SW_SPIN;\n\t"
                     "@!$2 bra SW_DONE;\n\t"
                     "neg.s64 %sw_neg, $1;\n\t"
                     "red.relaxed.sys.global.add.u64 [$0], %sw_neg;\n"
                     "SW_DONE:\n\t"
                     "bar.sync 0;\n\t"
                     "}";
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt64Ty(), B.getInt64Ty(), B.getInt1Ty()}, false);
  B.CreateCall(fty, llvm::InlineAsm::get(fty, text, "l,l,b,~{memory}", /*hasSideEffects=*/true),
               {slot, scalar(op.operands[1]), B.getInt1(!op.sync.keep)});
}

} // namespace tle::nvptx
