// TLE-Struct's explicit barriers (FlagTree's tle.gpu.alloc_barriers, alloc_barrier, barrier_wait
// and barrier_arrive; ../shared/reference/tle.md §3.4), lowered here to the tile IR's mbarrier
// and named-barrier ops.
//
// An array of `num_barriers` barriers is one value; `bars[i]` is slot i (a compile-time or
// run-time i32). Each slot is used through one of two backends, chosen at each use as FlagTree
// chooses it:
//
//   with phaseIdx    an mbarrier (PTX ISA §9.7.13.15) counting `arrive_count` arrivals per phase.
//                    The array's mbarriers are made at the kernel's start, before the barrier
//                    that follows every mbarrier initialisation, at the first such use.
//                    barrier_wait(b, phaseIdx=p): every thread waits for the phase of parity
//                      p & 1 (xor 1 for init=READY, whose first wait passes at once);
//                    barrier_arrive(b, arrive_count=n, phaseIdx=p): the partition's thread 0
//                      arrives n times (insert-barriers puts a barrier before it when the
//                      partition has shared-memory accesses to release).
//   without phaseIdx a named barrier (PTX ISA §9.7.13.1) of `arrive_count` threads, waiters and
//                    arrivers together (a multiple of 32): barrier_wait is `bar.sync id, count`,
//                    barrier_arrive `bar.arrive id, count`. Ids are given from 15 down to 2 per
//                    array at its first such use; the slot must be a compile-time index, and the
//                    array neither READY nor with expect_bytes.
//
// A slot used through both backends is a located error, as are indices outside the array.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <algorithm>
#include <cctype>
#include <climits>

