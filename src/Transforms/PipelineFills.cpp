// TMA fills of pipeline slots as explicit ops (see PipelineFills.h).
#include "tle/Transforms/PipelineFills.h"
#include "tle/Transforms/Pipeline.h"

#include <iterator>
#include <map>
#include <set>
#include <vector>

namespace tle::transforms {

using ir::OpKind;

namespace {

using OpIt = std::list<std::unique_ptr<ir::Op>>::iterator;

/// The type of fill numbers: unsigned, so that `n >= slots` compares them as PTX's .u32.
constexpr ir::DType kNumber = ir::DType::U32;

/// The pipeline class whose slots `op` fills by TMA, or -1: a tile load through a descriptor
/// marked pipeline=k of a TMA class.
int tmaFillClass(const ir::Function &f, const ir::Op &op) {
  if (op.kind != OpKind::Load || op.pipeline() < 0 || size_t(op.pipeline()) >= f.pipelines.size() ||
      !op.hasDescriptor() || op.blockShape().size() != 2)
    return -1;
  const ir::PipelineBuffer &buf = f.pipelines[size_t(op.pipeline())];
  return buf.tmaMap >= 0 && !buf.privateSlots ? op.pipeline() : -1;
}

/// Whether every op around `op` up to the function body is a `for` (a count can be carried out
/// of it as an iteration value).
bool onlyForsAround(const ir::Function &f, const ir::Op &op) {
  for (const ir::Block *b = op.parent; b != &f.body; b = b->parent->parent)
    if (!b->parent || b->parent->kind != OpKind::For || !b->parent->parent)
      return false;
  return true;
}

/// Whether `op` is a TMA fill of class `cls` or holds one in its regions.
bool holdsClass(const ir::Function &f, ir::Op &op, int cls) {
  bool any = tmaFillClass(f, op) == cls;
  for (auto &r : op.regions)
    ir::walk(*r, [&](ir::Op &o) { any |= tmaFillClass(f, o) == cls; });
  return any;
}

class FillLowering {
public:
  FillLowering(ir::Function &f, int cls)
      : f_(f), cls_(cls), buf_(f.pipelines[size_t(cls)]), wrap_(2 * buf_.slots) {}

  /// Rewrites the class's fills in `b` and the loops in it, counting from `count` (the previous
  /// fill's number); returns the number after the last of them.
  ir::Value *block(ir::Block &b, ir::Value *count) {
    for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
      ir::Op &op = **it;
      if (tmaFillClass(f_, op) == cls_) {
        auto next = std::next(it);
        count = fill(b, it, count);
        it = std::prev(next);
      } else if (op.kind == OpKind::For && holdsClass(f_, op, cls_)) {
        count = loop(op, count);
      }
    }
    return count;
  }

  unsigned rewritten = 0;

private:
  ir::Function &f_;
  const int cls_;
  const ir::PipelineBuffer &buf_;
  const int wrap_; ///< fill numbers run 0 .. wrap_ - 1

