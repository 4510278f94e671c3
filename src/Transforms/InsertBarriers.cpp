// insert-barriers: CTA barriers between conflicting shared-memory accesses and the cluster exit
// protocol, as explicit ops (see InsertBarriers.h).
#include "tle/Transforms/InsertBarriers.h"
#include "tle/IR/RawCode.h"
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/Scratch.h"

#include <llvm/Support/SaveAndRestore.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace tle::transforms {

using ir::AddrSpace;
using ir::OpKind;

namespace {

/// How an op touches memory through its pointer operand (operand 0).
enum class Access { None, Read, Write, Atomic };

/// The access `op` makes to memory in address space `space`, if any.
Access accessIn(const ir::Op &op, AddrSpace space) {
  bool memory = op.kind == OpKind::Load || op.kind == OpKind::Store || op.kind == OpKind::AtomicRMW ||
                op.kind == OpKind::AtomicCAS;
  if (!memory || op.operands.empty() || op.operands[0]->type.elem.space != space ||
      !op.operands[0]->type.elem.isPointer())
    return Access::None;
  return op.kind == OpKind::Load ? Access::Read : op.kind == OpKind::Store ? Access::Write : Access::Atomic;
}

/// Bytes [begin, end) of the CTA's shared memory that an access may touch; all of them unless
/// narrowed by bufferBytes.
struct Bytes {
  int64_t begin = 0, end = std::numeric_limits<int64_t>::max();
  bool overlaps(const Bytes &o) const { return begin < o.end && o.begin < end; }
  bool operator==(const Bytes &o) const { return begin == o.begin && end == o.end; }
};

/// The bytes a load, store or atomic through `ptr` may touch: those of the placed LocalAlloc the
/// pointer derives from through splat, addptr, broadcast, expand_dims, reshape, permute and
/// convert_layout (an index past a buffer is undefined: tle.gpu.local_ptr, and allocate-shared
/// gives a buffer's bytes to another only outside its lifetime); all of shared memory for any
/// other pointer (a loop-carried one, a select of two, a pipeline slot).
Bytes bufferBytes(const ir::Value *ptr) {
  while (ptr->def) {
    const ir::Op &d = *ptr->def;
    switch (d.kind) {
    case OpKind::LocalAlloc: {
      if (d.sharedOffset < 0)
        return {};
      int64_t bytes = ir::numElements(d.allocShape()) * ir::storageBytes(d.result()->type.elem.pointee);
      return {d.sharedOffset, d.sharedOffset + bytes};
    }
    case OpKind::Splat: case OpKind::AddPtr: case OpKind::Broadcast: case OpKind::ExpandDims:
    case OpKind::Reshape: case OpKind::Permute: case OpKind::ConvertLayout:
      ptr = d.operands[0];
      continue;
    default:
      return {};
    }
  }
  return {};
}

/// How `op` touches the CTA's shared memory, for the barrier rule: loads, stores and atomics
/// through a shared pointer; an async_copy writes its destination (it must not overtake other
/// threads' earlier accesses to those bytes), and its bytes are written for other threads at
/// the async_wait_group that waits for them (`issue`: the copy's own point, which leaves nothing
/// pending); a tma_load writes like an async_copy (thread 0 issues it; an mbarrier_wait
/// completes it for the waiting threads), a tma_store reads its source, and the source counts
/// as read until tma_store_wait; mbarrier_init and mbarrier_inval are thread 0's scalar writes of
/// the mbarrier, the other mbarrier ops read it after its initialisation (and the stores before
/// an arrival; every access before an arrival some threads make for all, per=cta, warp or
/// warpgroup, which releases the others' accesses too, to this CTA's threads or, remote, to
/// another CTA's) and leave nothing pending: the copies and waits an mbarrier orders need no CTA
/// barrier, and a barrier between its last use and its inval is the author's (IR.h); local_load
/// reads and local_store writes its matrix, a wgmma reads its operands until wgmma_wait.
struct SharedEffect {
  Access access = Access::None;
  bool scalar = false; ///< a scalar access (thread 0's, for a write)
  bool issue = false;  ///< ordered after pending accesses, leaves none (copies, mbarrier uses)
  /// An arrival by some threads (per=cta, warp or warpgroup) that releases the others' accesses
  /// too: ordered after every pending access, loads included.
  bool releasesAll = false;
  /// The bytes touched: the buffer of a load's, store's or atomic's pointer, of a local_load's,
  /// local_store's, shared extract_tile's or insert_tile's buffer, of an async_copy's
  /// destination, and those of a copies-only raw call's buffers (bufferBytes); all of shared
  /// memory for the other GPU ops.
  Bytes bytes = {};
  /// Completes earlier copies' writes (async_wait_group, a waits-only raw call): not ordered after
  /// the pending accesses (the copies were, at their issue, and may land any time after it), and
  /// leaves their writes pending.
  bool completes = false;
};

/// The bytes of the buffers `op`'s shared pointer operands point into: the smallest range
/// holding every one (bufferBytes), or all of shared memory when one is not a placed buffer's.
Bytes operandBytes(const ir::Op &op) {
  std::optional<Bytes> hull;
  for (const ir::Value *v : op.operands) {
    if (!v->type.elem.isPointer() || v->type.elem.space != AddrSpace::Shared)
      continue;
    Bytes b = bufferBytes(v);
    hull = hull ? Bytes{std::min(hull->begin, b.begin), std::max(hull->end, b.end)} : b;
  }
  return hull.value_or(Bytes{});
}

SharedEffect sharedEffect(const ir::Op &op) {
  switch (op.kind) {
  case OpKind::AsyncCopy: return {Access::Write, false, true, false, bufferBytes(op.operands[0])};
  case OpKind::TmaLoad: return {Access::Write, true, true}; // thread 0's; complete at mbarrier_wait
  case OpKind::TmaStore: case OpKind::TmaStoreWait: return {Access::Read, true, false}; // reads until the wait
  case OpKind::Wgmma: case OpKind::WgmmaWait: // a wgmma reads until its wait
    return {Access::Read, false, false};
  case OpKind::LocalLoad: return {Access::Read, false, false, false, bufferBytes(op.operands[0])};
  case OpKind::LocalStore: return {Access::Write, false, false, false, bufferBytes(op.operands[0])};
  case OpKind::ExtractTile: case OpKind::InsertTile: // their shared-memory form (a buffer pointer)
    if (ir::tileOpInRegisters(op))
      return {};
    if (op.operands[0]->type.isTile()) // insert_tile's window form reading the window's buffer
      return {Access::Read, false, false, false, bufferBytes(op.operands[1])};
    return {op.kind == OpKind::ExtractTile ? Access::Read : Access::Write, false, false, false,
            bufferBytes(op.operands[0])};
  case OpKind::AsyncWaitGroup: return {Access::Write, false, false, false, Bytes{}, true};
  case OpKind::RawCall: { // native code reads and writes the buffers it is given, by any thread
    bool shared = std::any_of(op.operands.begin(), op.operands.end(), [](const ir::Value *v) {
      return v->type.elem.isPointer() && v->type.elem.space == AddrSpace::Shared;
    });
    int e = op.rawSharedEffects();
    if (!shared || e == ir::kRawSharedKnown) // given no buffer, or touching none
      return {};
    // Native code that only issues cp.async copies writes like an async_copy (ordered after
    // the pending accesses, the bytes land at a wait); one that only waits for them, like
    // async_wait_group; anything else, as a write by every thread.
    // The copies land in the buffers the call is given (the calling convention); other native
    // code may also use shared memory of its own, so it keeps all of shared memory.
    if (e == (ir::kRawSharedKnown | ir::kRawSharedAsyncCopy))
      return {Access::Write, false, true, false, operandBytes(op)};
    return {Access::Write, false, false, false, Bytes{}, e == (ir::kRawSharedKnown | ir::kRawSharedAsyncWait)};
  }
  case OpKind::MbarrierInit: case OpKind::MbarrierInval: return {Access::Write, true, false};
  case OpKind::MbarrierArrive: // remote (another CTA's mbarrier) too: it releases this CTA's
    // accesses to that CTA's threads, whose TMA multicast may write these buffers next
    return {Access::Read, true, true, op.sync.per != ir::Arrivers::Thread};
  case OpKind::MbarrierExpectTx: case OpKind::MbarrierWait: case OpKind::AsyncCopyMbarrierArrive:
    return {Access::Read, true, true};
  default: break;
  }
  Access a = accessIn(op, AddrSpace::Shared);
  if (a == Access::None)
    return {};
  return {a, op.operands[0]->type.isScalar(), false, false, bufferBytes(op.operands[0])};
}

/// Whether `op` accesses another CTA's shared memory (a cluster pointer, a remote mbarrier
/// arrival, or a sub-mesh barrier's counter in its leader), for the cluster entry and exit
/// protocols.
bool clusterAccess(const ir::Op &op) {
  return accessIn(op, AddrSpace::Cluster) != Access::None ||
         (op.kind == OpKind::MbarrierArrive && op.operands.size() > 1) || op.kind == OpKind::SubmeshBarrier;
}

/// Accesses to shared memory made since the last barrier, by some thread: per range of bytes
/// (one per buffer accessed, or all of shared memory).
struct Pending {
  struct Range {
    Bytes bytes;
    bool read = false, write = false, atomic = false;
    bool scalarStoresOnly = false; ///< every pending write here is a scalar store (thread 0's)
  };
  std::vector<Range> ranges;

