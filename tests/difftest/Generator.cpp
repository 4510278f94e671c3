// The random kernel generator (Generator.h). Expressions are built bottom-up with their dtype and
// shape tracked by the language's promotion rules (Triton's computation_type_impl with the
// scalar-kind rule for literals, docs/language.md), so that every kernel compiles; where a rule
// would reject a combination (bitwise ops on floats, `//` on floats, mixed signedness in `/`, `//`
// and `%`), an operand is cast first.
#include "Generator.h"

#include "Interpreter.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>

namespace tle::difftest {

using ir::DType;

uint64_t Rng::next() {
  if (tapePos_ < tapeSize_)
    return uint64_t(tape_[tapePos_++]) * 0x0101010101010101ull;
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int64_t Rng::range(int64_t lo, int64_t hi) {
  uint64_t span = uint64_t(hi) - uint64_t(lo) + 1;
  return span == 0 ? int64_t(next()) : int64_t(uint64_t(lo) + next() % span);
}

bool Rng::chance(double p) { return unit() < p; }

double Rng::unit() { return double(next() >> 11) * 0x1.0p-53; }

namespace {

using Shape = std::vector<int64_t>;

/// A generated expression: its source text, dtype and shape ([] for scalars). `literal` marks a
/// Python number (which takes part in promotion by kind only).
struct Expr {
  std::string s;
  DType t = DType::I32;
  Shape shape;
  bool literal = false;
  bool negativeLiteral = false;
};

const char *tlName(DType t) {
  switch (t) {
  case DType::I1: return "tl.int1";
  case DType::I8: return "tl.int8";
  case DType::I16: return "tl.int16";
  case DType::I32: return "tl.int32";
  case DType::I64: return "tl.int64";
  case DType::U8: return "tl.uint8";
  case DType::U16: return "tl.uint16";
  case DType::U32: return "tl.uint32";
  case DType::U64: return "tl.uint64";
  case DType::F16: return "tl.float16";
  case DType::BF16: return "tl.bfloat16";
  case DType::F32: return "tl.float32";
  case DType::F64: return "tl.float64";
  default: return "tl.int32";
  }
}

bool isInt(DType t) { return ir::isInteger(t) && t != DType::I1; }

/// Integer promotion (Triton's integer_promote_impl).
DType integerPromote(DType a, DType b) {
  if (a == b)
    return a;
  bool sa = ir::isSigned(a), sb = ir::isSigned(b);
  if (sa == sb)
    return ir::bitWidth(a) >= ir::bitWidth(b) ? a : b;
  DType u = sa ? b : a, s = sa ? a : b;
  return ir::bitWidth(u) >= ir::bitWidth(s) ? u : s;
}

int kindRank(DType t) { return t == DType::I1 ? 0 : ir::isInteger(t) ? 1 : 2; }

/// The dtype of a binary operation between two tensors (computation_type_impl).
DType tensorPromote(DType x, DType y, bool divOrMod) {
  if (x == DType::F64 || y == DType::F64) return DType::F64;
  if (x == DType::F32 || y == DType::F32) return DType::F32;
  if (x == DType::F16 || y == DType::F16) return divOrMod ? DType::F32 : DType::F16;
  if (x == DType::BF16 || y == DType::BF16) return (divOrMod || x != y) ? DType::F32 : DType::BF16;
  return integerPromote(x, y);
}

/// The dtype of `a OP b` where either may be a Python literal.
DType promote(const Expr &a, const Expr &b, bool divOrMod) {
  if (a.literal != b.literal) {
    const Expr &lit = a.literal ? a : b, &ten = a.literal ? b : a;
    DType t = kindRank(lit.t) <= kindRank(ten.t) ? ten.t : lit.t;
    if (divOrMod && (t == DType::F16 || t == DType::BF16))
      t = DType::F32;
    return t;
  }
  return tensorPromote(a.t, b.t, divOrMod);
}

Shape broadcastShapes(const Shape &a, const Shape &b) {
  if (a.empty())
    return b;
  if (b.empty())
    return a;
  Shape r(a.size());
  for (size_t d = 0; d < a.size(); ++d)
    r[d] = std::max(a[d], b[d]);
  return r;
}

/// Builds one kernel.
class KernelBuilder {
public:
  explicit KernelBuilder(uint64_t seed) : rng_(seed * 0x2545F4914F6CDD1Dull + 0x1234567) { out_.seed = seed; }
  /// A builder whose choices come from `choices` and whose input data from a generator of its own.
  KernelBuilder(const uint8_t *choices, size_t size)
      : rng_(choices, size), ownData_(std::make_unique<Rng>(size)), data_(ownData_.get()) {}

  GeneratedKernel build();

private:
  Rng rng_;
  /// The generator of input elements: rng_ itself for seeded kernels (as they always were), a
  /// separate one for kernels read from a tape of choices.
  std::unique_ptr<Rng> ownData_;
  Rng *data_ = &rng_;
  GeneratedKernel out_;
  int rank_ = 1;
  Shape full_;
  std::vector<Expr> pool_;
  /// Variables not yet used by any expression (preferred as leaves, so that little is dead code).
  std::vector<Expr> unused_;
  std::vector<std::string> body_;
  std::vector<std::string> params_, sig_, constexprs_, constexprSig_;
  int indent_ = 1;
  int nextVar_ = 0;
  int maxDepth_ = 3;

  void line(const std::string &s) { body_.push_back(std::string(4 * indent_, ' ') + s); }
  std::string fresh(const char *prefix) { return prefix + std::to_string(nextVar_++); }

  std::string shapeText(const Shape &s) {
    std::string r = "[";
    for (size_t d = 0; d < s.size(); ++d)
      r += (d ? ", " : "") + std::to_string(s[d]);
    return r + "]";
  }

  DType randomDType(bool allowWide = true) {
    static const std::vector<DType> common = {DType::I32, DType::I32, DType::F32, DType::F32, DType::I64,
                                              DType::F16, DType::I8,  DType::I16, DType::U32, DType::U8,
                                              DType::BF16, DType::F64};
    DType t = rng_.pick(common);
    if (!allowWide && (t == DType::F64 || t == DType::I64))
      t = DType::I32;
    return t;
  }

  // --- Data -----------------------------------------------------------------------------------

  /// Bits of a random element of dtype t: small values mostly, boundary values and (floats) signed
  /// zeros, infinities and NaN sometimes.
  uint64_t randomBits(DType t) {
    if (t == DType::I1)
      return uint64_t(data_->range(0, 1));
    if (ir::isInteger(t)) {
      unsigned w = ir::bitWidth(t);
      uint64_t mask = w >= 64 ? ~0ull : (1ull << w) - 1;
      int64_t v;
      if (data_->chance(0.04)) {
        static const int64_t specials[] = {0, -1, 1, 2, 7};
        v = specials[data_->range(0, 4)];
        if (data_->chance(0.5))
          return ir::isSigned(t) ? (data_->chance(0.5) ? (1ull << (w - 1)) : (1ull << (w - 1)) - 1) & mask : mask;
      } else if (data_->chance(0.1)) {
        return data_->next() & mask; // any value: wrap-around and large shifts
      } else {
        v = ir::isSigned(t) ? data_->range(-20, 20) : data_->range(0, 40);
      }
      return uint64_t(v) & mask;
    }
    long double v;
    if (data_->chance(0.03)) {
      static const long double specials[] = {0.0L, -0.0L, INFINITY, -INFINITY, NAN, 65504.0L, 1e-6L};
      v = specials[data_->range(0, 6)];
    } else {
      v = (long double)data_->range(-400, 400) / 64;
    }
    return floatToBits(roundToFloat(v, t), t);
  }

  std::string addPointer(const std::string &name, DType t, const Shape &shape, bool input) {
    KernelArg a;
    a.name = name;
    a.isPointer = true;
    a.dtype = t;
    a.shape = shape;
    size_t n = 1;
    for (int64_t d : shape)
      n *= size_t(d);
    unsigned eb = ir::storageBytes(t);
    a.bytes.assign(n * eb, 0xA5); // outputs: a pattern, so that unwritten elements are compared too
    if (input)
      for (size_t k = 0; k < n; ++k) {
        uint64_t bits = randomBits(t);
        std::memcpy(&a.bytes[k * eb], &bits, eb);
      }
    params_.push_back(name);
    sig_.push_back(std::string("*") + ir::name(t) + (rng_.chance(0.5) ? ":16" : ""));
    out_.args.push_back(std::move(a));
    return name;
  }

  std::string addScalar(const std::string &name, DType t, uint64_t bits) {
    KernelArg a;
    a.name = name;
    a.dtype = t;
    a.bits = bits;
    params_.push_back(name);
    sig_.push_back(ir::name(t));
    out_.args.push_back(std::move(a));
    return name;
  }

  // --- Expressions ----------------------------------------------------------------------------

  Expr literalFor(DType partner, bool nonZero = false) {
    Expr e;
    e.literal = true;
    if (ir::isFloat(partner) && rng_.chance(0.8)) {
      static const char *floats[] = {"0.5", "1.5", "2.0", "-1.25", "3.0", "0.0", "-0.5", "100.0"};
      e.s = floats[rng_.range(nonZero ? 0 : 0, nonZero ? 4 : 7)];
      e.t = DType::F32;
      return e;
    }
    int64_t v = ir::isUnsigned(partner) ? rng_.range(nonZero ? 1 : 0, 9) : rng_.range(-5, 9);
    if (nonZero && v == 0)
      v = 3;
    e.t = DType::I32;
    e.negativeLiteral = v < 0;
    e.s = v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
    return e;
  }

  Expr leaf() {
    if (rng_.chance(0.1))
      return literalFor(randomDType());
    if (!unused_.empty() && rng_.chance(0.6)) {
      Expr e = unused_.back();
      unused_.pop_back();
      return e;
    }
    return rng_.pick(pool_);
  }

  Expr cast(const Expr &e, DType t) {
    Expr r = e;
    if (e.literal) {
      // A literal is cast through a tensor of its own type: tl.full([], v, dtype) is not
      // needed; the expression form works for numbers too.
      r.s = "tl.full(" + shapeText(full_) + ", " + e.s + ", " + tlName(t) + ")";
      r.shape = full_;
      r.literal = false;
      r.negativeLiteral = false;
      r.t = t;
      return r;
    }
    r.s = e.s + ".to(" + tlName(t) + ")";
    r.t = t;
    return r;
  }

  /// `e` as an integer (not i1) expression.
  Expr asInt(const Expr &e) {
    if (isInt(e.t))
      return e;
    static const std::vector<DType> ints = {DType::I32, DType::I32, DType::I64, DType::I16, DType::U32, DType::I8, DType::U8};
    return cast(e, rng_.pick(ints));
  }
  /// `e` as a numeric (not i1) expression.
  Expr asNumeric(const Expr &e) { return e.t == DType::I1 ? cast(e, DType::I32) : e; }
  /// `e` as a tensor (literals become full tiles).
  Expr asTensor(const Expr &e) { return e.literal ? cast(e, e.t) : e; }

  Expr binary(const Expr &a, const Expr &b, const std::string &op, DType t) {
    Expr r;
    r.s = "(" + a.s + " " + op + " " + b.s + ")";
    r.t = t;
    r.shape = broadcastShapes(a.shape, b.shape);
    return r;
  }

  /// A second operand for `a`: another expression or (sometimes) a literal.
  Expr operandFor(const Expr &a, int depth, bool nonZeroLiteral = false) {
    if (!a.literal && rng_.chance(0.25)) {
      Expr l = literalFor(a.t, nonZeroLiteral);
      return l;
    }
    return asTensor(gen(depth));
  }

  Expr condition(int depth) {
    if (depth > 0 && rng_.chance(0.2)) {
      Expr a = condition(depth - 1), b = condition(depth - 1);
      const char *ops[] = {"&", "|", "^"};
      return binary(a, b, ops[rng_.range(0, 2)], DType::I1);
    }
    Expr a = asNumeric(asTensor(gen(depth)));
    Expr b = operandFor(a, depth);
    if (b.t == DType::I1)
      b = cast(b, DType::I32);
    if (b.literal && b.negativeLiteral && ir::isUnsigned(a.t))
      b = literalFor(a.t);
    const char *ops[] = {"<", "<=", ">", ">=", "==", "!="};
    return binary(a, b, ops[rng_.range(0, 5)], DType::I1);
  }

  Expr gen(int depth) {
    if (depth <= 0 || rng_.chance(0.25))
      return asTensor(leaf());
    int choice = int(rng_.range(0, 19));
    switch (choice) {
    case 0: case 1: case 2: { // + - *
      Expr a = asNumeric(gen(depth - 1));
      Expr b = operandFor(a, depth - 1);
      if (b.t == DType::I1)
        b = cast(b, DType::I32);
      if (b.literal && b.negativeLiteral && ir::isUnsigned(a.t))
        b = literalFor(a.t);
      const char *ops[] = {"+", "-", "*"};
      return binary(a, b, ops[choice], promote(a, b, false));
    }
    case 3: { // true division
      Expr a = asNumeric(gen(depth - 1));
      Expr b = operandFor(a, depth - 1, true);
      if (b.t == DType::I1)
        b = cast(b, DType::I32);
      if (b.literal && b.negativeLiteral && ir::isUnsigned(a.t))
        b = literalFor(a.t, true);
      if (!b.literal && isInt(a.t) && isInt(b.t) && ir::isSigned(a.t) != ir::isSigned(b.t))
        b = cast(b, a.t);
      DType t = promote(a, b, true);
      return binary(a, b, "/", ir::isInteger(t) ? DType::F32 : t);
    }
    case 4: { // // and % on integers, % on floats
      Expr a = asNumeric(gen(depth - 1));
      bool floatMod = ir::isFloat(a.t) && rng_.chance(0.5);
      if (!floatMod)
        a = asInt(a);
      Expr b = operandFor(a, depth - 1, true);
      if (floatMod) {
        if (b.t == DType::I1)
          b = cast(b, DType::I32);
        if (b.literal && b.negativeLiteral && ir::isUnsigned(a.t))
          b = literalFor(a.t, true);
        return binary(a, b, "%", promote(a, b, true));
      }
      if (b.literal && (b.t != DType::I32 || (b.negativeLiteral && ir::isUnsigned(a.t))))
        b = literalFor(a.t, true);
      if (!b.literal) {
        b = asInt(b);
        if (ir::isSigned(a.t) != ir::isSigned(b.t))
          b = cast(b, a.t);
      }
      return binary(a, b, rng_.chance(0.5) ? "//" : "%", promote(a, b, true));
    }
    case 5: case 6: { // bitwise and shifts
      Expr a = asInt(gen(depth - 1));
      Expr b = operandFor(a, depth - 1);
      if (b.literal && (b.t != DType::I32 || (b.negativeLiteral && ir::isUnsigned(a.t))))
        b = literalFor(a.t == DType::U8 ? DType::U8 : a.t);
      if (b.literal && b.t != DType::I32)
        b = literalFor(DType::U8);
      if (!b.literal)
        b = asInt(b);
      const char *ops[] = {"&", "|", "^", "<<", ">>"};
      return binary(a, b, ops[rng_.range(0, 4)], promote(a, b, false));
    }
    case 7: case 8: { // where
      Expr c = condition(depth - 1);
      Expr x = asNumeric(asTensor(gen(depth - 1))), y = asNumeric(asTensor(gen(depth - 1)));
      Expr r;
      r.s = "tl.where(" + c.s + ", " + x.s + ", " + y.s + ")";
      r.t = tensorPromote(x.t, y.t, false);
      r.shape = broadcastShapes(c.shape, broadcastShapes(x.shape, y.shape));
      return r;
    }
    case 9: { // unary
      Expr a = asNumeric(gen(depth - 1));
      int k = int(rng_.range(0, 2));
      Expr r = a;
      if (k == 0 && (ir::isFloat(a.t) || ir::isSigned(a.t)))
        r.s = "(-" + a.s + ")";
      else if (k == 1 && isInt(a.t))
        r.s = "(~" + a.s + ")";
      else
        r.s = "tl.abs(" + a.s + ")";
      return r;
    }
    case 10: { // maximum / minimum
      Expr a = asNumeric(gen(depth - 1)), b = asNumeric(gen(depth - 1));
      Expr r;
      r.s = std::string(rng_.chance(0.5) ? "tl.maximum(" : "tl.minimum(") + a.s + ", " + b.s + ")";
      r.t = tensorPromote(a.t, b.t, false);
      r.shape = broadcastShapes(a.shape, b.shape);
      return r;
    }
    case 11: { // math on fp32
      Expr a = asNumeric(gen(depth - 1));
      if (a.t != DType::F32)
        a = cast(a, DType::F32);
      int k = int(rng_.range(0, 3));
      Expr r = a;
      if (k == 0) {
        r.s = "tl.sqrt(" + a.s + ")";
      } else if (k == 1) {
        r.s = "tl.exp(" + a.s + ")";
        out_.approximate = true;
      } else if (k == 2) {
        r.s = "tl.log(" + a.s + ")";
        out_.approximate = true;
      } else {
        r.s = "tl.sqrt(tl.abs(" + a.s + "))";
      }
      return r;
    }
    case 12: { // cast
      Expr a = gen(depth - 1);
      return cast(asTensor(a), randomDType());
    }
    case 13: case 14: { // reduction, kept in the expression's rank
      Expr a = asNumeric(gen(depth - 1));
      if (a.shape.empty())
        a = makeFull(a);
      int axis = int(rng_.range(0, rank_ - 1));
      int k = int(rng_.range(0, 2));
      Expr r;
      r.shape = a.shape;
      if (rank_ == 1) {
        r.shape = {};
        r.s = std::string(k == 0 ? "tl.sum(" : k == 1 ? "tl.max(" : "tl.min(") + a.s + ", axis=0)";
      } else {
        r.shape[size_t(axis)] = 1;
        r.s = std::string(k == 0 ? "tl.sum(" : k == 1 ? "tl.max(" : "tl.min(") + a.s + ", axis=" +
              std::to_string(axis) + ", keep_dims=True)";
      }
      DType t = a.t;
      if (k == 0) {
        if (isInt(t) && ir::bitWidth(t) < 32)
          t = ir::isSigned(t) ? DType::I32 : DType::U32;
      } else if (ir::storageBytes(t) < 4) {
        t = ir::isFloat(t) ? DType::F32 : DType::I32;
      }
      r.t = t;
      return r;
    }
    case 16: { // fma on fp32, umulhi on 32-bit integers
      if (rng_.chance(0.5)) {
        Expr a = cast(asTensor(gen(depth - 1)), DType::F32), b = cast(asTensor(gen(depth - 1)), DType::F32),
             c = cast(asTensor(gen(depth - 1)), DType::F32);
        Expr r = a;
        r.s = "tl.fma(" + a.s + ", " + b.s + ", " + c.s + ")";
        r.shape = broadcastShapes(a.shape, broadcastShapes(b.shape, c.shape));
        return r;
      }
      DType t = rng_.chance(0.5) ? DType::I32 : DType::U32;
      Expr a = cast(asTensor(gen(depth - 1)), t), b = cast(asTensor(gen(depth - 1)), t);
      Expr r = a;
      r.s = "tl.umulhi(" + a.s + ", " + b.s + ")";
      r.shape = broadcastShapes(a.shape, b.shape);
      return r;
    }
    case 17: { // shape ops on full tiles: flip, join + reduce over the new dim, reshape + trans
      Expr a = makeFull(gen(depth - 1));
      int k = int(rng_.range(0, rank_ == 2 ? 2 : 1));
      Expr r = a;
      if (k == 0) {
        r.s = "tl.flip(" + a.s + ", " + std::to_string(rng_.range(0, rank_ - 1)) + ")";
      } else if (k == 1) {
        Expr b = makeFull(gen(depth - 1));
        if (b.t != a.t)
          b = cast(b, a.t);
        const char *fn = rng_.chance(0.5) ? "tl.max(" : "tl.min(";
        r.s = std::string(fn) + "tl.join(" + a.s + ", " + b.s + "), axis=" + std::to_string(rank_) + ")";
        if (ir::storageBytes(a.t) < 4)
          r.t = ir::isFloat(a.t) ? DType::F32 : DType::I32;
      } else {
        r.s = "tl.trans(tl.reshape(" + a.s + ", " + shapeText({full_[1], full_[0]}) + "))";
      }
      return r;
    }
    case 18: { // casts that round toward zero, and cumprod
      Expr a = asNumeric(asTensor(gen(depth - 1)));
      if (rng_.chance(0.5)) {
        a = cast(a, DType::F32);
        DType t = rng_.chance(0.5) ? DType::F16 : DType::BF16;
        Expr r = a;
        r.s = a.s + ".to(" + tlName(t) + ", fp_downcast_rounding=\"rtz\")";
        r.t = t;
        return r;
      }
      if (a.shape.empty())
        a = makeFull(a);
      Expr r = a;
      r.s = "tl.cumprod(" + a.s + ", axis=" + std::to_string(rng_.range(0, rank_ - 1)) + ")";
      if (a.t == DType::BF16)
        r.t = DType::F32;
      return r;
    }
    default: { // cumsum
      Expr a = asNumeric(gen(depth - 1));
      if (a.shape.empty())
        a = makeFull(a);
      int axis = int(rng_.range(0, rank_ - 1));
      Expr r = a;
      bool reverse = rng_.chance(0.3);
      r.s = "tl.cumsum(" + a.s + ", axis=" + std::to_string(axis) + (reverse ? ", reverse=True" : "") + ")";
      if (a.t == DType::BF16)
        r.t = DType::F32;
      else if (isInt(a.t) && ir::bitWidth(a.t) < 32)
        r.t = ir::isSigned(a.t) ? DType::I32 : DType::U32;
      return r;
    }
    }
  }

  /// `e` broadcast to the full tile shape, same dtype (i1 becomes i32).
  Expr makeFull(Expr e) {
    e = asNumeric(asTensor(e));
    if (e.shape == full_)
      return e;
    Expr r = e;
    r.s = "(" + e.s + " + tl.zeros(" + shapeText(full_) + ", " + tlName(e.t) + "))";
    r.shape = full_;
    return r;
  }

  /// Assigns `e` to a fresh variable and adds it to the pool.
  Expr bindVar(const Expr &e, const char *prefix = "v") {
    Expr v = e;
    v.s = fresh(prefix);
    line(v.s + " = " + e.s);
    pool_.push_back(v);
    unused_.push_back(v);
    return v;
  }

  // --- Statements -----------------------------------------------------------------------------

  void genLoop(int nesting) {
    Expr init = makeFull(gen(maxDepth_ - 1));
    DType t = init.t;
    Expr second = makeFull(gen(maxDepth_ - 1));
    bindVar(cast(second, second.t), "acc"); // pool_[poolSize - 2] inside the body
    Expr acc = bindVar(cast(init, t), "acc");
    std::string iv = fresh("i");
    std::string bounds;
    int form = int(rng_.range(0, 3));
    if (form == 0)
      bounds = "kn";
    else if (form == 1)
      bounds = "1, kn + 1, 2";
    else if (form == 2)
      bounds = std::to_string(rng_.range(0, 3));
    else
      bounds = "si, si + 3";
    bool whileLoop = rng_.chance(0.2);
    if (whileLoop) {
      line(iv + " = si");
      line("while " + iv + " < si + kn:");
    } else {
      line("for " + iv + " in range(" + bounds + "):");
    }
    ++indent_;
    size_t poolSize = pool_.size();
    Expr ivE;
    ivE.s = iv;
    ivE.t = DType::I32;
    pool_.push_back(ivE);
    if (nesting == 0 && rng_.chance(0.15))
      genLoop(nesting + 1);
    if (rng_.chance(0.3))
      bindVar(gen(maxDepth_ - 1));
    // A second carried tile, sometimes, updated from the first while the first is updated from
    // it (a swap: the new values must be computed from the old ones).
    bool pair = rng_.chance(0.3);
    Expr other;
    if (pair) {
      other = pool_[poolSize - 2]; // acc2, bound before the loop (see below)
    }
    std::string update = carriedUpdate(acc, pair ? &other : nullptr);
    if (pair) {
      std::string update2 = carriedUpdate(other, &acc);
      line(acc.s + ", " + other.s + " = (" + update + ").to(" + tlName(t) + "), (" + update2 + ").to(" +
           tlName(other.t) + ")");
    } else {
      line(acc.s + " = (" + update + ").to(" + tlName(t) + ")");
    }
    if (whileLoop)
      line(iv + " += 1");
    pool_.resize(poolSize); // values of the body do not outlive it (except the carried one)
    dropOutOfScope();
    --indent_;
  }

  /// The next value of carried tile `acc`: a function of its old value (itself, flipped, scanned,
  /// or minus its reduction, which read other elements than the one written), of `partner`
  /// (another carried tile) when given, and of a random expression.
  std::string carriedUpdate(const Expr &acc, const Expr *partner) {
    std::string self = acc.s;
    int axis = int(rng_.range(0, rank_ - 1));
    switch (rng_.range(0, 5)) {
    case 0: self = "tl.flip(" + acc.s + ", " + std::to_string(axis) + ")"; break;
    case 1: self = "tl.cumsum(" + acc.s + ", axis=" + std::to_string(axis) + ")"; break;
    case 2:
      self = "(" + acc.s + " - tl.max(" + acc.s + ", axis=" + std::to_string(axis) +
             (rank_ == 2 ? ", keep_dims=True))" : "))");
      break;
    case 3:
      if (rank_ == 2 && full_[0] == full_[1])
        self = "tl.trans(" + acc.s + ")";
      break;
    default: break;
    }
    Expr step = partner && rng_.chance(0.7) ? *partner : asNumeric(gen(maxDepth_ - 1));
    if (rng_.chance(0.25)) {
      Expr c = condition(1);
      return "tl.where(" + c.s + ", " + makeFull(step).s + ", " + self + ")";
    }
    const char *ops[] = {"+", "-", "*", "^", "|"};
    int k = int(rng_.range(0, isInt(acc.t) && isInt(step.t) ? 4 : 2));
    return "(" + self + " " + ops[k] + " " + step.s + ")";
  }

  void genIf() {
    Expr c;
    int form = int(rng_.range(0, 2));
    if (form == 0)
      c.s = "si > " + std::to_string(rng_.range(-3, 6));
    else if (form == 1)
      c.s = (rank_ == 1 ? "pid" : "pid_m") + std::string(" % 2 == 0");
    else {
      Expr a = asNumeric(gen(1));
      if (a.shape.empty())
        a = makeFull(a);
      c.s = "tl.sum(" + (rank_ == 1 ? a.s : "tl.sum(" + a.s + ", axis=1)") + ", axis=0) > 0";
    }
    Expr a = makeFull(gen(maxDepth_ - 1));
    DType t = a.t;
    std::string v = fresh("w");
    line("if " + c.s + ":");
    ++indent_;
    size_t poolSize = pool_.size();
    if (rng_.chance(0.3))
      bindVar(gen(1));
    line(v + " = " + cast(a, t).s);
    pool_.resize(poolSize);
    dropOutOfScope();
    --indent_;
    line("else:");
    ++indent_;
    Expr b = makeFull(gen(maxDepth_ - 1));
    line(v + " = " + cast(b, t).s);
    --indent_;
    Expr ve;
    ve.s = v;
    ve.t = t;
    ve.shape = full_;
    pool_.push_back(ve);
    unused_.push_back(ve);
  }

  /// Removes from unused_ the variables no longer in the pool (defined in a finished region).
  void dropOutOfScope() {
    std::vector<Expr> keep;
    for (const Expr &u : unused_)
      for (const Expr &p : pool_)
        if (p.s == u.s) {
          keep.push_back(u);
          break;
        }
    unused_ = keep;
  }
};

GeneratedKernel KernelBuilder::build() {
  rank_ = rng_.chance(0.5) ? 1 : 2;
  maxDepth_ = int(rng_.range(2, 4));
  out_.kernelName = "difftest_" + std::to_string(out_.seed);
  int nInputs = int(rng_.range(1, 3));
  std::vector<DType> inTypes;
  for (int k = 0; k < nInputs; ++k)
    inTypes.push_back(randomDType());

  // Sizes and grid.
  int64_t B = 0, BM = 0, BN = 0, n = 0, M = 0, N = 0;
  if (rank_ == 1) {
    B = int64_t(1) << rng_.range(2, 7);
    uint32_t g = uint32_t(rng_.range(1, 3));
    n = rng_.range(int64_t(g - 1) * B + 1, int64_t(g) * B);
    out_.grid = {g, 1, 1};
    full_ = {B};
  } else {
    BM = int64_t(1) << rng_.range(0, 4);
    BN = int64_t(1) << rng_.range(1, 5);
    uint32_t gm = uint32_t(rng_.range(1, 2)), gn = uint32_t(rng_.range(1, 2));
    M = rng_.range(int64_t(gm - 1) * BM + 1, int64_t(gm) * BM);
    N = rng_.range(int64_t(gn - 1) * BN + 1, int64_t(gn) * BN);
    out_.grid = {gm, gn, 1};
    full_ = {BM, BN};
  }
  Shape dataShape = rank_ == 1 ? Shape{n} : Shape{M, N};

  // Parameters: outputs, inputs, vectors (2-D), scalars, constexprs.
  int nOutputs = int(rng_.range(1, 2));
  std::vector<std::string> outs;
  std::vector<DType> outTypes;
  for (int k = 0; k < nOutputs; ++k) {
    outTypes.push_back(randomDType());
    outs.push_back(addPointer("out" + std::to_string(k), outTypes.back(), dataShape, false));
  }
  bool reduceOut = rng_.chance(0.6);
  DType redType = randomDType();
  std::string red;
  if (reduceOut)
    red = addPointer("red", redType, rank_ == 1 ? Shape{int64_t(out_.grid[0])} : Shape{int64_t(out_.grid[1]), M}, false);
  std::vector<std::string> ins;
  for (int k = 0; k < nInputs; ++k)
    ins.push_back(addPointer("in" + std::to_string(k), inTypes[size_t(k)], dataShape, true));
  DType rowT = randomDType(), colT = randomDType();
  if (rank_ == 2) {
    addPointer("rowv", rowT, {M}, true);
    addPointer("colv", colT, {N}, true);
  }
  if (rank_ == 1) {
    addScalar("n", DType::I32, uint64_t(n));
  } else {
    addScalar("M", DType::I32, uint64_t(M));
    addScalar("N", DType::I32, uint64_t(N));
  }
  addScalar("si", DType::I32, uint64_t(int64_t(rng_.range(-4, 8))) & 0xffffffffu);
  float sf = float(rng_.range(-40, 40)) / 8.0f;
  uint32_t sfBits;
  std::memcpy(&sfBits, &sf, 4);
  addScalar("sf", DType::F32, sfBits);
  addScalar("kn", DType::I32, uint64_t(rng_.range(0, 4)));

  // Prologue: offsets, mask, loads.
  if (rank_ == 1) {
    line("pid = tl.program_id(0)");
    line("offs = pid * B + tl.arange(0, B)");
    line("mask = offs < n");
    pool_.push_back({"offs", DType::I32, full_});
    pool_.push_back({"pid", DType::I32, {}});
  } else {
    line("pid_m = tl.program_id(0)");
    line("pid_n = tl.program_id(1)");
    line("rm = pid_m * BM + tl.arange(0, BM)");
    line("rn = pid_n * BN + tl.arange(0, BN)");
    line("mask = (rm[:, None] < M) & (rn[None, :] < N)");
    line("offs = rm[:, None] * N + rn[None, :]");
    pool_.push_back({"rm[:, None]", DType::I32, {BM, 1}});
    pool_.push_back({"rn[None, :]", DType::I32, {1, BN}});
    pool_.push_back({"pid_n", DType::I32, {}});
  }
  pool_.push_back({"si", DType::I32, {}});
  pool_.push_back({"sf", DType::F32, {}});
  for (int k = 0; k < nInputs; ++k) {
    DType t = inTypes[size_t(k)];
    std::string x = "x" + std::to_string(k);
    std::string other;
    if (rng_.chance(0.6)) {
      Expr lit = literalFor(t);
      if (ir::isUnsigned(t) && lit.negativeLiteral)
        lit = literalFor(DType::U8);
      other = ", other=" + lit.s;
    }
    line(x + " = tl.load(" + ins[size_t(k)] + " + offs, mask=mask" + other + ")");
    pool_.push_back({x, t, full_});
  }
  if (rank_ == 2) {
    line("r0 = tl.load(rowv + rm, mask=rm < M" + std::string(rng_.chance(0.5) ? ", other=1" : "") + ")");
    line("c0 = tl.load(colv + rn, mask=rn < N)");
    pool_.push_back({"r0[:, None]", rowT, {BM, 1}});
    pool_.push_back({"c0[None, :]", colT, {1, BN}});
  }

  // Body: assignments, loops, ifs.
  int stmts = int(rng_.range(1, 4));
  for (int k = 0; k < stmts; ++k) {
    double p = rng_.unit();
    if (p < 0.25)
      genLoop(0);
    else if (p < 0.4)
      genIf();
    else
      bindVar(gen(maxDepth_));
  }

  // Stores.
  for (int k = 0; k < nOutputs; ++k) {
    Expr e = makeFull(gen(maxDepth_));
    line("tl.store(" + outs[size_t(k)] + " + offs, " + e.s + ", mask=mask)");
  }
  if (reduceOut) {
    Expr e = asNumeric(makeFull(gen(maxDepth_)));
    const char *fn = rng_.chance(0.5) ? "tl.sum(" : rng_.chance(0.5) ? "tl.max(" : "tl.min(";
    if (rank_ == 1)
      line("tl.store(red + pid, " + std::string(fn) + e.s + ", axis=0))");
    else
      line("tl.store(red + pid_n * M + rm, " + std::string(fn) + e.s + ", axis=1), mask=rm < M)");
  }

  // The source file.
  std::ostringstream src;
  src << "# A kernel generated by tle-difftest, seed " << out_.seed << ".\n";
  src << "import triton\nimport triton.language as tl\n\n\n@triton.jit\n";
  src << "def " << out_.kernelName << "(";
  std::vector<std::string> all = params_;
  std::string sig;
  for (size_t k = 0; k < sig_.size(); ++k)
    sig += (k ? ", " : "") + sig_[k];
  if (rank_ == 1) {
    all.push_back("B: tl.constexpr");
    sig += ", " + std::to_string(B);
  } else {
    all.push_back("BM: tl.constexpr");
    all.push_back("BN: tl.constexpr");
    sig += ", " + std::to_string(BM) + ", " + std::to_string(BN);
  }
  for (size_t k = 0; k < all.size(); ++k)
    src << (k ? ", " : "") << all[k];
  src << "):\n";
  for (auto &l : body_)
    src << l << "\n";
  out_.source = src.str();
  out_.signature = sig;
  return out_;
}

} // namespace

GeneratedKernel generateKernel(uint64_t seed) { return KernelBuilder(seed).build(); }

GeneratedKernel generateKernelFromChoices(const uint8_t *choices, size_t size) {
  return KernelBuilder(choices, size).build();
}

} // namespace tle::difftest
