// Internal to Sema: the compile-time interpreter that walks a kernel's AST and builds tile IR.
#pragma once

#include "tle/AST/AST.h"
#include "tle/IR/IR.h"
#include "tle/Sema/Specialize.h"

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <memory>
#include <string>
#include <vector>

namespace tle::sema {

struct Builtin;
struct ModuleTable;
struct UserModule;

/// SVal::i of a PyFn that is a @core.extern function.
constexpr int64_t kExternFn = 2;

/// A value during specialisation: a compile-time (constexpr) Python value, an IR value
/// (a runtime scalar or tile), or a name of the language (module, builtin, @jit function).

struct SVal {
  /// BlockPtr (tl.make_block_ptr) keeps elts = {base, shape, strides, offsets} (the last three
  /// tuples of i64 scalars) and `ints` = block_shape. TensorDesc (tl.make_tensor_descriptor)
  /// keeps elts = {base, shape, strides} (tuples of i64 scalars), `ints` = block_shape and
  /// `s` = the padding option ("zero" or "nan").
  ///
  /// Dict (a `{key: value}` display) keeps elts = key0, value0, key1, value1, ... Mesh
  /// (tle.device_mesh, a compile-time value) keeps elts = the axis names (Str) and `ints` = their
  /// sizes, outermost first. Buffer (tle.gpu.alloc) keeps elts = {base}, the pointer to its
  /// first element (shared memory, or a cluster CTA's after tle.remote), and `ints` = its shape.
  ///
  /// PyFn is a Python function without @triton.jit (`fn`): not callable in a kernel, but
  /// `triton.jit(f)` makes a @jit function of it; `i` is 1 for a @triton.constexpr_function,
  /// which kernels call on compile-time values (its body runs as Python at compile time), and
  /// kExternFn for a @core.extern function, whose body kernels inline (Extern.cpp).
  /// Namespace (torch.finfo(...), torch.iinfo(...)) keeps elts = name0, value0, name1, value1,
  /// ... (the attributes) and `s` = its type's name. A JitFn made by `triton.jit(f, debug=...)`
  /// keeps `i` = 1 + the debug flag (0 when not given); one bound through the call form of
  /// @triton.heuristics / @triton.autotune keeps `s` = "module\nname", where it was bound.
  enum class Kind { None, Int, Float, Bool, Str, DType, Tensor, Module, Builtin, JitFn, Tuple, Method, Slice, BlockPtr,
                    TensorDesc, Dict, Mesh, Buffer, PyFn, Namespace };
  Kind kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  std::string s;               ///< Str text; Module path; Builtin / Method name
  ir::ScalarType dtype;        ///< DType
  ir::Value *v = nullptr;      ///< Tensor; Method's receiver
  const ast::FunctionDef *fn = nullptr; ///< JitFn
  std::vector<SVal> elts;      ///< Tuple; Method's receiver value in elts[0]; BlockPtr parts
  std::vector<int64_t> ints;   ///< BlockPtr: block_shape

  static SVal none() { return {}; }
  static SVal integer(int64_t x) { SVal r; r.kind = Kind::Int; r.i = x; return r; }
  static SVal real(double x) { SVal r; r.kind = Kind::Float; r.f = x; return r; }
  static SVal boolean(bool x) { SVal r; r.kind = Kind::Bool; r.i = x; return r; }
  static SVal str(std::string x) { SVal r; r.kind = Kind::Str; r.s = std::move(x); return r; }
  static SVal dtypeOf(ir::ScalarType t) { SVal r; r.kind = Kind::DType; r.dtype = t; return r; }
  static SVal tensor(ir::Value *x) { SVal r; r.kind = Kind::Tensor; r.v = x; return r; }
  static SVal module(std::string p) { SVal r; r.kind = Kind::Module; r.s = std::move(p); return r; }
  static SVal builtin(std::string n) { SVal r; r.kind = Kind::Builtin; r.s = std::move(n); return r; }
  static SVal tuple(std::vector<SVal> e) { SVal r; r.kind = Kind::Tuple; r.elts = std::move(e); return r; }
  /// A record (Kind::Namespace) of `type` with named attributes, kept in `elts` as name, value
  /// pairs: torch.finfo(...), tle.pipe(...) and its endpoints.
  static SVal record(std::string type, const std::vector<std::pair<std::string, SVal>> &attrs) {
    SVal r;
    r.kind = Kind::Namespace;
    r.s = std::move(type);
    for (const auto &[k, v] : attrs) {
      r.elts.push_back(str(k));
      r.elts.push_back(v);
    }
    return r;
  }
  /// A record's attribute `k`, or None.
  const SVal &attr(const std::string &k) const {
    static const SVal absent;
    for (size_t i = 0; i + 1 < elts.size(); i += 2)
      if (elts[i].s == k)
        return elts[i + 1];
    return absent;
  }
  /// The bound method `name` of `receiver` (x.to, desc.load, dtype.is_fp8, ...).
  static SVal method(const SVal &receiver, std::string name) {
    SVal r;
    r.kind = Kind::Method;
    r.s = std::move(name);
    r.elts = {receiver};
    return r;
  }

  bool isConstexpr() const {
    return kind == Kind::None || kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool ||
           kind == Kind::Str || kind == Kind::DType || kind == Kind::Mesh ||
           ((kind == Kind::Tuple || kind == Kind::Dict || kind == Kind::Namespace) && allConst());
  }
  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool isTensor() const { return kind == Kind::Tensor; }
  /// A value made of other values (elts) that may hold runtime leaves: a tuple, a block pointer
  /// or a tensor descriptor.
  bool isAggregate() const {
    return kind == Kind::Tuple || kind == Kind::BlockPtr || kind == Kind::TensorDesc || kind == Kind::Buffer;
  }
  bool allConst() const {
    for (auto &e : elts)
      if (!e.isConstexpr())
        return false;
    return true;
  }
  /// Python-ish description for diagnostics: "int 4", "tile<1024xfp32>", "module 'tl'".
  std::string describe() const;
};

using Env = std::map<std::string, SVal>;

/// Whether `a` and `b` are the same value: the same runtime values (IR values), equal compile-time
/// values, records (pipes, barriers, torch.finfo) with the same fields, element by element.
bool sameValue(const SVal &a, const SVal &b);

/// A positional or keyword argument after evaluation.
struct Arg {
  SourceLoc loc;
  SVal val;
};
struct CallArgs {
  SourceLoc loc; ///< the call
  std::vector<Arg> pos;
  std::vector<std::pair<std::string, Arg>> kw;
};

/// Whether an `except` handler catches Python's exception `type` (by name): a bare handler, or
/// one naming it, Exception or BaseException, alone or in a tuple.
bool exceptHandlerCatches(const ast::ExceptHandler &h, const std::string &type);

/// Saves the current builder while a region is being built and puts it back when the scope ends
/// (also when a user error unwinds through it).
class BuilderScope {
public:
  explicit BuilderScope(std::unique_ptr<ir::Builder> &slot) : slot_(slot), saved_(std::move(slot)) {}
  ~BuilderScope() { restore(); }
  /// Puts the saved builder back now (idempotent).
  void restore() {
    if (saved_)
      slot_ = std::move(saved_);
  }

private:
  std::unique_ptr<ir::Builder> &slot_;
  std::unique_ptr<ir::Builder> saved_;
};

class Specializer {
public:
  Specializer(const ast::Module &m, const SpecializeOptions &o, DiagnosticEngine &d);
  std::unique_ptr<ir::Function> run();