  bool any() const { return !ranges.empty(); }
  /// The entry of exactly `b`, made when there is none.
  Range &at(Bytes b) {
    for (Range &r : ranges)
      if (r.bytes == b)
        return r;
    ranges.push_back({b});
    return ranges.back();
  }
  /// Adds `o`'s accesses; writes merged in are no longer scalar stores only.
  void merge(const Pending &o) {
    for (const Range &x : o.ranges) {
      Range &r = at(x.bytes);
      r.read |= x.read;
      r.atomic |= x.atomic;
      if (x.write) {
        r.write = true;
        r.scalarStoresOnly = false;
      }
    }
  }
  /// Whether some pending access touches bytes of `b`.
  bool touches(Bytes b) const {
    return std::any_of(ranges.begin(), ranges.end(), [&](const Range &r) { return r.bytes.overlaps(b); });
  }
  /// Whether `o` holds the same accesses (in any order).
  bool same(const Pending &o) const {
    if (ranges.size() != o.ranges.size())
      return false;
    for (const Range &r : ranges) {
      auto it = std::find_if(o.ranges.begin(), o.ranges.end(), [&](const Range &x) { return x.bytes == r.bytes; });
      if (it == o.ranges.end() || it->read != r.read || it->write != r.write || it->atomic != r.atomic ||
          it->scalarStoresOnly != r.scalarStoresOnly)
        return false;
    }
    return true;
  }
  /// Whether an access `a` to `b` (a scalar store when `scalarStore`) may conflict with a pending
  /// one: a load after a store or an atomic; a store after anything, except a scalar store after
  /// scalar stores only; an atomic after a load or a store. Only overlapping bytes conflict.
  bool conflicts(Access a, Bytes b, bool scalarStore) const {
    for (const Range &r : ranges) {
      if (!r.bytes.overlaps(b))
        continue;
      bool c = a == Access::Read    ? r.write || r.atomic
               : a == Access::Write ? r.read || r.atomic || (r.write && !(scalarStore && r.scalarStoresOnly))
               : a == Access::Atomic && (r.read || r.write);
      if (c)
        return true;
    }
    return false;
  }
};

/// The ops of `f` in which the backend reads shared memory it laid out that shares bytes with one
/// of the kernel's buffers (allocate-shared places them by liveness): an op with such a scratch
/// area (Op::sharedOffset, transforms::scratchNeeds), or one that uses a value in pipeline slots or
/// holds a TMA store's staging area when the pipeline area is such; each such op at any depth (a
/// later access in its own block, a warp partition's say, must wait for its reads) and the
/// top-level op holding it.
std::set<const ir::Op *> backendReaders(ir::Function &f) {
  std::map<const ir::Value *, int> async = pipelineValues(f);
  std::vector<std::pair<int64_t, int64_t>> buffers; // [begin, end) of each placed buffer
  ir::walk(f.body, [&](ir::Op &o) {
    if (o.kind == OpKind::LocalAlloc && o.sharedOffset >= 0)
      buffers.push_back({o.sharedOffset, o.sharedOffset + ir::numElements(o.allocShape()) *
                                                             ir::storageBytes(o.result()->type.elem.pointee)});
  });
  auto sharesBytes = [&](int64_t at, int64_t bytes) {
    return std::any_of(buffers.begin(), buffers.end(),
                       [&](auto b) { return at < b.second && b.first < at + bytes; });
  };
  if (buffers.empty())
    return {};
  std::map<const ir::Op *, ScratchNeed> needs = scratchNeeds(f, async);
  const bool pipelineShares = f.pipelineBytes > 0 && sharesBytes(f.pipelineOffset, f.pipelineBytes);
  std::set<const ir::Op *> readers;
  for (auto &top : f.body.ops) {
    auto visit = [&](ir::Op &o) {
      auto need = needs.find(&o);
      bool reads = o.kind != OpKind::LocalAlloc && o.sharedOffset >= 0 && need != needs.end() &&
                   sharesBytes(o.sharedOffset, need->second.bytes);
      if (pipelineShares) {
        reads |= o.kind == OpKind::Store && o.tmaStaging() >= 0;
        for (const ir::Value *v : o.operands)
          reads |= async.count(v) > 0;
      }
      if (reads) {
        readers.insert(&o);
        readers.insert(top.get());
      }
    };
    visit(*top);
    for (auto &r : top->regions)
      ir::walk(*r, visit);
  }
  return readers;
}

/// Whether `op` is an mbarrier op on one of the pipeline pass's mbarriers (pipeline_mbarrier)
/// or a fill of one of its slots (a tma_load or async_copy into a pipeline_slot, pipeline-fills): they lie
/// in the pipeline area, which no other op of the IR addresses, and the pipeline pass places the
/// barriers their protocol needs itself (placePipelineProtocol, insertRefillBarriers).
bool onPipelineMbarrier(const ir::Op &op) {
  bool mbarrierOp = op.kind == OpKind::MbarrierInit || op.kind == OpKind::MbarrierInval ||
                    op.kind == OpKind::MbarrierWait || op.kind == OpKind::MbarrierArrive ||
                    op.kind == OpKind::MbarrierExpectTx;
  bool slotFill = (op.kind == OpKind::TmaLoad || op.kind == OpKind::AsyncCopy) && op.operands[0]->def &&
                  (op.operands[0]->def->kind == OpKind::PipelineSlot ||
                   (op.operands[0]->def->kind == OpKind::AddPtr && op.operands[0]->def->operands[0]->def &&
                    op.operands[0]->def->operands[0]->def->kind == OpKind::PipelineSlot));
  return slotFill || (mbarrierOp && !op.operands.empty() && op.operands[0]->def &&
                      op.operands[0]->def->kind == OpKind::PipelineMbarrier);
}

class Inserter {
public:
  Inserter(BarrierInsertion &out, ir::Function &f) : out_(out), backendReaders_(backendReaders(f)) {
    bool partitions = f.producerWarps > 0;
    ir::walk(f.body, [&](ir::Op &op) {
      asyncCopies_ |= op.kind == OpKind::AsyncCopy && !onPipelineMbarrier(op); // not a pipeline slot's fill
      wgmmaOps_ |= op.kind == OpKind::Wgmma;
      asyncReaders_ |= op.kind == OpKind::Wgmma || op.kind == OpKind::TmaStore;
      partitions |= op.kind == OpKind::WarpSpecialize;
    });
    ctaThreads_ = partitions ? -1 : 32 * f.numWarps;
  }

