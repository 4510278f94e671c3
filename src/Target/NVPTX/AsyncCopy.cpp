// Asynchronous dot-operand pipelines: cp.async (PTX ISA §9.7.9.25) copies global tiles straight
// into multi-buffered shared-memory slots, num_stages - 1 loop iterations ahead of the tl.dot
// that reads them (with ldmatrix for mma.sync, or through wgmma descriptors from the swizzled
// layout); cp.async.wait_group and a barrier make a slot's data visible before use.
#include "Emitter.h"
#include "tle/Transforms/DotLowering.h"
#include "tle/Transforms/TensorMaps.h"

#include <llvm/IR/InlineAsm.h>

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <set>
#include <functional>

namespace tle::nvptx {

using ir::OpKind;

namespace {

bool isZeroSplat(const ir::Value *v) {
  if (!v->def || v->def->kind != OpKind::Splat)
    return false;
  const ir::Op *c = v->def->operands[0]->def;
  return c && c->kind == OpKind::Constant && c->intValue() == 0 && c->floatValue() == 0.0;
}

} // namespace

void Emitter::planAsyncOperands() {
  // TMA reads global memory through the async proxy, which does not see the kernel's own earlier
  // generic writes without a proxy fence: TMA copies are used only by top-level ops before the
  // first one that writes global memory (a store or an atomic, in it or its regions).
  std::map<const ir::Op *, size_t> topIndex;
  size_t firstWrite = SIZE_MAX, topIdx = 0;
  for (auto &top : f.body.ops) {
    if (transforms::writesGlobalMemoryIn(*top) && firstWrite == SIZE_MAX)
      firstWrite = topIdx;
    topIndex[top.get()] = topIdx++;
  }
  auto beforeWrites = [&](const ir::Op &op) {
    const ir::Op *o = &op;
    while (o->parent && o->parent != &f.body)
      o = o->parent->parent;
    return o->parent == &f.body && topIndex.at(o) < firstWrite;
  };
  // Values linked by loop carries (init, body argument, yield operand, result) form classes.
  std::map<const ir::Value *, const ir::Value *> parent;
  std::function<const ir::Value *(const ir::Value *)> find = [&](const ir::Value *v) {
    auto it = parent.find(v);
    if (it == parent.end() || it->second == v)
      return parent[v] = v;
    return it->second = find(it->second);
  };
  auto unite = [&](const ir::Value *a, const ir::Value *b) { parent[find(a)] = find(b); };
  std::map<const ir::Value *, std::vector<std::pair<const ir::Op *, unsigned>>> uses;
  std::vector<const ir::Op *> loads;
  ir::walk(f.body, [&](ir::Op &op) {
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
      loads.push_back(&op), find(op.result());
  });
  // Classes in the order their first value appears in the IR (not by address: the shared-memory
  // offsets they get must be the same on every run).
  std::vector<const ir::Value *> seenOrder;
  std::set<const ir::Value *> seen;
  ir::walk(f.body, [&](ir::Op &op) {
    auto note = [&](const ir::Value *v) {
      if (parent.count(v) && seen.insert(v).second)
        seenOrder.push_back(v);
    };
    for (const ir::Value *o : op.operands)
      note(o);
    for (auto &r : op.regions)
      for (auto &a : r->args)
        note(a.get());
    for (auto &r : op.results)
      note(r.get());
  });
  std::map<const ir::Value *, std::vector<const ir::Value *>> members;
  std::vector<const ir::Value *> roots;
  for (const ir::Value *v : seenOrder) {
    const ir::Value *root = find(v);
    if (!members.count(root))
      roots.push_back(root);
    members[root].push_back(v);
  }
  bool anySwizzled = false;
  for (const ir::Value *root : roots) {
    const std::vector<const ir::Value *> &vs = members[root];
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
      for (auto [u, k] : uses[v]) {
        if (u->kind == OpKind::For && k >= 3)
          continue;
        if (u->kind == OpKind::Yield && u->parent->parent && u->parent->parent->kind == OpKind::For)
          continue;
        // wgmma reads tf32, fp8 and int8 operands only K-major: A as loaded ([M, K], K
        // contiguous), B through a transposed view of an [N, K] tile (below); such a B given as
        // [K, N] is restaged K-major from its slot by the dot (AsyncBuffer::restaged). mma.sync
        // reads what transforms::mmaSyncSlotOperand lists.
        bool kMajorOnly = transforms::wgmmaNeedsKMajor(v->type.dtype());
        auto fromSlot = [&](const ir::Op &d, unsigned idx, bool transposed) {
          if (!useWgmma(d))
            return transforms::mmaSyncSlotOperand(d, idx, transposed, arch, f.numWarps);
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
        if (u->kind == OpKind::Permute && u->result()->type.rank() == 2 && u->permutation() == std::vector<int64_t>{1, 0}) {
          const auto &pu = uses[u->result()];
          if (pu.size() == 1 && pu[0].first->kind == OpKind::Dot && pu[0].second <= 1 &&
              fromSlot(*pu[0].first, pu[0].second, true) && (operandIdx < 0 || operandIdx == int(pu[0].second)) &&
              (!dot || useWgmma(*dot) == useWgmma(*pu[0].first))) {
            operandIdx = static_cast<int>(pu[0].second);
            dot = pu[0].first;
            transposedViews.push_back(u->result());
            continue;
          }
        }
        ok = false;
      }
    }
    // A restaged class is read by its dots alone, never through a transposed view.
    if (!ok || !hasLoad || operandIdx < 0 || (restaged && !transposedViews.empty()))
      continue;
    const ir::Type &t = vs.front()->type;
    AsyncBuffer buf;
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
      buf.slotBytes = transforms::asyncSlotBytes(buf.rows, buf.cols, buf.elemBytes, /*swizzled=*/true);
    } else if (useWgmma(*dot)) {
      buf.swizzle = static_cast<int>(std::min<int64_t>(128, buf.cols * buf.elemBytes));
      buf.slotBytes = transforms::asyncSlotBytes(buf.rows, buf.cols, buf.elemBytes, /*swizzled=*/true);
    } else {
      buf.ld = t.shape[1] + 16 / buf.elemBytes; // 16 bytes of padding per row, as the dot's own staging
      buf.slotBytes = transforms::asyncSlotBytes(buf.rows, buf.cols, buf.elemBytes, /*swizzled=*/false);
    }
    // sm_90a copies a tensor descriptor's tiles with TMA when every load of the class can be
    // (the same descriptor, launch-time base, shape and strides) and each fill's mbarrier phase
    // can be known from the count of fills before it. Statically when the loads lie at the
    // kernel's top level or in one top-level loop; at run time (AsyncBuffer::dynamicFills) when
    // a pipelined loop nested in a top-level loop holds them (a persistent kernel's K loop, its
    // prologue in the loop over tiles).
    if (arch == "sm_90a" && buf.swizzle >= 32) {
      std::optional<ir::TensorMapParam> map;
      bool tma = true;
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
        // In a loop only pipelined loads (carried to a later iteration) count their fills;
        // an unpipelined one would refill its single slot with the same static phase.
        if (!top && carried == 0)
          return false; // in an unpipelined loop
        // A load in the loop is issued for a later iteration: only the prefetch pass's, which
        // lists the guard that the iteration exists, is known to be read whenever it is issued
        // (a hand-written window's last fill would still be in flight after the loop).
        bool guarded = l.operands.size() > 4 + 3 * l.blockShape().size();
        if (!top && !guarded)
          return false; // an in-loop fill without the prefetch guard
        // An unguarded fill at the top level is waited for at the end (drainTma): only in a
        // class without in-loop fills, whose slot phases it alone advances.
        if (!guarded && carried > 0)
          return false; // an unguarded fill in a class with in-loop fills
        return true;
      };
      for (const ir::Value *v : vs) {
        if (!v->def || v->def->kind != OpKind::Load)
          continue;
        const ir::Op &l = *v->def;
        std::optional<ir::TensorMapParam> m = tmaFill(l) ? tensorMapOf(l, buf) : std::nullopt;
        if (!m || (map && !(*m == *map))) {
          tma = false;
          break;
        }
        map = m;
      }
      // Static counts: loads at the top level and in one top-level loop's body, all before the
      // kernel's first global write. Run-time counts: no global write before the top-level loop
      // (nor before a top-level load: guarded ones, a flattened loop's first tile); writes inside
      // the loop are followed by a proxy fence (emitOpImpl) and, unless warp-specialised, a
      // barrier before the next fill.
      bool nested = blocks.size() > 1 || (blocks.size() == 1 && (*blocks.begin())->parent != classTop);
      if (tma && nested) {
        tma = topIndex.at(classTop) <= firstWrite;
        for (const ir::Value *v : vs)
          if (v->def && v->def->kind == OpKind::Load && v->def->parent == &f.body && !beforeWrites(*v->def))
            tma = false;
      } else if (tma)
        for (const ir::Value *v : vs)
          if (v->def && v->def->kind == OpKind::Load && !beforeWrites(*v->def))
            tma = false;
      if (tma && map) {
        auto it = std::find(f.tensorMaps.begin(), f.tensorMaps.end(), *map);
        buf.tmaMap = static_cast<int>(it - f.tensorMaps.begin());
        if (it == f.tensorMaps.end())
          f.tensorMaps.push_back(*map);
        buf.dynamicFills = nested;
        if (nested) {
          tmaFillNests_.insert(classTop);
          // The fills outstanding at once are one loop's pipeline: a flattened loop's early
          // prologue is issued after the nested loop's fills were all read.
          int most = 0;
          for (auto [b, n] : carriedIn)
            most = std::max(most, n);
          buf.slots = most + 1;
        }
      }
    }
    // Values carried by two loops (a flattened loop's early prologue) count their fills only at
    // run time, which cp.async's slot and commit-group bookkeeping does not: they stay loads
    // into registers.
    if (buf.tmaMap < 0 && carriedIn.size() > 1)
      continue;
    if (buf.tmaMap < 0 && !vec16)
      continue;
    if (buf.swizzle) {
      smemBase_ = (smemBase_ + 1023) / 1024 * 1024;
      anySwizzled = true;
    }
    buf.base = smemBase_;
    smemBase_ += buf.slots * buf.slotBytes;
    for (const ir::Value *v : vs)
      asyncOf_[v] = static_cast<int>(buffers_.size());
    for (const ir::Value *v : transposedViews) {
      asyncOf_[v] = static_cast<int>(buffers_.size());
      asyncTransposed_.insert(v);
    }
    buffers_.push_back(buf);
  }
  planPrivateSlots(members, roots, uses);
  planWarpSpecialization();
  // The TMA slots' mbarriers (8 bytes each) follow the slots: one per slot ("full"), and in a
  // warp-specialised kernel a second per slot ("empty", after the full ones).
  for (AsyncBuffer &buf : buffers_)
    if (buf.tmaMap >= 0) {
      smemBase_ = (smemBase_ + 7) / 8 * 8;
      buf.barBase = smemBase_;
      smemBase_ += (ws_ ? 16 : 8) * buf.slots;
    }
  // Tensor-descriptor stores written with TMA get their tensor maps after the loads'.
  ir::walk(f.body, [&](ir::Op &o) {
    const bool tma = o.kind == OpKind::Store && o.isTmaStore();
    genericGlobalWrites_ |= transforms::writesGlobalMemory(o) && !tma;
    if (!tma)
      return;
    // Its pointer and mask are placeholders (transforms::markTmaStores): TMA or nothing.
    const std::string what = "a store marked 'tma' is written from its tensor descriptor with TMA, which ";
    if (arch != "sm_90a")
      diags.fatal(o.loc, what + "needs sm_90a; here the target is " + arch);
    if (!transforms::inForLoopsOnly(f, o))
      diags.fatal(o.loc, what + "must sit at the kernel's top level or in its 'for' loops, not under an 'if' or "
                                "a 'while' (every thread takes part in its staging)");
    const int swizzle = transforms::tmaStoreSwizzle(o);
    std::optional<ir::TensorMapParam> m = transforms::tensorMapFor(f, o, swizzle);
    if (!m)
      diags.fatal(o.loc, what + "needs a tensor map built from the params (base, shape and strides; the "
                                "innermost stride 1, the others whole 16-byte units)");
    if (!transforms::tmaStore(f, o)) // a hand-written mark: the access rule is checked here too
      diags.fatal(o.loc, what + "must be the kernel's last access to global memory (in a loop: the loop may "
                                "only load through other pointer params), at most 128 KiB, with rows of 32 "
                                "bytes or more");
    auto it = std::find(f.tensorMaps.begin(), f.tensorMaps.end(), *m);
    tmaStores_[&o] = static_cast<int>(it - f.tensorMaps.begin());
    if (it == f.tensorMaps.end())
      f.tensorMaps.push_back(*m);
    if (!transforms::tmaStoreLoop(f, o))
      return;
    // A store in a loop gets its own staging area (its copies read it while the loop goes on),
    // box by box in two buffers where the layout's lane and warp bits stay within one box.
    const ir::Value *val = o.operands[1];
    const int64_t perRow = swizzle / ir::storageBytes(val->type.dtype());
    const int64_t boxes = o.blockShape()[1] / perRow, boxBytes = o.blockShape()[0] * swizzle;
    bool byBox = boxes > 1 && boxBytes % 1024 == 0; // each box starts a whole swizzle pattern
    for (const auto *bases : {&val->layout->lane, &val->layout->warp})
      for (const auto &b : *bases)
        byBox &= b[1] < perRow;
    TmaStaging st;
    st.buffers = byBox ? 2 : 1;
    st.boxes = byBox ? 1 : static_cast<int>(boxes);
    st.bytes = boxBytes * st.boxes;
    smemBase_ = (smemBase_ + 1023) / 1024 * 1024; // the 128-byte swizzle repeats every 1024 bytes
    st.offset = smemBase_;
    smemBase_ += st.buffers * st.bytes;
    tmaStaging_[&o] = st;
  });
  // wgmma and TMA-store staging areas (smemPtr) follow the slots and need the same alignment.
  bool wgmmaStaging = !tmaStores_.empty();
  ir::walk(f.body, [&](ir::Op &op) { wgmmaStaging |= op.kind == OpKind::Dot && useWgmma(op); });
  if (anySwizzled || wgmmaStaging) {
    smemBase_ = (smemBase_ + 1023) / 1024 * 1024;
    smemAlign_ = 1024;
  }
  sharedBytes_ = std::max(sharedBytes_, smemBase_);
  scratchBase_ = smemBase_;
  // The last top-level op whose region or operands touch an async value, or that holds a TMA
  // store with its own staging area (its copies read it until the loop is over): the scratch
  // area, which starts at 0 after it, must not overlap a staging area still being read.
  size_t idx = 0;
  for (auto &top : f.body.ops) {
    bool uses = false;
    auto visit = [&](ir::Op &o) {
      for (const ir::Value *v : o.operands)
        uses |= isAsync(v);
      for (auto &r : o.results)
        uses |= isAsync(r.get());
      uses |= tmaStaging_.count(&o) != 0;
    };
    visit(*top);
    for (auto &r : top->regions)
      ir::walk(*r, visit);
    if (uses)
      lastAsyncTopOp_ = idx;
    ++idx;
  }
}