  // --- @triton.heuristics (Heuristics.cpp)
  /// One entry of the kernel's @triton.heuristics({'NAME': lambda args: EXPR, ...}): the
  /// constexpr parameter it sets and the lambda computing it.
  struct Heuristic {
    std::string param;
    std::string arg;               ///< the function's parameter (the arguments' dict)
    const ast::Expr *body = nullptr; ///< a lambda's body, or a function's single `return` value
    SourceLoc loc;
  };
  /// The kernel's heuristics, in the decorator's order (Triton applies them in that order):
  /// those of `wrappers` (the decorators' call form the kernel's name was bound with, outermost
  /// first; see kernelWrappers_), then those of its own decorators.
  std::vector<Heuristic> kernelHeuristics(const ast::FunctionDef *kernel,
                                          const std::vector<const ast::CallExpr *> &wrappers = {});
  /// The decorator calls the compiled kernel's name was bound through (-n's name, or the
  /// module's only kernel; also when imported from another module); empty when none.
  std::vector<const ast::CallExpr *> kernelWrappersOf(const ast::FunctionDef *kernel) const;
  /// The wrappers of a JitFn value bound through the decorators' call form: its `s` names the
  /// module and the name it was bound to there ("mod\nname"); empty for other values.
  std::vector<const ast::CallExpr *> wrappersOfValue(const SVal &v) const;
  /// Sets each heuristic's parameter that `pending` holds (no -D, signature or default gave it)
  /// by evaluating its lambda on a dict of the compile-time parameter values in `env`, as
  /// Triton's JIT does with the call's arguments; the result is a constexpr of the kernel. A
  /// lambda that reads a runtime parameter is an error asking for the value.
  void applyHeuristics(const std::vector<Heuristic> &heuristics, const std::set<std::string> &pending,
                       const ast::FunctionDef *kernel, Env &env);

  // --- Diagnostics
  /// A note attached to an error: where something it names comes from.
  struct Note {
    SourceLoc loc;
    std::string msg;
  };
  /// Why a module-level name has no value (the rest of the sentence "'NAME' ..."), and notes
  /// that locate its definition: reported where a kernel reads the name.
  struct Unresolved {
    Unresolved(std::string w = "", std::vector<Note> n = {}) : why(std::move(w)), notes(std::move(n)) {}
    Unresolved(const char *w) : why(w) {}
    std::string why;
    std::vector<Note> notes;
  };
  /// Reports the error `msg` at `loc`, then `notes`, then (inside @jit helpers) the call chain,
  /// innermost first ("in 'helper', called from here" at each call), and aborts compilation.
  [[noreturn]] void fail(SourceLoc loc, const std::string &msg, const std::vector<Note> &notes = {});
  /// A note "<what> comes from here" at the op that produced `v` (through the implicit casts and
  /// splats made on `at`'s line), or nothing for values without a location (kernel parameters,
  /// constants made by the compiler) or computed at `at` itself.
  void noteDefinition(std::vector<Note> &notes, const ir::Value *v, const std::string &what, SourceLoc at) const;

  /// A kernel parameter given as a host tensor descriptor (`tensordesc<fp16[64, 64]>` in the
  /// signature): adds its runtime parameters (NAME_base, NAME_shape<d>, NAME_stride<d> but the
  /// last) and returns the descriptor built from them, as tl.make_tensor_descriptor does.
  SVal bindHostDescriptor(const ast::Param &p, const SignatureEntry &e);
  /// A tuple parameter (`(i32, (i64, *fp32))` in the signature): each runtime element becomes a
  /// kernel parameter `name_i` (nested: `name_i_j`), in order, depth first; the name is bound to
  /// the compile-time tuple of their values.
  SVal bindTupleParam(const ast::FunctionDef *kernel, const ast::Param &p, const SignatureEntry &e,
                      const std::string &name);
  /// `sig` as one entry per parameter of `kernel`. A signature may leave out the parameters
  /// `givenElsewhere` names (-D, @triton.heuristics: an empty constexpr entry stands for each) and
  /// any trailing parameters with a default value (an entry marked fromDefault), as a Python call
  /// may; any other count is an error located at the kernel.
  std::vector<SignatureEntry> completeSignature(const ast::FunctionDef *kernel, const std::vector<SignatureEntry> &sig,
                                                const std::function<bool(const std::string &)> &givenElsewhere);

  // --- Command-line constexpr values (Signature.cpp)
  /// The value of constexpr parameter `param` given on the command line as `text`: a -D value,
  /// or signature entry `entry` when it is not null. A literal (parseConstexprText) is taken as
  /// it is; anything else is parsed as a Python expression (SpecializeOptions::parseExpression)
  /// and evaluated in the kernel's module: a module-level name, `tl.bfloat16`, a tuple, a
  /// `tle.device_mesh(...)` call. Errors are located in a pseudo-file that shows the option as
  /// written ("-D NAME=TEXT", "-s \"SIG\"") with a caret. Sets `record` to the value's text for
  /// the function's constexprs (the metadata): the literal as written, else constexprRecord.
  /// `mesh[indices]` (FlagTree's device_mesh.__getitem__): ints drop their axis, slices keep it
  /// with the ids they select, '...' stands for the axes not indexed (Meshes.cpp).
  SVal meshSubscript(const SVal &mesh, const ast::SubscriptExpr *e, Env &env);

  /// A -D value or a signature's constexpr entry, as a literal or an expression evaluated in the
  /// kernel's module; `record` gets its text for the metadata (Signature.cpp).
  SVal commandLineConstexpr(const std::string &param, const std::string &text, const SignatureEntry *entry,
                            std::string &record);
  /// Where a -D value (`entry` null) or a signature entry starts, in a pseudo-file "-D" or "-s"
  /// showing the option as written.
  SourceLoc commandLineLoc(const std::string &param, const std::string &text, const SignatureEntry *entry);
  /// Whether the signature entry `B` (Triton's alias of i1) means the module-level name `B`: for a
  /// parameter annotated tl.constexpr when the module defines it. Where the module defines `B`
  /// but the parameter takes the runtime type, warns that the entry is read as i1.
  bool signatureBMeansModuleName(const ast::Param &p, const SignatureEntry &e, bool annotatedConstexpr);

  // --- Statements (Specialize.cpp; loops in Loops.cpp)
  //
  // `return`, `break` and `continue` set control-flow flags in the environment (the hidden names
  // kReturned, kBroke, kContinued: a compile-time bool, or an i1 scalar when the exit depends on
  // a runtime condition). After a statement that may have exited at run time, the rest of the
  // block runs inside a runtime `if` on "no flag set" (guardRest); a runtime loop whose body may
  // `break` or `return` becomes a `while` that carries those flags (execLoopAsWhile). A helper's
  // return value travels in the hidden name kReturnValue and is merged like any variable.

