// Shape ops on the GPU: permute (free: registers keep their elements), and reshape, cat, join
// and split through shared memory; inclusive scans (tl.cumsum, tl.cumprod) over the index bits
// (registers, shuffles, one barrier per warp bit), or as a Hillis-Steele scan in shared memory
// for layouts that mix dims.
#include "Emitter.h"
#include "tle/Transforms/Scratch.h"

#include <map>
#include <optional>

namespace tle::nvptx {

using ir::OpKind;

namespace {

/// Row-major linear index of `c` in `shape` times `scale` plus `offset`.
llvm::Value *linearIndex(llvm::IRBuilder<> &B, const std::vector<llvm::Value *> &c, const std::vector<int64_t> &shape,
                         int64_t scale, int64_t offset) {
  llvm::Value *idx = B.getInt32(0);
  for (size_t d = 0; d < shape.size(); ++d)
    idx = B.CreateAdd(B.CreateMul(idx, B.getInt32(static_cast<uint32_t>(shape[d]))), c[d]);
  return B.CreateAdd(B.CreateMul(idx, B.getInt32(static_cast<uint32_t>(scale))), B.getInt32(static_cast<uint32_t>(offset)));
}

} // namespace

void Emitter::storeToShared(const ir::Value *v, int64_t scale, int64_t offset) {
  ir::ScalarType et = v->type.elem;
  unsigned eb = ir::storageBytes(et.dtype);
  const ir::Layout &l = *v->layout;
  const auto &r = regs(v);
  for (int i = 0; i < l.numRegs(); ++i) {
    llvm::Value *x = r[i];
    if (et.dtype == ir::DType::I1)
      x = B.CreateZExt(x, B.getInt8Ty());
    llvm::Value *idx = linearIndex(B, coord(l, i), v->type.shape, scale, offset);
    B.CreateStore(x, smemPtr(B.CreateMul(idx, B.getInt32(eb))));
  }
}

std::vector<llvm::Value *> Emitter::loadFromShared(const ir::Value *result, int64_t scale, int64_t offset) {
  ir::ScalarType et = result->type.elem;
  unsigned eb = ir::storageBytes(et.dtype);
  const ir::Layout &l = *result->layout;
  std::vector<llvm::Value *> out;
  for (int i = 0; i < l.numRegs(); ++i) {
    llvm::Value *idx = linearIndex(B, coord(l, i), result->type.shape, scale, offset);
    llvm::Value *x = B.CreateLoad(storageType(et), smemPtr(B.CreateMul(idx, B.getInt32(eb))));
    if (et.dtype == ir::DType::I1)
      x = B.CreateICmpNE(x, B.getInt8(0));
    out.push_back(x);
  }
  return out;
}

void Emitter::emitShapeOp(const ir::Op &op) {
  switch (op.kind) {
  case OpKind::Permute:
    vals_[op.result()] = regs(op.operands[0]); // the layout was permuted instead (or: the async slot)
    return;
  case OpKind::Reshape: {
    // The row-major linear index of an element is the same before and after.
    assertScratchFits(op.result()->type.numElements() * ir::storageBytes(op.result()->type.dtype()));
    barrier();
    storeToShared(op.operands[0], 1, 0);
    barrier();
    vals_[op.result()] = loadFromShared(op.result(), 1, 0);
    return;
  }
  case OpKind::Cat: {
    int64_t n = op.operands[0]->type.numElements();
    assertScratchFits(2 * n * ir::storageBytes(op.result()->type.dtype()));
    barrier();
    storeToShared(op.operands[0], 1, 0);
    storeToShared(op.operands[1], 1, n);
    barrier();
    vals_[op.result()] = loadFromShared(op.result(), 1, 0);
    return;
  }
  case OpKind::Join: {
    assertScratchFits(op.result()->type.numElements() * ir::storageBytes(op.result()->type.dtype()));
    barrier();
    storeToShared(op.operands[0], 2, 0);
    storeToShared(op.operands[1], 2, 1);
    barrier();
    vals_[op.result()] = loadFromShared(op.result(), 1, 0);
    return;
  }
  case OpKind::Flip: {
    // Stored by row-major index; each result element reads the mirrored position along `axis`.
    const ir::Value *res = op.result();
    unsigned eb = ir::storageBytes(res->type.dtype());
    assertScratchFits(res->type.numElements() * eb);
    barrier();
    storeToShared(op.operands[0], 1, 0);
    barrier();
    const ir::Layout &l = *res->layout;
    auto ax = static_cast<size_t>(op.axis());
    uint32_t last = static_cast<uint32_t>(res->type.shape[ax] - 1);
    std::vector<llvm::Value *> out;
    for (int i = 0; i < l.numRegs(); ++i) {
      std::vector<llvm::Value *> c = coord(l, i);
      c[ax] = B.CreateSub(B.getInt32(last), c[ax]);
      llvm::Value *idx = linearIndex(B, c, res->type.shape, 1, 0);
      llvm::Value *x = B.CreateLoad(storageType(res->type.elem), smemPtr(B.CreateMul(idx, B.getInt32(eb))));
      if (res->type.dtype() == ir::DType::I1)
        x = B.CreateICmpNE(x, B.getInt8(0));
      out.push_back(x);
    }
    vals_[res] = out;
    return;
  }
  case OpKind::Split: {
    assertScratchFits(op.operands[0]->type.numElements() * ir::storageBytes(op.operands[0]->type.dtype()));
    barrier();
    storeToShared(op.operands[0], 1, 0);
    barrier();
    vals_[op.result(0)] = loadFromShared(op.result(0), 2, 0);
    vals_[op.result(1)] = loadFromShared(op.result(1), 2, 1);
    return;
  }
  default:
    break;
  }
}

using transforms::AxisBit;
using transforms::axisBitOwners;

bool Emitter::emitScanByBits(const ir::Op &op) {
  // Inclusive scan over the bits of the index along the axis, lowest first. After bit k every
  // element holds P, the scan of its aligned block of 2^(k+1) elements up to itself, and T, the
  // block's total: merging a block with its partner block (bit k flipped) adds the partner's T
  // to P in the upper half (lower half, for a reverse scan) and to T in both. The partner is in
  // the same thread (register bit), another lane (shfl.sync.bfly) or another warp (shared
  // memory, one barrier per warp bit). Blocked layouts take registers, then lanes, then warps:
  // a 4096-element fp32 row over 8 warps needs 5 shuffle rounds and 3 barriers, where the
  // shared-memory scan needs 24 barriers. Every combine takes the block that comes first in
  // scan order (lower indices; higher ones for a reverse scan) as its first operand, so a
  // combine region need only be associative (tl.associative_scan). N operands travel together.
  using Vals = std::vector<llvm::Value *>;
  const ir::Value *in = op.operands[0];
  const ir::Layout &l = *in->layout;
  unsigned axis = static_cast<unsigned>(op.axis());
  auto owners = axisBitOwners(l, axis, in->type.shape[axis]);
  if (!owners)
    return false;
  const size_t nops = op.operands.size();
  bool reverse = op.isReverse();
  const int n = l.numRegs();
  std::vector<Vals> P(static_cast<size_t>(n), Vals(nops));
  for (size_t k = 0; k < nops; ++k) {
    const auto &src = regs(op.operands[k]);
    for (int r = 0; r < n; ++r)
      P[static_cast<size_t>(r)][k] = src[static_cast<size_t>(r)];
  }
  std::vector<Vals> T = P;
  auto select = [&](llvm::Value *c, const Vals &a, const Vals &b) {
    Vals out;
    for (size_t k = 0; k < nops; ++k)
      out.push_back(B.CreateSelect(c, a[k], b[k]));
    return out;
  };
  // Register bits already merged: registers that differ only in them share one T.
  int merged = 0;
  auto reps = [&] {
    std::vector<int> out;
    for (int r = 0; r < n; ++r)
      if ((r & merged) == 0)
        out.push_back(r);
    return out;
  };
  // Shared memory for the warp rounds: two regions used alternately, so one barrier per round
  // separates a round's writes from its reads and the previous round's reads from its writes.
  size_t maxReps = 0;
  {
    int m = 0;
    for (const AxisBit &o : *owners) {
      if (o.kind == 'r')
        m |= 1 << o.bit;
      else if (o.kind == 'w') {
        size_t c = 0;
        for (int r = 0; r < n; ++r)
          c += (r & m) == 0;
        maxReps = std::max(maxReps, c);
      }
    }
  }
  int64_t perThreadSlots = static_cast<int64_t>(maxReps) * 32 * l.numWarps();
  std::vector<int64_t> opOffset(nops);
  int64_t regionBytes = 0;
  for (size_t k = 0; k < nops; ++k) {
    opOffset[k] = regionBytes;
    regionBytes += perThreadSlots * ir::storageBytes(op.operands[k]->type.dtype());
  }
  if (maxReps)
    assertScratchFits(2 * regionBytes);
  int warpRound = 0;
  for (const AxisBit &o : *owners) {
    if (o.kind == 'r') {
      int bit = 1 << o.bit;
      for (int lo = 0; lo < n; ++lo) {
        if (lo & bit)
          continue;
        int hi = lo | bit;
        if (reverse) {
          P[lo] = combineValues(op, T[hi], P[lo]);
          T[lo] = T[hi] = combineValues(op, T[hi], T[lo]);
        } else {
          P[hi] = combineValues(op, T[lo], P[hi]);
          T[lo] = T[hi] = combineValues(op, T[lo], T[hi]);
        }
      }
      merged |= bit;
      continue;
    }
    // The partner's T, one value per representative register.
    std::vector<int> rs = reps();
    std::map<int, Vals> partner;
    llvm::Value *id = o.kind == 'l' ? laneId() : warpId();
    llvm::Value *upper = B.CreateICmpNE(B.CreateAnd(B.CreateLShr(id, B.getInt32(o.bit)), B.getInt32(1)), B.getInt32(0));
    if (o.kind == 'l') {
      for (int r : rs) {
        Vals v;
        for (llvm::Value *x : T[r])
          v.push_back(shuffleXor(x, 1 << o.bit));
        partner[r] = v;
      }
    } else {
      if (warpRound == 0)
        barrier();
      int64_t base = (warpRound % 2) * regionBytes;
      auto slot = [&](llvm::Value *warp, size_t j, size_t k) {
        llvm::Value *thread = B.CreateAdd(B.CreateMul(warp, B.getInt32(32)), laneId());
        llvm::Value *idx = B.CreateAdd(B.CreateMul(thread, B.getInt32(static_cast<uint32_t>(rs.size()))),
                                       B.getInt32(static_cast<uint32_t>(j)));
        unsigned eb = ir::storageBytes(op.operands[k]->type.dtype());
        return smemPtr(B.CreateAdd(B.CreateMul(idx, B.getInt32(eb)), B.getInt32(static_cast<uint32_t>(base + opOffset[k]))));
      };
      for (size_t j = 0; j < rs.size(); ++j)
        for (size_t k = 0; k < nops; ++k)
          B.CreateStore(T[rs[j]][k], slot(warpId(), j, k));
      barrier();
      llvm::Value *pw = B.CreateXor(warpId(), B.getInt32(1u << o.bit));
      for (size_t j = 0; j < rs.size(); ++j) {
        Vals v;
        for (size_t k = 0; k < nops; ++k)
          v.push_back(B.CreateLoad(T[rs[j]][k]->getType(), slot(pw, j, k)));
        partner[rs[j]] = v;
      }
      ++warpRound;
    }
    // The partner block comes first in scan order when it holds lower indices (this thread is
    // in the upper half) for a forward scan, higher ones for a reverse scan.
    llvm::Value *partnerFirst = reverse ? B.CreateNot(upper) : upper;
    for (int r = 0; r < n; ++r) {
      const Vals &pt = partner[r & ~merged];
      P[r] = select(partnerFirst, combineValues(op, pt, P[r]), P[r]);
    }
    for (int r : rs) {
      Vals t = combineOrdered(op, partnerFirst, T[r], partner[r]);
      for (int q = 0; q < n; ++q)
        if ((q & ~merged) == r)
          T[q] = t;
    }
  }
  for (size_t k = 0; k < nops; ++k) {
    std::vector<llvm::Value *> out;
    for (auto &p : P)
      out.push_back(p[k]);
    vals_[op.result(static_cast<unsigned>(k))] = out;
  }
  return true;
}

void Emitter::emitScan(const ir::Op &op) {
  if (emitScanByBits(op))
    return;
  // Hillis-Steele inclusive scan along `axis`: after the round with distance s, every element
  // holds the combine of the 2s elements ending at it (starting at it, for a reverse scan), the
  // partner's value first. Each round reads the previous round's values from shared memory
  // (barrier, write, barrier, read), one region per operand.
  using Vals = std::vector<llvm::Value *>;
  const size_t nops = op.operands.size();
  const ir::Value *in = op.operands[0];
  const ir::Layout &l = *in->layout;
  unsigned axis = static_cast<unsigned>(op.axis());
  int64_t len = in->type.shape[axis];
  bool reverse = op.isReverse();
  std::vector<int64_t> opOffset(nops);
  int64_t total = 0;
  for (size_t k = 0; k < nops; ++k) {
    unsigned eb = ir::storageBytes(op.operands[k]->type.dtype());
    total = (total + 7) / 8 * 8;
    opOffset[k] = total;
    total += in->type.numElements() * eb;
  }
  assertScratchFits(total);
  std::vector<Vals> vals(static_cast<size_t>(l.numRegs()), Vals(nops));
  for (size_t k = 0; k < nops; ++k) {
    const auto &src = regs(op.operands[k]);
    for (int r = 0; r < l.numRegs(); ++r)
      vals[static_cast<size_t>(r)][k] = src[static_cast<size_t>(r)];
  }
  std::vector<std::vector<llvm::Value *>> coords;
  for (int r = 0; r < l.numRegs(); ++r)
    coords.push_back(coord(l, r));
  auto address = [&](const std::vector<llvm::Value *> &c, size_t k) {
    unsigned eb = ir::storageBytes(op.operands[k]->type.dtype());
    return smemPtr(B.CreateAdd(B.CreateMul(linearIndex(B, c, in->type.shape, 1, 0), B.getInt32(eb)),
                               B.getInt32(static_cast<uint32_t>(opOffset[k]))));
  };
  for (int64_t s = 1; s < len; s *= 2) {
    barrier();
    for (int r = 0; r < l.numRegs(); ++r)
      for (size_t k = 0; k < nops; ++k)
        B.CreateStore(vals[r][k], address(coords[r], k));
    barrier();
    for (int r = 0; r < l.numRegs(); ++r) {
      // The partner s elements before (after, for reverse) along the axis, if inside the tile.
      std::vector<llvm::Value *> pc = coords[r];
      llvm::Value *pos = pc[axis];
      llvm::Value *inside = reverse ? B.CreateICmpSLT(B.CreateAdd(pos, B.getInt32(static_cast<uint32_t>(s))),
                                                      B.getInt32(static_cast<uint32_t>(len)))
                                    : B.CreateICmpSGE(pos, B.getInt32(static_cast<uint32_t>(s)));
      pc[axis] = reverse ? B.CreateAdd(pos, B.getInt32(static_cast<uint32_t>(s)))
                         : B.CreateSelect(inside, B.CreateSub(pos, B.getInt32(static_cast<uint32_t>(s))), pos);
      if (reverse)
        pc[axis] = B.CreateSelect(inside, pc[axis], pos);
      Vals partner;
      for (size_t k = 0; k < nops; ++k)
        partner.push_back(B.CreateLoad(llvmType(op.operands[k]->type.elem), address(pc, k)));
      Vals c = combineValues(op, partner, vals[r]);
      for (size_t k = 0; k < nops; ++k)
        vals[r][k] = B.CreateSelect(inside, c[k], vals[r][k]);
    }
  }
  for (size_t k = 0; k < nops; ++k) {
    std::vector<llvm::Value *> out;
    for (auto &v : vals)
      out.push_back(v[k]);
    vals_[op.result(static_cast<unsigned>(k))] = out;
  }
}

} // namespace tle::nvptx
