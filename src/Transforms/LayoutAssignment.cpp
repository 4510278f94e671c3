// Layout assignment: backward propagation of wanted layouts, then a forward pass that fixes
// each value's layout and inserts convert_layout where requirements conflict.
#include "tle/Transforms/LayoutAssignment.h"
#include "tle/Transforms/TensorMaps.h"
#include "tle/IR/Layout.h"
#include "tle/Transforms/AxisInfo.h"
#include "tle/Transforms/DotLowering.h"

#include <cassert>
#include <map>
#include <set>
#include <optional>

namespace tle::transforms {

using ir::Layout;
using ir::OpKind;

namespace {

class Assigner {
public:
  explicit Assigner(ir::Function &f) : f_(f), axis_(f) {}

  LayoutAssignmentStats run() {
    backward(f_.body);
    forward(f_.body);
    return stats_;
  }

private:
  ir::Function &f_;
  AxisInfoAnalysis axis_;
  std::map<const ir::Value *, Layout> want_;
  std::set<const ir::Value *> strong_;
  std::set<const ir::Value *> fixed_;
  std::map<const ir::Value *, std::optional<Layout>> anchor_;
  /// Values a dot operand or a scan is computed from (through elementwise ops and a loop's
  /// carried values): their loads keep 16-byte vectors per thread, since they are written to
  /// shared memory for the dot in those vectors, and a scan runs along each thread's
  /// contiguous registers before it shuffles.
  std::set<const ir::Value *> keepVector_;
  LayoutAssignmentStats stats_;

  Layout defaultFor(const ir::Type &t, unsigned elemBytes = 4) const {
    return ir::blockedLayout(t.shape, f_.numWarps, elemBytes);
  }

  /// The layout a raw_call passes a tile of type `t` in, as each thread's fragment.
  Layout fragmentOf(const ir::Op &call, const ir::Type &t) const {
    return ir::rawFragmentLayout(t.shape, f_.numWarps, ir::storageBytes(t.dtype()), call.rawContiguous());
  }

  /// The layout of a global load or store through the pointer tile `ptr` under `mask`
  /// (nullptr: none): the default blocked layout (16 bytes per thread along the last dim),
  /// except when axis info proves the pointers contiguous for at least those 16 bytes but the
  /// access still cannot use them as one vector, because the address alignment or the mask's
  /// runs are shorter (a row length not known to be a multiple of 16: `cols < n_cols`). Then
  /// each thread holds the vector the access can use (the rule of the emitter's vector width:
  /// min of contiguity, alignment and mask constancy, Triton's AxisInfo), and a warp's lanes
  /// cover consecutive addresses: 32 lanes x 4 bytes = 128 contiguous bytes per instruction,
  /// instead of 4-byte accesses 16 bytes apart that take four instructions to cover the
  /// same 512 bytes.
  Layout accessLayout(const ir::Value *ptr, const ir::Value *mask) const {
    const ir::Type &t = ptr->type;
    unsigned eb = ir::storageBytes(t.elem.pointee);
    unsigned last = static_cast<unsigned>(t.shape.size()) - 1;
    int64_t full = std::min<int64_t>(std::max(1u, 16 / std::max(1u, eb)), t.shape[last]);
    const AxisInfo &pi = axis_.get(ptr);
    // Only where the default puts every lane and warp along the last dim (it spans the whole
    // CTA in 16-byte vectors): there the narrower vector changes which registers hold which
    // elements and nothing else, so reductions and scans along any dim take the same shuffles
    // and barriers.
    if (pi.contiguity.size() != t.shape.size() || pi.contiguity[last] < full ||
        t.shape[last] < full * 32 * f_.numWarps)
      return defaultFor(t, eb);
    int64_t vec = std::min(full, axis_.accessVector(ptr, mask));
    return vec >= full ? defaultFor(t, eb) : ir::blockedLayoutWithVector(t.shape, f_.numWarps, vec);
  }

  /// Whether `v` is a scan's result, or computed from one through same-shape elementwise ops.
  static bool fromScan(const ir::Value *v, int depth = 0) {
    const ir::Op *d = v->def;
    if (!d || !v->type.isTile() || depth > 16)
      return false;
    if (d->kind == OpKind::Scan)
      return true;
    if (!ir::isElementwise(d->kind))
      return false;
    for (const ir::Value *o : d->operands)
      if (o->type.isTile() && o->type.shape == v->type.shape && fromScan(o, depth + 1))
        return true;
    return false;
  }

  /// Records that `v` should have layout `l`. The first wish wins, except that a strong wish
  /// (from a memory access or a dot: an anchor) overrides a weak one (a default, or one
  /// propagated from a weak wish).
  void wish(const ir::Value *v, const Layout &l, bool strong = false) {
    if (!v->type.isTile())
      return;
    if (!want_.count(v) || (strong && !strong_.count(v))) {
      want_[v] = l;
      if (strong)
        strong_.insert(v);
    }
  }