  /// Hidden environment names of the control-flow flags and of a helper's return value.
  static constexpr const char *kReturned = "<return>";
  static constexpr const char *kBroke = "<break>";
  static constexpr const char *kContinued = "<continue>";
  static constexpr const char *kReturnValue = "<return value>";
  /// Set (to True) when some flag is known to be set although each may be a runtime value
  /// (e.g. one branch broke and the other continued).
  static constexpr const char *kExited = "<exited>";
  /// Whether the flags of `env` say that control has left the current block.
  enum class Exit { No, Maybe, Yes };
  Exit exitState(const Env &env) const;
  /// The i1 scalar "some flag of `env` is set" (only meaningful when exitState is Maybe).
  ir::Value *exitCondition(const Env &env, SourceLoc loc);
  /// Executes a block; returns true when control definitely left it (return, break, continue).
  bool execBlock(const ast::Block &b, Env &env);
  /// Executes statements [first, end) of `blk`, guarding the rest after a possible exit.
  bool execStmts(const ast::Block &blk, size_t first, Env &env);
  /// Runs `body` (which may assign the names `assigned`) inside a runtime `if` on "no flag set",
  /// with the flags cleared inside, and merges the result into `env`.
  void guardRest(Env &env, const std::set<std::string> &assigned, SourceLoc loc,
                 const std::function<void(Env &)> &body);
  bool execStmt(const ast::Stmt *s, Env &env);
  void execFor(const ast::ForStmt *s, Env &env);
  void execWhile(const ast::WhileStmt *s, Env &env);
  /// A runtime loop whose body may break or return, as a `while` carrying the flags. `forIv`
  /// is set for a `for` over range (the iv starts at lb and steps by step while below ub, or
  /// with `down`, a constexpr negative step, while above it); otherwise `cond` is the while
  /// condition.
  struct ForBounds {
    ir::Value *lb, *ub, *step;
    std::string ivName;
    bool down = false;
  };
  void execLoopAsWhile(const ast::Stmt *s, const ast::Block &body, const ForBounds *forIv, const ast::Expr *cond,
                       Env &env);
  void execRuntimeIf(const ast::IfStmt *s, const SVal &cond, Env &env);
  /// Ends both regions of a runtime `if` whose branches left `branch[0]` (then) and `branch[1]`
  /// (else) and merges them into `env`: the names in `assigned` and the control-flow flags. A
  /// branch that definitely exited contributes no values (the other branch's values pass,
  /// with placeholders yielded on the exited side). `what` names the construct for messages.
  void joinBranches(ir::Op *ifOp, Env &env, Env (&branch)[2], const std::set<std::string> &assigned, SourceLoc loc,
                    const std::string &what, const std::string &oneSideNote);
  /// A value of `like`'s structure and types for a region that does not produce one (a branch
  /// that exited): compile-time values stay, tensors become `prior` when it has the same type,
  /// else zeros; nullopt when no such value can be made (pointers with no pointer in scope).
  std::optional<SVal> placeholder(const SVal &like, const SVal *prior, SourceLoc loc);
  SVal runtimeIfExp(const ast::IfExpExpr *e, const SVal &cond, Env &env);
  /// The runtime values inside `v` (a tensor, or the tensors of a tuple or block pointer), in order.
  static void flatten(const SVal &v, std::vector<ir::Value *> &leaves);
  /// Loop-carried variables: names bound before a loop to runtime values (tensors, or tuples and
  /// block pointers holding some) and assigned in it. Variable c's runtime leaves are
  /// [firstLeaf[c], firstLeaf[c + 1]) of the loop's carried values.
  struct CarriedVars {
    std::vector<std::string> names;
    std::vector<SVal> templates; ///< each name's value before the loop
    std::vector<size_t> firstLeaf;
  };
  /// The carried variables among `assigned`, their leaves appended to `inits`.
  CarriedVars collectCarried(const std::set<std::string> &assigned, const Env &env, std::vector<ir::Value *> &inits);
  /// Binds each carried name in `e` to its value rebuilt from `values` (region arguments or
  /// results, one per leaf), which take the name as their hint.
  void bindCarried(const CarriedVars &cv, const std::vector<ir::Value *> &values, Env &e);
  /// Appends each carried name's leaves at the end of the body (`after`) to `yields`; a located
  /// error when a variable changed its kind or a leaf its type.
  void yieldCarried(const CarriedVars &cv, const std::vector<ir::Value *> &inits, const Env &after, SourceLoc loc,
                    std::vector<ir::Value *> &yields);
  /// `templ` with its runtime values replaced, in order, from `leaves` starting at `next`.
  static SVal rebuild(const SVal &templ, const std::vector<ir::Value *> &leaves, size_t &next);
  /// Whether a value can be carried by a loop: a tensor, or a tuple / block pointer holding some.
  /// Fails at `loc` when variable `n`, `before` a runtime loop a compile-time value that is not
  /// a number, is another value `after` the loop's body (Loops.cpp).
  void checkLoopConstant(const std::string &n, const SVal &before, const SVal &after, SourceLoc loc);
  static bool carriable(const SVal &v);
  /// Pointers and mask of a tl.load/tl.store through a block pointer (int64 coordinates);
  /// `mask` is null without boundary_check.
  void materializeBlockPtr(const SVal &bp, const std::vector<int64_t> &boundaryCheck, SourceLoc loc,
                           ir::Value *&ptrs, ir::Value *&mask);
  /// Turns the Python numbers among `assigned` (names a loop body assigns) into runtime values,
  /// so that they can be carried by the loop.
  void materializeCarriedNumbers(const std::set<std::string> &assigned, Env &env, SourceLoc loc);
  /// The i1 scalar a runtime condition denotes (integers compare != 0).
  ir::Value *conditionValue(const SVal &c, SourceLoc loc);
  /// Ends both regions of `ifOp` with yields of the values that differ and adds the results.
  std::vector<SVal> mergeBranches(ir::Op *ifOp, const std::vector<std::string> &names, std::vector<SVal> thenVals,
                                  std::vector<SVal> elseVals, SourceLoc loc, const char *what);
  void assign(const ast::Expr *target, const SVal &v, Env &env, SourceLoc loc);

  // --- Module scope (ModuleScope.cpp)
  //
  // The module's statements run in order, as Python runs them on import: imports bind modules
  // and the language's names, @jit functions are registered, and assignments whose value is a
  // compile-time value (or an alias of a language name, module or @jit function) become
  // globals; other assignments are host code and are skipped. An `if` on a compile-time
  // condition runs the taken branch; on any other condition its body runs, and its `else`
  // supplies the names the body leaves unknown or does not bind. A `try` runs its body; when a
  // name the body binds is unknown to the compiler (an import of a function TLE does not have),
  // its first `except` handler runs after it, as if that import had failed. `else` and
  // `finally` run as Python runs them. Nothing here reports an error: a name whose definition
  // failed is an error only where a kernel reads it (with the reason, through
  // unresolvedGlobals_).

