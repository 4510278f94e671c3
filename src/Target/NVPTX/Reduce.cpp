// Reductions (tl.reduce, tl.sum, tl.max ...): within threads, across lanes by shuffles, across warps through shared memory.
#include "Emitter.h"
#include "tle/Transforms/Scratch.h"

#include <algorithm>

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/Support/MathExtras.h>

#include <cassert>
#include <cmath>

namespace tle::nvptx {

using ir::DType;
using ir::OpKind;

llvm::Value *Emitter::combine(ir::ReduceKind k, DType t, llvm::Value *a, llvm::Value *b) {
  bool fl = ir::isFloat(t), sg = ir::isSigned(t);
  switch (k) {
  case ir::ReduceKind::Sum:
    return fl ? B.CreateFAdd(a, b) : B.CreateAdd(a, b);
  case ir::ReduceKind::Max:
    if (fl)
      return declareIntrinsicCall(llvm::Intrinsic::maxnum, {a->getType()}, {a, b});
    return declareIntrinsicCall(sg ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, {a->getType()}, {a, b});
  case ir::ReduceKind::Min:
    if (fl)
      return declareIntrinsicCall(llvm::Intrinsic::minnum, {a->getType()}, {a, b});
    return declareIntrinsicCall(sg ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, {a->getType()}, {a, b});
  case ir::ReduceKind::Prod:
    return fl ? B.CreateFMul(a, b) : B.CreateMul(a, b);
  case ir::ReduceKind::Combine: // a region: combineValues
    break;
  }
  return nullptr;
}

llvm::Value *Emitter::shuffleXor(llvm::Value *v, int laneMask) {
  llvm::Type *ty = v->getType();
  unsigned bits = ty->getPrimitiveSizeInBits();
  auto shfl32 = [&](llvm::Value *x) {
    return declareIntrinsicCall(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                                {B.getInt32(0xffffffffu), x, B.getInt32(laneMask), B.getInt32(0x1f)});
  };
  if (bits == 64) {
    llvm::Value *i = B.CreateBitCast(v, B.getInt64Ty());
    llvm::Value *lo = shfl32(B.CreateTrunc(i, B.getInt32Ty()));
    llvm::Value *hi = shfl32(B.CreateTrunc(B.CreateLShr(i, 32), B.getInt32Ty()));
    llvm::Value *r = B.CreateOr(B.CreateZExt(lo, B.getInt64Ty()), B.CreateShl(B.CreateZExt(hi, B.getInt64Ty()), 32));
    return B.CreateBitCast(r, ty);
  }
  llvm::Type *ity = B.getIntNTy(bits);
  llvm::Value *i = ty->isIntegerTy() ? v : B.CreateBitCast(v, ity);
  llvm::Value *r = shfl32(bits == 32 ? i : B.CreateZExt(i, B.getInt32Ty()));
  if (bits != 32)
    r = B.CreateTrunc(r, ity);
  return ty->isIntegerTy() ? r : B.CreateBitCast(r, ty);
}

std::vector<llvm::Value *> Emitter::combineValues(const ir::Op &op, const std::vector<llvm::Value *> &a,
                                                 const std::vector<llvm::Value *> &b) {
  if (op.reduceKind() != ir::ReduceKind::Combine)
    return {combine(op.reduceKind(), op.operands[0]->type.dtype(), a[0], b[0])};
  // The combine region, emitted inline on these scalars (every value in it is a scalar).
  const ir::Block &r = *op.regions[0];
  size_t n = op.operands.size();
  for (size_t i = 0; i < n; ++i) {
    vals_[r.args[i].get()] = {a[i]};
    vals_[r.args[n + i].get()] = {b[i]};
  }
  emitBlock(r);
  const ir::Op *y = r.terminator();
  std::vector<llvm::Value *> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(scalar(y->operands[i]));
  return out;
}

std::vector<llvm::Value *> Emitter::combineOrdered(const ir::Op &op, llvm::Value *upper, const std::vector<llvm::Value *> &mine,
                                                  const std::vector<llvm::Value *> &partner) {
  if (op.reduceKind() != ir::ReduceKind::Combine)
    return combineValues(op, mine, partner); // built-in combines are commutative
  std::vector<llvm::Value *> first, second;
  for (size_t k = 0; k < mine.size(); ++k) {
    first.push_back(B.CreateSelect(upper, partner[k], mine[k]));
    second.push_back(B.CreateSelect(upper, mine[k], partner[k]));
  }
  return combineValues(op, first, second);
}

llvm::Value *Emitter::laneBitSet(int bit) {
  return B.CreateICmpNE(B.CreateAnd(B.CreateLShr(laneId(), B.getInt32(bit)), B.getInt32(1)), B.getInt32(0));
}

std::vector<llvm::Value *> Emitter::shuffledAll(const std::vector<llvm::Value *> &v, int laneMask) {
  std::vector<llvm::Value *> out;
  for (llvm::Value *x : v)
    out.push_back(shuffleXor(x, laneMask));
  return out;
}

Emitter::ReducePartials Emitter::reduceWithinWarps(const ir::Op &op) {
  // N operands (tl.reduce over a tuple) travel together: every step moves each of them and
  // combines them once. Combines follow the element order along the axis where the layout's
  // bits do (registers, then lanes, then warps, each in order), so that a combine region sees
  // (earlier, later) operands; built-in combines are commutative and skip the ordering.
  const size_t n = op.operands.size();
  const ir::Value *in = op.operands[0];
  const ir::Layout &L = *in->layout;
  unsigned axisDim = static_cast<unsigned>(op.axis());
  std::vector<std::vector<llvm::Value *>> src;
  for (const ir::Value *x : op.operands)
    src.push_back(regs(x));
  ReducePartials p{&op, ir::sliceLayout(L, axisDim), {}, {}};
  auto column = [&](int r) {
    std::vector<llvm::Value *> v;
    for (size_t k = 0; k < n; ++k)
      v.push_back(src[k][static_cast<size_t>(r)]);
    return v;
  };
  // 1. Within each thread: registers that differ only along the axis.
  std::vector<int> keptBits;
  for (size_t i = 0; i < L.reg.size(); ++i)
    if (L.reg[i][axisDim] == 0)
      keptBits.push_back(static_cast<int>(i));
  p.acc.resize(p.S.numRegs());
  for (int r = 0; r < L.numRegs(); ++r) {
    int j = 0;
    for (size_t k = 0; k < keptBits.size(); ++k)
      if (r & (1 << keptBits[k]))
        j |= 1 << k;
    p.acc[j] = p.acc[j].empty() ? column(r) : combineValues(op, p.acc[j], column(r));
  }
  // 2. Across lanes: butterfly over the lane bits that move along the axis.
  for (size_t i = 0; i < L.lane.size(); ++i)
    if (L.lane[i][axisDim] != 0) {
      llvm::Value *upper = laneBitSet(static_cast<int>(i));
      for (auto &a : p.acc)
        a = combineOrdered(op, upper, a, shuffledAll(a, 1 << i));
    }
  // Step 3 (reduceAcrossWarps) combines over the warp bits that move along the axis.
  p.warpBits = transforms::reduceWarpBits(L, op.axis());
  return p;
}

void Emitter::reduceAcrossWarps(std::vector<ReducePartials> &parts) {
  // 3. Across warps, through shared memory: every reduce of the batch writes its partials to
  // its own region between one pair of barriers (the first keeps earlier readers of the
  // scratch area from seeing it overwritten, the second publishes the partials).
  struct Region {
    std::vector<int64_t> base; ///< per operand, bytes from the batch's start
    std::vector<llvm::Value *> slots;
    llvm::Value *warpIndex = nullptr;
  };
  std::vector<Region> regions(parts.size());
  int64_t total = 0;
  for (size_t q = 0; q < parts.size(); ++q) {
    ReducePartials &p = parts[q];
    std::vector<int64_t> base;
    int64_t bytes = transforms::reducePartialsBytes(*p.op, p.warpBits.size(), &base);
    total = (total + 15) / 16 * 16;
    for (int64_t &b : base)
      b += total;
    total += bytes;
    Region &rg = regions[q];
    rg.base = std::move(base);
    rg.warpIndex = B.getInt32(0);
    for (size_t k = 0; k < p.warpBits.size(); ++k)
      rg.warpIndex = B.CreateOr(rg.warpIndex, B.CreateShl(B.CreateAnd(B.CreateLShr(warp_, p.warpBits[k]), 1), k));
    for (size_t j = 0; j < p.acc.size(); ++j)
      rg.slots.push_back(p.S.rank() ? linearize(coord(p.S, static_cast<int>(j)), p.S.shape) : B.getInt32(0));
  }
  assertScratchFits(total);
  auto at = [&](size_t q, size_t k, llvm::Value *idx) {
    unsigned eb = ir::storageBytes(parts[q].op->operands[k]->type.dtype());
    return smemPtr(B.CreateAdd(B.CreateMul(idx, B.getInt32(eb)), B.getInt32(static_cast<uint32_t>(regions[q].base[k]))));
  };
  auto zero = [](const ir::Layout::Basis &b) { return std::all_of(b.begin(), b.end(), [](int64_t c) { return c == 0; }); };
  // One thread per partial writes it: lanes and warps that hold the same output element (the
  // axis' lanes after the butterfly, replicated lanes and warps) would write the same value to
  // the same slot, a write-write race for compute-sanitizer's racecheck.
  std::vector<llvm::Value *> writers;
  for (const ReducePartials &p : parts) {
    uint32_t laneMask = 0, warpMask = 0;
    for (size_t i = 0; i < p.S.lane.size(); ++i)
      if (zero(p.S.lane[i]))
        laneMask |= 1u << i;
    for (size_t i = 0; i < p.S.warp.size(); ++i)
      if (zero(p.S.warp[i]) && std::find(p.warpBits.begin(), p.warpBits.end(), static_cast<int>(i)) == p.warpBits.end())
        warpMask |= 1u << i;
    writers.push_back(B.CreateAnd(B.CreateICmpEQ(B.CreateAnd(laneId(), B.getInt32(laneMask)), B.getInt32(0)),
                                  B.CreateICmpEQ(B.CreateAnd(warpId(), B.getInt32(warpMask)), B.getInt32(0))));
  }
  barrier();
  for (size_t q = 0; q < parts.size(); ++q) {
    ReducePartials &p = parts[q];
    const int W = 1 << p.warpBits.size();
    llvm::Value *writer = writers[q];
    auto *storeBB = llvm::BasicBlock::Create(ctx, "reduce.partials", kernel_);
    auto *joinBB = llvm::BasicBlock::Create(ctx, "reduce.partials.end", kernel_);
    B.CreateCondBr(writer, storeBB, joinBB);
    B.SetInsertPoint(storeBB);
    for (size_t j = 0; j < p.acc.size(); ++j) {
      llvm::Value *idx = B.CreateAdd(B.CreateMul(regions[q].slots[j], B.getInt32(W)), regions[q].warpIndex);
      for (size_t k = 0; k < p.acc[j].size(); ++k)
        B.CreateStore(p.acc[j][k], at(q, k, idx));
    }
    B.CreateBr(joinBB);
    B.SetInsertPoint(joinBB);
  }
  barrier();
  for (size_t q = 0; q < parts.size(); ++q) {
    ReducePartials &p = parts[q];
    const ir::Op &op = *p.op;
    const int W = 1 << p.warpBits.size();
    auto loadPartial = [&](size_t j, llvm::Value *w) {
      llvm::Value *idx = B.CreateAdd(B.CreateMul(regions[q].slots[j], B.getInt32(W)), w);
      std::vector<llvm::Value *> v;
      for (size_t k = 0; k < op.operands.size(); ++k)
        v.push_back(B.CreateLoad(llvmType(op.operands[k]->type.elem), at(q, k, idx)));
      return v;
    };
    // Lane bits along which the result is replicated (lanes differing only in them hold the
    // same output elements).
    std::vector<int> freeLanes;
    for (size_t i = 0; i < p.S.lane.size(); ++i)
      if (zero(p.S.lane[i]))
        freeLanes.push_back(static_cast<int>(i));
    if (W >= 4 && freeLanes.size() >= p.warpBits.size()) {
      // Many partials: the lanes that share an output split its W partials among them, one
      // each, and a butterfly over those lane bits combines them, so each thread holds one
      // partial instead of W registers (16 warps: one load and 4 shuffles per output instead
      // of 16 loads).
      llvm::Value *mine = B.getInt32(0);
      for (size_t k = 0; k < p.warpBits.size(); ++k)
        mine = B.CreateOr(mine, B.CreateShl(B.CreateAnd(B.CreateLShr(laneId(), freeLanes[k]), 1), k));
      for (size_t j = 0; j < p.acc.size(); ++j) {
        std::vector<llvm::Value *> v = loadPartial(j, mine);
        for (size_t k = 0; k < p.warpBits.size(); ++k)
          v = combineOrdered(op, laneBitSet(freeLanes[k]), v, shuffledAll(v, 1 << freeLanes[k]));
        p.acc[j] = v;
      }
    } else {
      for (size_t j = 0; j < p.acc.size(); ++j) {
        std::vector<llvm::Value *> r;
        for (int w = 0; w < W; ++w) {
          std::vector<llvm::Value *> v = loadPartial(j, B.getInt32(w));
          r = r.empty() ? v : combineValues(op, r, v);
        }
        p.acc[j] = r;
      }
    }
  }
}

void Emitter::emitReduce(const ir::Op &op) {
  std::vector<ReducePartials> parts{reduceWithinWarps(op)};
  if (!parts[0].warpBits.empty()) {
    // The reduces right after this one that the batch-reduces pass put in its batch join its
    // exchange through shared memory: one pair of barriers for all of them.
    auto it = std::next(op.parent->find(&op));
    for (int k = 0; k < op.reduceBatchSize(); ++k, ++it) {
      batchedReduces_.insert(it->get());
      parts.push_back(reduceWithinWarps(**it));
      if (parts.back().warpBits.empty())
        diags.fatal((*it)->loc, "a reduce of a batch (batch=" + std::to_string(op.reduceBatchSize()) +
                                    ") must combine across warps; this one's layout keeps its axis within a warp");
    }
    reduceAcrossWarps(parts);
  }
  for (ReducePartials &p : parts)
    for (size_t k = 0; k < p.op->operands.size(); ++k) {
      std::vector<llvm::Value *> out;
      for (auto &a : p.acc)
        out.push_back(a[k]);
      vals_[p.op->result(static_cast<unsigned>(k))] = out;
    }
}

} // namespace tle::nvptx
