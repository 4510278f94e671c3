// TMA stores of tensor-descriptor tiles (PTX ISA §9.7.9.25.5.2, cp.async.bulk.tensor from shared to
// global) and the swizzled shared-memory stores that stage them and wgmma operands.
#include "Emitter.h"
#include "tle/Transforms/TensorMaps.h"

#include <llvm/IR/InlineAsm.h>

#include <algorithm>
#include <functional>

namespace tle::nvptx {

using ir::OpKind;

void Emitter::emitTmaStore(const ir::Op &op, int map) {
  const ir::Value *val = op.operands[1];
  const int64_t rows = op.blockShape()[0], cols = op.blockShape()[1];
  const unsigned eb = ir::storageBytes(val->type.dtype());
  const int swizzle = transforms::tmaStoreSwizzle(op);
  const int64_t perRow = swizzle / eb; // columns of one box
  const int64_t boxes = cols / perRow, boxBytes = rows * swizzle;
  auto staging = tmaStaging_.find(&op);
  const bool inLoop = staging != tmaStaging_.end();
  TmaStaging st;
  if (inLoop) {
    st = staging->second;
    scratchBase_ = 0; // its own staging area, at st.offset of the pipeline area
  } else { // scratch space for the whole tile
    assertScratchFits(rows * cols * eb);
    st.bytes = rows * cols * eb;
    st.boxes = static_cast<int>(boxes);
  }
  const size_t rank = op.blockShape().size();
  llvm::Value *y = B.CreateTrunc(scalar(op.operands[4 + 2 * rank]), B.getInt32Ty());
  llvm::Value *x = B.CreateTrunc(scalar(op.operands[4 + 2 * rank + 1]), B.getInt32Ty());
  // Byte offset of the staging area as smemPtr takes it (relative to the scratch base).
  const int64_t area = inLoop ? st.offset - scratchBase_ : 0;
  auto *vty = llvm::FunctionType::get(B.getVoidTy(), false);
  auto *cty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt64Ty(), B.getInt32Ty(), B.getInt32Ty(), B.getInt32Ty()}, false);
  auto *copy = llvm::InlineAsm::get(
      cty, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [$0, {$1, $2}], [$3];", "l,r,r,r", true);
  const int chunks = static_cast<int>(boxes / st.boxes);
  for (int c = 0; c < chunks; ++c) {
    const int64_t buffer = inLoop ? (c % st.buffers) * st.bytes : 0;
    // The buffer's earlier copies (a box ago with two buffers, a loop iteration ago with one)
    // have read it. Top level: earlier readers of the scratch area are done.
    if (inLoop)
      onThreadZero([&] {
        B.CreateCall(vty, llvm::InlineAsm::get(vty, "cp.async.bulk.wait_group.read " + std::to_string(st.buffers - 1) + ";",
                                               "", true));
      });
    barrier();
    // The tile (or box c of it) in the layout TMA reads with this swizzle (the wgmma operand
    // layout); box c of the tile lands at the start of the buffer.
    storeSwizzled(*val->layout, regs(val), val->type, 1, rows, swizzle, area + buffer - c * st.bytes,
                  st.boxes == boxes ? -1 : c);
    // st.shared -> the bulk copy's reads through the async proxy (PTX ISA §9.7.13.4.1 fence.proxy.async).
    B.CreateCall(vty, llvm::InlineAsm::get(vty, "fence.proxy.async.shared::cta;", "", true));
    // Generic global writes elsewhere in the kernel (to these addresses, perhaps) come before
    // the bulk copy's writes through the async proxy only across a proxy fence.
    if (genericGlobalWrites_)
      B.CreateCall(vty, llvm::InlineAsm::get(vty, "fence.proxy.async.global;", "", true));
    barrier();
    llvm::Value *base = B.CreatePtrToInt(smemPtr(B.getInt32(static_cast<uint32_t>(area + buffer))), B.getInt32Ty());
    onThreadZero([&] {
      for (int64_t blk = 0; blk < st.boxes; ++blk)
        B.CreateCall(cty, copy,
                     {tensorMapAddr(map), B.CreateAdd(x, B.getInt32(static_cast<uint32_t>((c * st.boxes + blk) * perRow))), y,
                      B.CreateAdd(base, B.getInt32(static_cast<uint32_t>(blk * boxBytes)))});
      B.CreateCall(vty, llvm::InlineAsm::get(vty, "cp.async.bulk.commit_group;", "", true));
      // At the top level the staging area may be reused (or the block exit) once the copies
      // have read it.
      if (!inLoop)
        B.CreateCall(vty, llvm::InlineAsm::get(vty, "cp.async.bulk.wait_group.read 0;", "", true));
    });
  }
}

