// wgmma-waits: each wgmma tl.dot's group retired by an explicit wgmma_wait (see WgmmaWaits.h).
#include "tle/Transforms/WgmmaWaits.h"
#include "tle/Transforms/DotLowering.h"
#include "tle/Transforms/Pipeline.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

namespace tle::transforms {

using ir::OpKind;

namespace {

/// Whether `op` only waits or orders (the pipeline pass's waits before an op, and barriers):
/// a carried group's wait goes before a run of these, as their op's other waits come first.
bool isWaitLike(const ir::Op &op) {
  return op.kind == OpKind::PipelineWait || op.kind == OpKind::AsyncWaitGroup ||
         (op.kind == OpKind::FenceProxyAsync && !op.sync.global) || (op.kind == OpKind::Barrier && op.sync.barrierId < 0);
}

class Placer {
public:
  explicit Placer(ir::Function &f) : f_(f), slots_(pipelineValues(f)) {}

  void run() {
    std::vector<ir::Op *> dots;
    ir::walk(f_.body, [&](ir::Op &op) {
      if (op.kind == OpKind::Dot && wgmmaDot(op, f_.arch, f_.numWarps))
        dots.push_back(&op);
    });
    for (ir::Op *d : dots)
      place(*d);
  }

private:
  ir::Function &f_;
  std::map<const ir::Value *, int> slots_; ///< pipelined values -> their class (Function::pipelines)

  bool inSlots(const ir::Value *v) const { return slots_.count(v) > 0; }
  /// wgmma reads `v` straight from its pipeline slot (not restaged through registers).
  bool readsSlot(const ir::Value *v) const {
    return inSlots(v) && !f_.pipelines[static_cast<size_t>(slots_.at(v))].restaged;
  }

  static bool promotedFp8(const ir::Op &dot) {
    return ir::isFP8(dot.operands[0]->type.dtype()) && dot.maxNumImpreciseAcc() > 0 &&
           dot.maxNumImpreciseAcc() < dot.operands[0]->type.shape[1];
  }

  /// The loop around `dot` when its slot operands (B, and A unless `registerA` allows it in
  /// registers) are carried from earlier iterations: not loaded in this one before it. An
  /// operand loaded in this iteration (an unpipelined loop) has one slot, which the next
  /// iteration refills, and so has a carried one whose class the body refills before the dot.
  ir::Op *loopWithCarriedSlots(const ir::Op &dot, bool registerA) const {
    if ((!registerA && !readsSlot(dot.operands[0])) || !readsSlot(dot.operands[1]) || promotedFp8(dot))
      return nullptr;
    ir::Block *body = dot.parent;
    ir::Op *loop = body ? body->parent : nullptr;
    if (!loop || loop->kind != OpKind::For)
      return nullptr;
    for (unsigned k = inSlots(dot.operands[0]) ? 0 : 1; k < 2; ++k) {
      const ir::Value *v = dot.operands[k];
      if (v->def && v->def->kind == OpKind::Permute)
        v = v->def->operands[0];
      if (v->def && v->def->parent == body)
        return nullptr;
      int cls = slots_.at(dot.operands[k]);
      for (auto &o : body->ops) {
        if (o.get() == &dot)
          break;
        if (o->kind == OpKind::Load && inSlots(o->result()) && slots_.at(o->result()) == cls)
          return nullptr;
      }
    }
    return loop;
  }

  /// Uses of `v` in `b`'s ops, their regions included, with whether one is not `except`.
  static int usesIn(const ir::Block &b, const ir::Value *v, const ir::Op *except, bool &elsewhere) {
    int uses = 0;
    for (auto &o : b.ops) {
      auto count = [&](const ir::Op &x) {
        for (const ir::Value *u : x.operands)
          if (u == v) {
            ++uses;
            elsewhere |= &x != except;
          }
      };
      count(*o);
      for (auto &r : o->regions)
        ir::walk(*r, count);
    }
    return uses;
  }

  bool deferrable(const ir::Op &dot) const {
    if (!loopWithCarriedSlots(dot, /*registerA=*/false))
      return false;
    const ir::Block *body = dot.parent;
    const ir::Op *yield = body->terminator();
    const ir::Value *acc = dot.operands[2];
    if (acc->owner != body || acc->index < 1 || yield->operands.size() < acc->index ||
        yield->operands[acc->index - 1] != dot.result())
      return false;
    bool elsewhere = false;
    return usesIn(*body, acc, &dot, elsewhere) == 1 && usesIn(*body, dot.result(), yield, elsewhere) == 1;
  }

