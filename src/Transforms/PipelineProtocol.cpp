// The pipeline pass's protocol ops: the setup of its TMA slots' mbarriers and tensor maps at
// the kernel's start, and the end of the pipelines' live range (their copies waited for, the
// mbarriers invalidated, TMA stores' staging read), as explicit ops of the IR.
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/Scratch.h"

#include "tle/Transforms/DotLowering.h"
#include "tle/Transforms/TensorMaps.h"

#include <algorithm>
#include <climits>
#include <list>
#include <map>
#include <memory>
#include <set>

namespace tle::transforms {

using ir::OpKind;

namespace {

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

/// The cp.async groups of the pipelines' copies and the waits for them, as ops: an
/// async_commit_group after each copy (one group per fill), and before the first reader of a
/// fill (a dot's slot operand; a private slot's first read in its iteration) an
/// async_wait_group with the count of groups committed after that fill, counted in program
/// order (the loop body's own commits, and for a value carried into the body, the later stages
/// of the window: the prologue issues the stages in body order, iteration by iteration); a
/// dot's slots are read by other threads too, so a barrier follows (after fence_proxy_async
/// where wgmma reads them); a private slot is its thread's own. After a pipelined loop whose
/// slots are filled again later (the next iteration of a persistent kernel's loop over tiles, or
/// a later loop), an async_wait_group 0: the loop's prefetches past its last iteration are
/// masked-off copies that still zero-fill their slots (PTX ISA §9.7.9.25.3, cp.async with a
/// src-size of 0), and cp.async gives no order between two copies into the same bytes, so they
/// must land before a refill of those slots is issued.
class CopyGroups {
public:
  CopyGroups(ir::Function &f, const std::map<const ir::Value *, int> &values) : f(f), values(values), B(&f.body) {}

  void run() { block(f.body); }

private:
  ir::Function &f;

  const std::map<const ir::Value *, int> &values;
  ir::Builder B;
  int commits = 0;                          ///< groups committed so far in the block being walked
  std::map<const ir::Value *, int> stamp;   ///< `commits` when each fill was committed
  std::set<const ir::Value *> readPrivate;  ///< private values waited for already

  const ir::PipelineBuffer *pipelineOf(const ir::Value *v) const {
    auto it = values.find(v);
    return it == values.end() ? nullptr : &f.pipelines[size_t(it->second)];
  }
  bool copied(const ir::Value *v) const { // filled by cp.async
    const ir::PipelineBuffer *p = pipelineOf(v);
    return p && p->tmaMap < 0;
  }
  int pendingAfter(const ir::Value *v) const {
    auto it = stamp.find(v);
    return std::clamp(commits - (it != stamp.end() ? it->second : 0), 0, 7);
  }

  using Iter = std::list<std::unique_ptr<ir::Op>>::iterator;

  void waitBefore(ir::Block &b, Iter it, int pending, bool wgmma, bool barrier) {
    B.setInsertionPoint(&b, it);
    SourceLoc loc = (*it)->loc;
    B.create(OpKind::AsyncWaitGroup, loc, {}, {})->sync.pending = pending;
    if (wgmma) // wgmma reads shared memory through the async proxy (PTX ISA §9.7.15.6)
      B.create(OpKind::FenceProxyAsync, loc, {}, {});
    if (barrier)
      B.create(OpKind::Barrier, loc, {}, {});
  }

  void block(ir::Block &b) {
    for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
      ir::Op &op = **it;
      if (op.kind == OpKind::Dot)
        dotWait(b, it);
      bool passesOn = op.kind == OpKind::Yield || op.kind == OpKind::For || op.kind == OpKind::Return ||
                      op.kind == OpKind::Condition;
      for (const ir::Value *v : op.operands) {
        const ir::PipelineBuffer *p = pipelineOf(v);
        if (!passesOn && p && p->privateSlots && readPrivate.insert(v).second)
          waitBefore(b, it, pendingAfter(v), false, false);
      }
      if (op.kind == OpKind::Permute && stamp.count(op.operands[0]))
        stamp[op.result()] = stamp[op.operands[0]];
      if (op.kind == OpKind::For) {
        loop(op);
        if (carriesCopies(op) && (&b != &f.body || fillsAfter(b, std::next(it)))) {
          B.setInsertionPoint(&b, std::next(it));
          B.create(OpKind::AsyncWaitGroup, op.loc, {}, {})->sync.pending = 0;
          ++it;
          commits = 0;
          stamp.clear();
        }
        continue;
      }
      for (auto &r : op.regions)
        block(*r);
      if (op.kind == OpKind::Load && copied(op.result())) {
        B.setInsertionPoint(&b, std::next(it));
        B.create(OpKind::AsyncCommitGroup, op.loc, {}, {});
        ++it;
        stamp[op.result()] = ++commits;
      }
    }
  }

