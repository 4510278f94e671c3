// Loop prefetching: dot operands num_stages - 1 iterations ahead (software pipelining through
// shared memory), other loads one iteration ahead in registers.
#include "tle/Transforms/Prefetch.h"
#include "tle/Transforms/AxisInfo.h"
#include "tle/Transforms/DotLowering.h"
#include "tle/Transforms/HoistLoads.h"
#include "tle/Transforms/Pipeline.h"
#include "tle/Transforms/RegisterEstimate.h"
#include "tle/Transforms/TensorMaps.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>

namespace tle::transforms {

using ir::OpKind;

namespace {

/// The ops of `b` (nested regions included) that read each value.
std::map<const ir::Value *, std::vector<const ir::Op *>> usersIn(ir::Block &b) {
  std::map<const ir::Value *, std::vector<const ir::Op *>> users;
  ir::walk(b, [&](ir::Op &op) {
    for (const ir::Value *o : op.operands)
      users[o].push_back(&op);
  });
  return users;
}

bool isPureForSlice(const ir::Op &op) {
  switch (op.kind) {
  case OpKind::Load: case OpKind::Store: case OpKind::AtomicRMW: case OpKind::AtomicCAS: case OpKind::For:
  case OpKind::If: case OpKind::While: case OpKind::Dot: case OpKind::Yield: case OpKind::Return:
  case OpKind::Condition: case OpKind::Reduce: case OpKind::Scan: case OpKind::LocalAlloc:
    return false;
  default:
    return op.regions.empty();
  }
}

class Prefetcher {
public:
  Prefetcher(const ir::Function &f, DiagnosticEngine *diags) : f_(f), diags_(diags), numStages_(f.numStages) {}
  unsigned count = 0;
  /// Pipeline stages when the kernel does not say (Triton's default num_stages).
  static constexpr int kDefaultStages = 3;
  /// Shared memory the slots of one loop may take (bytes); deeper pipelines are shortened.
  int64_t pipelineBytes() const { return pipelineSlotBudget(f_.arch); }
  /// Bytes one slot of a prefetched [rows, cols] tile takes as the NVPTX backend lays it out:
  /// swizzled for wgmma except on sm_80 (mma.sync, padded rows); a restaged wgmma B's unpadded
  /// rows take the same.
  int64_t slotBytes(const ir::Type &t) const {
    return asyncSlotBytes(t.shape[0], t.shape[1], ir::storageBytes(t.dtype()), f_.arch != "sm_80");
  }

  void block(ir::Block &b) {
    for (auto &op : b.ops) {
      for (auto &r : op->regions)
        block(*r);
      if (op->kind == OpKind::For && registers)
        registerLoop(*op);
      if (op->kind == OpKind::For && !registers) {
        loop(*op);
        if (op->flatten())
          crossTiles(*op);
      }
    }
  }

  /// Prefetch loads other than dot operands, one iteration ahead in registers (prefetchLoopLoads).
  bool registers = false;

private:
  const ir::Function &f_;
  DiagnosticEngine *diags_;
  int numStages_;
  ir::Block *body_ = nullptr;

  /// What pipeline() did to one load of a loop: the original load (left in the body without
  /// uses), its clone for the iteration `depth` ahead (before the yield), and where the window
  /// it carries sits among the loop's operands and results.
  struct PipelinedLoad {
    ir::Op *original = nullptr, *next = nullptr;
    size_t firstOperand = 0, firstResult = 0;
  };
  struct PipelinedLoop {
    int depth = 0;
    std::vector<PipelinedLoad> loads;
  };
  std::map<const ir::Op *, PipelinedLoop> pipelined_;

  bool inBody(const ir::Value *v) const {
    if (v->owner)
      return v->owner == body_;
    return v->def && v->def->parent == body_;
  }

  /// Whether `v` can be recomputed from block arguments and outside values by pure ops.
  bool cloneable(const ir::Value *v, std::set<const ir::Value *> &seen) const {
    if (!inBody(v) || v->owner || seen.count(v))
      return true;
    seen.insert(v);
    if (!isPureForSlice(*v->def))
      return false;
    for (const ir::Value *o : v->def->operands)
      if (!cloneable(o, seen))
        return false;
    return true;
  }

  /// Clones the computation of `v` at the builder's point, with `m` giving replacements and
  /// `arg` resolving the body's arguments the first time they are needed.
  ir::Value *clone(ir::Value *v, std::map<ir::Value *, ir::Value *> &m, ir::Builder &bld,
                   const std::function<ir::Value *(ir::Value *)> &arg) {
    if (auto it = m.find(v); it != m.end())
      return it->second;
    if (!inBody(v))
      return v;
    if (v->owner)
      return m[v] = arg(v);
    ir::Op *d = v->def;
    std::vector<ir::Value *> ops;
    for (ir::Value *o : d->operands)
      ops.push_back(clone(o, m, bld, arg));
    ir::Op *c = bld.clone(*d, ops);
    for (size_t i = 0; i < d->results.size(); ++i)
      m[d->result(static_cast<unsigned>(i))] = c->result(static_cast<unsigned>(i));
    return m[v];
  }

  /// The body arguments (other than the induction variable) a slice reads.
  void argsOf(const ir::Value *v, std::set<const ir::Value *> &seen, std::set<unsigned> &args) const {
    if (!inBody(v) || seen.count(v))
      return;
    seen.insert(v);
    if (v->owner) {
      if (v->index > 0)
        args.insert(v->index);
      return;
    }
    for (const ir::Value *o : v->def->operands)
      argsOf(o, seen, args);
  }

