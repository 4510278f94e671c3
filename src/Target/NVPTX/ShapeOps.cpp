// Shape ops on the GPU: permute (free: registers keep their elements), and reshape, cat, join,
// split, flip and gather through shared memory (a thread's offset once, a constant per register,
// vectors of up to 16 bytes; a gather reads at its indices); inclusive scans (tl.cumsum, tl.cumprod) over the index bits
// (registers, shuffles, one barrier per warp bit), or as a Hillis-Steele scan in shared memory
// for layouts that mix dims.
#include "Emitter.h"
#include "tle/Transforms/Scratch.h"

#include <algorithm>
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

std::vector<llvm::Value *> Emitter::stagedElementOffsets(const ir::Layout &l, const std::vector<int64_t> &shape,
                                                         unsigned eb, int64_t scale, int64_t offset) {
  std::vector<llvm::Value *> out;
  auto pow2 = [](int64_t x) { return x > 0 && (x & (x - 1)) == 0; };
  if (!pow2(scale) || !std::all_of(shape.begin(), shape.end(), pow2)) {
    for (int r = 0; r < l.numRegs(); ++r)
      out.push_back(B.CreateMul(linearIndex(B, coord(l, r), shape, scale, offset), B.getInt32(eb)));
    return out;
  }
  // With power-of-two dims the row-major index concatenates the coordinate's bits, so the byte
  // offset (index * scale * eb, both powers of two) is linear over GF(2) in the coordinate: the
  // thread's part (register 0, lane and warp bases) is computed once, and each register XORs a
  // constant into it. The constant's bits that no lane or warp basis reaches are added instead
  // (they fold into the address as an immediate), as is `offset`, which is below the scaled index.
  auto bytesOf = [&](const ir::Layout::Basis &c) {
    int64_t idx = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      idx = idx * shape[d] + c[d];
    return static_cast<uint32_t>(idx * scale * eb);
  };
  uint32_t threadBits = 0;
  for (const auto *bases : {&l.lane, &l.warp})
    for (const auto &b : *bases)
      threadBits |= bytesOf(b);
  llvm::Value *t = B.CreateMul(linearIndex(B, coord(l, 0), shape, scale, 0), B.getInt32(eb));
  std::map<uint32_t, llvm::Value *> xored{{0u, t}};
  for (int r = 0; r < l.numRegs(); ++r) {
    uint32_t c = bytesOf(l.regCoord(r));
    auto [it, fresh] = xored.try_emplace(c & threadBits, nullptr);
    if (fresh)
      it->second = B.CreateXor(t, B.getInt32(c & threadBits));
    uint32_t added = (c & ~threadBits) + static_cast<uint32_t>(offset * eb);
    out.push_back(added ? B.CreateAdd(it->second, B.getInt32(added), "", /*HasNUW=*/true, /*HasNSW=*/true) : it->second);
  }
  return out;
}

int Emitter::stagedVectorWidth(const ir::Value *v, int parts, int64_t stride, int64_t offset) {
  const ir::Layout &l = *v->layout;
  unsigned eb = ir::storageBytes(v->type.dtype());
  unsigned last = v->type.rank() - 1;
  if (parts != stride || v->type.dtype() == ir::DType::I1)
    return 1;
  // Registers holding consecutive elements along the last dim, at a start that lanes, warps and
  // the other registers keep aligned, are consecutive in memory (with `parts` interleaved tiles,
  // `parts` times as many elements).
  int w = std::min<int>(ir::contiguousRegisters(l, last), static_cast<int>(16 / (eb * parts)));
  auto aligned = [&](const std::vector<ir::Layout::Basis> &bases, size_t from) {
    for (size_t i = from; i < bases.size(); ++i)
      if (bases[i][last] % w)
        return false;
    return true;
  };
  auto log2 = [](int x) { return static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(x))); };
  while (w > 1 && !(aligned(l.lane, 0) && aligned(l.warp, 0) && aligned(l.reg, log2(w)) &&
                    v->type.shape[last] % w == 0 && offset % (w * parts) == 0))
    w /= 2;
  return std::max(w, 1);
}

