// Versioning loop bodies on index masks that are uniform in most iterations (see VersionMasks.h).
#include "tle/Transforms/VersionMasks.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

namespace tle::transforms {

using ir::OpKind;

namespace {

/// The elements of an i32 index tile: each is sum(coef * term) + d for some d in [lo, hi], the
/// terms being i32 scalars. The sum is the exact integer, before the tile's i32 arithmetic wraps.
struct Range {
  std::vector<std::pair<ir::Value *, int64_t>> terms;
  int64_t lo = 0, hi = 0;
};

/// Bounds that keep every sum the pass computes, at compile time and in the branch condition,
/// within i64: the terms are i32 values (|t| <= 2^31), so a range whose coefficients add up to
/// at most 2^29 in magnitude and whose offsets are at most 2^60 has elements below 2^61, and
/// the difference of two such ranges stays below 2^62.
constexpr int64_t kMaxCoefficients = int64_t(1) << 29;
constexpr int64_t kMaxOffset = int64_t(1) << 60;
constexpr size_t kMaxTerms = 8;

bool isI32(const ir::Value *v) { return v->type.elem == ir::ScalarType{ir::DType::I32}; }

/// Adds `scale` times b's terms to a's, merging equal terms and dropping those that cancel;
/// false on i64 overflow.
bool addTerms(Range &a, const Range &b, int64_t scale) {
  for (const auto &term : b.terms) {
    // Not a structured binding: lambdas may capture those only from C++20 (clang 14 refuses).
    ir::Value *v = term.first;
    int64_t c = term.second;
    int64_t add = 0;
    if (__builtin_mul_overflow(c, scale, &add))
      return false;
    auto it = std::find_if(a.terms.begin(), a.terms.end(), [&](auto &t) { return t.first == v; });
    if (it == a.terms.end())
      a.terms.push_back({v, add});
    else if (__builtin_add_overflow(it->second, add, &it->second))
      return false;
  }
  a.terms.erase(std::remove_if(a.terms.begin(), a.terms.end(), [](auto &t) { return t.second == 0; }), a.terms.end());
  return true;
}

bool bounded(const Range &r) {
  if (r.terms.size() > kMaxTerms || r.lo < -kMaxOffset || r.hi > kMaxOffset || r.lo > r.hi)
    return false;
  int64_t sum = 0;
  for (auto &t : r.terms) {
    if (t.second <= -kMaxCoefficients || t.second >= kMaxCoefficients)
      return false;
    sum += t.second < 0 ? -t.second : t.second;
  }
  return sum <= kMaxCoefficients;
}

std::optional<int64_t> constantOf(const ir::Value *v) {
  const ir::Op *d = v->def;
  while (d && (d->kind == OpKind::Splat || d->kind == OpKind::Broadcast || d->kind == OpKind::ExpandDims))
    d = d->operands[0]->def;
  if (d && d->kind == OpKind::Constant)
    return d->intValue();
  return std::nullopt;
}

/// The range of every element of `v` (an i32 scalar or tile), when its ops say so.
std::optional<Range> rangeOf(ir::Value *v, int depth = 0) {
  if (!isI32(v) || depth > 64)
    return std::nullopt;
  Range r;
  if (auto c = constantOf(v)) {
    if (*c < -kMaxOffset || *c > kMaxOffset)
      return std::nullopt;
    r.lo = r.hi = *c;
    return r;
  }
  if (v->type.isScalar()) { // a scalar's i32 value is exact: it is a term
    r.terms.push_back({v, 1});
    return r;
  }
  const ir::Op *d = v->def;
  if (!d)
    return std::nullopt;
  switch (d->kind) {
  case OpKind::Splat:
  case OpKind::Broadcast:
  case OpKind::ExpandDims:
    return rangeOf(d->operands[0], depth + 1);
  case OpKind::Arange:
    r.lo = d->arangeStart();
    r.hi = d->arangeEnd() - 1;
    break;
  case OpKind::Add:
  case OpKind::Sub: {
    auto a = rangeOf(d->operands[0], depth + 1), b = rangeOf(d->operands[1], depth + 1);
    if (!a || !b)
      return std::nullopt;
    r = *a;
    bool add = d->kind == OpKind::Add;
    if (!addTerms(r, *b, add ? 1 : -1))
      return std::nullopt;
    bool overflow = add ? __builtin_add_overflow(a->lo, b->lo, &r.lo) || __builtin_add_overflow(a->hi, b->hi, &r.hi)
                        : __builtin_sub_overflow(a->lo, b->hi, &r.lo) || __builtin_sub_overflow(a->hi, b->lo, &r.hi);
    if (overflow)
      return std::nullopt;
    break;
  }
  case OpKind::Mul: {
    std::optional<int64_t> c = constantOf(d->operands[1]);
    ir::Value *x = d->operands[0];
    if (!c) {
      c = constantOf(d->operands[0]);
      x = d->operands[1];
    }
    if (!c)
      return std::nullopt;
    auto a = rangeOf(x, depth + 1);
    if (!a || !addTerms(r, *a, *c))
      return std::nullopt;
    if (__builtin_mul_overflow(*c >= 0 ? a->lo : a->hi, *c, &r.lo) ||
        __builtin_mul_overflow(*c >= 0 ? a->hi : a->lo, *c, &r.hi))
      return std::nullopt;
    break;
  }
  default:
    return std::nullopt;
  }
  if (!bounded(r))
    return std::nullopt;
  return r;
}

bool inLoop(const ir::Block *b) {
  for (const ir::Op *p = b->parent; p; p = p->parent ? p->parent->parent : nullptr)
    if (p->kind == OpKind::For || p->kind == OpKind::While)
      return true;
  return false;
}

/// Ops that may move into the branches: pure tile ops without regions.
bool movable(const ir::Op &op) {
  if (!op.regions.empty() || op.results.size() != 1 || !op.result()->type.isTile())
    return false;
  switch (op.kind) {
  case OpKind::Splat: case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Arange:
    return true;
  default:
    return ir::isElementwise(op.kind);
  }
}

class Versioner {
public:
  explicit Versioner(ir::Function &f) : f_(f) {}