  /// `cond` (an i1 scalar) and-ed into the load's mask, creating one when there is none.
  std::vector<ir::Value *> guardedOperands(const ir::Op &load, std::vector<ir::Value *> ops, ir::Value *cond,
                                           ir::Builder &bld) {
    ir::Value *ptr = ops[0];
    ir::Value *guard = ptr->type.isTile() ? bld.splat(load.loc, cond, ptr->type.shape) : cond;
    if (ops.size() == 1) {
      ops.push_back(guard);
    } else {
      ops[1] = bld.binary(OpKind::And, load.loc, ops[1], guard);
    }
    // A tensor-descriptor load also lists the guard itself: a TMA copy is issued whole or not
    // at all (ir::OpKind::Load).
    if (load.hasDescriptor())
      ops.push_back(cond);
    return ops;
  }

  /// Whether the tile `v` reaches only wgmma dots (transforms::wgmmaDot) as one operand, as
  /// wgmma reads tf32, fp8 and int8 operands: A directly ([M, K], K-major), B through tl.trans
  /// of an [N, K] tile (K-major), or B directly ([K, N]: the backend restages it K-major from
  /// its slot; `restaged` is set).
  bool wgmmaKMajorOperand(const ir::Value *v, const std::map<const ir::Value *, std::vector<const ir::Op *>> &users,
                          bool &restaged) const {
    auto it = users.find(v);
    if (it == users.end())
      return false;
    auto wgmma = [&](const ir::Op *d) { return d->kind == OpKind::Dot && transforms::wgmmaDot(*d, f_.arch, f_.numWarps); };
    for (const ir::Op *u : it->second) {
      if (wgmma(u) && u->operands[0] == v && u->operands[1] != v)
        continue;
      if (wgmma(u) && u->operands[1] == v && u->operands[0] != v) {
        restaged = true;
        continue;
      }
      if (u->kind == OpKind::Permute && u->permutation() == std::vector<int64_t>{1, 0}) {
        auto pu = users.find(u->result());
        if (pu != users.end() && std::all_of(pu->second.begin(), pu->second.end(), [&](const ir::Op *d) {
              return wgmma(d) && d->operands[1] == u->result() && d->operands[0] != u->result();
            }))
          continue;
      }
      return false;
    }
    return true;
  }

  void loop(ir::Op &forOp) {
    ir::Block &body = *forOp.regions[0];
    body_ = &body;
    // Candidate loads: results used only as dot operands a/b, directly or through casts.
    std::map<const ir::Value *, std::vector<const ir::Op *>> users = usersIn(body);
    std::function<bool(const ir::Value *, int)> feedsDotOnly = [&](const ir::Value *v, int depth) {
      auto it = users.find(v);
      if (it == users.end() || depth > 2)
        return false;
      for (const ir::Op *u : it->second) {
        if (u->kind == OpKind::Dot && (u->operands[0] == v || u->operands[1] == v) && u->parent == &body)
          continue;
        if (u->kind == OpKind::Cast && u->parent == &body && feedsDotOnly(u->result(), depth + 1))
          continue;
        // A transposed operand (tl.trans(k)) is read from the slot as loaded on sm_90a (wgmma
        // takes either major order); mma.sync would need it in registers.
        if (u->kind == OpKind::Permute && f_.arch == "sm_90a" && u->parent == &body &&
            feedsDotOnly(u->result(), depth + 1))
          continue;
        return false;
      }
      return true;
    };
    // A tf32 or int8 operand of mma.sync dots of this body only, each reading it as one operand
    // that it takes from a slot (transforms::mmaSyncSlotOperand), directly or through tl.trans.
    auto mmaSyncSlot = [&](const ir::Value *v) {
      auto reads = [&](const ir::Op *d, const ir::Value *x, bool transposed) {
        if (d->kind != OpKind::Dot || d->parent != &body || (d->operands[0] == x) == (d->operands[1] == x))
          return false;
        return transforms::mmaSyncSlotOperand(*d, d->operands[0] == x ? 0 : 1, transposed, f_.arch, f_.numWarps);
      };
      auto it = users.find(v);
      if (it == users.end())
        return false;
      for (const ir::Op *u : it->second) {
        if (reads(u, v, false))
          continue;
        if (u->kind == OpKind::Permute && u->parent == &body && u->permutation() == std::vector<int64_t>{1, 0}) {
          auto pu = users.find(u->result());
          if (pu != users.end() && std::all_of(pu->second.begin(), pu->second.end(),
                                               [&](const ir::Op *d) { return reads(d, u->result(), true); }))
            continue;
        }
        return false;
      }
      return true;
    };
    std::vector<ir::Op *> loads;
    ir::Op *yieldOp = body.terminator();
    for (auto &op : body.ops) {
      // Only the operands the NVPTX backend copies into shared memory: 16-bit ones; tf32, fp8
      // and int8 ones that reach wgmma K-major (sm_90a); tf32 and int8 ones that mma.sync reads
      // from a slot.
      if (op->kind != OpKind::Load || op->result()->type.rank() != 2 ||
          op->operands[0]->type.elem.space != ir::AddrSpace::Global)
        continue;
      ir::DType t = op->result()->type.dtype();
      bool b16 = t == ir::DType::F16 || t == ir::DType::BF16;
      bool restaged = false;
      bool kMajorOnly = transforms::wgmmaNeedsKMajor(t) && wgmmaKMajorOperand(op->result(), users, restaged);
      // A restaged B is worth a slot only when cp.async can copy it in 16-byte vectors; else it
      // stays a load into registers that the dot stages K-contiguous (layout assignment gives
      // such a load 16 bytes of K per thread).
      if (kMajorOnly && restaged)
        kMajorOnly = accessBytes(*op) >= 16;
      if (!((b16 || kMajorOnly) && feedsDotOnly(op->result(), 0)) && !(!b16 && mmaSyncSlot(op->result())))
        continue;
      std::set<const ir::Value *> seen;
      bool ok = true;
      for (const ir::Value *o : op->operands)
        ok = ok && cloneable(o, seen);
      // The next iteration's values of the carried arguments it reads must be computable at the
      // start of the body too.
      std::set<const ir::Value *> seenArgs;
      std::set<unsigned> args;
      for (const ir::Value *o : op->operands)
        argsOf(o, seenArgs, args);
      for (unsigned a : args) {
        std::set<const ir::Value *> s2;
        ok = ok && cloneable(yieldOp->operands[a - 1], s2);
      }
      if (ok)
        loads.push_back(op.get());
    }
    if (loads.empty() || !addressesRecomputable(forOp, loads))
      return;
    // Depth: loads run `depth` iterations ahead of the dot that reads them, into depth + 1
    // shared-memory slots each; Triton's num_stages counts the slots.
    // The loop's own tl.range(num_stages=...) overrides the kernel's, as in Triton.
    int stages = forOp.numStages() > 0 ? static_cast<int>(forOp.numStages()) : numStages_;
    int depth = stages >= 2 ? stages - 1 : stages == 1 ? 0 : kDefaultStages - 1;
    int64_t bytesPerStage = 0;
    for (ir::Op *load : loads)
      bytesPerStage += slotBytes(load->result()->type);
    int asked = depth;
    // Down to no pipelining at all (depth 0: one stage) when even two stages do not fit.
    while (depth > 0 && (depth + 1) * bytesPerStage > pipelineBytes())
      --depth;
    if (depth < asked && diags_) {
      auto kib = [](int64_t b) { return std::to_string((b + 1023) / 1024); };
      diags_->warning(forOp.loc, "num_stages " + std::to_string(asked + 1) + " would take " +
                                     kib((asked + 1) * bytesPerStage) + " KiB of shared memory for the " +
                                     std::to_string(loads.size()) + " pipelined dot operand loads of this loop (" +
                                     kib(bytesPerStage) + " KiB per stage), over the " + kib(pipelineBytes()) +
                                     " KiB budget on " + (f_.arch.empty() ? std::string("this target") : f_.arch) +
                                     (depth > 0 ? "; using " + std::to_string(depth + 1) + " stages"
                                                : "; the loop is not pipelined (one stage)"));
    }
    if (depth < 1)
      return;
    // The body's new loads go at its end, after the dot: the slot they fill is the one the
    // previous iteration's dot read, and the NVPTX backend lets this iteration's wgmma run
    // while they are issued.
    pipeline(forOp, loads, depth, /*atTop=*/false);
  }