  /// The layout a value inherits from a dot accumulator it is computed from (through
  /// elementwise ops, reductions and expand_dims), if any.
  const Layout *anchorOf(const ir::Value *v, int depth = 0) {
    auto it = anchor_.find(v);
    if (it != anchor_.end())
      return it->second ? &*it->second : nullptr;
    std::optional<Layout> res;
    const ir::Op *d = v->def;
    if (d && v->type.isTile() && depth < 32) {
      if (d->kind == OpKind::Dot) {
        res = planDot(*d, f_.numWarps).acc;
      } else if (d->kind == OpKind::Wgmma) {
        res = ir::mmaAccLayout(v->type.shape[0], v->type.shape[1], f_.numWarps);
      } else if (d->kind == OpKind::WgmmaWait) {
        if (const Layout *a = anchorOf(d->operands[v->index], depth + 1))
          res = *a;
      } else if (d->kind == OpKind::For) {
        if (const Layout *a = anchorOf(d->regions[0]->terminator()->operands[v->index], depth + 1))
          res = *a;
      } else if (d->kind == OpKind::If) {
        // A branch's result (a select versioned by version-masks) is computed from what either
        // branch yields.
        for (auto &reg : d->regions)
          if (const Layout *a = anchorOf(reg->terminator()->operands[v->index], depth + 1)) {
            res = *a;
            break;
          }
      } else if (d->kind == OpKind::Reduce) {
        if (const Layout *a = anchorOf(d->operands[0], depth + 1))
          res = ir::sliceLayout(*a, d->axis());
      } else if (d->kind == OpKind::ExpandDims && d->operands[0]->type.isTile()) {
        if (const Layout *a = anchorOf(d->operands[0], depth + 1))
          res = ir::expandDimsLayout(*a, d->axis());
      } else if (ir::isElementwise(d->kind)) {
        for (const ir::Value *o : d->operands)
          if (o->type.isTile() && o->type.shape == v->type.shape)
            if (const Layout *a = anchorOf(o, depth + 1)) {
              res = *a;
              break;
            }
      }
    }
    auto &slot = anchor_[v];
    slot = res;
    return slot ? &*slot : nullptr;
  }

  /// The strongly wished layout (a load's or a store's) of the first value `v` is computed
  /// from through same-shape elementwise ops, not looking through `body`'s arguments (the
  /// loop-carried values being decided) except a prefetched load's; nullptr when there is none.
  const Layout *accessLayoutOf(const ir::Value *v, const ir::Block &body, int depth = 0) {
    if (!v->type.isTile() || depth > 16)
      return nullptr;
    if (v->owner == &body) {
      // A prefetched load's window (prefetchLoopLoads): the argument holds what a load yielded
      // by an earlier iteration read, so it has that load's layout.
      const ir::Value *y = v;
      for (int hop = 0; hop < 16 && y->owner == &body && y->index >= 1; ++hop)
        y = body.terminator()->operands[y->index - 1];
      if (y->def && y->def->kind == OpKind::Load && y->def->parent == &body)
        return accessLayoutOf(y, body, depth + 1);
      return nullptr;
    }
    if (strong_.count(v) && want_.count(v))
      return &want_[v];
    const ir::Op *d = v->def;
    if (!d || !ir::isElementwise(d->kind))
      return nullptr;
    for (const ir::Value *o : d->operands)
      if (o->type.isTile() && o->type.shape == v->type.shape)
        if (const Layout *l = accessLayoutOf(o, body, depth + 1))
          return l;
    return nullptr;
  }

  /// A value computed from a dot's accumulator keeps the accumulator's layout (a strong wish)
  /// unless an anchor (a store, say) wants otherwise: attention's scores stay in the mma layout.
  void keepAnchor(const ir::Value *r) {
    if (strong_.count(r))
      return;
    if (const Layout *a = anchorOf(r)) {
      want_[r] = *a;
      strong_.insert(r);
    }
  }

  // ---- Backward: uses before definitions.
  void backward(ir::Block &b) {
    for (auto it = b.ops.rbegin(); it != b.ops.rend(); ++it)
      backward(**it);
  }

