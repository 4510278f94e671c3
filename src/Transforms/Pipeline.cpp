// The pipeline pass: prefetched load windows placed in shared-memory slots filled by cp.async
// (PTX ISA §9.7.9.25) or TMA (§9.7.9.25.5) copies, their mbarriers (§9.7.13.15), TMA stores'
// staging areas, and the producer/consumer split of tl.range(warp_specialize=True); every
// decision is recorded in the IR (Function::pipelines, `pipeline=k`, `map=k staging=N`).
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/AllocateShared.h"
#include "tle/Transforms/AxisInfo.h"
#include "tle/Transforms/DotLowering.h"
#include "tle/Transforms/RegisterEstimate.h"
#include "tle/Transforms/Scratch.h"
#include "tle/Transforms/TensorMaps.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <optional>

namespace tle::transforms {

using ir::OpKind;

namespace {

using Uses = std::map<const ir::Value *, std::vector<std::pair<const ir::Op *, unsigned>>>;

bool isZeroSplat(const ir::Value *v) {
  if (!v->def || v->def->kind != OpKind::Splat)
    return false;
  const ir::Op *c = v->def->operands[0]->def;
  return c && c->kind == OpKind::Constant && c->intValue() == 0 && c->floatValue() == 0.0;
}

/// Values linked by loop carries (a For's init, body argument, yield operand and result), as
/// classes in the order their first value appears in the IR (the offsets they get must not
/// depend on addresses), with every use of every value.
struct CarryClasses {
  std::map<const ir::Value *, const ir::Value *> parent;
  std::map<const ir::Value *, std::vector<const ir::Value *>> members;
  std::vector<const ir::Value *> roots;
  Uses uses;
  std::vector<const ir::Op *> tileLoads; ///< global tile loads
  std::vector<const ir::Op *> fillValues; ///< pipeline_value ops (fills that pipeline-fills wrote as ops)

  const ir::Value *find(const ir::Value *v) {
    auto it = parent.find(v);
    if (it == parent.end() || it->second == v)
      return parent[v] = v;
    return it->second = find(it->second);
  }
  void unite(const ir::Value *a, const ir::Value *b) { parent[find(a)] = find(b); }

  explicit CarryClasses(const ir::Function &f) {
    ir::walk(const_cast<ir::Block &>(f.body), [&](ir::Op &op) {
      for (unsigned k = 0; k < op.operands.size(); ++k)
        uses[op.operands[k]].push_back({&op, k});
      if (op.kind == OpKind::For) {
        const ir::Block &body = *op.regions[0];
        for (size_t i = 0; i + 3 < op.operands.size(); ++i) {
          unite(op.operands[3 + i], body.args[i + 1].get());
          unite(body.args[i + 1].get(), body.terminator()->operands[i]);
          unite(body.args[i + 1].get(), op.result(static_cast<unsigned>(i)));
        }
      }
      if (op.kind == OpKind::Load && op.result()->type.isTile() &&
          op.operands[0]->type.elem.space == ir::AddrSpace::Global)
        tileLoads.push_back(&op), find(op.result());
      if (op.kind == OpKind::PipelineValue)
        fillValues.push_back(&op), find(op.result());
    });
    std::set<const ir::Value *> seen;
    ir::walk(const_cast<ir::Block &>(f.body), [&](ir::Op &op) {
      auto note = [&](const ir::Value *v) {
        if (!parent.count(v) || !seen.insert(v).second)
          return;
        const ir::Value *root = find(v);
        if (!members.count(root))
          roots.push_back(root);
        members[root].push_back(v);
      };
      for (const ir::Value *o : op.operands)
        note(o);
      for (auto &r : op.regions)
        for (auto &a : r->args)
          note(a.get());
      for (auto &r : op.results)
        note(r.get());
    });
  }
};

/// Whether `u` (a use of a carried value at operand `k`) only passes the value on: a For's init
/// or a yield of a For body.
bool carries(const ir::Op &u, unsigned k) {
  return (u.kind == OpKind::For && k >= 3) ||
         (u.kind == OpKind::Yield && u.parent->parent && u.parent->parent->kind == OpKind::For);
}

class Planner {
public:
  Planner(ir::Function &f, DiagnosticEngine *diags) : f(f), diags(diags), axis(f), classes(f) {}