  /// tl.range(flatten=True) on a top-level loop around a pipelined loop (a persistent kernel's
  /// loop over tiles around its K loop): the inner loop's prologue, the loads before it of its
  /// first stages, is pipelined one iteration of the outer loop ahead and placed right after the
  /// inner loop, so the next tile's first copies are in flight during this tile's epilogue.
  /// Only for tensor-descriptor loads that the NVPTX backend copies with TMA (sm_90a, a tensor
  /// map from the params): their fill counts continue across both loops at run time
  /// (AsyncBuffer::dynamicFills), where cp.async's slot bookkeeping would not. Like Triton's
  /// flatten, it issues the next tile's loads before this tile's stores: the request promises
  /// that they do not overlap.
  void crossTiles(ir::Op &outer) {
    auto decline = [&](const std::string &why) {
      if (diags_)
        diags_->warning(outer.loc, "tl.range(flatten=True) is ignored: " + why);
    };
    if (f_.arch != "sm_90a")
      return decline("the next tile's copies are issued early only for TMA copies (sm_90a); the target is " +
                     (f_.arch.empty() ? std::string("not a GPU") : f_.arch));
    if (outer.parent != &f_.body)
      return decline("only a loop at the kernel's top level is flattened");
    ir::Block &body = *outer.regions[0];
    body_ = &body;
    std::map<const ir::Value *, std::vector<const ir::Op *>> users = usersIn(body);
    // The prologue: loads directly in the body read only as initial values of one inner loop.
    ir::Op *inner = nullptr;
    std::vector<ir::Op *> loads;
    bool mixed = false;
    for (auto &op : body.ops) {
      if (op->kind != OpKind::Load || !op->hasDescriptor())
        continue;
      auto it = users.find(op->result());
      if (it == users.end() || it->second.size() != 1 || it->second[0]->kind != OpKind::For ||
          it->second[0]->parent != &body)
        continue;
      ir::Op *loop = const_cast<ir::Op *>(it->second[0]);
      bool init = false;
      for (size_t i = 3; i < loop->operands.size(); ++i)
        init |= loop->operands[i] == op->result();
      if (!init)
        continue;
      mixed |= inner && inner != loop;
      inner = loop;
      loads.push_back(op.get());
    }
    if (loads.empty())
      return decline("no pipelined loop in its body has tensor-descriptor loads issued before it");
    if (mixed)
      return decline("more than one nested loop is pipelined");
    // Writes before the loop would need a proxy fence before TMA reads (the backend's rule).
    for (auto &top : f_.body.ops) {
      if (top.get() == &outer)
        break;
      if (transforms::writesGlobalMemoryIn(*top))
        return decline("global memory is written before the loop, so its copies are not TMA copies");
    }
    for (ir::Op *load : loads) {
      const ir::Type &t = load->result()->type;
      int swizzle = static_cast<int>(std::min<int64_t>(128, t.shape.back() * ir::storageBytes(t.dtype())));
      if (load->blockShape().size() != 2 || !transforms::tensorMapFor(f_, *load, swizzle))
        return decline("a load before the nested loop is not copied with TMA (its descriptor's base, shape and "
                       "strides must be 16-byte aligned params; docs/compiler.md, \"TMA for tensor descriptors\")");
      std::set<const ir::Value *> seen;
      for (const ir::Value *o : load->operands)
        if (!cloneable(o, seen))
          return decline("a copy's coordinates are not computed from the loop's induction variable by arithmetic");
    }
    if (!addressesRecomputable(outer, loads))
      return decline("a copy's coordinates depend on a value the loop carries that cannot be computed ahead");
    if (flattenStream(outer, *inner, loads))
      return;
    pipeline(outer, loads, 1, /*atTop=*/false, inner);
  }

