// Loop prefetching of dot operands (one iteration ahead).
#include "tle/Transforms/Prefetch.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace tle::transforms {

using ir::OpKind;

namespace {

bool isPureForSlice(const ir::Op &op) {
  switch (op.kind) {
  case OpKind::Load: case OpKind::Store: case OpKind::AtomicRMW: case OpKind::AtomicCAS: case OpKind::For:
  case OpKind::If: case OpKind::While: case OpKind::Dot: case OpKind::Yield: case OpKind::Return:
  case OpKind::Condition: case OpKind::Reduce: case OpKind::Scan:
    return false;
  default:
    return op.regions.empty();
  }
}

class Prefetcher {
public:
  unsigned count = 0;

  void block(ir::Block &b) {
    for (auto &op : b.ops) {
      for (auto &r : op->regions)
        block(*r);
      if (op->kind == OpKind::For)
        loop(*op);
    }
  }

private:
  ir::Block *body_ = nullptr;

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
    return ops;
  }

  void loop(ir::Op &forOp) {
    ir::Block &body = *forOp.regions[0];
    body_ = &body;
    // Candidate loads: results used only as dot operands a/b, directly or through casts.
    std::map<const ir::Value *, std::vector<const ir::Op *>> users;
    ir::walk(body, [&](ir::Op &op) {
      for (const ir::Value *o : op.operands)
        users[o].push_back(&op);
    });
    std::function<bool(const ir::Value *, int)> feedsDotOnly = [&](const ir::Value *v, int depth) {
      auto it = users.find(v);
      if (it == users.end() || depth > 2)
        return false;
      for (const ir::Op *u : it->second) {
        if (u->kind == OpKind::Dot && (u->operands[0] == v || u->operands[1] == v) && u->parent == &body)
          continue;
        if (u->kind == OpKind::Cast && u->parent == &body && feedsDotOnly(u->result(), depth + 1))
          continue;
        return false;
      }
      return true;
    };
    std::vector<ir::Op *> loads;
    ir::Op *yieldOp = body.terminator();
    for (auto &op : body.ops) {
      // Only 16-bit operands: those the NVPTX backend copies with cp.async into shared memory.
      if (op->kind != OpKind::Load)
        continue;
      ir::DType t = op->result()->type.dtype();
      if (op->result()->type.rank() != 2 || (t != ir::DType::F16 && t != ir::DType::BF16) || !feedsDotOnly(op->result(), 0))
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
    if (loads.empty())
      return;
    ir::Op *yield = body.terminator();
    ir::Value *lb = forOp.operands[0], *ub = forOp.operands[1], *step = forOp.operands[2];
    // Prologue, before the loop: iv = lb, carried values = their initial values.
    ir::Block *outer = forOp.parent;
    auto forIt = std::find_if(outer->ops.begin(), outer->ops.end(), [&](auto &p) { return p.get() == &forOp; });
    ir::Builder pre(outer);
    pre.setInsertionPoint(outer, forIt);
    std::map<ir::Value *, ir::Value *> m0, m1, identity;
    auto argAtStart = [&](ir::Value *a) -> ir::Value * {
      return a->index == 0 ? lb : forOp.operands[2 + a->index];
    };
    ir::Value *first = pre.cmp(forOp.loc, ir::CmpPred::Lt, lb, ub);
    // Start of the body: iv + step and, as needed, the next carried values.
    ir::Builder top(&body);
    top.setInsertionPoint(&body, body.ops.begin());
    ir::Value *ivNext = top.binary(OpKind::Add, forOp.loc, body.args[0].get(), step);
    ir::Value *more = top.cmp(forOp.loc, ir::CmpPred::Lt, ivNext, ub);
    auto self = [&](ir::Value *a) { return a; };
    auto argNext = [&](ir::Value *a) -> ir::Value * {
      return a->index == 0 ? ivNext : clone(yield->operands[a->index - 1], identity, top, self);
    };
    for (ir::Op *load : loads) {
      std::vector<ir::Value *> ops0, ops1;
      for (ir::Value *o : load->operands) {
        ops0.push_back(clone(o, m0, pre, argAtStart));
        ops1.push_back(clone(o, m1, top, argNext));
      }
      ops0 = guardedOperands(*load, ops0, first, pre);
      ops1 = guardedOperands(*load, ops1, more, top);
      ir::Value *cur0 = pre.create(OpKind::Load, load->loc, ops0, {load->result()->type})->result();
      ir::Value *next = top.create(OpKind::Load, load->loc, ops1, {load->result()->type})->result();
      cur0->nameHint = next->nameHint = load->result()->nameHint;
      // Carry it: a new loop operand, body argument, yield operand and result.
      forOp.operands.push_back(cur0);
      ir::Value *cur = body.addArg(load->result()->type, load->result()->nameHint);
      yield->operands.push_back(next);
      forOp.addResult(load->result()->type);
      // Uses of the original load now read the value loaded one iteration earlier.
      ir::walk(body, [&](ir::Op &op) {
        for (auto &o : op.operands)
          if (o == load->result())
            o = cur;
      });
      ++count;
    }
  }
};

} // namespace

unsigned prefetchDotOperands(ir::Function &f) {
  Prefetcher p;
  p.block(f.body);
  return p.count;
}

} // namespace tle::transforms