void Emitter::planPrivateSlots(
    const std::map<const ir::Value *, std::vector<const ir::Value *>> &members, const std::vector<const ir::Value *> &roots,
    const std::map<const ir::Value *, std::vector<std::pair<const ir::Op *, unsigned>>> &uses) {
  // Loads prefetched by a loop (Prefetch.cpp's register prefetch) whose values are not dot
  // operands: the window of values ahead lives in shared memory instead of registers. A class
  // qualifies when it is a loop's carried window of one load (the prologue's loads before the
  // loop, the refill in the body), the carried values are read only by ops directly in the
  // body, and each load's vector (contiguity, alignment, mask runs) is 4, 8 or 16 bytes with a
  // zero or no `other` (a masked-off cp.async zero-fills) and no cache or eviction hint (which
  // cp.async would drop).
  const int64_t threads = 32 * int64_t(f.numWarps);
  const int64_t budget = 96 * 1024; // private slots per kernel, bytes
  for (const ir::Value *root : roots) {
    const std::vector<const ir::Value *> &vs = members.at(root);
    if (isAsync(vs.front()))
      continue;
    bool ok = true;
    int carried = 0, copyBytes = 0;
    const ir::Op *loop = nullptr;
    const ir::Layout *layout = nullptr;
    std::vector<const ir::Op *> classLoads;
    for (const ir::Value *v : vs) {
      if (!v->type.isTile() || !v->layout || v->type.dtype() == ir::DType::I1 || (layout && !(*v->layout == *layout))) {
        ok = false;
        break;
      }
      layout = v->layout;
      auto u = uses.find(v);
      if (v->def && v->def->kind == OpKind::Load) {
        const ir::Op &l = *v->def;
        const ir::Value *mask = l.operands.size() > 1 ? l.operands[1] : nullptr;
        int bytes = vectorWidth(l.operands[0], mask) * static_cast<int>(ir::storageBytes(v->type.dtype()));
        if (l.isVolatile() || l.hasDescriptor() || l.cacheHint() != ir::CacheHint::None ||
            l.evictionHint() != ir::EvictionHint::None ||
            (l.operands.size() > 2 && !isZeroSplat(l.operands[2])) ||
            (bytes != 4 && bytes != 8 && bytes != 16) || (copyBytes && bytes != copyBytes)) {
          ok = false;
          break;
        }
        copyBytes = bytes;
        classLoads.push_back(&l);
      } else if (v->def && v->def->kind == OpKind::For) {
        if (u != uses.end() && !u->second.empty())
          ok = false; // a window value left over after the loop: never read
        continue;
      } else if (!v->def && v->owner && v->owner->parent && v->owner->parent->kind == OpKind::For) {
        if (loop && loop != v->owner->parent)
          ok = false;
        loop = v->owner->parent;
        ++carried;
      } else {
        ok = false;
        break;
      }
      if (u == uses.end())
        continue;
      for (auto [user, k] : u->second) {
        if (user->kind == OpKind::For && k >= 3)
          continue;
        if (user->kind == OpKind::Yield && user->parent->parent && user->parent->parent->kind == OpKind::For)
          continue;
        // Read only by ops directly in the body that carries it, and not by a dot.
        if (user->kind == OpKind::Dot || v->def || user->parent != v->owner)
          ok = false;
      }
    }
    // Only loops that ask for pipelining (an explicit num_stages >= 2): Prefetch.cpp leaves the
    // register budget aside for their stageable loads.
    if (!ok || !loop || carried == 0 || classLoads.empty() || loop->numStages() < 2)
      continue;
    for (const ir::Op *l : classLoads)
      ok = ok && (l->parent == loop->regions[0].get() || l->parent == loop->parent);
    if (!ok)
      continue;
    AsyncBuffer buf;
    buf.privateSlots = true;
    buf.copyBytes = copyBytes;
    buf.elemBytes = ir::storageBytes(vs.front()->type.dtype());
    buf.slots = carried + 1;
    int64_t perCopy = copyBytes / buf.elemBytes;
    int64_t copies = (layout->numRegs() + perCopy - 1) / perCopy;
    buf.slotBytes = copies * threads * copyBytes;
    int64_t base = (smemBase_ + 15) / 16 * 16;
    if (base + buf.slots * buf.slotBytes > budget)
      continue;
    buf.base = base;
    smemBase_ = base + buf.slots * buf.slotBytes;
    for (const ir::Value *v : vs)
      asyncOf_[v] = static_cast<int>(buffers_.size());
    buffers_.push_back(buf);
  }
}