  /// Whether `v` is the same in every iteration of `outer` and can be computed before it: not
  /// defined in its body, or by pure ops of the body from such values.
  bool invariantIn(const ir::Op &outer, const ir::Value *v, int depth = 0) const {
    const ir::Block &body = *outer.regions[0];
    if (v->owner)
      return v->owner != &body;
    if (!v->def || v->def->parent != &body)
      return true;
    if (depth > 16 || !isPureForSlice(*v->def))
      return false;
    for (const ir::Value *o : v->def->operands)
      if (!invariantIn(outer, o, depth + 1))
        return false;
    return true;
  }

  /// Clones the computation of `v`, which lies in `outer`'s body or `inner`'s (nested in it),
  /// with the two induction variables replaced by `tile` and `k`; values defined outside
  /// `outer` are used as they are. Returns nullptr when it reads another argument of either
  /// loop or an op that is not pure.
  ir::Value *cloneAt(ir::Value *v, const ir::Op &outer, const ir::Op &inner, ir::Value *tile, ir::Value *k,
                     std::map<ir::Value *, ir::Value *> &m, ir::Builder &bld) {
    if (auto it = m.find(v); it != m.end())
      return it->second;
    const ir::Block *ob = outer.regions[0].get(), *ib = inner.regions[0].get();
    if (v->owner) {
      if (v->owner == ob || v->owner == ib)
        return v->index == 0 ? (v->owner == ob ? tile : k) : nullptr;
      return v;
    }
    if (!v->def || (v->def->parent != ob && v->def->parent != ib))
      return v;
    if (!isPureForSlice(*v->def))
      return nullptr;
    std::vector<ir::Value *> ops;
    for (ir::Value *o : v->def->operands) {
      ir::Value *c = cloneAt(o, outer, inner, tile, k, m, bld);
      if (!c)
        return nullptr;
      ops.push_back(c);
    }
    ir::Op *c = bld.clone(*v->def, ops);
    for (size_t i = 0; i < v->def->results.size(); ++i)
      m[v->def->result(static_cast<unsigned>(i))] = c->result(static_cast<unsigned>(i));
    return m[v];
  }