  /// The yield position of a carried group's result, or -1.
  int carriedPosition(const ir::Op &dot) const {
    ir::Op *loop = loopWithCarriedSlots(dot, /*registerA=*/true);
    if (!loop)
      return -1;
    const ir::Block *body = dot.parent;
    const ir::Op *yield = body->terminator();
    int position = -1;
    for (unsigned i = 0; i < yield->operands.size(); ++i)
      if (yield->operands[i] == dot.result())
        position = static_cast<int>(i);
    bool elsewhere = false;
    if (usesIn(*body, dot.result(), yield, elsewhere) != 1 || elsewhere || position < 0 ||
        !(*loop->result(static_cast<unsigned>(position))->layout == *dot.result()->layout))
      return -1;
    return position;
  }

  ir::Op *wait(ir::Block &b, std::list<std::unique_ptr<ir::Op>>::iterator before, std::vector<ir::Value *> values,
               int pending, SourceLoc loc) {
    std::vector<ir::Type> types;
    for (ir::Value *v : values)
      types.push_back(v->type);
    ir::Builder B(&b);
    B.setInsertionPoint(&b, before);
    ir::Op *w = B.create(OpKind::WgmmaWait, loc, values, types);
    w->sync.pending = pending;
    for (size_t i = 0; i < values.size(); ++i) {
      w->result(static_cast<unsigned>(i))->layout = values[i]->layout;
      w->result(static_cast<unsigned>(i))->nameHint = values[i]->nameHint;
    }
    return w;
  }

  /// The wait of a carried group in the next iteration: before the first top-level op of the
  /// body that reads `arg` or fills one of `classes` (or the yield), ahead of its waits.
  void waitCarried(ir::Block &body, ir::Value *arg, const std::set<int> &classes, SourceLoc loc) {
    auto needs = [&](const ir::Op &op) {
      bool hit = &op == body.terminator();
      auto visit = [&](const ir::Op &x) {
        for (const ir::Value *v : x.operands)
          hit |= v == arg;
        hit |= x.kind == OpKind::Load && inSlots(x.result()) && classes.count(slots_.at(x.result()));
      };
      visit(op);
      for (auto &r : op.regions)
        ir::walk(*r, [&](ir::Op &x) { visit(x); });
      return hit;
    };
    auto at = body.ops.begin();
    while (std::next(at) != body.ops.end() && (isWaitLike(**at) || !needs(**at)))
      ++at;
    while (at != body.ops.begin() && isWaitLike(**std::prev(at)))
      --at;
    ir::Op *w = wait(body, at, {arg}, 0, loc);
    ir::replaceUsesFrom(body, std::next(body.find(w)), arg, w->result());
  }

  void place(ir::Op &dot) {
    ir::DType acc = dot.result()->type.dtype();
    if (dot.isAsyncWgmma() || promotedFp8(dot) || (acc != ir::DType::F32 && acc != ir::DType::I32))
      return;
    dot.setAsyncWgmma(true);
    ir::Block &body = *dot.parent;
    auto next = std::next(body.find(&dot));
    if (deferrable(dot)) {
      wait(body, next, {}, 1, dot.loc);
      body.parent->setWgmmaDrain(true);
      return;
    }
    int at = carriedPosition(dot);
    if (at >= 0) {
      std::set<int> classes;
      for (unsigned k = 0; k < 2; ++k)
        if (inSlots(dot.operands[k]))
          classes.insert(slots_.at(dot.operands[k]));
      waitCarried(body, body.args[static_cast<size_t>(at) + 1].get(), classes, dot.loc);
      body.parent->setWgmmaDrain(true);
      return;
    }
    ir::Op *w = wait(body, next, {dot.result()}, 0, dot.loc);
    ir::replaceUsesFrom(body, std::next(body.find(w)), dot.result(), w->result());
  }
};

} // namespace

WgmmaGroupWait wgmmaGroupWait(const ir::Op &dot) {
  ir::Block &b = *dot.parent;
  auto it = b.find(&dot);
  if (it != b.ops.end() && std::next(it) != b.ops.end()) {
    const ir::Op &w = **std::next(it);
    if (w.kind == OpKind::WgmmaWait && w.operands.empty() && w.sync.pending == 1)
      return WgmmaGroupWait::Deferred;
  }
  const ir::Op *yield = b.terminator();
  bool yielded = b.parent && b.parent->kind == OpKind::For && yield &&
                 std::find(yield->operands.begin(), yield->operands.end(), dot.result()) != yield->operands.end();
  return yielded ? WgmmaGroupWait::Carried : WgmmaGroupWait::Now;
}

void placeWgmmaWaits(ir::Function &f) {
  if (!f.arch.empty() && f.arch != "sm_90a")
    return;
  bool placed = false;
  ir::walk(f.body, [&](ir::Op &op) { placed |= op.kind == OpKind::Dot && op.isAsyncWgmma(); });
  if (!placed)
    Placer(f).run();
}

} // namespace tle::transforms
