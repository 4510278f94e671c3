// Compile-time `raise`: a raise statement executed by Python the compiler runs (a module-level
// helper, a @triton.constexpr_function, a -D expression's call) is reported as the exception
// Python would raise, not as a statement kernels lack.
#include "Sema.h"

#include <llvm/Support/Casting.h>
#include <llvm/Support/SaveAndRestore.h>

#include <sstream>

namespace tle::sema {

using llvm::dyn_cast;

namespace {

/// Python's repr of a string: single quotes, unless only double quotes avoid escaping.
std::string pyRepr(const std::string &s) {
  char q = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  return q + s + q;
}

/// The name an exception is written with: `ValueError`, `errors.ConfigError` -> `ConfigError`.
std::string exceptionName(const ast::Expr *e) {
  if (auto *n = dyn_cast<ast::NameExpr>(e))
    return n->name;
  if (auto *a = dyn_cast<ast::AttributeExpr>(e))
    return a->attr;
  return "";
}

} // namespace

void Specializer::raiseAtCompileTime(const ast::OtherStmt *s, Env &env) {
  // The exception as Python's repr shows it; an argument the compiler cannot compute is `...`.
  auto argText = [&](const ast::Expr *a) -> std::string {
    DiagnosticEngine quiet(diags.sources());
    std::ostringstream sink;
    quiet.setStream(sink);
    try {
      SVal v = moduleProbe(quiet)->eval(a, env);
      if (v.kind == SVal::Kind::Str)
        return pyRepr(v.s);
      if (v.isConstexpr())
        return constexprRecord(v);
    } catch (...) { // an argument that fails (or raises) itself
    }
    return "...";
  };
  std::string what = "an exception", type;
  if (!s->raised) {
    what = "the exception being handled (a bare raise)";
  } else if (auto *c = dyn_cast<ast::CallExpr>(s->raised); c && !exceptionName(c->callee).empty()) {
    type = exceptionName(c->callee);
    what = type + "(";
    for (size_t i = 0; i < c->args.size(); ++i)
      what += (i ? ", " : "") + argText(c->args[i]);
    what += ")";
  } else if (std::string name = exceptionName(s->raised); !name.empty()) {
    what = type = name;
  }
  if (moduleLevel_ || pyTryDepth_ > 0)
    throw PythonRaised{s->loc(), type, what, callChainNotes()};
  fail(s->loc(), "the Python run at compile time raised " + what);
}

bool Specializer::execTryCompileTime(const ast::TryStmt *t, Env &env) {
  bool left = false;
  try {
    llvm::SaveAndRestore<int> depth(pyTryDepth_, pyTryDepth_ + 1);
    left = execBlock(t->body, env);
  } catch (PythonRaised &r) {
    const ast::ExceptHandler *handler = nullptr;
    for (const ast::ExceptHandler &h : t->handlers)
      if (!handler && exceptHandlerCatches(h, r.type))
        handler = &h;
    if (!handler) {
      execBlock(t->finalbody, env);
      if (moduleLevel_ || pyTryDepth_ > 0)
        throw;
      fail(r.loc, "the Python run at compile time raised " + r.exception, r.notes);
    }
    left = execBlock(handler->body, env);
    return execBlock(t->finalbody, env) || left;
  }
  if (!left)
    left = execBlock(t->orelse, env);
  return execBlock(t->finalbody, env) || left;
}

std::string Specializer::moduleRaised(const PythonRaised &r) const {
  if (moduleUncertain_ == 0) {
    diags.error(r.loc, "the module-level Python raised " + r.exception +
                           " at compile time (importing the module stops there, as in Python)");
    for (const Note &n : r.notes)
      diags.note(n.loc, n.msg);
    throw CompileAborted();
  }
  moduleRaises_.push_back(r.type);
  return "it raised " + r.exception + " at compile time";
}

} // namespace tle::sema
