// Specialisation entry point: module scan, kernel selection, parameter binding, statements and
// runtime `if`s (loops: Loops.cpp).
#include "Sema.h"

#include <llvm/Support/Casting.h>

#include <algorithm>
#include <iterator>
#include <set>

using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

namespace tle::sema {

bool namesAttr(const ast::Expr *e, const std::string &name) {
  if (auto *a = dyn_cast_or_null<ast::AttributeExpr>(e))
    return a->attr == name;
  auto *n = dyn_cast_or_null<ast::NameExpr>(e);
  return n && n->name == name;
}

bool isJitDecorator(const ast::Expr *d) {
  if (auto *c = dyn_cast<ast::CallExpr>(d))
    d = c->callee;
  return namesAttr(d, "jit");
}

bool isConstexprFnDecorator(const ast::Expr *d) { return namesAttr(d, "constexpr_function"); }

Specializer::Specializer(const ast::Module &m, const SpecializeOptions &o, DiagnosticEngine &d)
    : mod(m), opts(o), diags(d) {}

const ast::FunctionDef *Specializer::onlyUnnamedJitFn() {
  std::set<std::string> named; // the names other @jit functions read: helpers, combine functions
  for (auto &[n, f] : jitFns)
    ast::forEachNameUse(*f, [&, self = n](const std::string &use) {
      if (use != self)
        named.insert(use);
    });
  std::vector<const ast::FunctionDef *> roots;
  std::string names, rootNames;
  for (auto &[n, f] : jitFns) {
    names += (names.empty() ? "" : ", ") + n;
    if (!named.count(n)) {
      roots.push_back(f);
      rootNames += (rootNames.empty() ? "" : ", ") + n;
    }
  }
  if (roots.size() == 1)
    return roots.front();
  fail({mod.file, 0, 0}, "several @jit functions (" + names + ")" +
                             (roots.size() > 1 ? ", of which no other names " + rootNames : "") +
                             "; choose the kernel with -n/--kernel");
}

std::unique_ptr<ir::Function> Specializer::run() {
  // Module scope: the file's imports (and the modules they run), @jit functions, module-level
  // constants (Imports.cpp, ModuleScope.cpp).
  runMainModule();

  // Kernel selection.
  const ast::FunctionDef *kernel = nullptr;
  if (!opts.kernel.empty()) {
    auto it = jitFns.find(opts.kernel);
    auto imported = globals.find(opts.kernel); // a kernel the file imports from another module
    if (it == jitFns.end() && imported != globals.end() && imported->second.kind == SVal::Kind::JitFn) {
      kernel = imported->second.fn;
    } else if (it == jitFns.end()) {
      std::string names;
      for (auto &[n, f] : jitFns)
        names += (names.empty() ? "" : ", ") + n;
      fail({mod.file, 0, 0}, "no @triton.jit kernel named '" + opts.kernel + "'" +
                                 (names.empty() ? " (the file defines none)" : " (kernels: " + names + ")"));
    } else {
      kernel = it->second;
    }
  } else if (jitFns.size() == 1) {
    kernel = jitFns.begin()->second;
  } else if (jitFns.empty()) {
    fail({mod.file, 0, 0}, "no @triton.jit or @tle.jit kernel in this file");
  } else {
    kernel = onlyUnnamedJitFn();
  }

  // The call-form wrappers of the name it was selected by, read before the kernel's home
  // module's names replace the input's.
  const std::vector<const ast::CallExpr *> wrappers = kernelWrappersOf(kernel);
  // A kernel imported from another module runs with that module's names.
  SavedGlobals kernelHome = enterHomeModule(kernel);
  (void)kernelHome;

  // @triton.jit(debug=True) makes a debug build, like --debug; so does
  // `kernel = triton.jit(fn, debug=True)`.
  debug = opts.debug;
  if (auto it = globals.find(opts.kernel); !opts.kernel.empty() && it != globals.end() &&
                                           it->second.kind == SVal::Kind::JitFn && it->second.i)
    debug = it->second.i == 2;
  for (auto &[name, v] : globals)
    if (opts.kernel.empty() && v.kind == SVal::Kind::JitFn && v.fn == kernel && v.i)
      debug = v.i == 2;
  for (const ast::Expr *d : kernel->decorators)
    if (auto *c = dyn_cast<ast::CallExpr>(d); c && isJitDecorator(d))
      for (auto &k : c->keywords)
        if (k.name == "debug") {
          Env empty;
          SVal v = eval(k.value, empty);
          if (!v.isConstexpr())
            fail(k.value->loc(), "debug= must be a compile-time value");
          debug = truthy(v, k.value->loc());
        }

  fn = std::make_unique<ir::Function>();
  fn->name = kernel->name;
  fn->loc = kernel->loc();
  fn->numWarps = opts.numWarps;
  fn->boundedWaits = debug; // a debug build's mbarrier waits trap instead of hanging
  b = std::make_unique<ir::Builder>(&fn->body);

  // Parameter binding. @triton.heuristics' parameters, when nothing else gives them, are set after
  // the others, from their values (Heuristics.cpp).
  std::vector<Heuristic> heuristics = kernelHeuristics(kernel, wrappers);
  std::set<std::string> heuristic, pending;
  for (const Heuristic &h : heuristics)
    heuristic.insert(h.param);
  auto givenElsewhere = [&](const std::string &name) { return opts.defines.count(name) || heuristic.count(name); };
  std::optional<std::vector<SignatureEntry>> sig;
  if (opts.signature) {
    sig = parseSignature(*opts.signature, diags);
    if (!sig)
      throw CompileAborted();
    sig = completeSignature(kernel, *sig, givenElsewhere);
  }
  std::set<std::string> usedDefines;
  Env env;
  for (size_t i = 0; i < kernel->params.size(); ++i) {
    const ast::Param &p = kernel->params[i];
    if (p.star)
      fail(p.loc, "kernel parameters cannot be *args or **kwargs");
    // A -D value always wins for that name.
    auto def = opts.defines.find(p.name);
    bool annotatedConstexpr = false;
    if (p.annotation) {
      Env empty;
      SVal ann = eval(p.annotation, empty);
      if (ann.kind == SVal::Kind::Builtin && ann.s == "tl.constexpr")
        annotatedConstexpr = true;
    }
    // A literal, or an expression evaluated in the kernel's module (Signature.cpp).
    auto bindConst = [&](const std::string &text, const SignatureEntry *entry) {
      std::string record;
      env[p.name] = commandLineConstexpr(p.name, text, entry, record);
      fn->constexprs.push_back({p.name, record});
    };
    if (def != opts.defines.end()) {
      usedDefines.insert(p.name);
      if (sig && (*sig)[i].kind == SignatureEntry::Kind::Runtime)
        fail(p.loc, "parameter '" + p.name + "' is given by -D but the signature makes it a runtime parameter");
      bindConst(def->second, nullptr);
      continue;
    }
    if (sig) {
      const SignatureEntry &e = (*sig)[i];
      if (e.kind == SignatureEntry::Kind::Constexpr && e.constexprText.empty() && heuristic.count(p.name)) {
        pending.insert(p.name);
        continue;
      }
      if (e.fromDefault) { // left out of the signature: its default, a compile-time value
        Env empty;
        SVal v = eval(p.defaultValue, empty);
        if (!v.isConstexpr())
          fail(p.defaultValue->loc(), "default value of parameter '" + p.name + "' (left out of the signature) is "
                                      "not a compile-time value: give it in the signature");
        env[p.name] = v;
        fn->constexprs.push_back({p.name, constexprRecord(v)});
        continue;
      }
      if (e.kind == SignatureEntry::Kind::Constexpr) {
        bindConst(e.constexprText, &e);
        continue;
      }
      if (signatureBMeansModuleName(p, e, annotatedConstexpr)) {
        bindConst("B", &e);
        continue;
      }
      if (annotatedConstexpr)
        fail(p.loc, "parameter '" + p.name + "' is annotated tl.constexpr but the signature gives it the runtime type " +
                        signatureText(e) + (e.bareAliasB ? " ('B' is Triton's alias of i1; the kernel's module defines no 'B')"
                                                     : ""));
      if (e.kind == SignatureEntry::Kind::TensorDesc) {
        env[p.name] = bindHostDescriptor(p, e);
        continue;
      }
      if (e.kind == SignatureEntry::Kind::Tuple) {
        env[p.name] = bindTupleParam(kernel, p, e, p.name);
        continue;
      }
      if (e.specializedToOne) {
        env[p.name] = SVal::integer(1);
        fn->constexprs.push_back({p.name, "1"});
        continue;
      }
      ir::Param param{p.name, e.type, e.divisibility, p.loc};
      fn->params.push_back(param);
      env[p.name] = SVal::tensor(fn->body.addArg(ir::Type(e.type), p.name));
      continue;
    }
    if (heuristic.count(p.name)) { // @triton.heuristics overrides a default, as in Triton
      pending.insert(p.name);
      continue;
    }
    // No signature: the annotation decides.
    if (annotatedConstexpr) {
      if (p.defaultValue) {
        Env empty;
        SVal v = eval(p.defaultValue, empty);
        if (!v.isConstexpr())
          fail(p.defaultValue->loc(), "default value of constexpr parameter '" + p.name + "' is not a compile-time value");
        env[p.name] = v;
        fn->constexprs.push_back({p.name, v.describe()});
        continue;
      }
      fail(p.loc, "constexpr parameter '" + p.name + "' has no value: pass -D " + p.name + "=VALUE or a signature with -s");
    }
    if (!p.annotation && opts.argTypes.count(p.name)) {
      auto parsed = parseSignature(opts.argTypes.at(p.name), diags);
      if (!parsed || parsed->size() != 1 || (*parsed)[0].kind != SignatureEntry::Kind::Runtime ||
          (*parsed)[0].specializedToOne)
        fail(p.loc, "parameter '" + p.name + "': '" + opts.argTypes.at(p.name) + "' is not a parameter type");
      const SignatureEntry &e = (*parsed)[0];
      fn->params.push_back({p.name, e.type, e.divisibility, p.loc});
      env[p.name] = SVal::tensor(fn->body.addArg(ir::Type(e.type), p.name));
      continue;
    }
    if (!p.annotation)
      fail(p.loc, "parameter '" + p.name + "' has no type: annotate it (e.g. '" + p.name +
                      ": tl.pointer_type(tl.float32)') or pass a signature with -s");
    Env empty;
    SVal ann = eval(p.annotation, empty);
    ir::ScalarType t;
    if (ann.kind == SVal::Kind::DType) {
      t = ann.dtype;
      if (ir::isFP8(t.dtype))
        fail(p.annotation->loc(), "parameter '" + p.name + "': an fp8 scalar parameter is not supported; pass fp8 "
                                  "data through a pointer (tl.pointer_type(" + "tl." +
                                      (t.dtype == ir::DType::F8E4M3 ? "float8e4nv" : "float8e5") + "))");
    } else if (ann.kind == SVal::Kind::Str) {
      auto parsed = parseSignature(ann.s, diags);
      if (!parsed || parsed->size() != 1 || (*parsed)[0].kind != SignatureEntry::Kind::Runtime)
        fail(p.annotation->loc(), "annotation '" + ann.s + "' is not a parameter type");
      t = (*parsed)[0].type;
      fn->params.push_back({p.name, t, (*parsed)[0].divisibility, p.loc});
      env[p.name] = SVal::tensor(fn->body.addArg(ir::Type(t), p.name));
      continue;
    } else {
      fail(p.annotation->loc(), "annotation of parameter '" + p.name + "' is not a type (got " + ann.describe() + ")");
    }
    fn->params.push_back({p.name, t, 1, p.loc});
    env[p.name] = SVal::tensor(fn->body.addArg(ir::Type(t), p.name));
  }
  applyHeuristics(heuristics, pending, kernel, env);
  for (auto &[k, v] : opts.defines)
    if (!usedDefines.count(k))
      fail({}, "-D " + k + "=" + v + ": kernel '" + kernel->name + "' has no parameter named '" + k + "'");

  callStack.push_back(kernel);
  returns.emplace_back();
  execBlock(kernel->body, env);
  returns.pop_back();
  callStack.pop_back();
  b->setInsertionPointToEnd(&fn->body);
  b->create(ir::OpKind::Return, kernel->loc(), {}, {});
  return std::move(fn);
}

SVal Specializer::bindTupleParam(const ast::FunctionDef *kernel, const ast::Param &p, const SignatureEntry &e,
                                 const std::string &name) {
  std::vector<SVal> elts;
  for (size_t i = 0; i < e.elements.size(); ++i) {
    const SignatureEntry &x = e.elements[i];
    std::string flat = name + "_" + std::to_string(i);
    if (x.kind == SignatureEntry::Kind::Tuple) {
      elts.push_back(bindTupleParam(kernel, p, x, flat));
      continue;
    }
    for (const ast::Param &q : kernel->params)
      if (q.name == flat)
        fail(p.loc, "tuple parameter '" + p.name + "' passes its element " + std::to_string(i) + " as the kernel "
                    "parameter '" + flat + "', but the kernel has a parameter of that name");
    fn->params.push_back({flat, x.type, x.divisibility, p.loc});
    elts.push_back(SVal::tensor(fn->body.addArg(ir::Type(x.type), flat)));
  }
  return SVal::tuple(elts);
}

std::vector<SignatureEntry>
Specializer::completeSignature(const ast::FunctionDef *kernel, const std::vector<SignatureEntry> &sig,
                               const std::function<bool(const std::string &)> &givenElsewhere) {
  const std::vector<ast::Param> &params = kernel->params;
  if (sig.size() == params.size())
    return sig;
  size_t defined = 0;
  for (const ast::Param &p : params)
    defined += givenElsewhere(p.name);
  // Entries for the parameters -D and the heuristics do not give, or (with neither) for a
  // leading run of the parameters, the others having defaults. With -D, a run that ends before
  // the first parameter given elsewhere may leave out the rest, when they all have defaults or
  // are given (read either way, the entries bind the same parameters).
  size_t firstDefined = 0;
  while (firstDefined < params.size() && !givenElsewhere(params[firstDefined].name))
    ++firstDefined;
  bool skipDefined = defined > 0 && sig.size() == params.size() - defined;
  if (defined > 0 && sig.size() <= firstDefined) {
    skipDefined = true;
    for (size_t i = sig.size(); i < params.size(); ++i)
      skipDefined &= givenElsewhere(params[i].name) || (params[i].defaultValue && !params[i].star);
  }
  auto countError = [&] {
    fail(kernel->loc(), "signature has " + std::to_string(sig.size()) + " entries but kernel '" + kernel->name +
                            "' has " + std::to_string(params.size()) + " parameters" +
                            (defined ? " (" + std::to_string(defined) + " given by -D or @triton.heuristics)" : ""));
  };
  std::vector<SignatureEntry> full;
  size_t next = 0;
  for (const ast::Param &p : params) {
    SignatureEntry e;
    e.kind = SignatureEntry::Kind::Constexpr;
    if (skipDefined && givenElsewhere(p.name)) { // an empty constexpr: -D or the heuristic gives it
      full.push_back(e);
    } else if (next < sig.size()) {
      full.push_back(sig[next++]);
    } else if ((defined == 0 || skipDefined) && p.defaultValue && !p.star) {
      e.fromDefault = true;
      full.push_back(e);
    } else {
      countError();
    }
  }
  if (next != sig.size())
    countError();
  return full;
}

SVal Specializer::bindHostDescriptor(const ast::Param &p, const SignatureEntry &e) {
  // The descriptor's parts are runtime parameters: NAME_base (16-byte aligned), NAME_shape0..,
  // and NAME_stride0.. for all but the last dim (whose stride is 1, as Triton's host
  // TensorDescriptor requires), each stride a multiple of 16 elements; in the kernel it is the
  // descriptor tl.make_tensor_descriptor builds from them.
  size_t rank = e.blockShape.size();
  auto addParam = [&](const std::string &name, ir::ScalarType t, int64_t divisibility) {
    fn->params.push_back({name, t, divisibility, p.loc});
    return SVal::tensor(fn->body.addArg(ir::Type(t), name));
  };
  SourceLoc loc = p.loc;
  SVal base = addParam(p.name + "_base", ir::ScalarType::ptrTo(e.type.dtype), 16);
  std::vector<SVal> shape, strides, block;
  for (size_t d = 0; d < rank; ++d)
    shape.push_back(addParam(p.name + "_shape" + std::to_string(d), ir::ScalarType{ir::DType::I32}, 1));
  for (size_t d = 0; d + 1 < rank; ++d)
    strides.push_back(addParam(p.name + "_stride" + std::to_string(d), ir::ScalarType{ir::DType::I64}, 16));
  strides.push_back(SVal::integer(1));
  for (int64_t b : e.blockShape)
    block.push_back(SVal::integer(b));
  CallArgs args{loc, {{loc, base}, {loc, SVal::tuple(shape)}, {loc, SVal::tuple(strides)}, {loc, SVal::tuple(block)}}, {}};
  return callBuiltin("tl.make_tensor_descriptor", args);
}

// ---------------------------------------------------------------------------------------------
// Statements

namespace {

const char *const kFlags[] = {Specializer::kReturned, Specializer::kBroke, Specializer::kContinued};

} // namespace

namespace {

/// The first entry of `env` that is a control-flow entry ("<return>", "<break>", ...). No Python
/// name starts with '<', so these entries are one contiguous range of the map from there: the
/// checks after every statement look them up once instead of once per flag.
template <typename E> auto firstFlag(E &env) { return env.lower_bound(std::string(1, '<')); }

bool isFlagEntry(const std::string &name) { return !name.empty() && name[0] == '<'; }

} // namespace

SVal flagOf(const Env &env, const char *name) {
  auto it = env.find(name);
  return it == env.end() ? SVal::boolean(false) : it->second;
}

void clearFlags(Env &env, std::initializer_list<const char *> names) {
  for (auto it = firstFlag(env); it != env.end() && isFlagEntry(it->first);) {
    bool named = it->first == Specializer::kExited ||
                 std::any_of(names.begin(), names.end(), [&](const char *n) { return it->first == n; });
    it = named ? env.erase(it) : std::next(it);
  }
}

Specializer::Exit Specializer::exitState(const Env &env) const {
  // Yes when the exit flag or any of kFlags is a true constant, else Maybe when one is a
  // runtime i1, else No.
  Exit e = Exit::No;
  for (auto it = firstFlag(env); it != env.end() && isFlagEntry(it->first); ++it) {
    const SVal &f = it->second;
    if (it->first == kExited) {
      if (f.kind == SVal::Kind::Bool && f.i)
        return Exit::Yes;
      continue;
    }
    if (std::none_of(std::begin(kFlags), std::end(kFlags), [&](const char *n) { return it->first == n; }))
      continue;
    if (f.isTensor())
      e = Exit::Maybe;
    else if (f.i)
      return Exit::Yes;
  }
  return e;
}

ir::Value *Specializer::exitCondition(const Env &env, SourceLoc loc) {
  ir::Value *any = nullptr;
  for (const char *n : kFlags) {
    SVal f = flagOf(env, n);
    if (!f.isTensor())
      continue;
    any = any ? b->binary(ir::OpKind::Or, loc, any, f.v) : f.v;
  }
  return any ? any : b->constInt(loc, ir::DType::I1, 0);
}

bool Specializer::execBlock(const ast::Block &blk, Env &env) { return execStmts(blk, 0, env); }

bool Specializer::execStmts(const ast::Block &blk, size_t first, Env &env) {
  for (size_t i = first; i < blk.size(); ++i) {
    execStmt(blk[i], env);
    Exit e = exitState(env);
    if (e == Exit::Yes)
      return true;
    if (e == Exit::Maybe && i + 1 < blk.size()) {
      // The rest of the block runs only where no flag is set.
      ast::Block rest(blk.begin() + static_cast<long>(i) + 1, blk.end());
      std::set<std::string> assigned;
      collectAssigned(rest, assigned);
      guardRest(env, assigned, blk[i + 1]->loc(), [&](Env &inner) { execStmts(blk, i + 1, inner); });
      return exitState(env) == Exit::Yes;
    }
  }
  return false;
}

void Specializer::guardRest(Env &env, const std::set<std::string> &assigned, SourceLoc loc,
                            const std::function<void(Env &)> &body) {
  ir::Value *exited = exitCondition(env, loc);
  ir::Value *cond = b->unary(ir::OpKind::Not, loc, exited);
  ir::Op *ifOp = b->create(ir::OpKind::If, loc, {cond}, {});
  Env branch[2] = {env, env};
  clearFlags(branch[0], {kReturned, kBroke, kContinued});
  // In the else region some flag is set, whatever the flags' runtime values.
  branch[1][kExited] = SVal::boolean(true);
  BuilderScope scope(b);
  for (int r = 0; r < 2; ++r) {
    ifOp->regions.push_back(std::make_unique<ir::Block>());
    ifOp->regions[r]->parent = ifOp;
  }
  b = std::make_unique<ir::Builder>(ifOp->regions[0].get());
  body(branch[0]);
  std::string line = std::to_string(loc.line);
  joinBranches(ifOp, env, branch, assigned, loc, "'if'",
               "is assigned only in code from line " + line +
                   " on, which an earlier 'return', 'break' or 'continue' may skip, so it has no value here; "
                   "assign it before that statement");
  scope.restore();
}

std::optional<SVal> Specializer::placeholder(const SVal &like, const SVal *prior, SourceLoc loc) {
  if (like.isTensor()) {
    const ir::Type &t = like.v->type;
    if (prior && prior->isTensor() && prior->v->type == t)
      return *prior;
    if (t.elem.isPointer()) {
      // Any pointer of the same type in scope will do: the value is never used.
      for (size_t i = 0; i < fn->params.size(); ++i)
        if (fn->body.args[i]->type.elem == t.elem)
          return SVal::tensor(t.isTile() ? b->splat(loc, fn->body.args[i].get(), t.shape) : fn->body.args[i].get());
      return std::nullopt;
    }
    ir::Value *z = ir::isFloat(t.dtype()) ? b->constFloat(loc, t.dtype(), 0.0) : b->constInt(loc, t.dtype(), 0);
    return SVal::tensor(t.isTile() ? b->splat(loc, z, t.shape) : z);
  }
  if (like.isAggregate()) {
    SVal r = like;
    for (size_t i = 0; i < r.elts.size(); ++i) {
      const SVal *p = prior && prior->kind == like.kind && prior->elts.size() == like.elts.size() ? &prior->elts[i]
                                                                                                 : nullptr;
      auto e = placeholder(like.elts[i], p, loc);
      if (!e)
        return std::nullopt;
      r.elts[i] = *e;
    }
    return r;
  }
  return like;
}

bool sameValue(const SVal &a, const SVal &b) {
  if (a.kind != b.kind || a.i != b.i || a.s != b.s || !(a.dtype == b.dtype) || a.v != b.v || a.fn != b.fn ||
      a.ints != b.ints || a.elts.size() != b.elts.size())
    return false;
  if (a.f != b.f && !(a.f != a.f && b.f != b.f)) // NaN equals NaN here: the same constant
    return false;
  for (size_t k = 0; k < a.elts.size(); ++k)
    if (!sameValue(a.elts[k], b.elts[k]))
      return false;
  return true;
}

namespace {

/// Pairs up the runtime leaves of two values of one structure (tuples and block pointers
/// element by element); false when the structures differ.
bool pairLeaves(const SVal &t, const SVal &e, std::vector<SVal> &ts, std::vector<SVal> &es) {
  bool tAgg = t.isAggregate();
  bool eAgg = e.isAggregate();
  if (!tAgg && !eAgg) {
    ts.push_back(t);
    es.push_back(e);
    return true;
  }
  if (t.kind != e.kind || t.elts.size() != e.elts.size() || t.ints != e.ints || t.s != e.s)
    return false;
  for (size_t i = 0; i < t.elts.size(); ++i)
    if (!pairLeaves(t.elts[i], e.elts[i], ts, es))
      return false;
  return true;
}

/// Whether two values are the same (the same runtime values, equal compile-time values): merging
/// them needs no `if` result.
bool identical(const SVal &t, const SVal &e) { return sameValue(t, e); }

/// `templ` with its leaves (as paired by pairLeaves) replaced from `leaves` starting at `next`.
SVal rebuildLeaves(const SVal &templ, const std::vector<SVal> &leaves, size_t &next) {
  if (!templ.isAggregate())
    return leaves[next++];
  SVal r = templ;
  for (auto &e : r.elts)
    e = rebuildLeaves(e, leaves, next);
  return r;
}

} // namespace

void Specializer::joinBranches(ir::Op *ifOp, Env &env, Env (&branch)[2], const std::set<std::string> &assigned,
                               SourceLoc loc, const std::string &what, const std::string &oneSideNote) {
  bool dead[2] = {exitState(branch[0]) == Exit::Yes, exitState(branch[1]) == Exit::Yes};
  std::set<std::string> names = assigned;
  for (const char *n : {kReturned, kBroke, kContinued, kReturnValue})
    if (branch[0].count(n) || branch[1].count(n))
      names.insert(n);
  struct Pending {
    std::string name;
    SVal t, e;
  };
  std::vector<Pending> pending;
  for (auto &n : names) {
    auto ti = branch[0].find(n), ei = branch[1].find(n);
    bool have[2] = {ti != branch[0].end(), ei != branch[1].end()};
    bool isFlag = n == kReturned || n == kBroke || n == kContinued;
    if (isFlag) {
      SVal t = flagOf(branch[0], n.c_str()), e = flagOf(branch[1], n.c_str());
      if (!t.isTensor() && !e.isTensor() && t.i != e.i) {
        // Set on exactly one side: the flag is the condition (or its negation).
        ir::Block *parent = ifOp->parent;
        auto at = parent->ops.begin();
        while (at->get() != ifOp)
          ++at;
        b->setInsertionPoint(parent, std::next(at));
        env[n] = SVal::tensor(t.i ? ifOp->operands[0] : b->unary(ir::OpKind::Not, loc, ifOp->operands[0]));
        continue;
      }
      pending.push_back({n, t, e});
      continue;
    }
    const SVal *prior = env.count(n) ? &env.at(n) : nullptr;
    bool isRet = n == kReturnValue;
    if (isRet && (!have[0] || !have[1]) && (have[0] || have[1])) {
      // Returned on one side only: the other side's value is never read.
      int live = have[0] ? 0 : 1;
      b->setInsertionPoint(ifOp->regions[1 - live].get(), ifOp->regions[1 - live]->ops.end());
      auto ph = placeholder(live ? ei->second : ti->second, nullptr, loc);
      if (!ph)
        fail(loc, "cannot merge the returned " + (live ? ei->second : ti->second).describe() +
                      " with the path that does not return");
      pending.push_back({n, live ? *ph : ti->second, live ? ei->second : *ph});
      continue;
    }
    if (isRet) {
      // The value returned on whichever path returned.
      if (have[0] && have[1])
        pending.push_back({n, ti->second, ei->second});
      continue;
    }
    if (dead[0] && dead[1])
      continue; // nothing after this point runs
    if (dead[0] || dead[1]) {
      int live = dead[0] ? 1 : 0;
      if (!have[live]) {
        env.erase(n);
        continue;
      }
      const SVal &lv = live ? ei->second : ti->second;
      b->setInsertionPoint(ifOp->regions[1 - live].get(), ifOp->regions[1 - live]->ops.end());
      const SVal *deadPrior = have[1 - live] ? &(live ? ti->second : ei->second) : prior;
      auto ph = placeholder(lv, deadPrior, loc);
      if (!ph) {
        env.erase(n);
        continue;
      }
      pending.push_back({n, live ? *ph : lv, live ? lv : *ph});
      continue;
    }
    if (!have[0] || !have[1]) {
      env.erase(n);
      onlyOneBranch_[n] = oneSideNote;
      continue;
    }
    pending.push_back({n, ti->second, ei->second});
  }
  // Values that are the same on both sides pass unchanged.
  for (size_t i = 0; i < pending.size();) {
    if (identical(pending[i].t, pending[i].e)) {
      env[pending[i].name] = pending[i].t;
      pending.erase(pending.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
  // Merge leaf by leaf (tuples and block pointers element-wise).
  std::vector<std::string> leafNames;
  std::vector<SVal> ts, es;
  std::vector<size_t> firstLeaf;
  for (auto &p : pending) {
    firstLeaf.push_back(ts.size());
    if (!pairLeaves(p.t, p.e, ts, es))
      fail(loc, "'" + p.name + "' is " + p.t.describe() + " in one branch and " + p.e.describe() +
                    " in the other; both branches of a runtime " + what + " must give it the same structure");
    leafNames.resize(ts.size(), p.name);
  }
  firstLeaf.push_back(ts.size());
  std::vector<SVal> merged = mergeBranches(ifOp, leafNames, ts, es, loc, what.c_str());
  for (size_t i = 0; i < pending.size(); ++i) {
    size_t next = firstLeaf[i];
    env[pending[i].name] = rebuildLeaves(pending[i].t, merged, next);
  }
  env.erase(kExited);
  if (dead[0] && dead[1])
    env[kExited] = SVal::boolean(true);
}

void Specializer::assign(const ast::Expr *target, const SVal &v, Env &env, SourceLoc loc) {
  if (auto *n = dyn_cast<ast::NameExpr>(target)) {
    SVal val = v;
    if (val.isTensor() && val.v->nameHint.empty() && val.v->def)
      val.v->nameHint = n->name;
    // So does a shared buffer (tle.gpu.alloc): the barrier-protocol check's messages name it.
    if (val.kind == SVal::Kind::Buffer && !val.elts.empty() && val.elts[0].isTensor() && val.elts[0].v->def &&
        val.elts[0].v->def->kind == ir::OpKind::LocalAlloc && val.elts[0].v->nameHint.empty())
      val.elts[0].v->nameHint = n->name;
    // A barrier array takes the name of the variable it is first bound to (messages name it).
    if (val.kind == SVal::Kind::Namespace && val.s == "barrier" && val.attr("_id").kind == SVal::Kind::Int &&
        size_t(val.attr("_id").i) < barriers.size() && barriers[val.attr("_id").i].name.empty())
      barriers[val.attr("_id").i].name = n->name;
    env[n->name] = val;
    return;
  }
  if (isa<ast::TupleExpr>(target) || isa<ast::ListExpr>(target)) {
    const auto &elts = isa<ast::TupleExpr>(target) ? dyn_cast<ast::TupleExpr>(target)->elts
                                                   : dyn_cast<ast::ListExpr>(target)->elts;
    if (v.kind != SVal::Kind::Tuple)
      fail(target->loc(), "cannot unpack " + v.describe() + " into " + std::to_string(elts.size()) + " names");
    if (v.elts.size() != elts.size())
      fail(target->loc(), "cannot unpack " + std::to_string(v.elts.size()) + " values into " +
                              std::to_string(elts.size()) + " names");
    for (size_t i = 0; i < elts.size(); ++i)
      assign(elts[i], v.elts[i], env, loc);
    return;
  }
  if (isa<ast::SubscriptExpr>(target))
    fail(target->loc(), "assignment to a subscript is not supported: tiles are immutable values");
  if (isa<ast::AttributeExpr>(target))
    fail(target->loc(), unsupportedHere("assignment to an attribute"));
  fail(target->loc(), "cannot assign to this expression");
}

void Specializer::chargeStatement(SourceLoc loc) {
  const char *why = " (unrolled tl.static_range loops and inlined helpers count each time; use range() for a "
                    "runtime loop)";
  if (++statements > kMaxStatements)
    fail(loc, "compile-time work limit: the kernel executes more than " + std::to_string(kMaxStatements) +
                  " statements while being compiled" + why);
  if (ir::opsCreatedOnThisThread() - opsAtStart > kMaxOps)
    fail(loc, "compile-time work limit: the kernel creates more than " + std::to_string(kMaxOps) + " tile-IR ops" +
                  why);
}

namespace {

/// Adds the elements and string bytes of `v` and everything it holds to `n`, stopping as soon as
/// either passes its cap (so a deep or huge value costs at most the caps' worth of steps).
void measureValue(const SVal &v, Specializer::ValueSize &n, size_t maxElements, size_t maxBytes) {
  n.bytes += v.s.size();
  for (const SVal &e : v.elts) {
    if (++n.elements > maxElements || n.bytes > maxBytes)
      return;
    measureValue(e, n, maxElements, maxBytes);
  }
}

} // namespace

void Specializer::chargeElement(ValueSize &total, const SVal &elt, SourceLoc loc) {
  ++total.elements;
  measureValue(elt, total, kMaxTupleElements, kMaxStringBytes);
  if (total.elements > kMaxTupleElements)
    fail(loc, "compile-time work limit: a compile-time value of more than " + std::to_string(kMaxTupleElements) +
                  " elements (the elements of the tuples, dicts and meshes in it count too)");
  if (total.bytes > kMaxStringBytes)
    fail(loc, elt.kind == SVal::Kind::Str && total.elements == 1
                  ? "compile-time work limit: a string of more than 1 MiB"
                  : "compile-time work limit: a compile-time value holding more than 1 MiB of strings");
}

void Specializer::checkValueSize(const SVal &v, SourceLoc loc) {
  ValueSize total;
  if (v.elts.empty()) {
    chargeElement(total, v, loc);
    return;
  }
  total.bytes = v.s.size();
  for (const SVal &e : v.elts)
    chargeElement(total, e, loc);
}

bool Specializer::execStmt(const ast::Stmt *s, Env &env) {
  chargeStatement(s->loc());
  switch (s->kind()) {
  case ast::Node::Kind::ExprStmt: {
    auto *es = dyn_cast<ast::ExprStmt>(s);
    if (isa<ast::StringLit>(es->value)) // docstring
      return false;
    eval(es->value, env);
    return false;
  }
  case ast::Node::Kind::Assign: {
    auto *as = dyn_cast<ast::AssignStmt>(s);
    SVal v = eval(as->value, env);
    for (const ast::Expr *t : as->targets)
      assign(t, v, env, s->loc());
    return false;
  }
  case ast::Node::Kind::AugAssign: {
    auto *as = dyn_cast<ast::AugAssignStmt>(s);
    SVal cur = eval(as->target, env);
    SVal rhs = eval(as->value, env);
    assign(as->target, binary(as->op, cur, rhs, as->loc(), as->target->loc(), as->value->loc()), env, s->loc());
    return false;
  }
  case ast::Node::Kind::AnnAssign: {
    auto *as = dyn_cast<ast::AnnAssignStmt>(s);
    if (!as->value)
      return false;
    // `X: tl.constexpr = value` binds the value whatever it is: Triton wraps a runtime value
    // in constexpr unchecked, and arithmetic on it unwraps it (FlagGems' sort kernels).
    SVal v = eval(as->value, env);
    eval(as->annotation, env);
    assign(as->target, v, env, s->loc());
    return false;
  }
  case ast::Node::Kind::Pass:
    return false;
  case ast::Node::Kind::Return: {
    auto *r = dyn_cast<ast::ReturnStmt>(s);
    SVal v = r->value ? eval(r->value, env) : SVal::none();
    if (callStack.size() == 1 && pythonDepth == 0 && v.kind != SVal::Kind::None)
      fail(s->loc(), "a kernel cannot return a value");
    if (v.kind != SVal::Kind::None && runtimeLoopDepth > 0)
      fail(s->loc(), "returning a value from inside a runtime loop is not supported; assign it to a variable, "
                     "'break', and return after the loop");
    Returns &rs = returns.back();
    if (v.kind == SVal::Kind::None) {
      if (!rs.none.valid())
        rs.none = s->loc();
    } else {
      if (!rs.value.valid())
        rs.value = s->loc();
      env[kReturnValue] = v;
    }
    env[kReturned] = SVal::boolean(true);
    return true;
  }
  case ast::Node::Kind::If: {
    auto *is = dyn_cast<ast::IfStmt>(s);
    SVal c = eval(is->cond, env);
    if (!c.isConstexpr()) {
      execRuntimeIf(is, c, env);
      return false;
    }
    return truthy(c, is->cond->loc()) ? execBlock(is->body, env) : execBlock(is->orelse, env);
  }
  case ast::Node::Kind::For:
    execFor(dyn_cast<ast::ForStmt>(s), env);
    return false;
  case ast::Node::Kind::Assert: {
    auto *as = dyn_cast<ast::AssertStmt>(s);
    SVal c = eval(as->test, env);
    if (!c.isConstexpr()) {
      // A runtime assert is tl.device_assert: a device assert in debug builds, else nothing.
      std::string msg;
      if (as->msg) {
        SVal m = eval(as->msg, env);
        if (m.kind != SVal::Kind::Str)
          fail(as->msg->loc(), "the message of a runtime 'assert' must be a string, got " + m.describe());
        msg = m.s;
      }
      deviceAssert({startLoc(as->test), c}, msg, nullptr, as->loc());
      return false;
    }
    if (!truthy(c, as->test->loc())) {
      std::string msg = "static assertion failed";
      if (as->msg) {
        SVal m = eval(as->msg, env);
        if (m.kind == SVal::Kind::Str)
          msg += ": " + m.s;
      }
      // Python run at compile time raises; in kernel code Triton makes `assert` a device
      // assert, compiled out without debug: a warning then, an error in a debug build (where
      // Triton's would fail on every launch).
      if (pythonDepth > 0 || debug)
        fail(as->loc(), msg);
      diags.warning(as->loc(), "assertion false at compile time" + msg.substr(std::string("static assertion failed").size()) +
                                   " (these constexprs break it): compiled as Triton compiles it without debug, the "
                                   "assert removed; with --debug it is an error");
    }
    return false;
  }
  case ast::Node::Kind::While:
    execWhile(dyn_cast<ast::WhileStmt>(s), env);
    return false;
  case ast::Node::Kind::Break:
  case ast::Node::Kind::Continue: {
    bool brk = isa<ast::BreakStmt>(s);
    if (loopDepth == 0)
      fail(s->loc(), std::string("'") + (brk ? "break" : "continue") + "' outside a loop" +
                         (callStack.size() > 1 ? " (a helper cannot leave its caller's loop)" : ""));
    env[brk ? kBroke : kContinued] = SVal::boolean(true);
    return true;
  }
  case ast::Node::Kind::FunctionDef:
    fail(s->loc(), "nested function definitions are not supported in a kernel");
  case ast::Node::Kind::Import:
  case ast::Node::Kind::ImportFrom:
    fail(s->loc(), "imports must be at module level, not inside a kernel");
  case ast::Node::Kind::Try:
    if (compileTimePython())
      return execTryCompileTime(dyn_cast<ast::TryStmt>(s), env);
    fail(s->loc(), unsupportedHere("try statement"));
  case ast::Node::Kind::OtherStmt: {
    auto *o = dyn_cast<ast::OtherStmt>(s);
    if (o->what == "raise statement" && compileTimePython())
      raiseAtCompileTime(o, env);
    fail(s->loc(), unsupportedHere(o->what));
  }
  default:
    fail(s->loc(), "statement not supported in a kernel");
  }
}

namespace {

void collectTargets(const ast::Expr *t, std::set<std::string> &out) {
  if (auto *n = dyn_cast<ast::NameExpr>(t))
    out.insert(n->name);
  else if (auto *tu = dyn_cast<ast::TupleExpr>(t))
    for (auto *e : tu->elts)
      collectTargets(e, out);
  else if (auto *l = dyn_cast<ast::ListExpr>(t))
    for (auto *e : l->elts)
      collectTargets(e, out);
}

} // namespace

void collectAssigned(const ast::Block &blk, std::set<std::string> &out, bool staticTargets) {
  for (const ast::Stmt *s : blk) {
    if (auto *a = dyn_cast<ast::AssignStmt>(s))
      for (auto *t : a->targets)
        collectTargets(t, out);
    else if (auto *a = dyn_cast<ast::AugAssignStmt>(s))
      collectTargets(a->target, out);
    else if (auto *a = dyn_cast<ast::AnnAssignStmt>(s))
      collectTargets(a->target, out);
    else if (auto *f = dyn_cast<ast::ForStmt>(s)) {
      auto *call = dyn_cast<ast::CallExpr>(f->iter);
      if (staticTargets || !call || !namesAttr(call->callee, "static_range"))
        collectTargets(f->target, out);
      collectAssigned(f->body, out, staticTargets);
    } else if (auto *i = dyn_cast<ast::IfStmt>(s)) {
      collectAssigned(i->body, out, staticTargets);
      collectAssigned(i->orelse, out, staticTargets);
    } else if (auto *w = dyn_cast<ast::WhileStmt>(s))
      collectAssigned(w->body, out, staticTargets);
  }
}

bool breaksOut(const ast::Block &blk) {
  for (const ast::Stmt *s : blk) {
    if (isa<ast::BreakStmt>(s))
      return true;
    if (auto *i = dyn_cast<ast::IfStmt>(s); i && (breaksOut(i->body) || breaksOut(i->orelse)))
      return true;
  }
  return false;
}

bool returnsFrom(const ast::Block &blk) {
  for (const ast::Stmt *s : blk) {
    if (isa<ast::ReturnStmt>(s))
      return true;
    if (auto *i = dyn_cast<ast::IfStmt>(s); i && (returnsFrom(i->body) || returnsFrom(i->orelse)))
      return true;
    if (auto *f = dyn_cast<ast::ForStmt>(s); f && returnsFrom(f->body))
      return true;
    if (auto *w = dyn_cast<ast::WhileStmt>(s); w && returnsFrom(w->body))
      return true;
  }
  return false;
}


ir::Value *Specializer::conditionValue(const SVal &c, SourceLoc loc) {
  if (!c.isTensor())
    fail(loc, "condition must be a boolean or integer scalar, got " + c.describe());
  ir::Value *v = c.v;
  if (v->type.isTile()) {
    if (v->type.numElements() != 1)
      fail(loc, "condition must be a scalar, got " + v->type.str());
    while (v->type.isTile())
      v = reduce(v, 0, ir::ReduceKind::Max, loc);
  }
  // A pointer is true when not null, as Triton casts it to int1 (vLLM's `if bias_ptr:` for an
  // optional tensor passed as a null pointer).
  if (v->type.elem.isPointer())
    v = castTo(v, ir::ScalarType{ir::DType::I64}, loc);
  if (v->type.dtype() != ir::DType::I1) {
    ir::Value *zero = toTensorOfType(SVal::integer(0), v->type.dtype(), loc);
    v = b->cmp(loc, ir::CmpPred::Ne, v, zero);
  }
  return v;
}

std::vector<SVal> Specializer::mergeBranches(ir::Op *ifOp, const std::vector<std::string> &names,
                                             std::vector<SVal> thenVals, std::vector<SVal> elseVals, SourceLoc loc,
                                             const char *what) {
  // Values that agree as compile-time constants stay constants; the rest become results.
  std::vector<SVal> merged(names.size());
  std::vector<size_t> resultIdx;
  std::vector<ir::Value *> yields[2];
  for (size_t i = 0; i < names.size(); ++i) {
    SVal &t = thenVals[i], &e = elseVals[i];
    if (sameValue(t, e)) {
      merged[i] = t;
      continue;
    }
    if (!(t.isTensor() || t.isNumber()) || !(e.isTensor() || e.isNumber()))
      fail(loc, "'" + names[i] + "' is " + t.describe() + " in one branch and " + e.describe() +
                    " in the other; only tensors and numbers can be merged after a runtime " + what);
    ir::Value *tv, *ev;
    b->setInsertionPoint(ifOp->regions[0].get(), ifOp->regions[0]->ops.end());
    if (t.isTensor() && e.isTensor()) {
      tv = t.v;
      ev = e.v;
    } else if (t.isTensor()) {
      tv = t.v;
      b->setInsertionPoint(ifOp->regions[1].get(), ifOp->regions[1]->ops.end());
      ev = toTensorOfType(e, tv->type.dtype(), loc);
      ev = broadcastTo(ev, tv->type.shape, loc);
    } else if (e.isTensor()) {
      ev = e.v;
      tv = toTensorOfType(t, ev->type.dtype(), loc);
      tv = broadcastTo(tv, ev->type.shape, loc);
    } else {
      ir::DType ty = literalType(t, loc);
      ir::DType ey = literalType(e, loc);
      ir::DType common = ty == ey ? ty : (ir::isFloat(ty) || ir::isFloat(ey)) ? ir::DType::F32 : integerPromote(ty, ey);
      tv = toTensorOfType(t, common, loc);
      b->setInsertionPoint(ifOp->regions[1].get(), ifOp->regions[1]->ops.end());
      ev = toTensorOfType(e, common, loc);
    }
    if (tv->type != ev->type)
      fail(loc, "'" + names[i] + "' is " + tv->type.str() + " in one branch and " + ev->type.str() +
                    " in the other; both branches of a runtime " + what + " must give it the same type");
    yields[0].push_back(tv);
    yields[1].push_back(ev);
    resultIdx.push_back(i);
  }
  for (int r = 0; r < 2; ++r) {
    b->setInsertionPoint(ifOp->regions[r].get(), ifOp->regions[r]->ops.end());
    b->create(ir::OpKind::Yield, loc, yields[r], {});
  }
  for (size_t k = 0; k < resultIdx.size(); ++k) {
    ir::Value *res = ifOp->addResult(yields[0][k]->type);
    if (names[resultIdx[k]].front() != '<')
      res->nameHint = names[resultIdx[k]];
    merged[resultIdx[k]] = SVal::tensor(res);
  }
  return merged;
}

void Specializer::execRuntimeIf(const ast::IfStmt *s, const SVal &c, Env &env) {
  ir::Value *cond = conditionValue(c, s->cond->loc());
  ir::Op *ifOp = b->create(ir::OpKind::If, s->loc(), {cond}, {});
  Env branchEnv[2] = {env, env};
  const ast::Block *blocks[2] = {&s->body, &s->orelse};
  BuilderScope scope(b);
  for (int r = 0; r < 2; ++r) {
    ifOp->regions.push_back(std::make_unique<ir::Block>());
    ifOp->regions[r]->parent = ifOp;
    b = std::make_unique<ir::Builder>(ifOp->regions[r].get());
    ++runtimeIfDepth;
    execBlock(*blocks[r], branchEnv[r]);
    --runtimeIfDepth;
  }
  // Names visible after the if: assigned in a branch and bound on both paths (or on the one
  // path that did not leave the block).
  std::set<std::string> assigned;
  collectAssigned(s->body, assigned);
  collectAssigned(s->orelse, assigned);
  joinBranches(ifOp, env, branchEnv, assigned, s->loc(), "'if'",
               "is assigned on only one path of the runtime 'if' at line " + std::to_string(s->loc().line) +
                   ", so it has no value here; assign it before the 'if' or in both branches");
  scope.restore();
}

SVal Specializer::runtimeIfExp(const ast::IfExpExpr *e, const SVal &c, Env &env) {
  ir::Value *cond = conditionValue(c, e->cond->loc());
  ir::Op *ifOp = b->create(ir::OpKind::If, e->loc(), {cond}, {});
  BuilderScope scope(b);
  SVal vals[2];
  const ast::Expr *exprs[2] = {e->thenExpr, e->elseExpr};
  for (int r = 0; r < 2; ++r) {
    ifOp->regions.push_back(std::make_unique<ir::Block>());
    ifOp->regions[r]->parent = ifOp;
    b = std::make_unique<ir::Builder>(ifOp->regions[r].get());
    vals[r] = eval(exprs[r], env);
  }
  std::vector<SVal> merged = mergeBranches(ifOp, {"<conditional expression>"}, {vals[0]}, {vals[1]}, e->loc(),
                                           "conditional expression");
  scope.restore();
  return merged[0];
}

} // namespace tle::sema