void Emitter::storeToShared(const std::vector<const ir::Value *> &parts, int64_t stride, int64_t offset) {
  const ir::Value *v = parts[0];
  ir::ScalarType et = v->type.elem;
  unsigned eb = ir::storageBytes(et.dtype);
  const ir::Layout &l = *v->layout;
  const int n = static_cast<int>(parts.size());
  const int w = stagedVectorWidth(v, n, stride, offset);
  std::vector<llvm::Value *> at = stagedElementOffsets(l, v->type.shape, eb, stride, offset);
  for (int r = 0; r < l.numRegs(); r += w) {
    if (w == 1) {
      for (int k = 0; k < n; ++k) {
        llvm::Value *x = regs(parts[size_t(k)])[size_t(r)];
        if (et.dtype == ir::DType::I1)
          x = B.CreateZExt(x, B.getInt8Ty());
        llvm::Value *off = k ? B.CreateAdd(at[size_t(r)], B.getInt32(k * eb), "", true, true) : at[size_t(r)];
        B.CreateStore(x, smemPtr(off));
      }
      continue;
    }
    // Element j of the vector: register r + j / n of part j % n.
    llvm::Value *vec = llvm::UndefValue::get(llvm::FixedVectorType::get(storageType(et), unsigned(w * n)));
    for (int j = 0; j < w * n; ++j)
      vec = B.CreateInsertElement(vec, regs(parts[size_t(j % n)])[size_t(r + j / n)], uint64_t(j));
    B.CreateAlignedStore(vec, smemPtr(at[size_t(r)]), llvm::Align(w * n * eb));
  }
}

std::vector<std::vector<llvm::Value *>> Emitter::loadFromShared(const std::vector<const ir::Value *> &results,
                                                                int64_t stride, int64_t offset) {
  const ir::Value *v = results[0];
  ir::ScalarType et = v->type.elem;
  unsigned eb = ir::storageBytes(et.dtype);
  const ir::Layout &l = *v->layout;
  const int n = static_cast<int>(results.size());
  const int w = stagedVectorWidth(v, n, stride, offset);
  std::vector<llvm::Value *> at = stagedElementOffsets(l, v->type.shape, eb, stride, offset);
  std::vector<std::vector<llvm::Value *>> out(size_t(n), std::vector<llvm::Value *>(size_t(l.numRegs())));
  for (int r = 0; r < l.numRegs(); r += w) {
    if (w == 1) {
      for (int k = 0; k < n; ++k) {
        llvm::Value *off = k ? B.CreateAdd(at[size_t(r)], B.getInt32(k * eb), "", true, true) : at[size_t(r)];
        llvm::Value *x = B.CreateLoad(storageType(et), smemPtr(off));
        if (et.dtype == ir::DType::I1)
          x = B.CreateICmpNE(x, B.getInt8(0));
        out[size_t(k)][size_t(r)] = x;
      }
      continue;
    }
    auto *ty = llvm::FixedVectorType::get(storageType(et), unsigned(w * n));
    llvm::Value *vec = B.CreateAlignedLoad(ty, smemPtr(at[size_t(r)]), llvm::Align(w * n * eb));
    for (int j = 0; j < w * n; ++j)
      out[size_t(j % n)][size_t(r + j / n)] = B.CreateExtractElement(vec, uint64_t(j));
  }
  return out;
}