  /// Runs the module-level statements of `blk`; the names they bind go into `bound` when given.
  void defineModuleBlock(const ast::Block &blk, std::set<std::string> *bound);
  /// One module-level statement (see defineModuleBlock).
  void defineModuleStmt(const ast::Stmt *s, std::set<std::string> *bound);
  /// Binds a module-level name to `v`, or records why it has no value when `v` is absent.
  void defineGlobal(const std::string &name, std::optional<SVal> v, const Unresolved &why,
                    std::set<std::string> *bound);
  /// Whether a global's value is something the compiler gives meaning to: a compile-time value,
  /// a @jit function, a language function or dtype, a libdevice function TLE lowers, or a
  /// module of the language (not e.g. `torch`, or a module path TLE does not know).
  bool knownGlobal(const std::string &name) const;
  /// Evaluates a module-level expression without reporting errors: nullopt (and the first
  /// error's message, or what runtime value it makes, in `why`) when it is not a compile-time
  /// value, a language function or module, a @jit function, or a tuple of them.
  std::optional<SVal> evalQuietly(const ast::Expr *e, std::string &why);
  /// A function declared with `@tle.raw.dialect(...)` (TLE-Raw): its `tle.raw.function` record
  /// (the decorator's options, `__name__`, and the declaration in `fn`), or nullopt when no
  /// decorator is one (`why` then holds why the last decorator could not be evaluated) (Raw.cpp).
  std::optional<SVal> rawDecorated(const ast::FunctionDef *fd, std::string &why);
  /// A specializer that evaluates module-level code with a copy of the globals defined so far,
  /// reporting to `quiet`; the tile IR it builds goes into a function of its own, never compiled.
  std::unique_ptr<Specializer> moduleProbe(DiagnosticEngine &quiet) const;
  /// Runs `f` on a specializer that evaluates module-level code with the globals defined so far
  /// (lent to it for the call), reporting to `quiet`; the tile IR it builds goes into a function
  /// of its own, never compiled.
  void withModuleProbe(DiagnosticEngine &quiet, const std::function<void(Specializer &)> &f);

  // --- Imports (Imports.cpp)
  //
  // A module the kernel's file imports is found on the import search path (the input's package
  // root, then SpecializeOptions::importPath), read through SpecializeOptions::loadModule and run
  // once, by a specializer of its own, with the module-scope rules above; its namespace is kept
  // in the module table that every specializer of one compilation shares. A module that cannot
  // be found is an ImportError: the names the import binds are unresolved (an error only where a
  // kernel reads them; a `try` runs its handler). A helper imported from another module runs with
  // that module's globals.

  /// Sets up the module table for the kernel's file (its module name, package and search path),
  /// imports its packages and runs the file, then takes the file's names as the globals.
  void runMainModule();
  /// Without -n, in a file of several @jit functions: the one that no other @jit function of
  /// the file names (calls, or passes as a combine function); an error listing them otherwise.
  const ast::FunctionDef *onlyUnnamedJitFn();
  /// `import a.b [as c]` (language modules bind as before; other names are user modules).
  void importNames(const ast::ImportStmt *s, std::set<std::string> *bound);
  /// `from [.]a.b import c [as d]` and `from a import *`.
  void importFrom(const ast::ImportFromStmt *s, std::set<std::string> *bound);
  /// Imports the user module `name` (absolute, dotted) and its packages, each run once; null,
  /// with the reason in `why`, when some part cannot be found. `at`: the import statement.
  UserModule *importModule(const std::string &name, SourceLoc at, std::string &why);
  /// `from m import attr as name`: the value of m's name `attr`, else its submodule; unresolved
  /// (the reason kept) otherwise. While m runs (an import cycle) a name it lacks is an error.
  void importOne(UserModule &m, const std::string &attr, const std::string &name, SourceLoc loc,
                 std::set<std::string> *bound);
  /// `from m import *`: the names of m's `__all__`, else its names that do not start with '_'.
  void importStar(UserModule &m, std::set<std::string> *bound);
  /// Why `from m import attr` fails while `m` is still running (an import cycle, Python's
  /// ImportError), with a note at each import of the cycle.
  Unresolved circularImport(const UserModule &m, const std::string &attr) const;
  /// The language module `base`'s attribute `attr` without reporting errors: nullopt, with the
  /// first error's message in `why`, when TLE does not have it.
  std::optional<SVal> quietAttribute(const SVal &base, const std::string &attr, SourceLoc loc, std::string &why) const;
  /// For a module value `path` that names nothing TLE has (torch.finfo): ": " and why an import
  /// of it or of a module above it failed ("no module named 'torch' (searched: ...)"), with a
  /// note at that import added to `notes`; "" when no such import failed.
  std::string missingModule(const std::string &path, std::vector<Note> &notes) const;
  /// When this specializer's globals are the names of the module it is running, makes `other`
  /// (which now holds them: withModuleProbe) the module's holder, and back when they return.
  void passRunningModule(Specializer &other);
  /// The user module imported under `name`, or null.
  UserModule *userModule(const std::string &name) const;
  /// The running module's names, saved while a helper of another module runs (callJit).
  struct SavedGlobals {
    bool swapped = false;
    Env globals;
    std::map<std::string, Unresolved> unresolved;
    UserModule *self = nullptr;
  };
  /// Makes the user module that defines `f` the running one (its globals) when it is another;
  /// returns what leaveHomeModule restores.
  SavedGlobals enterHomeModule(const ast::FunctionDef *f);
  /// The dotted name of the user module that defines `f` when it is not the running one, else "".
  std::string homeModuleName(const ast::FunctionDef *f) const;
  void leaveHomeModule(SavedGlobals &saved);
  /// `m.attr` for a user module: a name of its namespace, else an imported submodule; a located
  /// error otherwise (with the reason when the name is unresolved there).
  SVal moduleAttribute(const UserModule &m, const std::string &attr, SourceLoc loc);

