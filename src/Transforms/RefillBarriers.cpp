// insert-barriers, its last step: the CTA barrier before a pipeline slot's refill, which
// overwrites the slot an earlier iteration's readers used (see InsertBarriers.h).
#include "tle/Transforms/InsertBarriers.h"
#include "tle/Transforms/DotLowering.h"
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/WgmmaWaits.h"

#include <iterator>
#include <map>
#include <set>

namespace tle::transforms {

using ir::OpKind;

namespace {

class RefillBarriers {
public:
  explicit RefillBarriers(ir::Function &f)
      : f_(f), slots_(pipelineValues(f)), split_(producerConsumerSplit(f)) {}

  int run() {
    block(f_.body);
    return added_;
  }

private:
  ir::Function &f_;
  std::map<const ir::Value *, int> slots_; ///< pipelined values -> their class
  bool split_;                             ///< a producer/consumer split: TMA fills are the producer's
  int added_ = 0;

  using Iter = std::list<std::unique_ptr<ir::Op>>::iterator;

  int classOf(const ir::Value *v) const {
    auto it = slots_.find(v);
    return it == slots_.end() ? -1 : it->second;
  }
  const ir::PipelineBuffer &buffer(int cls) const { return f_.pipelines[static_cast<size_t>(cls)]; }

  /// A fill of a shared slot that the CTA's threads copy and others read: not a private slot
  /// (each thread reads its own copies), not a TMA fill of a producer/consumer split (the
  /// producer waits on the slot's "empty" mbarrier instead).
  bool sharedFill(const ir::Op &op) const {
    if (op.kind != OpKind::Load || classOf(op.result()) < 0)
      return false;
    const ir::PipelineBuffer &b = buffer(classOf(op.result()));
    return !b.privateSlots && !(split_ && b.tmaMap >= 0);
  }

  /// Ops that touch no shared memory and leave the threads where they were: computing in
  /// registers, a fill's issue, a cp.async commit.
  bool keepsOrder(const ir::Op &op) const {
    OpKind k = op.kind;
    return ir::isElementwise(k) || k == OpKind::Constant || k == OpKind::Splat || k == OpKind::Arange ||
           k == OpKind::ExpandDims || k == OpKind::Broadcast || k == OpKind::ProgramId || k == OpKind::NumPrograms ||
           k == OpKind::AsyncCommitGroup || (k == OpKind::Load && classOf(op.result()) >= 0) ||
           ((k == OpKind::ExtractTile || k == OpKind::InsertTile) && ir::tileOpInRegisters(op));
  }

  static bool ctaBarrier(const ir::Op &op) { return op.kind == OpKind::Barrier && op.sync.barrierId < 0; }

  /// Whether op reads a value of class `cls`.
  bool reads(const ir::Op &op, int cls) const {
    for (const ir::Value *v : op.operands)
      if (classOf(v) == cls)
        return true;
    return false;
  }

  /// Where, in loop body `body`, the previous iteration's reads of class `cls`'s slots are
  /// known retired in every thread.
  struct Retired {
    bool known = false;  ///< false: a group left in flight by wgmma_wait 1, a reader in a nested region
    bool atStart = true; ///< within that iteration (synchronous readers, groups waited for at once)
    Iter after;          ///< else after this op: the body's first that waits for every wgmma group
                         ///< (a group reading the class is carried into this iteration); end() if none
  };

  Retired retired(ir::Block &body, int cls) const {
    Retired r;
    bool carried = false;
    for (auto &o : body.ops) {
      if (o->kind == OpKind::Yield || o->kind == OpKind::Permute || (o->kind == OpKind::Load && classOf(o->result()) >= 0))
        continue;
      for (auto &reg : o->regions) {
        bool nested = false;
        ir::walk(*reg, [&](ir::Op &x) { nested |= reads(x, cls); });
        if (nested)
          return r;
      }
      if (!reads(*o, cls) || o->kind != OpKind::Dot || !o->isAsyncWgmma())
        continue;
      WgmmaGroupWait w = wgmmaGroupWait(*o);
      if (w == WgmmaGroupWait::Deferred)
        return r;
      carried |= w == WgmmaGroupWait::Carried;
    }
    r.known = true;
    r.atStart = !carried;
    r.after = body.ops.end();
    for (auto it = body.ops.begin(); carried && it != body.ops.end(); ++it) {
      const ir::Op &o = **it;
      bool syncWgmma = o.kind == OpKind::Dot && !o.isAsyncWgmma() && wgmmaDot(o, f_.arch, f_.numWarps);
      if ((o.kind == OpKind::WgmmaWait && o.sync.pending == 0) || syncWgmma) {
        r.after = it;
        break;
      }
    }
    return r;
  }

  /// Whether a top-level barrier of loop body `b` lies between the retirement of the previous
  /// iteration's reads of `cls` and `fill`.
  bool retiredBehindBarrier(ir::Block &b, int cls, Iter fill) const {
    if (!b.parent || b.parent->kind != OpKind::For)
      return false;
    Retired r = retired(b, cls);
    if (!r.known)
      return false;
    bool passed = r.atStart;
    for (Iter it = b.ops.begin(); it != fill; ++it) {
      if (passed && ctaBarrier(**it))
        return true;
      passed |= it == r.after;
    }
    return false;
  }

  void block(ir::Block &b) {
    // `ordered`: a barrier since the last op that may have touched shared memory.
    bool ordered = false;
    for (Iter it = b.ops.begin(); it != b.ops.end(); ++it) {
      ir::Op &op = **it;
      for (auto &r : op.regions)
        block(*r);
      if (ctaBarrier(op)) {
        ordered = true;
        continue;
      }
      if (!sharedFill(op)) {
        ordered &= keepsOrder(op);
        continue;
      }
      // A fill at the kernel's top level takes a slot no thread has read; any other overwrites
      // the slot an earlier iteration's (or pass's) readers used.
      if (&b == &f_.body || ordered || retiredBehindBarrier(b, classOf(op.result()), it))
        continue;
      ir::Builder B(&b);
      B.setInsertionPoint(&b, it);
      B.create(OpKind::Barrier, op.loc, {}, {});
      ++added_;
      ordered = true;
    }
  }
};

} // namespace

int insertRefillBarriers(ir::Function &f) { return RefillBarriers(f).run(); }

} // namespace tle::transforms
