// Elementwise math builtins: tl.where, exp/log/sqrt and friends, libdevice functions
// (`tl.sin`, `tl.math.tanh`, `libdevice.X` of triton.language.extra), fma, sigmoid, division
// rounding, maximum/minimum/clamp with NaN propagation, umulhi, casts (tl.cast, x.to) and
// tl.inline_asm_elementwise.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace tle::sema {

using ir::DType;

namespace {

/// The op of tl.exp, tl.exp2, tl.log, tl.log2, tl.sqrt, tl.sqrt_rn and tl.rsqrt.
ir::OpKind mathOp(const std::string &name) {
  static const std::map<std::string, ir::OpKind> math = {
      {"tl.exp", ir::OpKind::Exp},   {"tl.exp2", ir::OpKind::Exp2}, {"tl.log", ir::OpKind::Log},
      {"tl.log2", ir::OpKind::Log2}, {"tl.sqrt", ir::OpKind::Sqrt}, {"tl.sqrt_rn", ir::OpKind::Sqrt},
      {"tl.rsqrt", ir::OpKind::Rsqrt}};
  return math.at(name);
}

/// A libdevice function on `a`'s positional arguments (numbers taken as fp32, converted to the
/// first argument's dtype and broadcast): fp32 calls __nv_Xf, fp64 __nv_X (the fast_Xf
/// approximations are fp32 only, __nv_fast_Xf); other dtypes are rejected, as Triton does. The predicates isnan, isinf and signbit give booleans.
SVal libdeviceCall(Specializer &S, const std::string &fn, CallArgs &a, SourceLoc loc) {
  int arity = libdeviceArities().at(fn);
  if (int(a.pos.size()) != arity || !a.kw.empty())
    S.fail(loc, fn + "() takes " + std::to_string(arity) + " positional argument" + (arity > 1 ? "s" : ""));
  std::vector<ir::Value *> xs;
  for (auto &x : a.pos)
    xs.push_back(x.val.isNumber() ? S.toTensorOfType(x.val, DType::F32, x.loc) : S.toTensor(x.val, x.loc));
  DType t = xs[0]->type.dtype();
  for (auto *&x : xs) {
    if (x->type.dtype() != t)
      x = S.castTo(x, ir::ScalarType{t}, loc);
  }
  for (size_t i = 1; i < xs.size(); ++i)
    S.broadcastPair(xs[0], xs[i], loc);
  for (size_t i = 1; i < xs.size(); ++i)
    S.broadcastPair(xs[0], xs[i], loc);
  const bool fast = fn.rfind("fast_", 0) == 0; // __nv_fast_expf and the others: fp32 only
  if (t != DType::F32 && (fast || t != DType::F64))
    S.fail(a.pos[0].loc, fn + "() expects " + (fast ? "fp32" : "fp32 or fp64") + ", got " + ir::name(t) +
                             " (cast with .to(tl.float32) first)");
  bool predicate = fn == "isnan" || fn == "isinf" || fn == "signbit";
  std::string sym = "__nv_" + fn + (t == DType::F32 && !fast ? "f" : "");
  if (fn == "fast_dividef") // libdevice's name for CUDA's __fdividef
    sym = "__nv_fast_fdividef";
  if (predicate) // __nv_isnanf etc. return int
    sym = "__nv_" + fn + (t == DType::F32 ? "f" : "d");
  ir::Type rt = predicate ? xs[0]->type.withElem(ir::ScalarType{DType::I32}) : xs[0]->type;
  ir::Op *op = S.b->create(ir::OpKind::ExternCall, loc, xs, {rt});
  op->setCallee(sym);
  ir::Value *r = op->result();
  if (predicate) {
    ir::Value *zero = S.toTensorOfType(SVal::integer(0), DType::I32, loc);
    ir::Value *rr = r;
    S.broadcastPair(rr, zero, loc);
    r = S.b->cmp(loc, ir::CmpPred::Ne, rr, zero);
  }
  return SVal::tensor(r);
}

/// libdevice.X, and the tl functions Triton maps to libdevice (tl.sin, tl.cos, ...).
SVal libdevice(Specializer &S, const BuiltinCall &c) { return libdeviceCall(S, c.fname, c.args, c.loc); }

/// libdevice's bit functions of 32- and 64-bit integers: popc (set bits), clz (leading zeros),
/// ffs (1 + the index of the lowest set bit, 0 for 0) give i32, brev (bits reversed) x's type;
/// __nv_X on 32 bits, __nv_Xll on 64 (CUDA Math API, "Integer Intrinsics").
SVal libdeviceBits(Specializer &S, const BuiltinCall &c) {
  const std::string fn = c.name.substr(std::string("libdevice.").size());
  ir::Value *x = c.p.tensor("x");
  const DType t = x->type.dtype();
  if (!ir::isInteger(t) || t == DType::I1 || (ir::bitWidth(t) != 32 && ir::bitWidth(t) != 64))
    S.fail(c.p.loc("x"), c.name + "() expects a 32- or 64-bit integer, got " + ir::name(t));
  const bool wide = ir::bitWidth(t) == 64;
  ir::Type rt = fn == "brev" ? x->type : x->type.withElem(ir::ScalarType{DType::I32});
  ir::Op *op = S.b->create(ir::OpKind::ExternCall, c.loc, {x}, {rt});
  op->setCallee("__nv_" + fn + (wide ? "ll" : ""));
  return SVal::tensor(op->result());
}

/// One typed overload of a libdevice function: its operand dtypes, symbol and result dtype.
struct TypedOverload {
  std::vector<DType> args;
  std::string symbol;
  DType result;
};

/// libdevice's functions whose operand and result types differ or are fixed (Triton's
/// triton.language.extra.cuda.libdevice): bit reinterpretations, conversions with a rounding
/// mode (rn, rz, rd, ru), saturatef and the integer intrinsics mulhi, mul24, hadd, rhadd,
/// byte_perm (CUDA Math API, "Type Casting Intrinsics" and "Integer Intrinsics").
const std::map<std::string, std::vector<TypedOverload>> &typedLibdevice() {
  static const std::map<std::string, std::vector<TypedOverload>> table = [] {
    using D = DType;
    std::map<std::string, std::vector<TypedOverload>> t;
    auto one = [&](const std::string &n, D a, D r) { t[n].push_back({{a}, "__nv_" + n, r}); };
    one("float_as_int", D::F32, D::I32), one("int_as_float", D::I32, D::F32);
    one("float_as_uint", D::F32, D::U32), one("uint_as_float", D::U32, D::F32);
    one("double_as_longlong", D::F64, D::I64), one("longlong_as_double", D::I64, D::F64);
    one("double2hiint", D::F64, D::I32), one("double2loint", D::F64, D::I32);
    one("saturatef", D::F32, D::F32);
    t["hiloint2double"].push_back({{D::I32, D::I32}, "__nv_hiloint2double", D::F64});
    const std::pair<const char *, D> kinds[] = {{"float", D::F32}, {"double", D::F64}, {"int", D::I32},
                                                {"uint", D::U32},  {"ll", D::I64},     {"ull", D::U64}};
    for (const char *r : {"rn", "rz", "rd", "ru"})
      for (auto [from, a] : kinds)
        for (auto [to, b] : kinds) {
          bool fa = a == D::F32 || a == D::F64, fb = b == D::F32 || b == D::F64;
          if (fa == fb && !(a == D::F64 && b == D::F32)) // float <-> integer, and double2float
            continue;
          if (!fa && b == D::F64 && (a == D::I32 || a == D::U32) && std::string(r) != "rn")
            continue; // a 32-bit integer is exact in fp64: int2double_rn only
          one(std::string(from) + "2" + to + "_" + r, a, b);
        }
    for (auto [n, s, u] : {std::tuple{"mulhi", "__nv_mulhi", "__nv_umulhi"}, {"mul24", "__nv_mul24", "__nv_umul24"},
                           {"hadd", "__nv_hadd", "__nv_uhadd"}, {"rhadd", "__nv_rhadd", "__nv_urhadd"}}) {
      t[n].push_back({{D::I32, D::I32}, s, D::I32});
      t[n].push_back({{D::U32, D::U32}, u, D::U32});
    }
    t["mulhi"].push_back({{D::I64, D::I64}, "__nv_mul64hi", D::I64});
    t["mulhi"].push_back({{D::U64, D::U64}, "__nv_umul64hi", D::U64});
    t["byte_perm"].push_back({{D::I32, D::I32, D::I32}, "__nv_byte_perm", D::I32});
    return t;
  }();
  return table;
}

/// A typedLibdevice() function: the overload whose operand dtypes are the tiles' (a Python
/// number takes the overload's dtype: an int any, a float a floating-point one), operands
/// broadcast; no match is an error listing the overloads, as Triton's dispatch rejects it.
SVal typedLibdeviceCall(Specializer &S, const BuiltinCall &c) {
  const std::string fn = c.name.substr(std::string("libdevice.").size());
  const std::vector<TypedOverload> &overloads = typedLibdevice().at(fn);
  CallArgs &a = c.args;
  size_t arity = overloads[0].args.size();
  if (a.pos.size() != arity || !a.kw.empty())
    S.fail(c.loc, fn + "() takes " + std::to_string(arity) + " positional argument" + (arity > 1 ? "s" : ""));
  auto fits = [&](const TypedOverload &o) {
    for (size_t i = 0; i < arity; ++i) {
      const SVal &v = a.pos[i].val;
      bool ok = v.isTensor() ? v.v->type.dtype() == o.args[i]
                : v.kind == SVal::Kind::Float ? ir::isFloat(o.args[i])
                                              : v.isNumber();
      if (!ok)
        return false;
    }
    return true;
  };
  auto it = std::find_if(overloads.begin(), overloads.end(), fits);
  if (it == overloads.end()) {
    std::string want;
    for (const TypedOverload &o : overloads) {
      std::string sig;
      for (DType d : o.args)
        sig += (sig.empty() ? "" : ", ") + std::string(ir::name(d));
      want += (want.empty() ? "(" : " or (") + sig + ")";
    }
    S.fail(a.pos[0].loc, "libdevice." + fn + "() takes " + want + ", got " + a.pos[0].val.describe() +
                             (arity > 1 ? ", ..." : ""));
  }
  std::vector<ir::Value *> xs;
  for (size_t i = 0; i < arity; ++i)
    xs.push_back(S.toTensorOfType(a.pos[i].val, it->args[i], a.pos[i].loc));
  for (int round = 0; round < 2; ++round)
    for (size_t i = 1; i < xs.size(); ++i)
      S.broadcastPair(xs[0], xs[i], c.loc);
  ir::Op *op = S.b->create(ir::OpKind::ExternCall, c.loc, xs, {xs[0]->type.withElem(ir::ScalarType{it->result})});
  op->setCallee(it->symbol);
  return SVal::tensor(op->result());
}

SVal where(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  ir::Value *cond = p.tensor("condition");
  if (cond->type.dtype() != DType::I1) {
    ir::Value *zero = S.toTensorOfType(SVal::integer(0), cond->type.dtype(), loc);
    ir::Value *cc = cond;
    S.broadcastPair(cc, zero, loc);
    cond = S.b->cmp(loc, ir::CmpPred::Ne, cc, zero);
  }
  // x and y are promoted like a binary operation (computation_type_impl), via a dummy add
  // type computation: reuse binary() rules by computing the type of x + y.
  const Arg &xa = p.get("x"), &ya = p.get("y");
  DType tx = xa.val.isTensor() ? xa.val.v->type.dtype() : S.literalType(xa.val, xa.loc);
  DType ty = ya.val.isTensor() ? ya.val.v->type.dtype() : S.literalType(ya.val, ya.loc);
  DType t;
  if (xa.val.isTensor() && xa.val.v->type.elem.isPointer()) {
    t = DType::Ptr;
  } else if (xa.val.isTensor() != ya.val.isTensor()) {
    DType tensorT = xa.val.isTensor() ? tx : ty, scalarT = xa.val.isTensor() ? ty : tx;
    auto rank = [](DType d) { return d == DType::I1 ? 0 : ir::isInteger(d) ? 1 : 2; }; // bool < integer < float
    t = rank(scalarT) <= rank(tensorT) ? tensorT : scalarT;
    const Arg &lit = xa.val.isTensor() ? ya : xa;
    S.checkScalarOperand(lit.val, t, lit.loc);
  } else if (ir::isFloat(tx) || ir::isFloat(ty)) {
    // fp64 > fp32 > fp16 (with bf16 or an integer too) > bf16 (with an integer: fp32).
    t = (tx == DType::F64 || ty == DType::F64)   ? DType::F64
        : (tx == DType::F32 || ty == DType::F32) ? DType::F32
        : (tx == DType::F16 || ty == DType::F16) ? DType::F16
        : tx == ty                               ? tx
        : (ir::isFP8(tx) && ir::isFP8(ty))       ? DType::F16 // two fp8 types
                                                 : DType::F32;
  } else {
    t = integerPromote(tx, ty);
  }
  ir::Value *x = t == DType::Ptr ? xa.val.v : S.toTensorOfType(xa.val, t, xa.loc);
  ir::Value *y = t == DType::Ptr ? ya.val.v : S.toTensorOfType(ya.val, t, ya.loc);
  if (t == DType::Ptr && (!ya.val.isTensor() || ya.val.v->type.elem != x->type.elem))
    S.fail(ya.loc, "where() operands must both be pointers of the same type");
  S.broadcastPair(x, y, loc);
  S.broadcastPair(cond, x, loc);
  S.broadcastPair(cond, y, loc);
  return SVal::tensor(S.b->select(loc, cond, x, y));
}

SVal fma(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  ir::Value *x = p.tensor("x"), *y = p.tensor("y"), *z = p.tensor("z");
  DType t = x->type.dtype();
  if (!ir::isFloat(t))
    S.fail(p.loc("x"), "fma() expects floating-point operands, got " + x->type.str());
  y = S.castTo(y, ir::ScalarType{t}, loc);
  z = S.castTo(z, ir::ScalarType{t}, loc);
  S.broadcastPair(x, y, loc);
  S.broadcastPair(x, z, loc);
  S.broadcastPair(y, z, loc);
  if (ir::isFP8(t)) { // computed in fp32, rounded once to fp8
    ir::ScalarType f32{DType::F32};
    ir::Value *r = S.b->create(ir::OpKind::Fma, loc, {S.castTo(x, f32, loc), S.castTo(y, f32, loc), S.castTo(z, f32, loc)},
                             {x->type.withElem(f32)})->result();
    return SVal::tensor(S.castTo(r, ir::ScalarType{t}, loc));
  }
  return SVal::tensor(S.b->create(ir::OpKind::Fma, loc, {x, y, z}, {x->type})->result());
}

SVal sigmoid(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  ir::Value *x = p.tensor("x");
  if (x->type.dtype() != DType::F32 && x->type.dtype() != DType::F64)
    S.fail(p.loc("x"), "sigmoid() expects fp32 or fp64, got " + x->type.str());
  SVal e;
  if (x->type.dtype() == DType::F64) { // fp64 exp is libdevice's (as tl.exp on fp64)
    CallArgs negX{loc, {{loc, S.unary(ast::UnaryOp::Neg, SVal::tensor(x), loc)}}, {}};
    e = libdeviceCall(S, "exp", negX, loc);
  } else {
    e = SVal::tensor(S.b->unary(ir::OpKind::Exp, loc, S.unary(ast::UnaryOp::Neg, SVal::tensor(x), loc).v));
  }
  SVal den = S.binary(ast::BinaryOp::Add, SVal::real(1.0), e, loc, loc, loc);
  return S.binary(ast::BinaryOp::Div, SVal::real(1.0), den, loc, loc, loc);
}

SVal unaryMath(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  const Arg &xa = p.get("x");
  ir::Value *x = xa.val.isNumber() ? S.toTensorOfType(xa.val, DType::F32, xa.loc) : p.tensor("x");
  DType t = x->type.dtype();
  if (t != DType::F32 && t != DType::F64)
    S.fail(xa.loc, name + "() expects fp32 or fp64, got " + ir::name(t) + " (cast with .to(tl.float32) first)");
  if (t == DType::F64 && mathOp(name) != ir::OpKind::Sqrt) {
    CallArgs one{loc, {{xa.loc, SVal::tensor(x)}}, {}};
    return libdeviceCall(S, c.fname, one, loc);
  }
  return SVal::tensor(S.b->unary(mathOp(name), loc, x));
}

SVal tlAbs(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  return SVal::tensor(S.b->unary(ir::OpKind::Abs, loc, p.tensor("x")));
}

SVal fdiv(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  SVal q = S.binary(ast::BinaryOp::Div, p.get("x").val, p.get("y").val, loc, p.loc("x"), p.loc("y"));
  // div_rn, and fdiv with ieee_rounding=True, round correctly (div.rn) instead of div.full.
  bool ieee = name == "tl.div_rn" || name == "libdevice.div_rn" || (p.has("ieee_rounding") && S.truthy(p.get("ieee_rounding").val, p.loc("ieee_rounding")));
  if (ieee && q.isTensor() && q.v->def && q.v->def->kind == ir::OpKind::FDiv)
    q.v->def->setDivRn(true);
  return q;
}

SVal maxMin(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  // Promote like addition, then take max/min. Two Python numbers become tensors first (as in
  // Triton; folding them would leave no op to turn into max/min).
  SVal xv = p.get("x").val;
  if (!xv.isTensor() && !p.get("y").val.isTensor())
    xv = SVal::tensor(p.tensor("x"));
  SVal sum = S.binary(ast::BinaryOp::Add, xv, p.get("y").val, loc, p.loc("x"), p.loc("y"));
  ir::Op *add = sum.v->def;
  ir::Value *x = add->operands[0], *y = add->operands[1];
  add->kind = name == "tl.maximum" ? ir::OpKind::Max : ir::OpKind::Min;
  // propagate_nan=tl.PropagateNan.ALL: NaN where either operand is NaN (Triton's
  // maximumf/minimumf); NONE (the default) ignores NaNs.
  if (p.has("propagate_nan") && p.constInt("propagate_nan", 0) != 0)
    return SVal::tensor(S.propagateNan(add->result(), {x, y}, loc));
  return sum;
}

SVal castBuiltin(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  ir::Value *x = p.tensor("input");
  ir::ScalarType t = p.dtype("dtype");
  // Triton's bitcast of or to a pointer is a cast (tl.semantic.bitcast).
  if (p.has("bitcast") && p.get("bitcast").val.i && !t.isPointer() && !x->type.elem.isPointer()) {
    if (ir::bitWidth(t.dtype) != ir::bitWidth(x->type.dtype()))
      S.fail(p.loc("dtype"), "bitcast between types of different widths");
    return SVal::tensor(S.b->create(ir::OpKind::Bitcast, loc, {x}, {x->type.withElem(t)})->result());
  }
  return SVal::tensor(S.castWithRounding(x, t, p.has("fp_downcast_rounding") ? &p.get("fp_downcast_rounding") : nullptr, loc));
}

SVal clamp(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  // Triton converts all three to tensors (Python numbers take their literal types), promotes
  // bf16 to fp32, and then promotes the three like tensors of equal standing.
  std::vector<ir::Value *> v;
  DType t = DType::Invalid;
  for (const char *k : {"x", "min", "max"}) {
    ir::Value *e = p.tensor(k);
    if (e->type.elem.isPointer())
      S.fail(p.loc(k), std::string("clamp() argument '") + k + "' must be a number, got " + e->type.str());
    if (e->type.dtype() == DType::BF16)
      e = S.castTo(e, ir::ScalarType{DType::F32}, loc);
    DType d = e->type.dtype();
    if (t == DType::Invalid)
      t = d;
    else if (ir::isFloat(t) || ir::isFloat(d))
      t = (t == DType::F64 || d == DType::F64)   ? DType::F64
          : (t == DType::F32 || d == DType::F32) ? DType::F32
                                                 : DType::F16;
    else
      t = integerPromote(t, d);
    v.push_back(e);
  }
  if (!ir::isFloat(t))
    S.fail(p.loc("x"), std::string("clamp() supports floating-point values only, got ") + ir::name(t) +
                         " (cast with .to(tl.float32) first)");
  int64_t nan = p.has("propagate_nan") ? p.constInt("propagate_nan", 0) : 0;
  for (auto *&e : v)
    e = S.castTo(e, ir::ScalarType{t}, loc);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (i != j)
        S.broadcastPair(v[static_cast<size_t>(i)], v[static_cast<size_t>(j)], loc);
  ir::Value *r = S.b->binary(ir::OpKind::Min, loc, S.b->binary(ir::OpKind::Max, loc, v[0], v[1]), v[2]);
  if (nan != 0)
    r = S.propagateNan(r, v, loc);
  return SVal::tensor(r);
}

SVal umulhi(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  const Arg &xa = p.get("x"), &ya = p.get("y");
  SVal xv = xa.val;
  if (!xv.isTensor() && !ya.val.isTensor()) // two Python numbers: Triton makes tensors of both
    xv = SVal::tensor(p.tensor("x"));
  if (!xv.isTensor() && !xv.isNumber())
    S.fail(xa.loc, "umulhi() argument 'x' must be a tensor or a number, got " + xv.describe());
  if (!ya.val.isTensor() && !ya.val.isNumber())
    S.fail(ya.loc, "umulhi() argument 'y' must be a tensor or a number, got " + ya.val.describe());
  // Promoted as for `x * y`.
  SVal prod = S.binary(ast::BinaryOp::Mul, xv, ya.val, loc, xa.loc, ya.loc);
  ir::Op *mul = prod.v->def;
  DType t = prod.v->type.dtype();
  if (!ir::isInteger(t) || t == DType::I1 || (ir::bitWidth(t) != 32 && ir::bitWidth(t) != 64))
    S.fail(loc, std::string("umulhi() expects int32, uint32, int64 or uint64 operands, got ") + ir::name(t));
  if (!mul || mul->kind != ir::OpKind::Mul)
    S.fail(loc, "umulhi() operands could not be combined"); // not reached: tensors give a Mul
  mul->kind = ir::OpKind::UMulHi;
  return prod;
}

SVal inlineAsm(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  // Triton 3.6: inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack): the PTX
  // `asm` per `pack` elements of the broadcast `args`; `dtype` a dtype or a tuple of dtypes (a
  // tuple of results).
  for (const char *k : {"asm", "constraints"})
    if (p.get(k).val.kind != SVal::Kind::Str)
      S.fail(p.loc(k), std::string("inline_asm_elementwise() argument '") + k + "' must be a string, got " +
                         p.get(k).val.describe());
  const SVal &argv = p.get("args").val;
  std::vector<SVal> argVals = argv.kind == SVal::Kind::Tuple ? argv.elts : std::vector<SVal>{argv};
  std::vector<ir::Value *> xs;
  for (const SVal &a : argVals) {
    if (!a.isTensor() && !a.isNumber())
      S.fail(p.loc("args"), "inline_asm_elementwise() args must be tensors or numbers, got " + a.describe());
    ir::Value *v = S.toTensor(a, p.loc("args"));
    if (v->type.elem.isPointer())
      S.fail(p.loc("args"), "inline_asm_elementwise() args must be numbers, got " + v->type.str());
    xs.push_back(v);
  }
  for (int round = 0; round < 2; ++round)
    for (size_t i = 1; i < xs.size(); ++i)
      S.broadcastPair(xs[0], xs[i], loc);
  const SVal &dt = p.get("dtype").val;
  std::vector<SVal> dts = dt.kind == SVal::Kind::Tuple ? dt.elts : std::vector<SVal>{dt};
  std::vector<int64_t> shape = xs.empty() ? std::vector<int64_t>{} : xs[0]->type.shape;
  std::vector<ir::Type> outs, ins;
  for (const SVal &d : dts) {
    if (d.kind != SVal::Kind::DType || d.dtype.isPointer())
      S.fail(p.loc("dtype"), "inline_asm_elementwise() dtype must be a dtype or a tuple of dtypes, got " + d.describe());
    outs.push_back(ir::Type(d.dtype, shape));
  }
  if (outs.empty())
    S.fail(p.loc("dtype"), "inline_asm_elementwise() needs at least one result dtype");
  for (ir::Value *v : xs)
    ins.push_back(v->type);
  int64_t pack = p.constInt("pack", 1);
  if (std::string why = ir::inlineAsmConstraintError(p.get("constraints").val.s, outs, ins, pack); !why.empty())
    S.fail(p.loc("constraints"), "inline_asm_elementwise(): " + why);
  if (std::string why = ir::inlineAsmOperandError(p.get("asm").val.s, ir::inlineAsmRegisterCount(outs, ins, pack)); !why.empty())
    S.fail(p.loc("asm"), "inline_asm_elementwise(): " + why);
  ir::Op *op = S.b->create(ir::OpKind::InlineAsm, loc, xs, outs);
  op->setAsmText(p.get("asm").val.s);
  op->setAsmConstraints(p.get("constraints").val.s);
  op->setAsmPack(pack);
  op->setAsmPure(S.truthy(p.get("is_pure").val, p.loc("is_pure")));
  if (dt.kind != SVal::Kind::Tuple)
    return SVal::tensor(op->result());
  std::vector<SVal> rs;
  for (auto &r : op->results)
    rs.push_back(SVal::tensor(r.get()));
  return SVal::tuple(rs);
}

/// x.to(dtype, fp_downcast_rounding=None, bitcast=False).
/// x.logical_and(y) / x.logical_or(y) (Triton's tensor methods): both as booleans (!= 0),
/// broadcast, combined with & or |; an i1 tile.
SVal tensorLogical(Specializer &S, const BuiltinCall &c) {
  ir::ScalarType i1{ir::DType::I1};
  ir::Value *a = S.castTo(c.self->v, i1, c.loc);
  ir::Value *o = S.castTo(S.toTensor(c.p.get("other").val, c.p.loc("other")), i1, c.p.loc("other"));
  S.broadcastPair(a, o, c.loc);
  bool isAnd = c.name == "tensor.logical_and";
  return SVal::tensor(S.b->binary(isAnd ? ir::OpKind::And : ir::OpKind::Or, c.loc, a, o));
}

SVal tensorTo(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const SVal &self = *c.self;
  ir::ScalarType t = p.dtype("dtype");
  // Triton's bitcast of or to a pointer is a cast (tl.semantic.bitcast).
  if (p.has("bitcast") && p.get("bitcast").val.i && !t.isPointer() && !self.v->type.elem.isPointer()) {
    if (ir::bitWidth(t.dtype) != ir::bitWidth(self.v->type.dtype()))
      S.fail(p.loc("dtype"), "bitcast between types of different widths: " + self.v->type.elem.str() + " and " + t.str());
    return SVal::tensor(S.b->create(ir::OpKind::Bitcast, c.loc, {self.v}, {self.v->type.withElem(t)})->result());
  }
  return SVal::tensor(S.castWithRounding(self.v, t, p.has("fp_downcast_rounding") ? &p.get("fp_downcast_rounding") : nullptr, c.loc));
}

} // namespace

