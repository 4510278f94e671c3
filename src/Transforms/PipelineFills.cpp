// TMA fills of pipeline slots as explicit ops (see PipelineFills.h).
#include "tle/Transforms/PipelineFills.h"
#include "ProducerPartition.h"
#include "tle/Transforms/Pipeline.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <stdexcept>
#include <set>
#include <vector>

namespace tle::transforms {

using ir::OpKind;

namespace {

using OpIt = std::list<std::unique_ptr<ir::Op>>::iterator;

/// The type of fill numbers: unsigned, so that `n >= slots` compares them as PTX's .u32.
constexpr ir::DType kNumber = ir::DType::U32;

/// `pipeline_mbarrier pipeline=cls [empty] %n` before B's point: the full (or empty) mbarrier
/// of the slot fill number `n` takes.
ir::Value *slotMbarrier(ir::Builder &B, SourceLoc loc, int cls, ir::Value *n, bool empty = false) {
  ir::Op *op = B.create(OpKind::PipelineMbarrier, loc, {n},
                        {ir::Type(ir::ScalarType::ptrTo(ir::DType::I64, ir::AddrSpace::Shared))});
  op->sync.pipeline = cls;
  op->sync.empty = empty;
  return op->result();
}

/// `pipeline_slot pipeline=cls %n` before B's point: the slot's first element, a `*T_shared`.
ir::Value *slotPointer(ir::Builder &B, SourceLoc loc, int cls, ir::Value *n, ir::DType t) {
  ir::Op *op = B.create(OpKind::PipelineSlot, loc, {n}, {ir::Type(ir::ScalarType::ptrTo(t, ir::AddrSpace::Shared))});
  op->sync.pipeline = cls;
  return op->result();
}

/// The pipeline class whose slots `op` fills, or -1: a load marked pipeline=k of a class with
/// private slots (each thread's own copies of a tile of pointers) or with shared slots of
/// [rows, cols] tiles, loaded through a descriptor of that block shape for a TMA class, as a
/// [rows, cols] tile of pointers for a cp.async class.
int fillClass(const ir::Function &f, const ir::Op &op) {
  if (op.kind != OpKind::Load || op.pipeline() < 0 || size_t(op.pipeline()) >= f.pipelines.size())
    return -1;
  const ir::PipelineBuffer &buf = f.pipelines[size_t(op.pipeline())];
  const ir::Type &ptrs = op.operands[0]->type;
  const bool pointerTile = ptrs.isTile() && ptrs.elem.isPointer() && ptrs.elem.space == ir::AddrSpace::Global;
  if (buf.privateSlots)
    return pointerTile && buf.tmaMap < 0 ? op.pipeline() : -1;
  if (op.result()->type.shape != std::vector<int64_t>{buf.rows, buf.cols})
    return -1;
  if (buf.tmaMap >= 0)
    return op.hasDescriptor() && op.blockShape().size() == 2 ? op.pipeline() : -1;
  return pointerTile ? op.pipeline() : -1;
}

/// Whether every op around `op` up to the function body is a `for`, an `if` or a `while` (a count
/// can be carried out of it as an iteration value or a result).
bool countCarriedAround(const ir::Function &f, const ir::Op &op) {
  for (const ir::Block *b = op.parent; b != &f.body; b = b->parent->parent) {
    const ir::Op *around = b->parent;
    if (!around || !around->parent ||
        (around->kind != OpKind::For && around->kind != OpKind::If && around->kind != OpKind::While))
      return false;
  }
  return true;
}

/// Whether `op` is a TMA fill of class `cls` or holds one in its regions.
bool holdsClass(const ir::Function &f, ir::Op &op, int cls) {
  bool any = fillClass(f, op) == cls;
  for (auto &r : op.regions)
    ir::walk(*r, [&](ir::Op &o) { any |= fillClass(f, o) == cls; });
  return any;
}

class FillLowering {
public:
  /// `split`: the kernel is a producer/consumer split (SplitFills says what that adds).
  FillLowering(ir::Function &f, int cls, SplitFills *split)
      : f_(f), cls_(cls), buf_(f.pipelines[size_t(cls)]), tma_(buf_.tmaMap >= 0),
        wrap_(tma_ ? 2 * buf_.slots : buf_.slots), split_(tma_ ? split : nullptr) {}