  unsigned run() {
    unsigned count = 0;
    while (ir::Op *s = nextCandidate()) {
      done_.insert(s);
      count += version(*s);
    }
    return count;
  }

private:
  ir::Function &f_;
  std::set<const ir::Op *> done_;
  std::set<const ir::Op *> created_; ///< the ifs this pass made
  std::map<const ir::Value *, std::vector<ir::Op *>> uses_;
  std::map<const ir::Op *, size_t> pos_;

  /// The next select to try, outside the branches this pass created: the copies of another
  /// select that a branch holds are left as they are (versioning them again, and their copies'
  /// copies, would grow the body exponentially with the selects of one expression).
  ir::Op *nextCandidate() { return find(f_.body); }

  ir::Op *find(ir::Block &b) {
    for (auto &o : b.ops) {
      if (o->kind == OpKind::Select && !done_.count(o.get()) && o->result()->type.isTile() &&
          ir::isFloat(o->result()->type.dtype()) && inLoop(&b))
        return o.get();
      if (created_.count(o.get()))
        continue;
      for (auto &r : o->regions)
        if (ir::Op *s = find(*r))
          return s;
    }
    return nullptr;
  }

  void collectUses() {
    uses_.clear();
    ir::walk(f_.body, [&](ir::Op &o) {
      for (ir::Value *v : o.operands)
        uses_[v].push_back(&o);
    });
  }

  /// Whether every use of op's result is by an op of `r` (top-level in the block).
  bool usedOnlyBy(const ir::Op &op, const std::set<ir::Op *> &r) {
    for (ir::Op *u : uses_[op.result()])
      if (!r.count(u))
        return false;
    return true;
  }

  /// Adds the movable ops of `b` whose results only `r` uses, until there are none.
  void closeBackward(ir::Block &b, std::set<ir::Op *> &r) {
    for (bool changed = true; changed;) {
      changed = false;
      for (ir::Op *op : std::vector<ir::Op *>(r.begin(), r.end()))
        for (ir::Value *v : op->operands) {
          ir::Op *d = v->def;
          if (d && d->parent == &b && !r.count(d) && movable(*d) && usedOnlyBy(*d, r)) {
            r.insert(d);
            changed = true;
          }
        }
    }
  }

  /// The results of `r` that ops outside it use, in block order (pos_: the ops' positions).
  std::vector<ir::Value *> outputs(const std::set<ir::Op *> &r) {
    std::vector<ir::Value *> out;
    for (ir::Op *op : r)
      if (!usedOnlyBy(*op, r))
        out.push_back(op->result());
    std::sort(out.begin(), out.end(), [&](ir::Value *p, ir::Value *q) { return pos_[p->def] < pos_[q->def]; });
    return out;
  }

  /// The ops of `r` in block order, and whether no op outside `r` before the last of them uses
  /// one of their results (the `if` goes where the last one is).
  bool ordered(ir::Block &b, const std::set<ir::Op *> &r, std::vector<ir::Op *> &inOrder) {
    inOrder.clear();
    std::set<const ir::Value *> defined;
    for (auto &op : b.ops) {
      if (inOrder.size() == r.size())
        break;
      if (r.count(op.get())) {
        inOrder.push_back(op.get());
        defined.insert(op->result());
        continue;
      }
      if (inOrder.empty())
        continue;
      bool uses = false;
      auto check = [&](const ir::Op &x) {
        for (const ir::Value *v : x.operands)
          uses |= defined.count(v) > 0;
      };
      check(*op);
      for (auto &reg : op->regions)
        ir::walk(*reg, check);
      if (uses)
        return false;
    }
    return inOrder.size() == r.size();
  }