  /// Whether `loop` carries a cp.async class's values (a pipelined loop of cp.async fills).
  bool carriesCopies(const ir::Op &loop) const {
    const ir::Block &body = *loop.regions[0];
    return std::any_of(body.args.begin(), body.args.end(), [&](const auto &a) { return copied(a.get()); });
  }
  /// Whether an op of `b` from `it` on is or holds a cp.async fill.
  bool fillsAfter(ir::Block &b, Iter it) const {
    bool any = false;
    auto fill = [&](ir::Op &o) { any |= o.kind == OpKind::Load && copied(o.result()); };
    for (; it != b.ops.end() && !any; ++it) {
      fill(**it);
      for (auto &r : (*it)->regions)
        ir::walk(*r, fill);
    }
    return any;
  }

  void dotWait(ir::Block &b, Iter it) {
    const ir::Op &dot = **it;
    int pending = INT_MAX;
    for (unsigned k = 0; k < 2; ++k)
      if (copied(dot.operands[k]))
        pending = std::min(pending, pendingAfter(dot.operands[k]));
    if (pending != INT_MAX)
      waitBefore(b, it, pending, wgmmaDot(dot, f.arch, f.numWarps), true);
  }

  /// A loop body counts its own commits from 0; the values carried into it were committed
  /// before it starts, with the later stages' groups after them (see the class comment).
  void loop(ir::Op &op) {
    ir::Block &body = *op.regions[0];
    int saved = commits;
    commits = 0;
    std::map<const ir::Value *, int> savedStamps = stamp;
    for (auto &[v, s] : stamp)
      s -= saved;
    int groups = 0;
    std::map<const ir::Value *, int> order;
    ir::walk(body, [&](ir::Op &o) {
      if (o.kind == OpKind::Load && copied(o.result()))
        order[o.result()] = groups++;
    });
    const ir::Op *yield = body.terminator();
    for (auto &a : body.args) {
      if (!values.count(a.get()))
        continue;
      int later = 0;
      const ir::Value *v = a.get();
      while (v->owner == &body && v->index >= 1 && later < 64) {
        v = yield->operands[v->index - 1];
        if (v->owner == &body)
          ++later;
      }
      auto o = order.find(v);
      stamp[a.get()] = -later * groups - (o != order.end() ? groups - 1 - o->second : 0);
    }
    std::set<const ir::Value *> savedRead = readPrivate;
    block(body);
    readPrivate = savedRead; // each emission of the body reads its private slots afresh
    commits = saved;
    for (auto &[v, s] : stamp)
      if (!savedStamps.count(v))
        savedStamps[v] = s + saved;
    stamp = std::move(savedStamps);
  }
};

class Protocol {
public:
  explicit Protocol(ir::Function &f) : f(f), B(&f.body), ws(producerConsumerSplit(f)) {}

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
    CopyGroups(f, values).run();
    fenceGlobalWrites();
  }

private:
  ir::Function &f;

  /// A persistent kernel's TMA fills continue across its top-level loop's iterations (the
  /// `dynamic` classes): a global write there (the epilogue's store, before the next tile's
  /// copies) is followed by `fence_proxy_async global`, so that the async proxy sees it (PTX ISA
  /// §9.7.13.4); TMA stores write through the async proxy already.
  void fenceGlobalWrites() {
    auto within = [](ir::Op &top, auto &&fn) {
      fn(top);
      for (auto &r : top.regions)
        ir::walk(*r, fn);
    };
    for (auto &top : f.body.ops) {
      bool fills = false;
      within(*top, [&](ir::Op &o) {
        fills |= o.kind == OpKind::Load && o.pipeline() >= 0 && f.pipelines[size_t(o.pipeline())].dynamicFills;
      });
      if (!fills)
        continue;
      std::vector<ir::Op *> writes;
      within(*top, [&](ir::Op &o) {
        if (writesGlobalMemory(o) && !(o.kind == OpKind::Store && o.isTmaStore()))
          writes.push_back(&o);
      });
      for (ir::Op *w : writes) {
        ir::Block &b = *w->parent;
        B.setInsertionPoint(&b, std::next(b.find(w)));
        B.create(OpKind::FenceProxyAsync, w->loc, {}, {})->sync.global = true;
      }
    }
  }
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

bool hasWarpPartitions(const ir::Function &f) {
  return std::any_of(f.body.ops.begin(), f.body.ops.end(),
                     [](const auto &op) { return op->kind == OpKind::WarpSpecialize; });
}

bool releasePerWarpgroup(const ir::Function &f) {
  return std::none_of(f.pipelines.begin(), f.pipelines.end(), [](const ir::PipelineBuffer &buf) {
    return buf.tmaMap >= 0 && (buf.restaged || buf.privateSlots);
  });
}

int slotReleaseArrivals(const ir::Function &f) { return releasePerWarpgroup(f) ? f.numWarps / 4 : 32 * f.numWarps; }

void placePipelineProtocol(ir::Function &f) { Protocol(f).run(); }

} // namespace tle::transforms
