// The pipeline pass's protocol ops: the setup of its TMA slots' mbarriers and tensor maps at
// the kernel's start, and the end of the pipelines' live range (their copies waited for, the
// mbarriers invalidated, TMA stores' staging read), as explicit ops of the IR.
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/Scratch.h"

#include "tle/Transforms/DotLowering.h"

#include <algorithm>
#include <list>
#include <map>
#include <memory>
#include <set>

namespace tle::transforms {

using ir::OpKind;

namespace {

bool specialized(const ir::Function &f) {
  bool explicitPartitions = std::any_of(f.body.ops.begin(), f.body.ops.end(),
                                        [](const auto &op) { return op->kind == OpKind::WarpSpecialize; });
  return f.producerWarps > 0 && !explicitPartitions;
}

bool tmaLoads(const ir::Function &f) {
  return std::any_of(f.pipelines.begin(), f.pipelines.end(), [](const ir::PipelineBuffer &p) { return p.tmaMap >= 0; });
}

} // namespace

bool pipelineProtocolPlaced(ir::Function &f) {
  bool found = false;
  ir::walk(f.body, [&](ir::Op &op) {
    found |= op.kind == OpKind::PipelineMbarrier || op.kind == OpKind::TensormapPrefetch || op.kind == OpKind::PipelineWait ||
             (op.kind == OpKind::AsyncWaitGroup && op.sync.all);
  });
  return found;
}

namespace {

/// A TMA fill at the top level of the kernel that no guard may skip, as slot count `count`
/// (0 .. 2 * slots - 1: the slot and the parity of its phase) of pipeline `pipeline`.
struct TopFill {
  int pipeline = 0, count = 0;
};

/// The top-level unguarded TMA fills outside loops, in program order. Fills outside a loop that
/// carries their class and not counted at run time take slots 0, 1, ... of their class in
/// program order (the backend's slot choice for a prologue: docs/compiler.md, "pipeline").
std::vector<TopFill> topFills(ir::Function &f, const std::map<const ir::Value *, int> &values) {
  std::map<int, int> prologue;
  std::vector<TopFill> out;
  ir::walk(f.body, [&](ir::Op &op) {
    if (op.kind != OpKind::Load || !values.count(op.result()))
      return;
    int k = values.at(op.result());
    const ir::PipelineBuffer &buf = f.pipelines[size_t(k)];
    bool inLoop = std::any_of(op.parent->args.begin(), op.parent->args.end(), [&](const auto &a) {
      auto it = values.find(a.get());
      return it != values.end() && it->second == k;
    });
    if (inLoop || buf.dynamicFills)
      return;
    int n = prologue[k]++;
    bool unguarded = op.operands.size() == 4 + 3 * op.blockShape().size();
    if (buf.tmaMap >= 0 && op.parent == &f.body && unguarded)
      out.push_back({k, n % (2 * buf.slots)});
  });
  return out;
}

class Protocol {
public:
  explicit Protocol(ir::Function &f) : f(f), B(&f.body), ws(specialized(f)) {}

  void run() {
    std::map<const ir::Value *, int> values = pipelineValues(f);
    size_t last = lastPipelineTopOp(f, values);
    auto ret = std::prev(f.body.ops.end());
    bool trailingReturn = (*ret)->kind == OpKind::Return;
    std::vector<TopFill> fills = topFills(f, values);
    bool stagedStores = false;
    ir::walk(f.body, [&](ir::Op &op) { stagedStores |= op.kind == OpKind::Store && op.tmaStaging() >= 0; });
    // The insertion points, found before any op moves the indices.
    auto transition = f.body.ops.end();
    if (f.pipelineBytes > 0 && last + 1 < f.body.ops.size())
      transition = std::next(f.body.ops.begin(), static_cast<std::ptrdiff_t>(last + 1));
    auto end = trailingReturn ? ret : f.body.ops.end();
    SourceLoc loc = f.loc;
    if (!f.tensorMaps.empty())
      setup(loc);
    bool drained = false;
    if (transition != f.body.ops.end()) {
      // Past the last op that uses the pipeline area, its bytes are scratch space again: the
      // copies still in flight (a pipeline's masked-off prefetches) land first, every thread is
      // past its last wait before the mbarriers are invalidated, and TMA stores have read their
      // staging areas.
      B.setInsertionPoint(&f.body, transition);
      waitAll(loc);
      if (tmaLoads(f)) {
        drain(fills, loc);
        drained = true;
        B.create(OpKind::Barrier, loc, {}, {});
        forEachBarrier(OpKind::MbarrierInval, loc);
      }
      if (stagedStores) {
        storeWait(loc);
        B.create(OpKind::Barrier, loc, {}, {});
        stagedStores = false;
      }
    }
    // The kernel's end: no copy into the CTA's shared memory outlives it.
    B.setInsertionPoint(&f.body, end);
    if (!f.pipelines.empty()) {
      waitAll(loc);
      if (!drained)
        drain(fills, loc);
    }
    if (stagedStores)
      storeWait(loc);
    waitsIn(f.body, values);
  }

private:
  ir::Function &f;
  ir::Builder B;
  bool ws;

  ir::Value *slotBarrier(int k, int slot, bool empty, SourceLoc loc) {
    ir::Op *op = B.create(OpKind::PipelineMbarrier, loc, {},
                          {ir::Type(ir::ScalarType::ptrTo(ir::DType::I64, ir::AddrSpace::Shared))});
    op->sync.pipeline = k;
    op->sync.slot = slot;
    op->sync.empty = empty;
    return op->result();
  }