  unsigned version(ir::Op &s) {
    ir::Block &b = *s.parent;
    const ir::Op *cmp = s.operands[0]->def;
    if (!cmp || cmp->kind != OpKind::Cmp || cmp->parent != &b || !cmp->result()->type.isTile())
      return 0;
    CmpPredicateParts parts;
    if (!parts.set(cmp->predicate()))
      return 0;
    auto lhs = rangeOf(cmp->operands[0]), rhs = rangeOf(cmp->operands[1]);
    if (!lhs || !rhs)
      return 0;
    // "Every x >= every y": x's least element against y's greatest, minus one when strict.
    const Range &x = parts.swap ? *rhs : *lhs, &y = parts.swap ? *lhs : *rhs;
    Range diff = x;
    if (!addTerms(diff, y, -1))
      return 0;
    int64_t k = x.lo - y.hi - (parts.strict ? 1 : 0); // |k| < 2^62 (bounded ranges)

    collectUses();
    pos_.clear();
    for (auto &o : b.ops)
      pos_[o.get()] = pos_.size();
    if (diff.terms.empty() && k >= 0 && lhs->terms.empty() && rhs->terms.empty() && lhs->lo >= INT32_MIN &&
        lhs->hi <= INT32_MAX && rhs->lo >= INT32_MIN && rhs->hi <= INT32_MAX) {
      // True for every element in every iteration: the select is its true operand.
      for (ir::Op *u : uses_[s.result()])
        for (ir::Value *&v : u->operands)
          if (v == s.result())
            v = s.operands[1];
      return 1;
    }
    std::set<ir::Op *> r = {&s};
    closeBackward(b, r);
    if (!r.count(const_cast<ir::Op *>(cmp)))
      return 0; // the comparison is needed elsewhere: nothing would be saved
    // Grow forwards into the single elementwise user of an output while that leaves no more
    // values live after the `if`.
    std::vector<ir::Op *> inOrder;
    for (bool grown = true; grown;) {
      grown = false;
      std::vector<ir::Value *> outs = outputs(r);
      for (ir::Value *v : outs) {
        std::set<ir::Op *> users;
        for (ir::Op *u : uses_[v])
          if (!r.count(u))
            users.insert(u);
        if (users.size() != 1)
          continue;
        ir::Op *u = *users.begin();
        if (u->parent != &b || !movable(*u))
          continue;
        std::set<ir::Op *> next = r;
        next.insert(u);
        closeBackward(b, next);
        if (outputs(next).size() <= outs.size() && ordered(b, next, inOrder)) {
          r = std::move(next);
          grown = true;
          break;
        }
      }
    }
    if (!ordered(b, r, inOrder))
      return 0;
    std::vector<ir::Value *> outs = outputs(r);
    if (outs.empty())
      return 0;

    for (const Range *rg : {&*lhs, &*rhs})
      if (rg->terms.empty() && (rg->lo < INT32_MIN || rg->hi > INT32_MAX))
        return 0; // wraps around in every iteration
    if (diff.terms.empty() && k < 0)
      return 0; // never true for every element
    auto after = std::next(std::find_if(b.ops.begin(), b.ops.end(), [&](auto &o) { return o.get() == inOrder.back(); }));
    ir::Builder bld(&b);
    bld.setInsertionPoint(&b, after);
    SourceLoc loc = s.loc;
    ir::Value *cond = nullptr;
    // cond: sum(diff) + k >= 0, and both tiles' elements within i32 (no wrap-around).
    auto i64 = [&](ir::Value *v) { return bld.cast(loc, v, ir::ScalarType{ir::DType::I64}); };
    auto sum = [&](const Range &rg, int64_t c) {
      ir::Value *acc = bld.constInt(loc, ir::DType::I64, c);
      for (auto [t, coef] : rg.terms) {
        ir::Value *term = i64(t);
        if (coef == -1) {
          acc = bld.binary(OpKind::Sub, loc, acc, term);
          continue;
        }
        if (coef != 1)
          term = bld.binary(OpKind::Mul, loc, term, bld.constInt(loc, ir::DType::I64, coef));
        acc = bld.binary(OpKind::Add, loc, acc, term);
      }
      return acc;
    };
    auto both = [&](ir::Value *a, ir::Value *c) { return a ? bld.binary(OpKind::And, loc, a, c) : c; };
    if (!diff.terms.empty())
      cond = bld.cmp(loc, ir::CmpPred::Ge, sum(diff, k), bld.constInt(loc, ir::DType::I64, 0));
    for (const Range *rg : {&*lhs, &*rhs}) {
      bool single = rg->terms.size() == 1 && rg->terms[0].second == 1;
      if (rg->terms.empty())
        continue; // within i32 (checked above)
      if (!single || rg->lo < 0)
        cond = both(cond, bld.cmp(loc, ir::CmpPred::Ge, sum(*rg, rg->lo), bld.constInt(loc, ir::DType::I64, INT32_MIN)));
      if (!single || rg->hi > 0)
        cond = both(cond, bld.cmp(loc, ir::CmpPred::Le, sum(*rg, rg->hi), bld.constInt(loc, ir::DType::I64, INT32_MAX)));
    }
    if (!cond)
      cond = bld.constInt(loc, ir::DType::I1, 1);

    std::vector<ir::Type> types;
    for (ir::Value *v : outs)
      types.push_back(v->type);
    ir::Op *ifOp = bld.create(OpKind::If, loc, {cond}, types);
    created_.insert(ifOp);
    for (int i = 0; i < 2; ++i) {
      ifOp->regions.push_back(std::make_unique<ir::Block>());
      ifOp->regions.back()->parent = ifOp;
    }
    for (size_t i = 0; i < outs.size(); ++i)
      ifOp->result(static_cast<unsigned>(i))->nameHint = outs[i]->nameHint;
    // Later users read the `if`'s results.
    ir::walk(f_.body, [&](ir::Op &o) {
      if (r.count(&o))
        return;
      for (ir::Value *&v : o.operands)
        for (size_t i = 0; i < outs.size(); ++i)
          if (v == outs[i])
            v = ifOp->result(static_cast<unsigned>(i));
    });

    // then: the ops with the select's result replaced by its true operand.
    ir::Block &thenB = *ifOp->regions[0], &elseB = *ifOp->regions[1];
    std::map<ir::Value *, ir::Value *> map;
    auto mapped = [&](ir::Value *v) {
      auto it = map.find(v);
      return it == map.end() ? v : it->second;
    };
    ir::Builder tb(&thenB);
    for (ir::Op *op : inOrder) {
      if (op == &s) {
        map[s.result()] = mapped(s.operands[1]);
        continue;
      }
      std::vector<ir::Value *> operands;
      for (ir::Value *v : op->operands)
        operands.push_back(mapped(v));
      map[op->result()] = tb.clone(*op, operands)->result();
    }
    std::vector<ir::Value *> thenOuts;
    for (ir::Value *v : outs)
      thenOuts.push_back(mapped(v));
    tb.create(OpKind::Yield, loc, thenOuts, {});
    removeDead(thenB);

    // else: the ops as written.
    for (ir::Op *op : inOrder) {
      auto it = std::find_if(b.ops.begin(), b.ops.end(), [&](auto &o) { return o.get() == op; });
      elseB.ops.splice(elseB.ops.end(), b.ops, it);
      op->parent = &elseB;
    }
    ir::Builder eb(&elseB);
    eb.create(OpKind::Yield, loc, outs, {});
    return 1;
  }