  /// The class's fill number and, in a split kernel's dynamic class, its release number, each
  /// the last one taken so far.
  struct Counts {
    ir::Value *fill = nullptr, *release = nullptr;
  };

  /// Rewrites the class's fills in `b` and the loops in it, counting on from `counts`; returns
  /// the counts after the last of them.
  Counts block(ir::Block &b, Counts counts) {
    for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
      ir::Op &op = **it;
      if (fillClass(f_, op) == cls_) {
        auto next = std::next(it);
        counts = fill(b, it, counts);
        it = std::prev(next);
      } else if (op.kind == OpKind::For && holdsClass(f_, op, cls_)) {
        counts = loop(op, counts);
      } else if (op.kind == OpKind::If && holdsClass(f_, op, cls_)) {
        counts = branch(op, counts);
      } else if (op.kind == OpKind::While && holdsClass(f_, op, cls_)) {
        counts = whileLoop(op, counts);
      }
    }
    return counts;
  }

  unsigned rewritten = 0;

private:
  ir::Function &f_;
  const int cls_;
  const ir::PipelineBuffer &buf_;
  const bool tma_; ///< TMA copies (else cp.async)
  const int wrap_; ///< fill numbers run 0 .. wrap_ - 1: twice the slots for TMA (the parity)
  SplitFills *split_; ///< a split kernel's TMA class (the producer issues its copies)

  /// `count` carried through `loop` as a new iteration value named `name`; returns the body's
  /// argument.
  static ir::Value *carry(ir::Op &loop, ir::Value *count, const char *name) {
    loop.operands.push_back(count);
    return loop.regions[0]->addArg(ir::Type::scalar(kNumber), name);
  }
  /// The loop's result for the count its body yields last, `out`.
  static ir::Value *carryOut(ir::Op &loop, ir::Value *out, const char *name) {
    loop.regions[0]->terminator()->operands.push_back(out);
    ir::Value *r = loop.addResult(ir::Type::scalar(kNumber));
    r->nameHint = name;
    return r;
  }

  /// The counts carried through `loop` as new iteration values: their inits `counts`, their
  /// results the counts after the loop. In a split kernel, a loop that refills a dynamic class
  /// its dots read releases the last fill's slot after it (releaseAfterLoop).
  Counts loop(ir::Op &loop, Counts counts) {
    ir::Block &body = *loop.regions[0];
    const bool releasesAfter = split_ && counts.release && refillsReadSlots(body);
    Counts in{carry(loop, counts.fill, "fill"), counts.release ? carry(loop, counts.release, "release") : nullptr};
    Counts out = block(body, in);
    Counts after{carryOut(loop, out.fill, "fill"), out.release ? carryOut(loop, out.release, "release") : nullptr};
    if (releasesAfter)
      after.release = releaseAfterLoop(loop, after.release);
    return after;
  }

  /// The counts after `ifOp`, whose branches count on from `counts`: new results, each branch
  /// yielding its own.
  Counts branch(ir::Op &ifOp, Counts counts) {
    Counts then = block(*ifOp.regions[0], counts), other = block(*ifOp.regions[1], counts);
    auto join = [&](ir::Value *a, ir::Value *b, const char *name) {
      ifOp.regions[0]->terminator()->operands.push_back(a);
      ifOp.regions[1]->terminator()->operands.push_back(b);
      ir::Value *r = ifOp.addResult(ir::Type::scalar(kNumber));
      r->nameHint = name;
      return r;
    };
    return {join(then.fill, other.fill, "fill"), counts.release ? join(then.release, other.release, "release") : nullptr};
  }

