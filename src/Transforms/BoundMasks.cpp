// bound-masks: the stores whose bound mask the backend recomputes at the store (see BoundMasks.h).
#include "tle/Transforms/BoundMasks.h"
#include "tle/IR/BoundMask.h"

#include <algorithm>
#include <functional>

namespace tle::transforms {

using ir::OpKind;

namespace {

/// Whether the mask computed by `def` would stay live across work before `use`: a reduction,
/// scan, dot, barrier or control flow in between, or `use` in another block (or not after it).
bool liveAcrossWork(const ir::Op &def, const ir::Op &use) {
  if (def.parent != use.parent || !def.parent)
    return true;
  auto &ops = def.parent->ops;
  auto it = std::find_if(ops.begin(), ops.end(), [&](const std::unique_ptr<ir::Op> &o) { return o.get() == &def; });
  for (; it != ops.end() && it->get() != &use; ++it)
    switch ((*it)->kind) {
    case OpKind::Reduce: case OpKind::Scan: case OpKind::Dot: case OpKind::Barrier: case OpKind::ClusterBarrier:
    case OpKind::GridBarrier: case OpKind::SubmeshBarrier: case OpKind::DeviceBarrier: case OpKind::SignalWait:
    case OpKind::For: case OpKind::While: case OpKind::If:
      return true;
    default:
      break;
    }
  return it == ops.end();
}

} // namespace

int markBoundMasks(ir::Function &f) {
  int marked = 0;
  std::function<void(ir::Block &)> visit = [&](ir::Block &b) {
    for (auto &op : b.ops) {
      for (auto &r : op->regions)
        visit(*r);
      if (op->kind != OpKind::Store || op->isTmaStore() || op->isBoundsMask())
        continue;
      std::optional<ir::BoundMask> bm = ir::boundMaskOf(*op);
      if (bm && liveAcrossWork(*bm->compare, *op)) {
        op->setBoundsMask(true);
        ++marked;
      }
    }
  };
  visit(f.body);
  return marked;
}

} // namespace tle::transforms