llvm::Value *Emitter::privateCopyBase(const AsyncBuffer &buf, llvm::Value *slot) {
  llvm::Value *slotBase = B.CreateAdd(B.getInt32(static_cast<uint32_t>(buf.base)),
                                      B.CreateMul(slot, B.getInt32(static_cast<uint32_t>(buf.slotBytes))));
  return B.CreateAdd(slotBase, B.CreateMul(tid_, B.getInt32(static_cast<uint32_t>(buf.copyBytes))));
}

void Emitter::emitPrivateAsyncLoad(const ir::Op &load, llvm::Value *slot) {
  const ir::Value *r = load.result();
  const AsyncBuffer &buf = asyncBuffer(r);
  const ir::Layout &l = *r->layout;
  std::vector<llvm::Value *> P = regsIn(load.operands[0], l);
  std::vector<llvm::Value *> M;
  if (load.operands.size() > 1)
    M = regsIn(load.operands[1], l);
  int dupMask = ir::replicatedRegisterBits(l);
  const uint32_t threads = 32u * static_cast<uint32_t>(f.numWarps);
  const uint32_t cb = static_cast<uint32_t>(buf.copyBytes);
  llvm::Value *base = privateCopyBase(buf, slot);
  // cp.async.cg (L2 only) copies 16 bytes; 4 and 8 go through .ca (PTX ISA §9.7.9.25.3).
  std::string text = std::string("cp.async.") + (cb == 16 ? "cg" : "ca") + ".shared.global [$0], [$1], " +
                     std::to_string(cb) + ", $2;";
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt32Ty(), B.getInt64Ty(), B.getInt32Ty()}, false);
  auto *cp = llvm::InlineAsm::get(fty, text, "r,l,r", true);
  int perCopy = static_cast<int>(cb / buf.elemBytes);
  for (int g = 0; g < l.numRegs(); g += perCopy) {
    if (g & dupMask)
      continue;
    uint32_t k = static_cast<uint32_t>(g / perCopy);
    llvm::Value *off = k ? B.CreateAdd(base, B.getInt32(k * threads * cb)) : base;
    llvm::Value *dst = B.CreatePtrToInt(smemRaw(off), B.getInt32Ty());
    // A masked-off vector copies 0 bytes and zero-fills its chunk (no global access).
    llvm::Value *size = M.empty() ? B.getInt32(cb) : B.CreateSelect(M[g], B.getInt32(cb), B.getInt32(0));
    B.CreateCall(fty, cp, {dst, B.CreatePtrToInt(P[g], B.getInt64Ty()), size});
  }
  auto *commitTy = llvm::FunctionType::get(B.getVoidTy(), false);
  B.CreateCall(commitTy, llvm::InlineAsm::get(commitTy, "cp.async.commit_group;", "", true));
  commitStamp_[r] = ++commits_;
  vals_[r] = {slot};
}