  /// flatten=True as one stream of (tile, K step) pairs, as Triton's flattened loop issues its
  /// copies: the K loop's copy for `depth` steps ahead, where that runs past the tile's last K
  /// step, is the next tiles' first, so that those are in flight while this tile's last wgmmas
  /// run, not only during its epilogue. The K loop's window of prefetched values is carried by
  /// the loop over tiles from one K loop to the next; the copies before the loop over tiles are
  /// the stream's first `depth`. Position p of a tile's stream (p = its K step's index +
  /// depth) is K step p % n of tile tile + (p / n) * step, n being the K loop's trip count,
  /// which must be the same for every tile (bounds computed before the loop over tiles, a
  /// constant positive step). Returns false, changing nothing, where that does not hold, where
  /// a copy's coordinates read a value either loop carries, or where the K loop is
  /// warp-specialised; crossTiles then issues the next tile's first copies after the K loop.
  bool flattenStream(ir::Op &outer, ir::Op &inner, const std::vector<ir::Op *> &prologue) {
    auto rec = pipelined_.find(&inner);
    if (rec == pipelined_.end() || rec->second.loads.size() * rec->second.depth != prologue.size() ||
        inner.warpSpecialize())
      return false;
    const int depth = rec->second.depth;
    ir::Value *lbI = inner.operands[0], *ubI = inner.operands[1], *stepI = inner.operands[2];
    for (ir::Value *b : {lbI, ubI, stepI})
      if (!invariantIn(outer, b))
        return false;
    const ir::Op *stepDef = stepI->def;
    if (!stepDef || stepDef->kind != OpKind::Constant || stepDef->intValue() <= 0 || stepI->type.isTile())
      return false;
    ir::Block &ob = *outer.regions[0];
    ir::Block &ib = *inner.regions[0];
    ir::Op *outerYield = ob.terminator();
    // Every prologue load of the K loop is one of its pipelined loads' windows' initial values.
    for (const PipelinedLoad &pl : rec->second.loads) {
      if (!pl.next || pl.next->parent != &ib)
        return false;
      for (int j = 0; j < depth; ++j)
        if (std::find(prologue.begin(), prologue.end(), inner.operands[pl.firstOperand + j]->def) == prologue.end())
          return false;
    }
    // Dry run: every copy's operands must be clonable at a (tile, K step) pair.
    {
      ir::Block scratch;
      ir::Builder dry(&scratch);
      std::map<ir::Value *, ir::Value *> m;
      for (const PipelinedLoad &pl : rec->second.loads)
        for (ir::Value *o : pl.original->operands)
          if (!cloneAt(o, outer, inner, outer.regions[0]->args[0].get(), ib.args[0].get(), m, dry))
            return false;
    }
    const SourceLoc loc = outer.loc;
    ir::Value *lbO = outer.operands[0], *ubO = outer.operands[1], *stepO = outer.operands[2];
    // Tile and K-step arithmetic in one integer type.
    const ir::DType idx = lbI->type.dtype();
    for (ir::Value *b : {ubI, stepI, lbO, ubO, stepO})
      if (b->type.isTile() || b->type.dtype() != idx)
        return false;
    // Before the loop over tiles: the K loop's trip count n (0 when it runs not at all), and
    // the stream's first `depth` copies.
    ir::Block *top = outer.parent;
    auto outerIt = std::find_if(top->ops.begin(), top->ops.end(), [&](auto &p) { return p.get() == &outer; });
    ir::Builder pre(top);
    pre.setInsertionPoint(top, outerIt);
    std::map<ir::Value *, ir::Value *> hoisted;
    auto hoist = [&](ir::Value *v) { return cloneAt(v, outer, inner, nullptr, nullptr, hoisted, pre); };
    ir::Value *lbH = hoist(lbI), *ubH = hoist(ubI), *stepH = hoist(stepI);
    ir::Value *one = pre.constInt(loc, idx, 1), *zero = pre.constInt(loc, idx, 0);
    ir::Value *span = pre.binary(OpKind::Sub, loc, ubH, lbH);
    ir::Value *trips = pre.binary(OpKind::IDiv, loc, pre.binary(OpKind::Add, loc, span,
                                                                 pre.binary(OpKind::Sub, loc, stepH, one)), stepH);
    ir::Value *runs = pre.cmp(loc, ir::CmpPred::Gt, trips, zero);
    ir::Value *n = pre.binary(OpKind::Max, loc, trips, one); // divides safely; `runs` guards
    // The (tile, K step) of stream position p (an integer value) counted from tile `t`, with
    // the K loop's lower bound and step as seen where `bld` inserts.
    auto at = [&](ir::Builder &bld, ir::Value *t, ir::Value *p, ir::Value *lb, ir::Value *step, ir::Value *&tileOut,
                  ir::Value *&kOut, ir::Value *&guard) {
      ir::Value *q = bld.binary(OpKind::IDiv, loc, p, n), *r = bld.binary(OpKind::IRem, loc, p, n);
      tileOut = bld.binary(OpKind::Add, loc, t, bld.binary(OpKind::Mul, loc, q, stepO));
      kOut = bld.binary(OpKind::Add, loc, lb, bld.binary(OpKind::Mul, loc, r, step));
      guard = bld.binary(OpKind::And, loc, bld.cmp(loc, ir::CmpPred::Lt, tileOut, ubO), runs);
    };
    std::vector<std::vector<ir::Value *>> first(rec->second.loads.size());
    for (int j = 0; j < depth; ++j) {
      ir::Value *t, *k, *guard;
      at(pre, lbO, pre.constInt(loc, idx, j), lbH, stepH, t, k, guard);
      std::map<ir::Value *, ir::Value *> m;
      for (size_t li = 0; li < rec->second.loads.size(); ++li) {
        const ir::Op &orig = *rec->second.loads[li].original;
        std::vector<ir::Value *> ops;
        for (ir::Value *o : orig.operands)
          ops.push_back(cloneAt(o, outer, inner, t, k, m, pre));
        ops = guardedOperands(orig, ops, guard, pre);
        ir::Value *v = pre.clone(orig, ops)->result();
        v->nameHint = orig.result()->nameHint;
        first[li].push_back(v);
      }
    }
    // The K loop's copies for `depth` steps ahead: position p = (k - lb) / step + depth, which
    // lies in tile t + q * step with q = p / n <= depth (p < n + depth). No division in the K
    // loop: q counts the multiples of n that p reaches, and what the copies read of the outer
    // loop's body (scalars of the tile: its row, its column) is computed once per tile for
    // tiles t + step .. t + depth * step, before the K loop, and picked by q.
    std::vector<ir::Value *> multiples(depth + 1); // j * n, before the loop over tiles
    for (int j = 1; j <= depth; ++j)
      multiples[j] = pre.binary(OpKind::Mul, loc, n, pre.constInt(loc, idx, j));
    auto innerIt = std::find_if(ob.ops.begin(), ob.ops.end(), [&](auto &p) { return p.get() == &inner; });
    ir::Builder perTile(&ob);
    perTile.setInsertionPoint(&ob, innerIt);
    std::vector<ir::Value *> tileAhead(depth + 1); // t + q * step, once per tile
    std::vector<std::map<ir::Value *, ir::Value *>> aheadMaps(depth + 1);
    tileAhead[0] = ob.args[0].get();
    for (int q = 1; q <= depth; ++q)
      tileAhead[q] = perTile.binary(OpKind::Add, loc, ob.args[0].get(),
                                    perTile.binary(OpKind::Mul, loc, perTile.constInt(loc, idx, q), stepO));
    ir::Builder in(&ib);
    for (size_t li = 0; li < rec->second.loads.size(); ++li) {
      const PipelinedLoad &pl = rec->second.loads[li];
      auto nextIt = std::find_if(ib.ops.begin(), ib.ops.end(), [&](auto &p) { return p.get() == pl.next; });
      in.setInsertionPoint(&ib, nextIt);
      ir::Value *steps = in.binary(OpKind::IDiv, loc, in.binary(OpKind::Sub, loc, ib.args[0].get(), lbI), stepI);
      ir::Value *p = in.binary(OpKind::Add, loc, steps, in.constInt(loc, idx, depth));
      ir::Value *q = in.constInt(loc, idx, 0);
      for (int j = 1; j <= depth; ++j)
        q = in.binary(OpKind::Add, loc, q,
                      in.select(loc, in.cmp(loc, ir::CmpPred::Ge, p, multiples[j]), in.constInt(loc, idx, 1),
                                in.constInt(loc, idx, 0)));
      ir::Value *k = in.binary(OpKind::Add, loc, lbI,
                               in.binary(OpKind::Mul, loc, in.binary(OpKind::Sub, loc, p, in.binary(OpKind::Mul, loc, q, n)),
                                         stepI));
      ir::Value *t = in.binary(OpKind::Add, loc, ob.args[0].get(), in.binary(OpKind::Mul, loc, q, stepO));
      ir::Value *guard = in.binary(OpKind::And, loc, in.cmp(loc, ir::CmpPred::Lt, t, ubO), runs);
      // A value of the outer loop's body at tile t + q * step: its clones per tile, picked by q.
      std::map<ir::Value *, ir::Value *> picked;
      auto pick = [&](ir::Value *v) -> ir::Value * {
        if (auto it = picked.find(v); it != picked.end())
          return it->second;
        ir::Value *s = v;
        for (int j = 1; j <= depth; ++j) {
          ir::Value *vj = cloneAt(v, outer, inner, tileAhead[j], nullptr, aheadMaps[j], perTile);
          s = in.select(loc, in.cmp(loc, ir::CmpPred::Eq, q, in.constInt(loc, idx, j)), vj, s);
        }
        return picked[v] = s;
      };
      std::map<ir::Value *, ir::Value *> m;
      std::function<ir::Value *(ir::Value *)> stream = [&](ir::Value *v) -> ir::Value * {
        if (auto it = m.find(v); it != m.end())
          return it->second;
        if (v->owner == &ib)
          return m[v] = k; // the dry run admitted only the induction variables
        if (v->owner == &ob)
          return m[v] = t;
        if (!v->def || (v->def->parent != &ob && v->def->parent != &ib))
          return v;
        if (v->def->parent == &ob && invariantIn(outer, v))
          return v;
        if (v->def->parent == &ob && !v->type.isTile())
          return m[v] = pick(v);
        std::vector<ir::Value *> ops;
        for (ir::Value *o : v->def->operands)
          ops.push_back(stream(o));
        ir::Op *c = in.clone(*v->def, ops);
        for (size_t i = 0; i < v->def->results.size(); ++i)
          m[v->def->result(static_cast<unsigned>(i))] = c->result(static_cast<unsigned>(i));
        return m[v];
      };
      std::vector<ir::Value *> ops;
      for (ir::Value *o : pl.original->operands)
        ops.push_back(stream(o));
      pl.next->operands = guardedOperands(*pl.original, ops, guard, in);
      // The window: carried by the loop over tiles, from the stream's first copies to each K
      // loop and from its results to the next.
      for (int j = 0; j < depth; ++j) {
        const ir::Type &ty = pl.original->result()->type;
        outer.operands.push_back(first[li][j]);
        ir::Value *arg = ob.addArg(ty, pl.original->result()->nameHint);
        outer.addResult(ty);
        inner.operands[pl.firstOperand + j] = arg;
        outerYield->operands.push_back(inner.results[pl.firstResult + j].get());
      }
    }
    ++count;
    return true;
  }

