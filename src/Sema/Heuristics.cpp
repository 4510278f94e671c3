// @triton.heuristics: a kernel's constexpr parameters computed from the other parameters' values
// by the decorator's lambdas, as Triton's JIT does at each call; here once, at specialisation, from
// the compile-time values (constexprs, -D, the signature's literals).
#include "Imports.h"
#include "Sema.h"

#include <llvm/Support/Casting.h>

#include <cstdio>

namespace tle::sema {

using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

/// True for `@triton.heuristics(...)` / `@heuristics(...)`.
bool isHeuristicsDecorator(const ast::Expr *d) {
  auto *c = dyn_cast<ast::CallExpr>(d);
  return c && namesAttr(c->callee, "heuristics");
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

/// What a heuristic sees of a runtime parameter's argument: not None, and a torch.Tensor
/// (a pointer parameter), an int (an integer one), a float or a bool, by its signature type.
SVal runtimeArgument(const SVal &param) {
  const ir::Type &t = param.v->type;
  std::string kind = t.elem.isPointer()         ? "tensor"
                     : t.dtype() == ir::DType::I1 ? "bool"
                     : ir::isFloat(t.dtype())     ? "float"
                                                  : "int";
  return SVal::record("RuntimeArgument", {{"python_type", SVal::str(kind)}});
}

/// Whether `e` is `isinstance(PARAM['KEY'], CLASS)` of a runtime parameter KEY (decided by the
/// parameter's type).
bool isRuntimeIsinstance(const ast::Expr *e, const std::string &param, const std::set<std::string> &runtime) {
  auto *c = dyn_cast<ast::CallExpr>(e);
  auto *f = c ? dyn_cast<ast::NameExpr>(c->callee) : nullptr;
  if (!f || f->name != "isinstance" || c->args.size() != 2)
    return false;
  auto *s = dyn_cast<ast::SubscriptExpr>(c->args[0]);
  auto *n = s ? dyn_cast<ast::NameExpr>(s->base) : nullptr;
  auto *k = s && s->indices.size() == 1 ? dyn_cast<ast::StringLit>(s->indices[0]) : nullptr;
  return n && k && n->name == param && runtime.count(k->value);
}

/// The first `args['KEY']` in `e` whose KEY `known` lacks, or empty.
std::string firstUnknownKey(const ast::Expr *e, const std::string &param, const std::set<std::string> &known,
                            const std::set<std::string> &runtime) {
  if (!e)
    return "";
  // `args['p'] is None` / `is not None` of a runtime parameter: decided (a typed argument is
  // never None; a None argument is the signature's constexpr None).
  if (auto *c = dyn_cast<ast::CompareExpr>(e); c && c->ops.size() == 1 &&
                                               (c->ops[0] == ast::CompareOp::Is || c->ops[0] == ast::CompareOp::IsNot)) {
    const ast::Expr *l = c->operands[0], *r = c->operands[1];
    if (isa<ast::NoneLit>(l))
      std::swap(l, r);
    auto *s = dyn_cast<ast::SubscriptExpr>(l);
    auto *n = s ? dyn_cast<ast::NameExpr>(s->base) : nullptr;
    auto *k = s && s->indices.size() == 1 ? dyn_cast<ast::StringLit>(s->indices[0]) : nullptr;
    if (isa<ast::NoneLit>(r) && n && k && n->name == param && runtime.count(k->value))
      return "";
  }
  if (isRuntimeIsinstance(e, param, runtime))
    return firstUnknownKey(cast<ast::CallExpr>(e)->args[1], param, known, runtime);
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
    if (std::string k = firstUnknownKey(x, param, known, runtime); !k.empty())
      return k;
  return "";
}

} // namespace

std::vector<Specializer::Heuristic> Specializer::kernelHeuristics(const ast::FunctionDef *kernel,
                                                                  const std::vector<const ast::CallExpr *> &wrappers) {
  // Triton's heuristics(values): any mapping of parameter names to functions of the arguments'
  // dict, given positionally or as values=. Evaluated here: a dict display whose values are
  // lambdas or names of module-level functions whose body is one `return EXPR`, or a
  // module-level name bound to such a dict of functions. A decorator in another form is not evaluated: its
  // parameters then need values from -D or the signature, as any constexpr without one.
  std::vector<Heuristic> out;
  std::vector<const ast::Expr *> decorators(wrappers.begin(), wrappers.end());
  decorators.insert(decorators.end(), kernel->decorators.begin(), kernel->decorators.end());
  // (arg, body) of a function value: a one-`return` Python function of one parameter.
  auto asFunction = [](const SVal &v) -> std::optional<std::pair<std::string, const ast::Expr *>> {
    auto *fd = v.kind == SVal::Kind::PyFn ? v.fn : nullptr;
    auto *ret = fd && fd->params.size() == 1 && fd->body.size() == 1 ? dyn_cast<ast::ReturnStmt>(fd->body[0]) : nullptr;
    if (!ret || !ret->value)
      return std::nullopt;
    return std::make_pair(fd->params[0].name, (const ast::Expr *)ret->value);
  };
  for (const ast::Expr *d : decorators) {
    if (!isHeuristicsDecorator(d))
      continue;
    auto *c = dyn_cast<ast::CallExpr>(d);
    const ast::Expr *values = c->args.size() == 1 ? c->args[0] : nullptr;
    for (const ast::Keyword &k : c->keywords)
      if (k.name == "values" && c->args.empty())
        values = k.value;
    if (!values)
      fail(d->loc(), "@triton.heuristics takes one mapping of parameter names to functions (values=)");
    std::vector<Heuristic> these;
    bool usable = true;
    if (auto *dict = dyn_cast<ast::DictExpr>(values)) {
      for (size_t i = 0; i < dict->keys.size() && usable; ++i) {
        auto *key = dyn_cast<ast::StringLit>(dict->keys[i]);
        std::optional<std::pair<std::string, const ast::Expr *>> f;
        std::string why;
        if (auto *fn = dyn_cast<ast::LambdaExpr>(dict->values[i]); fn && fn->params.size() == 1)
          f = std::make_pair(fn->params[0], (const ast::Expr *)fn->body);
        else if (std::optional<SVal> v = evalQuietly(dict->values[i], why))
          f = asFunction(*v);
        usable = key && f;
        if (usable)
          these.push_back({key->value, f->first, f->second, dict->values[i]->loc()});
      }
    } else {
      // A module-level name bound to a dict of functions (not itself a compile-time value).
      std::optional<SVal> m;
      if (auto *n = dyn_cast<ast::NameExpr>(values); n && globals.count(n->name))
        m = globals.at(n->name);
      usable = m && m->kind == SVal::Kind::Dict;
      for (size_t i = 0; usable && i + 1 < m->elts.size(); i += 2) {
        auto f = asFunction(m->elts[i + 1]);
        usable = m->elts[i].kind == SVal::Kind::Str && f;
        if (usable)
          these.push_back({m->elts[i].s, f->first, f->second, values->loc()});
      }
    }
    if (usable)
      out.insert(out.end(), these.begin(), these.end());
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
    // A runtime parameter enters as a record that is not None: only `is (not) None` and
    // isinstance() (a pointer is a torch.Tensor, an integer an int, ...) read it.
    std::set<std::string> known, runtime;
    for (const ast::Param &p : kernel->params) {
      auto it = env.find(p.name);
      if (it == env.end())
        continue;
      bool constant = it->second.isConstexpr();
      args.elts.push_back(SVal::str(p.name));
      args.elts.push_back(constant ? it->second : runtimeArgument(it->second));
      (constant ? known : runtime).insert(p.name);
    }
    const std::string &arg = h.arg;
    if (std::string key = firstUnknownKey(h.body, arg, known, runtime); !key.empty())
      fail(h.loc, "@triton.heuristics computes '" + h.param + "' from " + arg + "['" + key +
                            "'], which is not known when compiling ahead of time (a runtime parameter); give '" +
                            h.param + "' with -D " + h.param + "=VALUE or in the signature");
    Env scope;
    scope[arg] = args;
    SVal v = eval(h.body, scope);
    if (!v.isConstexpr())
      fail(h.loc, "@triton.heuristics value of '" + h.param + "' is not a compile-time value (got " +
                            v.describe() + ")");
    env[h.param] = v;
    fn->constexprs.push_back({h.param, constexprText(v)});
  }
}

} // namespace tle::sema