  void block(ir::Block &b) {
    for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
      ir::Op &op = **it;
      // The backend's own scratch and pipeline slots share bytes with the kernel's buffers
      // across top-level ops (allocate-shared): its reads there are pending after the op (it
      // orders its writes after earlier accesses itself, with a barrier of its own).
      struct ReadsAfter {
        Pending &p;
        bool on;
        ~ReadsAfter() {
          if (on)
            p.at(Bytes{}).read = true;
        }
      } after{p_, backendReaders_.count(&op) > 0};
      // A named barrier of part of the CTA's threads (threads=) does not order the others; one
      // of all of them (in a kernel without warp partitions) does.
      if ((op.kind == OpKind::Barrier && (op.sync.threads == 0 || op.sync.threads == ctaThreads_)) ||
          op.kind == OpKind::ClusterBarrier ||
          op.kind == OpKind::GridBarrier || op.kind == OpKind::SubmeshBarrier ||
          op.kind == OpKind::DeviceBarrier || op.kind == OpKind::SignalWait) {
        p_ = {};
        continue;
      }
      if (!op.regions.empty()) {
        bool writes = genericWritesIn(op);
        // Writes before the op that an async-proxy reader inside it may read: the fence goes
        // before the op, ahead of the barrier regions() may place there (once before a loop,
        // not in each iteration; one for every branch of an if).
        if (unfenced_ && asyncReadsIn(op))
          fenceBefore(b, it);
        if (writes && op.kind == OpKind::For)
          unfenced_ = true; // the previous iteration's writes, at the body's start
        regions(b, it);
        unfenced_ |= writes;
        continue;
      }
      proxyFence(b, it);
      SharedEffect e = effect(op);
      if (e.access != Access::None)
        access(b, it, e);
    }
  }

private:
  bool asyncCopies_ = false; ///< the IR has async_copy ops into its buffers (whose bytes async_wait_group completes)
  bool wgmmaOps_ = false;    ///< the IR has wgmma ops (whose operand reads wgmma_wait completes)
  bool asyncReaders_ = false; ///< the IR reads shared memory through the async proxy (wgmma, tma_store)