  /// The counts after the `while` `op`, carried through it: a new carried value (the "before"
  /// region's argument), forwarded by its condition to the "after" region, whose yield carries
  /// it on, and a new result (the count the last condition forwarded).
  Counts whileLoop(ir::Op &op, Counts counts) {
    ir::Block &before = *op.regions[0], &after = *op.regions[1];
    ir::Value *beforeFill = nullptr, *beforeRelease = nullptr, *afterFill = nullptr, *afterRelease = nullptr;
    op.operands.push_back(counts.fill);
    beforeFill = before.addArg(ir::Type::scalar(kNumber), "fill");
    if (counts.release) {
      op.operands.push_back(counts.release);
      beforeRelease = before.addArg(ir::Type::scalar(kNumber), "release");
    }
    Counts b = block(before, {beforeFill, beforeRelease});
    before.terminator()->operands.push_back(b.fill);
    afterFill = after.addArg(ir::Type::scalar(kNumber), "fill");
    if (counts.release) {
      before.terminator()->operands.push_back(b.release);
      afterRelease = after.addArg(ir::Type::scalar(kNumber), "release");
    }
    Counts a = block(after, {afterFill, afterRelease});
    after.terminator()->operands.push_back(a.fill);
    if (counts.release)
      after.terminator()->operands.push_back(a.release);
    Counts result{op.addResult(ir::Type::scalar(kNumber)), nullptr};
    result.fill->nameHint = "fill";
    if (counts.release) {
      result.release = op.addResult(ir::Type::scalar(kNumber));
      result.release->nameHint = "release";
    }
    return result;
  }

  /// Whether the class's values are carried by `body`'s loop (a pipelined loop of the class).
  bool carriesClass(const ir::Block &body) const {
    return std::any_of(body.args.begin(), body.args.end(), [&](const auto &a) { return classOf(a.get()) == cls_; });
  }
  /// Whether a dot of `b` itself reads one of the class's values.
  bool dotReads(const ir::Block &b) const {
    return std::any_of(b.ops.begin(), b.ops.end(), [&](const auto &o) {
      return o->kind == OpKind::Dot && (classOf(o->operands[0]) == cls_ || classOf(o->operands[1]) == cls_);
    });
  }
  /// Whether `body` (a loop's, not yet rewritten) refills the class it carries and its dots read.
  bool refillsReadSlots(const ir::Block &body) const {
    bool fills = std::any_of(body.ops.begin(), body.ops.end(), [&](const auto &o) { return fillClass(f_, *o) == cls_; });
    return fills && carriesClass(body) && dotReads(body);
  }
  int classOf(const ir::Value *v) const {
    auto it = split_->values.find(v);
    return it == split_->values.end() ? -1 : it->second;
  }

  /// After a loop whose iterations released the slot their predecessor's dots read: the slot of
  /// the last fill, read by the last iteration, released when the loop ran at all. Returns the
  /// release number after it.
  ir::Value *releaseAfterLoop(ir::Op &loop, ir::Value *count) {
    ir::Block &outer = *loop.parent;
    ir::Builder B(&outer);
    B.setInsertionPoint(&outer, std::next(outer.find(&loop)));
    ir::Value *ran = B.cmp(loop.loc, ir::CmpPred::Lt, loop.operands[0], loop.operands[1]);
    return release(B, loop.loc, ran, count);
  }

  /// Releases, when `when` holds, the slot of the release number after `count` (its "empty"
  /// mbarrier, one arrival per consumer warpgroup or thread); returns the release number after it.
  ir::Value *release(ir::Builder &B, SourceLoc loc, ir::Value *when, ir::Value *count) {
    ir::Value *n = B.select(loc, when, nextNumber(B, loc, count), count);
    arriveEmpty(B, loc, when, n);
    return n;
  }

  /// `if when { mbarrier_arrive per=... (pipeline_mbarrier empty n) }`.
  void arriveEmpty(ir::Builder &B, SourceLoc loc, ir::Value *when, ir::Value *n) {
    ir::Block *then = guarded(B, loc, when);
    ir::Builder T(then);
    T.setInsertionPoint(then, then->ops.begin());
    ir::Op *arrive = T.create(OpKind::MbarrierArrive, loc, {slotMbarrier(T, loc, cls_, n, true)}, {});
    arrive->sync.per = split_->perWarpgroup ? ir::Arrivers::Warpgroup : ir::Arrivers::Thread;
  }