std::vector<llvm::Value *> &Emitter::materializePrivate(const ir::Value *v) {
  auto it = privateRegs_.find(v);
  if (it != privateRegs_.end())
    return it->second;
  const AsyncBuffer &buf = asyncBuffer(v);
  // This thread's own copies are complete once the groups committed after them are the only
  // ones pending; no other thread reads them, so no barrier.
  int stamp = commitStamp_.count(v) ? commitStamp_.at(v) : 0;
  int pending = std::max(0, std::min(commits_ - stamp, 7));
  auto *wty = llvm::FunctionType::get(B.getVoidTy(), false);
  B.CreateCall(wty, llvm::InlineAsm::get(wty, "cp.async.wait_group " + std::to_string(pending) + ";", "", true));
  const ir::Layout &l = *v->layout;
  int dupMask = ir::replicatedRegisterBits(l);
  const uint32_t threads = 32u * static_cast<uint32_t>(f.numWarps);
  const uint32_t cb = static_cast<uint32_t>(buf.copyBytes);
  int perCopy = static_cast<int>(cb / buf.elemBytes);
  llvm::Type *et = llvmType(v->type.elem);
  auto *vt = llvm::FixedVectorType::get(et, static_cast<unsigned>(perCopy));
  llvm::Value *base = privateCopyBase(buf, scalar(v));
  std::vector<llvm::Value *> out(static_cast<size_t>(l.numRegs()), nullptr);
  for (int g = 0; g < l.numRegs(); g += perCopy) {
    if (g & dupMask)
      continue;
    uint32_t k = static_cast<uint32_t>(g / perCopy);
    llvm::Value *off = k ? B.CreateAdd(base, B.getInt32(k * threads * cb)) : base;
    // Volatile: the copy that wrote these bytes is an asm statement LLVM cannot see into; the
    // read must stay after the wait.
    llvm::Value *x = B.CreateAlignedLoad(vt, smemRaw(off), llvm::Align(cb), /*isVolatile=*/true);
    for (int j = 0; j < perCopy && g + j < l.numRegs(); ++j)
      out[static_cast<size_t>(g + j)] = B.CreateExtractElement(x, static_cast<uint64_t>(j));
  }
  for (int i = 0; i < l.numRegs(); ++i)
    if (!out[static_cast<size_t>(i)])
      out[static_cast<size_t>(i)] = out[static_cast<size_t>(i & ~dupMask)];
  return privateRegs_[v] = out;
}