  // --- Expressions (Expressions.cpp; names and attributes in Names.cpp)
  SVal eval(const ast::Expr *e, Env &env);
  SVal lookup(const std::string &name, SourceLoc loc, Env &env);
  SVal attribute(const SVal &base, const std::string &attr, SourceLoc loc);
  SVal binary(ast::BinaryOp op, const SVal &a, const SVal &b, SourceLoc loc, SourceLoc la, SourceLoc lb);
  SVal compare(ast::CompareOp op, const SVal &a, const SVal &b, SourceLoc loc);
  SVal unary(ast::UnaryOp op, const SVal &a, SourceLoc loc);
  SVal subscript(const ast::SubscriptExpr *e, Env &env);
  /// The indices Python's slice `sl` (start, stop and step compile-time integers or None)
  /// selects from a sequence of `len` elements, in order.
  std::vector<int64_t> sliceIndices(const ast::SliceExpr *sl, int64_t len, Env &env);
  /// A list comprehension or generator expression over compile-time iterables (tuples, lists,
  /// dicts' keys, strings, range(...) of ints), as Python runs it: a compile-time tuple.
  SVal comprehension(const ast::CompExpr *c, Env &env);
  /// The ints of `range(...)` call `call` with compile-time arguments (at most `most` of them).
  std::vector<SVal> rangeValues(const ast::CallExpr *call, Env &env, size_t most);
  /// The elements of a compile-time iterable `v` (the comprehension's and all/any/sum's).
  std::vector<SVal> iterate(const SVal &v, SourceLoc loc);
  SVal call(const ast::CallExpr *e, Env &env);
  SVal callJit(const ast::FunctionDef *fn, CallArgs &args);
  /// An f-string (Strings.cpp): its fields must be compile-time values; in a kernel they are
  /// formatted as Triton does (str(), or the !r / !s conversion; the format spec is not
  /// applied), in module-level code and constexpr functions as Python does.
  SVal evalFString(const ast::FStringExpr *f, Env &env);
  /// Python's str() (or repr()) of a compile-time value; a located error for other values.
  std::string pyStr(const SVal &v, bool repr, SourceLoc loc);
  /// format(v, spec) with Python's format-spec mini-language (fill, align, sign, #, 0, width,
  /// grouping, precision, and the types b c d e E f F g G n o s x X %).
  std::string pyFormat(const SVal &v, const std::string &spec, SourceLoc loc);
  /// Calls a @triton.constexpr_function: its body runs as Python at compile time (`range` loops
  /// and `while` unrolled, no tile IR) on compile-time arguments; its result must be a
  /// compile-time value. Located errors otherwise.
  SVal callConstexprFn(const ast::FunctionDef *fn, CallArgs &args, SourceLoc calleeLoc);
  /// Inside a constexpr function: statements are Python run at compile time.
  int pythonDepth = 0;
  /// Evaluating a `-s` / `-D` constexpr expression (commandLineConstexpr): there, as in the
  /// host code that launches a kernel, a plain Python function of the module may be called; its
  /// body runs at compile time as a @triton.constexpr_function's does.
  bool commandLine_ = false;
  /// Set on the probes that evaluate module-level code: there, as Python runs a module, a plain
  /// Python function may be called (its body runs at compile time, as a constexpr function's).
  bool moduleLevel_ = false;
  /// Where the kernel calls the @core.extern function being inlined (invalid elsewhere): the
  /// caret of extern_elementwise's errors about the call.
  SourceLoc externCallLoc_;
  /// The call of the @core.extern function being inlined, or an invalid location.
  SourceLoc externCallLoc() const { return externCallLoc_; }
  /// How many module-level `try` bodies are being defined: an import that fails there (a cycle)
  /// leaves its name unknown for the handler to run, as Python's ImportError would.
  int moduleTryDepth_ = 0;
  /// How many module-level blocks being defined Python may not run, or runs under a `try` with
  /// handlers (an `if` on a condition not known at compile time): a compile-time `raise` there
  /// leaves values unknown instead of stopping the compilation.
  int moduleUncertain_ = 0;
  /// A `raise` executed by Python run at compile time, in a module probe (moduleLevel_): the
  /// module statement being defined decides whether it stops the compilation (moduleRaised).
  struct PythonRaised {
    SourceLoc loc;
    std::string type;      ///< the exception's name: `ValueError`
    std::string exception; ///< as Python's repr shows it: `ValueError('no args')`
    std::vector<Note> notes; ///< the call chain to the raise, innermost first
  };
  /// A `raise` statement executed by compile-time Python: a located error naming the exception,
  /// or, in a module probe, a PythonRaised for the module statement to judge.
  [[noreturn]] void raiseAtCompileTime(const ast::OtherStmt *s, Env &env);
  /// `try` in Python run at compile time (a helper's body): the body; when a `raise` in it (or
  /// in what it calls) throws PythonRaised, the first handler that catches the exception by name
  /// (its `as` name stays unbound), else the exception goes on (an error naming it outside
  /// module probes and enclosing trys); `else` after a body that did not raise; `finally` after
  /// both. Returns whether control left the block (a return).
  bool execTryCompileTime(const ast::TryStmt *t, Env &env);
  /// Python's `x in container` of compile-time values: a substring of a str, an element of a
  /// tuple or list (by ==), a key of a dict; a located error for other operands.
  bool contains(const SVal &container, const SVal &x, SourceLoc loc);
  /// The compile-time `try` bodies running (raises inside them throw PythonRaised).
  int pyTryDepth_ = 0;
  /// A compile-time `raise` while defining a module statement: a located error where Python
  /// certainly runs the statement (moduleUncertain_ is 0); else why the value is unknown.
  std::string moduleRaised(const PythonRaised &r) const;
  /// The exceptions (names) compile-time raises left unknown values for while defining module
  /// statements, oldest first: a module-level `try` runs the handler that catches one.
  mutable std::vector<std::string> moduleRaises_;
  /// Whether the code being executed is Python the compiler runs at compile time (a module's
  /// helper, a @triton.constexpr_function, a -D expression), not a kernel's code.
  bool compileTimePython() const { return pythonDepth > 0 || moduleLevel_ || commandLine_; }
  /// "`what` is not supported in a kernel", or, in compileTimePython(), in the Python the
  /// compiler runs at compile time.
  std::string unsupportedHere(const std::string &what) const {
    return what + " is not supported " +
           (compileTimePython() ? "in the Python the compiler runs at compile time" : "in a kernel");
  }
  /// The call-chain notes of a diagnostic (callSites, innermost first; a long chain keeps its
  /// innermost calls and its outermost).
  std::vector<Note> callChainNotes() const;
  bool truthy(const SVal &v, SourceLoc loc);

  // --- Tensors and types (Tensors.cpp; checkScalarOperand in Expressions.cpp, castWithRounding in Math.cpp)
  /// Materialises a constexpr number as an IR scalar with Triton's literal typing.
  ir::Value *toTensor(const SVal &v, SourceLoc loc);
  ir::Value *toTensorOfType(const SVal &v, ir::DType t, SourceLoc loc);
  /// The literal type Triton gives a Python number (i32, u32, i64, u64, fp32, fp64, i1).
  ir::DType literalType(const SVal &v, SourceLoc loc);
  /// Triton's scalar rule (binary_op_type_checking_impl): a Python integer `lit` that takes the
  /// other operand's type `t` must fit it, and must not be negative for an unsigned `t`; a located
  /// error at `loc` otherwise. Used by binary operators and tl.where.
  void checkScalarOperand(const SVal &lit, ir::DType t, SourceLoc loc);
  ir::Value *broadcastTo(ir::Value *v, const std::vector<int64_t> &shape, SourceLoc loc);
  /// Broadcasts two values to a common shape (NumPy rules); errors name both shapes.
  void broadcastPair(ir::Value *&a, ir::Value *&b, SourceLoc loc);
  ir::Value *castTo(ir::Value *v, ir::ScalarType t, SourceLoc loc);
  /// castTo between a pointer and an integer (Triton's ptr_to_int / int_to_ptr); errors at loc.
  ir::Value *addressCast(ir::Value *v, ir::ScalarType t, SourceLoc loc);
  /// castTo with Triton's fp_downcast_rounding ("rtne" default, or "rtz": Cast's ival = 1).
  ir::Value *castWithRounding(ir::Value *v, ir::ScalarType t, const Arg *rounding, SourceLoc loc);
  ir::Value *expandDims(ir::Value *v, int axis, SourceLoc loc);
  ir::Value *reduce(ir::Value *v, int axis, ir::ReduceKind k, SourceLoc loc);