  static bool dependsOnNumPrograms(const ir::Value *v, int depth) {
    if (!v->def || depth > 8)
      return false;
    if (v->def->kind == OpKind::NumPrograms)
      return true;
    for (const ir::Value *o : v->def->operands)
      if (dependsOnNumPrograms(o, depth + 1))
        return true;
    return false;
  }

  void registerLoop(ir::Op &forOp) {
    ir::Block &body = *forOp.regions[0];
    body_ = &body;
    // tl.range(num_stages=1), or num_stages=1 for the kernel without a per-loop value: no
    // pipelining, as in Triton.
    int64_t asked = forOp.numStages();
    if (asked == 1 || (asked == 0 && numStages_ == 1))
      return;
    bool effects = false, dots = false;
    ir::walk(body, [&](ir::Op &op) {
      effects |= op.regions.empty() && blocksLoadMotion(op);
      dots |= op.kind == OpKind::Dot;
    });
    // Loops with dots keep their registers for the accumulators (their operand loads are
    // prefetched through shared memory); a loop that writes memory keeps its loads after its
    // writes unless the loop asks for pipelining (Triton pipelines every load of a loop with an
    // explicit num_stages, without checking whether the loop's stores alias them).
    if (dots || (effects && asked < 2))
      return;
    // Without num_stages, only a grid-stride loop (step computed from tl.num_programs): its
    // program's rows follow one another and the grid, sized to the machine, adds no more in
    // flight. A loop over one program's chunks (a row's, as in an online softmax) has the other
    // programs on the SM for that; the registers prefetching takes cost it occupancy (measured on
    // the H200: cross-entropy forward 3-7 % slower with it).
    if (asked == 0 && !dependsOnNumPrograms(forOp.operands[2], 0))
      return;
    std::map<const ir::Value *, std::vector<const ir::Op *>> users = usersIn(body);
    ir::Op *yieldOp = body.terminator();
    int depth = asked >= 2 ? static_cast<int>(asked) - 1 : 1;
    std::vector<int64_t> live = liveRegisters(body, f_.numWarps);
    int64_t room = registerCeiling(f_.numWarps) * 3 / 4 - *std::max_element(live.begin(), live.end());
    std::vector<ir::Op *> loads;
    for (auto &op : body.ops) {
      if (op->kind != OpKind::Load || op->isVolatile() || op->operands[0]->type.elem.space != ir::AddrSpace::Global)
        continue;
      // Loads read only by the yield are already ahead (an earlier prefetch's).
      auto it = users.find(op->result());
      if (it == users.end() || std::all_of(it->second.begin(), it->second.end(),
                                           [&](const ir::Op *u) { return u == yieldOp; }))
        continue;
      std::set<const ir::Value *> seen;
      bool ok = true;
      for (const ir::Value *o : op->operands)
        ok = ok && cloneable(o, seen);
      if (!ok)
        continue;
      // In a loop that asks for pipelining, a load the NVPTX backend can copy with cp.async
      // waits in shared memory (private slots, AsyncCopy.cpp) and costs no registers until read.
      int64_t cost = asked >= 2 && stageable(*op) ? 0 : depth * estimatedRegisters(op->result()->type, f_.numWarps);
      // A scalar of at most 64 bits (a row's mean or rstd) takes one or two registers per stage
      // and is prefetched even past the budget: left in place, every iteration waits a memory
      // round trip for it (layernorm backward at 8K columns, 16 warps).
      bool smallScalar = !op->result()->type.isTile() && estimatedRegisters(op->result()->type, f_.numWarps) <= 2;
      if (cost > 0 && cost > room && !smallScalar)
        continue;
      if (!addressesRecomputable(forOp, {op.get()}))
        continue;
      room -= cost;
      loads.push_back(op.get());
    }
    if (loads.empty())
      return;
    // At the top of the body: the next iteration's loads are in flight while this one computes.
    pipeline(forOp, loads, depth, /*atTop=*/true);
  }