  /// sharedEffect, less what touches nothing of the IR's: the pipeline pass's mbarriers, an
  /// async_wait_group in a kernel without async_copy ops and a wgmma_wait in one without wgmma
  /// ops (the backend's own copies into the pipeline area and its `async` dots' reads of them
  /// are ordered by the backend).
  SharedEffect effect(const ir::Op &op) const {
    if (onPipelineMbarrier(op) || (op.kind == OpKind::AsyncWaitGroup && !asyncCopies_) ||
        (op.kind == OpKind::WgmmaWait && !wgmmaOps_))
      return {};
    return sharedEffect(op);
  }

  /// Whether `op` writes shared memory through the generic proxy (st.shared, atomics).
  static bool genericWrite(const ir::Op &op) {
    return op.kind == OpKind::LocalStore || (accessIn(op, AddrSpace::Shared) != Access::None &&
                                              op.kind != OpKind::Load);
  }
  static bool genericWritesIn(ir::Op &op) {
    bool any = false;
    for (auto &r : op.regions)
      ir::walk(*r, [&](ir::Op &o) { any |= genericWrite(o); });
    return any;
  }
  /// Generic-proxy writes to shared memory are made visible to an async-proxy reader (wgmma,
  /// tma_store) by fence.proxy.async in the writing threads before the barrier that orders them
  /// (PTX ISA §9.7.13.4): one goes before `it` when such a reader, or an mbarrier arrival that
  /// may release the bytes to one in another partition, follows writes no fence has covered
  /// (the barrier, if one is needed, goes after it).
  void proxyFence(ir::Block &b, std::list<std::unique_ptr<ir::Op>>::iterator it) {
    ir::Op &op = **it;
    if (op.kind == OpKind::FenceProxyAsync && !op.sync.global) {
      unfenced_ = false;
      return;
    }
    if (genericWrite(op)) {
      unfenced_ = true;
      return;
    }
    if (asyncRead(op) && unfenced_)
      fenceBefore(b, it);
  }
  /// Whether `op` reads shared memory through the async proxy, or is an mbarrier arrival that may
  /// release the bytes to such a reader in another partition (a consumer's staging buffer to a
  /// storer's tma_store).
  bool asyncRead(const ir::Op &op) const {
    return op.kind == OpKind::Wgmma || op.kind == OpKind::TmaStore ||
           (op.kind == OpKind::MbarrierArrive && asyncReaders_ && !onPipelineMbarrier(op));
  }
  bool asyncReadsIn(ir::Op &op) const {
    bool any = false;
    for (auto &r : op.regions)
      ir::walk(*r, [&](ir::Op &o) { any |= asyncRead(o); });
    return any;
  }
  void fenceBefore(ir::Block &b, std::list<std::unique_ptr<ir::Op>>::iterator it) {
    unfenced_ = false;
    if (dry_)
      return;
    ir::Builder B(&b);
    B.setInsertionPoint(&b, it);
    B.create(OpKind::FenceProxyAsync, (*it)->loc, {}, {});
    ++out_.proxyFences;
  }