  /// The producer's wait, before it fills slot n: `if guard { mbarrier_wait (pipeline_mbarrier
  /// empty n), n < slots }` (the release of fill n - slots completes the phase before fill n's
  /// own, parity 1 - (n / slots) % 2; before any release, parity 1 of a fresh mbarrier passes).
  void waitReleased(ir::Builder &B, SourceLoc loc, ir::Value *guard, ir::Value *n) {
    ir::Builder W = B;
    if (guard) {
      ir::Block *then = guarded(B, loc, guard);
      W.setInsertionPoint(then, then->ops.begin());
      split_->producerOps.push_back(then->parent);
    }
    ir::Value *empty = slotMbarrier(W, loc, cls_, n, true);
    ir::Value *parity = W.cmp(loc, ir::CmpPred::Lt, n, W.constInt(loc, kNumber, buf_.slots));
    ir::Op *wait = W.create(OpKind::MbarrierWait, loc, {empty, parity}, {});
    if (!guard)
      split_->producerOps.push_back(wait);
  }

  /// A split kernel's consumers, at a fill in a loop that carries the class: release the slot
  /// the previous iteration's dots read, which this fill takes (not in the first iteration,
  /// whose fill takes a slot no dot of the loop has read). A dynamic class counts its
  /// releases, which follow its fills in order. Returns the release number after it.
  ir::Value *releaseAtFill(ir::Builder &B, ir::Block &b, SourceLoc loc, ir::Value *c, ir::Value *count) {
    if (!b.parent || b.parent->kind != OpKind::For || !carriesClass(b) || (count && !dotReads(b)))
      return count;
    const ir::Op &loop = *b.parent;
    ir::Value *notFirst = B.cmp(loc, ir::CmpPred::Ne, b.args[0].get(), loop.operands[0]);
    if (count)
      return release(B, loc, notFirst, count);
    arriveEmpty(B, loc, notFirst, c);
    return nullptr;
  }

  static const ir::Op *constantDef(const ir::Value *v) {
    return v->def && v->def->kind == OpKind::Constant ? v->def : nullptr;
  }

  /// (count + 1) mod wrap_: a constant when count is one.
  ir::Value *nextNumber(ir::Builder &B, SourceLoc loc, ir::Value *count) {
    if (const ir::Op *c = constantDef(count))
      return B.constInt(loc, kNumber, (c->intValue() + 1) % wrap_);
    ir::Value *n = B.binary(OpKind::Add, loc, count, B.constInt(loc, kNumber, 1));
    ir::Value *wrapped = B.cmp(loc, ir::CmpPred::Eq, n, B.constInt(loc, kNumber, wrap_));
    return B.select(loc, wrapped, B.constInt(loc, kNumber, 0), n);
  }

  ir::Value *i32(ir::Builder &B, SourceLoc loc, ir::Value *v) {
    return B.cast(loc, v, ir::ScalarType{ir::DType::I32});
  }

  /// The `if` that issues the copies when `guard` holds; its `then` block for them.
  ir::Block *guarded(ir::Builder &B, SourceLoc loc, ir::Value *guard) {
    ir::Op *ifOp = B.create(OpKind::If, loc, {guard}, {});
    for (int i = 0; i < 2; ++i) {
      ifOp->regions.push_back(std::make_unique<ir::Block>());
      ifOp->regions.back()->parent = ifOp;
      ir::Builder(ifOp->regions.back().get()).create(OpKind::Yield, loc, {}, {});
    }
    return ifOp->regions[0].get();
  }

  /// The expect-tx and one tma_load per box of the swizzle's column span, before `B`'s point;
  /// returns the arrival and the copies.
  std::vector<ir::Op *> issue(ir::Builder &B, SourceLoc loc, ir::Value *bar, ir::Value *dst, ir::Value *row,
                              ir::Value *col) {
    ir::Op *arrive = B.create(OpKind::MbarrierArrive, loc, {bar}, {});
    arrive->sync.tx = buf_.rows * buf_.cols * buf_.elemBytes;
    std::vector<ir::Op *> ops{arrive};
    const int64_t span = buf_.swizzle / static_cast<int64_t>(buf_.elemBytes); // columns per box
    for (int64_t j = 0; j * span < buf_.cols; ++j) {
      ir::Value *d = dst, *x = col;
      if (j) {
        ir::Value *step = B.constInt(loc, ir::DType::I32, j * buf_.rows * span);
        d = B.create(OpKind::AddPtr, loc, {dst, step}, {dst->type})->result();
        x = B.binary(OpKind::Add, loc, col, B.constInt(loc, ir::DType::I32, j * span));
      }
      ops.push_back(B.create(OpKind::TmaLoad, loc, {d, bar, row, x}, {}));
      ops.back()->sync.map = buf_.tmaMap;
    }
    return ops;
  }