  /// Whether the NVPTX backend can copy `load` (a tile load in a pipelined loop, not a dot
  /// operand) into shared memory with cp.async: not volatile, no cache or eviction hint, a zero
  /// or no `other`, and an
  /// access vector (axis info: contiguity, alignment, mask runs) of 4, 8 or 16 bytes. The
  /// backend checks again with the final layout (planPrivateSlots) and keeps the value in
  /// registers where it disagrees.
  bool stageable(const ir::Op &load) {
    const ir::Value *ptr = load.operands[0];
    if (!ptr->type.isTile() || load.isVolatile() || load.hasDescriptor() || load.cacheHint() != ir::CacheHint::None ||
        load.evictionHint() != ir::EvictionHint::None || load.result()->type.dtype() == ir::DType::I1)
      return false;
    if (load.operands.size() > 2) {
      const ir::Value *o = load.operands[2];
      const ir::Op *c = o->def && o->def->kind == OpKind::Splat ? o->def->operands[0]->def : o->def;
      if (!c || c->kind != OpKind::Constant || c->intValue() != 0 || c->floatValue() != 0.0)
        return false;
    }
    return accessBytes(load) >= 4;
  }
  /// The bytes one vector access of tile load `load` may move, by axis info (contiguity and
  /// alignment of its pointers, constancy of its mask), capped at the tile's last dim.
  int64_t accessBytes(const ir::Op &load) {
    if (!axis_)
      axis_ = std::make_unique<AxisInfoAnalysis>(f_);
    const ir::Value *ptr = load.operands[0];
    int64_t vec = std::min(ptr->type.shape.back(),
                           axis_->accessVector(ptr, load.operands.size() > 1 ? load.operands[1] : nullptr));
    return vec * static_cast<int64_t>(ir::storageBytes(load.result()->type.dtype()));
  }
  std::unique_ptr<AxisInfoAnalysis> axis_;

  /// Whether every carried argument the loads' addresses depend on, directly or through the
  /// computation of another's next value, can be recomputed iterations ahead.
  bool addressesRecomputable(ir::Op &forOp, const std::vector<ir::Op *> &loads) {
    ir::Block &body = *forOp.regions[0];
    ir::Op *yield = body.terminator();
    std::set<unsigned> needed;
    std::vector<unsigned> work;
    for (ir::Op *load : loads) {
      std::set<const ir::Value *> s;
      std::set<unsigned> args;
      for (const ir::Value *o : load->operands)
        argsOf(o, s, args);
      work.insert(work.end(), args.begin(), args.end());
    }
    while (!work.empty()) {
      unsigned a = work.back();
      work.pop_back();
      if (!needed.insert(a).second)
        continue;
      std::set<const ir::Value *> s, cs;
      std::set<unsigned> args;
      if (!cloneable(yield->operands[a - 1], cs))
        return false;
      argsOf(yield->operands[a - 1], s, args);
      work.insert(work.end(), args.begin(), args.end());
    }
    return true;
  }