  // --- Builtins (Registry.cpp dispatches through the builtin table of Registry.h)
  /// Calls the builtin `name` (qualified, e.g. "tl.load") on `args`: binds the arguments to its
  /// table line's parameters and runs its handler. Located errors for unknown names.
  SVal callBuiltin(const std::string &name, CallArgs &args);
  /// Runs the builtin `f` on `args` (`self`: a receiver method's receiver, else null).
  SVal invokeBuiltin(const Builtin &f, CallArgs &args, const SVal *self);
  /// `m` (a Method value: receiver and name) called on `args`: the table's RECEIVER.NAME line
  /// (x.to, dtype.is_fp8, buf.slot), else tl.NAME with the receiver first (x.sum(0)).
  SVal callMethod(const SVal &m, CallArgs &args);
  /// tl.device_print / print: a Print op of `operands` (positional arguments after the prefix).
  void devicePrint(const std::string &fname, CallArgs &args);
  /// tl.device_assert / a runtime `assert`: an Assert op on `cond` (or `cond | ~mask`) in debug
  /// builds; nothing otherwise.
  void deviceAssert(const Arg &cond, const std::string &msg, const Arg *mask, SourceLoc loc);

  // --- Helpers of the builtin families (Debug.cpp, Memory.cpp, Math.cpp, Reductions.cpp, Sort.cpp,
  // Dot.cpp, Distributed.cpp)
  /// Makes the kernel's cluster the one of `mesh` (its cluster axes); an error at `loc` when the
  /// kernel already has another. Returns the cluster size.
  int64_t useMeshCluster(const SVal &mesh, SourceLoc loc);
  /// Where the kernel's first grid barrier is (tle.distributed_barrier over a mesh of blocks), or
  /// invalid: a kernel with one launches cooperatively and cannot use clusters (FlagTree's rule).
  SourceLoc gridBarrierAt;
  /// The counter of each sub-mesh barrier's member set (cluster ranks, the leader first): a
  /// one-element i32 buffer zeroed at the kernel's start (Distributed.cpp, submeshCounter).
  std::map<std::vector<int64_t>, ir::Value *> submeshCounters;
  ir::Op *submeshCountersReady = nullptr; ///< the cluster barrier after the counters' zeroing
  /// What Sema knows of each tle.pipe (keyed by its "full" mbarrier ring, Pipes.cpp): where its
  /// writer was made (a pipe has one), and whether a commit has been written yet (a wait before
  /// any commit would never return in one kernel body).
  struct PipeState {
    SourceLoc writer;
    bool committed = false;
    std::string name;                        ///< "pipe 'kv'" for messages
    std::map<const ir::Value *, std::string> fields; ///< each field buffer's base, by field name
    std::set<const ir::Value *> slots;       ///< the slot views acquire() returned so far
    /// The slot views readers' wait() returned so far, and how many waits are not released yet
    /// (in program order): a reader may write the slot it holds, as FlagTree allows.
    std::set<const ir::Value *> readSlots;
    int readersHolding = 0;
    std::map<const ir::Value *, ir::Value *> slotFull; ///< each slot view's "full" mbarrier
    /// Each endpoint's first use ("" the writer, a reader's name, "?" the unnamed reader): its warp
    /// partition (null outside warp_specialize) and where.
    std::map<std::string, std::pair<const ir::Block *, SourceLoc>> endpointUse;
    std::map<std::string, SourceLoc> readersMade; ///< reader() calls by name ("" the unnamed reader)
    SourceLoc open;                          ///< the acquire() whose slots may be written; invalid after commit
  };
  std::map<const ir::Value *, PipeState> pipes;
  /// The barrier after every mbarrier initialisation at the kernel's start (tle.pipe's rings,
  /// tle.gpu.alloc_barriers' arrays), made by the first mbarrierInits().
  ir::Op *mbarriersReady = nullptr;
  /// A builder at the kernel's start, before the barrier that makes every mbarrier
  /// initialisation there visible to all threads (made here at the first call, at `loc`): where
  /// tle.pipe and tle.gpu.alloc_barriers initialise their mbarriers once (Barriers.cpp).
  ir::Builder mbarrierInits(SourceLoc loc);
  /// Makes the kernel's mbarriers visible to the other CTAs of its cluster before any of them
  /// completes a multicast copy or arrives on them (PTX ISA §9.7.13.15.19-20: an mbarrier.init
  /// is released to the cluster by fence.mbarrier_init, then a cluster barrier): once, after
  /// the barrier of mbarrierInits. Called by the ops that reach another CTA's mbarriers.
  void clusterMbarriers(SourceLoc loc);
  ir::Op *clusterMbarriersReady = nullptr; ///< the cluster barrier clusterMbarriers made
  /// What Sema knows of each tle.gpu.alloc_barriers array (Barriers.cpp; its record's `_id`
  /// indexes this): its parameters, its mbarriers (made at the first use through phaseIdx), its
  /// named barrier ids (given at the first use without), and which backend each slot used first.
  struct BarrierState {
    SourceLoc alloc;              ///< the alloc_barriers / alloc_barrier call
    std::string name;             ///< the variable first bound to the array (its mbarriers' name)
    int64_t count = 1;            ///< arrive_count: arrivals per phase (mbarrier), threads (named)
    bool ready = false;           ///< init=READY: phase parities flipped
    bool checked = true;          ///< check_protocol= (TLE): warnings of the protocol check kept
    ir::Value *mbarriers = nullptr; ///< i64 ring of num_barriers mbarriers, or null before first use
    int namedBase = -1;           ///< the named barrier id of slot 0, or -1 before first use
    std::map<int64_t, std::pair<bool, SourceLoc>> backend; ///< static slot -> (named?, first use)
    SourceLoc namedUse;           ///< the first use as a named barrier (any slot), or invalid
    SourceLoc dynamicUse;         ///< the first mbarrier use at a run-time slot, or invalid
  };
  std::vector<BarrierState> barriers;
  int nextNamedBarrier = 15; ///< the highest named barrier id not yet given (ids go down to 2)
  /// The kernel's tle.gpu.warp_specialize (a kernel has one; Partitions.cpp).
  SourceLoc warpSpecializeAt;
  /// Pointer tiles that tle.gpu.local_ptr made of a whole matrix in the NVMMA layout (a
  /// swizzled buffer of rank 2, or a slot of one): tl.load / tl.store through them are
  /// local_load / local_store of the matrix at the mapped pointer (Distributed.cpp, Memory.cpp).
  std::map<const ir::Value *, ir::Value *> matrixViews;
  int partitionCount = 0; ///< the warp_specialize's partitions, whose named barriers are ids 1 to it
  int blockWarps = 0;     ///< while its partitions are built: the block's warps, all partitions'
  /// `bars[i]`: slot `i` of a tle.gpu.alloc_barriers array (Barriers.cpp).
  SVal barrierSubscript(const SVal &bars, const ast::SubscriptExpr *e, Env &env);
  /// The mbarrier of `bar` (a barrier slot, tle.gpu.copy's barrier=) on which a TMA copy of
  /// `bytes` completes: its array must have expect_bytes, equal to `bytes` (each copy's arrival
  /// expects that many); located errors otherwise (Barriers.cpp).
  ir::Value *tmaBarrier(const Arg &bar, int64_t bytes);
  /// A located error at `loc` when `ptr` (a store's pointer) points into a tle.pipe field other
  /// than through the slot its writer holds between acquire() and commit() (Pipes.cpp).
  void checkPipeFieldWrite(const ir::Value *ptr, SourceLoc loc);
  /// The "full" mbarrier of the tle.pipe stage whose field slot view is `slot` while its writer
  /// holds it (between acquire() and commit()), or null (Pipes.cpp; tle.gpu.copy's TMA copies).
  ir::Value *openPipeSlotBarrier(const ir::Value *slot);
  /// The extremum of tile `x` along `axis` (NaN-ignoring, like tl.max/tl.min) in x's dtype, and
  /// the int32 index of its first occurrence along `axis` (0 when every element is NaN): the
  /// pair tl.max/tl.min(return_indices=True) return. Both drop dim `axis`.
  std::pair<ir::Value *, ir::Value *> reduceWithIndices(ir::Value *x, int axis, bool isMax, SourceLoc loc);
  /// A Reduce (dropping dim `axis`) or Scan (`reverse`: from the end) of `inputs` (tiles of one
  /// shape) whose combine region is `combineFn` (a @jit function, or a language function such
  /// as tl.maximum or triton.language.standard's _sum_combine) called on 2N scalars; returns
  /// the N results. Located errors when the function returns the wrong number of values or a
  /// dtype other than its input's, or touches memory (tl.reduce, tl.associative_scan).
  std::vector<ir::Value *> combineOp(ir::OpKind kind, const std::vector<ir::Value *> &inputs, int axis,
                                     const SVal &combineFn, bool reverse, SourceLoc loc);
  /// The xor of the elements of `x` along `axis` (a Reduce with a combine region; tl.xor_sum).
  ir::Value *xorReduce(ir::Value *x, int axis, SourceLoc loc);
  /// The elements of the integer tile `x` combined along `axis` by the bitwise op `combine`
  /// (Xor, Or or And), a Reduce with a combine region (tl.xor_sum, tl.reduce_or).
  ir::Value *bitwiseReduce(ir::Value *x, int axis, ir::OpKind combine, SourceLoc loc);
  /// tl.sort: `x` sorted along its last dim (a power of two) by a bitonic network of
  /// compare-and-swap steps; ascending, or descending when `descending`.
  ir::Value *bitonicSort(ir::Value *x, bool descending, SourceLoc loc);
  /// Stage `stage` of a bitonic network along the last dim of `x` (a power of two): the
  /// compare-and-swap steps at distances 2^(stage-1) .. 1, which sort each bitonic block of
  /// 2^stage elements descending where the i1 tile `desc` (x's shape) is true, else ascending
  /// (tl.bitonic_merge is the stage log2(n) on one order).
  ir::Value *bitonicStage(ir::Value *x, int stage, ir::Value *desc, SourceLoc loc);
  /// tl.topk: the `k` largest (`descending`; else smallest) elements along the last dim of `x`
  /// (k and the dim powers of two, k <= dim), sorted in that order: the first log2(k) stages of
  /// the bitonic sort, then halving rounds that keep the elementwise max (min) of a block and
  /// its mirror-ordered neighbour and re-merge it (Triton 3.6's bitonic top-k). [.., n] -> [.., k].
  ir::Value *bitonicTopK(ir::Value *x, int64_t k, bool descending, SourceLoc loc);
  /// tl.dot on operands that are not both 2-D (`args` is the call, `a` and `bm` its bound input
  /// and other). Two 3-D tiles are Triton 3.6's batched dot (`semantic.dot`): a [B, M, K] @
  /// bm [B, K, N] (+ acc [B, M, N]) is B independent 2-D products. Each operand and acc is cut
  /// along dim 0 into B 2-D tiles (permuted to put the batch last, then halved by reshape and
  /// split; a reshape when B is 1); each batch is an ordinary 2-D tl.dot of the slices with the
  /// call's other arguments, so every 2-D rule (operand dtypes, out_dtype, acc dtype,
  /// input_precision, M, N, K >= 16) applies per batch; the B results are joined back into a
  /// [B, M, N] tile of the 2-D result's dtype. B is a power of two, as every tile dim. Located
  /// errors naming both shapes: a 2-D operand with a 3-D one (or any other rank), different
  /// batch sizes or inner dimensions (with notes at the operands' definitions), an acc that is
  /// not [B, M, N], a result over the tile limit.
  /// tl.dot of [M, K] @ [K, N] with M or N below 16: the operands (and acc) padded with zeros
  /// to at least 16 rows and columns, the padded dot's [M, N] corner returned (Dot.cpp).
  SVal paddedDot(ir::Value *a, ir::Value *bm, CallArgs &args);
  SVal batchedDot(ir::Value *a, ir::Value *bm, CallArgs &args);
  /// tl.dot(a, b, acc, input_precision="tf32x3") of fp32 [M, K] and [K, N] tiles: three TF32
  /// dots on the operands split into a TF32 part and the rest (Triton's 3xTF32), about fp32
  /// accuracy at tensor-core speed.
  ir::Value *dotTF32x3(ir::Value *a, ir::Value *bm, ir::Value *acc, SourceLoc loc);
  /// The i1 value `x != x` (true where a float is NaN), of x's shape.
  ir::Value *isNan(ir::Value *x, SourceLoc loc);
  /// `r` with NaN wherever one of `ins` (r's type and shape) is NaN (propagate_nan=ALL); integer
  /// results are returned unchanged.
  ir::Value *propagateNan(ir::Value *r, const std::vector<ir::Value *> &ins, SourceLoc loc);