void Emitter::onThreadZero(const std::function<void()> &body) {
  if (firstThreadOnly_)
    return body();
  auto *then = llvm::BasicBlock::Create(ctx, "tma.store", kernel_);
  auto *done = llvm::BasicBlock::Create(ctx, "tma.store.done", kernel_);
  B.CreateCondBr(firstThread(tid_), then, done);
  B.SetInsertPoint(then);
  body();
  B.CreateBr(done);
  B.SetInsertPoint(done);
}

void Emitter::storeSwizzled(const ir::Value *v, int contig, int64_t rows, int swizzle, int64_t base) {
  storeSwizzled(*v->layout, regs(v), v->type, contig, rows, swizzle, base);
}

std::vector<llvm::Value *> Emitter::slotRegisters(const ir::Value *v, const ir::Layout &l) {
  const AsyncBuffer &buf = asyncBuffer(v);
  llvm::Type *ety = llvmType(v->type.elem);
  llvm::Value *slot = asyncSlotAddr(v);
  std::vector<llvm::Value *> out(static_cast<size_t>(l.numRegs()));
  const auto &lw = laneWarpCoord(l);
  // A per-thread address (lane and warp bits) plus a constant per register.
  llvm::Value *thread = B.CreateAdd(
      slot, B.CreateMul(B.CreateAdd(B.CreateMul(lw[0], B.getInt32(static_cast<uint32_t>(buf.ld))), lw[1]),
                        B.getInt32(buf.elemBytes)));
  // Restaged slots hold 4-byte (tf32) or 1-byte (fp8, int8) elements; bytes travel in 16-bit
  // registers (PTX has no 8-bit ones).
  bool bytes = buf.elemBytes == 1;
  llvm::Type *regTy = bytes ? B.getInt16Ty() : ety;
  auto *fty = llvm::FunctionType::get(regTy, {B.getInt32Ty()}, false);
  std::string text = bytes ? "ld.shared.u8" : ety->isFloatTy() ? "ld.shared.f32" : "ld.shared.b32";
  std::string cons = bytes ? "=h,r" : ety->isFloatTy() ? "=f,r" : "=r,r";
  // Register bits that overlap the lane and warp bits XOR into the coordinate: such a register
  // gets its own address.
  bool disjoint = ir::registerBitsDisjoint(l);
  for (int i = 0; i < l.numRegs(); ++i) {
    ir::Layout::Basis rc = l.regCoord(i);
    int64_t off = disjoint ? (rc[0] * buf.ld + rc[1]) * buf.elemBytes : 0;
    llvm::Value *addr = thread;
    if (!disjoint) {
      std::vector<llvm::Value *> c = coord(l, i);
      addr = B.CreateAdd(slot, B.CreateMul(B.CreateAdd(B.CreateMul(c[0], B.getInt32(static_cast<uint32_t>(buf.ld))), c[1]),
                                           B.getInt32(buf.elemBytes)));
    }
    llvm::Value *x = B.CreateCall(
        fty, llvm::InlineAsm::get(fty, text + " $0, [$1+" + std::to_string(off) + "];", cons, true), {addr});
    out[size_t(i)] = bytes ? B.CreateTrunc(x, B.getInt8Ty()) : x;
  }
  return out;
}

void Emitter::storeSwizzled(const ir::Layout &l, const std::vector<llvm::Value *> &r, const ir::Type &t, int contig,
                            int64_t rows, int swizzle, int64_t base, int box) {
  const unsigned eb = ir::storageBytes(t.dtype());
  const int vec = std::min<int>(ir::contiguousRegisters(l, static_cast<unsigned>(contig)), static_cast<int>(16 / eb));
  const int dupMask = ir::replicatedRegisterBits(l);
  llvm::Type *ety = llvmType(t.elem), *i32 = B.getInt32Ty();
  if (storeMatrices(l, r, t, contig, rows, swizzle, base, box))
    return;
  for (int i = 0; i < l.numRegs(); i += vec) {
    if (i & dupMask)
      continue;
    if (box >= 0 && l.regCoord(i)[size_t(contig)] / (swizzle / static_cast<int>(eb)) != box)
      continue;
    std::vector<llvm::Value *> c = coord(l, i);
    llvm::Value *val = llvm::UndefValue::get(llvm::FixedVectorType::get(ety, vec));
    for (int e = 0; e < vec; ++e)
      val = B.CreateInsertElement(val, r[i + e], uint64_t(e));
    if (eb == 1 && vec % 4 == 0) {
      llvm::Value *words = llvm::UndefValue::get(llvm::FixedVectorType::get(i32, vec / 4));
      for (int w = 0; w < vec / 4; ++w) {
        llvm::Value *word = B.getInt32(0);
        for (int e = 0; e < 4; ++e)
          word = B.CreateOr(word, B.CreateShl(B.CreateZExt(B.CreateBitCast(r[i + 4 * w + e], B.getInt8Ty()), i32), 8 * e));
        words = B.CreateInsertElement(words, word, uint64_t(w));
      }
      val = words;
    }
    llvm::Value *off = swizzledOffset(c[1 - contig], c[contig], rows, swizzle, eb);
    B.CreateAlignedStore(val, smemPtr(B.CreateAdd(off, B.getInt32(static_cast<uint32_t>(base)))), llvm::Align(vec * eb));
  }
}