  /// The count carried through `loop` as a new iteration value: its init `count`, its result
  /// the count after the loop.
  ir::Value *loop(ir::Op &loop, ir::Value *count) {
    ir::Block &body = *loop.regions[0];
    loop.operands.push_back(count);
    ir::Value *arg = body.addArg(ir::Type::scalar(kNumber), "fill");
    ir::Value *out = block(body, arg);
    body.terminator()->operands.push_back(out);
    ir::Value *r = loop.addResult(ir::Type::scalar(kNumber));
    r->nameHint = "fill";
    return r;
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

  /// The expect-tx and one tma_load per box of the swizzle's column span, before `B`'s point.
  void issue(ir::Builder &B, SourceLoc loc, ir::Value *bar, ir::Value *dst, ir::Value *row, ir::Value *col) {
    ir::Op *arrive = B.create(OpKind::MbarrierArrive, loc, {bar}, {});
    arrive->sync.tx = buf_.rows * buf_.cols * buf_.elemBytes;
    const int64_t span = buf_.swizzle / static_cast<int64_t>(buf_.elemBytes); // columns per box
    for (int64_t j = 0; j * span < buf_.cols; ++j) {
      ir::Value *d = dst, *x = col;
      if (j) {
        ir::Value *step = B.constInt(loc, ir::DType::I32, j * buf_.rows * span);
        d = B.create(OpKind::AddPtr, loc, {dst, step}, {dst->type})->result();
        x = B.binary(OpKind::Add, loc, col, B.constInt(loc, ir::DType::I32, j * span));
      }
      B.create(OpKind::TmaLoad, loc, {d, bar, row, x}, {})->sync.map = buf_.tmaMap;
    }
  }

  /// Replaces the fill at `it` by its ops; returns the count after it.
  ir::Value *fill(ir::Block &b, OpIt it, ir::Value *count) {
    ir::Op &load = **it;
    const SourceLoc loc = load.loc;
    const size_t rank = load.blockShape().size();
    ir::Value *r = load.result();
    ir::Builder B(&b);
    B.setInsertionPoint(&b, it);
    ir::Value *c = nextNumber(B, loc, count);
    ir::Op *bar = B.create(OpKind::PipelineMbarrier, loc, {c},
                           {ir::Type(ir::ScalarType::ptrTo(ir::DType::I64, ir::AddrSpace::Shared))});
    bar->sync.pipeline = cls_;
    ir::Op *dst = B.create(OpKind::PipelineSlot, loc, {c},
                           {ir::Type(ir::ScalarType::ptrTo(r->type.dtype(), ir::AddrSpace::Shared))});
    dst->sync.pipeline = cls_;
    ir::Value *row = i32(B, loc, load.operands[4 + 2 * rank]);
    ir::Value *col = i32(B, loc, load.operands[4 + 2 * rank + 1]);
    ir::Value *guard = nullptr;
    for (size_t g = 4 + 3 * rank; g < load.operands.size(); ++g)
      guard = guard ? B.binary(OpKind::And, loc, guard, load.operands[g]) : load.operands[g];
    if (guard) {
      ir::Block *then = guarded(B, loc, guard);
      ir::Builder T(then);
      T.setInsertionPoint(then, then->ops.begin());
      issue(T, loc, bar->result(), dst->result(), row, col);
    } else {
      issue(B, loc, bar->result(), dst->result(), row, col);
    }
    ir::Op *value = B.create(OpKind::PipelineValue, loc, {c}, {r->type});
    value->sync.pipeline = cls_;
    ir::Value *v = value->result();
    v->layout = r->layout;
    v->nameHint = r->nameHint;
    // A dynamic class counts only the fills issued.
    ir::Value *after = buf_.dynamicFills && guard ? B.select(loc, guard, c, count) : c;
    replaceUses(r, v);
    b.ops.erase(it);
    ++rewritten;
    return after;
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

/// Erases the pipeline_value ops nothing reads (the views of carried numbers no op needs).
void eraseUnusedViews(ir::Function &f) {
  std::set<const ir::Value *> used;
  ir::walk(f.body, [&](ir::Op &o) { used.insert(o.operands.begin(), o.operands.end()); });
  std::vector<ir::Op *> dead;
  ir::walk(f.body, [&](ir::Op &o) {
    if (o.kind == OpKind::PipelineValue && !used.count(o.result()))
      dead.push_back(&o);
  });
  for (ir::Op *o : dead)
    o->parent->ops.erase(o->parent->find(o));
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
    ir::Op *bar = B.create(OpKind::PipelineMbarrier, w->loc, {n},
                           {ir::Type(ir::ScalarType::ptrTo(ir::DType::I64, ir::AddrSpace::Shared))});
    bar->sync.pipeline = cls;
    ir::Value *parity = B.cmp(w->loc, ir::CmpPred::Ge, n, B.constInt(w->loc, kNumber, f.pipelines[size_t(cls)].slots));
    B.create(OpKind::MbarrierWait, w->loc, {bar->result(), parity}, {});
    b.ops.erase(b.find(w));
  }
  eraseUnusedViews(f);
}

} // namespace

unsigned lowerPipelineFills(ir::Function &f) {
  if (f.producerWarps > 0)
    return 0;
  // The classes to rewrite: TMA classes whose every fill sits in `for` loops only.
  std::map<int, bool> classes;
  ir::walk(f.body, [&](ir::Op &op) {
    int k = tmaFillClass(f, op);
    if (k < 0)
      return;
    bool ok = onlyForsAround(f, op);
    auto [it, fresh] = classes.emplace(k, ok);
    if (!fresh)
      it->second = it->second && ok;
  });
  unsigned n = 0;
  std::set<int> rewritten;
  for (auto [k, ok] : classes) {
    if (!ok)
      continue;
    FillLowering l(f, k);
    // Right before the top-level op that is or holds the class's first fill.
    auto first = f.body.ops.begin();
    while (first != f.body.ops.end() && !holdsClass(f, **first, k))
      ++first;
    ir::Builder B(&f.body);
    B.setInsertionPoint(&f.body, first);
    // The number "before" the first fill, so that the first is number 0.
    ir::Value *start = B.constInt(f.loc, kNumber, 2 * f.pipelines[size_t(k)].slots - 1);
    l.block(f.body, start);
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
  return n;
}

} // namespace tle::transforms
