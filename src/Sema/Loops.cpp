// Loops during specialisation: `for` over range / tl.range / tl.static_range (unrolled, folded or
// a runtime loop carrying the variables it assigns), `while`, and loops that may `break` or
// `return` as `while` loops carrying the control-flow flags.
#include "Registry.h"
#include "Sema.h"

#include <llvm/Support/Casting.h>

#include <algorithm>
#include <limits>
#include <set>

using llvm::dyn_cast;
using llvm::isa;

namespace tle::sema {

void Specializer::execFor(const ast::ForStmt *s, Env &env) {
  if (!s->orelse.empty())
    fail(s->loc(), "'for ... else' is not supported");
  auto *callExpr = dyn_cast<ast::CallExpr>(s->iter);
  if (!callExpr && pythonDepth > 0) { // a constexpr function: `for x in (a, b, c)` at compile time
    SVal seq = eval(s->iter, env);
    if (seq.kind != SVal::Kind::Tuple)
      fail(s->iter->loc(), "a constexpr function's 'for' loop iterates over range(...) or a tuple, got " +
                               seq.describe());
    for (const SVal &x : seq.elts) {
      if (exitState(env) == Exit::Yes)
        break;
      assign(s->target, x, env, s->loc());
      ++loopDepth;
      execBlock(s->body, env);
      --loopDepth;
      clearFlags(env, {kContinued});
    }
    clearFlags(env, {kBroke, kContinued});
    return;
  }
  if (!callExpr)
    fail(s->iter->loc(), "a kernel 'for' loop must iterate over range(...), tl.range(...) or tl.static_range(...)");
  SVal callee = eval(callExpr->callee, env);
  std::string kind = callee.kind == SVal::Kind::Builtin ? callee.s : "";
  if (pythonDepth > 0 && kind == "range") // Python's range, run at compile time
    kind = "tl.static_range";
  if (kind != "range" && kind != "tl.range" && kind != "tl.static_range" && kind != "tle.gpu.pipeline")
    fail(s->iter->loc(), "a kernel 'for' loop must iterate over range(...), tl.range(...), tl.static_range(...) or "
                         "tle.gpu.pipeline(...)");
  CallArgs args;
  args.loc = callExpr->loc();
  for (auto *a : callExpr->args)
    args.pos.push_back({startLoc(a), eval(a, env)});
  // tle.gpu.pipeline(start, end=None, step=None, num_stages=None, loop_unroll_factor=None) is
  // tl.range under FlagTree's names: its bounds may also come by keyword.
  // tl.range / tl.static_range(arg1, arg2=None, step=None, ...) take theirs so too.
  const bool tlePipeline = kind == "tle.gpu.pipeline";
  const bool tlRange = kind == "tl.range" || kind == "tl.static_range";
  if (tlePipeline || tlRange) {
    const char *pipelineNames[] = {"start", "end", "step"}, *rangeNames[] = {"arg1", "arg2", "step"};
    const char **names = tlePipeline ? pipelineNames : rangeNames;
    for (size_t i = 0; i < 3; ++i)
      for (auto &k : callExpr->keywords)
        if (k.name == names[i]) {
          if (args.pos.size() != i)
            fail(k.loc, kind + "() argument '" + names[i] + "' given by keyword after " +
                            std::to_string(args.pos.size()) + " positional ones (the bounds go in order: " + names[0] +
                            ", " + names[1] + ", " + names[2] + ")");
          SVal v = eval(k.value, env);
          if (v.kind == SVal::Kind::None)
            break;
          args.pos.push_back({k.loc, v});
        }
  }

  int64_t loopStages = 0;
  bool warpSpecialize = false, flatten = false;
  for (auto &k : callExpr->keywords) {
    // The keywords of tl.range's table line (Core.cpp).
    static const std::vector<std::string> accepted = builtinKeywords("tl.range");
    if (tlePipeline && (k.name == "start" || k.name == "end" || k.name == "step"))
      continue; // bound above
    if (tlRange && (k.name == "arg1" || k.name == "arg2" || k.name == "step"))
      continue; // bound above
    if (kind == "range") { // Python's range in a kernel takes no keywords: Triton ignores them
      eval(k.value, env);
      continue;
    }
    if (tlePipeline && k.name == "loop_unroll_factor") { // accepted and ignored, as tl.range's
      eval(k.value, env);
      continue;
    }
    if ((kind == "tl.range" || tlePipeline) && k.name == "num_stages") {
      // Triton's per-loop pipelining depth; an explicit value also lets the loop's loads be
      // issued ahead of the loop's own stores (see transforms::prefetchLoopLoads).
      SVal v = eval(k.value, env);
      if (v.kind == SVal::Kind::None)
        continue;
      if (v.kind != SVal::Kind::Int || v.i < 0 || v.i > 16)
        fail(k.loc, kind + "() num_stages must be a compile-time integer from 0 to 16, got " + v.describe());
      loopStages = v.i;
      continue;
    }
    // Triton's requests that the backend honours where it can: warp_specialize splits the loop
    // into a producer and consumers (docs/compiler.md, "Warp specialisation"); flatten lets the
    // pipeline of the loop nested in it cross its iterations (docs/compiler.md, "Persistent
    // kernels and `flatten`").
    if (kind == "tl.range" && (k.name == "warp_specialize" || k.name == "flatten")) {
      SVal v = eval(k.value, env);
      if (v.kind == SVal::Kind::None)
        continue;
      if (v.kind != SVal::Kind::Bool && v.kind != SVal::Kind::Int)
        fail(k.loc, "tl.range() " + k.name + " must be a compile-time boolean, got " + v.describe());
      (k.name == "flatten" ? flatten : warpSpecialize) = v.i != 0;
      continue;
    }
    if (kind == "tl.range" && std::find(accepted.begin(), accepted.end(), k.name) != accepted.end()) {
      eval(k.value, env);
      continue;
    }
    fail(k.loc, "unexpected keyword argument '" + k.name + "' to " + kind + "()");
  }
  if (args.pos.empty() || args.pos.size() > 3)
    fail(args.loc, kind + "() takes 1 to 3 positional arguments, got " + std::to_string(args.pos.size()));
  Arg lb{args.loc, SVal::integer(0)}, ub, step{args.loc, SVal::integer(1)};
  if (args.pos.size() == 1) {
    ub = args.pos[0];
  } else {
    lb = args.pos[0];
    ub = args.pos[1];
    if (args.pos.size() == 3)
      step = args.pos[2];
  }
  for (const Arg *a : {&lb, &ub, &step}) {
    bool ok = a->val.kind == SVal::Kind::Int || a->val.kind == SVal::Kind::Bool ||
              (a->val.isTensor() && a->val.v->type.isScalar() && ir::isInteger(a->val.v->type.dtype()));
    if (!ok)
      fail(a->loc, kind + "() bounds must be integer scalars, got " + a->val.describe());
  }

  // static_range, or range over constexprs with a constexpr trip count: unrolled / folded.
  bool allConst = lb.val.isConstexpr() && ub.val.isConstexpr() && step.val.isConstexpr();
  if (kind == "tl.static_range") {
    if (!allConst)
      fail(args.loc, "tl.static_range() bounds must be compile-time constants");
    if (step.val.i == 0)
      fail(step.loc, "range() step must not be zero");
    constexpr int64_t kMaxUnroll = 65536;
    // Trip count and induction values in unsigned arithmetic: the distance between the bounds,
    // the magnitude of the step and the value after the last iteration can all exceed int64.
    int64_t first = lb.val.i, bound = ub.val.i, stride = step.val.i;
    uint64_t dist = stride > 0 ? (bound > first ? uint64_t(bound) - uint64_t(first) : 0)
                                : (first > bound ? uint64_t(first) - uint64_t(bound) : 0);
    uint64_t mag = stride > 0 ? uint64_t(stride) : 0 - uint64_t(stride);
    uint64_t trips = dist / mag + (dist % mag != 0);
    if (trips > uint64_t(kMaxUnroll))
      fail(args.loc, "tl.static_range() would unroll " + std::to_string(trips) + " iterations (the limit is " +
                         std::to_string(kMaxUnroll) + "); use range() for a runtime loop");
    std::set<std::string> assigned;
    collectAssigned(s->body, assigned);
    for (uint64_t k = 0; k < trips; ++k) {
      // lb + k * step lies between the bounds, so the wrapped unsigned result is exact.
      int64_t i = int64_t(uint64_t(first) + k * uint64_t(stride));
      auto iteration = [&](Env &e) {
        assign(s->target, SVal::integer(i), e, s->loc());
        ++loopDepth;
        execBlock(s->body, e);
        --loopDepth;
        clearFlags(e, {kContinued});
      };
      Exit st = exitState(env);
      if (st == Exit::Yes)
        break;
      if (st == Exit::No)
        iteration(env);
      else // an earlier iteration may have left the loop (or the function)
        guardRest(env, assigned, s->loc(), iteration);
    }
    clearFlags(env, {kBroke, kContinued});
    return;
  }
  if (step.val.isConstexpr() && step.val.i == 0) // Python's ValueError, also with runtime bounds
    fail(step.loc, "range() step must not be zero");
  // A constexpr negative step counts down from lb while above ub (Python's range): a loop of
  // trips = ceil((lb - ub) / -step) iterations j = 0, 1, ... (none when lb <= ub) whose
  // variable is lb + j * step, so that the loop itself keeps a positive step (Triton rewrites
  // such a loop the same way).
  const bool down = step.val.isConstexpr() && step.val.i < 0;
  if (down && step.val.i == std::numeric_limits<int64_t>::min())
    fail(step.loc, "range() step " + std::to_string(step.val.i) + " is out of range (its magnitude must fit int64)");
  if (!isa<ast::NameExpr>(s->target))
    fail(s->target->loc(), "the loop variable must be a single name");

  // Bounds as IR scalars of the promoted integer type.
  ir::DType ivType = ir::DType::I32;
  for (const Arg *a : {&lb, &ub, &step}) {
    ir::DType t = a->val.isTensor() ? a->val.v->type.dtype() : literalType(a->val, a->loc);
    ivType = integerPromote(ivType, t);
  }
  ir::Value *lbv = toTensorOfType(lb.val, ivType, lb.loc);
  ir::Value *ubv = toTensorOfType(ub.val, ivType, ub.loc);
  ir::Value *stepv = toTensorOfType(step.val, ivType, step.loc);
  if (breaksOut(s->body) || returnsFrom(s->body)) {
    ForBounds fb{lbv, ubv, stepv, dyn_cast<ast::NameExpr>(s->target)->name, down};
    execLoopAsWhile(s, s->body, &fb, nullptr, env);
    return;
  }

  std::set<std::string> assigned;
  collectAssigned(s->body, assigned, false);
  // A Python number assigned in the body becomes a runtime value first (Triton does the same:
  // `count = 0` then `count += x` in the loop).
  materializeCarriedNumbers(assigned, env, s->loc());
  // Carried: names bound before the loop to runtime values (tensors, or tuples and block pointers
  // holding some) and assigned inside; each contributes its runtime leaves.
  std::vector<ir::Value *> inits;
  CarriedVars cv = collectCarried(assigned, env, inits);
  ir::Value *first = lbv, *stride = stepv;
  if (down) {
    // The trip count in 64 bits (the bounds widened by their signedness, so that lb - ub and
    // the rounding cannot wrap), then in the loop's type: at most (lb - ub) iterations.
    const ir::ScalarType wide{ir::bitWidth(ivType) < 64 ? ir::DType::I64 : ivType};
    ir::Value *lb64 = castTo(lbv, wide, lb.loc), *ub64 = castTo(ubv, wide, ub.loc);
    ir::Value *mag = b->constInt(s->loc(), wide.dtype, -step.val.i);
    ir::Value *dist = b->binary(ir::OpKind::Sub, s->loc(), lb64, ub64);
    ir::Value *zero = b->constInt(s->loc(), wide.dtype, 0);
    if (ir::isUnsigned(wide.dtype)) // lb <= ub: no iteration (the unsigned difference would wrap)
      dist = b->select(s->loc(), b->cmp(s->loc(), ir::CmpPred::Gt, lb64, ub64), dist, zero);
    ir::Value *span = b->binary(ir::OpKind::Add, s->loc(), dist, b->constInt(s->loc(), wide.dtype, -step.val.i - 1));
    ir::Value *trips = b->binary(ir::OpKind::IDiv, s->loc(), span, mag);
    trips = b->select(s->loc(), b->cmp(s->loc(), ir::CmpPred::Gt, trips, zero), trips, zero); // lb <= ub: none
    ubv = castTo(trips, ir::ScalarType{ivType}, s->loc());
    lbv = b->constInt(s->loc(), ivType, 0);
    stepv = b->constInt(s->loc(), ivType, 1);
  }
  std::vector<ir::Value *> operands = {lbv, ubv, stepv};
  operands.insert(operands.end(), inits.begin(), inits.end());
  std::vector<ir::Type> resultTypes;
  for (auto *v : inits)
    resultTypes.push_back(v->type);
  ir::Op *forOp = b->create(ir::OpKind::For, s->loc(), operands, resultTypes);
  forOp->setNumStages(loopStages);
  forOp->setWarpSpecialize(warpSpecialize);
  forOp->setFlatten(flatten);
  forOp->regions.push_back(std::make_unique<ir::Block>());
  ir::Block *body = forOp->regions[0].get();
  body->parent = forOp;
  std::string ivName = dyn_cast<ast::NameExpr>(s->target)->name;
  ir::Value *iv = body->addArg(ir::Type::scalar(ivType), ivName);
  Env inner = env;
  inner[ivName] = SVal::tensor(iv);
  std::vector<ir::Value *> bodyArgs;
  for (ir::Value *init : inits)
    bodyArgs.push_back(body->addArg(init->type));
  bindCarried(cv, bodyArgs, inner);

  BuilderScope scope(b);
  b = std::make_unique<ir::Builder>(body);
  if (down) // the variable lb + j * step of iteration j
    inner[ivName] = SVal::tensor(b->binary(ir::OpKind::Add, s->loc(), first,
                                           b->binary(ir::OpKind::Mul, s->loc(), iv, stride)));
  ++loopDepth;
  ++runtimeLoopDepth;
  execBlock(s->body, inner);
  --runtimeLoopDepth;
  --loopDepth;
  std::vector<ir::Value *> yields;
  yieldCarried(cv, inits, inner, s->loc(), yields);
  // Constexpr variables may not be changed by the loop body.
  for (auto &n : assigned) {
    auto it = env.find(n);
    if (it == env.end() || carriable(it->second))
      continue;
    auto jt = inner.find(n);
    if (jt != inner.end() && carriable(jt->second))
      fail(s->loc(), "variable '" + n + "' holds the compile-time constant " + it->second.describe() +
                         " before the loop but a runtime value inside it; initialise it with a tensor "
                         "(e.g. tl.zeros or tl.full) before the loop");
    if (jt != inner.end())
      checkLoopConstant(n, it->second, jt->second, s->loc());
  }
  b->create(ir::OpKind::Yield, s->loc(), yields, {});
  scope.restore();
  std::vector<ir::Value *> results;
  for (size_t i = 0; i < inits.size(); ++i)
    results.push_back(forOp->result(static_cast<unsigned>(i)));
  bindCarried(cv, results, env);
}

Specializer::CarriedVars Specializer::collectCarried(const std::set<std::string> &assigned, const Env &env,
                                                     std::vector<ir::Value *> &inits) {
  CarriedVars cv;
  for (auto &n : assigned) {
    auto it = env.find(n);
    if (it == env.end() || !carriable(it->second))
      continue;
    cv.names.push_back(n);
    cv.templates.push_back(it->second);
    cv.firstLeaf.push_back(inits.size());
    flatten(it->second, inits);
  }
  cv.firstLeaf.push_back(inits.size());
  return cv;
}

void Specializer::bindCarried(const CarriedVars &cv, const std::vector<ir::Value *> &values, Env &e) {
  for (size_t c = 0; c < cv.names.size(); ++c) {
    for (size_t i = cv.firstLeaf[c]; i < cv.firstLeaf[c + 1]; ++i)
      values[i]->nameHint = cv.names[c];
    size_t next = cv.firstLeaf[c];
    e[cv.names[c]] = rebuild(cv.templates[c], values, next);
  }
}

void Specializer::yieldCarried(const CarriedVars &cv, const std::vector<ir::Value *> &inits, const Env &after,
                               SourceLoc loc, std::vector<ir::Value *> &yields) {
  for (size_t c = 0; c < cv.names.size(); ++c) {
    auto it = after.find(cv.names[c]);
    const SVal v = it != after.end() ? it->second : SVal();
    const SVal &before = cv.templates[c];
    std::vector<ir::Value *> leaves;
    flatten(v, leaves);
    bool same = v.kind == before.kind && leaves.size() == cv.firstLeaf[c + 1] - cv.firstLeaf[c];
    for (size_t i = 0; same && i < leaves.size(); ++i)
      same = leaves[i]->type == inits[cv.firstLeaf[c] + i]->type;
    if (!same) {
      std::string was = before.isTensor() ? before.v->type.str() : before.describe();
      fail(loc, "loop-carried variable '" + cv.names[c] + "' is " + was + " before the loop but " + v.describe() +
                    " at the end of its body; it must keep its type");
    }
    yields.insert(yields.end(), leaves.begin(), leaves.end());
  }
}

void Specializer::flatten(const SVal &v, std::vector<ir::Value *> &leaves) {
  if (v.isTensor()) {
    leaves.push_back(v.v);
    return;
  }
  if (v.isAggregate())
    for (auto &e : v.elts)
      flatten(e, leaves);
}

SVal Specializer::rebuild(const SVal &templ, const std::vector<ir::Value *> &leaves, size_t &next) {
  if (templ.isTensor())
    return SVal::tensor(leaves[next++]);
  if (templ.isAggregate()) {
    SVal r = templ;
    for (auto &e : r.elts)
      e = rebuild(e, leaves, next);
    return r;
  }
  return templ;
}

void Specializer::checkLoopConstant(const std::string &n, const SVal &before, const SVal &after, SourceLoc loc) {
  // A runtime loop carries runtime values only: a compile-time value its body changes would be one
  // value on one iteration and another on the next (a barrier slot picked by the iteration, a
  // string): the body must leave it as it was (index a barrier array with a runtime index).
  if (!before.isNumber() && !carriable(after) && !sameValue(before, after))
    fail(loc, "variable '" + n + "' is " + before.describe() + " before the loop and another " + after.describe() +
                  " at the end of its body: a runtime loop carries tensors and numbers only, so a compile-time "
                  "value (a barrier slot, a pipe endpoint, a string) must be the same on every iteration");
}

bool Specializer::carriable(const SVal &v) {
  if (v.isTensor())
    return true;
  if (v.isAggregate())
    for (auto &e : v.elts)
      if (carriable(e))
        return true;
  return false;
}

void Specializer::materializeCarriedNumbers(const std::set<std::string> &assigned, Env &env, SourceLoc loc) {
  for (auto &n : assigned) {
    auto it = env.find(n);
    if (it != env.end() && it->second.isNumber())
      it->second = SVal::tensor(toTensor(it->second, loc));
  }
}

void Specializer::execWhile(const ast::WhileStmt *s, Env &env) {
  if (!s->orelse.empty())
    fail(s->loc(), "'while ... else' is not supported");
  if (pythonDepth > 0) { // a constexpr function: Python's loop, run at compile time
    while (true) {
      chargeStatement(s->loc());
      SVal c = eval(s->cond, env);
      if (!c.isConstexpr())
        fail(s->cond->loc(), "a constexpr function's 'while' condition must be a compile-time value, got " +
                                 c.describe());
      if (!truthy(c, s->cond->loc()))
        break;
      ++loopDepth;
      execBlock(s->body, env);
      --loopDepth;
      clearFlags(env, {kContinued});
      if (exitState(env) == Exit::Yes)
        break;
    }
    clearFlags(env, {kBroke, kContinued});
    return;
  }
  if (breaksOut(s->body) || returnsFrom(s->body)) {
    execLoopAsWhile(s, s->body, nullptr, s->cond, env);
    return;
  }
  std::set<std::string> assigned;
  collectAssigned(s->body, assigned, false);
  materializeCarriedNumbers(assigned, env, s->loc());
  std::vector<std::string> carried;
  std::vector<ir::Value *> inits;
  for (auto &n : assigned) {
    auto it = env.find(n);
    if (it != env.end() && it->second.isTensor()) {
      carried.push_back(n);
      inits.push_back(it->second.v);
    }
  }
  ir::Op *w = b->create(ir::OpKind::While, s->loc(), inits, {});
  for (int r = 0; r < 2; ++r) {
    w->regions.push_back(std::make_unique<ir::Block>());
    w->regions[r]->parent = w;
  }
  BuilderScope scope(b);
  // Before: the condition, on the carried values.
  Env before = env;
  for (size_t i = 0; i < carried.size(); ++i)
    before[carried[i]] = SVal::tensor(w->regions[0]->addArg(inits[i]->type, carried[i]));
  b = std::make_unique<ir::Builder>(w->regions[0].get());
  SVal c = eval(s->cond, before);
  if (c.isConstexpr() && !truthy(c, s->cond->loc()))
    c = SVal::boolean(false);
  ir::Value *cond = c.isConstexpr() ? toTensorOfType(c, ir::DType::I1, s->cond->loc()) : conditionValue(c, s->cond->loc());
  std::vector<ir::Value *> fwd = {cond};
  for (auto &a : w->regions[0]->args)
    fwd.push_back(a.get());
  b->create(ir::OpKind::Condition, s->cond->loc(), fwd, {});
  // After: the body.
  Env after = env;
  for (size_t i = 0; i < carried.size(); ++i)
    after[carried[i]] = SVal::tensor(w->regions[1]->addArg(inits[i]->type, carried[i]));
  b = std::make_unique<ir::Builder>(w->regions[1].get());
  ++loopDepth;
  ++runtimeLoopDepth;
  execBlock(s->body, after);
  --runtimeLoopDepth;
  --loopDepth;
  std::vector<ir::Value *> yields;
  for (size_t i = 0; i < carried.size(); ++i) {
    const SVal &v = after[carried[i]];
    if (!v.isTensor() || v.v->type != inits[i]->type)
      fail(s->loc(), "loop-carried variable '" + carried[i] + "' is " + inits[i]->type.str() +
                         " before the loop but " + v.describe() + " at the end of its body; it must keep its type");
    yields.push_back(v.v);
  }
  for (auto &n : assigned) {
    auto it = env.find(n);
    if (it == env.end() || it->second.isTensor())
      continue;
    auto jt = after.find(n);
    if (jt != after.end() && jt->second.isTensor())
      fail(s->loc(), "variable '" + n + "' holds the compile-time constant " + it->second.describe() +
                         " before the loop but a runtime value inside it; initialise it with a tensor before the loop");
  }
  b->create(ir::OpKind::Yield, s->loc(), yields, {});
  scope.restore();
  for (size_t i = 0; i < carried.size(); ++i) {
    ir::Value *r = w->addResult(inits[i]->type);
    r->nameHint = carried[i];
    env[carried[i]] = SVal::tensor(r);
  }
}

void Specializer::execLoopAsWhile(const ast::Stmt *s, const ast::Block &bodyAst, const ForBounds *forIv,
                                  const ast::Expr *condExpr, Env &env) {
  SourceLoc loc = s->loc();
  std::set<std::string> assigned;
  collectAssigned(bodyAst, assigned, false);
  if (forIv)
    assigned.erase(forIv->ivName);
  materializeCarriedNumbers(assigned, env, loc);
  // Carried: [iv,] the user's values (their runtime leaves), then the flags that leave the loop.
  std::vector<ir::Value *> inits;
  if (forIv)
    inits.push_back(forIv->lb);
  CarriedVars cv = collectCarried(assigned, env, inits);
  std::vector<const char *> flags;
  if (breaksOut(bodyAst))
    flags.push_back(kBroke);
  if (returnsFrom(bodyAst))
    flags.push_back(kReturned);
  size_t firstFlag = inits.size();
  for (size_t i = 0; i < flags.size(); ++i)
    inits.push_back(b->constInt(loc, ir::DType::I1, 0));

  ir::Op *w = b->create(ir::OpKind::While, loc, inits, {});
  for (int r = 0; r < 2; ++r) {
    w->regions.push_back(std::make_unique<ir::Block>());
    w->regions[r]->parent = w;
  }
  // Region arguments, and an environment that sees them.
  auto bind = [&](ir::Block *blk, Env &e) {
    std::vector<ir::Value *> args;
    for (size_t i = 0; i < inits.size(); ++i)
      args.push_back(blk->addArg(inits[i]->type, i == 0 && forIv ? forIv->ivName : ""));
    bindCarried(cv, args, e);
    return args;
  };
  BuilderScope scope(b);
  // Before: stop when a flag is set, else test the condition (not evaluated once a flag is set).
  Env before = env;
  std::vector<ir::Value *> bargs = bind(w->regions[0].get(), before);
  b = std::make_unique<ir::Builder>(w->regions[0].get());
  ir::Value *stop = nullptr;
  for (size_t i = firstFlag; i < bargs.size(); ++i)
    stop = stop ? b->binary(ir::OpKind::Or, loc, stop, bargs[i]) : bargs[i];
  ir::Value *cond;
  if (forIv) {
    cond = b->cmp(loc, forIv->down ? ir::CmpPred::Gt : ir::CmpPred::Lt, bargs[0], forIv->ub);
    // A runtime step that is not positive runs no iteration (rather than never ending).
    if (!forIv->step->def || forIv->step->def->kind != ir::OpKind::Constant)
      cond = b->binary(ir::OpKind::And, loc, cond,
                       b->cmp(loc, ir::CmpPred::Gt, forIv->step, b->constInt(loc, forIv->step->type.dtype(), 0)));
    if (stop)
      cond = b->binary(ir::OpKind::And, loc, cond, b->unary(ir::OpKind::Not, loc, stop));
  } else if (!stop) {
    SVal c = eval(condExpr, before);
    cond = c.isConstexpr() ? b->constInt(condExpr->loc(), ir::DType::I1, truthy(c, condExpr->loc()))
                           : conditionValue(c, condExpr->loc());
  } else {
    ir::Op *ifOp = b->create(ir::OpKind::If, condExpr->loc(), {stop}, {});
    for (int r = 0; r < 2; ++r) {
      ifOp->regions.push_back(std::make_unique<ir::Block>());
      ifOp->regions[r]->parent = ifOp;
    }
    ir::Builder outer = *b;
    b = std::make_unique<ir::Builder>(ifOp->regions[0].get());
    b->create(ir::OpKind::Yield, condExpr->loc(), {b->constInt(condExpr->loc(), ir::DType::I1, 0)}, {});
    b = std::make_unique<ir::Builder>(ifOp->regions[1].get());
    SVal c = eval(condExpr, before);
    ir::Value *cv = c.isConstexpr() ? b->constInt(condExpr->loc(), ir::DType::I1, truthy(c, condExpr->loc()))
                                    : conditionValue(c, condExpr->loc());
    b->create(ir::OpKind::Yield, condExpr->loc(), {cv}, {});
    b = std::make_unique<ir::Builder>(outer);
    cond = ifOp->addResult(ir::Type::scalar(ir::DType::I1));
  }
  std::vector<ir::Value *> fwd = {cond};
  fwd.insert(fwd.end(), bargs.begin(), bargs.end());
  b->create(ir::OpKind::Condition, loc, fwd, {});

  // After: the body, with the flags cleared; then the next iv and the carried values.
  Env after = env;
  std::vector<ir::Value *> aargs = bind(w->regions[1].get(), after);
  if (forIv)
    after[forIv->ivName] = SVal::tensor(aargs[0]);
  clearFlags(after, {kReturned, kBroke, kContinued});
  b = std::make_unique<ir::Builder>(w->regions[1].get());
  ++loopDepth;
  ++runtimeLoopDepth;
  execBlock(bodyAst, after);
  --runtimeLoopDepth;
  --loopDepth;
  std::vector<ir::Value *> yields;
  if (forIv)
    yields.push_back(b->binary(ir::OpKind::Add, loc, aargs[0], forIv->step));
  yieldCarried(cv, inits, after, loc, yields);
  for (const char *f : flags)
    yields.push_back(toTensorOfType(flagOf(after, f), ir::DType::I1, loc));
  for (auto &n : assigned) {
    auto it = env.find(n);
    if (it == env.end() || carriable(it->second))
      continue;
    auto jt = after.find(n);
    if (jt != after.end() && carriable(jt->second))
      fail(loc, "variable '" + n + "' holds the compile-time constant " + it->second.describe() +
                    " before the loop but a runtime value inside it; initialise it with a tensor (e.g. tl.zeros "
                    "or tl.full) before the loop");
    if (jt != after.end())
      checkLoopConstant(n, it->second, jt->second, loc);
  }
  b->create(ir::OpKind::Yield, loc, yields, {});
  scope.restore();
  std::vector<ir::Value *> results;
  for (size_t i = 0; i < inits.size(); ++i)
    results.push_back(w->addResult(inits[i]->type));
  bindCarried(cv, results, env);
  for (size_t i = 0; i < flags.size(); ++i)
    if (flags[i] == std::string(kReturned))
      env[kReturned] = SVal::tensor(results[firstFlag + i]);
}

std::unique_ptr<ir::Function> specialize(const ast::Module &module, const SpecializeOptions &opts,
                                         DiagnosticEngine &diags) {
  Specializer s(module, opts, diags);
  return s.run();
}

} // namespace tle::sema
