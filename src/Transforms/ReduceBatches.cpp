// The batch-reduces pass (tle/Transforms/ReduceBatches.h): which reduces share one exchange
// across warps, decided on the IR and marked `batch=N`, for allocate-shared and the backend.
#include "tle/Transforms/ReduceBatches.h"
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/Scratch.h"

#include <algorithm>
#include <iterator>
#include <set>

namespace tle::transforms {

using ir::OpKind;

namespace {

/// Whether a carried wgmma group's wait (a wgmma_wait 0 of a loop body's argument) comes after
/// `op` in its block or in a block around it.
bool carriedWgmmaWaitAhead(const ir::Op &op) {
  for (const ir::Op *at = &op; at && at->parent; at = at->parent->parent) {
    const ir::Block &b = *at->parent;
    auto it = b.find(at);
    for (++it; it != b.ops.end(); ++it)
      if ((*it)->kind == OpKind::WgmmaWait && (*it)->sync.pending == 0 &&
          std::any_of((*it)->operands.begin(), (*it)->operands.end(), [&](const ir::Value *v) { return v->owner == &b; }))
        return true;
  }
  return false;
}

/// Whether `op` is a reduce that combines across warps through shared memory.
bool crossesWarps(const ir::Op &op) {
  if (op.kind != OpKind::Reduce)
    return false;
  const ir::Value *in = op.operands[0];
  return in->type.isTile() && in->layout && !reduceWarpBits(*in->layout, op.axis()).empty();
}

int64_t alignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

/// The reduces of `blk` in a batch already (a reduce marked batch=N and the N after it).
std::set<const ir::Op *> batchedIn(const ir::Block &blk) {
  std::set<const ir::Op *> taken;
  int members = 0;
  for (auto &o : blk.ops) {
    if (members > 0 || (o->kind == OpKind::Reduce && o->reduceBatchSize() > 0))
      taken.insert(o.get());
    members = members > 0 ? members - 1 : o->kind == OpKind::Reduce ? o->reduceBatchSize() : 0;
  }
  return taken;
}

/// The reduces after `reduce` (in its block `blk`, at `at`) that join its exchange: operands all
/// defined before it and none in pipeline slots (`async`), combining across warps, in no batch
/// (`taken`), while the batch's regions (16-byte aligned, side by side) stay within max(its own
/// bytes, 4096).
std::vector<ir::Op *> membersOf(ir::Block &blk, std::list<std::unique_ptr<ir::Op>>::iterator at,
                                const std::set<const ir::Op *> &taken, const std::map<const ir::Value *, int> &async) {
  const ir::Op &reduce = **at;
  std::set<const ir::Op *> before; // the ops of the block ahead of `reduce`
  for (auto it = blk.ops.begin(); it != at; ++it)
    before.insert(it->get());
  auto definedBefore = [&](const ir::Value *x) {
    // A block argument or a value of an enclosing block is visible throughout the block.
    return !x->def || x->def->parent != &blk || before.count(x->def);
  };
  int64_t total = reducePartialsBytes(reduce, reduceWarpBits(*reduce.operands[0]->layout, reduce.axis()).size());
  const int64_t limit = std::max<int64_t>(total, 4096);
  std::vector<ir::Op *> batch;
  for (auto it = std::next(at); it != blk.ops.end(); ++it) {
    ir::Op &o = **it;
    if (!crossesWarps(o) || taken.count(&o) ||
        !std::all_of(o.operands.begin(), o.operands.end(),
                     [&](const ir::Value *x) { return definedBefore(x) && !async.count(x); }))
      continue;
    int64_t bytes = alignUp(total, 16) + reducePartialsBytes(o, reduceWarpBits(*o.operands[0]->layout, o.axis()).size());
    if (bytes > limit)
      continue;
    total = bytes;
    batch.push_back(&o);
  }
  return batch;
}

void batchBlock(ir::Block &b, const std::map<const ir::Value *, int> &async) {
  std::set<const ir::Op *> taken = batchedIn(b);
  for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
    ir::Op &op = **it;
    for (auto &r : op.regions)
      batchBlock(*r, async);
    if (!crossesWarps(op) || taken.count(&op) || carriedWgmmaWaitAhead(op))
      continue;
    std::vector<ir::Op *> batch = membersOf(b, it, taken, async);
    if (batch.empty())
      continue;
    // The members' operands are all defined before `op`, so each may move right after it.
    auto at = std::next(it);
    for (ir::Op *m : batch) {
      b.ops.splice(at, b.ops, b.find(m));
      taken.insert(m);
    }
    op.setReduceBatchSize(static_cast<int>(batch.size()));
    std::advance(it, static_cast<long>(batch.size()));
  }
}

} // namespace

void batchReduces(ir::Function &f) {
  batchBlock(f.body, pipelineValues(f));
}

} // namespace tle::transforms