std::vector<BuiltinSpec> mathBuiltins() {
  std::vector<BuiltinSpec> table = {
      {"tl.where", "condition, x, y", where},
      {"tl.exp", "x", unaryMath, kTensorMethod},
      {"tl.exp2", "x", unaryMath, kTensorMethod},
      {"tl.log", "x", unaryMath, kTensorMethod},
      {"tl.log2", "x", unaryMath, kTensorMethod},
      {"tl.sqrt", "x", unaryMath, kTensorMethod},
      {"tl.sqrt_rn", "x", unaryMath, kTensorMethod},
      {"tl.rsqrt", "x", unaryMath, kTensorMethod},
      {"tl.abs", "x", tlAbs, kTensorMethod},
      {"tl.sin", "x", libdevice, kTensorMethod | kBindsOwnArguments},
      {"tl.cos", "x", libdevice, kTensorMethod | kBindsOwnArguments},
      {"tl.floor", "x", libdevice, kTensorMethod | kBindsOwnArguments},
      {"tl.ceil", "x", libdevice, kTensorMethod | kBindsOwnArguments},
      {"tl.erf", "x", libdevice, kTensorMethod | kBindsOwnArguments},
      {"tl.tanh", "x", libdevice, kBindsOwnArguments},
      {"tl.log1p", "x", libdevice, kBindsOwnArguments},
      {"tl.pow", "x, y", libdevice, kBindsOwnArguments},
      {"tl.trunc", "x", libdevice, kBindsOwnArguments},
      {"tl.atan2", "y, x", libdevice, kBindsOwnArguments},
      {"tl.fma", "x, y, z", fma, kTensorMethod},
      {"tl.sigmoid", "x", sigmoid, kTensorMethod},
      {"tl.fdiv", "x, y, ieee_rounding=False", fdiv, kTensorMethod},
      {"tl.div_rn", "x, y, ieee_rounding=True", fdiv, kTensorMethod},
      // libdevice's correctly rounded division and fused multiply-add: tl.div_rn's and tl.fma's ops.
      {"libdevice.div_rn", "x, y", fdiv},
      {"libdevice.fma", "x, y, z", fma},
      {"libdevice.popc", "x", libdeviceBits},
      {"libdevice.clz", "x", libdeviceBits},
      {"libdevice.ffs", "x", libdeviceBits},
      {"libdevice.brev", "x", libdeviceBits},
      {"tl.maximum", "x, y, propagate_nan=tl.PropagateNan.NONE", maxMin},
      {"tl.minimum", "x, y, propagate_nan=tl.PropagateNan.NONE", maxMin},
      {"tl.clamp", "x, min, max, propagate_nan=tl.PropagateNan.NONE", clamp},
      {"tl.umulhi", "x, y", umulhi, kTensorMethod},
      {"tl.cast", "input, dtype, fp_downcast_rounding=None, bitcast=False", castBuiltin, kTensorMethod},
      {"tensor.to", "dtype, fp_downcast_rounding=None, bitcast=False", tensorTo},
      {"tensor.logical_and", "other", tensorLogical},
      {"tensor.logical_or", "other", tensorLogical},
      {"tl.inline_asm_elementwise", "asm, constraints, args, dtype, is_pure, pack", inlineAsm},
  };
  // libdevice.NAME: the functions of libdeviceArities() (arguments checked by the handler),
  // then the typed ones (typedLibdevice()); the names outlive the table (static storage).
  static const std::vector<std::string> names = [] {
    std::vector<std::string> r;
    for (auto &[n, arity] : libdeviceArities())
      r.push_back("libdevice." + n);
    for (auto &[n, overloads] : typedLibdevice())
      r.push_back("libdevice." + n);
    return r;
  }();
  for (const std::string &n : names) {
    auto arity = libdeviceArities().find(n.substr(10));
    if (arity == libdeviceArities().end())
      table.push_back({n.c_str(), "*args", typedLibdeviceCall, kBindsOwnArguments});
    else
      table.push_back({n.c_str(), arity->second == 1 ? "x" : "x, y", libdevice, kBindsOwnArguments});
  }
  return table;
}

