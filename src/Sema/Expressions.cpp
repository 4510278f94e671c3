// Expression evaluation during specialisation: constexpr folding with Python semantics, and
// tile IR for runtime values with Triton 3.6's promotion, broadcasting and literal typing.
#include "Sema.h"

#include <filesystem>
#include <llvm/Support/Casting.h>
#include <llvm/Support/SaveAndRestore.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using llvm::dyn_cast;
using llvm::isa;

namespace tle::sema {

using ir::DType;

ir::DType integerPromote(DType a, DType b) {
  if (a == b)
    return a;
  unsigned wa = ir::bitWidth(a), wb = ir::bitWidth(b);
  bool sa = ir::isSigned(a), sb = ir::isSigned(b);
  if (sa == sb)
    return wa >= wb ? a : b;
  DType u = sa ? b : a, s = sa ? a : b;
  return ir::bitWidth(u) >= ir::bitWidth(s) ? u : s;
}

std::optional<ir::DType> tensorComputationType(DType x, DType y, bool divOrMod) {
  if (x == DType::F64 || y == DType::F64) return DType::F64;
  if (x == DType::F32 || y == DType::F32) return DType::F32;
  if (x == DType::F16 || y == DType::F16) return divOrMod ? DType::F32 : DType::F16; // fp16 with bf16 too
  if (x == DType::BF16 || y == DType::BF16) return (divOrMod || x != y) ? DType::F32 : DType::BF16;
  if (ir::isFP8(x) && ir::isFP8(y)) return x == y ? x : DType::F16; // two fp8 types: fp16
  if (ir::isFP8(x) || ir::isFP8(y)) return std::nullopt;
  return integerPromote(x, y);
}

namespace {

/// Kind order of Triton's scalar rule (dtype.kind()): bool < integer < float. Signed and unsigned
/// integers are one kind, so `uint8_tile + 3` stays uint8.
int kindRank(DType t) {
  if (t == DType::I1)
    return 0;
  if (ir::isInteger(t))
    return 1;
  return 2;
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

int64_t pyMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Operators

bool Specializer::truthy(const SVal &v, SourceLoc loc) {
  switch (v.kind) {
  case SVal::Kind::None: return false;
  case SVal::Kind::Int: case SVal::Kind::Bool: return v.i != 0;
  case SVal::Kind::Float: return v.f != 0;
  case SVal::Kind::Str: return !v.s.empty();
  case SVal::Kind::Tuple: return !v.elts.empty();
  case SVal::Kind::Tensor:
    fail(loc, "a runtime value (" + v.describe() + ") cannot be used where a compile-time condition is required");
  default:
    return true;
  }
}

namespace {

/// Python's float `**` on compile-time values: 0 to a negative power raises ZeroDivisionError, a
/// negative base to a fractional power is a complex number, and a finite result too large for a
/// double raises OverflowError; each is a located error here rather than inf or NaN.
SVal foldFloatPow(Specializer &S, double fa, double fb, SourceLoc loc) {
  if (fa == 0 && fb < 0)
    S.fail(loc, "0 cannot be raised to a negative power in a compile-time expression (Python raises ZeroDivisionError)");
  if (fa < 0 && std::isfinite(fb) && fb != std::floor(fb))
    S.fail(loc, "a negative number raised to a fractional power is a complex number (Python), not supported in a "
                "compile-time expression");
  double r = std::pow(fa, fb);
  if (std::isinf(r) && std::isfinite(fa) && std::isfinite(fb))
    S.fail(loc, "float overflow in a compile-time expression ('**' result out of range; Python raises OverflowError)");
  return SVal::real(r);
}

SVal foldBinary(Specializer &S, ast::BinaryOp op, const SVal &a, const SVal &b, SourceLoc loc) {
  bool isFloat = a.kind == SVal::Kind::Float || b.kind == SVal::Kind::Float;
  double fa = a.kind == SVal::Kind::Float ? a.f : double(a.i);
  double fb = b.kind == SVal::Kind::Float ? b.f : double(b.i);
  int64_t ia = a.i, ib = b.i;
  using O = ast::BinaryOp;
  auto zeroDiv = [&]() { S.fail(loc, "division by zero in a compile-time expression"); };
  auto overflow = [&]() {
    S.fail(loc, std::string("integer overflow in a compile-time expression ('") + ast::spelling(op) +
                    "' on " + std::to_string(ia) + " and " + std::to_string(ib) + " does not fit in 64 bits)");
  };
  switch (op) {
  case O::Add: case O::Sub: case O::Mul: {
    if (isFloat)
      return SVal::real(op == O::Add ? fa + fb : op == O::Sub ? fa - fb : fa * fb);
    int64_t r;
    bool over = op == O::Add ? __builtin_add_overflow(ia, ib, &r)
                : op == O::Sub ? __builtin_sub_overflow(ia, ib, &r) : __builtin_mul_overflow(ia, ib, &r);
    if (over)
      overflow();
    return SVal::integer(r);
  }
  case O::Div:
    if (fb == 0)
      zeroDiv();
    return SVal::real(fa / fb);
  case O::FloorDiv:
    if (fb == 0)
      zeroDiv();
    if (!isFloat && ia == std::numeric_limits<int64_t>::min() && ib == -1)
      overflow();
    return isFloat ? SVal::real(std::floor(fa / fb)) : SVal::integer(floorDiv(ia, ib));
  case O::Mod:
    if (fb == 0)
      zeroDiv();
    if (isFloat) {
      double r = std::fmod(fa, fb);
      if (r != 0 && ((r < 0) != (fb < 0)))
        r += fb;
      return SVal::real(r);
    }
    if (ib == -1)
      return SVal::integer(0); // also for the minimum value, whose C remainder traps
    return SVal::integer(pyMod(ia, ib));
  case O::Pow:
    if (!isFloat && ib >= 0) {
      // Square-and-multiply with overflow checks: bounded time for any exponent.
      int64_t r = 1, base = ia;
      for (int64_t e = ib; e > 0; e >>= 1) {
        if ((e & 1) && __builtin_mul_overflow(r, base, &r))
          overflow();
        if (e > 1 && __builtin_mul_overflow(base, base, &base)) {
          if (ia == 0 || ia == 1 || ia == -1)
            break;
          overflow();
        }
      }
      if (ia == -1)
        r = (ib & 1) ? -1 : 1;
      return SVal::integer(r);
    }
    return foldFloatPow(S, fa, fb, loc);
  default:
    break;
  }
  if (isFloat)
    S.fail(loc, std::string("unsupported operand types for '") + ast::spelling(op) + "': " + a.describe() + " and " +
                    b.describe());
  switch (op) {
  case O::Shl: case O::Shr: {
    if (ib < 0)
      S.fail(loc, "negative shift count in a compile-time expression");
    if (op == O::Shr)
      return SVal::integer(ib >= 64 ? (ia < 0 ? -1 : 0) : ia >> ib);
    if (ia == 0)
      return SVal::integer(0);
    if (ib >= 63 || (ia > 0 ? ia > (std::numeric_limits<int64_t>::max() >> ib) : ia < (std::numeric_limits<int64_t>::min() >> ib)))
      overflow();
    return SVal::integer(static_cast<int64_t>(static_cast<uint64_t>(ia) << ib));
  }
  case O::BitAnd: return a.kind == SVal::Kind::Bool && b.kind == SVal::Kind::Bool ? SVal::boolean(ia & ib) : SVal::integer(ia & ib);
  case O::BitOr: return a.kind == SVal::Kind::Bool && b.kind == SVal::Kind::Bool ? SVal::boolean(ia | ib) : SVal::integer(ia | ib);
  case O::BitXor: return SVal::integer(ia ^ ib);
  default:
    S.fail(loc, std::string("operator '") + ast::spelling(op) + "' is not supported on compile-time values");
  }
}

} // namespace

/// Triton's binary_op_type_checking_impl: a Python integer that takes the other operand's
/// integer type (the scalar rule) must fit that type, or the operation is an error ("Scalar ...
/// is out of range for type ..."): `n + 4294967296` with an int32 `n` is not computed in int32
/// with a truncated constant. Empty when it fits (or is not an integer literal).
static std::string literalOutOfRange(const SVal &lit, DType t) {
  if (lit.kind != SVal::Kind::Int || !ir::isInteger(t) || t == DType::I1 || ir::bitWidth(t) >= 64)
    return "";
  int bits = ir::bitWidth(t);
  int64_t lo = ir::isSigned(t) ? -(int64_t(1) << (bits - 1)) : 0;
  int64_t hi = ir::isSigned(t) ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
  if (lit.i >= lo && lit.i <= hi)
    return "";
  return "integer constant " + std::to_string(lit.i) + " is out of range for " + ir::name(t) +
         ", the type of the other operand that it takes (Triton's rule for Python scalars); cast that operand "
         "to a wider type first, e.g. x.to(tl.int64)";
}

void Specializer::checkScalarOperand(const SVal &lit, DType t, SourceLoc loc) {
  if (lit.kind == SVal::Kind::Int && lit.i < 0 && ir::isUnsigned(t) && t != DType::I1)
    fail(loc, "negative constant " + std::to_string(lit.i) + " combined with unsigned type " + ir::name(t));
  if (std::string m = literalOutOfRange(lit, t); !m.empty())
    fail(loc, m);
}

SVal Specializer::binary(ast::BinaryOp op, const SVal &a, const SVal &bv, SourceLoc loc, SourceLoc la, SourceLoc lb) {
  using O = ast::BinaryOp;
  if (a.isNumber() && bv.isNumber())
    return foldBinary(*this, op, a, bv, loc);
  if (op == O::Div && isPath(a) && (bv.kind == SVal::Kind::Str || isPath(bv))) // pathlib: p / "x"
    return pathValue((std::filesystem::path(a.attr("__path__").s) /
                      (bv.kind == SVal::Kind::Str ? bv.s : bv.attr("__path__").s)).string());
  if (a.kind == SVal::Kind::Tuple && bv.kind == SVal::Kind::Tuple && op == O::Add) {
    if (a.elts.size() + bv.elts.size() > kMaxTupleElements)
      fail(loc, "compile-time work limit: a tuple of " + std::to_string(a.elts.size() + bv.elts.size()) +
                    " elements (the limit is " + std::to_string(kMaxTupleElements) + ")");
    auto e = a.elts;
    e.insert(e.end(), bv.elts.begin(), bv.elts.end());
    SVal r = SVal::tuple(e);
    checkValueSize(r, loc); // nested tuples and strings
    return r;
  }
  // Sequence repetition, as Python: [2] * n_dims, (1,) * k, n * [0] (a count below 1 is empty).
  if (op == O::Mul && ((a.kind == SVal::Kind::Tuple && bv.kind == SVal::Kind::Int) ||
                       (a.kind == SVal::Kind::Int && bv.kind == SVal::Kind::Tuple))) {
    const SVal &seq = a.kind == SVal::Kind::Tuple ? a : bv;
    int64_t n = a.kind == SVal::Kind::Int ? a.i : bv.i;
    if (n <= 0 || seq.elts.empty())
      return SVal::tuple({});
    if (uint64_t(n) > kMaxTupleElements / seq.elts.size())
      fail(loc, "compile-time work limit: a tuple of more than " + std::to_string(kMaxTupleElements) + " elements");
    std::vector<SVal> e;
    for (int64_t k = 0; k < n; ++k)
      e.insert(e.end(), seq.elts.begin(), seq.elts.end());
    SVal r = SVal::tuple(e);
    checkValueSize(r, loc);
    return r;
  }
  // Compile-time strings: "int" + "8", "ab" * 3 (type names and messages built in Python).
  if (a.kind == SVal::Kind::Str && bv.kind == SVal::Kind::Str && op == O::Add) {
    if (a.s.size() + bv.s.size() > kMaxStringBytes)
      fail(loc, "compile-time work limit: a string of more than 1 MiB");
    return SVal::str(a.s + bv.s);
  }
  if (op == O::Mul && ((a.kind == SVal::Kind::Str && bv.kind == SVal::Kind::Int) ||
                       (a.kind == SVal::Kind::Int && bv.kind == SVal::Kind::Str))) {
    const SVal &str = a.kind == SVal::Kind::Str ? a : bv;
    int64_t n = a.kind == SVal::Kind::Int ? a.i : bv.i;
    if (n <= 0 || str.s.empty()) // "" * 2**62 is "" at once
      return SVal::str("");
    if (uint64_t(n) > kMaxStringBytes / str.s.size()) // a division: the product may not fit
      fail(loc, "compile-time work limit: a string of more than 1 MiB");
    std::string r;
    for (int64_t k = 0; k < n; ++k)
      r += str.s;
    return SVal::str(r);
  }
  if (!(a.isTensor() || a.isNumber()) || !(bv.isTensor() || bv.isNumber()))
    fail(loc, std::string("unsupported operand types for '") + ast::spelling(op) + "': " + a.describe() + " and " +
                  bv.describe());
  if (op == O::MatMul)
    fail(loc, "'@' is not supported yet: use tl.dot");
  if (op == O::Pow)
    fail(loc, "'**' on runtime values is not supported");

  // Pointer arithmetic.
  bool aPtr = a.isTensor() && a.v->type.elem.isPointer();
  bool bPtr = bv.isTensor() && bv.v->type.elem.isPointer();
  if (aPtr || bPtr) {
    if (aPtr && bPtr)
      fail(loc, std::string("'") + ast::spelling(op) + "' between two pointers is not supported");
    if (!(op == O::Add || (op == O::Sub && aPtr)))
      fail(loc, std::string("operator '") + ast::spelling(op) + "' is not defined for pointers (only ptr + int and ptr - int)");
    const SVal &p = aPtr ? a : bv;
    const SVal &o = aPtr ? bv : a;
    SourceLoc lo = aPtr ? lb : la;
    ir::Value *off = toTensor(o, lo);
    if (!ir::isInteger(off->type.dtype()))
      fail(lo, "pointer offset must be an integer, got " + off->type.str());
    if (op == O::Sub)
      off = b->unary(ir::OpKind::Neg, loc, off);
    if (ir::isUnsigned(off->type.dtype()) && ir::bitWidth(off->type.dtype()) < 64)
      off = castTo(off, ir::ScalarType{DType::I64}, loc);
    ir::Value *pv = p.v;
    broadcastPair(pv, off, loc);
    return SVal::tensor(b->create(ir::OpKind::AddPtr, loc, {pv, off}, {pv->type})->result());
  }

  // Result dtype (semantic.computation_type_impl with the scalar-kind rule).
  bool divOrMod = op == O::Div || op == O::Mod;
  DType ta = a.isTensor() ? a.v->type.dtype() : literalType(a, la);
  DType tb = bv.isTensor() ? bv.v->type.dtype() : literalType(bv, lb);
  DType t;
  // Where the operands come from, for the notes of a type error.
  auto operandNotes = [&]() {
    std::vector<Note> notes;
    if (a.isTensor())
      noteDefinition(notes, a.v, "the " + a.v->type.str() + " operand", loc);
    if (bv.isTensor())
      noteDefinition(notes, bv.v, "the " + bv.v->type.str() + " operand", loc);
    return notes;
  };
  auto tensorOp = [&](DType x, DType y) -> DType {
    std::optional<DType> r = tensorComputationType(x, y, divOrMod);
    if (!r)
      fail(loc, std::string("'") + ast::spelling(op) + "' between " + ir::name(x) + " and " + ir::name(y) +
                    " is not supported (Triton promotes an fp8 value only with a float type); cast one operand first",
           operandNotes());
    if (!ir::isFloat(*r) && (op == O::Div || op == O::Mod || op == O::FloorDiv) && ir::isSigned(x) != ir::isSigned(y) &&
        x != DType::I1 && y != DType::I1)
      fail(loc, std::string("'") + ast::spelling(op) + "' between " + ir::name(x) + " and " + ir::name(y) +
                    " (mixed signedness) is not allowed; cast one operand first",
           operandNotes());
    return *r;
  };
  if (a.isTensor() != bv.isTensor()) {
    DType tensorT = a.isTensor() ? ta : tb, scalarT = a.isTensor() ? tb : ta;
    t = kindRank(scalarT) <= kindRank(tensorT) ? tensorT : scalarT;
    if (divOrMod && (t == DType::F16 || t == DType::BF16))
      t = DType::F32;
    checkScalarOperand(a.isTensor() ? bv : a, t, a.isTensor() ? lb : la);
  } else {
    t = tensorOp(ta, tb);
  }
  if (op == O::Div) {
    if (ir::isInteger(t))
      t = DType::F32;
  }
  if (op == O::FloorDiv && ir::isFloat(t))
    fail(loc, "'//' on floating-point values is not supported (Triton defines it for integers only)");
  bool bitwise = op == O::BitAnd || op == O::BitOr || op == O::BitXor || op == O::Shl || op == O::Shr;
  if (bitwise && !ir::isInteger(t))
    fail(loc, std::string("operator '") + ast::spelling(op) + "' needs integer or boolean operands, got " + ir::name(ta) +
                  " and " + ir::name(tb));

  ir::Value *x = toTensorOfType(a, t, la);
  ir::Value *y = toTensorOfType(bv, t, lb);
  broadcastPair(x, y, loc);
  ir::OpKind k;
  bool fl = ir::isFloat(t);
  switch (op) {
  case O::Add: k = ir::OpKind::Add; break;
  case O::Sub: k = ir::OpKind::Sub; break;
  case O::Mul: k = ir::OpKind::Mul; break;
  case O::Div: k = ir::OpKind::FDiv; break;
  case O::FloorDiv: k = ir::OpKind::IDiv; break;
  case O::Mod: k = fl ? ir::OpKind::FRem : ir::OpKind::IRem; break;
  case O::BitAnd: k = ir::OpKind::And; break;
  case O::BitOr: k = ir::OpKind::Or; break;
  case O::BitXor: k = ir::OpKind::Xor; break;
  case O::Shl: k = ir::OpKind::Shl; break;
  case O::Shr: k = ir::OpKind::Shr; break;
  default: fail(loc, "unsupported operator");
  }
  // Debug builds check integer +, -, * for overflow as Triton does with debug=True
  // (binary_op_sanitize_overflow_impl): the operation redone in int64 must fit the type.
  if (debug && ir::isInteger(t) && t != DType::I1 && ir::bitWidth(t) < 64 &&
      (k == ir::OpKind::Add || k == ir::OpKind::Sub || k == ir::OpKind::Mul)) {
    ir::ScalarType i64{DType::I64};
    ir::Value *wide = b->binary(k, loc, castTo(x, i64, loc), castTo(y, i64, loc));
    unsigned w = ir::bitWidth(t);
    int64_t hi = ir::isSigned(t) ? (int64_t(1) << (w - 1)) - 1 : int64_t((uint64_t(1) << w) - 1);
    int64_t lo = ir::isSigned(t) ? -(int64_t(1) << (w - 1)) : 0;
    auto bound = [&](int64_t v) {
      ir::Value *c = b->constInt(loc, DType::I64, v);
      return wide->type.isTile() ? b->splat(loc, c, wide->type.shape) : c;
    };
    ir::Value *ok = b->binary(ir::OpKind::And, loc, b->cmp(loc, ir::CmpPred::Le, wide, bound(hi)),
                              b->cmp(loc, ir::CmpPred::Ge, wide, bound(lo)));
    const char *opName = k == ir::OpKind::Add ? "add" : k == ir::OpKind::Sub ? "sub" : "mul";
    deviceAssert({loc, SVal::tensor(ok)}, "int" + std::to_string(w) + " overflow detected for operation " + opName,
                 nullptr, loc);
  }
  return SVal::tensor(b->binary(k, loc, x, y));
}

namespace {

/// Python's == of two compile-time values where it is defined without an error: numbers,
/// strings, dtypes, None and tuples of them; values of other kinds are unequal.
bool pyEquals(const SVal &a, const SVal &b) {
  if (a.isNumber() && b.isNumber())
    return (a.kind == SVal::Kind::Float || b.kind == SVal::Kind::Float)
               ? (a.kind == SVal::Kind::Float ? a.f : double(a.i)) == (b.kind == SVal::Kind::Float ? b.f : double(b.i))
               : a.i == b.i;
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case SVal::Kind::Str: return a.s == b.s;
  case SVal::Kind::DType: return a.dtype == b.dtype;
  case SVal::Kind::None: return true;
  case SVal::Kind::Tuple:
    if (a.elts.size() != b.elts.size())
      return false;
    for (size_t k = 0; k < a.elts.size(); ++k)
      if (!pyEquals(a.elts[k], b.elts[k]))
        return false;
    return true;
  default: return false;
  }
}

} // namespace

bool Specializer::contains(const SVal &container, const SVal &x, SourceLoc loc) {
  if (!container.isConstexpr() || !x.isConstexpr())
    fail(loc, unsupportedHere("'in' of a runtime value"));
  if (container.kind == SVal::Kind::Str) {
    if (x.kind != SVal::Kind::Str)
      fail(loc, "'in <string>' requires a string as left operand, not " + x.describe());
    return container.s.find(x.s) != std::string::npos;
  }
  if (container.kind == SVal::Kind::Tuple || container.kind == SVal::Kind::Dict) {
    size_t step = container.kind == SVal::Kind::Dict ? 2 : 1; // a dict's keys
    for (size_t k = 0; k < container.elts.size(); k += step)
      if (pyEquals(container.elts[k], x))
        return true;
    return false;
  }
  fail(loc, "'in' needs a compile-time str, tuple, list or dict on its right, got " + container.describe());
}

SVal Specializer::compare(ast::CompareOp op, const SVal &a, const SVal &bv, SourceLoc loc) {
  using C = ast::CompareOp;
  if (op == C::Is || op == C::IsNot) {
    // `x is None` on any value is decided at compile time (Triton compares the Python objects):
    // a runtime pointer or tile is never None, the usual test of an optional pointer parameter.
    if (a.kind == SVal::Kind::None || bv.kind == SVal::Kind::None) {
      bool same = a.kind == bv.kind;
      return SVal::boolean(op == C::Is ? same : !same);
    }
    if (!a.isConstexpr() || !bv.isConstexpr())
      fail(loc, "'is' is only supported between compile-time values");
    bool same = a.kind == bv.kind && a.i == bv.i && a.f == bv.f && a.s == bv.s && a.dtype == bv.dtype;
    return SVal::boolean(op == C::Is ? same : !same);
  }
  if (op == C::In || op == C::NotIn) {
    bool found = contains(bv, a, loc);
    return SVal::boolean(op == C::In ? found : !found);
  }
  if (a.isConstexpr() && bv.isConstexpr()) {
    if (a.kind == SVal::Kind::DType && bv.kind == SVal::Kind::DType) {
      if (op != C::Eq && op != C::Ne)
        fail(loc, "dtypes can only be compared with == and !=");
      return SVal::boolean((a.dtype == bv.dtype) == (op == C::Eq));
    }
    if (a.kind == SVal::Kind::Str && bv.kind == SVal::Kind::Str) { // Python's: by code points
      int c = a.s.compare(bv.s);
      bool r = op == C::Lt ? c < 0 : op == C::Le ? c <= 0 : op == C::Gt ? c > 0 : op == C::Ge ? c >= 0
               : op == C::Eq ? c == 0 : c != 0;
      return SVal::boolean(r);
    }
    if (a.kind == SVal::Kind::None || bv.kind == SVal::Kind::None) {
      if (op != C::Eq && op != C::Ne)
        fail(loc, "None can only be compared with == and !=");
      return SVal::boolean((a.kind == bv.kind) == (op == C::Eq));
    }
    if (a.kind == SVal::Kind::Tuple && bv.kind == SVal::Kind::Tuple) {
      // Python's tuple comparison: lexicographic, the first unequal pair decides; otherwise the
      // lengths (`x.shape == (1, 1)`).
      size_t n = std::min(a.elts.size(), bv.elts.size());
      for (size_t k = 0; k < n; ++k)
        if (!compare(C::Eq, a.elts[k], bv.elts[k], loc).i) {
          if (op == C::Eq || op == C::Ne)
            return SVal::boolean(op == C::Ne);
          return compare(op, a.elts[k], bv.elts[k], loc);
        }
      size_t la = a.elts.size(), lb = bv.elts.size();
      bool r = op == C::Lt ? la < lb : op == C::Le ? la <= lb : op == C::Gt ? la > lb : op == C::Ge ? la >= lb
               : op == C::Eq ? la == lb : la != lb;
      return SVal::boolean(r);
    }
    if (a.kind == SVal::Kind::Tuple || bv.kind == SVal::Kind::Tuple) {
      if (op == C::Eq || op == C::Ne) // Python: a tuple never equals a non-tuple
        return SVal::boolean(op == C::Ne);
      fail(loc, "cannot compare " + a.describe() + " with " + bv.describe());
    }
    if (!a.isNumber() || !bv.isNumber())
      fail(loc, "cannot compare " + a.describe() + " with " + bv.describe());
    if (a.kind != SVal::Kind::Float && bv.kind != SVal::Kind::Float) {
      // Integers (and bools) compare exactly, also beyond 2^53.
      int64_t x = a.i, y = bv.i;
      bool r = op == C::Lt ? x < y : op == C::Le ? x <= y : op == C::Gt ? x > y : op == C::Ge ? x >= y
               : op == C::Eq ? x == y : x != y;
      return SVal::boolean(r);
    }
    double x = a.kind == SVal::Kind::Float ? a.f : double(a.i), y = bv.kind == SVal::Kind::Float ? bv.f : double(bv.i);
    bool r = false;
    switch (op) {
    case C::Lt: r = x < y; break;
    case C::Le: r = x <= y; break;
    case C::Gt: r = x > y; break;
    case C::Ge: r = x >= y; break;
    case C::Eq: r = x == y; break;
    case C::Ne: r = x != y; break;
    default: break;
    }
    return SVal::boolean(r);
  }
  // Runtime comparison: operands promoted as for arithmetic.
  SVal lhs = a, rhs = bv;
  if (!(lhs.isTensor() || lhs.isNumber()) || !(rhs.isTensor() || rhs.isNumber()))
    fail(loc, "cannot compare " + a.describe() + " with " + bv.describe());
  DType ta = lhs.isTensor() ? lhs.v->type.dtype() : literalType(lhs, loc);
  DType tb = rhs.isTensor() ? rhs.v->type.dtype() : literalType(rhs, loc);
  DType t;
  // A pointer compares only with a pointer (Triton rejects `ptrs != 256` too); checked first, as a
  // pointer tile against a Python number has no pointer operand to compare with.
  if ((ta == DType::Ptr || tb == DType::Ptr) && !(ta == DType::Ptr && tb == DType::Ptr && lhs.isTensor() && rhs.isTensor()))
    fail(loc, "cannot compare a pointer with a non-pointer (" + a.describe() + " with " + bv.describe() + ")");
  if (lhs.isTensor() != rhs.isTensor()) {
    DType tensorT = lhs.isTensor() ? ta : tb, scalarT = lhs.isTensor() ? tb : ta;
    t = kindRank(scalarT) <= kindRank(tensorT) ? tensorT : scalarT;
    if (std::string m = literalOutOfRange(lhs.isTensor() ? rhs : lhs, t); !m.empty())
      fail(loc, m);
  } else if (ta == DType::Ptr || tb == DType::Ptr) {
    if (ta != tb)
      fail(loc, "cannot compare a pointer with a non-pointer");
    t = DType::Ptr;
  } else if (ir::isFloat(ta) || ir::isFloat(tb)) {
    // computation_type_impl: fp64 > fp32 > fp16 (with anything narrower) > bf16 (only with bf16;
    // with an integer, fp32).
    if (ta == DType::F64 || tb == DType::F64) t = DType::F64;
    else if (ta == DType::F32 || tb == DType::F32) t = DType::F32;
    else if (ta == DType::F16 || tb == DType::F16) t = DType::F16;
    else if (ta == DType::BF16 || tb == DType::BF16) t = ta == tb ? ta : DType::F32;
    else if (ir::isFP8(ta) && ir::isFP8(tb)) t = ta == tb ? ta : DType::F16;
    else
      fail(loc, std::string("cannot compare ") + ir::name(ta) + " with " + ir::name(tb) +
                    " (Triton promotes an fp8 value only with a float type); cast one operand first");
  } else {
    t = integerPromote(ta, tb);
  }
  ir::Value *x = t == DType::Ptr ? lhs.v : toTensorOfType(lhs, t, loc);
  ir::Value *y = t == DType::Ptr ? rhs.v : toTensorOfType(rhs, t, loc);
  broadcastPair(x, y, loc);
  ir::CmpPred p;
  switch (op) {
  case C::Lt: p = ir::CmpPred::Lt; break;
  case C::Le: p = ir::CmpPred::Le; break;
  case C::Gt: p = ir::CmpPred::Gt; break;
  case C::Ge: p = ir::CmpPred::Ge; break;
  case C::Eq: p = ir::CmpPred::Eq; break;
  default: p = ir::CmpPred::Ne; break;
  }
  return SVal::tensor(b->cmp(loc, p, x, y));
}

SVal Specializer::unary(ast::UnaryOp op, const SVal &a, SourceLoc loc) {
  using U = ast::UnaryOp;
  if (a.isConstexpr()) {
    switch (op) {
    case U::Not: return SVal::boolean(!truthy(a, loc));
    case U::Pos:
      if (!a.isNumber()) break;
      return a;
    case U::Neg:
      if (a.kind == SVal::Kind::Float) return SVal::real(-a.f);
      if (a.isNumber()) {
        if (a.i == std::numeric_limits<int64_t>::min())
          fail(loc, "integer overflow in a compile-time expression (-" + std::to_string(a.i) + " does not fit in 64 bits)");
        return SVal::integer(-a.i);
      }
      break;
    case U::Invert:
      if (a.kind == SVal::Kind::Int || a.kind == SVal::Kind::Bool) return SVal::integer(~a.i);
      break;
    }
    fail(loc, std::string("bad operand for unary '") + ast::spelling(op) + "': " + a.describe());
  }
  if (!a.isTensor())
    fail(loc, std::string("bad operand for unary '") + ast::spelling(op) + "': " + a.describe());
  ir::Value *v = a.v;
  DType t = v->type.dtype();
  switch (op) {
  case U::Pos:
    return a;
  case U::Neg:
    if (v->type.elem.isPointer())
      fail(loc, "cannot negate a pointer");
    return SVal::tensor(b->unary(ir::OpKind::Neg, loc, v));
  case U::Invert:
    if (!ir::isInteger(t))
      fail(loc, "'~' needs an integer operand, got " + v->type.str());
    return SVal::tensor(b->unary(ir::OpKind::Not, loc, v));
  case U::Not: {
    if (t != DType::I1) {
      ir::Value *zero = toTensorOfType(SVal::integer(0), t, loc);
      ir::Value *vv = v;
      broadcastPair(vv, zero, loc);
      v = b->cmp(loc, ir::CmpPred::Ne, vv, zero);
    }
    return SVal::tensor(b->unary(ir::OpKind::Not, loc, v));
  }
  }
  fail(loc, "unsupported unary operator");
}

// ---------------------------------------------------------------------------------------------
// Subscripts: x[None, :], x[:, None], tuple indexing with constants

std::vector<int64_t> Specializer::sliceIndices(const ast::SliceExpr *sl, int64_t len, Env &env) {
  // Python's slice.indices(len): bounds clamped, negatives from the end, step 1 by default.
  auto bound = [&](const ast::Expr *x, const char *what) -> std::optional<int64_t> {
    if (!x)
      return std::nullopt;
    SVal v = eval(x, env);
    if (v.kind == SVal::Kind::None)
      return std::nullopt;
    if (v.kind != SVal::Kind::Int && v.kind != SVal::Kind::Bool)
      fail(x->loc(), std::string("a slice's ") + what + " must be a compile-time integer or None, got " + v.describe());
    return v.i;
  };
  int64_t step = bound(sl->step, "step").value_or(1);
  if (step == 0)
    fail(sl->step->loc(), "slice step cannot be zero");
  auto clamp = [&](std::optional<int64_t> b, int64_t dflt) {
    if (!b)
      return dflt;
    int64_t i = *b < 0 ? *b + len : *b;
    return step > 0 ? std::clamp<int64_t>(i, 0, len) : std::clamp<int64_t>(i, -1, len - 1);
  };
  int64_t lo = clamp(bound(sl->lower, "start"), step > 0 ? 0 : len - 1);
  int64_t hi = clamp(bound(sl->upper, "stop"), step > 0 ? len : -1);
  std::vector<int64_t> out;
  for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step)
    out.push_back(i);
  return out;
}

SVal Specializer::subscript(const ast::SubscriptExpr *e, Env &env) {
  SVal base = eval(e->base, env);
  // A constant slice of a tuple or string (`x.shape[:-1]`, `desc.strides[1:]`), as Python's.
  if ((base.kind == SVal::Kind::Tuple || base.kind == SVal::Kind::Str) && e->indices.size() == 1)
    if (auto *sl = dyn_cast<ast::SliceExpr>(e->indices[0])) {
      bool str = base.kind == SVal::Kind::Str;
      if (str && std::any_of(base.s.begin(), base.s.end(), [](char ch) { return (ch & 0x80) != 0; }))
        fail(e->loc(), "slicing a string with non-ASCII characters is not supported at compile time");
      SVal r = str ? SVal::str("") : base;
      if (!str)
        r.elts.clear();
      for (int64_t i : sliceIndices(sl, int64_t(str ? base.s.size() : base.elts.size()), env)) {
        if (str)
          r.s += base.s[size_t(i)];
        else
          r.elts.push_back(base.elts[size_t(i)]);
      }
      return r;
    }
  if (base.kind == SVal::Kind::Tuple) {
    if (e->indices.size() != 1)
      fail(e->loc(), "tuple index must be a single integer");
    SVal idx = eval(e->indices[0], env);
    if (idx.kind != SVal::Kind::Int)
      fail(e->indices[0]->loc(), "tuple index must be a compile-time integer, got " + idx.describe());
    int64_t i = idx.i < 0 ? idx.i + int64_t(base.elts.size()) : idx.i;
    if (i < 0 || i >= int64_t(base.elts.size()))
      fail(e->indices[0]->loc(), "tuple index " + std::to_string(idx.i) + " out of range");
    return base.elts[i];
  }
  if (base.kind == SVal::Kind::Mesh)
    return meshSubscript(base, e, env);
  if (base.kind == SVal::Kind::Dict) { // a compile-time dict (e.g. @triton.heuristics' args)
    if (e->indices.size() != 1)
      fail(e->loc(), "a dict takes one key");
    SVal key = eval(e->indices[0], env);
    std::string keys;
    for (size_t j = 0; j + 1 < base.elts.size(); j += 2) {
      if (base.elts[j].describe() == key.describe())
        return base.elts[j + 1];
      keys += (keys.empty() ? "" : ", ") + base.elts[j].describe();
    }
    fail(e->indices[0]->loc(), "no key " + key.describe() + " in the dict (keys: " + (keys.empty() ? "none" : keys) + ")");
  }
  if (base.kind == SVal::Kind::Namespace && base.s == "barrier")
    return barrierSubscript(base, e, env);
  if (!base.isTensor())
    fail(e->loc(), base.describe() + " is not subscriptable");
  ir::Value *v = base.v;
  // Each ':' keeps a dim; each None inserts one. A scalar indexed with None becomes a [1] tile
  // wherever the None stands (Triton's expand_dims splats a scalar; s[None, :] and s[:, None]
  // both give [1], as vLLM's prefix_prefill writes `bn[None, :]` of a loaded block number).
  unsigned dim = 0;
  unsigned colons = 0;
  for (const ast::Expr *idx : e->indices) {
    if (isa<ast::NoneLit>(idx)) {
      v = v->type.isScalar() ? broadcastTo(v, {1}, idx->loc()) : expandDims(v, static_cast<int>(dim), idx->loc());
      ++dim;
      continue;
    }
    if (auto *sl = dyn_cast<ast::SliceExpr>(idx)) {
      if (sl->lower || sl->upper || sl->step)
        fail(idx->loc(), "only ':' and None are supported as tile indices (use tle.extract_tile for slicing)");
      ++dim;
      ++colons;
      continue;
    }
    fail(idx->loc(), "only ':' and None are supported as tile indices");
  }
  if (colons > base.v->type.rank() && base.v->type.isTile())
    fail(e->loc(), "too many indices for " + base.v->type.str() + ": " + std::to_string(colons) + " ':' for rank " +
                       std::to_string(base.v->type.rank()));
  return SVal::tensor(v);
}

// ---------------------------------------------------------------------------------------------
// Expressions

SVal Specializer::eval(const ast::Expr *e, Env &env) {
  switch (e->kind()) {
  case ast::Node::Kind::Name:
    return lookup(dyn_cast<ast::NameExpr>(e)->name, e->loc(), env);
  case ast::Node::Kind::IntLit: {
    auto *lit = dyn_cast<ast::IntLit>(e);
    if (lit->unsigned64) // past int64: a uint64 constant, as Triton types it
      return SVal::tensor(b->constInt(e->loc(), DType::U64, lit->value));
    return SVal::integer(lit->value);
  }
  case ast::Node::Kind::FloatLit:
    return SVal::real(dyn_cast<ast::FloatLit>(e)->value);
  case ast::Node::Kind::BoolLit:
    return SVal::boolean(dyn_cast<ast::BoolLit>(e)->value);
  case ast::Node::Kind::NoneLit:
    return SVal::none();
  case ast::Node::Kind::StringLit:
    return SVal::str(dyn_cast<ast::StringLit>(e)->value);
  case ast::Node::Kind::FString:
    return evalFString(dyn_cast<ast::FStringExpr>(e), env);
  case ast::Node::Kind::Attribute: {
    auto *a = dyn_cast<ast::AttributeExpr>(e);
    return attribute(eval(a->base, env), a->attr, a->loc());
  }
  case ast::Node::Kind::Call:
    return call(dyn_cast<ast::CallExpr>(e), env);
  case ast::Node::Kind::Subscript:
    return subscript(dyn_cast<ast::SubscriptExpr>(e), env);
  case ast::Node::Kind::Binary: {
    auto *bin = dyn_cast<ast::BinaryExpr>(e);
    SVal l = eval(bin->lhs, env);
    SVal r = eval(bin->rhs, env);
    return binary(bin->op, l, r, bin->loc(), bin->lhs->loc(), bin->rhs->loc());
  }
  case ast::Node::Kind::Unary: {
    auto *u = dyn_cast<ast::UnaryExpr>(e);
    return unary(u->op, eval(u->operand, env), u->loc());
  }
  case ast::Node::Kind::Compare: {
    auto *c = dyn_cast<ast::CompareExpr>(e);
    SVal lhs = eval(c->operands[0], env);
    SVal result;
    for (size_t k = 0; k < c->ops.size(); ++k) {
      SVal rhs = eval(c->operands[k + 1], env);
      SourceLoc l = k < c->opLocs.size() ? c->opLocs[k] : c->loc();
      SVal r = compare(c->ops[k], lhs, rhs, l);
      if (k == 0) {
        result = r;
      } else {
        if (!result.isConstexpr() || !r.isConstexpr())
          fail(l, "chained comparisons of runtime values are not supported; combine them with '&'");
        result = SVal::boolean(truthy(result, l) && truthy(r, l));
      }
      lhs = rhs;
    }
    return result;
  }
  case ast::Node::Kind::BoolOp: {
    auto *bo = dyn_cast<ast::BoolOpExpr>(e);
    // Compile-time operands short-circuit wherever they stand, as Triton folds them: a false one
    // in `and` (a true one in `or`) is the result, also after a runtime operand (`x < n and
    // FLAG` with FLAG = False is a static False), and the others drop out. The runtime operands
    // are combined as booleans (x != 0) with & or |: Triton's deprecated `and` / `or` between
    // tensors (logical_and / logical_or).
    SVal cur;
    ir::Value *acc = nullptr;
    for (size_t k = 0; k < bo->values.size(); ++k) {
      SourceLoc at = bo->values[k]->loc();
      cur = eval(bo->values[k], env);
      if (cur.isConstexpr()) {
        bool t = truthy(cur, at);
        if (bo->isAnd ? !t : t)
          return cur;
        continue;
      }
      if (!cur.isTensor() && !cur.isNumber())
        fail(at, std::string("'") + (bo->isAnd ? "and" : "or") + "' with a runtime value needs numbers or tensors, got " +
                     cur.describe());
      ir::Value *c = castTo(toTensor(cur, at), ir::ScalarType{DType::I1}, at);
      if (acc) {
        broadcastPair(acc, c, at);
        acc = b->binary(bo->isAnd ? ir::OpKind::And : ir::OpKind::Or, at, acc, c);
      } else {
        acc = c;
      }
    }
    return acc ? SVal::tensor(acc) : cur;
  }
  case ast::Node::Kind::IfExp: {
    auto *ie = dyn_cast<ast::IfExpExpr>(e);
    SVal c = eval(ie->cond, env);
    if (!c.isConstexpr())
      return runtimeIfExp(ie, c, env);
    return truthy(c, ie->cond->loc()) ? eval(ie->thenExpr, env) : eval(ie->elseExpr, env);
  }
  case ast::Node::Kind::Tuple: case ast::Node::Kind::List: {
    const auto &elts = isa<ast::TupleExpr>(e) ? dyn_cast<ast::TupleExpr>(e)->elts : dyn_cast<ast::ListExpr>(e)->elts;
    std::vector<SVal> vals;
    ValueSize size;
    for (auto *x : elts) {
      vals.push_back(eval(x, env));
      chargeElement(size, vals.back(), x->loc());
    }
    return SVal::tuple(vals);
  }
  case ast::Node::Kind::Dict: {
    auto *d = dyn_cast<ast::DictExpr>(e);
    std::vector<SVal> kv;
    ValueSize size;
    for (size_t i = 0; i < d->keys.size(); ++i) {
      SVal k = eval(d->keys[i], env);
      chargeElement(size, k, d->keys[i]->loc());
      if (!k.isConstexpr())
        fail(d->keys[i]->loc(), "dict keys must be compile-time values, got " + k.describe());
      for (size_t j = 0; j < kv.size(); j += 2)
        if (kv[j].describe() == k.describe())
          fail(d->keys[i]->loc(), "duplicate dict key " + k.describe());
      kv.push_back(k);
      kv.push_back(eval(d->values[i], env));
      chargeElement(size, kv.back(), d->values[i]->loc());
    }
    SVal r;
    r.kind = SVal::Kind::Dict;
    r.elts = std::move(kv);
    return r;
  }
  case ast::Node::Kind::Slice:
    fail(e->loc(), "a slice is only allowed inside a subscript");
  case ast::Node::Kind::Comp:
    return comprehension(dyn_cast<ast::CompExpr>(e), env);
  case ast::Node::Kind::Named: { // name := value, in Python run at compile time (not in kernels, as Triton)
    auto *n = dyn_cast<ast::NamedExpr>(e);
    if (pythonDepth == 0 && !moduleLevel_ && !commandLine_)
      fail(e->loc(), "assignment expression is not supported in a kernel (only in Python run at compile time)");
    SVal v = eval(n->value, env);
    env[n->name] = v;
    return v;
  }
  case ast::Node::Kind::Lambda:
    fail(e->loc(), unsupportedHere("lambda"));
  case ast::Node::Kind::Starred:
    fail(e->loc(), unsupportedHere("'*' unpacking"));
  case ast::Node::Kind::OtherExpr:
    fail(e->loc(), unsupportedHere(dyn_cast<ast::OtherExpr>(e)->what));
  default:
    fail(e->loc(), "expression not supported in a kernel");
  }
}

std::vector<SVal> Specializer::iterate(const SVal &v, SourceLoc loc) {
  if (v.kind == SVal::Kind::Tuple)
    return v.elts;
  std::vector<SVal> out;
  if (v.kind == SVal::Kind::Dict) {
    for (size_t i = 0; i < v.elts.size(); i += 2)
      out.push_back(v.elts[i]);
    return out;
  }
  if (v.kind == SVal::Kind::Str) {
    for (char ch : v.s)
      out.push_back(SVal::str(std::string(1, ch)));
    return out;
  }
  fail(loc, "only compile-time tuples, lists, dicts, strings and range() can be iterated here, got " + v.describe());
}

std::vector<SVal> Specializer::rangeValues(const ast::CallExpr *call, Env &env, size_t most) {
  std::vector<int64_t> a;
  for (const ast::Expr *x : call->args) {
    SVal v = eval(x, env);
    if (v.kind != SVal::Kind::Int && v.kind != SVal::Kind::Bool)
      fail(x->loc(), "range() in a comprehension takes compile-time ints, got " + v.describe());
    a.push_back(v.i);
  }
  if (a.empty() || a.size() > 3)
    fail(call->loc(), "range() takes 1 to 3 arguments");
  int64_t lo = a.size() > 1 ? a[0] : 0, hi = a.size() > 1 ? a[1] : a[0], st = a.size() > 2 ? a[2] : 1;
  if (st == 0)
    fail(call->loc(), "range() step must not be zero");
  std::vector<SVal> r;
  for (int64_t i = lo; st > 0 ? i < hi : i > hi;) {
    if (r.size() >= most)
      fail(call->loc(), "range() in a comprehension has more than " + std::to_string(most) + " values");
    r.push_back(SVal::integer(i));
    if (__builtin_add_overflow(i, st, &i))
      break; // past int64: no further value lies in the range
  }
  return r;
}

SVal Specializer::comprehension(const ast::CompExpr *c, Env &env) {
  constexpr size_t kMaxElements = 1 << 16;
  Env local = env; // the comprehension's own scope: its targets do not leak
  std::vector<SVal> out;
  // The elements of a clause's iterable: range(...) of compile-time ints, else iterate().
  auto elements = [&](const ast::Expr *it) -> std::vector<SVal> {
    if (auto *call = dyn_cast<ast::CallExpr>(it)) {
      SVal callee = eval(call->callee, local);
      if (callee.kind == SVal::Kind::Builtin &&
          (callee.s == "range" || callee.s == "tl.range" || callee.s == "tl.static_range"))
        return rangeValues(call, local, kMaxElements);
    }
    return iterate(eval(it, local), it->loc());
  };
  std::function<void(size_t)> clause = [&](size_t k) {
    if (k == c->fors.size()) {
      if (out.size() >= kMaxElements)
        fail(c->loc(), "a comprehension with more than " + std::to_string(kMaxElements) + " elements");
      out.push_back(eval(c->elt, local));
      return;
    }
    const ast::CompExpr::For &f = c->fors[k];
    for (const SVal &v : elements(f.iter)) {
      assign(f.target, v, local, f.target->loc());
      bool keep = true;
      for (const ast::Expr *cond : f.ifs)
        if (!(keep = truthy(eval(cond, local), cond->loc())))
          break;
      if (keep)
        clause(k + 1);
    }
  };
  clause(0);
  return SVal::tuple(out);
}

SourceLoc startLoc(const ast::Expr *e) {
  if (auto *b = dyn_cast<ast::BinaryExpr>(e))
    return startLoc(b->lhs);
  if (auto *c = dyn_cast<ast::CompareExpr>(e))
    return startLoc(c->operands[0]);
  if (auto *a = dyn_cast<ast::AttributeExpr>(e))
    return startLoc(a->base);
  if (auto *c = dyn_cast<ast::CallExpr>(e))
    return startLoc(c->callee);
  if (auto *s = dyn_cast<ast::SubscriptExpr>(e))
    return startLoc(s->base);
  if (auto *b = dyn_cast<ast::BoolOpExpr>(e))
    return startLoc(b->values[0]);
  if (auto *i = dyn_cast<ast::IfExpExpr>(e))
    return startLoc(i->thenExpr);
  return e->loc();
}

SVal Specializer::call(const ast::CallExpr *e, Env &env) {
  SVal callee = eval(e->callee, env);
  CallArgs args;
  args.loc = e->loc();
  for (auto *a : e->args) {
    // `f(*args)`: the elements of a tuple (compile-time, or of runtime values), in order.
    if (auto *st = dyn_cast<ast::StarredExpr>(a)) {
      SVal t = eval(st->value, env);
      if (t.kind != SVal::Kind::Tuple)
        fail(st->value->loc(), "'*' in a call unpacks a tuple, got " + t.describe());
      for (const SVal &x : t.elts)
        args.pos.push_back({startLoc(st->value), x});
      continue;
    }
    args.pos.push_back({startLoc(a), eval(a, env)});
  }
  for (auto &k : e->keywords) {
    if (!k.name.empty()) {
      args.kw.push_back({k.name, {startLoc(k.value), eval(k.value, env)}});
      continue;
    }
    // `f(**kwargs)`: a dict of string keys.
    SVal d = eval(k.value, env);
    if (d.kind != SVal::Kind::Dict)
      fail(k.value->loc(), "'**' in a call unpacks a dict, got " + d.describe());
    for (size_t i = 0; i + 1 < d.elts.size(); i += 2) {
      if (d.elts[i].kind != SVal::Kind::Str)
        fail(k.value->loc(), "'**' unpacks a dict of string keys, got the key " + d.elts[i].describe());
      args.kw.push_back({d.elts[i].s, {startLoc(k.value), d.elts[i + 1]}});
    }
  }
  switch (callee.kind) {
  case SVal::Kind::Builtin:
    return callBuiltin(callee.s, args);
  case SVal::Kind::Method:
    return callMethod(callee, args);
  case SVal::Kind::JitFn:
    return callJit(callee.fn, args);
  case SVal::Kind::PyFn:
    if (callee.i == kExternFn && !commandLine_ && !moduleLevel_) {
      llvm::SaveAndRestore<SourceLoc> at(externCallLoc_, e->callee->loc());
      return callJit(callee.fn, args);
    }
    if (callee.i || commandLine_ || moduleLevel_)
      return callConstexprFn(callee.fn, args, e->callee->loc());
  {
    std::string home = homeModuleName(callee.fn);
    fail(e->callee->loc(),
         "'" + callee.fn->name + "' is a Python function without @triton.jit" + (home.empty() ? "" : " (in " + home + ")") +
             ", which a kernel cannot call",
         {{callee.fn->loc(), "'" + callee.fn->name + "' is defined here"}});
  }
  case SVal::Kind::Module: {
    std::vector<Note> notes;
    std::string why = missingModule(callee.s, notes); // an import not found on the search path
    if (why.empty() && callee.s.rfind("torch.", 0) == 0)
      why = " (of torch, TLE knows the dtypes, torch.finfo and torch.iinfo)";
    fail(e->callee->loc(), "'" + callee.s + "' is not available in a kernel" + why, notes);
  }
  default:
    fail(e->callee->loc(), callee.describe() + " is not callable");
  }
}

void Specializer::fail(SourceLoc loc, const std::string &msg, const std::vector<Note> &notes) {
  diags.error(loc, msg);
  for (const Note &n : notes)
    diags.note(n.loc, n.msg);
  for (const Note &n : callChainNotes())
    diags.note(n.loc, n.msg);
  throw CompileAborted();
}

std::vector<Specializer::Note> Specializer::callChainNotes() const {
  constexpr size_t kShownCalls = 16;
  std::vector<Note> notes;
  size_t n = callSites.size();
  for (size_t i = 0; i < n; ++i) {
    const auto &[callee, at] = callSites[n - 1 - i];
    if (i < kShownCalls || i + 1 == n)
      notes.push_back({at, "in '" + callee->name + "', called from here" +
                               (i + 1 == n && n > kShownCalls + 1
                                    ? " (" + std::to_string(n - kShownCalls - 1) + " calls between not shown)"
                                    : std::string())});
  }
  return notes;
}

void Specializer::noteDefinition(std::vector<Note> &notes, const ir::Value *v, const std::string &what,
                                 SourceLoc at) const {
  // Implicit conversions made for this very operation (a cast to the promoted type, a splat)
  // point at the operand's own expression: look through them to where the value was computed.
  auto sameLine = [&](SourceLoc l) { return l.file == at.file && l.line == at.line; };
  while (v && v->def && (v->def->kind == ir::OpKind::Cast || v->def->kind == ir::OpKind::Splat) &&
         sameLine(v->def->loc) && v->def->operands[0]->def)
    v = v->def->operands[0];
  if (!v || !v->def || !v->def->loc.valid() || (sameLine(v->def->loc) && v->def->loc.col == at.col))
    return;
  notes.push_back({v->def->loc, what + " comes from here"});
}

SVal Specializer::callConstexprFn(const ast::FunctionDef *f, CallArgs &args, SourceLoc calleeLoc) {
  auto compileTime = [](const SVal &v) {
    return v.isConstexpr() || v.kind == SVal::Kind::Module || v.kind == SVal::Kind::Builtin ||
           v.kind == SVal::Kind::JitFn || v.kind == SVal::Kind::PyFn;
  };
  // Runtime arguments (tiles, descriptors) pass through, as Triton's ConstexprFunction passes
  // them: the body may read what is known of them (dtype, shape), and no more (below).
  uint64_t opsBefore = ir::opsCreatedOnThisThread();
  ++pythonDepth;
  SVal r;
  try {
    r = callJit(f, args);
  } catch (...) {
    --pythonDepth;
    throw;
  }
  --pythonDepth;
  if (ir::opsCreatedOnThisThread() != opsBefore || !(compileTime(r) || r.kind == SVal::Kind::None))
    fail(calleeLoc, "constexpr function '" + f->name + "' computes a runtime value" +
                        (compileTime(r) ? std::string() : " (" + r.describe() + ")") +
                        "; it must compute a compile-time value, from compile-time values and what is known "
                        "of runtime ones (their dtype, shape) (use @triton.jit for tile code)",
         {{f->loc(), "'" + f->name + "' is defined here"}});
  return r;
}

SVal Specializer::callJit(const ast::FunctionDef *f, CallArgs &args) {
  for (auto *c : callStack)
    if (c == f)
      fail(args.loc, "recursive call of @jit function '" + f->name + "' is not supported");
  if (callStack.size() > kMaxCallDepth) // the kernel, then the helpers being executed
    fail(args.loc, "@jit helper calls nest more than " + std::to_string(kMaxCallDepth) +
                       " deep (each call is inlined; the limit bounds the compiler's own recursion)");
  // A helper of another module reads that module's names (its defaults included).
  struct Home {
    Specializer &s;
    SavedGlobals saved;
    ~Home() { s.leaveHomeModule(saved); }
  } home{*this, enterHomeModule(f)};
  Env local;
  std::vector<bool> bound(f->params.size(), false);
  if (args.pos.size() > f->params.size())
    fail(args.loc, "'" + f->name + "' takes " + std::to_string(f->params.size()) +
                       (f->params.size() == 1 ? " argument" : " arguments") + " but " +
                       std::to_string(args.pos.size()) + " were given");
  for (size_t i = 0; i < args.pos.size(); ++i) {
    local[f->params[i].name] = args.pos[i].val;
    bound[i] = true;
  }
  for (auto &[name, a] : args.kw) {
    size_t i = 0;
    while (i < f->params.size() && f->params[i].name != name)
      ++i;
    if (i == f->params.size())
      fail(a.loc, "'" + f->name + "' has no parameter named '" + name + "'");
    if (bound[i])
      fail(a.loc, "argument '" + name + "' given twice");
    local[name] = a.val;
    bound[i] = true;
  }
  for (size_t i = 0; i < f->params.size(); ++i) {
    if (bound[i])
      continue;
    if (!f->params[i].defaultValue)
      fail(args.loc, "missing argument '" + f->params[i].name + "' in call to '" + f->name + "'");
    Env empty;
    local[f->params[i].name] = eval(f->params[i].defaultValue, empty);
  }
  callStack.push_back(f);
  callSites.emplace_back(f, args.loc);
  returns.emplace_back();
  int savedDepth = loopDepth, savedRuntimeDepth = runtimeLoopDepth;
  loopDepth = runtimeLoopDepth = 0;
  bool exited = execBlock(f->body, local);
  loopDepth = savedDepth;
  runtimeLoopDepth = savedRuntimeDepth;
  Returns rs = returns.back();
  returns.pop_back();
  callSites.pop_back();
  callStack.pop_back();
  // A value returned on some paths needs one on every path (Python would give None elsewhere).
  if (rs.value.valid() && rs.none.valid())
    fail(rs.none, "'" + f->name + "' returns a value at line " + std::to_string(rs.value.line) +
                      " but nothing here; every return of a helper must give a value, or none");
  if (rs.value.valid() && !exited)
    fail(f->loc(), "'" + f->name + "' returns a value at line " + std::to_string(rs.value.line) +
                       " but can also reach the end of its body without a return");
  auto it = local.find(kReturnValue);
  return it == local.end() ? SVal::none() : it->second;
}

} // namespace tle::sema
