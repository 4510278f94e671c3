// Module scope: a module's imports, @jit functions and constants, and the `if` / `try` blocks
// around them, run in order as Python runs a module on import.
#include "Imports.h"
#include "Registry.h"
#include "Sema.h"

#include <llvm/Support/Casting.h>
#include <llvm/Support/SaveAndRestore.h>

#include <algorithm>
#include <sstream>

using llvm::dyn_cast;
using llvm::cast;
using llvm::isa;

namespace tle::sema {

namespace {

/// The names import statements of `b` bind (in its `if`, `try` and loop bodies too): what a
/// failed import leaves unknown.
void collectImported(const ast::Block &b, std::set<std::string> &out) {
  for (const ast::Stmt *s : b) {
    if (auto *im = dyn_cast<ast::ImportStmt>(s)) {
      for (const ast::ImportAlias &a : im->names)
        out.insert(a.asname.empty() ? a.name.substr(0, a.name.find('.')) : a.asname);
    } else if (auto *f = dyn_cast<ast::ImportFromStmt>(s)) {
      for (const ast::ImportAlias &a : f->names)
        if (a.name != "*")
          out.insert(a.asname.empty() ? a.name : a.asname);
    } else if (auto *i = dyn_cast<ast::IfStmt>(s)) {
      collectImported(i->body, out);
      collectImported(i->orelse, out);
    } else if (auto *t = dyn_cast<ast::TryStmt>(s)) {
      collectImported(t->body, out);
      for (const ast::ExceptHandler &h : t->handlers)
        collectImported(h.body, out);
      collectImported(t->orelse, out);
      collectImported(t->finalbody, out);
    }
  }
}

/// Why a module-level name is unknown, from `why`, the error of evaluating its value. When that
/// error quotes other names' reasons ("'A' is a module-level value that is not known at compile
/// time: ..."), the first name and the last reason are kept: a chain of N assignments that each
/// read the previous one (`S = S + 1`) kept every link in every reason, N^2 bytes in all.
std::string unknownReason(const std::string &why) {
  const std::string unknown = "is a module-level value that is not known at compile time";
  if (why.empty())
    return unknown;
  const std::string marker = unknown + ": ";
  size_t first = why.find(marker), last = why.rfind(marker);
  if (first == last)
    return marker + why;
  return marker + why.substr(0, first + marker.size()) + why.substr(last + marker.size());
}

/// Modules of the language: the ones whose names kernels can use.
bool languageModule(const std::string &m) {
  static const std::set<std::string> known = {
      "triton",
      "triton.language",
      "triton.language.math",
      "triton.language.core",
      "triton.language.random",
      "triton.language.standard",
      "triton.language.PropagateNan",
      "triton.language.extra",
      "triton.language.extra.cuda",
      "triton.language.extra.libdevice",
      "triton.language.extra.cuda.libdevice",
      "libdevice",
      "triton.experimental",
      "triton.experimental.tle",
      "triton.experimental.tle.language",
      "triton.experimental.tle.language.gpu",
      "torch", // its dtypes, finfo and iinfo (Torch.cpp)
  };
  return known.count(m) != 0;
}

/// The message of the first error in a quiet diagnostics stream ("file:l:c: error: MSG").
std::string firstError(const std::string &text) {
  const std::string tag = "error: ";
  size_t at = text.find(tag);
  if (at == std::string::npos)
    return "";
  size_t end = text.find('\n', at);
  return text.substr(at + tag.size(), end == std::string::npos ? std::string::npos : end - at - tag.size());
}

/// Whether a value can outlive the specializer that computed it: compile-time values, language
/// functions, modules and @jit functions, and tuples of them (not tiles, which belong to its IR).
bool moduleValue(const SVal &v) {
  switch (v.kind) {
  case SVal::Kind::Tuple: case SVal::Kind::Dict: // a dict of functions: @triton.heuristics(VALUES)
    return std::all_of(v.elts.begin(), v.elts.end(), moduleValue);
  case SVal::Kind::Builtin: case SVal::Kind::Module: case SVal::Kind::JitFn: case SVal::Kind::PyFn:
    return true;
  default:
    return v.isConstexpr();
  }
}

/// The state module-level statements change, saved to run an alternative branch.
struct ScopeState {
  Env globals;
  std::map<std::string, Specializer::Unresolved> unresolved;
  std::map<std::string, const ast::FunctionDef *> jitFns;
  std::map<std::string, std::vector<const ast::CallExpr *>> wrappers;
};

/// Whether `callee` is `triton.heuristics(...)` / `triton.autotune(...)` (or the bare names),
/// the decorator factories whose result wraps a kernel.
bool isKernelWrapperFactory(const ast::Expr *callee) {
  auto *c = dyn_cast<ast::CallExpr>(callee);
  if (!c)
    return false;
  std::string name;
  if (auto *a = dyn_cast<ast::AttributeExpr>(c->callee))
    name = a->attr;
  else if (auto *n = dyn_cast<ast::NameExpr>(c->callee))
    name = n->name;
  return name == "heuristics" || name == "autotune";
}

/// Peels the decorators' call form off `e` (`triton.autotune(...)(triton.heuristics({...})(k))`):
/// returns the factory calls, outermost first, and the wrapped expression (`k`); no calls and
/// `e` itself when `e` is not that form.
std::pair<std::vector<const ast::CallExpr *>, const ast::Expr *> peelKernelWrappers(const ast::Expr *e) {
  std::vector<const ast::CallExpr *> calls;
  while (auto *c = dyn_cast<ast::CallExpr>(e)) {
    if (c->args.size() != 1 || !c->keywords.empty() || !isKernelWrapperFactory(c->callee))
      break;
    calls.push_back(cast<ast::CallExpr>(c->callee));
    e = c->args[0];
  }
  return {calls, e};
}

} // namespace

// Whether an `except` handler catches Python's exception `type` (by name): a bare handler, or
// one naming it, Exception or BaseException, alone or in a tuple.
bool exceptHandlerCatches(const ast::ExceptHandler &h, const std::string &type) {
  if (!h.type)
    return true;
  std::vector<const ast::Expr *> types = {h.type};
  if (auto *tu = dyn_cast<ast::TupleExpr>(h.type))
    types.assign(tu->elts.begin(), tu->elts.end());
  for (const ast::Expr *e : types) {
    auto *n = dyn_cast<ast::NameExpr>(e);
    if (n && (n->name == type || n->name == "Exception" || n->name == "BaseException"))
      return true;
  }
  return false;
}

std::unique_ptr<Specializer> Specializer::moduleProbe(DiagnosticEngine &quiet) const {
  auto probe = std::make_unique<Specializer>(mod, opts, quiet);
  probe->globals = globals;
  probe->unresolvedGlobals_ = unresolvedGlobals_;
  probe->modules_ = modules_;
  probe->self_ = self_;
  // Module-level code that builds values (`X = tl.arange(0, 16)`) builds them into a function
  // that is thrown away: they are not compile-time values.
  probe->fn = std::make_unique<ir::Function>();
  probe->b = std::make_unique<ir::Builder>(&probe->fn->body);
  probe->moduleLevel_ = true;
  return probe;
}

void Specializer::withModuleProbe(DiagnosticEngine &quiet, const std::function<void(Specializer &)> &f) {
  Specializer probe(mod, opts, quiet);
  probe.modules_ = modules_;
  probe.self_ = self_;
  // Module-level code that builds values (`X = tl.arange(0, 16)`) builds them into a function
  // that is thrown away: they are not compile-time values.
  probe.fn = std::make_unique<ir::Function>();
  probe.b = std::make_unique<ir::Builder>(&probe.fn->body);
  probe.moduleLevel_ = true;
  // The globals are lent, not copied (a copy per module statement made module evaluation
  // quadratic in the number of globals), and given back however `f` ends.
  struct Lend {
    Specializer &from, &to;
    Lend(Specializer &a, Specializer &b) : from(a), to(b) { swap(); }
    ~Lend() { swap(); }
    void swap() {
      from.globals.swap(to.globals);
      from.unresolvedGlobals_.swap(to.unresolvedGlobals_);
      from.passRunningModule(to); // a running module's names are read where its globals are
    }
  } lend(*this, probe);
  f(probe);
}

std::optional<SVal> Specializer::evalQuietly(const ast::Expr *e, std::string &why) {
  DiagnosticEngine quiet(diags.sources());
  std::ostringstream sink;
  quiet.setStream(sink);
  try {
    std::optional<SVal> result;
    withModuleProbe(quiet, [&](Specializer &probe) {
      Env env;
      SVal v = probe.eval(e, env);
      // Checked here: a value that is not a module value may point into the probe's IR.
      if (moduleValue(v))
        result = v;
      else
        why = "it is a " + v.describe() + ", not a compile-time value (compute it in the kernel)";
    });
    return result;
  } catch (CompileAborted &) {
    why = firstError(sink.str());
  } catch (PythonRaised &r) {
    why = moduleRaised(r);
  }
  return std::nullopt;
}

std::optional<SVal> Specializer::quietAttribute(const SVal &base, const std::string &attr, SourceLoc loc,
                                                std::string &why) const {
  DiagnosticEngine quiet(diags.sources());
  std::ostringstream sink;
  quiet.setStream(sink);
  try {
    return moduleProbe(quiet)->attribute(base, attr, loc);
  } catch (CompileAborted &) {
    why = firstError(sink.str());
  } catch (PythonRaised &r) {
    why = moduleRaised(r);
  }
  return std::nullopt;
}

bool Specializer::knownGlobal(const std::string &name) const {
  auto it = globals.find(name);
  if (it == globals.end())
    return false;
  const SVal &v = it->second;
  if (v.kind == SVal::Kind::Module)
    return languageModule(v.s) || userModule(v.s);
  if (v.kind == SVal::Kind::Builtin && v.s.rfind("libdevice.", 0) == 0)
    return findBuiltin(v.s) != nullptr;
  if (v.kind == SVal::Kind::PyFn) // a plain Python function means nothing to a kernel
    return v.i != 0;
  return true;
}

void Specializer::defineGlobal(const std::string &name, std::optional<SVal> v, const Unresolved &why,
                               std::set<std::string> *bound) {
  if (bound)
    bound->insert(name);
  guessedGlobals_.erase(name);
  if (v) {
    globals[name] = *v;
    unresolvedGlobals_.erase(name);
    return;
  }
  globals.erase(name);
  unresolvedGlobals_[name] = why;
}

void Specializer::defineModuleBlock(const ast::Block &blk, std::set<std::string> *bound) {
  for (const ast::Stmt *s : blk)
    defineModuleStmt(s, bound);
}

void Specializer::defineModuleStmt(const ast::Stmt *s, std::set<std::string> *bound) {
  auto save = [&] { return ScopeState{globals, unresolvedGlobals_, jitFns, kernelWrappers_}; };
  auto load = [&](const ScopeState &st) {
    globals = st.globals;
    unresolvedGlobals_ = st.unresolved;
    jitFns = st.jitFns;
    kernelWrappers_ = st.wrappers;
  };
  // Runs `alternative` from state `from` and, into the current state, takes each name it binds
  // that `primary` (the names the current state's branch bound) did not bind or left unknown.
  // A name both bind to different values keeps the current state's, and a kernel that reads it
  // gets the warning `ambiguous` (Specializer::guessedGlobals_).
  auto supplement = [&](const ast::Block &alternative, const ScopeState &from, const std::set<std::string> &primary,
                        const Unresolved &ambiguous) -> std::set<std::string> {
    std::set<std::string> unknown;
    for (const std::string &n : primary)
      if (!knownGlobal(n))
        unknown.insert(n);
    ScopeState mine = save();
    load(from);
    std::set<std::string> alt;
    defineModuleBlock(alternative, &alt);
    ScopeState theirs = save();
    load(mine);
    for (const std::string &n : alt) {
      if (primary.count(n) && !unknown.count(n)) {
        auto mineIt = globals.find(n), theirIt = theirs.globals.find(n);
        if (theirIt != theirs.globals.end() && mineIt != globals.end() && !sameValue(mineIt->second, theirIt->second))
          guessedGlobals_[n] = ambiguous;
        continue;
      }
      auto it = theirs.globals.find(n);
      if (it == theirs.globals.end())
        continue;
      if (it->second.kind == SVal::Kind::JitFn)
        jitFns[n] = it->second.fn;
      if (auto w = theirs.wrappers.find(n); w != theirs.wrappers.end())
        kernelWrappers_[n] = w->second;
      defineGlobal(n, it->second, "", bound);
      if (!primary.count(n)) // only the other branch binds it: a guess as well
        guessedGlobals_[n] = ambiguous;
    }
    return alt;
  };

  if (auto *imp = dyn_cast<ast::ImportStmt>(s)) {
    importNames(imp, bound); // Imports.cpp
    return;
  }
  if (auto *imp = dyn_cast<ast::ImportFromStmt>(s)) {
    importFrom(imp, bound);
    return;
  }
  if (auto *fd = dyn_cast<ast::FunctionDef>(s)) {
    if (std::none_of(fd->decorators.begin(), fd->decorators.end(), isJitDecorator)) {
      // A TLE-Raw declaration: @tle.raw.dialect(name=..., file=...) on a function whose body is `...`.
      std::string why;
      if (std::optional<SVal> raw = rawDecorated(fd, why)) {
        defineGlobal(fd->name, raw, "", bound);
        return;
      }
      bool looksRaw = std::any_of(fd->decorators.begin(), fd->decorators.end(), [](const ast::Expr *d) {
        auto *c = dyn_cast<ast::CallExpr>(d);
        auto *a = c ? dyn_cast<ast::AttributeExpr>(c->callee) : nullptr;
        auto *n = c ? dyn_cast<ast::NameExpr>(c->callee) : nullptr;
        return (a && a->attr == "dialect") || (n && n->name == "dialect");
      });
      if (looksRaw) { // a kernel that calls it reports why the declaration has no value
        defineGlobal(fd->name, std::nullopt,
                     Unresolved("is a TLE-Raw declaration whose decorator cannot be evaluated: " + why,
                                {{fd->loc(), "'" + fd->name + "' is declared here"}}),
                     bound);
        return;
      }
      // A Python function: `triton.jit(f)` may make a @jit function of it later, and a
      // @triton.constexpr_function is called by kernels at compile time; a @core.extern
      // function's body is inlined into the kernel as a @jit function's is.
      SVal f;
      f.kind = SVal::Kind::PyFn;
      f.fn = fd;
      auto marked = [&](bool (*is)(const ast::Expr *)) { return std::any_of(fd->decorators.begin(), fd->decorators.end(), is); };
      f.i = marked(isExternDecorator) ? kExternFn : marked(isConstexprFnDecorator) ? 1 : 0;
      defineGlobal(fd->name, f, "", bound);
      return;
    }
    jitFns[fd->name] = fd;
    SVal f;
    f.kind = SVal::Kind::JitFn;
    f.fn = fd;
    defineGlobal(fd->name, f, "", bound);
    return;
  }
  if (isa<ast::AssignStmt>(s) || isa<ast::AnnAssignStmt>(s)) {
    // `NAME = value`, `A = B = value`, `A, B = x, y` and `NAME: annotation = value` (e.g.
    // `BLOCK: tl.constexpr = tl.constexpr(64)`). Compile-time values and aliases of the
    // language's names (`exp = tl.exp`, `tl2 = tl`) become globals; other values are host code.
    std::vector<const ast::Expr *> targets;
    const ast::Expr *value = nullptr;
    if (auto *as = dyn_cast<ast::AssignStmt>(s)) {
      targets.assign(as->targets.begin(), as->targets.end());
      value = as->value;
    } else if (auto *an = dyn_cast<ast::AnnAssignStmt>(s); an->value) {
      targets = {an->target};
      value = an->value;
    }
    if (!value)
      return;
    // `k = triton.heuristics({...})(triton.jit(fn))`: the decorators' call form binds the kernel
    // it wraps; the wrappers' heuristics apply when `k` is compiled (autotune's configs are
    // tle-bench's, as the decorator's).
    auto [wrappers, wrapped] = peelKernelWrappers(value);
    std::string why;
    std::optional<SVal> v = evalQuietly(wrapped, why);
    if (v && !wrappers.empty()) { // the wrapped kernel's own wrappers (wherever it was bound) inside
      std::vector<const ast::CallExpr *> inner = wrappersOfValue(*v);
      wrappers.insert(wrappers.end(), inner.begin(), inner.end());
    }
    const std::string reason = unknownReason(why);
    for (const ast::Expr *t : targets) {
      if (auto *n = dyn_cast<ast::NameExpr>(t)) {
        kernelWrappers_.erase(n->name);
        std::optional<SVal> bound1 = v;
        if (v && v->kind == SVal::Kind::JitFn && !wrappers.empty() && self_) {
          kernelWrappers_[n->name] = wrappers;
          bound1->s = self_->name + "\n" + n->name; // its origin, for wrappersOfValue
        }
        defineGlobal(n->name, bound1, reason, bound);
        // `kernel = triton.jit(fn)`: a kernel of this module, under the name it is bound to.
        if (v && v->kind == SVal::Kind::JitFn && (isa<ast::CallExpr>(wrapped) || !wrappers.empty()))
          jitFns[n->name] = v->fn;
        continue;
      }
      auto *tu = dyn_cast<ast::TupleExpr>(t);
      if (!tu)
        continue; // attribute or subscript targets: host code
      for (size_t i = 0; i < tu->elts.size(); ++i) {
        auto *n = dyn_cast<ast::NameExpr>(tu->elts[i]);
        if (!n)
          continue;
        bool fits = v && v->kind == SVal::Kind::Tuple && v->elts.size() == tu->elts.size();
        defineGlobal(n->name, fits ? std::optional<SVal>(v->elts[i]) : std::nullopt, reason, bound);
      }
    }
    return;
  }
  if (auto *aug = dyn_cast<ast::AugAssignStmt>(s)) {
    if (auto *n = dyn_cast<ast::NameExpr>(aug->target))
      defineGlobal(n->name, std::nullopt, "is changed at module level by '" + std::string(ast::spelling(aug->op)) + "='",
                   bound);
    return;
  }
  if (auto *ifs = dyn_cast<ast::IfStmt>(s)) {
    std::string why;
    std::optional<SVal> c = evalQuietly(ifs->cond, why);
    if (c && c->isConstexpr()) {
      DiagnosticEngine quiet(diags.sources());
      std::ostringstream sink;
      quiet.setStream(sink);
      bool taken = false;
      try {
        withModuleProbe(quiet, [&](Specializer &probe) { taken = probe.truthy(*c, ifs->cond->loc()); });
      } catch (CompileAborted &) {
      }
      defineModuleBlock(taken ? ifs->body : ifs->orelse, bound);
      return;
    }
    // A condition only known at run time (`torch.cuda.is_available()`): the body's definitions,
    // with the else branch's for the names the body leaves unknown; a kernel reading a name the
    // branches bind to different values is warned that the first branch's was taken.
    ScopeState before = save();
    std::set<std::string> primary;
    llvm::SaveAndRestore<int> uncertain(moduleUncertain_, moduleUncertain_ + 1); // either branch may run
    defineModuleBlock(ifs->body, &primary);
    if (bound)
      bound->insert(primary.begin(), primary.end());
    if (why.empty())
      why = "it is not a compile-time value";
    Unresolved ambiguous("is taken from one branch of a module-level `if` whose condition is not known at "
                         "compile time (" + why + "); the other branch binds it differently, or not at all",
                         {{ifs->cond->loc(), "the condition"}});
    std::set<std::string> alt = supplement(ifs->orelse, before, primary, ambiguous);
    // A name only the body binds keeps, when the condition is false, its value from before the
    // `if` (or stays unbound): the body's is a guess too.
    for (const std::string &n : primary) {
      if (alt.count(n))
        continue; // both branches bind it: compared above
      auto now = globals.find(n), was = before.globals.find(n);
      if (now != globals.end() && !guessedGlobals_.count(n) &&
          (was == before.globals.end() || !sameValue(was->second, now->second)))
        guessedGlobals_[n] = ambiguous;
    }
    return;
  }
  if (auto *t = dyn_cast<ast::TryStmt>(s)) {
    std::set<std::string> primary;
    // Whether a handler catches Python's ImportError (bare, or naming ImportError, Exception or
    // BaseException, alone or in a tuple): only then does a failing import run it.
    auto catchesImportError = [](const ast::ExceptHandler &h) { return exceptHandlerCatches(h, "ImportError"); };
    const bool catches = std::any_of(t->handlers.begin(), t->handlers.end(), catchesImportError);
    const size_t raisedBefore = moduleRaises_.size();
    {
      llvm::SaveAndRestore<int> depth(moduleTryDepth_, moduleTryDepth_ + catches);
      llvm::SaveAndRestore<int> uncertain(moduleUncertain_, moduleUncertain_ + !t->handlers.empty());
      defineModuleBlock(t->body, &primary);
    }
    // The body raised at compile time (a helper's `raise`): the first handler that catches the
    // exception runs after it, and its definitions replace the body's, as in Python.
    if (moduleRaises_.size() > raisedBefore) {
      const std::string type = moduleRaises_[raisedBefore];
      moduleRaises_.resize(raisedBefore);
      for (const ast::ExceptHandler &h : t->handlers)
        if (exceptHandlerCatches(h, type)) {
          defineModuleBlock(h.body, bound);
          defineModuleBlock(t->finalbody, bound);
          return;
        }
    }
    if (bound)
      bound->insert(primary.begin(), primary.end());
    // The handler runs when an import of the body failed (Python's ImportError): a name an
    // import statement binds is unknown. A value the compiler cannot compute (vLLM's check of
    // Triton's active drivers) is no exception of Python's, and keeps the body's definitions.
    std::set<std::string> imported;
    collectImported(t->body, imported);
    bool failed = std::any_of(imported.begin(), imported.end(), [&](const std::string &n) { return !knownGlobal(n); });
    if (failed && !t->handlers.empty()) {
      // As if the import of the unknown name had raised: the first handler runs after the body
      // and its definitions replace the body's.
      std::set<std::string> handler;
      defineModuleBlock(t->handlers.front().body, &handler);
      if (bound)
        bound->insert(handler.begin(), handler.end());
    } else if (!failed) {
      defineModuleBlock(t->orelse, bound);
    }
    defineModuleBlock(t->finalbody, bound);
    return;
  }
  // Module-level loops are not run: a name they bind is unknown (an error where a kernel reads
  // it), not its value from before the loop.
  if (isa<ast::ForStmt>(s) || isa<ast::WhileStmt>(s)) {
    std::set<std::string> assigned;
    ast::Block one{const_cast<ast::Stmt *>(s)};
    collectAssigned(one, assigned);
    for (const std::string &n : assigned)
      defineGlobal(n, std::nullopt,
                   Unresolved(std::string("is bound by a module-level `") + (isa<ast::ForStmt>(s) ? "for" : "while") +
                                  "` loop, which the compiler does not run (bind it without a loop)",
                              {{s->loc(), "the loop"}}),
                   bound);
    return;
  }
  // A class is host code, but binds its name (other modules import it, even from a module
  // still running an import cycle): unknown, an error only where a kernel reads it.
  if (auto *o = dyn_cast<ast::OtherStmt>(s); o && !o->name.empty()) {
    defineGlobal(o->name, std::nullopt,
                 Unresolved("is a class, which the compiler does not evaluate", {{s->loc(), "the class"}}), bound);
    return;
  }
  // A `raise` Python certainly runs stops the module's import: an error naming the exception.
  if (auto *o = dyn_cast<ast::OtherStmt>(s); o && o->what == "raise statement" && moduleUncertain_ == 0) {
    DiagnosticEngine quiet(diags.sources());
    std::ostringstream sink;
    quiet.setStream(sink);
    try {
      withModuleProbe(quiet, [&](Specializer &probe) {
        Env env;
        probe.raiseAtCompileTime(o, env);
      });
    } catch (PythonRaised &r) {
      moduleRaised(r);
    }
  }
  // Expression statements, `with` and the rest are host code.
}

} // namespace tle::sema