  /// The rewrite itself: `loads` (of forOp's body, addresses recomputable) issued `depth`
  /// iterations ahead, the new loads placed at the top of the body, before its yield, or right
  /// after op `after` of the body.
  void pipeline(ir::Op &forOp, const std::vector<ir::Op *> &loads, int depth, bool atTop, ir::Op *after = nullptr) {
    ir::Block &body = *forOp.regions[0];
    body_ = &body;
    ir::Op *yield = body.terminator();
    ir::Value *lb = forOp.operands[0], *ub = forOp.operands[1], *step = forOp.operands[2];
    // Prologue, before the loop: iterations 0 .. depth-1, with the carried values advanced from
    // their initial values.
    ir::Block *outer = forOp.parent;
    auto forIt = std::find_if(outer->ops.begin(), outer->ops.end(), [&](auto &p) { return p.get() == &forOp; });
    ir::Builder pre(outer);
    pre.setInsertionPoint(outer, forIt);
    ir::Builder top(&body);
    top.setInsertionPoint(&body, atTop ? body.ops.begin() : std::prev(body.ops.end()));
    if (after) // right after that op of the body
      top.setInsertionPoint(&body, std::next(std::find_if(body.ops.begin(), body.ops.end(),
                                                          [&](auto &p) { return p.get() == after; })));
    // argAt(a, j): the value of body argument `a` j iterations after the one given by `base`
    // (the loop's start before it, the current iteration in the body).
    // Per level: the clone maps of the next-value computations, and the arguments' values.
    std::vector<std::map<ir::Value *, ir::Value *>> preMaps(depth + 1), topMaps(depth + 1);
    std::vector<std::map<ir::Value *, ir::Value *>> preArg(depth + 1), topArg(depth + 1);
    std::function<ir::Value *(ir::Value *, int, bool)> argAt = [&](ir::Value *a, int j, bool inBodyTop) -> ir::Value * {
      ir::Builder &bld = inBodyTop ? top : pre;
      if (j == 0)
        return inBodyTop ? a : (a->index == 0 ? lb : forOp.operands[2 + a->index]);
      auto &memo = (inBodyTop ? topArg : preArg)[j];
      if (auto it = memo.find(a); it != memo.end())
        return it->second;
      ir::Value *v;
      if (a->index == 0)
        v = bld.binary(OpKind::Add, forOp.loc, argAt(a, j - 1, inBodyTop), step);
      else
        v = clone(yield->operands[a->index - 1], (inBodyTop ? topMaps : preMaps)[j], bld,
                  [&](ir::Value *x) { return argAt(x, j - 1, inBodyTop); });
      return memo[a] = v;
    };
    std::vector<std::map<ir::Value *, ir::Value *>> preLoadMaps(depth);
    std::map<ir::Value *, ir::Value *> topLoadMap;
    std::vector<ir::Value *> preGuard(depth);
    for (int j = 0; j < depth; ++j)
      preGuard[j] = pre.cmp(forOp.loc, ir::CmpPred::Lt, argAt(body.args[0].get(), j, false), ub);
    ir::Value *more = top.cmp(forOp.loc, ir::CmpPred::Lt, argAt(body.args[0].get(), depth, true), ub);
    // Prologue loads iteration by iteration (all loads of iteration 0, then of iteration 1...):
    // the backend's cp.async groups complete in issue order, and a dot waits for its
    // iteration's operands by counting the groups issued after them.
    std::vector<std::vector<ir::Value *>> initOf(loads.size());
    for (int j = 0; j < depth; ++j)
      for (size_t li = 0; li < loads.size(); ++li) {
        ir::Op *load = loads[li];
        std::vector<ir::Value *> ops;
        for (ir::Value *o : load->operands)
          ops.push_back(clone(o, preLoadMaps[j], pre, [&](ir::Value *x) { return argAt(x, j, false); }));
        ops = guardedOperands(*load, ops, preGuard[j], pre);
        ir::Value *v = pre.clone(*load, ops)->result();
        v->nameHint = load->result()->nameHint;
        initOf[li].push_back(v);
      }
    for (size_t li = 0; li < loads.size(); ++li) {
      ir::Op *load = loads[li];
      const std::vector<ir::Value *> &carriedInit = initOf[li];
      std::vector<ir::Value *> ops;
      for (ir::Value *o : load->operands)
        ops.push_back(clone(o, topLoadMap, top, [&](ir::Value *x) { return argAt(x, depth, true); }));
      ops = guardedOperands(*load, ops, more, top);
      ir::Value *next = top.clone(*load, ops)->result();
      next->nameHint = load->result()->nameHint;
      PipelinedLoop &record = pipelined_[&forOp];
      record.depth = depth;
      record.loads.push_back({load, next->def, forOp.operands.size(), forOp.results.size()});
      // Carry them: depth new loop operands, body arguments, yield operands and results; the
      // yield shifts the window by one (argument j+1 becomes argument j, the new load the last).
      std::vector<ir::Value *> cur;
      for (int j = 0; j < depth; ++j) {
        forOp.operands.push_back(carriedInit[j]);
        cur.push_back(body.addArg(load->result()->type, load->result()->nameHint));
        forOp.addResult(load->result()->type);
      }
      for (int j = 1; j < depth; ++j)
        yield->operands.push_back(cur[j]);
      yield->operands.push_back(next);
      // Uses of the original load now read the value loaded `depth` iterations earlier.
      ir::walk(body, [&](ir::Op &op) {
        for (auto &o : op.operands)
          if (o == load->result())
            o = cur[0];
      });
      ++count;
    }
  }
};

} // namespace

unsigned prefetchDotOperands(ir::Function &f, DiagnosticEngine *diags) {
  Prefetcher p(f, diags);
  p.block(f.body);
  return p.count;
}

unsigned prefetchLoopLoads(ir::Function &f, DiagnosticEngine *diags) {
  Prefetcher p(f, diags);
  p.registers = true;
  p.block(f.body);
  return p.count;
}

} // namespace tle::transforms
