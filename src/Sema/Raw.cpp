// TLE-Raw (FlagTree's TLE-Raw, ../shared/reference/tle.md §4): native functions declared with a
// decorator and called from kernels, lowered to the tile IR's raw_call op.
//
//   @tle.raw.dialect(name="cuda", file=Path(__file__).parent / "f.cu", extern_func_name=None)
//   def f(*args, **kwargs): ...
//   out = tle.raw.call(f, [acc, a_ptr, n], output_indices=[0], hint="")   # register results
//   buf = tle.raw.call_smem(f, [buf, ...], output_indices=[0])            # buffer results
//   acc = tle.raw.call(f, [acc], [a, b])   # FlagTree's earlier (outputs, inputs) form
//
// Arguments expand as FlagTree's protocol does: a scalar or pointer is one parameter; a buffer
// (tle.gpu.alloc, row-major) is a memref (allocated and aligned pointer, offset, sizes, strides);
// a register tile is first stored to a buffer of its own, passed as one, and (when an output)
// loaded back after the call. The function runs with every thread of the CTA; the insert-barriers
// pass orders it against the kernel's other accesses to those buffers.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <cstdlib>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

namespace tle::sema {

using ir::AddrSpace;
using ir::DType;
using ir::OpKind;
namespace fs = std::filesystem;

namespace {

/// The source file `f` names (a str or a pathlib.Path), absolute: relative paths are taken from
/// the directory of the file that declares the function.
std::string rawPath(Specializer &S, const SVal &f, SourceLoc declLoc) {
  fs::path p(f.kind == SVal::Kind::Str ? f.s : f.attr("__path__").s);
  if (p.is_relative())
    p = fs::path(S.diags.sources().path(declLoc.file)).parent_path() / p;
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return (ec ? p : a).lexically_normal().string();
}

/// The text of a raw source file; `ok` false when it is not a regular file of at most 16 MiB (the
/// limit on every source file) or cannot be read.
std::string readAll(const std::string &path, bool &ok) {
  std::error_code ec;
  ok = fs::is_regular_file(path, ec) && fs::file_size(path, ec) <= SourceManager::kMaxSourceBytes && !ec;
  if (!ok)
    return "";
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// `tle.raw.dialect(name, file=None, extern_func_name=None, deferred=False, source=None)`: the
/// decorator's options, applied to the function it decorates at module scope (rawDecorated).
SVal dialect(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const SVal &name = p.get("name").val;
  if (name.kind != SVal::Kind::Str || (name.s != "cuda" && name.s != "llvm"))
    S.fail(p.loc("name"), "dialect() name must be \"cuda\" (a CUDA device function) or \"llvm\" (LLVM IR text; "
                          "tlec has no MLIR, so FlagTree's \"mlir\" is not supported), got " + name.describe());
  const SVal &file = p.get("file").val, &src = p.get("source").val, &ext = p.get("extern_func_name").val;
  if (p.has("file") && file.kind != SVal::Kind::Str && !isPath(file))
    S.fail(p.loc("file"), "dialect() file must be a path (a str or pathlib.Path), got " + file.describe());
  if (p.has("source") && src.kind != SVal::Kind::Str)
    S.fail(p.loc("source"), "dialect() source must be a str, got " + src.describe());
  if (p.has("file") == p.has("source"))
    S.fail(c.loc, "dialect() needs exactly one of file= (the source file) and source= (the source text)");
  if (p.has("extern_func_name") && ext.kind != SVal::Kind::Str)
    S.fail(p.loc("extern_func_name"), "dialect() extern_func_name must be a str, got " + ext.describe());
  if (p.has("deferred")) // FlagTree's deferred mode: the same function here
    strictBool(S, p, "dialect", "deferred");
  bool fragment = p.has("fragment") && strictBool(S, p, "dialect", "fragment");
  return SVal::record("tle.raw.dialect", {{"name", name}, {"file", file}, {"source", src}, {"extern_func_name", ext},
                                          {"fragment", SVal::boolean(fragment)}});
}

/// The compiled function of a `tle.raw.function` record, compiled once per source per process.
const ir::RawFunction &compiled(Specializer &S, const SVal &fn, SourceLoc at) {
  SourceLoc decl = fn.fn ? fn.fn->loc() : at;
  std::vector<Specializer::Note> notes{{decl, "'" + fn.attr("__name__").s + "' is declared here"}};
  if (!S.opts.compileRaw)
    S.fail(at, "tle.raw functions run native code on the GPU: this target (the CPU) cannot call them", notes);
  ir::RawSource src;
  src.dialect = fn.attr("name").s;
  src.externName = fn.attr("extern_func_name").s;
  src.arch = S.opts.arch;
  const SVal &file = fn.attr("file");
  std::string key;
  if (file.kind != SVal::Kind::None) {
    src.path = rawPath(S, file, decl);
    bool ok = false;
    key = src.text = readAll(src.path, ok);
    if (!ok)
      S.fail(at, "cannot read '" + src.path + "', the " + src.dialect + " source of '" + fn.attr("__name__").s +
                     "' (a regular file of at most 16 MiB)", notes);
  } else {
    src.text = key = fn.attr("source").s;
  }
  key = src.dialect + "\n" + src.arch + "\n" + src.externName + "\n" + src.path + "\n" + key;
  static std::mutex mu;
  static std::map<std::string, ir::RawFunction> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end())
    return it->second;
  ir::RawResult r = S.opts.compileRaw(src);
  if (!r.fn) {
    std::string detail = r.detail;
    while (!detail.empty() && std::isspace(static_cast<unsigned char>(detail.back())))
      detail.pop_back();
    if (!detail.empty())
      notes.push_back({decl, (src.dialect == "cuda" ? "clang says:\n" : "") + detail});
    S.fail(at, "tle.raw function '" + fn.attr("__name__").s + "' (" + src.dialect + "): " + r.error, notes);
  }
  return cache.emplace(key, std::move(*r.fn)).first->second;
}

/// One argument of a raw call as the IR passes it.
struct RawArg {
  ir::Value *operand = nullptr;
  std::vector<int64_t> memref; ///< the buffer's shape when passed as a memref
  ir::ScalarType elem;         ///< the memref's element type
  bool isBuffer = false;       ///< a tle.gpu.alloc buffer
  bool fragment = false;       ///< a register tile passed as each thread's fragment
  SVal buffer;                 ///< the buffer (given, or the spill's)
  size_t firstParam = 0;       ///< its first LLVM parameter
  SourceLoc loc;
};

size_t paramCount(const RawArg &a) { return a.fragment ? 5 : a.memref.empty() ? 1 : 3 + 2 * a.memref.size(); }

std::string signatureText(const ir::RawFunction &fn) {
  std::string s = fn.returnSpelling + " " + fn.name + "(";
  for (size_t i = 0; i < fn.params.size(); ++i)
    s += (i ? ", " : "") + fn.params[i].spelling;
  return s + ")";
}

/// A buffer SVal over `ptr` of `shape` (row-major).
SVal bufferOf(ir::Value *ptr, const std::vector<int64_t> &shape) {
  SVal buf;
  buf.kind = SVal::Kind::Buffer;
  buf.elts = {SVal::tensor(ptr)};
  buf.ints = shape;
  buf.i = 0;
  return buf;
}

RawArg classify(Specializer &S, const Arg &a, const ir::RawParam *param, bool fragments, bool contiguous) {
  RawArg r;
  r.loc = a.loc;
  if (a.val.kind == SVal::Kind::Buffer) {
    if (a.val.i)
      S.fail(a.loc, "tle.raw functions address buffers row-major (FlagTree's protocol), but " + a.val.describe() +
                        " is in the NVMMA swizzled layout: allocate it with nv_mma_shared_layout=False");
    r.operand = a.val.elts[0].v;
    r.memref = a.val.ints;
    r.elem = ir::ScalarType{r.operand->type.elem.pointee};
    r.isBuffer = true;
    r.buffer = a.val;
    return r;
  }
  if (a.val.isTensor() && a.val.v->type.isTile()) {
    ir::Value *t = a.val.v;
    if (t->type.rank() > 2 || t->type.elem.isPointer())
      S.fail(a.loc, "tle.raw functions take register tiles of rank 1 or 2 of numbers, got " + t->type.str());
    ir::ScalarType et = t->type.elem;
    DType storage = et.dtype == DType::I1 ? DType::I8 : et.dtype;
    ir::Value *tile = et.dtype == DType::I1 ? S.castTo(t, ir::ScalarType{DType::I8}, a.loc) : t;
    if (fragments) { // each thread's elements, in registers (fragmentLayout)
      int64_t threads = 32 * int64_t(S.opts.numWarps);
      if (contiguous && t->type.numElements() < threads)
        S.fail(a.loc, "a fragment needs at least one element per thread: " + t->type.str() + " over " +
                          std::to_string(threads) + " threads");
      r.operand = tile;
      r.elem = ir::ScalarType{storage};
      r.fragment = true;
      return r;
    }
    ir::Op *alloc =
        S.b->create(OpKind::LocalAlloc, a.loc, {}, {ir::Type(ir::ScalarType::ptrTo(storage, AddrSpace::Shared))});
    alloc->setAllocShape(t->type.shape);
    alloc->setAllocSwizzle(0);
    S.b->create(OpKind::LocalStore, a.loc, {alloc->result(), tile}, {});
    r.operand = alloc->result();
    r.memref = t->type.shape;
    r.elem = ir::ScalarType{storage};
    r.buffer = bufferOf(alloc->result(), t->type.shape);
    return r;
  }
  if (a.val.isNumber()) { // a Python number: the parameter's type
    if (param && param->kind == ir::RawParam::Kind::Float) {
      DType d = param->bits == 64 ? DType::F64 : param->bits == 16 ? DType::F16 : DType::F32;
      r.operand = S.b->constFloat(a.loc, d, a.val.kind == SVal::Kind::Float ? a.val.f : double(a.val.i));
      return r;
    }
    if (a.val.kind == SVal::Kind::Float)
      S.fail(a.loc, "a float argument where the raw function takes " + (param ? param->spelling : "nothing"));
    DType d = param && param->bits == 64 ? DType::I64 : param && param->bits == 16 ? DType::I16
            : param && param->bits == 8  ? DType::I8  : param && param->bits == 1 ? DType::I1 : DType::I32;
    unsigned bits = ir::bitWidth(d);
    if (bits < 64 && (a.val.i < -(int64_t(1) << (bits - 1)) || a.val.i >= (int64_t(1) << bits)))
      S.fail(a.loc, "the argument " + std::to_string(a.val.i) + " does not fit the raw function's i" +
                        std::to_string(bits) + " parameter");
    r.operand = S.b->constInt(a.loc, d, a.val.i);
    return r;
  }
  if (a.val.isTensor()) {
    r.operand = a.val.v;
    return r;
  }
  S.fail(a.loc, "tle.raw functions take scalars, pointers, register tiles and buffers, got " + a.val.describe());
}

/// Whether LLVM parameter `p` takes a value of IR type `t` (pointers: the same address space or
/// a generic pointer; integers of the same width; floats of the same format).
bool fits(const ir::RawParam &p, ir::ScalarType t) {
  using K = ir::RawParam::Kind;
  if (t.isPointer())
    return p.kind == K::Pointer &&
           (p.addrSpace == 0 || p.addrSpace == (t.space == AddrSpace::Global ? 1u : t.space == AddrSpace::Shared ? 3u : 7u));
  if (ir::isFloat(t.dtype))
    return p.kind == K::Float && p.bits == ir::bitWidth(t.dtype) &&
           (t.dtype != DType::BF16 || p.spelling == "bfloat") && (t.dtype != DType::F16 || p.spelling == "half");
  return p.kind == K::Int && p.bits == ir::bitWidth(t.dtype);
}

/// Checks the expanded arguments against the function's parameters: a located error at the first
/// one that does not fit, with the signature in a note.
void checkSignature(Specializer &S, const ir::RawFunction &fn, const std::vector<RawArg> &args, SourceLoc at,
                    std::vector<Specializer::Note> notes) {
  notes.push_back({at, "its LLVM signature: " + signatureText(fn)});
  size_t n = 0;
  for (const RawArg &a : args)
    n += paramCount(a);
  if (n != fn.params.size())
    S.fail(at, "tle.raw function '" + fn.name + "' takes " + std::to_string(fn.params.size()) +
                   " LLVM parameters, but the arguments expand to " + std::to_string(n) +
                   " (a scalar or pointer is one; a tile or buffer of rank r is 3 + 2r: pointer, pointer, offset, "
                   "sizes, strides)", notes);
  for (const RawArg &a : args) {
    auto bad = [&](size_t k, const std::string &what) {
      S.fail(a.loc, "argument does not fit parameter " + std::to_string(k) + " of '" + fn.name + "', " +
                        fn.params[k].spelling + ": it passes " + what, notes);
    };
    size_t k = a.firstParam;
    if (a.fragment) {
      for (size_t j = 0; j < 2; ++j)
        if (fn.params[k + j].kind != ir::RawParam::Kind::Pointer ||
            (fn.params[k + j].addrSpace != 0 && fn.params[k + j].addrSpace != 5))
          bad(k + j, "a pointer to the thread's fragment of " + a.elem.str() + " (generic or local)");
      for (size_t j = 2; j < 5; ++j)
        if (!fits(fn.params[k + j], ir::ScalarType{DType::I64}))
          bad(k + j, "an i64 (the fragment's offset, size and stride)");
      continue;
    }
    if (a.memref.empty()) {
      if (!fits(fn.params[k], a.operand->type.elem))
        bad(k, a.operand->type.elem.str());
      continue;
    }
    ir::ScalarType ptr = ir::ScalarType::ptrTo(a.elem.dtype, AddrSpace::Shared);
    for (size_t j = 0; j < 2; ++j)
      if (!fits(fn.params[k + j], ptr))
        bad(k + j, "a " + ptr.str() + " (the memref's " + (j ? "aligned" : "allocated") + " pointer)");
    for (size_t j = 2; j < paramCount(a); ++j)
      if (!fits(fn.params[k + j], ir::ScalarType{DType::I64}))
        bad(k + j, "an i64 (the memref's offset, sizes and strides)");
  }
}

/// The argument each result aliases: output_indices, or what the function's returned memrefs
/// are built from.
std::vector<size_t> outputsOf(Specializer &S, const ir::RawFunction &fn, const std::vector<RawArg> &args,
                              const Arg *given, SourceLoc at, const std::vector<Specializer::Note> &notes) {
  std::vector<size_t> outs;
  if (given) {
    for (const SVal &e : given->val.elts) {
      if (e.kind != SVal::Kind::Int || e.i < 0 || size_t(e.i) >= args.size())
        S.fail(given->loc, "output_indices must be indices of the arguments (0.." + std::to_string(args.size() - 1) +
                               "), got " + e.describe());
      if (args[e.i].memref.empty() && !args[e.i].fragment)
        S.fail(given->loc, "output_indices: argument " + std::to_string(e.i) +
                               " is a scalar or pointer; results are new versions of tile and buffer arguments");
      outs.push_back(size_t(e.i));
    }
    return outs;
  }
  if (fn.returnsVoid)
    return outs;
  if (fn.returnedParams.empty())
    S.fail(at, "tle.raw function '" + fn.name + "' returns " + fn.returnSpelling +
                   ": a raw function returns nothing, a memref struct {ptr, ptr, i64, [r x i64], [r x i64]} or a "
                   "struct of them", notes);
  for (int p : fn.returnedParams) {
    size_t which = args.size();
    for (size_t i = 0; i < args.size(); ++i)
      if ((!args[i].memref.empty() || args[i].fragment) && p == int(args[i].firstParam + 1))
        which = i;
    if (which == args.size())
      S.fail(at, "cannot tell which argument a memref returned by '" + fn.name +
                     "' comes from: pass output_indices=[...]", notes);
    outs.push_back(which);
  }
  return outs;
}

SVal rawCall(Specializer &S, const BuiltinCall &c, bool smem) {
  const Binder &p = c.p;
  const SVal &fn = p.get("func").val;
  if (fn.kind != SVal::Kind::Namespace || fn.s != "tle.raw.function")
    S.fail(p.loc("func"), c.fname + "() func must be a function declared with @tle.raw.dialect(...), got " +
                              fn.describe());
  const SVal &argList = p.get("args").val;
  if (argList.kind != SVal::Kind::Tuple)
    S.fail(p.loc("args"), c.fname + "() args must be a list, got " + argList.describe());
  // FlagTree's earlier form call(func, outputs, inputs): the outputs come first and are results.
  const Arg *oi = p.has("output_indices") ? &p.get("output_indices") : nullptr;
  std::vector<Arg> args;
  for (const SVal &e : argList.elts)
    args.push_back(Arg{p.loc("args"), e});
  Arg legacyOuts;
  bool byKeyword = std::any_of(c.args.kw.begin(), c.args.kw.end(),
                               [](const auto &k) { return k.first == "output_indices"; });
  if (oi && !byKeyword && oi->val.kind == SVal::Kind::Tuple &&
      std::any_of(oi->val.elts.begin(), oi->val.elts.end(), [](const SVal &e) { return e.kind != SVal::Kind::Int; })) {
    legacyOuts.loc = oi->loc;
    legacyOuts.val = SVal::tuple({});
    for (size_t i = 0; i < argList.elts.size(); ++i)
      legacyOuts.val.elts.push_back(SVal::integer(int64_t(i)));
    for (const SVal &e : oi->val.elts)
      args.push_back(Arg{oi->loc, e});
    oi = &legacyOuts;
  } else if (oi && oi->val.kind != SVal::Kind::Tuple) {
    S.fail(oi->loc, c.fname + "() output_indices must be a list of argument indices, got " + oi->val.describe());
  }
  if (p.has("hint") && p.get("hint").val.kind != SVal::Kind::Str)
    S.fail(p.loc("hint"), c.fname + "() hint must be a str, got " + p.get("hint").val.describe());
  bool contiguous = false;
  if (p.has("layout")) {
    const SVal &l = p.get("layout").val;
    if (l.kind != SVal::Kind::Str || (l.s != "blocked" && l.s != "contiguous"))
      S.fail(p.loc("layout"), c.fname + "() layout names the fragments' layout: \"blocked\" (the default: the layout "
                                        "tile code gives the tile) or \"contiguous\" (each thread's consecutive "
                                        "row-major elements), got " + l.describe());
    if (!fn.attr("fragment").i)
      S.fail(p.loc("layout"), c.fname + "() layout= applies to functions declared with fragment=True");
    contiguous = l.s == "contiguous";
  }
  if (smem && fn.attr("fragment").i)
    S.fail(c.loc, "call_smem() passes tiles through shared memory; '" + fn.attr("__name__").s +
                      "' is declared fragment=True (use tle.raw.call)");
  const ir::RawFunction &f = compiled(S, fn, c.loc);
  std::vector<Specializer::Note> notes;
  if (fn.fn)
    notes.push_back({fn.fn->loc(), "'" + fn.attr("__name__").s + "' is declared here"});
  std::vector<RawArg> raw;
  size_t next = 0;
  for (const Arg &a : args) {
    RawArg r = classify(S, a, next < f.params.size() ? &f.params[next] : nullptr, fn.attr("fragment").i != 0,
                        contiguous);
    r.firstParam = next;
    next += paramCount(r);
    raw.push_back(std::move(r));
  }
  checkSignature(S, f, raw, c.loc, notes);
  std::vector<size_t> outs = outputsOf(S, f, raw, oi, c.loc, notes);
  std::vector<ir::Value *> operands;
  std::vector<std::vector<int64_t>> memrefs;
  for (const RawArg &r : raw) {
    operands.push_back(r.operand);
    memrefs.push_back(r.memref);
  }
  std::vector<ir::Type> fragTypes;
  std::vector<int64_t> fragOuts;
  for (size_t k : outs)
    if (raw[k].fragment) {
      fragTypes.push_back(raw[k].operand->type);
      fragOuts.push_back(int64_t(k));
    }
  ir::Op *call = S.b->create(OpKind::RawCall, c.loc, operands, fragTypes);
  call->setRawSymbol(f.symbol);
  call->setRawModule(f.module);
  call->setRawMemrefs(memrefs);
  call->setRawResultOperands(fragOuts);
  call->setRawContiguous(contiguous);
  call->setRawSharedEffects(f.sharedEffects);
  std::vector<SVal> results;
  unsigned nextFragment = 0;
  for (size_t k : outs) {
    const RawArg &r = raw[k];
    if (r.fragment) {
      ir::Value *v = call->result(nextFragment++);
      if (args[k].val.v->type.elem.dtype == DType::I1)
        v = S.castTo(v, args[k].val.v->type.elem, c.loc);
      results.push_back(SVal::tensor(v));
      continue;
    }
    if (smem || r.isBuffer) { // the buffer itself, written by the call
      results.push_back(r.buffer);
      continue;
    }
    const ir::Type &t = args[k].val.v->type;
    ir::Value *v = S.b->create(OpKind::LocalLoad, c.loc, {r.operand}, {t.withElem(r.elem)})->result();
    if (t.elem.dtype == DType::I1)
      v = S.castTo(v, t.elem, c.loc);
    results.push_back(SVal::tensor(v));
  }
  if (results.empty())
    return SVal::none();
  return results.size() == 1 ? results[0] : SVal::tuple(results);
}

SVal call(Specializer &S, const BuiltinCall &c) { return rawCall(S, c, false); }
SVal callSmem(Specializer &S, const BuiltinCall &c) { return rawCall(S, c, true); }

/// A path argument's text: a str or a pathlib.Path.
std::string pathText(Specializer &S, const Arg &a, const std::string &fname) {
  if (a.val.kind == SVal::Kind::Str)
    return a.val.s;
  if (isPath(a.val))
    return a.val.attr("__path__").s;
  S.fail(a.loc, fname + "() takes paths (str or pathlib.Path), got " + a.val.describe());
}

/// pathlib.Path(*parts): the parts joined (an absolute part restarts the path).
SVal pathlibPath(Specializer &S, const BuiltinCall &c) {
  fs::path p;
  for (const Arg &a : c.args.pos)
    p /= pathText(S, a, "Path");
  return pathValue(p.empty() ? "." : p.string());
}

/// os.path.join(a, *p), dirname(p), basename(p), abspath(p): Python's, on compile-time strings.
SVal osPath(Specializer &S, const BuiltinCall &c) {
  if (c.args.pos.empty())
    S.fail(c.loc, c.fname + "() expects a path");
  fs::path p(pathText(S, c.args.pos[0], c.fname));
  if (c.fname == "join") {
    for (size_t i = 1; i < c.args.pos.size(); ++i)
      p /= pathText(S, c.args.pos[i], c.fname);
    return SVal::str(p.string());
  }
  if (c.args.pos.size() != 1)
    S.fail(c.loc, c.fname + "() expects one path");
  if (c.fname == "dirname")
    return SVal::str(p.parent_path().string());
  if (c.fname == "basename")
    return SVal::str(p.filename().string());
  std::error_code ec;
  return SVal::str(fs::absolute(p, ec).lexically_normal().string());
}

} // namespace

bool isPath(const SVal &v) { return v.kind == SVal::Kind::Namespace && v.s == "pathlib.Path"; }

SVal pathValue(const std::string &p) { return SVal::record("pathlib.Path", {{"__path__", SVal::str(p)}}); }

std::optional<SVal> pathAttribute(const SVal &path, const std::string &attr) {
  fs::path p(path.attr("__path__").s);
  if (attr == "parent")
    return pathValue(p.has_parent_path() ? p.parent_path().string() : ".");
  if (attr == "name")
    return SVal::str(p.filename().string());
  if (attr == "stem")
    return SVal::str(p.stem().string());
  if (attr == "suffix")
    return SVal::str(p.extension().string());
  return std::nullopt;
}

std::optional<SVal> Specializer::rawDecorated(const ast::FunctionDef *fd, std::string &why) {
  for (const ast::Expr *d : fd->decorators) {
    std::optional<SVal> v = evalQuietly(d, why);
    if (!v || v->kind != SVal::Kind::Namespace || v->s != "tle.raw.dialect")
      continue;
    SVal f = *v;
    f.s = "tle.raw.function";
    f.elts.push_back(SVal::str("__name__"));
    f.elts.push_back(SVal::str(fd->name));
    f.fn = fd;
    return f;
  }
  return std::nullopt;
}

std::vector<BuiltinSpec> rawBuiltins() {
  return {
      {"tle.raw.dialect", "name, file=None, extern_func_name=None, deferred=False, source=None, pipeline=None, "
                          "context=None, fragment=False",
       dialect},
      {"tle.raw.call", "func, args, output_indices=None, hint=\"\", layout=None", call},
      {"tle.raw.call_smem", "func, args, output_indices=None, hint=\"\", layout=None", callSmem},
  };
}

/// os.getenv(key, default=None) / os.environ.get(key, default=None): the compiler's environment
/// at compile time, as Python reads it when the kernel's module is imported (FLA's
/// `if os.environ.get('FLA_USE_FAST_OPS', '0') == '1':` picks its helpers so).
SVal getenv(Specializer &S, const BuiltinCall &c) {
  const Arg &key = c.p.get("key");
  if (key.val.kind != SVal::Kind::Str)
    S.fail(key.loc, c.name + "() key must be a string, got " + key.val.describe());
  if (const char *v = std::getenv(key.val.s.c_str()))
    return SVal::str(v);
  return c.p.has("default") ? c.p.get("default").val : SVal::none();
}

/// importlib.util.find_spec(name, package=None): a spec (a record with `name`) when the module
/// can be imported here, else None. Triton and its submodules, torch, math, os and importlib are
/// the compiler's own (vLLM's `HAS_TRITON = find_spec("triton") is not None`); another module is
/// found when it is on the import search path (importing it, as Python's find_spec imports the
/// packages above it).
/// Whether `name` is a module the compiler has itself (find_spec and import_module do not look
/// for it on the search path).
bool ownModule(const std::string &name) {
  std::string head = name.substr(0, name.find('.'));
  return head == "triton" || head == "torch" || name == "math" || name == "os" || name == "os.path" ||
         name == "importlib" || name == "importlib.util" || name == "pathlib";
}

/// importlib.import_module(name, package=None): the module, imported as `import name` imports it
/// (a module on the search path runs once, now; one found nowhere is bound all the same, an
/// error only where a kernel uses it); a relative name ('.x', '..x') starts from `package`.
SVal importModuleFn(Specializer &S, const BuiltinCall &c) {
  const Arg &n = c.p.get("name");
  if (n.val.kind != SVal::Kind::Str || n.val.s.empty())
    S.fail(n.loc, "import_module() name must be a non-empty string, got " + n.val.describe());
  std::string name = n.val.s;
  if (name[0] == '.') {
    const SVal &pkg = c.p.has("package") ? c.p.get("package").val : SVal::none();
    if (pkg.kind != SVal::Kind::Str)
      S.fail(n.loc, "import_module() of the relative name '" + name + "' needs a package string");
    size_t level = name.find_first_not_of('.');
    std::string base = pkg.s;
    for (size_t up = 1; up < level; ++up) {
      size_t dot = base.rfind('.');
      if (dot == std::string::npos)
        S.fail(n.loc, "import_module(): '" + name + "' goes beyond the top-level package of '" + pkg.s + "'");
      base.resize(dot);
    }
    name = level == std::string::npos ? base : base + "." + name.substr(level);
  }
  std::string why;
  if (!ownModule(name))
    S.importModule(name, c.loc, why);
  return SVal::module(name);
}

SVal findSpec(Specializer &S, const BuiltinCall &c) {
  const Arg &n = c.p.get("name");
  if (n.val.kind != SVal::Kind::Str)
    S.fail(n.loc, "find_spec() name must be a string, got " + n.val.describe());
  const std::string &name = n.val.s;
  std::string why;
  if (ownModule(name) || (!name.empty() && name[0] != '.' && S.importModule(name, c.loc, why)))
    return SVal::record("ModuleSpec", {{"name", SVal::str(name)}});
  return SVal::none();
}

std::vector<BuiltinSpec> pathBuiltins() {
  return {
      {"importlib.util.find_spec", "name, package=None", findSpec},
      {"importlib.import_module", "name, package=None", importModuleFn},
      {"os.getenv", "key, default=None", getenv},
      {"os.environ.get", "key, default=None", getenv},
      {"pathlib.Path", "*args", pathlibPath},
      {"os.path.join", "*args", osPath},
      {"os.path.dirname", "*args", osPath},
      {"os.path.basename", "*args", osPath},
      {"os.path.abspath", "*args", osPath},
  };
}

} // namespace tle::sema
