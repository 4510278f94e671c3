// @triton.heuristics: a kernel's constexpr parameters computed from the other parameters' values
// by the decorator's lambdas, as Triton's JIT does at each call; here once, at specialisation, from
// the compile-time values (constexprs, -D, the signature's literals).
#include "Imports.h"
#include "Sema.h"

#include <llvm/Support/Casting.h>

#include <cstdio>

namespace tle::sema {

using llvm::dyn_cast;

namespace {

/// True for `@triton.heuristics(...)` / `@heuristics(...)`.
bool isHeuristicsDecorator(const ast::Expr *d) {
  auto *c = dyn_cast<ast::CallExpr>(d);
  if (!c)
    return false;
  if (auto *a = dyn_cast<ast::AttributeExpr>(c->callee))
    return a->attr == "heuristics";
  if (auto *n = dyn_cast<ast::NameExpr>(c->callee))
    return n->name == "heuristics";
  return false;
}

/// A compile-time value as constexpr text (the form -D and the signature take).
std::string constexprText(const SVal &v) {
  switch (v.kind) {
  case SVal::Kind::Bool: return v.i ? "True" : "False";
  case SVal::Kind::Int: return std::to_string(v.i);
  case SVal::Kind::Float: {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v.f);
    return buf;
  }
  case SVal::Kind::Str: return v.s;
  case SVal::Kind::DType: return ir::name(v.dtype.dtype);
  default: return v.describe();
  }
}

/// The first `args['KEY']` in `e` whose KEY `known` lacks, or empty.
std::string firstUnknownKey(const ast::Expr *e, const std::string &param, const std::set<std::string> &known) {
  if (!e)
    return "";
  if (auto *s = dyn_cast<ast::SubscriptExpr>(e)) {
    auto *n = dyn_cast<ast::NameExpr>(s->base);
    auto *k = s->indices.size() == 1 ? dyn_cast<ast::StringLit>(s->indices[0]) : nullptr;
    if (n && k && n->name == param && !known.count(k->value))
      return k->value;
  }
  std::vector<const ast::Expr *> sub;
  if (auto *s = dyn_cast<ast::SubscriptExpr>(e)) {
    sub.push_back(s->base);
    sub.insert(sub.end(), s->indices.begin(), s->indices.end());
  } else if (auto *b = dyn_cast<ast::BinaryExpr>(e)) {
    sub = {b->lhs, b->rhs};
  } else if (auto *u = dyn_cast<ast::UnaryExpr>(e)) {
    sub = {u->operand};
  } else if (auto *c = dyn_cast<ast::CompareExpr>(e)) {
    sub.assign(c->operands.begin(), c->operands.end());
  } else if (auto *o = dyn_cast<ast::BoolOpExpr>(e)) {
    sub.assign(o->values.begin(), o->values.end());
  } else if (auto *i = dyn_cast<ast::IfExpExpr>(e)) {
    sub = {i->cond, i->thenExpr, i->elseExpr};
  } else if (auto *c = dyn_cast<ast::CallExpr>(e)) {
    sub.push_back(c->callee);
    sub.insert(sub.end(), c->args.begin(), c->args.end());
    for (const ast::Keyword &k : c->keywords)
      sub.push_back(k.value);
  } else if (auto *a = dyn_cast<ast::AttributeExpr>(e)) {
    sub = {a->base};
  } else if (auto *t = dyn_cast<ast::TupleExpr>(e)) {
    sub.assign(t->elts.begin(), t->elts.end());
  } else if (auto *l = dyn_cast<ast::ListExpr>(e)) {
    sub.assign(l->elts.begin(), l->elts.end());
  }
  for (const ast::Expr *x : sub)
    if (std::string k = firstUnknownKey(x, param, known); !k.empty())
      return k;
  return "";
}

} // namespace

std::vector<Specializer::Heuristic> Specializer::kernelHeuristics(const ast::FunctionDef *kernel,
                                                                  const std::vector<const ast::CallExpr *> &wrappers) {
  std::vector<Heuristic> out;
  std::vector<const ast::Expr *> decorators(wrappers.begin(), wrappers.end());
  decorators.insert(decorators.end(), kernel->decorators.begin(), kernel->decorators.end());
  for (const ast::Expr *d : decorators) {
    if (!isHeuristicsDecorator(d))
      continue;
    auto *c = dyn_cast<ast::CallExpr>(d);
    auto *dict = c->args.size() == 1 ? dyn_cast<ast::DictExpr>(c->args[0]) : nullptr;
    if (!dict)
      fail(d->loc(), "@triton.heuristics takes one dict literal {'NAME': lambda args: ...}");
    for (size_t i = 0; i < dict->keys.size(); ++i) {
      auto *key = dyn_cast<ast::StringLit>(dict->keys[i]);
      auto *fn = dyn_cast<ast::LambdaExpr>(dict->values[i]);
      if (!key || !fn || fn->params.size() != 1)
        fail(dict->keys[i]->loc(), "@triton.heuristics entries are 'NAME': lambda args: EXPR");
      out.push_back({key->value, fn});
    }
  }
  return out;
}

std::vector<const ast::CallExpr *> Specializer::kernelWrappersOf(const ast::FunctionDef *kernel) const {
  std::string name = opts.kernel;
  if (name.empty() && jitFns.size() == 1)
    name = jitFns.begin()->first;
  auto g = globals.find(name);
  if (g == globals.end() || g->second.kind != SVal::Kind::JitFn || g->second.fn != kernel)
    return {};
  return wrappersOfValue(g->second);
}

std::vector<const ast::CallExpr *> Specializer::wrappersOfValue(const SVal &v) const {
  size_t cut = v.s.find('\n');
  if (v.kind != SVal::Kind::JitFn || cut == std::string::npos)
    return {};
  const UserModule *home = userModule(v.s.substr(0, cut));
  if (!home)
    return {};
  const auto &names = home->wrapperNames();
  auto w = names.find(v.s.substr(cut + 1));
  return w == names.end() ? std::vector<const ast::CallExpr *>{} : w->second;
}

void Specializer::applyHeuristics(const std::vector<Heuristic> &heuristics, const std::set<std::string> &pending,
                                  const ast::FunctionDef *kernel, Env &env) {
  for (const Heuristic &h : heuristics) {
    if (!pending.count(h.param))
      continue;
    // The arguments' dict: every parameter with a compile-time value so far, in order.
    SVal args;
    args.kind = SVal::Kind::Dict;
    std::set<std::string> known;
    for (const ast::Param &p : kernel->params) {
      auto it = env.find(p.name);
      if (it == env.end() || !it->second.isConstexpr())
        continue;
      args.elts.push_back(SVal::str(p.name));
      args.elts.push_back(it->second);
      known.insert(p.name);
    }
    const std::string &arg = h.fn->params[0];
    if (std::string key = firstUnknownKey(h.fn->body, arg, known); !key.empty())
      fail(h.fn->loc(), "@triton.heuristics computes '" + h.param + "' from " + arg + "['" + key +
                            "'], which is not known when compiling ahead of time (a runtime parameter); give '" +
                            h.param + "' with -D " + h.param + "=VALUE or in the signature");
    Env scope;
    scope[arg] = args;
    SVal v = eval(h.fn->body, scope);
    if (!v.isConstexpr())
      fail(h.fn->loc(), "@triton.heuristics value of '" + h.param + "' is not a compile-time value (got " +
                            v.describe() + ")");
    env[h.param] = v;
    fn->constexprs.push_back({h.param, constexprText(v)});
  }
}

} // namespace tle::sema