  void barrierBefore(ir::Block &b, std::list<std::unique_ptr<ir::Op>>::iterator it) {
    p_ = {};
    if (dry_)
      return;
    ir::Builder B(&b);
    B.setInsertionPoint(&b, it);
    B.create(OpKind::Barrier, (*it)->loc, {}, {});
    ++out_.ctaBarriers;
  }

  void access(ir::Block &b, std::list<std::unique_ptr<ir::Op>>::iterator it, SharedEffect e) {
    Access a = e.access;
    bool scalarStore = a == Access::Write && e.scalar;
    if (!e.completes && ((e.releasesAll && p_.any()) || p_.conflicts(a, e.bytes, scalarStore)))
      barrierBefore(b, it);
    if (e.issue)
      return;
    Pending::Range &r = p_.at(e.bytes);
    if (a == Access::Write) {
      r.scalarStoresOnly = (!r.write || r.scalarStoresOnly) && scalarStore;
      r.write = true;
    } else {
      (a == Access::Read ? r.read : r.atomic) = true;
    }
  }

  /// A loop or branch: settle what is pending, walk its regions, then assume what they may leave.
  void regions(ir::Block &b, std::list<std::unique_ptr<ir::Op>>::iterator it) {
    ir::Op &op = **it;
    // The accesses of the regions that follow pending ones (`all`), and what they may leave
    // pending (`kinds`): an access that leaves nothing pending (a copy's issue, an mbarrier use)
    // counts in `all` only, a copy's completion in `kinds` only. `ordered`: the bytes of the GPU
    // ops there (copies, mbarriers, wgmma, ...), whose pending accesses are settled before the
    // op; a warp_specialize settles every one, its partitions start with nothing pending.
    Pending kinds, all;
    const bool partitions = op.kind == OpKind::WarpSpecialize;
    std::vector<Bytes> ordered; // the bytes of the GPU ops in the regions
    for (auto &r : op.regions)
      ir::walk(*r, [&](ir::Op &o) {
        SharedEffect e = effect(o);
        if (e.access == Access::None)
          return;
        if (o.kind != OpKind::Load && o.kind != OpKind::Store && o.kind != OpKind::AtomicRMW &&
            o.kind != OpKind::AtomicCAS && !e.completes)
          ordered.push_back(e.releasesAll ? Bytes{} : e.bytes);
        for (Pending *p : {&all, &kinds}) {
          if ((e.issue && p == &kinds) || (e.completes && p == &all))
            continue;
          Pending::Range &x = p->at(e.bytes);
          (e.access == Access::Read ? x.read : e.access == Access::Write ? x.write : x.atomic) = true;
        }
      });
    bool read = false, write = false, atomic = false;
    for (const Pending::Range &x : all.ranges) {
      read |= x.read;
      write |= x.write;
      atomic |= x.atomic;
    }
    int count = read + write + atomic;
    if (!count) {
      const Pending before = p_; // a barrier inside may not run
      walkRegions(op); // barriers inside may still be written there
      p_.merge(before);
      return;
    }
    // Settle what is pending before the op when anything in its regions may conflict with it, or
    // a GPU op there touches its bytes (settled once before a loop rather than in each
    // iteration); all of it before warp partitions.
    bool conflict = partitions && p_.any();
    for (const Bytes &b : ordered)
      conflict |= p_.touches(b);
    for (const Pending::Range &x : all.ranges)
      for (Access a : {Access::Read, Access::Write, Access::Atomic})
        conflict |= (a == Access::Read ? x.read : a == Access::Write ? x.write : x.atomic) &&
                    p_.conflicts(a, x.bytes, false);
    if (conflict)
      barrierBefore(b, it);
    // What stays pending from before: a barrier inside may not run (no iteration, the other branch).
    const Pending before = p_;
    // A loop's first iteration also follows what the previous one left pending. Branches and
    // warp partitions run their regions once.
    if (op.kind != OpKind::If && !partitions)
      p_.merge(loopCarried(op, kinds));
    walkRegions(op);
    p_.merge(before);
  }