llvm::Value *Emitter::swizzledOffset(llvm::Value *row, llvm::Value *col, int64_t rows, int swizzle, unsigned eb) {
  uint32_t perRow = static_cast<uint32_t>(swizzle / static_cast<int>(eb)); // elements per swizzle row
  llvm::Value *blk = B.CreateLShr(col, log2i(perRow));
  llvm::Value *inRow = B.CreateAnd(col, perRow - 1);
  llvm::Value *off = B.CreateAdd(B.CreateMul(blk, B.getInt32(static_cast<uint32_t>(rows * swizzle))),
                                 B.CreateAdd(B.CreateMul(row, B.getInt32(static_cast<uint32_t>(swizzle))),
                                             B.CreateMul(inRow, B.getInt32(eb))));
  // XOR the 16-byte chunk index (bits 4..) with the row within the 8-row group (bits 7..).
  uint32_t chunkMask = static_cast<uint32_t>(swizzle / 16 - 1);
  llvm::Value *sel = B.CreateAnd(B.CreateLShr(off, 7), chunkMask);
  return B.CreateXor(off, B.CreateShl(sel, 4));
}

llvm::Value *Emitter::asyncSlotIndex(const ir::Value *v) {
  const AsyncBuffer &buf = asyncBuffer(v);
  llvm::Value *c = scalar(v);
  if (buf.tmaMap < 0)
    return c;
  llvm::Value *s = B.getInt32(static_cast<uint32_t>(buf.slots));
  return B.CreateSelect(B.CreateICmpUGE(c, s), B.CreateSub(c, s), c);
}

llvm::Value *Emitter::asyncSlotAddr(const ir::Value *v) {
  const AsyncBuffer &buf = asyncBuffer(v);
  llvm::Value *off = B.CreateAdd(B.getInt32(static_cast<uint32_t>(buf.base)),
                                 B.CreateMul(asyncSlotIndex(v), B.getInt32(static_cast<uint32_t>(buf.slotBytes))));
  return B.CreatePtrToInt(smemRaw(off), B.getInt32Ty());
}

// --- TMA (PTX ISA §9.7.9.25.5 cp.async.bulk.tensor, §9.7.13.15 mbarrier) ---------------------

std::optional<ir::TensorMapParam> Emitter::tensorMapOf(const ir::Op &load, const AsyncBuffer &buf) const {
  const std::vector<int64_t> &block = load.blockShape();
  if (block.size() != 2 || block[0] != buf.rows || block[1] != buf.cols)
    return std::nullopt;
  return transforms::tensorMapFor(f, load, buf.swizzle);
}

llvm::Value *Emitter::tensorMapAddr(int k) {
  return B.CreatePtrToInt(kernel_->getArg(static_cast<unsigned>(f.params.size() + k)), B.getInt64Ty());
}

llvm::AllocaInst *Emitter::counterSlot(std::map<int, llvm::AllocaInst *> &counters, int cls) {
  llvm::AllocaInst *&a = counters[cls];
  if (!a) {
    llvm::IRBuilder<> E(entry_, entry_->getFirstInsertionPt());
    a = E.CreateAlloca(E.getInt32Ty(), nullptr, "tma.count");
    E.SetInsertPoint(entry_->getTerminator());
    E.CreateStore(E.getInt32(0), a);
  }
  return a;
}

llvm::Value *Emitter::takeCount(llvm::AllocaInst *slot, uint32_t wrap, llvm::Value *pred) {
  llvm::Value *c = B.CreateLoad(B.getInt32Ty(), slot);
  llvm::Value *next = B.CreateAdd(c, B.getInt32(1));
  next = B.CreateSelect(B.CreateICmpEQ(next, B.getInt32(wrap)), B.getInt32(0), next);
  B.CreateStore(B.CreateSelect(pred, next, c), slot);
  return c;
}

llvm::Value *Emitter::tmaBarrierAddr(const AsyncBuffer &buf, llvm::Value *slot) {
  llvm::Value *off = B.CreateAdd(B.getInt32(static_cast<uint32_t>(buf.barBase)), B.CreateMul(slot, B.getInt32(8)));
  return B.CreatePtrToInt(smemRaw(off), B.getInt32Ty());
}