  void backward(ir::Op &op) {
    switch (op.kind) {
    case OpKind::Store: {
      const ir::Value *ptr = op.operands[0];
      if (ptr->type.isTile()) {
        // A value computed from a dot's accumulator is converted for the store anyway; it keeps
        // 16-byte vectors per thread, which that conversion reads from shared memory. A scan's
        // result keeps them too (see keepVector_).
        Layout l = strong_.count(ptr) ? want_[ptr]
                   : anchorOf(op.operands[1]) || fromScan(op.operands[1])
                       ? defaultFor(ptr->type, ir::storageBytes(ptr->type.elem.pointee))
                       : accessLayout(ptr, op.operands.size() > 2 ? op.operands[2] : nullptr);
        // A store written with TMA stages the tile in shared memory from any layout: a value
        // computed from a dot's accumulator stays in it (no conversion before the staging).
        if (const Layout *a = op.isTmaStore() && !strong_.count(ptr) ? anchorOf(op.operands[1]) : nullptr)
          l = *a;
        // A TLE-Raw fragment is stored from the registers the native code left it in (each
        // thread's consecutive elements: vector stores), not converted through shared memory.
        if (const ir::Op *d = op.operands[1]->def; d && d->kind == OpKind::RawCall && !strong_.count(ptr))
          l = fragmentOf(*d, op.operands[1]->type);
        for (ir::Value *v : op.operands)
          wish(v, l, true);
      }
      return;
    }
    case OpKind::AsyncCopy: {
      // Every operand in the source's access layout (the vectors its pointers allow), or with
      // vec= (the author's promise of contiguity) the default one of 16 bytes per thread.
      const ir::Value *src = op.operands[1];
      Layout l = strong_.count(src) ? want_[src]
                 : op.sync.vec ? defaultFor(src->type, ir::storageBytes(src->type.elem.pointee))
                               : accessLayout(src, op.operands.size() > 2 ? op.operands[2] : nullptr);
      for (ir::Value *v : op.operands)
        wish(v, l, true);
      return;
    }
    case OpKind::Load: case OpKind::AtomicRMW: case OpKind::AtomicCAS: {
      const ir::Value *r = op.result();
      if (r->type.isTile()) {
        if (op.kind == OpKind::Load && !keepVector_.count(r))
          wish(r, accessLayout(op.operands[0], op.operands.size() > 1 ? op.operands[1] : nullptr), true);
        else
          wish(r, defaultFor(r->type, ir::storageBytes(r->type.dtype())), true);
        for (ir::Value *v : op.operands)
          wish(v, want_[r], true);
      }
      return;
    }
    case OpKind::For: {
      // A loop-carried value takes the layout its uses inside the body want (a load through a
      // carried pointer tile, a dot on a carried accumulator), so that it is not converted on
      // every iteration: a first walk over the body discovers those wishes, the second one
      // builds the body around them.
      ir::Block &body = *op.regions[0];
      ir::Op *yield = body.terminator();
      auto saved = want_;
      auto savedStrong = strong_;
      backward(body);
      // A dot operand carried by the loop (a pipelined window of loaded tiles) comes from what
      // the body yields for it, possibly through other carried values shifting by one stage.
      for (size_t round = 0; round < op.results.size(); ++round)
        for (size_t i = 0; i < op.results.size(); ++i)
          if (keepVector_.count(body.args[i + 1].get()) || keepVector_.count(op.result(static_cast<unsigned>(i))))
            keepVector_.insert(yield->operands[i]);
      std::vector<std::optional<Layout>> carried(op.results.size());
      for (size_t i = 0; i < op.results.size(); ++i) {
        const ir::Value *r = op.result(static_cast<unsigned>(i));
        if (!r->type.isTile())
          continue;
        // A strong wish (a memory access or a dot: e.g. the load that refills a pipelined
        // operand) wins over a weak one (e.g. a transposition's default).
        const ir::Value *candidates[] = {body.args[i + 1].get(), yield->operands[i], r};
        for (const ir::Value *v : {candidates[0], candidates[1]})
          if (!carried[i] && want_.count(v) && strong_.count(v))
            carried[i] = want_[v];
        // Next, the layout of the memory access the yielded value is computed from (an
        // accumulator of loaded rows: `acc += x * y`), so that the loop body needs no
        // conversion and only the value leaving the loop is converted, once; then what the
        // uses after the loop want.
        if (!carried[i])
          if (const Layout *l = accessLayoutOf(yield->operands[i], body))
            carried[i] = *l;
        if (!carried[i] && want_.count(r) && strong_.count(r))
          carried[i] = want_[r];
        for (const ir::Value *v : candidates)
          if (!carried[i] && want_.count(v))
            carried[i] = want_[v];
        // The default for the element size: a carried fp16 tile (a pipelined dot operand,
        // loaded 16 bytes per thread) keeps the layout of the loads that produce it.
        if (!carried[i])
          carried[i] = defaultFor(r->type, r->type.isTile() ? ir::storageBytes(r->type.dtype()) : 4);
      }
      // A value yielded unchanged from another carried value (a pipeline's window shifting by
      // one stage) takes that value's layout, so that the shift moves no data.
      for (size_t round = 0; round < op.results.size(); ++round)
        for (size_t i = 0; i < op.results.size(); ++i) {
          const ir::Value *y = yield->operands[i];
          if (carried[i] && y->owner == &body && y->index >= 1 && carried[y->index - 1])
            carried[i] = carried[y->index - 1];
        }
      want_ = std::move(saved);
      strong_ = std::move(savedStrong);
      for (size_t i = 0; i < op.results.size(); ++i) {
        if (!carried[i])
          continue;
        for (const ir::Value *v : {static_cast<const ir::Value *>(op.result(static_cast<unsigned>(i))),
                                   static_cast<const ir::Value *>(body.args[i + 1].get()),
                                   static_cast<const ir::Value *>(yield->operands[i])}) {
          want_[v] = *carried[i];
          strong_.insert(v);
        }
      }
      backward(body);
      for (size_t i = 0; i < op.results.size(); ++i)
        if (carried[i])
          wish(op.operands[3 + i], *carried[i], true);
      return;
    }
    case OpKind::Reduce:
      for (ir::Value *v : op.operands)
        if (v->type.isTile())
          wish(v, defaultFor(v->type));
      return;
    case OpKind::Wgmma: {
      // The accumulator (and a register A) in wgmma's register fragment, as a tl.dot's.
      const std::vector<int64_t> &acc = op.result()->type.shape;
      want_[op.result()] = ir::mmaAccLayout(acc[0], acc[1], f_.numWarps);
      strong_.insert(op.result());
      wish(op.operands[2], want_[op.result()], true);
      if (op.operands[0]->type.isTile())
        wish(op.operands[0], ir::mmaAccLayout(acc[0], op.operands[0]->type.shape[1], f_.numWarps), true);
      return;
    }
    case OpKind::WgmmaWait: // the results are the operands' registers
      return;
    case OpKind::WarpSpecialize:
      for (auto it = op.regions.rbegin(); it != op.regions.rend(); ++it)
        backward(**it);
      return;
    case OpKind::RemotePtr: // elementwise on the pointers (the rank is a scalar)
      if (op.result()->type.isTile() && want_.count(op.result()))
        wish(op.operands[0], want_[op.result()], strong_.count(op.result()) > 0);
      return;
    case OpKind::RawCall: // TLE-Raw fragments
      for (ir::Value *v : op.operands)
        if (v->type.isTile())
          wish(v, fragmentOf(op, v->type), true);
      return;
    case OpKind::InlineAsm: {
      // Elementwise over several results: the operands follow the first result.
      if (!op.result()->type.isTile())
        return;
      for (auto &r : op.results)
        wish(r.get(), defaultFor(r->type));
      const Layout l = want_[op.result()];
      for (ir::Value *v : op.operands)
        if (v->type.isTile())
          wish(v, l, strong_.count(op.result()) > 0);
      return;
    }
    case OpKind::Split:
      for (auto &r : op.results)
        wish(r.get(), defaultFor(r->type));
      wish(op.operands[0], defaultFor(op.operands[0]->type));
      return;
    case OpKind::ExtractTile: case OpKind::InsertTile:
      // Register-only where the layouts line up (forward decides), else through shared memory.
      wish(op.result(), defaultFor(op.result()->type));
      for (ir::Value *v : op.operands)
        if (v->type.isTile())
          wish(v, defaultFor(v->type));
      return;
    case OpKind::Gather:
      // Each thread reads src (staged in shared memory) at its own registers of index: the result takes index's layout, so index follows what the
      // result's users want; src keeps its own.
      wish(op.result(), defaultFor(op.result()->type));
      wish(op.operands[1], want_[op.result()], strong_.count(op.result()) > 0);
      wish(op.operands[0], defaultFor(op.operands[0]->type));
      return;
    case OpKind::Reshape: case OpKind::Cat: case OpKind::Join: case OpKind::Flip:
      // These move data through shared memory themselves: operands keep their own layouts.
      wish(op.result(), defaultFor(op.result()->type));
      for (ir::Value *v : op.operands)
        wish(v, defaultFor(v->type));
      return;
    case OpKind::Dot: {
      // The accumulator layout is fixed by the instruction; it flows back into loop-carried
      // accumulators. Operands are loaded in their own (coalesced) layouts and converted.
      DotPlan plan = planDot(op, f_.numWarps);
      keepVector_.insert(op.operands[0]);
      const ir::Value *b = op.operands[1];
      // A B carried into the loop (a loop argument: `prefetch` pipelined its load) arrives in a
      // cp.async slot, which needs the load's 16-byte vectors; the dot restages it from there.
      if (transforms::wgmmaDot(op, f_.arch, f_.numWarps) && transforms::wgmmaNeedsKMajor(b->type.dtype()) &&
          !(b->def && b->def->kind == OpKind::Permute) && b->def && b->type.rank() == 2) {
        // A tf32 / fp8 / int8 B of [K, N] (not a transposed view of [N, K]) is staged
        // K-contiguous for wgmma, which has no transpose for these types. Lanes along N (a warp's
        // load still reads whole rows) and 16 bytes of K in registers: the staging stores are
        // 16-byte vectors, 8 consecutive rows of the swizzled tile per phase, free of bank
        // conflicts. With N in registers (the vectorised load's layout) they were single
        // elements with 16-way conflicts: TF32 [4096^3] 74 -> 198 TFLOP/s.
        wish(b, ir::kContiguousLayout(b->type.shape, f_.numWarps, ir::storageBytes(b->type.dtype())), true);
      } else {
        keepVector_.insert(op.operands[1]);
      }
      want_[op.result()] = plan.acc;
      strong_.insert(op.result());
      wish(op.operands[2], plan.acc, true);
      return;
    }
    case OpKind::If: {
      for (size_t i = 0; i < op.results.size(); ++i) {
        const ir::Value *r = op.result(static_cast<unsigned>(i));
        if (!r->type.isTile())
          continue;
        keepAnchor(r); // and both branches yield it in that layout
        wish(r, defaultFor(r->type));
        for (auto &reg : op.regions)
          wish(reg->terminator()->operands[i], want_[r], strong_.count(r) > 0);
      }
      for (auto &reg : op.regions)
        backward(*reg);
      return;
    }
    case OpKind::While: {
      ir::Block &before = *op.regions[0], &after = *op.regions[1];
      for (size_t i = 0; i < op.results.size(); ++i) {
        const ir::Value *r = op.result(static_cast<unsigned>(i));
        if (!r->type.isTile())
          continue;
        wish(r, defaultFor(r->type));
        const Layout l = want_[r];
        wish(before.args[i].get(), l);
        wish(after.args[i].get(), l);
        wish(after.terminator()->operands[i], l);
        wish(before.terminator()->operands[i + 1], l);
      }
      backward(after);
      backward(before);
      for (size_t i = 0; i < op.results.size(); ++i)
        if (op.result(static_cast<unsigned>(i))->type.isTile())
          wish(op.operands[i], want_[op.result(static_cast<unsigned>(i))]);
      return;
    }
    default:
      break;
    }
    bool exclusiveScan = op.kind == OpKind::Scan && op.isExclusive(); // (sums, total): the sums lead
    if ((op.results.size() != 1 && !exclusiveScan) || !op.result()->type.isTile())
      return;
    const ir::Value *r = op.result();
    keepAnchor(r);
    wish(r, defaultFor(r->type));
    const Layout l = want_[r];
    bool strong = strong_.count(r) > 0;
    switch (op.kind) {
    case OpKind::ExpandDims:
      if (op.operands[0]->type.isTile())
        wish(op.operands[0], ir::squeezeLayout(l, op.axis()), strong);
      break;
    case OpKind::Broadcast:
      wish(op.operands[0], ir::broadcastOperandLayout(l, op.operands[0]->type.shape), strong);
      break;
    case OpKind::Permute: {
      const std::vector<int64_t> &order = op.permutation();
      std::vector<int64_t> inverse(order.size());
      for (size_t i = 0; i < order.size(); ++i)
        inverse[order[i]] = static_cast<int64_t>(i);
      wish(op.operands[0], ir::permuteLayout(l, inverse), strong);
      if (keepVector_.count(r))
        keepVector_.insert(op.operands[0]);
      break;
    }
    case OpKind::Scan:
      for (ir::Value *v : op.operands) {
        wish(v, l, strong);
        keepVector_.insert(v);
      }
      break;
    case OpKind::ConvertLayout:
      break;
    default:
      // A narrowing cast of a dot-derived value converts after casting (fewer bytes to move):
      // its operand keeps the accumulator's layout.
      if (op.kind == OpKind::Cast && ir::bitWidth(r->type.dtype()) < ir::bitWidth(op.operands[0]->type.dtype()) &&
          anchorOf(op.operands[0]))
        break;
      if (ir::isElementwise(op.kind))
        for (ir::Value *v : op.operands) {
          wish(v, l, strong);
          if (keepVector_.count(r))
            keepVector_.insert(v);
        }
      break;
    }
  }

