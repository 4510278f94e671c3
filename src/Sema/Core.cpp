// The Python builtins a kernel can call (int, min, len, isinstance, ...), triton's helpers
// (cdiv, next_power_of_2), compile-time values and hints, program geometry, tl.extra.cuda's
// launch controls, and the dtype predicates, with Triton 3.6's argument rules.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <llvm/Support/SaveAndRestore.h>

#include <cstdlib>
#include <cmath>
#include <functional>
#include <limits>

namespace tle::sema {

using ir::DType;

namespace {

/// Python floor division (constexpr semantics).
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

SVal toNumber(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const std::string &name = c.name;
  const SVal &x = p.get("x").val;
  if (name == "float") {
    if (x.kind == SVal::Kind::Str) {
      std::string s = x.s;
      for (auto &ch : s)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (s == "inf" || s == "+inf" || s == "infinity")
        return SVal::real(std::numeric_limits<double>::infinity());
      if (s == "-inf" || s == "-infinity")
        return SVal::real(-std::numeric_limits<double>::infinity());
      if (s == "nan")
        return SVal::real(std::numeric_limits<double>::quiet_NaN());
      try {
        return SVal::real(std::stod(x.s));
      } catch (...) {
        S.fail(p.loc("x"), "could not convert string to float: '" + x.s + "'");
      }
    }
    if (x.isNumber())
      return SVal::real(x.kind == SVal::Kind::Float ? x.f : double(x.i));
  } else if (name == "int" && x.kind == SVal::Kind::Str) {
    // Python's int(str): an optionally signed decimal integer, surrounding blanks allowed.
    size_t b = x.s.find_first_not_of(" \t\n"), e = x.s.find_last_not_of(" \t\n");
    std::string t = b == std::string::npos ? "" : x.s.substr(b, e - b + 1);
    size_t digits = t.find_first_not_of("+-") == 1 ? 1 : 0;
    bool ok = !t.empty() && t.size() > digits && t.find_first_not_of("0123456789", digits) == std::string::npos;
    if (ok) {
      try {
        return SVal::integer(std::stoll(t));
      } catch (...) {
      }
    }
    S.fail(p.loc("x"), "invalid literal for int() with base 10 (or past int64): '" + x.s + "'");
  } else if (x.isNumber()) {
    if (name == "bool")
      return SVal::boolean(S.truthy(x, p.loc("x")));
    if (x.kind == SVal::Kind::Float) {
      // Python: int(inf) raises OverflowError, int(nan) ValueError; TLE's integers are int64.
      if (std::isnan(x.f))
        S.fail(p.loc("x"), "cannot convert float NaN to integer");
      if (std::isinf(x.f))
        S.fail(p.loc("x"), "cannot convert float infinity to integer");
      if (std::trunc(x.f) >= 0x1p63 || std::trunc(x.f) < -0x1p63)
        S.fail(p.loc("x"), "int() of " + x.describe() + " is outside the int64 range");
      return SVal::integer(static_cast<int64_t>(x.f));
    }
    return SVal::integer(x.i);
  }
  S.fail(p.loc("x"), name + "() of " + x.describe() + " is not supported in a kernel (only compile-time numbers)");
}

SVal pyMinMax(Specializer &S, const BuiltinCall &c) {
  CallArgs &args = c.args;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  if (args.pos.empty())
    S.fail(loc, name + "() expects at least one argument");
  bool runtime = false;
  for (auto &a : args.pos) {
    if (!a.val.isNumber() && !a.val.isTensor())
      S.fail(a.loc, name + "() of " + a.val.describe() + " is not supported in a kernel");
    runtime |= a.val.isTensor();
  }
  if (runtime) {
    // On runtime values Python's min/max mean tl.minimum/tl.maximum, folded left to right.
    SVal best = args.pos[0].val;
    for (size_t i = 1; i < args.pos.size(); ++i) {
      CallArgs pair;
      pair.loc = loc;
      pair.pos = {{args.pos[0].loc, best}, args.pos[i]};
      best = S.callBuiltin(name == "min" ? "tl.minimum" : "tl.maximum", pair);
    }
    return best;
  }
  SVal best = args.pos[0].val;
  for (auto &a : args.pos) {
    double x = a.val.kind == SVal::Kind::Float ? a.val.f : double(a.val.i);
    double y = best.kind == SVal::Kind::Float ? best.f : double(best.i);
    if (name == "min" ? x < y : x > y)
      best = a.val;
  }
  return best;
}

SVal len(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const SVal &x = p.get("x").val;
  if (x.kind == SVal::Kind::Tuple)
    return SVal::integer(int64_t(x.elts.size()));
  if (x.kind == SVal::Kind::Dict) // key, value pairs
    return SVal::integer(int64_t(x.elts.size() / 2));
  if (x.kind == SVal::Kind::Str)
    return SVal::integer(int64_t(x.s.size()));
  if (x.isTensor() && x.v->type.isTile())
    return SVal::integer(x.v->type.shape[0]);
  S.fail(p.loc("x"), "len() of " + x.describe());
}

/// all(iterable) / any(iterable) over a compile-time iterable (a comprehension's tuple).
SVal pyAllAny(Specializer &S, const BuiltinCall &c) {
  bool all = c.fname == "all";
  for (const SVal &v : S.iterate(c.p.get("iterable").val, c.p.loc("iterable")))
    if (S.truthy(v, c.p.loc("iterable")) != all)
      return SVal::boolean(!all);
  return SVal::boolean(all);
}

/// sum(iterable, start=0) of compile-time numbers: an int unless a float is among them.
SVal pySum(Specializer &S, const BuiltinCall &c) {
  SVal acc = c.p.has("start") ? c.p.get("start").val : SVal::integer(0);
  for (const SVal &v : S.iterate(c.p.get("iterable").val, c.p.loc("iterable"))) {
    if (!v.isNumber() || !acc.isNumber())
      S.fail(c.p.loc("iterable"), "sum() takes compile-time numbers, got " + v.describe());
    if (v.kind == SVal::Kind::Float || acc.kind == SVal::Kind::Float)
      acc = SVal::real((acc.kind == SVal::Kind::Float ? acc.f : double(acc.i)) +
                       (v.kind == SVal::Kind::Float ? v.f : double(v.i)));
    else if (int64_t r = 0; !__builtin_add_overflow(acc.i, v.i, &r))
      acc = SVal::integer(r);
    else
      S.fail(c.p.loc("iterable"), "sum() overflows int64");
  }
  return acc;
}

SVal pyAbs(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  const SVal &x = p.get("x").val;
  if (x.kind == SVal::Kind::Float)
    return SVal::real(std::fabs(x.f));
  if (x.isNumber())
    return SVal::integer(x.i < 0 ? -x.i : x.i);
  return SVal::tensor(S.b->unary(ir::OpKind::Abs, loc, p.tensor("x")));
}

SVal isinstance(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  // On compile-time knowledge: the classes int, float, bool, str, tuple/list, tl.constexpr (any
  // compile-time value), tl.tensor (a runtime value), tl.dtype, torch.Tensor (no compile-time
  // value is one; a heuristic's pointer argument is), or a tuple of them.
  const SVal &x = p.get("obj").val;
  std::function<bool(const SVal &)> is = [&](const SVal &cls) -> bool {
    if (cls.kind == SVal::Kind::Tuple) {
      for (const SVal &e : cls.elts)
        if (is(e))
          return true;
      return false;
    }
    std::string n = cls.kind == SVal::Kind::Builtin ? cls.s : "";
    // A heuristic's runtime argument (Heuristics.cpp): its Python type from the signature.
    if (x.kind == SVal::Kind::Namespace && x.s == "RuntimeArgument") {
      const std::string &t = x.elts.at(1).s;
      if (cls.kind == SVal::Kind::Module && cls.s == "torch.Tensor") return t == "tensor";
      if (n == "int") return t == "int" || t == "bool";
      if (n == "float" || n == "bool") return t == n;
      if (n == "str" || n == "tuple" || n == "list" || n == "tl.constexpr" || n == "tl.tensor" || n == "tl.dtype" ||
          n == "tl.tensor_descriptor")
        return false;
    }
    if (cls.kind == SVal::Kind::Module && cls.s == "torch.Tensor") return false; // a compile-time value
    if (n == "int") return x.kind == SVal::Kind::Int || x.kind == SVal::Kind::Bool; // bool is an int
    if (n == "float") return x.kind == SVal::Kind::Float;
    if (n == "bool") return x.kind == SVal::Kind::Bool;
    if (n == "str") return x.kind == SVal::Kind::Str;
    if (n == "tuple" || n == "list") return x.kind == SVal::Kind::Tuple;
    // In @jit code a compile-time value is a tl.constexpr; Python code run at compile time (a
    // constexpr function, a module-level helper) sees plain Python values, as Triton unwraps them.
    if (n == "tl.constexpr") return x.isConstexpr() && S.pythonDepth == 0;
    if (n == "tl.tensor") return x.isTensor();
    if (n == "tl.tensor_descriptor") return x.kind == SVal::Kind::TensorDesc;
    if (n == "tl.dtype") return x.kind == SVal::Kind::DType;
    S.fail(p.loc("classinfo"), "isinstance() supports int, float, bool, str, tuple, list, tl.constexpr, tl.tensor, "
                             "tl.tensor_descriptor, tl.dtype and torch.Tensor, got " + cls.describe());
  };
  return SVal::boolean(is(p.get("classinfo").val));
}

SVal hasattr(Specializer &S, const BuiltinCall &c) {
  // Python's hasattr on what the compiler knows: whether `obj.name` evaluates (a module's
  // function, a dtype's property, ...), e.g. FLA's hasattr(triton.language, 'gather').
  const Arg &name = c.p.get("name");
  if (name.val.kind != SVal::Kind::Str)
    S.fail(name.loc, "hasattr() name must be a string, got " + name.val.describe());
  std::string why;
  return SVal::boolean(S.quietAttribute(c.p.get("obj").val, name.val.s, c.loc, why).has_value());
}

SVal coreArith(Specializer &S, const BuiltinCall &c) {
  // triton.language.core's add / sub / mul(x, y, sanitize_overflow=True): what + - * call. With
  // sanitize_overflow=False a debug build does not check the operation for overflow.
  const Binder &p = c.p;
  ast::BinaryOp op = c.name == "tl.add" ? ast::BinaryOp::Add : c.name == "tl.sub" ? ast::BinaryOp::Sub : ast::BinaryOp::Mul;
  bool sanitize = !p.has("sanitize_overflow") || S.truthy(p.get("sanitize_overflow").val, p.loc("sanitize_overflow"));
  llvm::SaveAndRestore<bool> check(S.debug, S.debug && sanitize);
  return S.binary(op, p.get("x").val, p.get("y").val, c.loc, p.loc("x"), p.loc("y"));
}

SVal cdiv(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  SVal x = p.get("x").val, d = p.get("div").val;
  if (x.isNumber() && d.isNumber()) {
    if (d.i == 0)
      S.fail(p.loc("div"), "cdiv() division by zero");
    return SVal::integer(floorDiv(x.i + d.i - 1, d.i));
  }
  SVal sum = S.binary(ast::BinaryOp::Add, x, d, loc, p.loc("x"), p.loc("div"));
  SVal m1 = S.binary(ast::BinaryOp::Sub, sum, SVal::integer(1), loc, loc, loc);
  return S.binary(ast::BinaryOp::FloorDiv, m1, d, loc, loc, p.loc("div"));
}

SVal nextPowerOf2(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  int64_t n = p.constInt("n", 0);
  int64_t r = 1;
  while (r < n)
    r <<= 1;
  return SVal::integer(r);
}

SVal constexprValue(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const SVal &v = p.get("value").val;
  if (!v.isConstexpr())
    S.fail(p.loc("value"), "tl.constexpr() of a runtime value");
  return v;
}

SVal pointerType(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  ir::ScalarType t = p.dtype("element_ty");
  if (t.isPointer())
    S.fail(p.loc("element_ty"), "pointers to pointers are not supported");
  return SVal::dtypeOf(ir::ScalarType::ptrTo(t.dtype));
}

SVal hint(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  return p.get("input").val; // hints are not used by this version's axis analysis
}

SVal programId(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  int64_t axis = p.constInt("axis", 0);
  if (axis < 0 || axis > 2)
    S.fail(p.loc("axis"), c.fname + "() axis must be 0, 1 or 2, got " + std::to_string(axis));
  ir::Op *op = S.b->create(name == "tl.program_id" ? ir::OpKind::ProgramId : ir::OpKind::NumPrograms, loc, {},
                         {ir::Type::scalar(DType::I32)});
  op->setAxis(static_cast<int>(axis));
  return SVal::tensor(op->result());
}

SVal cudaGdc(Specializer &S, const BuiltinCall &c) {
  CallArgs &args = c.args;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  // tl.extra.cuda.gdc_wait() / gdc_launch_dependents(): programmatic dependent launch.
  if (!args.pos.empty() || !args.kw.empty())
    S.fail(args.pos.empty() ? args.kw.front().second.loc : args.pos[0].loc,
         c.fname + "() takes no arguments");
  ir::Op *op = S.b->create(ir::OpKind::GridDepControl, loc, {}, {});
  op->setLaunchDependents(name == "cuda.gdc_launch_dependents");
  return SVal::none();
}

SVal cudaWarps(Specializer &S, const BuiltinCall &c) {
  CallArgs &args = c.args;
  const std::string &name = c.name;
  // tl.extra.cuda.num_warps() / num_threads(): the launch's warps (threads) per program, a
  // compile-time integer.
  if (!args.pos.empty() || !args.kw.empty())
    S.fail(args.pos.empty() ? args.kw.front().second.loc : args.pos[0].loc,
         c.fname + "() takes no arguments");
  return SVal::integer(name == "cuda.num_warps" ? S.opts.numWarps : 32 * S.opts.numWarps);
}

SVal swizzle2d(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  using ast::BinaryOp;
  auto bin = [&](BinaryOp o, const SVal &x, const SVal &y) { return S.binary(o, x, y, loc, loc, loc); };
  const SVal &i = p.get("i").val, &j = p.get("j").val, &sizeI = p.get("size_i").val,
             &sizeJ = p.get("size_j").val;
  SVal sizeG = p.get("size_g").val;
  // Row-major index of (i, j); the groups hold size_g rows of size_j columns each.
  SVal ij = bin(BinaryOp::Add, bin(BinaryOp::Mul, i, sizeJ), j);
  SVal sizeGJ = bin(BinaryOp::Mul, sizeG, sizeJ);
  SVal group = bin(BinaryOp::FloorDiv, ij, sizeGJ);
  SVal offI = bin(BinaryOp::Mul, group, sizeG);
  // The last group may have fewer rows.
  SVal rows = bin(BinaryOp::Sub, sizeI, offI);
  if (rows.isConstexpr() && sizeG.isConstexpr() && rows.isNumber() && sizeG.isNumber()) {
    CallArgs mn{loc, {{loc, rows}, {loc, sizeG}}, {}};
    sizeG = S.callBuiltin("min", mn);
  } else {
    CallArgs mn{loc, {{loc, rows}, {loc, sizeG}}, {}};
    sizeG = S.callBuiltin("tl.minimum", mn);
  }
  SVal inGroup = bin(BinaryOp::Mod, ij, sizeGJ);
  SVal newI = bin(BinaryOp::Add, offI, bin(BinaryOp::Mod, inGroup, sizeG));
  SVal newJ = bin(BinaryOp::FloorDiv, inGroup, sizeG);
  return SVal::tuple({newI, newJ});
}

/// `triton.jit(fn, **options)`: the Python function `fn` as a @jit function (the call form of
/// the decorator); `debug=` is kept for a kernel, the other options are accepted and ignored.
SVal jitCall(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  if (!p.has("fn"))
    S.fail(c.loc, "triton.jit() without a function (the decorator factory `triton.jit(debug=...)(fn)`) is not "
                  "supported; write `triton.jit(fn, debug=...)`");
  SVal f = p.get("fn").val;
  if (f.kind != SVal::Kind::PyFn && f.kind != SVal::Kind::JitFn)
    S.fail(p.loc("fn"), "triton.jit() takes a Python function, got " + f.describe());
  if (f.kind == SVal::Kind::PyFn && f.i)
    S.fail(p.loc("fn"), "triton.jit() of " + f.describe());
  SVal r;
  r.kind = SVal::Kind::JitFn;
  r.fn = f.fn;
  if (p.has("debug")) {
    const SVal &d = p.get("debug").val;
    if (d.kind != SVal::Kind::None) {
      if (!d.isConstexpr())
        S.fail(p.loc("debug"), "debug= must be a compile-time value");
      r.i = S.truthy(d, p.loc("debug")) ? 2 : 1;
    }
  }
  return r;
}

/// `triton.constexpr_function(fn)`: the call form of the decorator.
SVal constexprFunctionCall(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SVal f = p.get("fn").val;
  if (f.kind == SVal::Kind::Builtin) // a function of the language (core.get_int_dtype): as it is
    return f;
  if (f.kind != SVal::Kind::PyFn)
    S.fail(p.loc("fn"), "constexpr_function() takes a Python function, got " + f.describe());
  f.i = 1;
  return f;
}

/// Python's int.bit_length() on a compile-time integer.
SVal intBitLength(Specializer &S, const BuiltinCall &c) {
  uint64_t m = c.self->i < 0 ? 0 - uint64_t(c.self->i) : uint64_t(c.self->i);
  int64_t n = 0;
  for (; m; m >>= 1)
    ++n;
  return SVal::integer(n);
}

/// A compile-time dict's keys(), values(), items() (tuples, in insertion order) and
/// get(key, default=None) (keys compared as describe() does for subscripts).
SVal dictMethod(Specializer &, const BuiltinCall &c) {
  const SVal &d = *c.self;
  std::vector<SVal> out;
  if (c.fname == "get") {
    const SVal &key = c.p.get("key").val;
    for (size_t i = 0; i + 1 < d.elts.size(); i += 2)
      if (d.elts[i].describe() == key.describe())
        return d.elts[i + 1];
    return c.p.has("default") ? c.p.get("default").val : SVal::none();
  }
  for (size_t i = 0; i + 1 < d.elts.size(); i += 2)
    out.push_back(c.fname == "keys" ? d.elts[i]
                  : c.fname == "values" ? d.elts[i + 1]
                                        : SVal::tuple({d.elts[i], d.elts[i + 1]}));
  return SVal::tuple(out);
}

/// tuple(iterable) / list(iterable) of a compile-time iterable (both are tuples here).
SVal pySequence(Specializer &S, const BuiltinCall &c) {
  if (!c.p.has("iterable"))
    return SVal::tuple({});
  return SVal::tuple(S.iterate(c.p.get("iterable").val, c.p.loc("iterable")));
}

/// The NVIDIA backend's driver: active (the compiler targets it).
SVal driverIsActive(Specializer &, const BuiltinCall &) { return SVal::boolean(true); }

/// driver.get_current_target(): Triton's GPUTarget of the architecture compiled for (--arch):
/// backend "cuda", arch 80 or 90 (sm_90a), warp_size 32.
SVal driverTarget(Specializer &S, const BuiltinCall &) {
  int arch = S.opts.arch.rfind("sm_", 0) == 0 ? std::atoi(S.opts.arch.c_str() + 3) : 0;
  return SVal::record("GPUTarget",
                      {{"backend", SVal::str("cuda")}, {"arch", SVal::integer(arch)}, {"warp_size", SVal::integer(32)}});
}

/// Python's str methods that compile-time string building uses: upper, lower, startswith,
/// endswith, replace.
SVal strMethod(Specializer &S, const BuiltinCall &c) {
  const std::string &x = c.self->s;
  const std::string &n = c.fname;
  auto text = [&](const char *k) {
    const SVal &v = c.p.get(k).val;
    if (v.kind != SVal::Kind::Str)
      S.fail(c.p.loc(k), "str." + n + "() argument must be a str, got " + v.describe());
    return v.s;
  };
  if (n == "upper" || n == "lower") {
    std::string r = x;
    for (char &ch : r)
      ch = static_cast<char>(n == "upper" ? std::toupper(static_cast<unsigned char>(ch))
                                          : std::tolower(static_cast<unsigned char>(ch)));
    return SVal::str(r);
  }
  if (n == "startswith" || n == "endswith") {
    std::string a = text("prefix");
    bool r = a.size() <= x.size() && (n == "startswith" ? x.compare(0, a.size(), a) == 0
                                                        : x.compare(x.size() - a.size(), a.size(), a) == 0);
    return SVal::boolean(r);
  }
  std::string from = text("old"), to = text("new"), r;
  if (from.empty())
    S.fail(c.loc, "str.replace() of an empty string is not supported");
  for (size_t i = 0; i < x.size();) {
    if (x.compare(i, from.size(), from) == 0) {
      r += to;
      i += from.size();
    } else {
      r += x[i++];
    }
    if (r.size() > Specializer::kMaxStringBytes) // "a" * 2**20 with "a" replaced by itself 2**20 times
      S.fail(c.loc, "compile-time work limit: a string of more than 1 MiB");
  }
  return SVal::str(r);
}

/// range, tl.range and tl.static_range outside a `for` header (Specialize.cpp's execFor binds
/// them there).
SVal forIterable(Specializer &S, const BuiltinCall &c) {
  S.fail(c.loc, c.name + "() can only be used as the iterable of a 'for' loop");
}

/// dtype.is_fp8() and the other dtype predicates of Triton.
SVal dtypePredicate(Specializer &S, const BuiltinCall &c) {
  const ir::ScalarType &t = c.self->dtype;
  DType d = t.dtype;
  const std::string &n = c.fname;
  bool r = false;
  if (n == "is_fp8") r = ir::isFP8(d);
  else if (n == "is_fp8e4nv") r = d == DType::F8E4M3;
  else if (n == "is_fp8e5") r = d == DType::F8E5M2;
  else if (n == "is_fp16") r = d == DType::F16;
  else if (n == "is_bf16") r = d == DType::BF16;
  else if (n == "is_fp32") r = d == DType::F32;
  else if (n == "is_fp64") r = d == DType::F64;
  else if (n == "is_floating") r = ir::isFloat(d);
  else if (n == "is_standard_floating") r = ir::isFloat(d) && !ir::isFP8(d);
  else if (n == "is_int") r = ir::isInteger(d);
  else if (n == "is_int_signed") r = ir::isSigned(d);
  else if (n == "is_int_unsigned") r = ir::isUnsigned(d); // int1 counts as unsigned, as in Triton
  else if (n == "is_bool" || n == "is_int1") r = d == DType::I1;
  else if (n == "is_ptr") r = t.isPointer();
  else if (n.rfind("is_uint", 0) == 0) r = ir::isUnsigned(d) && d != DType::I1 && "is_uint" + std::to_string(ir::bitWidth(d)) == n;
  else if (n.rfind("is_int", 0) == 0) r = ir::isSigned(d) && "is_int" + std::to_string(ir::bitWidth(d)) == n;
  return SVal::boolean(r);
}

} // namespace

std::vector<BuiltinSpec> coreBuiltins() {
  const char *range = "arg1, arg2=None, step=None, /";
  return {
      // Python's builtins
      {"float", "x", toNumber},
      {"int", "x", toNumber},
      {"bool", "x", toNumber},
      {"min", "*args", pyMinMax},
      {"max", "*args", pyMinMax},
      {"len", "x", len},
      {"abs", "x", pyAbs},
      {"all", "iterable, /", pyAllAny},
      {"any", "iterable, /", pyAllAny},
      {"sum", "iterable, /, start=0", pySum},
      {"range", range, forIterable, kBindsOwnArguments},
      {"isinstance", "obj, classinfo", isinstance},
      {"hasattr", "obj, name, /", hasattr},
      {"tl.add", "x, y, sanitize_overflow=True", coreArith},
      {"tl.sub", "x, y, sanitize_overflow=True", coreArith},
      {"tl.mul", "x, y, sanitize_overflow=True", coreArith},
      {"tuple", "iterable=(), /", pySequence},
      {"list", "iterable=(), /", pySequence},
      // triton's helpers and decorators
      {"triton.cdiv", "x, div", cdiv},
      {"triton.next_power_of_2", "n", nextPowerOf2},
      {"triton.jit",
       "fn=None, *, version=None, repr=None, launch_metadata=None, do_not_specialize=None, "
       "do_not_specialize_on_alignment=None, debug=None, noinline=None",
       jitCall},
      {"triton.constexpr_function", "fn", constexprFunctionCall},
      {"tl.constexpr_function", "fn", constexprFunctionCall},
      {"triton.autotune", "", nullptr},
      {"triton.heuristics", "", nullptr},
      {"triton.Config", "", nullptr},
      // compile-time values, types and hints
      {"tl.cdiv", "x, div", cdiv, kTensorMethod},
      {"tl.constexpr", "value", constexprValue},
      {"tl.pointer_type", "element_ty, address_space=1, const=False", pointerType},
      {"tl.multiple_of", "input, values", hint},
      {"tl.max_contiguous", "input, values", hint},
      {"tl.max_constancy", "input, values", hint},
      {"tl.tensor", "", nullptr},
      {"tl.tensor_descriptor", "", nullptr},
      // loops (bound by the `for` statement)
      {"tl.range",
       "arg1, arg2=None, step=None, /, num_stages=None, loop_unroll_factor=None, warp_specialize=False, "
       "disallow_acc_multi_buffer=False, flatten=False, disable_licm=False",
       forIterable, kBindsOwnArguments},
      {"tl.static_range", range, forIterable, kBindsOwnArguments},
      // FlagTree TLE-Struct's loop (tle.md §3.3): tl.range with these arguments, pipelined alike.
      {"tle.gpu.pipeline", "start, end=None, step=None, num_stages=None, loop_unroll_factor=None", forIterable,
       kBindsOwnArguments},
      // program geometry
      {"tl.program_id", "axis=0", programId},
      {"tl.num_programs", "axis=0", programId},
      {"tl.swizzle2d", "i, j, size_i, size_j, size_g", swizzle2d},
      {"cuda.gdc_wait", "", cudaGdc, kBindsOwnArguments},
      {"cuda.gdc_launch_dependents", "", cudaGdc, kBindsOwnArguments},
      {"cuda.num_warps", "", cudaWarps, kBindsOwnArguments},
      {"cuda.num_threads", "", cudaWarps, kBindsOwnArguments},
      // Python's methods of compile-time values
      {"int.bit_length", "", intBitLength},
      {"dict.keys", "", dictMethod},
      {"dict.values", "", dictMethod},
      {"dict.items", "", dictMethod},
      {"dict.get", "key, default=None, /", dictMethod},
      {"DriverBase.is_active", "", driverIsActive},
      {"DriverBase.get_current_target", "", driverTarget},
      {"str.upper", "", strMethod},
      {"str.lower", "", strMethod},
      {"str.startswith", "prefix, /", strMethod},
      {"str.endswith", "prefix, /", strMethod},
      {"str.replace", "old, new, /", strMethod},
      // dtype predicates: dtype.is_fp8() ...
      {"dtype.is_fp8", "", dtypePredicate},
      {"dtype.is_fp8e4nv", "", dtypePredicate},
      {"dtype.is_fp8e5", "", dtypePredicate},
      {"dtype.is_fp16", "", dtypePredicate},
      {"dtype.is_bf16", "", dtypePredicate},
      {"dtype.is_fp32", "", dtypePredicate},
      {"dtype.is_fp64", "", dtypePredicate},
      {"dtype.is_floating", "", dtypePredicate},
      {"dtype.is_standard_floating", "", dtypePredicate},
      {"dtype.is_int", "", dtypePredicate},
      {"dtype.is_int1", "", dtypePredicate},
      {"dtype.is_int8", "", dtypePredicate},
      {"dtype.is_int16", "", dtypePredicate},
      {"dtype.is_int32", "", dtypePredicate},
      {"dtype.is_int64", "", dtypePredicate},
      {"dtype.is_uint8", "", dtypePredicate},
      {"dtype.is_uint16", "", dtypePredicate},
      {"dtype.is_uint32", "", dtypePredicate},
      {"dtype.is_uint64", "", dtypePredicate},
      {"dtype.is_int_signed", "", dtypePredicate},
      {"dtype.is_int_unsigned", "", dtypePredicate},
      {"dtype.is_bool", "", dtypePredicate},
      {"dtype.is_ptr", "", dtypePredicate},
  };
}

} // namespace tle::sema