void Emitter::onEveryTmaBarrier(const std::string &op, const std::string &emptyOp) {
  llvm::Value *first = B.CreateICmpEQ(tid_, B.getInt32(0));
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt32Ty(), B.getInt1Ty()}, false);
  auto *asmOp = llvm::InlineAsm::get(fty, "@$1 " + op, "r,b", true);
  auto *emptyAsm = llvm::InlineAsm::get(fty, "@$1 " + (emptyOp.empty() ? op : emptyOp), "r,b", true);
  for (const AsyncBuffer &buf : buffers_)
    for (int s = 0; buf.tmaMap >= 0 && s < buf.slots; ++s) {
      B.CreateCall(fty, asmOp, {tmaBarrierAddr(buf, B.getInt32(static_cast<uint32_t>(s))), first});
      if (ws_)
        B.CreateCall(fty, emptyAsm, {emptyBarrierAddr(buf, B.getInt32(static_cast<uint32_t>(s))), first});
    }
}

void Emitter::initTmaBarriers() {
  // A warp-specialised kernel's empty barriers complete when the consumers have released the slot.
  onEveryTmaBarrier("mbarrier.init.shared::cta.b64 [$0], 1;",
                    "mbarrier.init.shared::cta.b64 [$0], " + std::to_string(slotReleaseArrivals()) + ";");
  llvm::Value *first = B.CreateICmpEQ(tid_, B.getInt32(0));
  auto *pty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt64Ty(), B.getInt1Ty()}, false);
  for (size_t k = 0; k < f.tensorMaps.size(); ++k)
    B.CreateCall(pty, llvm::InlineAsm::get(pty, "@$1 prefetch.tensormap [$0];", "l,b", true),
                 {tensorMapAddr(static_cast<int>(k)), first});
  // The initialisation must be visible to the other threads and to the async proxy (the TMA
  // unit completes transactions on these mbarriers); without TMA loads (only TMA stores) there
  // are none.
  if (!tmaLoads())
    return;
  auto *vty = llvm::FunctionType::get(B.getVoidTy(), false);
  B.CreateCall(vty, llvm::InlineAsm::get(vty, "fence.mbarrier_init.release.cluster;", "", true));
  B.CreateCall(vty, llvm::InlineAsm::get(vty, "fence.proxy.async.shared::cta;", "", true));
  barrier();
}

void Emitter::drainTma() {
  if (tmaDrained_)
    return;
  tmaDrained_ = true;
  for (auto [cls, count] : tmaTopFills_) {
    const AsyncBuffer &buf = buffers_[static_cast<size_t>(cls)];
    llvm::Value *c = B.getInt32(static_cast<uint32_t>(count));
    llvm::Value *slot = B.getInt32(static_cast<uint32_t>(count % buf.slots));
    waitTmaPhase(tmaBarrierAddr(buf, slot), B.CreateZExt(B.CreateICmpUGE(c, B.getInt32(static_cast<uint32_t>(buf.slots))),
                                                        B.getInt32Ty()));
  }
}

void Emitter::invalidateTmaBarriers() {
  drainTma();
  barrier(); // every thread is past its last wait
  onEveryTmaBarrier("mbarrier.inval.shared::cta.b64 [$0];");
}

void Emitter::waitTma(const ir::Value *v) {
  const AsyncBuffer &buf = asyncBuffer(v);
  llvm::Value *c = scalar(v);
  llvm::Value *parity = B.CreateZExt(B.CreateICmpUGE(c, B.getInt32(static_cast<uint32_t>(buf.slots))), B.getInt32Ty());
  waitTmaPhase(tmaBarrierAddr(buf, asyncSlotIndex(v)), parity);
}

void Emitter::waitTmaPhase(llvm::Value *bar, llvm::Value *parity) {
  // try_wait returns after a time limit even when the phase is incomplete: loop until it is.
  llvm::BasicBlock *loop = llvm::BasicBlock::Create(ctx, "tma.wait", kernel_);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx, "tma.ready", kernel_);
  B.CreateBr(loop);
  B.SetInsertPoint(loop);
  auto *fty = llvm::FunctionType::get(B.getInt32Ty(), {B.getInt32Ty(), B.getInt32Ty()}, false);
  auto *tryWait = llvm::InlineAsm::get(
      fty, "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }", "=r,r,r",
      true);
  llvm::Value *ok = B.CreateCall(fty, tryWait, {bar, parity});
  B.CreateCondBr(B.CreateICmpNE(ok, B.getInt32(0)), done, loop);
  B.SetInsertPoint(done);
}