  // ---- Forward: definitions before uses.
  void setLayout(ir::Value *v, const Layout &l) {
    v->layout = internLayout(f_, l);
    ++stats_.tiles;
    // A layout is "fixed" when an anchor chose it (a strong wish) or an op forces it from a fixed
    // operand; elementwise ops with only weak wishes follow fixed operands instead of converting.
    const ir::Op *d = v->def;
    bool forced = d && (d->kind == OpKind::Dot || d->kind == OpKind::Reduce || d->kind == OpKind::Permute ||
                        d->kind == OpKind::Scan || d->kind == OpKind::ExpandDims || d->kind == OpKind::Broadcast ||
                        d->kind == OpKind::Wgmma || d->kind == OpKind::WgmmaWait) &&
                  (d->kind == OpKind::Dot || d->kind == OpKind::Wgmma || d->kind == OpKind::WgmmaWait ||
                   (d->operands[0]->type.isTile() && fixed_.count(d->operands[0])));
    if (strong_.count(v) || forced)
      fixed_.insert(v);
  }

  Layout wanted(const ir::Value *v) {
    auto it = want_.find(v);
    return it != want_.end() ? it->second : defaultFor(v->type);
  }

  static bool compatible(const Layout &src, const Layout &dst) {
    return src == dst || ir::registerMap(src, dst).has_value();
  }

