// lower-histograms: the contract is in include/tle/Transforms/Histograms.h.
#include "tle/Transforms/Histograms.h"
#include "tle/Transforms/AllocateShared.h"

#include <iterator>
#include <string>
#include <vector>

namespace tle::transforms {

using ir::DType;
using ir::OpKind;
using ir::ScalarType;
using ir::Type;

namespace {

/// Comparisons above this many per thread go to shared-memory atomics on the GPU.
constexpr int64_t kComparesPerThread = 64;

ir::Value *expandDims(ir::Builder &b, SourceLoc loc, ir::Value *v, int axis) {
  std::vector<int64_t> shape = v->type.shape;
  shape.insert(shape.begin() + axis, 1);
  ir::Op *op = b.create(OpKind::ExpandDims, loc, {v}, {Type(v->type.elem, shape)});
  op->setAxis(axis);
  return op->result();
}

ir::Value *broadcast(ir::Builder &b, SourceLoc loc, ir::Value *v, const std::vector<int64_t> &shape) {
  return b.create(OpKind::Broadcast, loc, {v}, {Type(v->type.elem, shape)})->result();
}

/// The [n] mask as a tile of x's shape (a scalar splat), or null.
ir::Value *maskTile(ir::Builder &b, SourceLoc loc, const ir::Op &h) {
  if (h.operands.size() < 2)
    return nullptr;
  ir::Value *m = h.operands[1];
  return m->type.isTile() ? m : b.splat(loc, m, h.operands[0]->type.shape);
}

/// x's values in a type that also holds every bin number: x itself when it is 32 bits or wider,
/// else x widened to i32 (by its signedness), so that no bin number wraps into x's range.
ir::Value *widened(ir::Builder &b, SourceLoc loc, ir::Value *x) {
  return ir::bitWidth(x->type.dtype()) >= 32 ? x : b.cast(loc, x, ScalarType{DType::I32});
}

/// Counts of the bins [g, g + group) in x where `m` holds: a [n, group] comparison summed over n.
ir::Value *countGroup(ir::Builder &b, SourceLoc loc, ir::Value *x, ir::Value *m, int64_t g, int64_t group) {
  int64_t n = x->type.shape[0];
  std::vector<int64_t> shape = {n, group};
  ir::Op *ar = b.create(OpKind::Arange, loc, {}, {Type(ScalarType{DType::I32}, {group})});
  ar->setArangeBounds(g, g + group);
  ir::Value *ids = ar->result();
  if (x->type.elem != ids->type.elem)
    ids = b.cast(loc, ids, x->type.elem);
  ir::Value *values = broadcast(b, loc, expandDims(b, loc, x, 1), shape);
  ir::Value *hit = b.cmp(loc, ir::CmpPred::Eq, values, broadcast(b, loc, expandDims(b, loc, ids, 0), shape));
  if (m)
    hit = b.binary(OpKind::And, loc, hit, broadcast(b, loc, expandDims(b, loc, m, 1), shape));
  ir::Value *ones = b.cast(loc, hit, ScalarType{DType::I32});
  ir::Op *sum = b.create(OpKind::Reduce, loc, {ones}, {Type(ScalarType{DType::I32}, {group})});
  sum->setAxis(0);
  sum->setReduceKind(ir::ReduceKind::Sum);
  return sum->result();
}

/// The comparison form: an [n, bins] comparison summed over n (lowerHistograms takes it only
/// while that is at most kComparesPerThread elements per thread).
ir::Value *byComparisons(ir::Builder &b, const ir::Op &h) {
  ir::Value *x = widened(b, h.loc, h.operands[0]);
  return countGroup(b, h.loc, x, maskTile(b, h.loc, h), 0, h.result()->type.shape[0]);
}

/// The shared-memory form: zeros, one relaxed CTA-scope atomic add per counted value, read back.
ir::Value *byAtomics(ir::Builder &b, const ir::Op &h) {
  SourceLoc loc = h.loc;
  ir::Value *x = widened(b, loc, h.operands[0]), *m = maskTile(b, loc, h);
  int64_t n = x->type.shape[0], bins = h.result()->type.shape[0];
  const ScalarType i32{DType::I32}, sharedPtr = ScalarType::ptrTo(DType::I32, ir::AddrSpace::Shared);
  ir::Op *alloc = b.create(OpKind::LocalAlloc, loc, {}, {Type(sharedPtr)});
  alloc->setAllocShape({bins});
  alloc->result()->nameHint = "histogram";
  ir::Value *buf = alloc->result();
  ir::Op *ar = b.create(OpKind::Arange, loc, {}, {Type(i32, {bins})});
  ar->setArangeBounds(0, bins);
  ir::Value *slots = b.create(OpKind::AddPtr, loc, {b.splat(loc, buf, {bins}), ar->result()}, {Type(sharedPtr, {bins})})->result();
  ir::Value *zero32 = b.constInt(loc, DType::I32, 0);
  b.create(OpKind::Store, loc, {slots, b.splat(loc, zero32, {bins})}, {});
  // Counted: 0 <= x < bins (in x's type and signedness, widened: `widened`), where the mask holds.
  ir::Value *zero = b.splat(loc, b.constInt(loc, x->type.dtype(), 0), {n});
  ir::Value *top = b.splat(loc, b.constInt(loc, x->type.dtype(), bins), {n});
  ir::Value *ge = b.cmp(loc, ir::CmpPred::Ge, x, zero);
  ir::Value *ok = b.binary(OpKind::And, loc, ge, b.cmp(loc, ir::CmpPred::Lt, x, top));
  if (m)
    ok = b.binary(OpKind::And, loc, ok, m);
  ir::Value *bin = x->type.elem == i32 ? x : b.cast(loc, x, i32);
  bin = b.select(loc, ok, bin, b.splat(loc, zero32, {n}));
  ir::Value *at = b.create(OpKind::AddPtr, loc, {b.splat(loc, buf, {n}), bin}, {Type(sharedPtr, {n})})->result();
  ir::Op *add = b.create(OpKind::AtomicRMW, loc, {at, b.splat(loc, b.constInt(loc, DType::I32, 1), {n}), ok},
                         {Type(i32, {n})});
  add->setAtomicKind(ir::AtomicKind::Add);
  add->setMemSem(ir::MemSem::Relaxed);
  add->setMemScope(ir::MemScope::Cta);
  return b.create(OpKind::Load, loc, {slots}, {Type(i32, {bins})})->result();
}

} // namespace

unsigned lowerHistograms(ir::Function &f, DiagnosticEngine *diags) {
  std::vector<ir::Op *> found;
  ir::walk(f.body, [&](ir::Op &op) {
    if (op.kind == OpKind::Histogram)
      found.push_back(&op);
  });
  const int threads = 32 * f.numWarps;
  unsigned rewritten = 0;
  for (ir::Op *h : found) {
    ir::Block *block = h->parent;
    ir::Builder b(block);
    b.setInsertionPoint(block, block->find(h));
    int64_t n = h->operands[0]->type.shape[0], bins = h->result()->type.shape[0];
    bool large = n * bins > kComparesPerThread * threads, atomics = !f.arch.empty() && large;
    if (large && f.arch.empty())
      continue; // the CPU backend counts it in a loop
    if (atomics && diags && bins * 4 > sharedMemoryLimit(f.arch)) {
      diags->error(h->loc, "tl.histogram of " + std::to_string(bins) + " bins counts into " + std::to_string(bins * 4) +
                               " bytes of shared memory, more than the " + std::to_string(sharedMemoryLimit(f.arch)) +
                               " bytes " + f.arch + " allows per block; use fewer bins");
      continue;
    }
    ir::Value *counts = atomics ? byAtomics(b, *h) : byComparisons(b, *h);
    if (counts->nameHint.empty())
      counts->nameHint = h->result()->nameHint; // the source variable's name, for printing
    auto at = block->find(h);
    ir::replaceUsesFrom(*block, std::next(at), h->result(), counts);
    block->ops.erase(at);
    ++rewritten;
  }
  return rewritten;
}

} // namespace tle::transforms