  /// What an iteration of loop `op` may leave pending at its end, for the next one: the fixed
  /// point of walking its regions (without placing anything) from what is pending before it plus
  /// what the previous iteration left, starting from nothing. `kinds` (every access of the
  /// regions) stands in should it not settle.
  Pending loopCarried(ir::Op &op, const Pending &kinds) {
    const Pending entry = p_;
    // Loops nested in a loop are walked once per iteration of the outer fixed point, with the
    // same entry most times: each (loop, entry) is solved once, or nesting would be exponential.
    std::vector<std::pair<Pending, Pending>> &solved = carriedCache_[&op];
    for (const auto &[from, result] : solved)
      if (from.same(entry))
        return result;
    llvm::SaveAndRestore<bool> keepUnfenced(unfenced_), dryRun(dry_, true);
    Pending carried;
    bool settled = false;
    for (int i = 0; i < 16 && !settled; ++i) {
      p_ = entry;
      p_.merge(carried);
      walkRegions(op);
      Pending next = carried;
      next.merge(p_);
      settled = next.same(carried);
      carried = std::move(next);
    }
    p_ = entry;
    solved.push_back({entry, settled ? carried : kinds});
    return solved.back().second;
  }

  /// Places barriers in `op`'s regions. The partitions of a warp_specialize and the branches of
  /// an if run apart: each partition starts with nothing pending (behind the barrier before the
  /// op), each branch from what was pending before the if, and each with only the unfenced writes
  /// from before (a fence in one does not cover another); after them, what any of them left. The
  /// regions of a loop run in sequence.
  void walkRegions(ir::Op &op) {
    const bool apart = op.kind == OpKind::WarpSpecialize || op.kind == OpKind::If;
    const Pending entry = op.kind == OpKind::If ? p_ : Pending{};
    const bool unfencedBefore = unfenced_;
    bool unfencedAfter = false;
    Pending ends;
    for (auto &r : op.regions) {
      if (apart) {
        p_ = entry;
        unfenced_ = unfencedBefore;
      }
      block(*r);
      unfencedAfter |= unfenced_;
      ends.merge(p_);
    }
    if (apart) {
      p_ = ends;
      unfenced_ = unfencedAfter;
    }
  }