  /// Makes operand `i` of `op` available in layout `l`, inserting a convert_layout before `op`.
  void require(ir::Block &b, std::list<std::unique_ptr<ir::Op>>::iterator at, ir::Op &op, unsigned i, const Layout &l) {
    ir::Value *v = op.operands[i];
    if (!v->type.isTile())
      return;
    assert(v->layout && "operand without a layout");
    if (*v->layout == l)
      return;
    if (ir::registerMap(*v->layout, l)) {
      ++stats_.renumbered;
      return;
    }
    // Cheap index arithmetic is recomputed in the layout the use needs rather than moved
    // through shared memory (arange, splat, expand_dims, broadcast and elementwise ops on them).
    int budget = kRematerializeBudget;
    if (rematerializable(v, budget)) {
      op.operands[i] = rematerialize(b, at, v, l);
      ++stats_.rematerialized;
      return;
    }
    ir::Builder bld(&b);
    bld.setInsertionPoint(&b, at);
    ir::Op *cvt = bld.create(OpKind::ConvertLayout, op.loc, {v}, {v->type});
    cvt->result()->nameHint = v->nameHint;
    setLayout(cvt->result(), l);
    op.operands[i] = cvt->result();
    ++stats_.conversions;
  }

  /// tle.extract_tile / tle.insert_tile: register-only when the index is a constant and the
  /// window lines up with the source's layout (ir::subTileLayout, ir::windowRegisters): the
  /// extracted tile takes the window's part of the layout, an inserted tile is converted to it.
  /// Otherwise through shared memory (allocate-shared places the buffers, insert-barriers orders
  /// the accesses): unless the source is already staged (by an earlier extract of it, or a chain
  /// of inserts), when it is larger than kWholeStagingBytes, only the window moves, through a buffer of the window's
  /// shape (the window forms of insert_tile: an extract writes the source's elements in the
  /// window there and reads it whole; an insert writes the tile there and each thread reads back
  /// its elements in the window). Otherwise the source is staged in a local_alloc buffer of its
  /// shape (written whole by a shared-memory insert_tile at index 0), which its other extracts
  /// share, the window read or written there, and an insert's result read back whole.
  void tileWindowOp(ir::Block &b, std::list<std::unique_ptr<ir::Op>>::iterator at, ir::Op &op) {
    ir::Value *x = op.operands[0], *index = op.operands.back();
    ir::Value *r = op.result();
    const bool extract = op.kind == OpKind::ExtractTile;
    ir::TileWindow w = ir::tileWindow(op);
    std::optional<Layout> sub;
    if (index->def && index->def->kind == OpKind::Constant)
      if ((sub = ir::subTileLayout(*x->layout, w.tile)) &&
          !ir::windowRegisters(*x->layout, *sub, w.origin(index->def->intValue())))
        sub.reset();
    if (sub) {
      if (extract) {
        setLayout(r, *sub);
        return;
      }
      require(b, at, op, 1, *sub);
      setLayout(r, *x->layout);
      return;
    }
    ir::Builder bld(&b);
    bld.setInsertionPoint(&b, at);
    ir::Value *zero = bld.constInt(op.loc, ir::DType::I32, 0);
    ir::Value *buf = stagedBuffer(b, x, extract);
    if (!buf && windowOnly(x))
      return stageWindow(bld, op, w.tile, zero);
    if (!buf) {
      ir::Op *alloc = bld.create(OpKind::LocalAlloc, op.loc, {},
                                 {ir::Type(ir::ScalarType::ptrTo(stagedDType(x->type.dtype()), ir::AddrSpace::Shared))});
      alloc->setAllocShape(x->type.shape);
      buf = alloc->result();
      bld.create(OpKind::InsertTile, op.loc, {buf, x, zero}, {});
      if (extract)
        staged_[x] = buf;
    }
    if (extract) {
      op.operands[0] = buf;
      setLayout(r, wanted(r));
      return;
    }
    ir::Op *put = bld.create(OpKind::InsertTile, op.loc, {buf, op.operands[1], index}, {});
    put->setTileStrides(op.tileStrides());
    // The insert becomes the read of the whole buffer.
    op.kind = OpKind::ExtractTile;
    op.operands = {buf, zero};
    op.setTileStrides({});
    setLayout(r, wanted(r));
  }