void Emitter::emitShapeOp(const ir::Op &op) {
  // The staged ops below write their scratch area right away: insert-barriers put the barrier
  // that retires its earlier readers before the op (transforms::insertStagingBarriers).
  switch (op.kind) {
  case OpKind::Permute:
    vals_[op.result()] = regs(op.operands[0]); // the layout was permuted instead (or: the async slot)
    return;
  case OpKind::Reshape: {
    // The row-major linear index of an element is the same before and after.
    assertScratchFits(op.result()->type.numElements() * ir::storageBytes(op.result()->type.dtype()));
    storeToShared({op.operands[0]}, 1, 0);
    barrier();
    vals_[op.result()] = loadFromShared({op.result()}, 1, 0)[0];
    return;
  }
  case OpKind::Cat: {
    int64_t n = op.operands[0]->type.numElements();
    assertScratchFits(2 * n * ir::storageBytes(op.result()->type.dtype()));
    storeToShared({op.operands[0]}, 1, 0);
    storeToShared({op.operands[1]}, 1, n);
    barrier();
    vals_[op.result()] = loadFromShared({op.result()}, 1, 0)[0];
    return;
  }
  case OpKind::Join: {
    assertScratchFits(op.result()->type.numElements() * ir::storageBytes(op.result()->type.dtype()));
    // The two operands interleaved (element c of operand k at 2 * linear(c) + k): one store of
    // both where they share a layout, else each on its own.
    if (*op.operands[0]->layout == *op.operands[1]->layout) {
      storeToShared({op.operands[0], op.operands[1]}, 2, 0);
    } else {
      storeToShared({op.operands[0]}, 2, 0);
      storeToShared({op.operands[1]}, 2, 1);
    }
    barrier();
    vals_[op.result()] = loadFromShared({op.result()}, 1, 0)[0];
    return;
  }
  case OpKind::Flip: {
    // Stored by row-major index; each result element reads the mirrored position along `axis`.
    const ir::Value *res = op.result();
    unsigned eb = ir::storageBytes(res->type.dtype());
    assertScratchFits(res->type.numElements() * eb);
    storeToShared({op.operands[0]}, 1, 0);
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
    storeToShared({op.operands[0]}, 1, 0);
    barrier();
    if (*op.result(0)->layout == *op.result(1)->layout) { // both halves, interleaved, by one load
      auto both = loadFromShared({op.result(0), op.result(1)}, 2, 0);
      vals_[op.result(0)] = both[0];
      vals_[op.result(1)] = both[1];
    } else {
      vals_[op.result(0)] = loadFromShared({op.result(0)}, 2, 0)[0];
      vals_[op.result(1)] = loadFromShared({op.result(1)}, 2, 1)[0];
    }
    return;
  }
  default:
    break;
  }
}

