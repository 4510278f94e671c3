// allocate-shared: offsets for the kernel's shared buffers from their live ranges (see AllocateShared.h).
#include "tle/Transforms/AllocateShared.h"
#include "tle/Transforms/DotLowering.h"
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/Scratch.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace tle::transforms {

using ir::OpKind;

int64_t sharedMemoryLimit(const std::string &arch) { return arch == "sm_80" ? 163 * 1024 : 227 * 1024; }

namespace {

/// A buffer's live range in program positions (Positions), both ends included.
struct LiveRange {
  ir::Op *alloc = nullptr; ///< null for an area the backend lays out (the pipeline area, scratch)
  size_t first = 0, last = 0;
  int64_t bytes = 0;
  int64_t align = 16; ///< 1024 for a buffer a TMA copy names (ir::OpKind::TmaLoad)
  int64_t offset = -1; ///< where it was placed
  std::vector<ir::Op *> users; ///< a scratch area: the ops whose scratch it is
};

/// Bytes no buffer may reach: a buffer's size saturates here, so that offsets and ends computed
/// from it never overflow int64 (every limit is far below).
constexpr int64_t kHugeBytes = int64_t(1) << 60;

/// The bytes of `alloc`'s buffer, saturated at kHugeBytes (a shape such as [2^32, 2^32]).
int64_t bufferBytes(const ir::Op &alloc) {
  int64_t n = ir::numElements(alloc.allocShape());
  int64_t eb = ir::storageBytes(alloc.result()->type.elem.pointee);
  return n > kHugeBytes / eb ? kHugeBytes : n * eb;
}

/// The positions an op runs at, both ends included.
struct Span {
  size_t first = 0, last = 0;
};

/// Program positions for live ranges: each top-level op of `f` is one position, except a
/// top-level warp_specialize: its default partition's ops (region 0, which the kernel's
/// num_warps warps run in order) are positions of their own after the op's, and the op and its
/// workers' ops span the op's position and all of the partition's (the workers run alongside).
class Positions {
public:
  explicit Positions(const ir::Function &f) {
    size_t i = 0;
    for (const auto &op : f.body.ops) {
      if (op->kind != OpKind::WarpSpecialize || op->regions.empty()) {
        at_[op.get()] = {i, i};
        ++i;
        continue;
      }
      const size_t ws = i++;
      for (const auto &inner : op->regions[0]->ops) {
        at_[inner.get()] = {i, i};
        ++i;
      }
      at_[op.get()] = {ws, i - 1};
    }
    end_ = i ? i - 1 : 0;
  }
  /// The span of the positioned op that is or holds `op`.
  Span of(const ir::Op &op) const {
    const ir::Op *o = &op;
    while (!at_.count(o))
      o = o->parent->parent;
    return at_.at(o);
  }
  /// The last position (the kernel's end).
  size_t end() const { return end_; }
  /// The region index of the top-level warp_specialize that holds `op` (0: none, or its default
  /// partition, whose ops have positions of their own). The workers run alongside each other:
  /// each needs scratch of its own.
  size_t worker(const ir::Op &op) const {
    for (const ir::Op *o = &op; o->parent && o->parent->parent; o = o->parent->parent) {
      const ir::Op *owner = o->parent->parent;
      for (size_t r = 0; owner->kind == OpKind::WarpSpecialize && r < owner->regions.size(); ++r)
        if (owner->regions[r].get() == o->parent)
          return r;
    }
    return 0;
  }

private:
  std::map<const ir::Op *, Span> at_;
  size_t end_ = 0;
};

/// Values derived from `alloc`'s pointer (see allocateShared), and whether the pointer escapes.
struct Derived {
  std::set<const ir::Value *> values;
  bool escapes = false;
  /// Other CTAs of the cluster access it: from their start, which may come before this CTA
  /// allocates it (its bytes must hold nothing else at any time).
  bool cluster = false;
};

/// Propagates "derived from the buffer" forward to a fixpoint: results of ops with a derived
/// operand that are pointers, and all results and block arguments of an op with regions that
/// takes a derived operand or whose regions yield one.
Derived deriveFrom(ir::Function &f, const ir::Op &alloc) {
  Derived d;
  d.values.insert(alloc.result());
  for (bool changed = true; changed;) {
    changed = false;
    auto add = [&](const ir::Value *v) { changed |= d.values.insert(v).second; };
    ir::walk(f.body, [&](ir::Op &op) {
      bool derivedOperand = std::any_of(op.operands.begin(), op.operands.end(),
                                        [&](const ir::Value *v) { return d.values.count(v) > 0; });
      if (!derivedOperand)
        return;
      if (op.kind == OpKind::RemotePtr || (op.kind == OpKind::MbarrierArrive && op.operands.size() > 1) ||
          op.kind == OpKind::SubmeshBarrier)
        d.escapes = d.cluster = true; // other CTAs of the cluster access it
      if (op.kind == OpKind::Store && op.operands.size() > 1 && d.values.count(op.operands[1]))
        d.escapes = true; // the pointer itself stored as a value
      if ((op.kind == OpKind::Yield || op.kind == OpKind::Condition) && op.parent && op.parent->parent) {
        ir::Op *owner = op.parent->parent; // the loop or branch the region belongs to
        for (auto &r : owner->results)
          add(r.get());
        for (auto &region : owner->regions)
          for (auto &a : region->args)
            add(a.get());
        return;
      }
      for (auto &r : op.results)
        if (r->type.elem.isPointer() || !op.regions.empty())
          add(r.get());
      for (auto &region : op.regions)
        for (auto &a : region->args)
          add(a.get());
    });
  }
  return d;
}

/// Whether ops of kind `k` name an mbarrier (operand 0; a tma_load's operand 1).
bool namesMbarrier(OpKind k) {
  switch (k) {
  case OpKind::MbarrierInit: case OpKind::MbarrierArrive: case OpKind::MbarrierExpectTx: case OpKind::MbarrierWait:
  case OpKind::MbarrierInval: case OpKind::AsyncCopyMbarrierArrive: case OpKind::TmaLoad:
    return true;
  default:
    return false;
  }
}

/// The last position of `f` that may wait for an asynchronous access of kind `k` (AsyncCopy,
/// TmaLoad, TmaStore, Wgmma) issued at position `at`: the last one holding a wait that may
/// complete it (async_wait_group or mbarrier_wait for a cp.async, mbarrier_wait for a TMA load,
/// tma_store_wait for a TMA store, wgmma_wait for a wgmma's reads), or the end of the kernel
/// when none comes after `at`.
size_t asyncEnd(ir::Function &f, OpKind k, size_t at, const Positions &pos) {
  size_t last = 0;
  ir::walk(f.body, [&](ir::Op &op) {
    bool waits = k == OpKind::TmaStore ? op.kind == OpKind::TmaStoreWait
                 : k == OpKind::Wgmma  ? op.kind == OpKind::WgmmaWait
                                       : op.kind == OpKind::MbarrierWait ||
                                             (k == OpKind::AsyncCopy && op.kind == OpKind::AsyncWaitGroup);
    if (waits)
      last = std::max(last, pos.of(op).last);
  });
  return last >= at ? last : pos.end();
}

/// The live range of `alloc` (see allocateShared).
LiveRange liveRange(ir::Function &f, ir::Op &alloc, const Positions &pos) {
  LiveRange r;
  r.alloc = &alloc;
  r.first = pos.of(alloc).first;
  r.last = pos.of(alloc).last;
  r.bytes = bufferBytes(alloc);
  if (alloc.allocSwizzle())
    r.align = 1024; // the swizzle pattern repeats every 1024 bytes of the address
  Derived d = deriveFrom(f, alloc);
  bool mbarrier = false, invalidated = false; // an mbarrier op names it; an mbarrier_inval does
  ir::walk(f.body, [&](ir::Op &op) {
    for (const ir::Value *v : op.operands)
      if (d.values.count(v))
        r.last = std::max(r.last, pos.of(op).last);
    if ((op.kind == OpKind::TmaLoad || op.kind == OpKind::TmaStore) && d.values.count(op.operands[0]))
      r.align = 1024; // TMA's swizzle patterns repeat every 1024 bytes
    // The copy goes on after its op: the buffer stays until the copy may have been waited for.
    bool async = op.kind == OpKind::AsyncCopy || op.kind == OpKind::TmaLoad || op.kind == OpKind::TmaStore;
    if (async && d.values.count(op.operands[0]))
      r.last = std::max(r.last, asyncEnd(f, op.kind, pos.of(op).first, pos));
    if (op.kind == OpKind::Wgmma && (d.values.count(op.operands[0]) || d.values.count(op.operands[1])))
      r.last = std::max(r.last, asyncEnd(f, op.kind, pos.of(op).first, pos));
    size_t barOperand = op.kind == OpKind::TmaLoad ? 1 : 0;
    if (namesMbarrier(op.kind))
      (op.kind == OpKind::MbarrierInval ? invalidated : mbarrier) |= d.values.count(op.operands[barOperand]) > 0;
  });
  // PTX ISA §9.7.13.15: an mbarrier's bytes may hold anything else only after mbarrier.inval.
  if (mbarrier && !invalidated)
    r.last = pos.end();
  if (d.escapes)
    r.last = pos.end();
  if (d.cluster)
    r.first = 0;
  return r;
}

int64_t alignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

/// Appends to `ranges` the areas the backend lays out (none on IR without layouts): the
/// pipeline area (Function::pipelineBytes), live from the kernel's start (its mbarriers are
/// initialised there) to the last position that uses it (usesPipelineArea), and per position one
/// scratch area for the ops there (scratchNeeds; the largest need, they run one after another;
/// the workers of a warp_specialize, which run alongside, one each),
/// live at that position (a TMA store's staging to the end of the kernel: its bulk copy reads it
/// until the kernel ends). Clears the scratch offsets of an earlier run. Returns the pipeline
/// area's range, or null.
LiveRange *backendAreas(ir::Function &f, const Positions &pos, std::vector<LiveRange> &ranges) {
  bool layouts = true;
  ir::walk(f.body, [&](ir::Op &op) {
    if (op.kind != OpKind::LocalAlloc)
      op.sharedOffset = -1; // an earlier run's scratch
    for (auto &r : op.results)
      layouts &= !r->type.isTile() || r->layout != nullptr;
  });
  if (!layouts)
    return nullptr;
  std::map<const ir::Value *, int> async = pipelineValues(f);
  size_t pipelineRange = SIZE_MAX;
  if (f.pipelineBytes > 0) {
    LiveRange r;
    ir::walk(f.body, [&](ir::Op &op) {
      if (usesPipelineArea(op, async))
        r.last = std::max(r.last, pos.of(op).last);
    });
    r.bytes = f.pipelineBytes;
    r.align = 1024; // swizzled slots and staging areas
    pipelineRange = ranges.size();
    ranges.push_back(r);
  }
  std::map<std::pair<size_t, size_t>, size_t> scratchOf; // (position, worker) -> its range
  std::map<const ir::Op *, ScratchNeed> needs = scratchNeeds(f, async);
  std::vector<std::pair<ir::Op *, ScratchNeed>> inOrder; // program order (offsets must not depend on addresses)
  ir::walk(f.body, [&](ir::Op &op) {
    if (auto it = needs.find(&op); it != needs.end())
      inOrder.push_back({&op, it->second});
  });
  for (auto &[op, need] : inOrder) {
    Span at = pos.of(*op);
    auto [it, fresh] = scratchOf.try_emplace({at.first, pos.worker(*op)}, ranges.size());
    if (fresh) {
      LiveRange r;
      r.first = at.first;
      r.last = at.last;
      ranges.push_back(r);
    }
    LiveRange &r = ranges[it->second];
    r.bytes = std::max(r.bytes, need.bytes);
    r.align = std::max(r.align, need.align);
    if (op->kind == OpKind::Store)
      r.last = pos.end();
    r.users.push_back(op);
  }
  return pipelineRange == SIZE_MAX ? nullptr : &ranges[pipelineRange];
}

/// One placement of every buffer and backend area of `f` (the rule of allocateShared).
SharedAllocation place(ir::Function &f, const Positions &pos, DiagnosticEngine *diags) {
  std::vector<LiveRange> ranges;
  ir::walk(f.body, [&](ir::Op &op) {
    if (op.kind == OpKind::LocalAlloc)
      ranges.push_back(liveRange(f, op, pos));
  });
  const size_t buffers = ranges.size();
  LiveRange *pipelineArea = backendAreas(f, pos, ranges);
  SharedAllocation out;
  int64_t limit = sharedMemoryLimit(f.arch), end = 0;
  std::vector<const LiveRange *> placed;
  for (LiveRange &r : ranges) {
    // The lowest aligned offset past every placed range it would overlap while both are live.
    auto overlaps = [&](const LiveRange *p, int64_t at) {
      return at < p->offset + alignUp(p->bytes, 16) && p->offset < at + alignUp(r.bytes, 16);
    };
    auto live = [&](const LiveRange *p) { return p->first <= r.last && r.first <= p->last; };
    int64_t at = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (const LiveRange *p : placed)
        if (live(p) && overlaps(p, at)) {
          at = alignUp(p->offset + alignUp(p->bytes, 16), r.align);
          moved = true;
        }
    }
    bool reuse = std::any_of(placed.begin(), placed.end(), [&](const LiveRange *p) { return overlaps(p, at); });
    if (r.bytes > limit - at && r.alloc) {
      std::string need = r.bytes >= kHugeBytes ? "more than " + std::to_string(kHugeBytes) : std::to_string(at + r.bytes);
      if (diags)
        diags->error(r.alloc->loc, "shared buffers need " + need +
                                       " bytes of shared memory at once here, more than the " + std::to_string(limit) +
                                       " bytes " + (f.arch.empty() ? std::string("the target") : f.arch) +
                                       " allows per block; use smaller buffers");
      break;
    }
    // The backend's areas past the limit are reported with the kernel's total (the backend).
    r.offset = at;
    if (r.alloc)
      r.alloc->sharedOffset = at;
    for (ir::Op *u : r.users)
      u->sharedOffset = at;
    placed.push_back(&r);
    end = std::max(end, at + (r.alloc ? alignUp(r.bytes, 16) : r.bytes));
    if (r.alloc) {
      ++out.buffers;
      out.reused += reuse;
    }
  }
  f.pipelineOffset = pipelineArea ? std::max<int64_t>(pipelineArea->offset, 0) : 0;
  out.bytes = end;
  f.sharedBytes = buffers > 0 ? alignUp(end, 1024) : end;
  return out;
}

/// After a placement past `limit`: halves the staging rounds (Op::dotStageK) of the mma.sync
/// dot with the largest staging area among those whose area ends past the limit, neither of
/// whose operands is a pipeline value, and that can stage in smaller rounds (chunkableStaging).
/// Whether it changed one.
bool stageInRounds(ir::Function &f, int64_t limit) {
  const std::map<const ir::Value *, int> async = pipelineValues(f);
  std::map<const ir::Op *, ScratchNeed> needs = scratchNeeds(f, async);
  ir::Op *pick = nullptr;
  int64_t most = 0, half = 0;
  ir::walk(f.body, [&](ir::Op &op) {
    auto it = needs.find(&op);
    if (op.kind != OpKind::Dot || it == needs.end() || op.sharedOffset < 0 || op.sharedOffset + it->second.bytes <= limit)
      return;
    if (async.count(op.operands[0]) || async.count(op.operands[1]))
      return; // an operand read from a pipeline slot: only dots staging both from registers go in rounds
    int64_t now = op.dotStageK() > 0 ? op.dotStageK() : op.operands[0]->type.shape[1];
    if (it->second.bytes > most && chunkableStaging(op, now / 2, f.arch, f.numWarps)) {
      pick = &op;
      most = it->second.bytes;
      half = now / 2;
    }
  });
  if (pick)
    pick->setDotStageK(half);
  return pick != nullptr;
}

} // namespace

SharedAllocation allocateShared(ir::Function &f, DiagnosticEngine *diags) {
  const Positions pos(f);
  const int64_t limit = sharedMemoryLimit(f.arch);
  // A kernel that would not fit stages its largest dot operands in rounds of K, halved until it
  // fits or no dot can (each retry places everything again: offsets depend on the sizes).
  while (place(f, pos, nullptr).bytes > limit && stageInRounds(f, limit)) {
  }
  return place(f, pos, diags);
}

} // namespace tle::transforms