const std::map<std::string, int> &libdeviceArities() {
  static const std::map<std::string, int> table = {
      {"sin", 1}, {"cos", 1}, {"tan", 1}, {"asin", 1}, {"acos", 1}, {"atan", 1}, {"sinh", 1}, {"cosh", 1},
      {"tanh", 1}, {"asinh", 1}, {"acosh", 1}, {"atanh", 1}, {"erf", 1}, {"erfc", 1}, {"floor", 1},
      {"ceil", 1}, {"trunc", 1}, {"round", 1}, {"rint", 1}, {"log1p", 1}, {"expm1", 1}, {"log10", 1},
      {"exp10", 1}, {"cbrt", 1}, {"lgamma", 1}, {"tgamma", 1}, {"pow", 2}, {"atan2", 2}, {"fmod", 2},
      {"hypot", 2}, {"copysign", 2}, {"exp", 1}, {"log", 1}, {"exp2", 1}, {"log2", 1}, {"rsqrt", 1},
      {"sqrt", 1}, {"isnan", 1}, {"isinf", 1}, {"signbit", 1}, {"nearbyint", 1}, {"logb", 1}, {"fmax", 2},
      {"fmin", 2}, {"fdim", 2}, {"remainder", 2}, {"nextafter", 2},
      {"erfinv", 1}, {"erfcinv", 1}, {"erfcx", 1}, {"normcdf", 1}, {"normcdfinv", 1}, {"sinpi", 1},
      {"cospi", 1}, {"rcbrt", 1}, {"j0", 1}, {"j1", 1}, {"y0", 1}, {"y1", 1}, {"cyl_bessel_i0", 1},
      {"cyl_bessel_i1", 1},
      // fp32 only (libdevice's fast approximations: __nv_fast_expf, ...)
      {"fast_expf", 1}, {"fast_exp10f", 1}, {"fast_logf", 1}, {"fast_log2f", 1}, {"fast_log10f", 1},
      {"fast_sinf", 1}, {"fast_cosf", 1}, {"fast_tanf", 1}, {"fast_powf", 2}, {"fast_dividef", 2}};
  return table;
}