  /// Sources larger than this are staged a window at a time (48 KiB: the shared memory a kernel
  /// has without opting in to more; whole staging of a larger tile would crowd out the kernel's
  /// own buffers, or not fit at all).
  static constexpr int64_t kWholeStagingBytes = 48 * 1024;

  /// Whether tile `x`'s windows go through shared memory a window at a time (tileWindowOp).
  static bool windowOnly(const ir::Value *x) {
    return ir::numElements(x->type.shape) * ir::storageBytes(stagedDType(x->type.dtype())) > kWholeStagingBytes;
  }

  /// Stages window-op `op` through a local_alloc buffer of the window's shape `window`: an
  /// extract becomes `insert_tile window %buf, %x, index` and a whole read of %buf; an insert,
  /// the tile written whole into %buf and `insert_tile window %x, %buf, index`.
  void stageWindow(ir::Builder &bld, ir::Op &op, const std::vector<int64_t> &window, ir::Value *zero) {
    ir::Value *x = op.operands[0], *index = op.operands.back();
    ir::Op *alloc = bld.create(OpKind::LocalAlloc, op.loc, {},
                               {ir::Type(ir::ScalarType::ptrTo(stagedDType(x->type.dtype()), ir::AddrSpace::Shared))});
    alloc->setAllocShape(window);
    ir::Value *buf = alloc->result();
    ir::Value *r = op.result();
    if (op.kind == OpKind::ExtractTile) {
      ir::Op *put = bld.create(OpKind::InsertTile, op.loc, {buf, x, index}, {});
      put->setWindowBuffer(true);
      put->setTileStrides(op.tileStrides());
      op.operands = {buf, zero};
      op.setTileStrides({});
    } else {
      bld.create(OpKind::InsertTile, op.loc, {buf, op.operands[1], zero}, {});
      op.operands[1] = buf;
      op.setWindowBuffer(true);
    }
    setLayout(r, op.kind == OpKind::ExtractTile ? wanted(r) : *x->layout);
  }

  /// A buffer of block `b` already holding tile `x` row-major: for an extract, the staging of an
  /// earlier extract of `x` (extracts share it); for an insert, the buffer a previous insert's result
  /// `x` was read back from whole (a chain of inserts writes one buffer); null when none.
  ir::Value *stagedBuffer(ir::Block &b, ir::Value *x, bool extract) const {
    if (extract) {
      auto it = staged_.find(x);
      return it != staged_.end() && it->second->def->parent == &b ? it->second : nullptr;
    }
    const ir::Op *d = x->def;
    bool wholeRead = d && d->kind == OpKind::ExtractTile && d->parent == &b && !d->operands[0]->type.isTile() &&
                     ir::tileWindow(*d).count == 1 && ir::tileWindow(*d).tile == ir::tileWindow(*d).source;
    if (!wholeRead)
      return nullptr;
    for (auto &[v, buf] : staged_)
      if (buf == d->operands[0])
        return nullptr; // extracts of another tile still read it
    return d->operands[0];
  }
  /// The element type of a staging buffer for tiles of `t`: i1 is staged as i8 bytes.
  static ir::DType stagedDType(ir::DType t) { return t == ir::DType::I1 ? ir::DType::I8 : t; }
  /// Tiles staged in shared memory for extract_tile, and their buffers (tileWindowOp).
  std::map<const ir::Value *, ir::Value *> staged_;

  static constexpr int kRematerializeBudget = 12;

  /// Whether `v` can be recomputed from scalars with at most `budget` cheap ops.
  bool rematerializable(const ir::Value *v, int &budget) const {
    if (!v->type.isTile())
      return true;
    const ir::Op *d = v->def;
    if (!d || --budget < 0)
      return false;
    switch (d->kind) {
    case OpKind::Arange: case OpKind::Splat:
      return true;
    case OpKind::ExpandDims: case OpKind::Broadcast: case OpKind::ConvertLayout:
      return rematerializable(d->operands[0], budget);
    default:
      if (!ir::isElementwise(d->kind) || d->kind == OpKind::Exp || d->kind == OpKind::Log || d->kind == OpKind::Sqrt ||
          d->kind == OpKind::FDiv || d->kind == OpKind::ExternCall)
        return false;
      for (const ir::Value *o : d->operands)
        if (!rematerializable(o, budget))
          return false;
      return true;
    }
  }