  /// Drops the ops of `b` (other than its terminator) whose results nothing in `b` reads.
  static void removeDead(ir::Block &b) {
    for (bool changed = true; changed;) {
      changed = false;
      std::set<const ir::Value *> read;
      for (auto &op : b.ops)
        for (const ir::Value *v : op->operands)
          read.insert(v);
      for (auto it = b.ops.begin(); it != b.ops.end();) {
        ir::Op *op = it->get();
        if (op != b.terminator() && op->results.size() == 1 && !read.count(op->result())) {
          it = b.ops.erase(it);
          changed = true;
        } else {
          ++it;
        }
      }
    }
  }

  /// A comparison as "every x >= (or >) every y": `a >= b`, `a > b` as they are, `a <= b`,
  /// `a < b` with the operands swapped. == and != are not versioned.
  struct CmpPredicateParts {
    bool swap = false, strict = false;
    bool set(ir::CmpPred p) {
      switch (p) {
      case ir::CmpPred::Ge: return true;
      case ir::CmpPred::Gt: strict = true; return true;
      case ir::CmpPred::Le: swap = true; return true;
      case ir::CmpPred::Lt: swap = strict = true; return true;
      default: return false;
      }
    }
  };
};

} // namespace

unsigned versionUniformMasks(ir::Function &f) { return Versioner(f).run(); }

} // namespace tle::transforms