  void run() {
    const ir::Value *bare = nullptr;
    ir::walk(f.body, [&](ir::Op &op) {
      for (auto &r : op.results)
        if (!bare && r->type.isTile() && !r->layout)
          bare = r.get();
    });
    if (bare) {
      if (diags)
        diags->fatal(bare->def->loc, "pass 'pipeline' needs layouts: run assign-layouts before it");
      throw CompileAborted();
    }
    // TMA reads global memory through the async proxy, which does not see the kernel's own
    // earlier generic writes without a proxy fence: TMA copies are used only by top-level ops
    // before the first one that writes global memory (a store or an atomic, in it or its regions).
    size_t idx = 0;
    for (auto &top : f.body.ops) {
      if (writesGlobalMemoryIn(*top) && firstWrite == SIZE_MAX)
        firstWrite = idx;
      topIndex[top.get()] = idx++;
    }
    planDotOperandClasses();
    for (const ir::Value *root : classes.roots)
      if (!inPartition(root))
        planPrivate(root);
    planWarpSpecialization();
    placeBarriers();
    planTmaStores();
    // wgmma's and TMA stores' swizzled areas in the scratch space after this area need its
    // 1024-byte alignment too.
    bool wgmmaStaging = false;
    ir::walk(f.body, [&](ir::Op &op) {
      wgmmaStaging |= (op.kind == OpKind::Dot && wgmmaDot(op, f.arch, f.numWarps)) ||
                      (op.kind == OpKind::Store && op.isTmaStore());
    });
    if (anySwizzled || wgmmaStaging)
      base = align(base, 1024);
    f.pipelineBytes = base;
    placePipelineProtocol(f);
  }

private:
  ir::Function &f;
  DiagnosticEngine *diags;
  AxisInfoAnalysis axis;
  CarryClasses classes;
  std::map<const ir::Op *, size_t> topIndex;
  size_t firstWrite = SIZE_MAX;
  int64_t base = 0; ///< end of the pipeline area so far
  bool anySwizzled = false;
  std::set<const ir::Value *> planned; ///< roots of the classes given slots
  std::vector<const ir::Value *> straightLine; ///< planned dot-operand classes no loop carries, in order