void Emitter::emitAsyncLoad(const ir::Op &load) {
  const ir::Value *r = load.result();
  const AsyncBuffer &buf = asyncBuffer(r);
  int cls = asyncOf_.at(r);
  // In a pipelined loop the new value is yielded as the last carried stage: it takes the slot
  // after that stage's (the one the previous iteration's dot read). Outside loops, the
  // prologue's loads take slots 0, 1, ... in order.
  llvm::Value *slot = nullptr;
  bool inLoop = false;
  const ir::Op *yield = load.parent->ops.empty() ? nullptr : load.parent->ops.back().get();
  for (auto &a : load.parent->args) {
    if (!asyncOf_.count(a.get()) || asyncOf_.at(a.get()) != cls)
      continue;
    bool last = yield && yield->kind == OpKind::Yield && a->index >= 1 &&
                yield->operands.size() >= a->index && yield->operands[a->index - 1] == r;
    if (!last && inLoop)
      continue;
    inLoop = true;
    if (buf.dynamicFills)
      continue; // counted at run time (below)
    // TMA values count fills modulo 2 * slots (the parity of the slot's mbarrier phase).
    uint32_t wrap = static_cast<uint32_t>(buf.tmaMap >= 0 ? 2 * buf.slots : buf.slots);
    llvm::Value *next = B.CreateAdd(scalar(a.get()), B.getInt32(1));
    slot = B.CreateSelect(B.CreateICmpEQ(next, B.getInt32(wrap)), B.getInt32(0), next);
  }
  size_t rank = load.blockShape().size();
  if (buf.dynamicFills) {
    // The count continues from the fills before, wherever they were issued; a fill whose
    // guards fail is not issued and does not count.
    llvm::Value *issued = B.getTrue();
    for (size_t g = 4 + 3 * rank; g < load.operands.size(); ++g)
      issued = B.CreateAnd(issued, scalar(load.operands[g]));
    slot = takeCount(counterSlot(fillCount_, cls), static_cast<uint32_t>(2 * buf.slots), issued);
  }
  if (!slot)
    slot = B.getInt32(static_cast<uint32_t>(prologueLoads_[cls]++ % (buf.tmaMap >= 0 ? 2 * buf.slots : buf.slots)));
  if (buf.privateSlots)
    return emitPrivateAsyncLoad(load, slot);
  // An unguarded TMA fill at the top level is waited for at the end (drainTma).
  if (buf.tmaMap >= 0 && !inLoop && load.parent == &f.body && load.operands.size() == 4 + 3 * load.blockShape().size())
    tmaTopFills_.push_back({cls, static_cast<int>((prologueLoads_[cls] - 1) % (2 * buf.slots))});
  if (ws_ && buf.tmaMap >= 0 && !producer_) {
    // A warp-specialised consumer issues no copy: it counts the fill, and in the loop releases
    // the slot the previous iteration's dot read (retired by now: the same point at which the
    // unspecialised kernel's barrier before the refill would be), except in the first
    // iteration, when the fill takes a slot no dot has read.
    vals_[r] = {slot};
    // Releases belong to the loop whose dots read the class (not a flattened outer loop's early
    // prologue).
    if (inLoop && (!buf.dynamicFills || dotReads(*load.parent, cls))) {
      const ir::Op *loop = load.parent->parent;
      llvm::Value *notFirst = B.CreateICmpNE(scalar(load.parent->args[0].get()), scalar(loop->operands[0]));
      if (!buf.dynamicFills) {
        releaseSlot(buf, asyncSlotIndex(r), notFirst);
      } else {
        // This fill may not be issued (the loop's last iterations): release by the count of
        // releases, which follow the fills in order.
        llvm::Value *c = takeCount(counterSlot(releaseCount_, cls), static_cast<uint32_t>(2 * buf.slots), notFirst);
        releaseSlot(buf, B.CreateURem(c, B.getInt32(static_cast<uint32_t>(buf.slots))), notFirst);
      }
    }
    return;
  }
  // Inside a loop the slot was read by an earlier iteration's dot (the one before in a
  // pipeline; the same load's previous fill in an unpipelined loop): every warp must be done.
  bool refill = inLoop || load.parent != &f.body;
  // A barrier since the previous iteration's reads of this slot retired (attention's K and V:
  // the second cp.async wait's barrier follows the wgmma waits) covers this class alone, so
  // asyncBarrierValid_ stays as it is.
  bool covered = refill && !asyncBarrierValid_ && slotReadsRetiredBehindBarrier(cls, load.parent);
  if (producer_) // the producer waits on the slot's empty barrier instead (below)
    covered = true;
  if (!covered) {
    if (refill && !asyncBarrierValid_)
      barrier();
    asyncBarrierValid_ = refill;
  }
  if (buf.tmaMap >= 0) {
    // Thread 0 expects the tile's bytes on the slot's mbarrier and copies it in boxes of one
    // swizzle span of columns (each rows x swizzle bytes, as the wgmma layout stores them);
    // out-of-bounds elements arrive as zeros. A load whose guards fail (a pipeline's prefetch
    // past the loop's end) is never read, so it is not issued.
    // The issuing thread: thread 0, or a warp-specialised kernel's first producer thread.
    llvm::Value *pred = B.CreateICmpEQ(tid_, B.getInt32(producer_ ? static_cast<uint32_t>(32 * f.numWarps) : 0));
    for (size_t g = 4 + 3 * rank; g < load.operands.size(); ++g)
      pred = B.CreateAnd(pred, scalar(load.operands[g]));
    vals_[r] = {slot};
    llvm::Value *bar = tmaBarrierAddr(buf, asyncSlotIndex(r));
    llvm::Value *dst = asyncSlotAddr(r);
    llvm::Value *emptyBar = producer_ ? emptyBarrierAddr(buf, asyncSlotIndex(r)) : nullptr;
    llvm::Value *map = tensorMapAddr(buf.tmaMap);
    llvm::Value *row = B.CreateTrunc(scalar(load.operands[4 + 2 * rank]), B.getInt32Ty());
    llvm::Value *col = B.CreateTrunc(scalar(load.operands[4 + 2 * rank + 1]), B.getInt32Ty());
    // The issuing thread alone enters the branch: ptxas loops over a warp's active threads
    // around each copy (its operands could differ between them), so predicating the copies
    // instead would make the issuing warp step through its 32 lanes for every copy.
    auto *issue = llvm::BasicBlock::Create(ctx, "tma.issue", kernel_);
    auto *issued = llvm::BasicBlock::Create(ctx, "tma.issued", kernel_);
    B.CreateCondBr(pred, issue, issued);
    B.SetInsertPoint(issue);
    if (producer_)
      waitSlotReleased(emptyBar, slot, buf.slots);
    auto *ety = llvm::FunctionType::get(B.getVoidTy(), {B.getInt32Ty()}, false);
    B.CreateCall(ety,
                 llvm::InlineAsm::get(ety,
                                      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], " +
                                          std::to_string(buf.rows * buf.cols * buf.elemBytes) + ";",
                                      "r", true),
                 {bar});
    auto *cty = llvm::FunctionType::get(
        B.getVoidTy(), {B.getInt32Ty(), B.getInt64Ty(), B.getInt32Ty(), B.getInt32Ty(), B.getInt32Ty()}, false);
    auto *copy = llvm::InlineAsm::get(cty,
                                      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                                      "[$0], [$1, {$2, $3}], [$4];",
                                      "r,l,r,r,r", true);
    int64_t boxCols = buf.swizzle / static_cast<int64_t>(buf.elemBytes);
    for (int64_t j = 0; j * boxCols < buf.cols; ++j) {
      llvm::Value *d = j ? B.CreateAdd(dst, B.getInt32(static_cast<uint32_t>(j * buf.rows * buf.swizzle))) : dst;
      llvm::Value *x = j ? B.CreateAdd(col, B.getInt32(static_cast<uint32_t>(j * boxCols))) : col;
      B.CreateCall(cty, copy, {d, map, x, row, bar});
    }
    B.CreateBr(issued);
    B.SetInsertPoint(issued);
    return;
  }
  const ir::Layout &l = *r->layout;
  std::vector<llvm::Value *> P = regsIn(load.operands[0], l);
  std::vector<llvm::Value *> M;
  if (load.operands.size() > 1)
    M = regsIn(load.operands[1], l);
  llvm::Value *owner = ownerPredicate(l);
  int dupMask = ir::replicatedRegisterBits(l);
  llvm::Value *slotBase = B.CreateAdd(B.getInt32(static_cast<uint32_t>(buf.base)),
                                      B.CreateMul(slot, B.getInt32(static_cast<uint32_t>(buf.slotBytes))));
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt32Ty(), B.getInt64Ty(), B.getInt32Ty(), B.getInt1Ty()}, false);
  auto *cp = llvm::InlineAsm::get(fty, "@$3 cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,r,b", true);
  int perCopy = 16 / static_cast<int>(buf.elemBytes); // elements in one 16-byte cp.async
  // Swizzled slots: a register's row bits from 8 up and its column bits of whole swizzle rows
  // move the chunk by a constant (they leave the XOR selector, the row within its 8-row group,
  // unchanged), provided they are added, not XORed, to the thread's coordinate. Those chunks
  // are addressed as an earlier chunk's offset plus an immediate, which keeps one shared address
  // register per group instead of one per copy.
  int64_t perRow = buf.swizzle ? buf.swizzle / static_cast<int64_t>(buf.elemBytes) : 0;
  bool constSteps = buf.swizzle && l.rank() == 2 && buf.rows % 8 == 0 && ir::registerBitsDisjoint(l);
  std::map<std::pair<int64_t, int64_t>, llvm::Value *> groupOffset;
  for (int g = 0; g < l.numRegs(); g += perCopy) {
    if (g & dupMask)
      continue;
    llvm::Value *inSlot;
    if (constSteps) {
      ir::Layout::Basis rc = l.regCoord(g);
      int64_t rowStep = rc[0] & ~int64_t(7), colStep = rc[1] & ~(perRow - 1);
      std::pair<int64_t, int64_t> low{rc[0] - rowStep, rc[1] - colStep};
      llvm::Value *&base = groupOffset[low];
      if (!base) {
        const auto &lw = laneWarpCoord(l);
        llvm::Value *row = low.first ? B.CreateAdd(lw[0], B.getInt32(static_cast<uint32_t>(low.first))) : lw[0];
        llvm::Value *col = low.second ? B.CreateAdd(lw[1], B.getInt32(static_cast<uint32_t>(low.second))) : lw[1];
        base = B.CreateAdd(slotBase, swizzledOffset(row, col, buf.rows, buf.swizzle, buf.elemBytes));
      }
      int64_t delta = rowStep * buf.swizzle + (colStep / perRow) * buf.rows * buf.swizzle;
      inSlot = delta ? B.CreateAdd(base, B.getInt32(static_cast<uint32_t>(delta))) : base;
    } else {
      std::vector<llvm::Value *> c = coord(l, g);
      llvm::Value *off =
          buf.swizzle ? swizzledOffset(c[0], c[1], buf.rows, buf.swizzle, buf.elemBytes)
                      : B.CreateMul(B.CreateAdd(B.CreateMul(c[0], B.getInt32(static_cast<uint32_t>(buf.ld))), c[1]),
                                    B.getInt32(buf.elemBytes));
      inSlot = B.CreateAdd(slotBase, off);
    }
    llvm::Value *dst = B.CreatePtrToInt(smemRaw(inSlot), B.getInt32Ty());
    // A masked-off vector copies 0 bytes and zero-fills the slot (no global access).
    llvm::Value *size = M.empty() ? B.getInt32(16) : B.CreateSelect(M[g], B.getInt32(16), B.getInt32(0));
    B.CreateCall(fty, cp, {dst, B.CreatePtrToInt(P[g], B.getInt64Ty()), size, owner});
  }
  auto *commitTy = llvm::FunctionType::get(B.getVoidTy(), false);
  B.CreateCall(commitTy, llvm::InlineAsm::get(commitTy, "cp.async.commit_group;", "", true));
  commitStamp_[r] = ++commits_;
  vals_[r] = {slot};
}

