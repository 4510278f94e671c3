// Issuing independent loads early (see HoistLoads.h).
#include "tle/Transforms/HoistLoads.h"
#include "tle/Transforms/RegisterEstimate.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <vector>

namespace tle::transforms {

using ir::OpKind;

bool blocksLoadMotion(const ir::Op &op) {
  if (ir::isGpuSyncOp(op.kind)) // mbarriers, fences, async copies: they order memory
    return true;
  switch (op.kind) {
  case OpKind::Store: case OpKind::AtomicRMW: case OpKind::AtomicCAS: case OpKind::Barrier:
  case OpKind::GridDepControl: case OpKind::Print: case OpKind::Assert: case OpKind::ClusterBarrier:
  case OpKind::ClusterArrive: case OpKind::ClusterWait: case OpKind::GridBarrier:
    return true;
  case OpKind::InlineAsm:
    return !op.asmPure();
  case OpKind::RawCall: // native code may write any memory it can reach
    return true;
  case OpKind::Load:
    return op.isVolatile();
  default:
    break;
  }
  for (auto &r : op.regions) {
    bool blocked = false;
    ir::walk(*r, [&](ir::Op &o) { blocked |= o.regions.empty() && blocksLoadMotion(o); });
    if (blocked)
      return true;
  }
  return false;
}

namespace {

/// Whether moving a load above `op` can hide latency: ops ptxas cannot move loads across (they
/// synchronise the block or hold loops and branches).
bool worthCrossing(const ir::Op &op) {
  switch (op.kind) {
  case OpKind::Reduce: case OpKind::Scan: case OpKind::Permute: case OpKind::Reshape: case OpKind::Cat:
  case OpKind::Join: case OpKind::Split: case OpKind::Flip: case OpKind::Gather:
    return true;
  default:
    return !op.regions.empty();
  }
}

class Hoister {
public:
  explicit Hoister(const ir::Function &f) : f_(f) {}
  unsigned count = 0;

  void block(ir::Block &b) {
    for (auto &op : b.ops)
      for (auto &r : op->regions)
        block(*r);
    std::vector<ir::Op *> loads;
    for (auto &op : b.ops)
      if (op->kind == OpKind::Load && !op->isVolatile() && op->operands[0]->type.elem.space == ir::AddrSpace::Global)
        loads.push_back(op.get());
    std::set<const ir::Op *> hoisted;
    int64_t added = 0;
    for (ir::Op *load : loads)
      if (hoist(b, load, hoisted, added))
        ++count;
  }

private:
  const ir::Function &f_;

  /// Registers per thread the values hoisted in one block may add in all. More can cost the
  /// kernel a CTA per SM: layernorm forward at 8K columns and 8 warps went from 64 to 80
  /// registers with its weight and bias loads hoisted (4 -> 3 CTAs per SM) and ran 5 % slower.
  static constexpr int64_t kMaxAddedRegisters = 8;

  bool hoist(ir::Block &b, ir::Op *load, std::set<const ir::Op *> &hoisted, int64_t &added) {
    std::vector<ir::Op *> order;
    for (auto &op : b.ops)
      order.push_back(op.get());
    size_t at = std::find(order.begin(), order.end(), load) - order.begin();
    // The first position it may take: after the last op it may not cross, or the last load
    // (loads are issued in program order).
    size_t first = 0;
    for (size_t i = at; i-- > 0;)
      if (blocksLoadMotion(*order[i]) || order[i]->kind == OpKind::Load) {
        first = i + 1;
        break;
      }
    // Ops already hoisted there stay ahead of it.
    while (first < at && hoisted.count(order[first]))
      ++first;
    if (first >= at)
      return false;
    // The in-block ops between `first` and the load that it depends on move with it.
    std::set<const ir::Op *> moving = {load};
    for (size_t i = at; i-- > first;) {
      ir::Op *op = order[i];
      bool needed = false;
      for (auto &r : op->results)
        for (const ir::Op *m : moving)
          needed |= std::find(m->operands.begin(), m->operands.end(), r.get()) != m->operands.end();
      if (needed) {
        if (!op->regions.empty())
          return false;
        moving.insert(op);
      }
    }
    bool worth = false;
    for (size_t i = first; i < at; ++i)
      worth |= !moving.count(order[i]) && worthCrossing(*order[i]);
    if (!worth)
      return false;
    // Registers: the moved values are live over the crossed ops too.
    std::vector<int64_t> live = liveRegisters(b, f_.numWarps);
    int64_t extra = 0;
    for (const ir::Op *m : moving)
      for (auto &r : m->results)
        if (!r->type.elem.isPointer() && r->type.dtype() != ir::DType::I1)
          extra += estimatedRegisters(r->type, f_.numWarps);
    int64_t peak = 0;
    for (size_t i = first; i < at; ++i)
      peak = std::max(peak, live[i + 1]);
    if (added + extra > kMaxAddedRegisters || peak + extra > registerCeiling(f_.numWarps) * 3 / 4)
      return false;
    added += extra;
    // Splice the moving ops, in their order, in front of the first op from `first` on that stays
    // (there is one: the op worth crossing).
    size_t stay = first;
    while (moving.count(order[stay]))
      hoisted.insert(order[stay++]);
    auto dest = std::find_if(b.ops.begin(), b.ops.end(), [&](auto &p) { return p.get() == order[stay]; });
    for (size_t i = stay; i <= at; ++i) {
      if (!moving.count(order[i]))
        continue;
      auto it = std::find_if(b.ops.begin(), b.ops.end(), [&](auto &p) { return p.get() == order[i]; });
      b.ops.splice(dest, b.ops, it);
      hoisted.insert(order[i]);
    }
    return true;
  }
};

} // namespace

unsigned hoistLoads(ir::Function &f) {
  bool dots = false;
  ir::walk(f.body, [&](ir::Op &op) { dots |= op.kind == OpKind::Dot; });
  if (dots)
    return 0;
  Hoister h(f);
  h.block(f.body);
  return h.count;
}

} // namespace tle::transforms