  static int64_t align(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

  /// Whether a value of `root`'s class lies in a kernel's own warp_specialize partitions: those
  /// loads stay register loads (pipeline-fills numbers fills through `for`, `if` and `while`
  /// only; the partitions order their own copies with the ops TLE-Struct writes).
  bool inPartition(const ir::Value *root) const {
    for (const ir::Value *v : classes.members.at(root))
      for (const ir::Block *b = v->def ? v->def->parent : v->owner; b && b->parent; b = b->parent->parent)
        if (b->parent->kind == OpKind::WarpSpecialize)
          return true;
    return false;
  }

  void clearMarks() {
    f.pipelines.clear();
    f.pipelineBytes = 0;
    f.tensorMaps.resize(static_cast<size_t>(f.declaredTensorMaps)); // the IR's own; these follow
    if (!hasWarpPartitions(f))
      f.producerWarps = 0;
    ir::walk(f.body, [&](ir::Op &op) {
      if (op.kind == OpKind::Load || op.kind == OpKind::Permute)
        op.setPipeline(-1);
      if (op.kind == OpKind::Store)
        op.setStoreTensorMap(-1), op.setTmaStaging(-1);
    });
  }

  bool beforeWrites(const ir::Op &op) const {
    const ir::Op *o = &op;
    while (o->parent && o->parent != &f.body)
      o = o->parent->parent;
    return o->parent == &f.body && topIndex.at(o) < firstWrite;
  }

  /// Elements per global access of a load through `ptr` with `mask` (the backend's vector).
  int vectorWidth(const ir::Value *ptr, const ir::Value *mask) const {
    if (ptr->type.isScalar())
      return 1;
    const ir::Layout &l = *ptr->layout;
    int64_t vec = std::min<int64_t>(ir::contiguousRegisters(l, l.rank() - 1), axis.accessVector(ptr, mask));
    return static_cast<int>(std::max<int64_t>(1, vec));
  }

  bool useWgmma(const ir::Op &dot) const { return wgmmaDot(dot, f.arch, f.numWarps); }

  void mark(const std::vector<const ir::Value *> &vs, const std::vector<const ir::Value *> &views, ir::PipelineBuffer buf,
            const ir::Value *root) {
    int k = static_cast<int>(f.pipelines.size());
    for (const ir::Value *v : vs)
      if (v->def && v->def->kind == OpKind::Load)
        const_cast<ir::Op *>(v->def)->setPipeline(k);
    for (const ir::Value *v : views)
      const_cast<ir::Op *>(v->def)->setPipeline(k);
    f.pipelines.push_back(buf);
    planned.insert(root);
  }

  /// planDotOperands for every class outside the kernel's own warp partitions. A class no loop
  /// carries (straight-line code: a static_range's unrolled dots, an attention's Q) keeps its
  /// slot for the whole kernel; such classes are declined, the last first, while the slots do
  /// not fit (slotsFit), and their loads stay register loads.
  void planDotOperandClasses();
  /// Whether the slots planned so far fit: within pipelineSlotBudget, and with the kernel's
  /// buffers and its largest scratch area within sharedMemoryLimit.
  bool slotsFit() const;
  void planDotOperands(const ir::Value *root);
  bool planTma(const std::vector<const ir::Value *> &vs, int carried, const std::map<const ir::Block *, int> &carriedIn,
               ir::PipelineBuffer &buf);
  void planPrivate(const ir::Value *root);
  void planWarpSpecialization();
  void placeBarriers();
  void planTmaStores();
};

void Planner::planDotOperandClasses() {
  std::set<const ir::Value *> declined;
  for (;;) {
    clearMarks();
    base = 0;
    anySwizzled = false;
    planned.clear();
    straightLine.clear();
    for (const ir::Value *root : classes.roots)
      if (!inPartition(root) && !declined.count(root))
        planDotOperands(root);
    if (straightLine.empty() || slotsFit())
      return;
    declined.insert(straightLine.back());
  }
}

bool Planner::slotsFit() const {
  if (base > pipelineSlotBudget(f.arch))
    return false;
  // What allocate-shared places beside the slots, counted as if live at once: the kernel's own
  // buffers and the largest scratch area (the dots that stage operands from registers among them).
  constexpr int64_t huge = int64_t(1) << 40;
  int64_t others = 0, scratch = 0;
  ir::walk(const_cast<ir::Block &>(f.body), [&](ir::Op &op) {
    if (op.kind == OpKind::LocalAlloc)
      others = std::min(huge, others + std::min(huge, ir::numElements(op.allocShape())) *
                                           ir::storageBytes(op.result()->type.elem.pointee));
  });
  for (const auto &[op, need] : scratchNeeds(f, pipelineValues(f)))
    scratch = std::max(scratch, need.bytes + need.align);
  return base + others + scratch <= sharedMemoryLimit(f.arch);
}

void Planner::planDotOperands(const ir::Value *root) {
  const std::vector<const ir::Value *> &vs = classes.members.at(root);
  bool ok = true, hasLoad = false, vec16 = true, restaged = false;
  int operandIdx = -1, carried = 0;
  std::map<const ir::Block *, int> carriedIn; // carried values per loop body
  std::vector<const ir::Value *> transposedViews;
  const ir::Op *dot = nullptr;
  for (const ir::Value *v : vs) {
    if (v->def && v->def->kind == OpKind::Load) {
      hasLoad = true;
      const ir::Op &l = *v->def;
      const ir::Value *mask = l.operands.size() > 1 ? l.operands[1] : nullptr;
      // cp.async copies 16-byte vectors (TMA, below, needs none).
      vec16 = vec16 && vectorWidth(l.operands[0], mask) * ir::storageBytes(v->type.dtype()) == 16;
      ok = ok && (l.operands.size() < 3 || isZeroSplat(l.operands[2]));
    } else if (v->def && v->def->kind != OpKind::For) {
      ok = false;
    } else if (!v->def && !(v->owner && v->owner->parent && v->owner->parent->kind == OpKind::For)) {
      ok = false;
    } else if (!v->def) {
      ++carried;
      ++carriedIn[v->owner];
    }
    auto us = classes.uses.find(v);
    if (us == classes.uses.end())
      continue;
    for (auto [u, k] : us->second) {
      if (carries(*u, k))
        continue;
      // wgmma reads tf32, fp8 and int8 operands only K-major: A as loaded ([M, K], K
      // contiguous), B through a transposed view of an [N, K] tile (below); such a B given as
      // [K, N] is restaged K-major from its slot by the dot. mma.sync reads what
      // mmaSyncSlotOperand lists.
      bool kMajorOnly = wgmmaNeedsKMajor(v->type.dtype());
      auto fromSlot = [&](const ir::Op &d, unsigned idx, bool transposed) {
        if (!useWgmma(d))
          return mmaSyncSlotOperand(d, idx, transposed, f.arch, f.numWarps);
        return !kMajorOnly || idx == (transposed ? 1u : 0u);
      };
      if (u->kind == OpKind::Dot && k <= 1 && (operandIdx < 0 || operandIdx == int(k)) &&
          (!dot || useWgmma(*dot) == useWgmma(*u))) {
        bool restage = kMajorOnly && k == 1 && useWgmma(*u) && u->operands[0] != v;
        if (fromSlot(*u, k, false) || restage) {
          operandIdx = static_cast<int>(k);
          dot = u;
          restaged = restaged || restage;
          continue;
        }
      }
      // tl.trans of the tile feeding one dot operand alone: the dot reads the slot with the
      // other major order (the view shares the slot).
      if (u->kind == OpKind::Permute && u->result()->type.rank() == 2 &&
          u->permutation() == std::vector<int64_t>{1, 0}) {
        auto pu = classes.uses.find(u->result());
        if (pu != classes.uses.end() && pu->second.size() == 1 && pu->second[0].first->kind == OpKind::Dot &&
            pu->second[0].second <= 1 && fromSlot(*pu->second[0].first, pu->second[0].second, true) &&
            (operandIdx < 0 || operandIdx == int(pu->second[0].second)) &&
            (!dot || useWgmma(*dot) == useWgmma(*pu->second[0].first))) {
          operandIdx = static_cast<int>(pu->second[0].second);
          dot = pu->second[0].first;
          transposedViews.push_back(u->result());
          continue;
        }
      }
      ok = false;
    }
  }
  // A restaged class is read by its dots alone, never through a transposed view.
  if (!ok || !hasLoad || operandIdx < 0 || (restaged && !transposedViews.empty()))
    return;
  const ir::Type &t = vs.front()->type;
  ir::PipelineBuffer buf;
  buf.rows = t.shape[0];
  buf.cols = t.shape[1];
  // A pipelined loop carries one value per stage ahead of the dot: that many slots plus the
  // one being filled.
  buf.slots = carried + 1;
  buf.elemBytes = ir::storageBytes(t.dtype());
  buf.restaged = restaged;
  if (restaged) {
    // Unpadded rows: the copies write whole rows and the dot reads each row with consecutive
    // lanes, both free of bank conflicts without padding; sized as a wgmma slot, as `prefetch`
    // counts it.
    buf.ld = t.shape[1];
    buf.slotBytes = asyncSlotBytes(buf.rows, buf.cols, buf.elemBytes, /*swizzled=*/true);
  } else if (useWgmma(*dot)) {
    buf.swizzle = static_cast<int>(std::min<int64_t>(128, buf.cols * buf.elemBytes));
    buf.slotBytes = asyncSlotBytes(buf.rows, buf.cols, buf.elemBytes, /*swizzled=*/true);
  } else {
    buf.ld = t.shape[1] + 16 / buf.elemBytes; // 16 bytes of padding per row, as the dot's own staging
    buf.slotBytes = asyncSlotBytes(buf.rows, buf.cols, buf.elemBytes, /*swizzled=*/false);
  }
  if (f.arch == "sm_90a" && buf.swizzle >= 32)
    planTma(vs, carried, carriedIn, buf);
  // Values carried by two loops (a flattened loop's early prologue) count their fills only at
  // run time, which cp.async's slot and commit-group bookkeeping does not: they stay loads into
  // registers.
  if (buf.tmaMap < 0 && (carriedIn.size() > 1 || !vec16))
    return;
  if (buf.swizzle) {
    base = align(base, 1024);
    anySwizzled = true;
  }
  buf.base = base;
  base += buf.slots * buf.slotBytes;
  mark(vs, transposedViews, buf, root);
  if (carried == 0)
    straightLine.push_back(root);
}

bool Planner::planTma(const std::vector<const ir::Value *> &vs, int carried,
                      const std::map<const ir::Block *, int> &carriedIn, ir::PipelineBuffer &buf) {
  // sm_90a copies a tensor descriptor's tiles with TMA when every load of the class can be (the
  // same descriptor, launch-time base, shape and strides) and each fill's mbarrier phase can be
  // known from the count of fills before it. Statically when the loads lie at the kernel's top
  // level or in one top-level loop; at run time (dynamicFills) when a pipelined loop nested in a
  // top-level loop holds them (a persistent kernel's K loop, its prologue in the loop over tiles).
  std::optional<ir::TensorMapParam> map;
  const ir::Op *classTop = nullptr; // the top-level loop around the class's in-loop loads
  std::set<const ir::Block *> blocks;
  // Whether a load of the class may be a TMA fill: each rule below refuses one case.
  auto tmaFill = [&](const ir::Op &l) {
    bool top = l.parent == &f.body;
    if (!top) {
      // Only 'for' loops around it, all in one top-level loop.
      const ir::Op *outer = nullptr;
      for (const ir::Block *b = l.parent; b != &f.body; b = outer->parent) {
        outer = b->parent;
        if (!outer || outer->kind != OpKind::For)
          return false; // inside an 'if' or 'while'
      }
      if (classTop && classTop != outer)
        return false; // loads in two top-level loops
      classTop = outer;
      blocks.insert(l.parent);
    }
    // In a loop only pipelined loads (carried to a later iteration) count their fills; an
    // unpipelined one would refill its single slot with the same static phase.
    if (!top && carried == 0)
      return false;
    // A load in the loop is issued for a later iteration: only the prefetch pass's, which lists
    // the guard that the iteration exists, is known to be read whenever it is issued (a
    // hand-written window's last fill would still be in flight after the loop).
    bool guarded = l.operands.size() > 4 + 3 * l.blockShape().size();
    if (!top && !guarded)
      return false;
    // An unguarded fill at the top level is waited for at the end (the backend's drain): only
    // in a class without in-loop fills, whose slot phases it alone advances.
    return guarded || carried == 0;
  };
  for (const ir::Value *v : vs) {
    if (!v->def || v->def->kind != OpKind::Load)
      continue;
    const ir::Op &l = *v->def;
    const std::vector<int64_t> &block = l.blockShape();
    std::optional<ir::TensorMapParam> m;
    if (tmaFill(l) && block.size() == 2 && block[0] == buf.rows && block[1] == buf.cols)
      m = tensorMapFor(f, l, buf.swizzle);
    if (!m || (map && !(*m == *map)))
      return false;
    map = m;
  }
  if (!map)
    return false;
  // Static counts: loads at the top level and in one top-level loop's body, all before the
  // kernel's first global write. Run-time counts: no global write before the top-level loop (nor
  // before a top-level load: guarded ones, a flattened loop's first tile); writes inside the
  // loop are followed by a proxy fence and, unless warp-specialised, a barrier before the next
  // fill (the backend).
  bool nested = blocks.size() > 1 || (blocks.size() == 1 && (*blocks.begin())->parent != classTop);
  for (const ir::Value *v : vs) {
    if (!v->def || v->def->kind != OpKind::Load)
      continue;
    if (nested ? v->def->parent == &f.body && !beforeWrites(*v->def) : !beforeWrites(*v->def))
      return false;
  }
  if (nested && topIndex.at(classTop) > firstWrite)
    return false;
  auto it = std::find(f.tensorMaps.begin(), f.tensorMaps.end(), *map);
  buf.tmaMap = static_cast<int>(it - f.tensorMaps.begin());
  if (it == f.tensorMaps.end())
    f.tensorMaps.push_back(*map);
  buf.dynamicFills = nested;
  if (nested) {
    // The fills outstanding at once are one loop's pipeline: a flattened loop's early prologue
    // is issued after the nested loop's fills were all read.
    int most = 0;
    for (auto [b, n] : carriedIn)
      most = std::max(most, n);
    buf.slots = most + 1;
  }
  return true;
}

void Planner::planPrivate(const ir::Value *root) {
  // Loads prefetched by a loop (prefetchLoopLoads) whose values are not dot operands: the window
  // of values ahead lives in shared memory instead of registers. A class qualifies when it is a
  // loop's carried window of one load (the prologue's loads before the loop, the refill in the
  // body), the carried values are read only by ops directly in the body, and each load's vector
  // is 4, 8 or 16 bytes with a zero or no `other` (a masked-off cp.async zero-fills) and no
  // cache or eviction hint (which cp.async would drop).
  if (planned.count(root))
    return;
  const std::vector<const ir::Value *> &vs = classes.members.at(root);
  const int64_t threads = 32 * int64_t(f.numWarps);
  const int64_t budget = 96 * 1024; // private slots per kernel, bytes
  bool ok = true;
  int carried = 0, copyBytes = 0;
  const ir::Op *loop = nullptr;
  const ir::Layout *layout = nullptr;
  std::vector<const ir::Op *> classLoads;
  for (const ir::Value *v : vs) {
    if (!v->type.isTile() || !v->layout || v->type.dtype() == ir::DType::I1 || (layout && !(*v->layout == *layout)))
      return;
    layout = v->layout;
    auto u = classes.uses.find(v);
    if (v->def && v->def->kind == OpKind::Load) {
      const ir::Op &l = *v->def;
      const ir::Value *mask = l.operands.size() > 1 ? l.operands[1] : nullptr;
      int bytes = vectorWidth(l.operands[0], mask) * static_cast<int>(ir::storageBytes(v->type.dtype()));
      if (l.isVolatile() || l.hasDescriptor() || l.cacheHint() != ir::CacheHint::None ||
          l.evictionHint() != ir::EvictionHint::None || (l.operands.size() > 2 && !isZeroSplat(l.operands[2])) ||
          (bytes != 4 && bytes != 8 && bytes != 16) || (copyBytes && bytes != copyBytes))
        return;
      copyBytes = bytes;
      classLoads.push_back(&l);
    } else if (v->def && v->def->kind == OpKind::For) {
      if (u != classes.uses.end() && !u->second.empty())
        ok = false; // a window value left over after the loop: never read
      continue;
    } else if (!v->def && v->owner && v->owner->parent && v->owner->parent->kind == OpKind::For) {
      if (loop && loop != v->owner->parent)
        ok = false;
      loop = v->owner->parent;
      ++carried;
    } else {
      return;
    }
    if (u == classes.uses.end())
      continue;
    for (auto [user, k] : u->second) {
      if (carries(*user, k))
        continue;
      // Read only by ops directly in the body that carries it, and not by a dot.
      if (user->kind == OpKind::Dot || v->def || user->parent != v->owner)
        ok = false;
    }
  }
  // Only loops that ask for pipelining (an explicit num_stages >= 2): prefetch leaves the
  // register budget aside for their stageable loads.
  if (!ok || !loop || carried == 0 || classLoads.empty() || loop->numStages() < 2)
    return;
  for (const ir::Op *l : classLoads)
    if (l->parent != loop->regions[0].get() && l->parent != loop->parent)
      return;
  ir::PipelineBuffer buf;
  buf.privateSlots = true;
  buf.copyBytes = copyBytes;
  buf.elemBytes = ir::storageBytes(vs.front()->type.dtype());
  buf.slots = carried + 1;
  int64_t perCopy = copyBytes / buf.elemBytes;
  int64_t copies = (layout->numRegs() + perCopy - 1) / perCopy;
  buf.slotBytes = copies * threads * copyBytes;
  int64_t at = align(base, 16);
  if (at + buf.slots * buf.slotBytes > budget)
    return;
  buf.base = at;
  base = at + buf.slots * buf.slotBytes;
  mark(vs, {}, buf, root);
}

void Planner::placeBarriers() {
  // The TMA slots' mbarriers (8 bytes each) follow the slots: one per slot ("full"), and in a
  // warp-specialised kernel a second per slot ("empty", after the full ones).
  bool ws = f.producerWarps > 0;
  for (ir::PipelineBuffer &buf : f.pipelines)
    if (buf.tmaMap >= 0) {
      base = align(base, 8);
      buf.barBase = base;
      base += (ws ? 16 : 8) * buf.slots;
    }
}

void Planner::planTmaStores() {
  ir::walk(f.body, [&](ir::Op &o) {
    if (o.kind != OpKind::Store || !o.isTmaStore())
      return;
    // Its pointer and mask are placeholders (markTmaStores): TMA or nothing.
    const std::string what = "a store marked 'tma' is written from its tensor descriptor with TMA, which ";
    auto fatal = [&](const std::string &msg) {
      if (diags)
        diags->fatal(o.loc, what + msg);
      throw CompileAborted();
    };
    if (f.arch != "sm_90a")
      fatal("needs sm_90a; here the target is " + f.arch);
    if (!inForLoopsOnly(f, o))
      fatal("must sit at the kernel's top level or in its 'for' loops, not under an 'if' or a 'while' (every "
            "thread takes part in its staging)");
    std::optional<ir::TensorMapParam> m = tensorMapFor(f, o, tmaStoreSwizzle(o));
    if (!m)
      fatal("needs a tensor map built from the params (base, shape and strides; the innermost stride 1, the "
            "others whole 16-byte units)");
    if (!tmaStore(f, o)) // a hand-written mark: the access rule is checked here too
      fatal("must be the kernel's last access to global memory (in a loop: the loop may only load through other "
            "pointer params), at most 128 KiB, with rows of 32 bytes or more");
    auto it = std::find(f.tensorMaps.begin(), f.tensorMaps.end(), *m);
    o.setStoreTensorMap(static_cast<int>(it - f.tensorMaps.begin()));
    if (it == f.tensorMaps.end())
      f.tensorMaps.push_back(*m);
    if (!tmaStoreLoop(f, o))
      return;
    TmaStoreStaging st = tmaStoreStaging(o);
    base = align(base, 1024); // the 128-byte swizzle repeats every 1024 bytes
    o.setTmaStaging(base);
    base += st.buffers * st.bytes;
  });
}

void Planner::planWarpSpecialization() {
  const ir::Op *loop = nullptr;
  ir::walk(f.body, [&](ir::Op &op) {
    if (op.kind != OpKind::For || !op.warpSpecialize())
      return;
    if (!loop)
      loop = &op;
    else if (diags) // one producer per kernel: the first loop that asks for it
      diags->warning(op.loc, "tl.range(warp_specialize=True) is ignored: only one loop of a kernel is "
                             "specialised, the first that asks for it");
  });
  if (!loop)
    return;
  auto decline = [&](const std::string &why) {
    if (diags)
      diags->warning(loop->loc, "tl.range(warp_specialize=True) is ignored: " + why);
  };
  if (hasWarpPartitions(f))
    return decline("the kernel has its own warp_specialize partitions");
  if (f.arch != "sm_90a")
    return decline("warp specialisation needs TMA and setmaxnreg (sm_90a); the target is " + f.arch);
  if (loop->parent != &f.body)
    return decline("only a loop at the kernel's top level is specialised (in a persistent kernel, the loop over "
                   "the tiles)");
  auto isTma = [&](const ir::Op &op) {
    return op.kind == OpKind::Load && op.pipeline() >= 0 && f.pipelines[size_t(op.pipeline())].tmaMap >= 0;
  };
  bool fills = false, elsewhere = false;
  ir::walk(f.body, [&](ir::Op &op) {
    if (!isTma(op))
      return;
    // In the loop's body, or in a pipelined loop nested in it (dynamicFills).
    const ir::Op *top = &op;
    while (top->parent && top->parent != &f.body)
      top = top->parent->parent;
    fills |= top == loop;
    elsewhere |= op.parent != &f.body && top != loop;
  });
  if (!fills)
    return decline("no load in the loop is copied with TMA (a pipelined tensor-descriptor load that feeds tl.dot, "
                   "before the kernel's first global store; docs/compiler.md, \"TMA for tensor descriptors\")");
  if (elsewhere)
    return decline("another loop also has TMA copies");
  if (f.numWarps % 4 != 0)
    return decline("the consumers must be whole warpgroups (num_warps a multiple of 4), not " +
                   std::to_string(f.numWarps) + " warps");
  if (f.numWarps + kProducerWarps > 32)
    return decline("num_warps " + std::to_string(f.numWarps) + " leaves no room for a producer warpgroup "
                   "(1024 threads per block)");
  int threads = 32 * (f.numWarps + kProducerWarps);
  int64_t regs = registerCeiling(f.numWarps + kProducerWarps) / 8 * 8;
  int accumulators = wgmmaAccumulatorRegisters(f);
  if (regs < accumulators + kWgmmaHeadroom)
    return decline("with a producer warpgroup the " + std::to_string(threads) + " threads get " + std::to_string(regs) +
                   " registers each, too few for the consumers' wgmma accumulators (" + std::to_string(accumulators) +
                   " per instruction); use fewer warps");
  std::set<const ir::Op *> slice;
  std::string why;
  if (!producerSlice(f, pipelineValues(f), slice, why))
    return decline(why);
  f.producerWarps = kProducerWarps;
}

} // namespace

void pipeline(ir::Function &f, DiagnosticEngine *diags) {
  if (!pipelineProtocolPlaced(f)) // else planned already: its slots are in use by the protocol's ops
    Planner(f, diags).run();
}

int64_t pipelineSlotBudget(const std::string &arch) { return (arch == "sm_80" ? 160 : 192) * 1024; }

std::map<const ir::Value *, int> pipelineValues(const ir::Function &f, std::set<const ir::Value *> *transposed) {
  CarryClasses classes(f);
  std::map<const ir::Value *, int> out;
  // Marks naming no class of f.pipelines (hand-written text) are ignored.
  auto named = [&](const ir::Op &op) { return op.pipeline() >= 0 && size_t(op.pipeline()) < f.pipelines.size(); };
  for (const ir::Op *l : classes.tileLoads)
    if (named(*l))
      for (const ir::Value *v : classes.members.at(classes.find(l->result())))
        out[v] = l->pipeline();
  for (const ir::Op *p : classes.fillValues)
    if (p->sync.pipeline >= 0 && size_t(p->sync.pipeline) < f.pipelines.size())
      for (const ir::Value *v : classes.members.at(classes.find(p->result())))
        out[v] = p->sync.pipeline;
  ir::walk(const_cast<ir::Block &>(f.body), [&](ir::Op &op) {
    if (op.kind == OpKind::Permute && named(op)) {
      out[op.result()] = op.pipeline();
      if (transposed)
        transposed->insert(op.result());
    }
  });
  return out;
}

TmaStoreStaging tmaStoreStaging(const ir::Op &store) {
  const ir::Value *val = store.operands[1];
  const int swizzle = tmaStoreSwizzle(store);
  const int64_t perRow = swizzle / ir::storageBytes(val->type.dtype());
  const int64_t boxes = store.blockShape()[1] / perRow, boxBytes = store.blockShape()[0] * swizzle;
  bool byBox = boxes > 1 && boxBytes % 1024 == 0; // each box starts a whole swizzle pattern
  for (const auto *bases : {&val->layout->lane, &val->layout->warp})
    for (const auto &b : *bases)
      byBox &= b[1] < perRow;
  TmaStoreStaging st;
  st.buffers = byBox ? 2 : 1;
  st.boxes = byBox ? 1 : static_cast<int>(boxes);
  st.bytes = boxBytes * st.boxes;
  return st;
}

int wgmmaAccumulatorRegisters(const ir::Function &f) {
  // One m64nNk instruction per warpgroup holds N / 2 fp32 (or int32) accumulators per thread; N
  // is the accumulator's columns, divided among the warpgroups that M (in 64-row blocks) does
  // not occupy.
  int most = 0;
  int groups = std::max(1, f.numWarps / 4);
  ir::walk(const_cast<ir::Block &>(f.body), [&](ir::Op &op) {
    if (op.kind != OpKind::Dot || !wgmmaDot(op, f.arch, f.numWarps) || op.operands[2]->type.shape.size() != 2)
      return;
    const auto &shape = op.operands[2]->type.shape;
    int64_t mGroups = std::max<int64_t>(1, std::min<int64_t>(groups, shape[0] / 64));
    int64_t n = std::min<int64_t>(256, shape[1] / std::max<int64_t>(1, groups / mGroups));
    most = std::max(most, static_cast<int>(n / 2));
  });
  return most;
}

bool producerSlice(const ir::Function &f, const std::map<const ir::Value *, int> &values,
                   std::set<const ir::Op *> &slice, std::string &why) {
  slice.clear();
  auto isTma = [&](const ir::Value *v) {
    auto it = values.find(v);
    return it != values.end() && f.pipelines[size_t(it->second)].tmaMap >= 0;
  };
  std::set<const ir::Value *> seen;
  std::function<bool(const ir::Op &)> needOp;
  std::function<bool(const ir::Value *)> need = [&](const ir::Value *v) -> bool {
    if (!seen.insert(v).second)
      return true;
    if (v->def) {
      const ir::Op &d = *v->def;
      if (d.kind == OpKind::For) { // a loop result: its initial value and what the body yields
        unsigned k = v->index;
        return needOp(d) && need(d.operands[3 + k]) && need(d.regions[0]->terminator()->operands[k]);
      }
      return needOp(d);
    }
    const ir::Block *blk = v->owner;
    if (blk == &f.body)
      return true; // a kernel param
    const ir::Op *owner = blk->parent;
    if (!owner || owner->kind != OpKind::For) {
      why = "a copy's coordinates depend on a value carried by a 'while' loop";
      return false;
    }
    if (!needOp(*owner))
      return false;
    if (v->index == 0)
      return true; // the induction variable
    unsigned k = v->index - 1;
    return need(owner->operands[3 + k]) && need(blk->terminator()->operands[k]);
  };
  needOp = [&](const ir::Op &op) -> bool {
    if (!slice.insert(&op).second)
      return true;
    if (op.parent != &f.body) {
      const ir::Op *outer = op.parent->parent;
      if (!outer || outer->kind != OpKind::For) {
        why = "a copy or its coordinates are computed inside an 'if' or 'while'";
        return false;
      }
      if (!needOp(*outer))
        return false;
    }
    if (op.kind == OpKind::For)
      return need(op.operands[0]) && need(op.operands[1]) && need(op.operands[2]);
    if (op.kind == OpKind::Load && isTma(op.result())) {
      size_t rank = op.blockShape().size();
      for (size_t i = 4 + 2 * rank; i < op.operands.size(); ++i) // offsets, then guards
        if (!need(op.operands[i]))
          return false;
      return true;
    }
    bool scalarOnly =
        std::all_of(op.results.begin(), op.results.end(), [](const auto &r) { return r->type.isScalar(); });
    // Scalar loads too (a block's offset read from an index array): nothing before the copies
    // writes global memory (the TMA rule), so the producer reads what the consumers would.
    bool computes = op.kind == OpKind::Constant || op.kind == OpKind::ProgramId || op.kind == OpKind::NumPrograms ||
                    (ir::isElementwise(op.kind) && op.kind != OpKind::InlineAsm) ||
                    (op.kind == OpKind::Load && !values.count(op.result()));
    if (!scalarOnly || !computes) {
      why = "a copy's coordinates depend on an op other than scalar arithmetic (" + std::string(ir::name(op.kind)) + ")";
      return false;
    }
    for (const ir::Value *v : op.operands)
      if (!need(v))
        return false;
    return true;
  };
  bool ok = true;
  ir::walk(const_cast<ir::Block &>(f.body), [&](ir::Op &op) {
    if (ok && op.kind == OpKind::Load && isTma(op.result()))
      ok = needOp(op);
  });
  return ok;
}

} // namespace tle::transforms