namespace tle::sema {

using ir::AddrSpace;
using ir::DType;
using ir::OpKind;

namespace {

constexpr int kLowestNamedBarrier = 2; // 0: the CTA's barrier; 1: the first warp partition's

/// `v` as a compile-time integer argument `what` of `fname`, at least `min`.
int64_t constInt(Specializer &S, const Arg &a, const char *fname, const char *what, int64_t min,
                 int64_t max = INT32_MAX) {
  if (a.val.kind != SVal::Kind::Int && a.val.kind != SVal::Kind::Bool)
    S.fail(a.loc, std::string(fname) + "() " + what + " must be a compile-time integer, got " + a.val.describe());
  if (a.val.i < min || a.val.i > max)
    S.fail(a.loc, std::string(fname) + "() " + what + " must be from " + std::to_string(min) + " to " +
                      (max == INT32_MAX ? std::string("2^31 - 1") : std::to_string(max)) + ", got " +
                      std::to_string(a.val.i));
  return a.val.i;
}

SVal allocBarriers(Specializer &S, const BuiltinCall &c, int64_t n) {
  const Binder &p = c.p;
  const char *fname = n ? "alloc_barriers" : "alloc_barrier";
  if (!n)
    n = 1;
  else
    n = constInt(S, p.get("num_barriers"), fname, "num_barriers", 1, 1024);
  Specializer::BarrierState st;
  st.alloc = c.loc;
  st.count = p.has("arrive_count") ? constInt(S, p.get("arrive_count"), fname, "arrive_count", 1) : 1;
  if (st.count > (1 << 20) - 1) // mbarrier counts are 20 bits (§9.7.13.15.1)
    S.fail(p.loc("arrive_count"), std::string(fname) + "() arrive_count must be below 2^20 (an mbarrier's count), got " +
                                      std::to_string(st.count));
  if (p.has("init")) {
    const Arg &a = p.get("init");
    std::string v = a.val.kind == SVal::Kind::Str ? a.val.s : "";
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (v != "pending" && v != "ready")
      S.fail(a.loc, std::string(fname) + "() init must be tle.gpu.PENDING or tle.gpu.READY, got " + a.val.describe());
    st.ready = v == "ready";
  }
  if (p.has("check_protocol")) {
    const Arg &a = p.get("check_protocol");
    if (a.val.kind != SVal::Kind::Bool)
      S.fail(a.loc, std::string(fname) + "() check_protocol must be a compile-time bool (True or False), got " +
                        a.val.describe());
    st.checked = a.val.i != 0;
  }
  SVal expect = SVal::none();
  if (p.has("expect_bytes") && p.get("expect_bytes").val.kind != SVal::Kind::None)
    expect = SVal::integer(constInt(S, p.get("expect_bytes"), fname, "expect_bytes", 1));
  if (S.loopDepth > 0 || S.b->block() != &S.fn->body)
    S.fail(c.loc, std::string(fname) + "() must be called at the kernel's top level, outside loops and branches (its "
                                       "barriers are initialised once)");
  S.barriers.push_back(st);
  return SVal::record("barrier", {{"num_barriers", SVal::integer(n)},
                                  {"arrive_count", SVal::integer(st.count)},
                                  {"init", SVal::str(st.ready ? "ready" : "pending")},
                                  {"expect_bytes", expect},
                                  {"_id", SVal::integer(int64_t(S.barriers.size()) - 1)},
                                  {"_index", SVal::none()}});
}

SVal allocBarriersArray(Specializer &S, const BuiltinCall &c) { return allocBarriers(S, c, -1); }
SVal allocBarrierOne(Specializer &S, const BuiltinCall &c) { return allocBarriers(S, c, 0); }

/// Barrier record `bars` as its slot `index` (an Int or an i32 scalar tensor).
SVal slotAt(SVal bars, SVal index) {
  for (size_t i = 0; i + 1 < bars.elts.size(); i += 2)
    if (bars.elts[i].s == "_index")
      bars.elts[i + 1] = std::move(index);
  return bars;
}

/// The slot a barrier operation names: `b` itself when indexed, slot 0 of an array of one.
SVal slotOf(Specializer &S, const Arg &b, const char *fname) {
  if (b.val.kind != SVal::Kind::Namespace || b.val.s != "barrier")
    S.fail(b.loc, std::string(fname) + "() expects a barrier (tle.gpu.alloc_barriers, alloc_barrier), got " +
                      b.val.describe());
  if (b.val.attr("_index").kind != SVal::Kind::None)
    return b.val;
  if (b.val.attr("num_barriers").i != 1)
    S.fail(b.loc, std::string(fname) + "() needs one barrier: index the array of " +
                      std::to_string(b.val.attr("num_barriers").i) + " (bars[i])");
  return slotAt(b.val, SVal::integer(0));
}

/// Records that `slot` is used through `named` (or the mbarrier backend) at `loc`; a located
/// error when the same slot was used through the other.
Specializer::BarrierState &useBackend(Specializer &S, const SVal &slot, bool named, SourceLoc loc) {
  Specializer::BarrierState &st = S.barriers[slot.attr("_id").i];
  const SVal &idx = slot.attr("_index");
  auto clash = [&](SourceLoc other) {
    S.fail(loc, std::string("this barrier slot is used as ") + (named ? "a named barrier (no phaseIdx)" : "an mbarrier (phaseIdx)") +
                    ", and as " + (named ? "an mbarrier" : "a named barrier") + " elsewhere: one slot has one backend",
           {{other, "used so here"}});
  };
  if (idx.kind == SVal::Kind::Int) {
    auto [it, fresh] = st.backend.insert({idx.i, {named, loc}});
    if (!fresh && it->second.first != named)
      clash(it->second.second);
    if (named && st.dynamicUse.valid()) // a run-time slot may have been this one
      clash(st.dynamicUse);
  } else {
    if (st.namedUse.valid()) // a run-time slot may be a named one
      clash(st.namedUse);
    if (!st.dynamicUse.valid())
      st.dynamicUse = loc;
  }
  if (named && !st.namedUse.valid())
    st.namedUse = loc;
  return st;
}

/// The address of slot `slot`'s mbarrier, making the array's mbarriers at the kernel's start at
/// the first use.
ir::Value *mbarrierOf(Specializer &S, const SVal &slot, SourceLoc loc) {
  Specializer::BarrierState &st = useBackend(S, slot, false, loc);
  int64_t n = slot.attr("num_barriers").i;
  if (!st.mbarriers) {
    ir::Builder B = S.mbarrierInits(st.alloc);
    ir::Op *a = B.create(OpKind::LocalAlloc, st.alloc, {}, {ir::Type(ir::ScalarType::ptrTo(DType::I64, AddrSpace::Shared))});
    a->result()->nameHint = st.name;
    a->setAllocShape({n});
    st.mbarriers = a->result();
    for (int64_t i = 0; i < n; ++i) {
      ir::Value *at = B.create(OpKind::AddPtr, st.alloc, {st.mbarriers, B.constInt(st.alloc, DType::I32, i)},
                               {st.mbarriers->type})->result();
      ir::Op *init = B.create(OpKind::MbarrierInit, st.alloc, {at}, {});
      init->sync.count = st.count;
      init->sync.unchecked = !st.checked;
    }
  }
  const SVal &idx = slot.attr("_index");
  ir::Value *i = idx.kind == SVal::Kind::Int ? S.b->constInt(loc, DType::I32, idx.i) : idx.v;
  return S.b->create(OpKind::AddPtr, loc, {st.mbarriers, i}, {st.mbarriers->type})->result();
}

/// The named barrier id and thread count of `slot` (checks the named backend's rules).
std::pair<int, int> namedOf(Specializer &S, const SVal &slot, const char *fname, SourceLoc loc) {
  Specializer::BarrierState &st = S.barriers[slot.attr("_id").i];
  std::vector<Specializer::Note> at = {{st.alloc, "the barrier is allocated here"}};
  std::string why = std::string(fname) + "() without phaseIdx uses a named barrier (bar.sync/bar.arrive), ";
  if (slot.attr("expect_bytes").kind != SVal::Kind::None)
    S.fail(loc, why + "which cannot expect bytes: pass phaseIdx to use this expect_bytes barrier as an mbarrier", at);
  if (st.ready)
    S.fail(loc, why + "which has no READY state: pass phaseIdx, or allocate it PENDING", at);
  if (slot.attr("_index").kind != SVal::Kind::Int)
    S.fail(loc, why + "whose id must be known at compile time: index it with a compile-time slot", at);
  int64_t threads = 32 * int64_t(S.blockWarps ? S.blockWarps : S.fn->numWarps);
  if (st.count % 32 || st.count > threads)
    S.fail(loc, why + "of arrive_count threads, waiters and arrivers together: a multiple of 32 up to the " +
                    std::to_string(threads) + " threads that run here, got " + std::to_string(st.count),
           at);
  useBackend(S, slot, true, loc);
  int64_t n = slot.attr("num_barriers").i;
  if (st.namedBase < 0) {
    int lowest = std::max(kLowestNamedBarrier, S.partitionCount + 1); // above the partitions' own
    if (lowest > 15)
      S.fail(loc, why + "and none is left: the kernel's " + std::to_string(S.partitionCount) +
                      " warp partitions use ids 1 to " + std::to_string(S.partitionCount), at);
    if (S.nextNamedBarrier - n + 1 < lowest)
      S.fail(loc, why + "and the kernel's named barriers (ids " + std::to_string(lowest) +
                      " to 15; the warp partitions have the ones below) are spent: this array needs " +
                      std::to_string(n),
             at);
    st.namedBase = S.nextNamedBarrier - int(n) + 1;
    S.nextNamedBarrier -= int(n);
  }
  return {st.namedBase + int(slot.attr("_index").i), int(st.count)};
}

/// The mbarrier wait parity of `phaseIdx` (an integer scalar) for `slot`: phaseIdx, plus one for
/// a READY array (mbarrier_wait takes the low bit).
ir::Value *phaseOf(Specializer &S, const SVal &slot, const Arg &ph, const char *fname) {
  bool ready = S.barriers[slot.attr("_id").i].ready;
  const SVal &v = ph.val;
  if (v.kind == SVal::Kind::Int || v.kind == SVal::Kind::Bool)
    return S.b->constInt(ph.loc, DType::I32, (v.i & 1) ^ (ready ? 1 : 0));
  if (!v.isTensor() || !v.v->type.isScalar() || !ir::isInteger(v.v->type.dtype()))
    S.fail(ph.loc, std::string(fname) + "() phaseIdx must be an integer scalar (its low bit is the phase's parity), got " +
                       v.describe());
  ir::Value *p = S.castTo(v.v, ir::ScalarType{DType::I32}, ph.loc);
  return ready ? S.b->binary(OpKind::Xor, ph.loc, p, S.b->constInt(ph.loc, DType::I32, 1)) : p;
}

SVal barrierWait(Specializer &S, const BuiltinCall &c) {
  SVal slot = slotOf(S, c.p.get("barr"), "barrier_wait");
  if (!c.p.has("phaseIdx") || c.p.get("phaseIdx").val.kind == SVal::Kind::None) {
    auto [id, threads] = namedOf(S, slot, "barrier_wait", c.loc);
    ir::Op *op = S.b->create(OpKind::Barrier, c.loc, {}, {});
    op->sync.barrierId = id;
    op->sync.threads = threads;
    return SVal::none();
  }
  ir::Value *phase = phaseOf(S, slot, c.p.get("phaseIdx"), "barrier_wait");
  S.b->create(OpKind::MbarrierWait, c.loc, {mbarrierOf(S, slot, c.loc), phase}, {});
  return SVal::none();
}

/// barrier_arrive's remote_cta_rank (TLX's name): the cluster rank of the CTA whose mbarrier at
/// the same offset receives the arrival, a compile-time int within the kernel's cluster or an
/// integer scalar (then the program must keep it within the cluster).
ir::Value *remoteRank(Specializer &S, const Arg &r, SourceLoc loc) {
  int64_t cluster = int64_t(S.fn->cluster[0]) * S.fn->cluster[1] * S.fn->cluster[2];
  if (r.val.kind == SVal::Kind::Int || r.val.kind == SVal::Kind::Bool) {
    if (r.val.i < 0 || r.val.i >= cluster)
      S.fail(r.loc, "barrier_arrive() remote_cta_rank " + std::to_string(r.val.i) + " is outside the kernel's cluster "
                    "of " + std::to_string(cluster) + (cluster == 1 ? " CTA" : " CTAs") +
                    " (a device mesh with cluster axes, used before this "
                    "arrival, sets the cluster)");
  } else if (!r.val.isTensor() || !r.val.v->type.isScalar() || !ir::isInteger(r.val.v->type.dtype())) {
    S.fail(r.loc, "barrier_arrive() remote_cta_rank must be an integer scalar (a cluster rank), got " + r.val.describe());
  }
  S.clusterMbarriers(loc);
  return S.castTo(S.toTensor(r.val, r.loc), ir::ScalarType{DType::I32}, r.loc);
}

SVal barrierArrive(Specializer &S, const BuiltinCall &c) {
  SVal slot = slotOf(S, c.p.get("barr"), "barrier_arrive");
  int64_t count = c.p.has("arrive_count") ? constInt(S, c.p.get("arrive_count"), "barrier_arrive", "arrive_count", 1) : 1;
  if (!c.p.has("phaseIdx") || c.p.get("phaseIdx").val.kind == SVal::Kind::None) {
    if (count != 1)
      S.fail(c.p.loc("arrive_count"), "barrier_arrive() without phaseIdx uses a named barrier, where every thread "
                                      "arrives once: arrive_count must be 1, got " + std::to_string(count));
    if (c.p.has("remote_cta_rank") && c.p.get("remote_cta_rank").val.kind != SVal::Kind::None)
      S.fail(c.p.loc("remote_cta_rank"), "barrier_arrive() remote_cta_rank= arrives on another CTA's mbarrier: give "
                                         "phaseIdx= (without it the barrier is a named barrier of this CTA)");
    auto [id, threads] = namedOf(S, slot, "barrier_arrive", c.loc);
    ir::Op *op = S.b->create(OpKind::BarrierArrive, c.loc, {}, {});
    op->sync.barrierId = id;
    op->sync.threads = threads;
    return SVal::none();
  }
  const Specializer::BarrierState &st = S.barriers[slot.attr("_id").i];
  if (count > st.count)
    S.fail(c.p.loc("arrive_count"), "barrier_arrive() arrives " + std::to_string(count) +
                                         " times on a barrier that counts " + std::to_string(st.count) +
                                         " arrivals per phase",
           {{st.alloc, "the barrier is allocated here"}});
  phaseOf(S, slot, c.p.get("phaseIdx"), "barrier_arrive"); // checked as FlagTree does; the arrival needs no phase
  std::vector<ir::Value *> ops = {mbarrierOf(S, slot, c.loc)};
  if (c.p.has("remote_cta_rank") && c.p.get("remote_cta_rank").val.kind != SVal::Kind::None)
    ops.push_back(remoteRank(S, c.p.get("remote_cta_rank"), c.loc));
  ir::Op *op = S.b->create(OpKind::MbarrierArrive, c.loc, ops, {});
  op->sync.per = ir::Arrivers::Cta;
  op->sync.count = count;
  return SVal::none();
}

} // namespace

ir::Value *Specializer::tmaBarrier(const Arg &bar, int64_t bytes) {
  SVal slot = slotOf(*this, bar, "copy");
  const BarrierState &st = barriers[slot.attr("_id").i];
  const SVal &expect = slot.attr("expect_bytes");
  if (expect.kind == SVal::Kind::None)
    fail(bar.loc, "copy() barrier= needs a barrier allocated with expect_bytes= (the bytes each TMA copy on it "
                  "brings, which its arrival expects)",
         {{st.alloc, "the barrier is allocated here"}});
  if (expect.i != bytes)
    fail(bar.loc, "this TMA copy brings " + std::to_string(bytes) + " bytes, but its barrier's expect_bytes is " +
                      std::to_string(expect.i) + ": each copy's arrival expects expect_bytes, so its phase would " +
                      (expect.i > bytes ? "never complete" : "complete before the bytes land"),
         {{st.alloc, "the barrier is allocated here"}});
  return mbarrierOf(*this, slot, bar.loc);
}

ir::Builder Specializer::mbarrierInits(SourceLoc loc) {
  ir::Block &body = fn->body;
  ir::Builder B(&body);
  if (!mbarriersReady) {
    B.setInsertionPoint(&body, body.ops.begin());
    mbarriersReady = B.create(OpKind::Barrier, loc, {}, {});
  }
  B.setInsertionPoint(&body, body.find(mbarriersReady));
  return B;
}

void Specializer::clusterMbarriers(SourceLoc loc) {
  if (clusterMbarriersReady)
    return;
  mbarrierInits(loc);
  ir::Builder B(&fn->body);
  B.setInsertionPoint(&fn->body, std::next(fn->body.find(mbarriersReady)));
  B.create(OpKind::FenceMbarrierInit, loc, {}, {});
  clusterMbarriersReady = B.create(OpKind::ClusterBarrier, loc, {}, {});
}

SVal Specializer::barrierSubscript(const SVal &bars, const ast::SubscriptExpr *e, Env &env) {
  if (e->indices.size() != 1)
    fail(e->loc(), "a barrier array takes one index (bars[i])");
  if (bars.attr("_index").kind != SVal::Kind::None)
    fail(e->loc(), "this is one barrier (a slot of its array already): it takes no index");
  SVal idx = eval(e->indices[0], env);
  SourceLoc loc = e->indices[0]->loc();
  int64_t n = bars.attr("num_barriers").i;
  if (idx.kind == SVal::Kind::Int || idx.kind == SVal::Kind::Bool) {
    if (idx.i < 0 || idx.i >= n)
      fail(loc, "barrier index " + std::to_string(idx.i) + " is outside the array of " + std::to_string(n),
           {{barriers[bars.attr("_id").i].alloc, "the array is allocated here"}});
    return slotAt(bars, SVal::integer(idx.i));
  }
  if (!idx.isTensor() || !idx.v->type.isScalar() || !ir::isInteger(idx.v->type.dtype()))
    fail(loc, "a barrier index must be an integer scalar, got " + idx.describe());
  return slotAt(bars, SVal::tensor(castTo(idx.v, ir::ScalarType{DType::I32}, loc)));
}

std::vector<BuiltinSpec> barrierBuiltins() {
  return {
      {"tle.gpu.alloc_barriers",
       "num_barriers, arrive_count=1, init=tle.gpu.PENDING, expect_bytes=None, check_protocol=True", allocBarriersArray},
      {"tle.gpu.alloc_barrier", "arrive_count=1, init=tle.gpu.PENDING, expect_bytes=None, check_protocol=True",
       allocBarrierOne},
      {"tle.gpu.barrier_wait", "barr, phaseIdx=None", barrierWait},
      {"tle.gpu.barrier_arrive", "barr, arrive_count=1, phaseIdx=None, remote_cta_rank=None", barrierArrive},
  };
}

} // namespace tle::sema
