// Shared matrices and warp partitions of the tile IR: local_load / local_store in a buffer's
// layout (row-major or the NVMMA swizzle) and warp_specialize (ir::OpKind::WarpSpecialize).
#include "Emitter.h"

#include <llvm/IR/InlineAsm.h>

#include <algorithm>

namespace tle::nvptx {

using ir::OpKind;

void Emitter::emitLocalMove(const ir::Op &op) {
  bool load = op.kind == OpKind::LocalLoad;
  const ir::Value *tile = load ? op.result() : op.operands[1];
  const ir::Op *alloc = ir::sharedBuffer(op.operands[0]);
  std::array<int64_t, 2> m = ir::matrixShape(*alloc);
  const int swizzle = alloc->allocSwizzle();
  const ir::Layout &l = *tile->layout;
  const unsigned eb = ir::storageBytes(tile->type.dtype());
  const unsigned last = static_cast<unsigned>(tile->type.rank() - 1);
  // Registers contiguous along the row go as one vector of up to 16 bytes: within a 16-byte
  // chunk the swizzle keeps elements in order (it permutes whole chunks).
  const int vec = std::max(1, std::min<int>(ir::contiguousRegisters(l, last), static_cast<int>(16 / eb)));
  const int dupMask = ir::replicatedRegisterBits(l);
  llvm::Type *ety = llvmType(tile->type.elem);
  llvm::Type *vty = vec > 1 ? static_cast<llvm::Type *>(llvm::FixedVectorType::get(ety, vec)) : ety;
  llvm::Value *base = scalar(op.operands[0]);
  std::vector<llvm::Value *> out(static_cast<size_t>(l.numRegs()));
  const std::vector<llvm::Value *> *in = load ? nullptr : &regs(tile);
  for (int i = 0; i < l.numRegs(); i += vec) {
    if (!load && (i & dupMask))
      continue;
    std::vector<llvm::Value *> c = coord(l, i);
    llvm::Value *row = last ? c[0] : B.getInt32(0), *col = c[last];
    llvm::Value *off = swizzle ? swizzledOffset(row, col, m[0], swizzle, eb)
                               : B.CreateMul(B.CreateAdd(B.CreateMul(row, B.getInt32(static_cast<uint32_t>(m[1]))), col),
                                             B.getInt32(eb));
    llvm::Value *ptr = B.CreateGEP(B.getInt8Ty(), base, off);
    llvm::Align align(vec * eb);
    if (load) {
      llvm::Value *x = B.CreateAlignedLoad(vty, ptr, align);
      for (int e = 0; e < vec; ++e)
        out[size_t(i + e)] = vec > 1 ? B.CreateExtractElement(x, uint64_t(e)) : x;
      continue;
    }
    llvm::Value *x = vec > 1 ? llvm::UndefValue::get(vty) : (*in)[size_t(i)];
    for (int e = 0; vec > 1 && e < vec; ++e)
      x = B.CreateInsertElement(x, (*in)[size_t(i + e)], uint64_t(e));
    B.CreateAlignedStore(x, ptr, align);
  }
  if (load)
    vals_[op.result()] = out;
}

void Emitter::emitWarpSpecialize(const ir::Op &op) {
  const std::vector<int64_t> &warps = op.partitionWarps(), &budgets = op.partitionRegisters();
  if (!budgets.empty() && smVersion() < 90)
    diags.fatal(op.loc, "register budgets (setmaxnreg) need sm_90 or newer; here the target is " + arch);
  // setmaxnreg moves a warpgroup's per-thread registers from the kernel's maxnreg (f.maxRegisters,
  // which the warp-specialize pass set) to its budget: .inc above, .dec below (PTX ISA §9.7.17.1).
  auto setRegisters = [&](size_t partition) {
    if (budgets.empty() || budgets[partition] == f.maxRegisters)
      return;
    auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
    std::string text = std::string("setmaxnreg.") + (budgets[partition] > f.maxRegisters ? "inc" : "dec") +
                       ".sync.aligned.u32 " + std::to_string(budgets[partition]) + ";";
    B.CreateCall(fty, llvm::InlineAsm::get(fty, text, "", true));
  };
  auto *join = llvm::BasicBlock::Create(ctx, "ws.join", kernel_);
  int first = f.numWarps;
  std::vector<llvm::BasicBlock *> bodies;
  for (size_t r = 0; r < op.regions.size(); ++r)
    bodies.push_back(llvm::BasicBlock::Create(ctx, "ws.partition" + std::to_string(r), kernel_));
  // Dispatch on the warp id: warps [0, num_warps) run region 0, the next warps[0] region 1, ...
  for (size_t r = 1; r < op.regions.size(); ++r) {
    auto *next = llvm::BasicBlock::Create(ctx, "ws.dispatch", kernel_);
    B.CreateCondBr(B.CreateICmpULT(warp_, B.getInt32(static_cast<uint32_t>(first))), bodies[r - 1], next);
    B.SetInsertPoint(next);
    first += static_cast<int>(warps[r - 1]);
  }
  B.CreateBr(bodies.back());
  first = 0;
  llvm::Value *const tid = tid_, *const warp = warp_;
  for (size_t r = 0; r < op.regions.size(); ++r) {
    int n = r ? static_cast<int>(warps[r - 1]) : f.numWarps;
    B.SetInsertPoint(bodies[r]);
    setRegisters(r);
    partitionBarrier_ = static_cast<int>(r) + 1;
    partitionThreads_ = 32 * n;
    // Within a partition, thread and warp indices count from its first thread: a tile's layout
    // (over num_warps warps) maps the partition's warps as the default partition's, and the
    // partition's "thread 0" is its first thread.
    tid_ = first ? B.CreateSub(tid, B.getInt32(static_cast<uint32_t>(32 * first)), "ptid") : tid;
    warp_ = first ? B.CreateSub(warp, B.getInt32(static_cast<uint32_t>(first)), "pwarp") : warp;
    emitBlock(*op.regions[r]);
    if (r == 0)
      B.CreateBr(join);
    else
      B.CreateRetVoid(); // a worker's warps are done
    first += n;
  }
  // The default partition goes on alone: its barriers stay its named barrier.
  B.SetInsertPoint(join);
  tid_ = tid;
  warp_ = warp;
  partitionBarrier_ = 1;
  partitionThreads_ = 32 * f.numWarps;
}

} // namespace tle::nvptx