  BarrierInsertion &out_;
  std::set<const ir::Op *> backendReaders_;
  Pending p_;
  bool unfenced_ = false; ///< generic-proxy shared writes since the last fence.proxy.async
  bool dry_ = false;      ///< walking to learn what is pending (loopCarried): nothing is placed
  /// loopCarried's results: per loop, (what was pending before it, what an iteration leaves).
  std::map<const ir::Op *, std::vector<std::pair<Pending, Pending>>> carriedCache_;
  int ctaThreads_ = -1;    ///< the CTA's threads, which a named barrier of as many orders; -1 with partitions
};

/// Whether `op` takes part in the cluster barrier's phases (a whole, split or half barrier).
bool clusterBarrierOp(const ir::Op &op) {
  return op.kind == OpKind::ClusterBarrier || op.kind == OpKind::ClusterArrive || op.kind == OpKind::ClusterWait;
}

/// Inserts a `k` op into the function body before `at`, located at `loc`.
void insertAt(ir::Function &f, std::list<std::unique_ptr<ir::Op>>::iterator at, OpKind k, SourceLoc loc) {
  ir::Builder B(&f.body);
  B.setInsertionPoint(&f.body, at);
  B.create(k, loc, {}, {});
}

/// Adds the cluster exit protocol to `f` when it needs one (see insertBarriers).
bool insertClusterExit(ir::Function &f) {
  auto &ops = f.body.ops;
  if (ops.empty() || ops.back()->kind != OpKind::Return)
    return false;
  // The last top-level op holding a remote access, and the last one holding a cluster barrier op
  // in its regions (an arrival there must not be overtaken by ours).
  std::optional<size_t> lastAccess;
  size_t lastNested = 0, i = 0;
  for (auto &top : ops) {
    if (clusterAccess(*top))
      lastAccess = i;
    for (auto &r : top->regions)
      ir::walk(*r, [&](ir::Op &op) {
        if (clusterAccess(op))
          lastAccess = i;
        if (clusterBarrierOp(op))
          lastNested = i;
      });
    ++i;
  }
  if (!lastAccess)
    return false;
  // Follow the top-level phases (regions leave them as they found them: ir::verify) from the
  // point after which this thread must arrive: a barrier, or an arrival then its wait, after it
  // protects the accesses; a wait of an arrival made before them moves that point past it.
  size_t after = std::max(*lastAccess, lastNested);
  bool arrived = false, arrivedAfter = false;
  auto afterIt = ops.begin();
  i = 0;
  for (auto it = ops.begin(); std::next(it) != ops.end(); ++it, ++i) {
    OpKind k = (*it)->kind;
    if (i <= after) {
      if (k == OpKind::ClusterArrive || k == OpKind::ClusterWait)
        arrived = k == OpKind::ClusterArrive;
      afterIt = it;
      continue;
    }
    if (k == OpKind::ClusterBarrier || (k == OpKind::ClusterWait && arrivedAfter))
      return false;
    if (k == OpKind::ClusterArrive)
      arrived = arrivedAfter = true;
    if (k == OpKind::ClusterWait) { // completes a phase begun before the accesses
      arrived = false;
      afterIt = it;
    }
  }
  SourceLoc loc = (*afterIt)->loc;
  auto next = std::next(afterIt);
  if (!arrivedAfter) {
    if (arrived) // complete the pending phase first: a thread arrives once per phase
      insertAt(f, next, OpKind::ClusterWait, loc);
    insertAt(f, next, OpKind::ClusterArrive, loc);
  }
  insertAt(f, std::prev(ops.end()), OpKind::ClusterWait, ops.back()->loc);
  return true;
}