  /// Clones the computation of `v` before `at`, producing it in layout `l`.
  ir::Value *rematerialize(ir::Block &b, std::list<std::unique_ptr<ir::Op>>::iterator at, ir::Value *v, const Layout &l) {
    if (!v->type.isTile())
      return v;
    if (v->layout && compatible(*v->layout, l))
      return v;
    const ir::Op *d = v->def;
    if (d->kind == OpKind::ConvertLayout)
      return rematerialize(b, at, d->operands[0], l);
    std::vector<ir::Value *> ops;
    for (size_t k = 0; k < d->operands.size(); ++k) {
      ir::Value *o = d->operands[k];
      if (!o->type.isTile()) {
        ops.push_back(o);
        continue;
      }
      Layout need = d->kind == OpKind::ExpandDims  ? ir::squeezeLayout(l, d->axis())
                    : d->kind == OpKind::Broadcast ? ir::broadcastOperandLayout(l, o->type.shape)
                                                   : l;
      ops.push_back(rematerialize(b, at, o, need));
    }
    ir::Builder bld(&b);
    bld.setInsertionPoint(&b, at);
    ir::Op *c = bld.clone(*d, ops);
    setLayout(c->result(), l);
    return c->result();
  }

  void forward(ir::Block &b) {
    for (auto it = b.ops.begin(); it != b.ops.end(); ++it)
      forward(b, it, **it);
  }