  /// A cp.async fill (shared or private slots) as its number, `async_copy` of the load's pointers
  /// (and mask) into the slot and the slot's pipeline_value; returns the number.
  ir::Value *copyFill(ir::Block &b, OpIt it, ir::Value *count) {
    ir::Op &load = **it;
    ir::Builder B(&b);
    B.setInsertionPoint(&b, it);
    ir::Value *c = nextNumber(B, load.loc, count);
    std::vector<ir::Value *> ops{slotPointer(B, load.loc, cls_, c, load.result()->type.dtype()), load.operands[0]};
    if (load.operands.size() > 1)
      ops.push_back(load.operands[1]);
    B.create(OpKind::AsyncCopy, load.loc, ops, {})->sync.vec = buf_.privateSlots ? buf_.copyBytes : 16;
    replaceFill(b, it, tileOf(B, load, c));
    return c;
  }

  /// `pipeline_value pipeline=cls %c` before B's point: the tile that fill number `c` placed,
  /// with the type, layout and name of `load`'s result.
  ir::Value *tileOf(ir::Builder &B, const ir::Op &load, ir::Value *c) {
    const ir::Value *r = load.result();
    ir::Op *value = B.create(OpKind::PipelineValue, load.loc, {c}, {r->type});
    value->sync.pipeline = cls_;
    value->result()->layout = r->layout;
    value->result()->nameHint = r->nameHint;
    return value->result();
  }

  /// Replaces the fill at `it` by `tile` in every use, and erases it.
  void replaceFill(ir::Block &b, OpIt it, ir::Value *tile) {
    replaceUses((*it)->result(), tile);
    b.ops.erase(it);
    ++rewritten;
  }

  /// Replaces the fill at `it` by its ops; returns the counts after it.
  Counts fill(ir::Block &b, OpIt it, Counts counts) {
    if (!tma_)
      return {copyFill(b, it, counts.fill), nullptr};
    ir::Value *count = counts.fill;
    ir::Op &load = **it;
    const SourceLoc loc = load.loc;
    const size_t rank = load.blockShape().size();
    ir::Value *r = load.result();
    ir::Builder B(&b);
    B.setInsertionPoint(&b, it);
    ir::Value *c = nextNumber(B, loc, count);
    ir::Value *bar = slotMbarrier(B, loc, cls_, c), *dst = slotPointer(B, loc, cls_, c, r->type.dtype());
    ir::Value *row = i32(B, loc, load.operands[4 + 2 * rank]);
    ir::Value *col = i32(B, loc, load.operands[4 + 2 * rank + 1]);
    ir::Value *guard = nullptr;
    for (size_t g = 4 + 3 * rank; g < load.operands.size(); ++g)
      guard = guard ? B.binary(OpKind::And, loc, guard, load.operands[g]) : load.operands[g];
    if (split_)
      waitReleased(B, loc, guard, c);
    if (guard) {
      ir::Block *then = guarded(B, loc, guard);
      ir::Builder T(then);
      T.setInsertionPoint(then, then->ops.begin());
      issue(T, loc, bar, dst, row, col);
      if (split_)
        split_->producerOps.push_back(then->parent);
    } else {
      std::vector<ir::Op *> issued = issue(B, loc, bar, dst, row, col);
      if (split_)
        split_->producerOps.insert(split_->producerOps.end(), issued.begin(), issued.end());
    }
    ir::Value *v = tileOf(B, load, c);
    // A dynamic class counts only the fills issued.
    ir::Value *after = buf_.dynamicFills && guard ? B.select(loc, guard, c, count) : c;
    ir::Value *released = split_ ? releaseAtFill(B, b, loc, c, counts.release) : nullptr;
    replaceFill(b, it, v);
    return {after, released};
  }