void Emitter::emitGather(const ir::Op &op) {
  const ir::Value *src = op.operands[0], *index = op.operands[1], *res = op.result();
  const ir::Layout &l = *res->layout;
  ir::DType it = index->type.dtype();
  unsigned eb = ir::storageBytes(src->type.dtype());
  assertScratchFits(src->type.numElements() * eb);
  storeToShared({src}, 1, 0); // after insert-barriers' barrier: earlier readers of the area are done
  barrier();
  auto ax = static_cast<size_t>(op.axis());
  const std::vector<int64_t> &shape = src->type.shape;
  auto n = static_cast<uint64_t>(shape[ax]);
  uint32_t stride = 1; // elements between neighbours along the axis
  for (size_t d = ax + 1; d < shape.size(); ++d)
    stride *= static_cast<uint32_t>(shape[d]);
  std::vector<llvm::Value *> ix = regsIn(index, l), out;
  llvm::Type *st = storageType(src->type.elem);
  for (int r = 0; r < l.numRegs(); ++r) {
    // The index by its signedness; unsigned compares against n catch negative ones too.
    llvm::Value *i = ix[size_t(r)], *inside = nullptr;
    if (ir::bitWidth(it) > 32) {
      inside = B.CreateICmpULT(i, B.getInt64(n));
      i = B.CreateTrunc(i, B.getInt32Ty());
    } else {
      i = ir::isSigned(it) ? B.CreateSExtOrTrunc(i, B.getInt32Ty()) : B.CreateZExtOrTrunc(i, B.getInt32Ty());
      inside = B.CreateICmpULT(i, B.getInt32(static_cast<uint32_t>(n)));
    }
    std::vector<llvm::Value *> c = coord(l, r);
    c[ax] = B.getInt32(0);
    llvm::Value *at = B.CreateAdd(linearIndex(B, c, shape, 1, 0),
                                  B.CreateMul(B.CreateSelect(inside, i, B.getInt32(0)), B.getInt32(stride)));
    llvm::Value *x = B.CreateLoad(st, smemPtr(B.CreateMul(at, B.getInt32(eb))));
    x = B.CreateSelect(inside, x, llvm::Constant::getNullValue(st));
    if (src->type.dtype() == ir::DType::I1)
      x = B.CreateICmpNE(x, B.getInt8(0));
    out.push_back(x);
  }
  vals_[res] = out;
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
  if (op.isExclusive()) // P starts empty: after the rounds it holds the sum of the elements before
    for (Vals &p : P)
      p[0] = llvm::Constant::getNullValue(p[0]->getType());
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
  // Exclusive sums of a rank-1 tile whose warps own the highest index bits (one bin per thread,
  // as in a top-k histogram's scan): after the register and lane rounds, the warps' totals go
  // through shared memory once (two barriers, where a round per warp bit takes one each) and
  // every thread adds those of the warps before its own in scan order.
  size_t firstWarp = owners->size();
  for (size_t k = 0; k < owners->size() && firstWarp == owners->size(); ++k)
    if ((*owners)[k].kind == 'w')
      firstWarp = k;
  const bool warpTotals = op.isExclusive() && in->type.rank() == 1 && nops == 1 && firstWarp < owners->size() &&
                          std::all_of(owners->begin() + long(firstWarp), owners->end(),
                                      [](const AxisBit &o) { return o.kind == 'w'; });
  // Lane and warp rounds add the same partner totals to every register of a representative:
  // they are gathered per representative, E[rep] (the partners' totals in scan order, valid
  // where V[rep]), and combined into the registers once (`flush`) before a register round, the
  // warps' totals or the end: E = pt (+) E each round, then P = E (+) P, by associativity.
  std::map<int, Vals> E;
  std::map<int, llvm::Value *> V;
  auto flush = [&] {
    for (int r = 0; r < n; ++r)
      if (auto it = E.find(r & ~merged); it != E.end())
        P[r] = select(V[it->first], combineValues(op, it->second, P[r]), P[r]);
    E.clear();
    V.clear();
  };
  int warpRound = 0;
  for (const AxisBit &o : *owners) {
    if (o.kind == 'w' && warpTotals) {
      flush();
      exchangeWarpTotals(op, *owners, firstWarp, reps()[0], P, T);
      break;
    }
    if (o.kind == 'r') {
      flush();
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
    for (int r : rs) {
      const Vals &pt = partner[r];
      if (auto it = E.find(r); it == E.end()) {
        E[r] = pt;
        V[r] = partnerFirst;
      } else {
        it->second = select(partnerFirst, select(V[r], combineValues(op, pt, it->second), pt), it->second);
        V[r] = B.CreateOr(V[r], partnerFirst);
      }
    }
    for (int r : rs) {
      Vals t = combineOrdered(op, partnerFirst, T[r], partner[r]);
      for (int q = 0; q < n; ++q)
        if ((q & ~merged) == r)
          T[q] = t;
    }
  }
  flush();
  for (size_t k = 0; k < nops; ++k) {
    std::vector<llvm::Value *> out;
    for (auto &p : P)
      out.push_back(p[k]);
    vals_[op.result(static_cast<unsigned>(k))] = out;
  }
  if (op.isExclusive()) {
    // Every register's T is now the total of its line along the axis.
    std::vector<llvm::Value *> totals;
    for (auto &t : T)
      totals.push_back(t[0]);
    vals_[op.result(1)] = scanTotals(op, totals);
  }
  return true;
}

void Emitter::exchangeWarpTotals(const ir::Op &op, const std::vector<transforms::AxisBit> &owners, size_t firstWarp,
                                 int rep, std::vector<std::vector<llvm::Value *>> &P,
                                 std::vector<std::vector<llvm::Value *>> &T) {
  // owners[firstWarp..] are warp bits: the k-th one moves by 2^k blocks of the axis. A warp's
  // block index g takes those bits of its id; the warp holding block j has them from j and the
  // other warp bits zero (warps that differ only in those hold the same block).
  const unsigned eb = ir::storageBytes(op.operands[0]->type.dtype());
  const size_t m = owners.size() - firstWarp;
  assertScratchFits(int64_t(eb) * op.operands[0]->layout->numWarps());
  barrier();
  llvm::Value *own = T[size_t(rep)][0];
  B.CreateStore(own, smemPtr(B.CreateMul(warpId(), B.getInt32(eb))));
  barrier();
  llvm::Value *g = B.getInt32(0);
  for (size_t j = 0; j < m; ++j) {
    llvm::Value *bit = B.CreateAnd(B.CreateLShr(warpId(), B.getInt32(uint32_t(owners[firstWarp + j].bit))), B.getInt32(1));
    g = B.CreateOr(g, B.CreateShl(bit, B.getInt32(uint32_t(j))));
  }
  llvm::Value *zero = llvm::Constant::getNullValue(own->getType());
  llvm::Value *prefix = zero, *total = zero;
  for (uint32_t j = 0; j < (1u << m); ++j) {
    uint32_t w = 0;
    for (size_t b = 0; b < m; ++b)
      if (j >> b & 1)
        w |= 1u << owners[firstWarp + b].bit;
    llvm::Value *t = B.CreateLoad(own->getType(), smemPtr(B.getInt32(w * eb)));
    llvm::Value *before = op.isReverse() ? B.CreateICmpUGT(B.getInt32(j), g) : B.CreateICmpULT(B.getInt32(j), g);
    prefix = B.CreateSelect(before, combineValues(op, {prefix}, {t})[0], prefix);
    total = combineValues(op, {total}, {t})[0];
  }
  for (size_t r = 0; r < P.size(); ++r) {
    P[r] = combineValues(op, {prefix}, P[r]);
    T[r] = {total};
  }
}

std::vector<llvm::Value *> Emitter::scanTotals(const ir::Op &op, const std::vector<llvm::Value *> &lineTotal) {
  // The total's layout is the operand's slice (assign-layouts): its registers are the operand's
  // registers that do not move along the axis, in order (ir::sliceLayout).
  const ir::Value *total = op.result(1);
  if (total->type.isScalar())
    return {lineTotal[0]};
  const ir::Layout &l = *op.operands[0]->layout;
  const auto axis = static_cast<size_t>(op.axis());
  int alongAxis = 0;
  for (size_t i = 0; i < l.reg.size(); ++i)
    if (l.reg[i][axis] != 0)
      alongAxis |= 1 << i;
  std::vector<llvm::Value *> out;
  for (int r = 0; r < l.numRegs(); ++r)
    if ((r & alongAxis) == 0)
      out.push_back(lineTotal[size_t(r)]);
  return out;
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
  if (op.isExclusive()) {
    // One more round: each element takes its predecessor's inclusive sum (0 for the first),
    // each line's total is the inclusive sum at its end.
    barrier();
    for (int r = 0; r < l.numRegs(); ++r)
      B.CreateStore(vals[r][0], address(coords[r], 0));
    barrier();
    std::vector<llvm::Value *> ex, totals;
    for (int r = 0; r < l.numRegs(); ++r) {
      std::vector<llvm::Value *> pc = coords[r];
      llvm::Value *pos = pc[axis];
      llvm::Value *inside = reverse ? B.CreateICmpSLT(B.CreateAdd(pos, B.getInt32(1)), B.getInt32(static_cast<uint32_t>(len)))
                                    : B.CreateICmpSGE(pos, B.getInt32(1));
      pc[axis] = B.CreateSelect(inside, reverse ? B.CreateAdd(pos, B.getInt32(1)) : B.CreateSub(pos, B.getInt32(1)), pos);
      llvm::Value *prev = B.CreateLoad(vals[r][0]->getType(), address(pc, 0));
      ex.push_back(B.CreateSelect(inside, prev, llvm::Constant::getNullValue(prev->getType())));
      std::vector<llvm::Value *> end = coords[r];
      end[axis] = B.getInt32(reverse ? 0u : static_cast<uint32_t>(len - 1));
      totals.push_back(B.CreateLoad(vals[r][0]->getType(), address(end, 0)));
    }
    vals_[op.result(0)] = ex;
    vals_[op.result(1)] = scanTotals(op, totals);
    return;
  }
  for (size_t k = 0; k < nops; ++k) {
    std::vector<llvm::Value *> out;
    for (auto &v : vals)
      out.push_back(v[k]);
    vals_[op.result(static_cast<unsigned>(k))] = out;
  }
}

} // namespace tle::nvptx
