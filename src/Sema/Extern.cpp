// User-defined external elementwise functions: `@core.extern` functions whose body returns
// `core.extern_elementwise(lib_name, lib_path, args, arg_type_symbol_dict, is_pure)`. The symbol
// the argument dtypes select becomes an ExternCall, as TLE's own libdevice functions do: a
// libdevice `__nv_*` function, or an LLVM intrinsic `llvm.*`.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <llvm/Support/Casting.h>

namespace tle::sema {

using ir::DType;

namespace {

/// "(fp32, i32)": a tuple of dtypes as the dict's keys are written.
std::string dtypeTuple(const std::vector<ir::ScalarType> &ts) {
  std::string r = "(";
  for (size_t i = 0; i < ts.size(); ++i)
    r += (i ? ", " : "") + ts[i].str();
  return r + (ts.size() == 1 ? ",)" : ")");
}

/// The value of `dict`'s entry whose key is the tuple of dtypes `ts`, or null.
const SVal *entryFor(const SVal &dict, const std::vector<ir::ScalarType> &ts) {
  for (size_t k = 0; k + 1 < dict.elts.size(); k += 2) {
    const SVal &key = dict.elts[k];
    if (key.kind != SVal::Kind::Tuple || key.elts.size() != ts.size())
      continue;
    bool same = true;
    for (size_t i = 0; i < ts.size(); ++i)
      same = same && key.elts[i].kind == SVal::Kind::DType && key.elts[i].dtype == ts[i];
    if (same)
      return &dict.elts[k + 1];
  }
  return nullptr;
}

/// The keys of `dict`, for the message of a call that matches none.
std::string dictKeys(const SVal &dict) {
  std::string r;
  for (size_t k = 0; k + 1 < dict.elts.size(); k += 2)
    r += (r.empty() ? "" : ", ") + constexprRecord(dict.elts[k]);
  return r.empty() ? "none" : r;
}

/// The argument dtypes of `xs`.
std::vector<ir::ScalarType> dtypesOf(const std::vector<ir::Value *> &xs) {
  std::vector<ir::ScalarType> ts;
  for (ir::Value *x : xs)
    ts.push_back(x->type.elem);
  return ts;
}

/// Why `symbol` is not one TLE can call ("" when it is): libdevice's `__nv_*` functions and
/// LLVM's intrinsics are; other libraries are not linked.
std::string symbolError(const std::string &symbol) {
  if (symbol.rfind("__nv_", 0) == 0 && symbol.size() > 5)
    return "";
  if (symbol.rfind("llvm.", 0) == 0 && symbol.size() > 5)
    return "";
  return "unknown symbol '" + symbol + "': TLE calls libdevice's functions (__nv_*) and LLVM intrinsics (llvm.*); "
         "other libraries are not linked";
}

/// The entry of `dict` for the dtypes of `xs`; when there is none, `xs` are promoted as a
/// binary operation's operands are and looked up again. A located error at `at` when neither
/// has one.
const SVal *selectEntry(Specializer &S, const SVal &dict, std::vector<ir::Value *> &xs, SourceLoc at,
                        const std::vector<Specializer::Note> &notes) {
  if (const SVal *entry = entryFor(dict, dtypesOf(xs)))
    return entry;
  DType t = xs[0]->type.dtype();
  for (ir::Value *x : xs)
    t = x->type.elem.isPointer() ? t : tensorComputationType(t, x->type.dtype(), false).value_or(DType::F32);
  std::vector<ir::Value *> promoted;
  for (ir::Value *x : xs)
    promoted.push_back(x->type.elem.isPointer() ? x : S.castTo(x, ir::ScalarType{t}, at));
  const SVal *entry = entryFor(dict, dtypesOf(promoted));
  if (!entry)
    S.fail(at, "extern_elementwise(): no entry of arg_type_symbol_dict for the argument dtypes " +
                   dtypeTuple(dtypesOf(xs)) + " (its keys: " + dictKeys(dict) + ")", notes);
  xs = promoted;
  return entry;
}

/// extern_elementwise(lib_name, lib_path, args, arg_type_symbol_dict, is_pure): the arguments
/// made tensors and broadcast; the dict's entry for their dtypes, or, when there is none, for
/// the dtypes after a binary operation's promotion, names the symbol and the result dtype.
SVal externElementwise(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  // Errors about the call are shown where the kernel calls the @core.extern function.
  SourceLoc at = S.externCallLoc().valid() ? S.externCallLoc() : c.loc;
  std::vector<Specializer::Note> notes;
  if (S.externCallLoc().valid())
    notes.push_back({c.loc, "extern_elementwise() is called here"});
  for (const char *k : {"lib_name", "lib_path"})
    if (p.get(k).val.kind != SVal::Kind::Str)
      S.fail(p.loc(k), std::string("extern_elementwise() argument '") + k + "' must be a string, got " +
                           p.get(k).val.describe());
  const SVal &argv = p.get("args").val;
  const SVal &dict = p.get("arg_type_symbol_dict").val;
  if (dict.kind != SVal::Kind::Dict || dict.elts.empty())
    S.fail(p.loc("arg_type_symbol_dict"), "extern_elementwise() arg_type_symbol_dict must be a non-empty dict of "
                                          "dtype tuples to (symbol, dtype), got " + dict.describe());
  std::vector<SVal> vals = argv.kind == SVal::Kind::Tuple ? argv.elts : std::vector<SVal>{argv};
  std::vector<ir::Value *> xs;
  for (const SVal &a : vals) {
    if (!a.isTensor() && !a.isNumber())
      S.fail(at, "extern_elementwise() arguments must be tensors or numbers, got " + a.describe(), notes);
    xs.push_back(S.toTensor(a, at));
  }
  if (xs.empty())
    S.fail(at, "extern_elementwise() needs at least one argument", notes);
  const SVal *entry = selectEntry(S, dict, xs, at, notes);
  for (int round = 0; round < 2; ++round)
    for (size_t i = 1; i < xs.size(); ++i)
      S.broadcastPair(xs[0], xs[i], at);
  const bool valid = entry->kind == SVal::Kind::Tuple && entry->elts.size() == 2 &&
                     entry->elts[0].kind == SVal::Kind::Str && entry->elts[1].kind == SVal::Kind::DType;
  if (!valid)
    S.fail(p.loc("arg_type_symbol_dict"), "extern_elementwise() arg_type_symbol_dict values must be (symbol, dtype) "
                                          "pairs, got " + entry->describe());
  const std::string &symbol = entry->elts[0].s;
  if (std::string why = symbolError(symbol); !why.empty())
    S.fail(p.loc("arg_type_symbol_dict"), "extern_elementwise(): " + why);
  ir::ScalarType rt = entry->elts[1].dtype;
  for (ir::Value *x : xs)
    if (x->type.elem.isPointer() || ir::isFP8(x->type.dtype()))
      S.fail(at, "extern_elementwise() arguments must be numbers (not fp8), got " + x->type.str(), notes);
  if (rt.isPointer() || ir::isFP8(rt.dtype))
    S.fail(p.loc("arg_type_symbol_dict"), "extern_elementwise() result dtype must be a number (not fp8), got " +
                                              rt.str());
  ir::Op *op = S.b->create(ir::OpKind::ExternCall, at, xs, {xs[0]->type.withElem(rt)});
  op->setCallee(symbol);
  return SVal::tensor(op->result());
}

} // namespace

bool isExternDecorator(const ast::Expr *d) { return namesAttr(d, "extern"); }

std::vector<BuiltinSpec> externBuiltins() {
  // Triton 3.6 passes `_semantic`, earlier releases `_builder`: both are accepted and unused.
  return {{"tl.extern_elementwise",
           "lib_name, lib_path, args, arg_type_symbol_dict, is_pure=False, _semantic=None, _builder=None",
           externElementwise}};
}

} // namespace tle::sema