ir::Value *Specializer::castWithRounding(ir::Value *v, ir::ScalarType t, const Arg *rounding, SourceLoc loc) {
  ir::Value *r = castTo(v, t, loc);
  if (!rounding || rounding->val.kind == SVal::Kind::None)
    return r;
  if (rounding->val.kind != SVal::Kind::Str || (rounding->val.s != "rtne" && rounding->val.s != "rtz"))
    fail(rounding->loc, "fp_downcast_rounding must be \"rtne\" or \"rtz\"");
  // A cast to the value's own type is no cast (Triton's semantic.cast returns its input first).
  if (v->type.elem == t)
    return r;
  bool narrowing = ir::isFloat(v->type.dtype()) && ir::isFloat(t.dtype) && ir::bitWidth(t.dtype) < ir::bitWidth(v->type.dtype());
  if (!narrowing)
    fail(rounding->loc, "fp_downcast_rounding applies only to float-to-narrower-float casts");
  if (rounding->val.s == "rtz" && r->def && r->def->kind == ir::OpKind::Cast)
    r->def->setRoundTowardZero(true);
  return r;
}

ir::Value *Specializer::isNan(ir::Value *x, SourceLoc loc) { return b->cmp(loc, ir::CmpPred::Ne, x, x); }

ir::Value *Specializer::propagateNan(ir::Value *r, const std::vector<ir::Value *> &ins, SourceLoc loc) {
  if (!ir::isFloat(r->type.dtype()))
    return r;
  for (auto it = ins.rbegin(); it != ins.rend(); ++it)
    r = b->select(loc, isNan(*it, loc), *it, r);
  return r;
}

} // namespace tle::sema