bool Emitter::storeMatrices(const ir::Layout &l, const std::vector<llvm::Value *> &r, const ir::Type &t, int contig,
                            int64_t rows, int swizzle, int64_t base, int box) {
  // stmatrix.sync.aligned.m8n8.x4.shared.b16 (PTX ISA §9.7.9.x, sm_90): four 8 x 8 matrices of
  // 16-bit elements; in each, lane 4 * i + j holds row i, columns 2j and 2j + 1 in one register,
  // and lanes 8q .. 8q + 7 give the addresses of matrix q's eight rows (16 contiguous bytes each,
  // which every swizzle here keeps). That is the fragment of the mma / wgmma accumulator: register
  // bit 0 steps one column, lane bits 0-1 two and four columns, lane bits 2-4 one to four rows;
  // the other register and warp bits must step whole matrices.
  auto is = [](const ir::Layout::Basis &b, int64_t row, int64_t col) { return b[0] == row && b[1] == col; };
  if (smVersion() < 90 || ir::storageBytes(t.dtype()) != 2 || contig != 1 || l.rank() != 2 || l.reg.size() < 3 ||
      l.lane.size() != 5 || ir::replicatedRegisterBits(l) || rows % 8 || (rows & (rows - 1)) || !is(l.reg[0], 0, 1) || !is(l.lane[0], 0, 2) ||
      !is(l.lane[1], 0, 4) || !is(l.lane[2], 1, 0) || !is(l.lane[3], 2, 0) || !is(l.lane[4], 4, 0))
    return false;
  for (size_t i = 1; i < l.reg.size(); ++i)
    if (l.reg[i][0] % 8 || l.reg[i][1] % 8)
      return false;
  for (const auto &b : l.warp)
    if (b[0] % 8 || b[1] % 8)
      return false;
  const int64_t perRow = swizzle / 2;
  for (const auto &b : {l.reg[1], l.reg[2]}) // the four matrices of one instruction share a box
    if (box >= 0 && b[1] >= perRow)
      return false;
  // Each thread's address, in the coordinates of a layout whose lanes are the matrices' rows
  // (lane bits 0-2) and the x4's matrices (lane bits 3-4: register bits 1 and 2), and whose warps
  // are the value's.
  ir::Layout rowsOf = l;
  rowsOf.reg.clear();
  rowsOf.lane = {{1, 0}, {2, 0}, {4, 0}, l.reg[1], l.reg[2]};
  const std::vector<llvm::Value *> &lw = laneWarpCoord(rowsOf);
  llvm::Value *thread = swizzledOffset(lw[0], lw[1], rows, swizzle, 2);
  // The swizzled offset is linear over GF(2) in the coordinate bits (power-of-two fields, an XOR
  // of row bits into chunk bits): a register group's offset is the thread's XOR a constant, the
  // same function of the group's coordinate (folded by the builder).
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt32Ty(), B.getInt32Ty(), B.getInt32Ty(),
                                                      B.getInt32Ty(), B.getInt32Ty()}, false);
  auto *asmStm = llvm::InlineAsm::get(fty, "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};",
                                      "r,r,r,r,r", true);
  llvm::Type *pair = llvm::FixedVectorType::get(llvmType(t.elem), 2);
  for (int g = 0; g < l.numRegs(); g += 8) {
    ir::Layout::Basis rc = l.regCoord(g);
    if (box >= 0 && rc[1] / perRow != box)
      continue;
    llvm::Value *group = swizzledOffset(B.getInt32(static_cast<uint32_t>(rc[0])), B.getInt32(static_cast<uint32_t>(rc[1])),
                                        rows, swizzle, 2);
    llvm::Value *off = B.CreateXor(thread, group);
    llvm::Value *addr = B.CreatePtrToInt(smemPtr(B.CreateAdd(off, B.getInt32(static_cast<uint32_t>(base)))), B.getInt32Ty());
    std::vector<llvm::Value *> args{addr};
    for (int q = 0; q < 4; ++q) {
      llvm::Value *v = llvm::UndefValue::get(pair);
      v = B.CreateInsertElement(v, r[size_t(g + 2 * q)], uint64_t(0));
      v = B.CreateInsertElement(v, r[size_t(g + 2 * q + 1)], uint64_t(1));
      args.push_back(B.CreateBitCast(v, B.getInt32Ty()));
    }
    B.CreateCall(fty, asmStm, args);
  }
  return true;
}

} // namespace tle::nvptx