void Emitter::waitAsyncOperands(const ir::Op &dot, bool asyncProxy) {
  // TMA copies: each thread waits on the slot's mbarrier, which also makes the data visible to
  // it (and to its wgmma: TMA writes through the async proxy).
  for (unsigned k = 0; k < 2; ++k)
    if (isTma(dot.operands[k]) && (k == 0 || dot.operands[1] != dot.operands[0]) &&
        !tmaWaitedBeforeLoop_.count(dot.operands[k]))
      waitTma(dot.operands[k]);
  int pending = INT_MAX;
  for (unsigned k = 0; k < 2; ++k) {
    const ir::Value *v = dot.operands[k];
    if (!isAsync(v) || isTma(v))
      continue;
    int stamp = commitStamp_.count(v) ? commitStamp_.at(v) : 0;
    pending = std::min(pending, commits_ - stamp);
  }
  if (pending == INT_MAX)
    return;
  pending = std::max(0, std::min(pending, 7));
  auto *fty = llvm::FunctionType::get(B.getVoidTy(), false);
  B.CreateCall(fty, llvm::InlineAsm::get(fty, "cp.async.wait_group " + std::to_string(pending) + ";", "", true));
  // wgmma reads shared memory through the async proxy (PTX ISA §9.7.15.6): the copies must be
  // made visible to it before the barrier that releases the readers.
  if (asyncProxy)
    B.CreateCall(fty, llvm::InlineAsm::get(fty, "fence.proxy.async.shared::cta;", "", true));
  barrier();
}

} // namespace tle::nvptx