  // State
  const ast::Module &mod;
  const SpecializeOptions &opts;
  DiagnosticEngine &diags;
  std::unique_ptr<ir::Function> fn;
  std::unique_ptr<ir::Builder> b;
  Env globals;
  std::map<std::string, const ast::FunctionDef *> jitFns;
  /// The calls `triton.heuristics(...)` / `triton.autotune(...)` a module-level kernel name was
  /// bound through, the decorators' call form (`k = triton.heuristics({...})(triton.jit(fn))`),
  /// outermost first; their heuristics apply when that name is compiled. The JitFn value bound
  /// carries its origin (wrappersOfValue), so an import of the name keeps them.
  std::map<std::string, std::vector<const ast::CallExpr *>> kernelWrappers_;
  std::vector<const ast::FunctionDef *> callStack;
  /// The most @jit helper calls that may be active at once (every call is inlined): a deeper
  /// chain is a located error rather than an overflow of the compiler's stack. Python's own
  /// recursion limit stops Triton far earlier.
  static constexpr size_t kMaxCallDepth = 256;
  /// Compile-time work budgets of one kernel (located errors beyond; docs/language.md):
  /// statements executed (unrolled tl.static_range bodies and inlined helpers count each time),
  /// tile-IR ops created, the elements of a compile-time tuple (those of nested tuples, meshes
  /// and other compound values counted too) and the bytes of its strings (of one string, or
  /// of all the strings a tuple holds).
  static constexpr uint64_t kMaxStatements = 5'000'000;
  static constexpr uint64_t kMaxOps = 500'000;
  static constexpr size_t kMaxTupleElements = 4096;
  static constexpr size_t kMaxStringBytes = size_t(1) << 20;
  uint64_t statements = 0;
  uint64_t opsAtStart = ir::opsCreatedOnThisThread();
  /// Counts one executed statement at `loc`; a located error once a budget is spent.
  void chargeStatement(SourceLoc loc);
  /// The elements (nested ones counted) and string bytes of a compile-time value being built.
  struct ValueSize {
    size_t elements = 0, bytes = 0;
  };
  /// Adds `elt`, one more element of a value being built, to `total` (itself and what it holds)
  /// and fails at `loc` once `total` is over the tuple-element or string-byte budget above.
  /// Costs at most the budget's worth of steps, however large `elt` is.
  void chargeElement(ValueSize &total, const SVal &elt, SourceLoc loc);
  /// A located error at `loc` when the compile-time value `v` (just built: a `+` of tuples, a
  /// string operation) is over the tuple-element or string-byte budget above.
  void checkValueSize(const SVal &v, SourceLoc loc);
  /// The calls of @jit helpers being executed (callee, call location), outermost first, for the
  /// call-chain notes of diagnostics.
  std::vector<std::pair<const ast::FunctionDef *, SourceLoc>> callSites;
  /// Loops (unrolled or runtime) around the statement being executed, in the current function.
  int loopDepth = 0;
  /// Runtime loops among them.
  int runtimeLoopDepth = 0;
  int runtimeIfDepth = 0;
  /// Names bound on only one path of a runtime if, with the reason (for a precise "unknown
  /// name" message).
  std::map<std::string, std::string> onlyOneBranch_;
  /// Module-level names taken from the first branch of an `if` whose condition the compiler
  /// could not evaluate, where the other branch binds them differently: the warning (and its
  /// note at the condition) given once, where a kernel first reads one.
  std::map<std::string, Unresolved> guessedGlobals_;
  /// Module-level names whose definition could not be evaluated (an import of something TLE
  /// does not have), with the reason, for the error where a kernel reads one.
  std::map<std::string, Unresolved> unresolvedGlobals_;
  /// The user modules of this compilation (shared by the specializers of its modules and
  /// probes), and the one whose code is running (its names are `globals`).
  std::shared_ptr<ModuleTable> modules_;
  UserModule *self_ = nullptr;
  /// Per function being executed (kernel, then inlined helpers): where it returned a value and
  /// where it returned nothing, to reject helpers that do both.
  struct Returns {
    SourceLoc value, none;
  };
  std::vector<Returns> returns;
  /// A debug build (SpecializeOptions::debug or @triton.jit(debug=True) on the kernel).
  bool debug = false;
};

// --- Statement helpers shared by Specialize.cpp and Loops.cpp

/// The value of control-flow flag `name` in `env` (absent means False).
SVal flagOf(const Env &env, const char *name);
/// Forgets the flags `names` (and kExited) of `env`.
void clearFlags(Env &env, std::initializer_list<const char *> names);
/// Adds to `out` the names assigned anywhere in `blk` (targets of assignments, augmented
/// assignments and loops). Without `staticTargets`, the targets of tl.static_range loops are
/// left out: Triton binds them as constexprs in the scope, never as values a runtime loop
/// carries (a runtime loop's body may rebind an index an earlier static_range left behind).
void collectAssigned(const ast::Block &blk, std::set<std::string> &out, bool staticTargets = true);
/// Whether `blk` holds a `break` of the loop whose body it is (not one of a nested loop).
bool breaksOut(const ast::Block &blk);
/// Whether `blk` holds a `return` at any depth.
bool returnsFrom(const ast::Block &blk);

/// Whether `e` is the name `name` alone or an attribute `X.name` (`static_range`,
/// `tl.static_range`): how a callee or decorator is recognised without evaluating it.
bool namesAttr(const ast::Expr *e, const std::string &name);
/// Whether a decorator is `@triton.jit` / `@tle.jit` / `@jit`, with or without arguments.
bool isJitDecorator(const ast::Expr *d);
/// Whether a decorator is `@triton.constexpr_function` / `@tl.constexpr_function` /
/// `@constexpr_function`.
bool isConstexprFnDecorator(const ast::Expr *d);
/// Whether a decorator is `@core.extern` / `@tl.core.extern` / `@extern` (Extern.cpp).
bool isExternDecorator(const ast::Expr *d);
/// pathlib.Path values (Raw.cpp): a `pathlib.Path` record of its text; `p.parent`, `.name`,
/// `.stem`, `.suffix` (nullopt for other attributes); `p / "x"` and str(p) use the text.
bool isPath(const SVal &v);
SVal pathValue(const std::string &p);
std::optional<SVal> pathAttribute(const SVal &path, const std::string &attr);

/// Parses a constexpr value from the command line (-D, signature literals): int, float,
/// True/False, None, a quoted string or a dtype name; empty when the text is none of these.
std::optional<SVal> parseConstexprText(const std::string &t);

/// The topology level a device mesh's axis comes from (tle.device_mesh's dict keys, MeshConfig's
/// fields), outermost first: node, device and chiplet span GPUs; block_cluster and block are
/// one GPU's programs; Other is any other level name.
enum class MeshLevel { Node, Device, Chiplet, BlockCluster, Block, Other };

// Device meshes (Meshes.cpp). A Mesh SVal keeps `ints` = its shape and elts[0, ndim) = its axis
// names (Str, `i` = the axis's MeshLevel); a mesh derived from another (a sub-mesh `mesh[0, :]`,
// reshape, flatten) has one more element: a tuple (its physical ids, its launch mesh).

/// Whether `mesh` was derived from another mesh (it has its own physical ids and launch mesh).
bool meshDerived(const SVal &mesh);
/// The mesh `mesh` was derived from, at the root (the one the kernel is launched over:
/// FlagTree's launch_shape / launch_dim_names); `mesh` itself when it is not derived.
SVal meshLaunch(const SVal &mesh);
/// The physical ids of `mesh`'s members, row-major: positions in its launch mesh (0..size-1
/// for a mesh that is not derived).
std::vector<int64_t> meshPhysicalIds(const SVal &mesh);
/// The level of axis `axis` (< ndim) of `mesh`.
MeshLevel meshAxisLevel(const SVal &mesh, size_t axis);
const char *meshLevelName(MeshLevel level);
/// "device_mesh(x=2, y=4)", a derived mesh with "[ids ... of <its launch mesh>]".
std::string describeMesh(const SVal &mesh);
/// mesh.shape, dim_names, ndim, size, physical_ids, launch_shape, launch_dim_names; nullopt for
/// another name.
std::optional<SVal> meshAttribute(const SVal &mesh, const std::string &attr);

/// A compile-time value as the function's constexprs (and the metadata) record it: an int,
/// float, True/False or None as Python prints it, a dtype as its name (`bf16`), a string in
/// single quotes, a tuple in parentheses, a mesh as `device_mesh(...)`, a function as its name.
std::string constexprRecord(const SVal &v);

/// The libdevice functions TLE lowers (`libdevice.NAME`, `tl.math.NAME`), with their arity.
const std::map<std::string, int> &libdeviceArities();

/// Where an expression starts (its leftmost token), for carets under whole arguments.
SourceLoc startLoc(const ast::Expr *e);

/// Integer promotion of two integer dtypes (Triton's integer_promote_impl).
ir::DType integerPromote(ir::DType a, ir::DType b);
/// The dtype a binary operation of two tensors of dtypes x and y computes in (Triton's
/// computation_type_impl without scalar operands): the wider float (fp16 with bf16: fp16; bf16
/// with another: fp32; fp16 and bf16 become fp32 for / and % when divOrMod), two fp8 types fp16,
/// else integer promotion; nullopt for fp8 with a non-float, which Triton refuses.
std::optional<ir::DType> tensorComputationType(ir::DType x, ir::DType y, bool divOrMod);

} // namespace tle::sema