/// Adds the cluster entry protocol to `f` when it needs one (see insertBarriers).
bool insertClusterEntry(ir::Function &f) {
  auto &ops = f.body.ops;
  bool remote = false;
  ir::walk(f.body, [&](ir::Op &op) { remote |= clusterAccess(op); });
  auto first = ops.end(); // the first top-level op with a remote access or a cluster barrier in it
  for (auto it = ops.begin(); it != ops.end() && first == ops.end(); ++it) {
    auto visit = [&](ir::Op &op) {
      if (clusterAccess(op) || clusterBarrierOp(op))
        first = it;
    };
    visit(**it);
    for (auto &r : (*it)->regions)
      ir::walk(*r, visit);
  }
  // Nothing to protect, or a barrier every path reaches comes first: every CTA has started by then.
  if (!remote || first == ops.end() || clusterBarrierOp(**first))
    return false;
  ir::Builder B(&f.body);
  B.setInsertionPoint(&f.body, ops.begin());
  // Relaxed: the barrier only says that every CTA has started; there is nothing to release yet
  // (the release form cost 4 % on examples/softmax_cluster.tle at 2048 x 32768 on the H200).
  B.create(OpKind::ClusterArrive, (*first)->loc, {}, {})->sync.relaxed = true;
  B.setInsertionPoint(&f.body, first);
  B.create(OpKind::ClusterWait, (*first)->loc, {}, {});
  return true;
}

} // namespace

bool stagesThroughScratch(const ir::Op &op) {
  switch (op.kind) {
  case OpKind::ConvertLayout:
    return convertsThroughShared(op);
  case OpKind::Reshape: case OpKind::Cat: case OpKind::Join: case OpKind::Split: case OpKind::Flip:
  case OpKind::Gather:
    return op.results.size() >= 1 && op.result()->layout != nullptr;
  default:
    return false;
  }
}

int insertStagingBarriers(ir::Function &f) {
  int added = 0;
  std::function<void(ir::Block &)> visit = [&](ir::Block &b) {
    for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
      ir::Op &op = **it;
      for (auto &r : op.regions)
        visit(*r);
      if (!stagesThroughScratch(op))
        continue;
      if (it != b.ops.begin()) {
        const ir::Op &prev = **std::prev(it);
        if (prev.kind == OpKind::Barrier && prev.sync.barrierId < 0 && prev.sync.threads == 0)
          continue;
      }
      ir::Builder B(&b);
      B.setInsertionPoint(&b, it);
      B.create(OpKind::Barrier, op.loc, {}, {});
      ++added;
    }
  };
  visit(f.body);
  return added;
}

BarrierInsertion insertBarriers(ir::Function &f) {
  BarrierInsertion out;
  Inserter(out, f).block(f.body);
  out.ctaBarriers += insertStagingBarriers(f);
  out.clusterEntry = insertClusterEntry(f);
  out.clusterExit = insertClusterExit(f);
  out.ctaBarriers += insertRefillBarriers(f);
  return out;
}

} // namespace tle::transforms