  void replaceUses(const ir::Value *from, ir::Value *to) { ir::replaceUsesFrom(f_.body, f_.body.ops.begin(), from, to); }
};

/// The pipeline_value that `v` is, or that the tl.trans view `v` (a Permute marked pipeline=k)
/// reads; null otherwise.
const ir::Op *fillView(const ir::Value *v) {
  if (v->def && v->def->kind == OpKind::Permute)
    v = v->def->operands[0];
  return v->def && v->def->kind == OpKind::PipelineValue ? v->def : nullptr;
}

/// The fill number a value of a rewritten class stands for (fillView's operand); null otherwise.
ir::Value *numberOf(const ir::Value *v) {
  const ir::Op *view = fillView(v);
  return view ? view->operands[0] : nullptr;
}

/// A pipeline_value of class `cls` for number `n`, with `like`'s type, layout and name, before `at`.
ir::Value *viewOf(ir::Block &b, OpIt at, int cls, ir::Value *n, const ir::Value *like) {
  ir::Builder B(&b);
  B.setInsertionPoint(&b, at);
  ir::Op *op = B.create(OpKind::PipelineValue, like->def ? like->def->loc : b.parent->loc, {n}, {like->type});
  op->sync.pipeline = cls;
  op->result()->layout = like->layout;
  op->result()->nameHint = like->nameHint;
  return op->result();
}

/// Loops carry the fill numbers of `values`' classes in `rewritten` instead of their tiles: each
/// such iteration value becomes a number, viewed as the tile by a pipeline_value at the body's
/// start and after the loop (the views hold no registers; their readers, the dots, take the
/// number). Then each pipeline_wait of such a tile becomes the wait it stands for:
/// mbarrier_wait on the slot's pipeline_mbarrier at the parity n >= slots.
void carryNumbers(ir::Function &f, std::set<int> rewritten) {
  std::map<const ir::Value *, int> values = pipelineValues(f);
  // Only classes whose every value is a pipeline_value, a view of one, or a `for`'s iteration
  // value or result (not an `if`'s or a `while`'s, whose numbers would need carrying too).
  for (auto &[v, cls] : values) {
    bool forArg = !v->def && v->owner && v->owner->parent && v->owner->parent->kind == OpKind::For && v->index >= 1;
    bool ok = forArg || (v->def && (v->def->kind == OpKind::PipelineValue || v->def->kind == OpKind::Permute ||
                                    v->def->kind == OpKind::For));
    if (!ok)
      rewritten.erase(cls);
  }
  auto carried = [&](const ir::Value *v) {
    auto it = values.find(v);
    return it != values.end() && rewritten.count(it->second) ? it->second : -1;
  };
  std::vector<std::pair<ir::Op *, size_t>> slots; // (loop, iteration value) whose type changes
  ir::walk(f.body, [&](ir::Op &op) {
    if (op.kind != OpKind::For)
      return;
    ir::Block &body = *op.regions[0];
    for (size_t i = 0; i + 3 < op.operands.size(); ++i) {
      int cls = carried(body.args[i + 1].get());
      if (cls < 0)
        continue;
      slots.push_back({&op, i});
      ir::Value *arg = body.args[i + 1].get(), *res = op.result(static_cast<unsigned>(i));
      ir::Value *inside = viewOf(body, body.ops.begin(), cls, arg, arg);
      ir::replaceUsesFrom(body, std::next(body.ops.begin()), arg, inside);
      ir::Block &outer = *op.parent;
      auto after = std::next(outer.find(&op));
      ir::Value *outside = viewOf(outer, after, cls, res, res);
      ir::replaceUsesFrom(outer, std::next(outer.find(&op), 2), res, outside);
      arg->type = res->type = ir::Type::scalar(kNumber);
      arg->layout = res->layout = nullptr;
      inside->def->operands[0] = arg;
      outside->def->operands[0] = res;
    }
  });
  for (auto [loop, i] : slots) {
    ir::Value *&init = loop->operands[3 + i];
    ir::Value *&next = loop->regions[0]->terminator()->operands[i];
    init = numberOf(init);
    next = numberOf(next);
  }
  std::vector<ir::Op *> waits;
  ir::walk(f.body, [&](ir::Op &op) {
    const ir::Op *view = op.kind == OpKind::PipelineWait ? fillView(op.operands[0]) : nullptr;
    if (view && rewritten.count(view->sync.pipeline))
      waits.push_back(&op);
  });
  for (ir::Op *w : waits) {
    ir::Value *n = numberOf(w->operands[0]);
    int cls = fillView(w->operands[0])->sync.pipeline;
    ir::Block &b = *w->parent;
    ir::Builder B(&b);
    B.setInsertionPoint(&b, b.find(w));
    ir::Value *bar = slotMbarrier(B, w->loc, cls, n);
    ir::Value *parity = B.cmp(w->loc, ir::CmpPred::Ge, n, B.constInt(w->loc, kNumber, f.pipelines[size_t(cls)].slots));
    B.create(OpKind::MbarrierWait, w->loc, {bar, parity}, {});
    b.ops.erase(b.find(w));
  }
}

} // namespace

