// TMA fills of pipeline slots as explicit ops (see PipelineFills.h).
#include "tle/Transforms/PipelineFills.h"

#include <iterator>
#include <map>
#include <set>
#include <vector>

namespace tle::transforms {

using ir::OpKind;

namespace {

using OpIt = std::list<std::unique_ptr<ir::Op>>::iterator;

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
    ir::Value *arg = body.addArg(ir::Type::scalar(ir::DType::I32), "fill");
    ir::Value *out = block(body, arg);
    body.terminator()->operands.push_back(out);
    ir::Value *r = loop.addResult(ir::Type::scalar(ir::DType::I32));
    r->nameHint = "fill";
    return r;
  }

  static const ir::Op *constantDef(const ir::Value *v) {
    return v->def && v->def->kind == OpKind::Constant ? v->def : nullptr;
  }

  /// (count + 1) mod wrap_: a constant when count is one.
  ir::Value *nextNumber(ir::Builder &B, SourceLoc loc, ir::Value *count) {
    if (const ir::Op *c = constantDef(count))
      return B.constInt(loc, ir::DType::I32, (c->intValue() + 1) % wrap_);
    ir::Value *n = B.binary(OpKind::Add, loc, count, B.constInt(loc, ir::DType::I32, 1));
    ir::Value *wrapped = B.cmp(loc, ir::CmpPred::Eq, n, B.constInt(loc, ir::DType::I32, wrap_));
    return B.select(loc, wrapped, B.constInt(loc, ir::DType::I32, 0), n);
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

  void replaceUses(const ir::Value *from, ir::Value *to) {
    ir::walk(f_.body, [&](ir::Op &o) {
      for (ir::Value *&x : o.operands)
        if (x == from)
          x = to;
    });
  }
};

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
    ir::Value *start = B.constInt(f.loc, ir::DType::I32, 2 * f.pipelines[size_t(k)].slots - 1);
    l.block(f.body, start);
    bool used = false;
    ir::walk(f.body, [&](ir::Op &o) {
      for (const ir::Value *x : o.operands)
        used |= x == start;
    });
    if (!used) // every fill before a loop got a constant number
      f.body.ops.erase(f.body.find(start->def));
    n += l.rewritten;
  }
  return n;
}

} // namespace tle::transforms