  /// `kind` (mbarrier_init or mbarrier_inval) on every slot's mbarrier of every TMA pipeline:
  /// the "full" one, then in a warp-specialised kernel the "empty" one.
  void forEachBarrier(OpKind kind, SourceLoc loc) {
    for (size_t k = 0; k < f.pipelines.size(); ++k)
      for (int s = 0; f.pipelines[k].tmaMap >= 0 && s < f.pipelines[k].slots; ++s) {
        B.create(kind, loc, {slotBarrier(static_cast<int>(k), s, false, loc)}, {});
        if (ws) {
          ir::Op *op = B.create(kind, loc, {slotBarrier(static_cast<int>(k), s, true, loc)}, {});
          if (kind == OpKind::MbarrierInit)
            op->sync.count = slotReleaseArrivals(f);
        }
      }
  }

  /// At the kernel's start: the slots' mbarriers initialised (one arrival with the copy's bytes
  /// per phase; a release by the consumers for an "empty" one), the tensor maps prefetched, and
  /// the initialisation made visible to every thread and to the async proxy (TMA completes
  /// transactions on these mbarriers; PTX ISA §9.7.13.15, §9.7.13.4).
  void setup(SourceLoc loc) {
    B.setInsertionPoint(&f.body, f.body.ops.begin());
    forEachBarrier(OpKind::MbarrierInit, loc);
    for (size_t k = 0; k < f.tensorMaps.size(); ++k)
      B.create(OpKind::TensormapPrefetch, loc, {}, {})->sync.map = static_cast<int>(k);
    if (!tmaLoads(f))
      return; // TMA stores have no mbarriers
    B.create(OpKind::FenceMbarrierInit, loc, {}, {});
    B.create(OpKind::FenceProxyAsync, loc, {}, {});
    B.create(OpKind::Barrier, loc, {}, {});
  }

  std::set<const ir::Value *> waited_; ///< TMA values waited for before an enclosing loop

  bool isTma(const std::map<const ir::Value *, int> &values, const ir::Value *v) const {
    auto it = values.find(v);
    return it != values.end() && f.pipelines[size_t(it->second)].tmaMap >= 0;
  }

  void waitBefore(ir::Block &b, std::list<std::unique_ptr<ir::Op>>::iterator it, const ir::Value *v) {
    B.setInsertionPoint(&b, it);
    B.create(OpKind::PipelineWait, (*it)->loc, {const_cast<ir::Value *>(v)}, {});
  }

  /// The waits for TMA fills before the wgmma dots that read their slots: each operand's
  /// pipeline_wait right before its dot, except a tile copied before a loop whose dots read it
  /// (attention's Q: an unguarded fill outside the loop body), waited for once before the loop
  /// instead of with a try_wait loop in every iteration.
  void waitsIn(ir::Block &b, const std::map<const ir::Value *, int> &values) {
    for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
      ir::Op &op = **it;
      if (op.kind == OpKind::Dot && wgmmaDot(op, f.arch, f.numWarps))
        for (unsigned k = 0; k < 2; ++k) {
          const ir::Value *v = op.operands[k];
          if (isTma(values, v) && (k == 0 || v != op.operands[0]) && !waited_.count(v))
            waitBefore(b, it, v);
        }
      std::vector<const ir::Value *> here;
      if (op.kind == OpKind::For)
        for (auto &o : op.regions[0]->ops) {
          if (o->kind != OpKind::Dot || !wgmmaDot(*o, f.arch, f.numWarps))
            continue;
          for (unsigned k = 0; k < 2; ++k) {
            const ir::Value *v = o->operands[k];
            const ir::Op *d = v->def;
            if (!isTma(values, v) || waited_.count(v) || !d || d->kind != OpKind::Load ||
                d->parent == op.regions[0].get() || d->operands.size() > 4 + 3 * d->blockShape().size())
              continue;
            waitBefore(b, it, v);
            waited_.insert(v);
            here.push_back(v);
          }
        }
      for (auto &r : op.regions)
        waitsIn(*r, values);
      for (const ir::Value *v : here)
        waited_.erase(v);
    }
  }

  void waitAll(SourceLoc loc) { B.create(OpKind::AsyncWaitGroup, loc, {}, {})->sync.all = true; }

  void storeWait(SourceLoc loc) {
    ir::Op *op = B.create(OpKind::TmaStoreWait, loc, {}, {});
    op->sync.read = true;
    op->sync.pending = 0;
  }

  /// Waits for the top-level fills no later op may have waited for (a guard around their
  /// readers), so that no copy is in flight when the mbarriers are invalidated.
  void drain(const std::vector<TopFill> &fills, SourceLoc loc) {
    for (const TopFill &t : fills) {
      const ir::PipelineBuffer &buf = f.pipelines[size_t(t.pipeline)];
      ir::Value *bar = slotBarrier(t.pipeline, t.count % buf.slots, false, loc);
      ir::Op *phase = B.create(OpKind::Constant, loc, {}, {ir::Type::scalar(ir::DType::I32)});
      phase->setIntValue(t.count >= buf.slots ? 1 : 0);
      B.create(OpKind::MbarrierWait, loc, {bar, phase->result()}, {});
    }
  }
};

} // namespace

bool releasePerWarpgroup(const ir::Function &f) {
  return std::none_of(f.pipelines.begin(), f.pipelines.end(), [](const ir::PipelineBuffer &buf) {
    return buf.tmaMap >= 0 && (buf.restaged || buf.privateSlots);
  });
}

int slotReleaseArrivals(const ir::Function &f) { return releasePerWarpgroup(f) ? f.numWarps / 4 : 32 * f.numWarps; }

void placePipelineProtocol(ir::Function &f) { Protocol(f).run(); }

} // namespace tle::transforms