unsigned lowerPipelineFills(ir::Function &f, DiagnosticEngine *diags) {
  const bool split = producerConsumerSplit(f);
  // The classes to rewrite: those whose every fill is one fillClass takes, under `for`s, `if`s and
  // `while`s only (the pipeline pass plans no class in a kernel's own warp_specialize partitions).
  std::set<int> classes;
  const ir::Op *stray = nullptr; // a fill no count reaches, or not of its class's shape
  ir::walk(f.body, [&](ir::Op &op) {
    if (op.kind != OpKind::Load || op.pipeline() < 0 || size_t(op.pipeline()) >= f.pipelines.size())
      return;
    int k = op.pipeline();
    bool ok = fillClass(f, op) == k && countCarriedAround(f, op);
    if (!ok && !stray)
      stray = &op;
    classes.insert(k);
  });
  if (stray) {
    std::string why = "a load marked pipeline=" + std::to_string(stray->pipeline()) +
                      " is not a fill pipeline-fills can number: its tile is not of the pipeline's slot shape, or it "
                      "lies in a warp_specialize partition (a count is carried through 'for', 'if' and 'while' only)";
    if (!diags)
      throw std::logic_error("pipeline-fills: " + why);
    diags->fatal(stray->loc, why);
    throw CompileAborted();
  }
  SplitFills fills;
  if (split) {
    fills.values = pipelineValues(f);
    fills.perWarpgroup = releasePerWarpgroup(f);
  }
  unsigned n = 0;
  std::set<int> rewritten;
  for (int k : classes) {
    FillLowering l(f, k, split ? &fills : nullptr);
    // Right before the top-level op that is or holds the class's first fill.
    auto first = f.body.ops.begin();
    while (first != f.body.ops.end() && !holdsClass(f, **first, k))
      ++first;
    ir::Builder B(&f.body);
    B.setInsertionPoint(&f.body, first);
    // The number "before" the first fill (and release), so that the first is number 0.
    const ir::PipelineBuffer &buf = f.pipelines[size_t(k)];
    ir::Value *start = B.constInt(f.loc, kNumber, (buf.tmaMap >= 0 ? 2 * buf.slots : buf.slots) - 1);
    l.block(f.body, {start, split && buf.dynamicFills ? start : nullptr});
    bool used = false;
    ir::walk(f.body, [&](ir::Op &o) {
      for (const ir::Value *x : o.operands)
        used |= x == start;
    });
    if (!used) // every fill before a loop got a constant number
      f.body.ops.erase(f.body.find(start->def));
    n += l.rewritten;
    rewritten.insert(k);
  }
  carryNumbers(f, rewritten);
  if (split)
    partitionProducer(f, fills.producerOps);
  if (!rewritten.empty()) // the loads' addresses and masks, the views no op reads
    eraseUnreadComputations(f.body);
  return n;
}

} // namespace tle::transforms