  void forward(ir::Block &b, std::list<std::unique_ptr<ir::Op>>::iterator at, ir::Op &op) {
    switch (op.kind) {
    case OpKind::For: {
      ir::Block &body = *op.regions[0];
      for (size_t i = 0; i < op.results.size(); ++i) {
        ir::Value *init = op.operands[3 + i];
        if (!init->type.isTile())
          continue;
        Layout l = wanted(op.result(static_cast<unsigned>(i)));
        require(b, at, op, static_cast<unsigned>(3 + i), l);
        setLayout(body.args[i + 1].get(), l);
        setLayout(op.result(static_cast<unsigned>(i)), l);
      }
      forward(body);
      ir::Op *yield = body.terminator();
      auto yit = std::prev(body.ops.end());
      for (size_t i = 0; i < op.results.size(); ++i)
        if (op.result(i)->type.isTile())
          require(body, yit, *yield, static_cast<unsigned>(i), *op.result(i)->layout);
      return;
    }
    case OpKind::If: {
      for (auto &reg : op.regions)
        forward(*reg);
      for (size_t i = 0; i < op.results.size(); ++i) {
        ir::Value *r = op.result(static_cast<unsigned>(i));
        if (!r->type.isTile())
          continue;
        setLayout(r, *op.regions[0]->terminator()->operands[i]->layout);
        ir::Block &other = *op.regions[1];
        require(other, std::prev(other.ops.end()), *other.terminator(), static_cast<unsigned>(i), *r->layout);
      }
      return;
    }
    case OpKind::While: {
      ir::Block &before = *op.regions[0], &after = *op.regions[1];
      for (size_t i = 0; i < op.operands.size(); ++i) {
        ir::Value *init = op.operands[i];
        if (!init->type.isTile())
          continue;
        setLayout(before.args[i].get(), *init->layout);
        setLayout(after.args[i].get(), *init->layout);
        setLayout(op.result(static_cast<unsigned>(i)), *init->layout);
      }
      forward(before);
      forward(after);
      for (size_t i = 0; i < op.operands.size(); ++i) {
        if (!op.operands[i]->type.isTile())
          continue;
        const Layout &l = *op.operands[i]->layout;
        require(before, std::prev(before.ops.end()), *before.terminator(), static_cast<unsigned>(i + 1), l);
        require(after, std::prev(after.ops.end()), *after.terminator(), static_cast<unsigned>(i), l);
      }
      return;
    }
    case OpKind::Condition:
      return;
    case OpKind::Split:
      for (auto &res : op.results)
        setLayout(res.get(), wanted(res.get()));
      return;
    case OpKind::Wgmma: {
      const std::vector<int64_t> &acc = op.result()->type.shape;
      Layout l = ir::mmaAccLayout(acc[0], acc[1], f_.numWarps);
      require(b, at, op, 2, l);
      if (op.operands[0]->type.isTile())
        require(b, at, op, 0, ir::mmaAccLayout(acc[0], op.operands[0]->type.shape[1], f_.numWarps));
      setLayout(op.result(), l);
      return;
    }
    case OpKind::WgmmaWait:
      for (size_t i = 0; i < op.results.size(); ++i)
        setLayout(op.result(static_cast<unsigned>(i)), *op.operands[i]->layout);
      return;
    case OpKind::WarpSpecialize:
      for (auto &reg : op.regions)
        forward(*reg);
      return;
    case OpKind::Store: {
      if (!op.operands[0]->type.isTile())
        return;
      const Layout l = *op.operands[0]->layout;
      for (unsigned i = 1; i < op.operands.size(); ++i)
        require(b, at, op, i, l);
      return;
    }
    case OpKind::AsyncCopy: { // destination and mask in the source's layout
      const Layout l = *op.operands[1]->layout;
      for (unsigned i = 0; i < op.operands.size(); ++i)
        if (i != 1)
          require(b, at, op, i, l);
      return;
    }
    case OpKind::Yield: case OpKind::Return:
      return;
    case OpKind::RawCall:
      for (unsigned i = 0; i < op.operands.size(); ++i)
        if (op.operands[i]->type.isTile())
          require(b, at, op, i, fragmentOf(op, op.operands[i]->type));
      for (auto &res : op.results)
        setLayout(res.get(), fragmentOf(op, res->type));
      return;
    case OpKind::InlineAsm: case OpKind::RemotePtr: {
      if (!op.result()->type.isTile())
        return;
      const Layout l = wanted(op.result());
      for (unsigned i = 0; i < op.operands.size(); ++i)
        if (op.operands[i]->type.isTile())
          require(b, at, op, i, l);
      for (auto &res : op.results)
        setLayout(res.get(), l);
      return;
    }
    case OpKind::ExtractTile: case OpKind::InsertTile:
      return tileWindowOp(b, at, op);
    case OpKind::Reduce: case OpKind::Scan: {
      if (op.kind == OpKind::Scan && op.isExclusive()) {
        // The sums in the operand's layout, the total in its slice (as a reduce's result).
        const Layout l = *op.operands[0]->layout;
        setLayout(op.result(0), l);
        if (op.result(1)->type.isTile())
          setLayout(op.result(1), ir::sliceLayout(l, static_cast<unsigned>(op.axis())));
        return;
      }
      if (op.reduceKind() != ir::ReduceKind::Combine)
        break;
      // tl.reduce / tl.associative_scan: every operand in the first one's layout (the combine
      // works register by register); the results as for a single operand.
      const Layout l = *op.operands[0]->layout;
      for (unsigned i = 1; i < op.operands.size(); ++i)
        require(b, at, op, i, l);
      for (auto &res : op.results)
        if (res->type.isTile())
          setLayout(res.get(), op.kind == OpKind::Reduce ? ir::sliceLayout(l, op.axis()) : l);
      return;
    }
    default:
      break;
    }
    if (op.results.size() != 1 || !op.result()->type.isTile())
      return;
    ir::Value *r = op.result();
    switch (op.kind) {
    case OpKind::ExpandDims:
      if (op.operands[0]->type.isTile())
        setLayout(r, ir::expandDimsLayout(*op.operands[0]->layout, op.axis()));
      else
        setLayout(r, wanted(r));
      return;
    case OpKind::Broadcast: {
      Layout l = wanted(r);
      require(b, at, op, 0, ir::broadcastOperandLayout(l, op.operands[0]->type.shape));
      setLayout(r, l);
      return;
    }
    case OpKind::Reduce:
      setLayout(r, ir::sliceLayout(*op.operands[0]->layout, op.axis()));
      return;
    case OpKind::Permute:
      setLayout(r, ir::permuteLayout(*op.operands[0]->layout, op.permutation()));
      return;
    case OpKind::Scan:
      setLayout(r, *op.operands[0]->layout);
      return;
    case OpKind::Reshape: case OpKind::Cat: case OpKind::Join: case OpKind::Flip:
      setLayout(r, wanted(r));
      return;
    case OpKind::Gather: // index's layout (the backward wish made index follow the result's users)
      setLayout(r, *op.operands[1]->layout);
      return;
    case OpKind::Dot: {
      DotPlan plan = planDot(op, f_.numWarps);
      // mma.sync operands are staged through shared memory by the dot itself (fragments are
      // read just before each instruction); FMA operands are converted here.
      if (plan.kind == DotPlan::Kind::Fma) {
        require(b, at, op, 0, plan.a);
        require(b, at, op, 1, plan.b);
      }
      require(b, at, op, 2, plan.acc);
      setLayout(r, plan.acc);
      return;
    }
    case OpKind::ConvertLayout:
      return; // created here with its layout
    default:
      break;
    }
    Layout l = wanted(r);
    // A narrowing cast of a value whose layout differs from the one its users want is done in
    // the operand's layout: the conversion then moves the narrower type (e.g. an fp32 dot
    // accumulator stored as fp16).
    if (op.kind == OpKind::Cast && op.operands[0]->type.isTile() && !compatible(*op.operands[0]->layout, l) &&
        ir::bitWidth(r->type.dtype()) < ir::bitWidth(op.operands[0]->type.dtype()))
      l = *op.operands[0]->layout;
    bool follow = false;
    if (!strong_.count(r) && ir::isElementwise(op.kind)) {
      for (ir::Value *o : op.operands)
        if (o->type.isTile() && fixed_.count(o) && o->type.shape == r->type.shape) {
          if (!compatible(*o->layout, l)) {
            l = *o->layout;
            ++stats_.followed;
          }
          follow = true;
          break;
        }
    }
    setLayout(r, l);
    if (follow)
      fixed_.insert(r);
    for (unsigned i = 0; i < op.operands.size(); ++i)
      require(b, at, op, i, l);
  }
};

} // namespace

LayoutAssignmentStats assignLayouts(ir::Function &f) { return Assigner(f).run(); }

const ir::Layout *internLayout(ir::Function &f, const ir::Layout &l) {
  for (auto &p : f.layouts)
    if (*p == l)
      return p.get();
  f.layouts.push_back(std::make_unique<ir::Layout>(l));
  return f.layouts.back().get();
}

} // namespace tle::transforms
