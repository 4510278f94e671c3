// The reference interpreter of the tile IR (Interpreter.h). Every value is a row-major array of
// elements: integers, i1 and pointers as 64-bit patterns (sign-extended for signed dtypes,
// zero-extended otherwise), floats as long double holding the exact value of the dtype.
#include "Interpreter.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

namespace tle::difftest {

using ir::Block;
using ir::DType;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {

// --- Floats ---------------------------------------------------------------------------------

/// An IEEE binary format: explicit mantissa bits, exponent bits, and the exponent range of its
/// normal numbers.
struct FloatFormat {
  int mant, expBits, emin, emax;
};

FloatFormat formatOf(DType t) {
  switch (t) {
  case DType::F16: return {10, 5, -14, 15};
  case DType::BF16: return {7, 8, -126, 127};
  case DType::F32: return {23, 8, -126, 127};
  case DType::F64: return {52, 11, -1022, 1023};
  default: throw InterpError("internal error: " + std::string(ir::name(t)) + " is not a float dtype");
  }
}

} // namespace

long double roundToFloat(long double x, DType t, bool towardZero) {
  FloatFormat f = formatOf(t);
  if (std::isnan(x) || std::isinf(x) || x == 0)
    return x;
  long double ax = std::fabs(x);
  int e = 0;
  std::frexp(ax, &e);
  int E = std::max(e - 1, f.emin); // ax in [2^(e-1), 2^e); subnormals share emin's quantum
  long double quantum = std::ldexp(1.0L, E - f.mant);
  long double q = ax / quantum; // exact: a power-of-two scaling
  long double r = towardZero ? std::trunc(q) : std::nearbyint(q); // default mode: ties to even
  long double v = r * quantum;
  long double maxFinite = std::ldexp(2.0L - std::ldexp(1.0L, -f.mant), f.emax);
  if (v > maxFinite)
    v = towardZero ? maxFinite : std::numeric_limits<long double>::infinity();
  return std::copysign(v, x);
}

uint64_t floatToBits(long double x, DType t) {
  FloatFormat f = formatOf(t);
  uint64_t sign = std::signbit(x) ? 1 : 0;
  uint64_t expAll = (uint64_t(1) << f.expBits) - 1;
  uint64_t exp = 0, mant = 0;
  if (std::isnan(x)) {
    exp = expAll;
    mant = uint64_t(1) << (f.mant - 1);
  } else if (std::isinf(x)) {
    exp = expAll;
  } else if (x != 0) {
    long double ax = std::fabs(x);
    int e = 0;
    std::frexp(ax, &e);
    int E = e - 1;
    if (E < f.emin) { // subnormal
      mant = uint64_t(ax / std::ldexp(1.0L, f.emin - f.mant));
    } else {
      exp = uint64_t(E + f.emax); // the bias equals emax
      mant = uint64_t((ax / std::ldexp(1.0L, E) - 1) * std::ldexp(1.0L, f.mant));
    }
  }
  return (sign << (f.mant + f.expBits)) | (exp << f.mant) | mant;
}

long double floatFromBits(uint64_t bits, DType t) {
  FloatFormat f = formatOf(t);
  uint64_t expAll = (uint64_t(1) << f.expBits) - 1;
  bool sign = (bits >> (f.mant + f.expBits)) & 1;
  uint64_t exp = (bits >> f.mant) & expAll;
  uint64_t mant = bits & ((uint64_t(1) << f.mant) - 1);
  long double v;
  if (exp == expAll)
    v = mant ? std::numeric_limits<long double>::quiet_NaN() : std::numeric_limits<long double>::infinity();
  else if (exp == 0)
    v = std::ldexp(static_cast<long double>(mant), f.emin - f.mant);
  else
    v = std::ldexp(1.0L + std::ldexp(static_cast<long double>(mant), -f.mant), int(exp) - f.emax);
  return sign ? -v : v;
}

namespace {

// --- Values ---------------------------------------------------------------------------------

/// A scalar (shape []) or a tile: one element per entry of `i` (integers, i1, pointers) or of
/// `f` (floats), row-major.
struct Tensor {
  Type type;
  std::vector<uint64_t> i;
  std::vector<long double> f;

  bool isFloatT() const { return ir::isFloat(type.dtype()); }
  size_t size() const { return isFloatT() ? f.size() : i.size(); }
};

size_t countOf(const Type &t) { return static_cast<size_t>(t.numElements()); }

Tensor makeTensor(const Type &t) {
  Tensor r;
  r.type = t;
  if (ir::isFloat(t.dtype()))
    r.f.assign(countOf(t), 0.0L);
  else
    r.i.assign(countOf(t), 0);
  return r;
}

/// `v` truncated to the width of `t` and sign- or zero-extended by its signedness.
uint64_t normInt(uint64_t v, DType t) {
  if (t == DType::I1)
    return v & 1;
  unsigned w = t == DType::Ptr ? 64 : ir::bitWidth(t);
  if (w >= 64)
    return v;
  uint64_t m = (uint64_t(1) << w) - 1;
  v &= m;
  if (ir::isSigned(t) && ((v >> (w - 1)) & 1))
    v |= ~m;
  return v;
}

/// The real value of integer element bits `v` of dtype `t`.
long double intValue(uint64_t v, DType t) {
  return ir::isSigned(t) ? static_cast<long double>(static_cast<int64_t>(v)) : static_cast<long double>(v);
}

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    s[d - 1] = s[d] * shape[d];
  return s;
}

/// The multi-index of flat index `flat` in `shape`.
std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t> &shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

int64_t flatten(const std::vector<int64_t> &idx, const std::vector<int64_t> &shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + idx[d];
  return flat;
}

/// Copies element `from` of `src` to element `to` of `dst` (same dtype).
void copyElem(Tensor &dst, size_t to, const Tensor &src, size_t from) {
  if (dst.isFloatT())
    dst.f[to] = src.f[from];
  else
    dst.i[to] = src.i[from];
}

std::string where(const Op &op) {
  return "'" + std::string(ir::name(op.kind)) + "' at line " + std::to_string(op.loc.line);
}

bool supported(OpKind k) {
  switch (k) {
  case OpKind::ExternCall: case OpKind::AtomicRMW: case OpKind::AtomicCAS: case OpKind::ConvertLayout:
  case OpKind::Dot: case OpKind::Print: case OpKind::Assert:
    return false;
  default:
    return true;
  }
}

// --- Elementwise semantics --------------------------------------------------------------------

/// Float binary ops: fp64 in double, fp32 in float, fp16 / bf16 in float rounded to the dtype.
long double floatBinary(OpKind k, long double a, long double b, DType t, const Op &op) {
  if (t == DType::F64) {
    double x = double(a), y = double(b);
    switch (k) {
    case OpKind::Add: return x + y;
    case OpKind::Sub: return x - y;
    case OpKind::Mul: return x * y;
    case OpKind::FDiv: return x / y;
    case OpKind::FRem: return std::fmod(x, y);
    case OpKind::Max: return std::fmax(x, y);
    case OpKind::Min: return std::fmin(x, y);
    default: break;
    }
  } else {
    float x = float(a), y = float(b), r;
    switch (k) {
    case OpKind::Add: r = x + y; break;
    case OpKind::Sub: r = x - y; break;
    case OpKind::Mul: r = x * y; break;
    case OpKind::FDiv: r = x / y; break;
    case OpKind::FRem: r = std::fmod(x, y); break;
    case OpKind::Max: r = std::fmax(x, y); break;
    case OpKind::Min: r = std::fmin(x, y); break;
    default: throw InterpError(where(op) + " on " + ir::name(t) + " is not supported by the reference interpreter");
    }
    return t == DType::F32 ? r : roundToFloat(r, t);
  }
  throw InterpError(where(op) + " on " + ir::name(t) + " is not supported by the reference interpreter");
}

/// Integer binary ops on normalised bits of dtype `t`.
uint64_t intBinary(OpKind k, uint64_t a, uint64_t b, DType t, const Op &op) {
  unsigned w = t == DType::I1 ? 1 : ir::bitWidth(t);
  bool s = ir::isSigned(t);
  uint64_t mask = w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
  int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
  uint64_t minVal = normInt(uint64_t(1) << (w - 1), t); // INT_MIN of a signed dtype
  switch (k) {
  case OpKind::Add: return normInt(a + b, t);
  case OpKind::Sub: return normInt(a - b, t);
  case OpKind::Mul: return normInt(a * b, t);
  case OpKind::And: return normInt(a & b, t);
  case OpKind::Or: return normInt(a | b, t);
  case OpKind::Xor: return normInt(a ^ b, t);
  case OpKind::IDiv:
    if (b == 0)
      return 0;
    if (s) {
      if (a == minVal && sb == -1)
        return a;
      return normInt(static_cast<uint64_t>(sa / sb), t);
    }
    return normInt(a / b, t);
  case OpKind::IRem:
    if (b == 0)
      return 0;
    if (s) {
      if (a == minVal && sb == -1)
        return 0;
      return normInt(static_cast<uint64_t>(sa % sb), t);
    }
    return normInt(a % b, t);
  case OpKind::Shl: {
    uint64_t amount = b & mask;
    return amount >= w ? 0 : normInt(a << amount, t);
  }
  case OpKind::Shr: {
    uint64_t amount = b & mask;
    if (s) {
      if (amount >= w)
        return sa < 0 ? normInt(~uint64_t(0), t) : 0;
      return normInt(static_cast<uint64_t>(sa >> amount), t);
    }
    return amount >= w ? 0 : normInt((a & mask) >> amount, t);
  }
  case OpKind::Max: return (s ? sa >= sb : a >= b) ? a : b;
  case OpKind::Min: return (s ? sa <= sb : a <= b) ? a : b;
  case OpKind::UMulHi: {
    unsigned __int128 p = static_cast<unsigned __int128>(a & mask) * (b & mask);
    return normInt(static_cast<uint64_t>(p >> w), t);
  }
  default:
    throw InterpError(where(op) + " on " + ir::name(t) + " is not supported by the reference interpreter");
  }
}

bool compare(ir::CmpPred p, int c) {
  switch (p) {
  case ir::CmpPred::Eq: return c == 0;
  case ir::CmpPred::Ne: return c != 0;
  case ir::CmpPred::Lt: return c < 0;
  case ir::CmpPred::Le: return c <= 0;
  case ir::CmpPred::Gt: return c > 0;
  case ir::CmpPred::Ge: return c >= 0;
  }
  return false;
}

/// Float unary math in the dtype's precision (fp16 / bf16 through fp32).
long double floatUnary(OpKind k, long double a, DType t, const Op &op) {
  if (k == OpKind::Neg)
    return -a;
  if (k == OpKind::Abs)
    return std::fabs(a);
  if (t == DType::F64) {
    double x = double(a);
    switch (k) {
    case OpKind::Exp: return std::exp(x);
    case OpKind::Exp2: return std::exp2(x);
    case OpKind::Log: return std::log(x);
    case OpKind::Log2: return std::log2(x);
    case OpKind::Sqrt: return std::sqrt(x);
    case OpKind::Rsqrt: return 1.0 / std::sqrt(x);
    default: break;
    }
  } else {
    float x = float(a), r;
    switch (k) {
    case OpKind::Exp: r = std::exp(x); break;
    case OpKind::Exp2: r = std::exp2(x); break;
    case OpKind::Log: r = std::log(x); break;
    case OpKind::Log2: r = std::log2(x); break;
    case OpKind::Sqrt: r = std::sqrt(x); break;
    case OpKind::Rsqrt: r = 1.0f / std::sqrt(x); break;
    default: throw InterpError(where(op) + " on " + ir::name(t) + " is not supported by the reference interpreter");
    }
    return t == DType::F32 ? r : roundToFloat(r, t);
  }
  throw InterpError(where(op) + " on " + ir::name(t) + " is not supported by the reference interpreter");
}

/// Float -> integer: truncation toward zero, saturating, NaN -> 0; to i1: x != 0.
uint64_t floatToInt(long double x, DType to) {
  if (to == DType::I1)
    return x != 0 ? 1 : 0; // unordered: NaN gives 1
  if (std::isnan(x))
    return 0;
  long double t = std::trunc(x);
  unsigned w = ir::bitWidth(to);
  if (ir::isSigned(to)) {
    long double lo = -std::ldexp(1.0L, int(w) - 1), hi = std::ldexp(1.0L, int(w) - 1) - 1;
    if (t <= lo)
      return normInt(uint64_t(1) << (w - 1), to);
    if (t >= hi)
      return normInt((uint64_t(1) << (w - 1)) - 1, to);
    return normInt(static_cast<uint64_t>(static_cast<int64_t>(t)), to);
  }
  long double hi = std::ldexp(1.0L, int(w)) - 1;
  if (t <= 0)
    return 0;
  if (t >= hi)
    return w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
  return static_cast<uint64_t>(t);
}

// --- Memory -----------------------------------------------------------------------------------

struct Memory {
  std::vector<std::pair<uint64_t, uint64_t>> ranges; ///< [begin, end) of every buffer argument

  /// Checks that the `bytes` at `addr` lie inside one buffer.
  void check(uint64_t addr, unsigned bytes, const Op &op, const char *what) const {
    for (auto &[b, e] : ranges)
      if (addr >= b && addr <= e && e - addr >= bytes)
        return;
    throw InterpError(where(op) + ": " + what + " of " + std::to_string(bytes) +
                      " bytes outside every buffer passed to the kernel");
  }
};

/// Reads one element of dtype `t` at `addr` into element `k` of `dst`.
void loadElem(Tensor &dst, size_t k, uint64_t addr, DType t) {
  unsigned n = ir::storageBytes(t);
  uint64_t bits = 0;
  std::memcpy(&bits, reinterpret_cast<const void *>(static_cast<uintptr_t>(addr)), n); // little-endian host
  if (ir::isFloat(t))
    dst.f[k] = floatFromBits(bits, t);
  else
    dst.i[k] = t == DType::I1 ? (bits & 0xff ? 1 : 0) : normInt(bits, t);
}

void storeElem(const Tensor &src, size_t k, uint64_t addr, DType t) {
  unsigned n = ir::storageBytes(t);
  uint64_t bits = ir::isFloat(t) ? floatToBits(src.f[k], t) : src.i[k];
  std::memcpy(reinterpret_cast<void *>(static_cast<uintptr_t>(addr)), &bits, n);
}

// --- The evaluator ----------------------------------------------------------------------------

/// Evaluates one program instance.
class Program {
public:
  Program(const ir::Function &f, const Memory &mem, std::array<uint32_t, 3> pid, std::array<uint32_t, 3> grid,
          uint64_t &work, uint64_t maxWork)
      : f_(f), mem_(mem), pid_(pid), grid_(grid), work_(work), maxWork_(maxWork) {}

  void run(const std::vector<InterpArg> &args) {
    for (size_t p = 0; p < f_.params.size(); ++p) {
      const Value *v = f_.body.args[p].get();
      Tensor t = makeTensor(v->type);
      DType d = v->type.dtype();
      if (d == DType::Ptr)
        t.i[0] = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(args[p].data));
      else if (ir::isFloat(d))
        t.f[0] = floatFromBits(args[p].bits, d);
      else
        t.i[0] = normInt(args[p].bits, d);
      env_[v] = std::move(t);
    }
    execBlock(f_.body);
  }

private:
  const ir::Function &f_;
  const Memory &mem_;
  std::array<uint32_t, 3> pid_, grid_;
  uint64_t &work_;
  uint64_t maxWork_;
  std::unordered_map<const Value *, Tensor> env_;
  bool returned_ = false;

  const Tensor &get(const Value *v) const {
    auto it = env_.find(v);
    if (it == env_.end())
      throw InterpError("internal error: a value is used before it is defined");
    return it->second;
  }

  void charge(const Op &op, uint64_t n) {
    work_ += n + 1;
    if (work_ > maxWork_)
      throw InterpError(where(op) + ": the run exceeds the interpreter's work limit of " +
                        std::to_string(maxWork_) + " element operations (a loop that does not end?)");
  }

  /// Runs the ops of `b` (its arguments already bound); returns the terminator's operands.
  std::vector<Tensor> execBlock(const Block &b) {
    for (auto &opp : b.ops) {
      const Op &op = *opp;
      if (op.kind == OpKind::Yield || op.kind == OpKind::Condition) {
        std::vector<Tensor> out;
        for (const Value *v : op.operands)
          out.push_back(get(v));
        return out;
      }
      if (op.kind == OpKind::Return) {
        returned_ = true;
        return {};
      }
      exec(op);
      if (returned_)
        return {};
    }
    return {};
  }

  void bind(const Block &b, std::vector<Tensor> vals) {
    for (size_t k = 0; k < b.args.size() && k < vals.size(); ++k)
      env_[b.args[k].get()] = std::move(vals[k]);
  }

  void setResults(const Op &op, std::vector<Tensor> vals) {
    for (size_t k = 0; k < op.results.size() && k < vals.size(); ++k)
      env_[op.result(k)] = std::move(vals[k]);
  }

  void exec(const Op &op) {
    if (!supported(op.kind))
      throw InterpError(where(op) + " is not supported by the reference interpreter");
    const Type *rt = op.results.empty() ? nullptr : &op.result()->type;
    charge(op, rt ? countOf(*rt) : 1);
    switch (op.kind) {
    case OpKind::Constant: {
      Tensor r = makeTensor(*rt);
      if (r.isFloatT())
        r.f[0] = roundToFloat(op.floatValue(), rt->dtype());
      else
        r.i[0] = normInt(static_cast<uint64_t>(op.intValue()), rt->dtype());
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::ProgramId: case OpKind::NumPrograms: {
      if (op.axis() < 0 || op.axis() > 2)
        throw InterpError(where(op) + ": axis out of range");
      Tensor r = makeTensor(*rt);
      r.i[0] = op.kind == OpKind::ProgramId ? pid_[op.axis()] : grid_[op.axis()];
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Arange: {
      Tensor r = makeTensor(*rt);
      for (size_t k = 0; k < r.i.size(); ++k)
        r.i[k] = normInt(static_cast<uint64_t>(op.arangeStart() + int64_t(k)), rt->dtype());
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Splat: {
      const Tensor &s = get(op.operands[0]);
      Tensor r = makeTensor(*rt);
      for (size_t k = 0; k < r.size(); ++k)
        copyElem(r, k, s, 0);
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::FDiv: case OpKind::IDiv:
    case OpKind::IRem: case OpKind::FRem: case OpKind::And: case OpKind::Or: case OpKind::Xor:
    case OpKind::Shl: case OpKind::Shr: case OpKind::Max: case OpKind::Min: case OpKind::UMulHi: {
      const Tensor &a = get(op.operands[0]), &b = get(op.operands[1]);
      Tensor r = makeTensor(*rt);
      DType t = rt->dtype();
      for (size_t k = 0; k < r.size(); ++k) {
        if (r.isFloatT())
          r.f[k] = floatBinary(op.kind, a.f[k], b.f[k], t, op);
        else
          r.i[k] = intBinary(op.kind, a.i[k], b.i[k], t, op);
      }
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Cmp: {
      const Tensor &a = get(op.operands[0]), &b = get(op.operands[1]);
      Tensor r = makeTensor(*rt);
      DType t = a.type.dtype();
      for (size_t k = 0; k < r.i.size(); ++k) {
        bool v;
        if (a.isFloatT()) {
          long double x = a.f[k], y = b.f[k];
          if (std::isnan(x) || std::isnan(y))
            v = op.predicate() == ir::CmpPred::Ne;
          else
            v = compare(op.predicate(), x < y ? -1 : x > y ? 1 : 0);
        } else if (ir::isSigned(t)) {
          int64_t x = int64_t(a.i[k]), y = int64_t(b.i[k]);
          v = compare(op.predicate(), x < y ? -1 : x > y ? 1 : 0);
        } else {
          v = compare(op.predicate(), a.i[k] < b.i[k] ? -1 : a.i[k] > b.i[k] ? 1 : 0);
        }
        r.i[k] = v;
      }
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Select: {
      const Tensor &c = get(op.operands[0]), &a = get(op.operands[1]), &b = get(op.operands[2]);
      Tensor r = makeTensor(*rt);
      for (size_t k = 0; k < r.size(); ++k)
        copyElem(r, k, c.i[k] ? a : b, k);
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Neg: case OpKind::Not: case OpKind::Abs: case OpKind::Exp: case OpKind::Exp2:
    case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt: {
      const Tensor &a = get(op.operands[0]);
      Tensor r = makeTensor(*rt);
      DType t = rt->dtype();
      for (size_t k = 0; k < r.size(); ++k) {
        if (r.isFloatT()) {
          r.f[k] = floatUnary(op.kind, a.f[k], t, op);
        } else if (op.kind == OpKind::Neg) {
          r.i[k] = normInt(0 - a.i[k], t);
        } else if (op.kind == OpKind::Not) {
          r.i[k] = normInt(~a.i[k], t);
        } else if (op.kind == OpKind::Abs) {
          r.i[k] = ir::isSigned(t) && int64_t(a.i[k]) < 0 ? normInt(0 - a.i[k], t) : a.i[k];
        } else {
          throw InterpError(where(op) + " on " + ir::name(t) + " is not supported by the reference interpreter");
        }
      }
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Fma: {
      const Tensor &a = get(op.operands[0]), &b = get(op.operands[1]), &c = get(op.operands[2]);
      Tensor r = makeTensor(*rt);
      DType t = rt->dtype();
      if (!r.isFloatT())
        throw InterpError(where(op) + " on " + ir::name(t) + " is not supported by the reference interpreter");
      for (size_t k = 0; k < r.size(); ++k) {
        if (t == DType::F64)
          r.f[k] = std::fma(double(a.f[k]), double(b.f[k]), double(c.f[k]));
        else if (t == DType::F32)
          r.f[k] = std::fma(float(a.f[k]), float(b.f[k]), float(c.f[k]));
        else // the 22-bit product is exact in long double; one more rounding to 64 bits is harmless
          r.f[k] = roundToFloat(a.f[k] * b.f[k] + c.f[k], t);
      }
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Cast: {
      const Tensor &a = get(op.operands[0]);
      Tensor r = makeTensor(*rt);
      DType from = a.type.dtype(), to = rt->dtype();
      if (from == DType::Ptr || to == DType::Ptr)
        throw InterpError(where(op) + " from " + ir::name(from) + " to " + ir::name(to) +
                          " is not supported by the reference interpreter");
      for (size_t k = 0; k < r.size(); ++k) {
        if (ir::isFloat(from) && ir::isFloat(to)) {
          bool narrowing = ir::bitWidth(to) < ir::bitWidth(from) || (from == DType::F16 && to == DType::BF16) ||
                           (from == DType::BF16 && to == DType::F16);
          r.f[k] = roundToFloat(a.f[k], to, op.roundsTowardZero() && narrowing);
        } else if (ir::isFloat(from)) {
          r.i[k] = floatToInt(a.f[k], to);
        } else if (ir::isFloat(to)) {
          r.f[k] = roundToFloat(intValue(a.i[k], from), to);
        } else {
          r.i[k] = to == DType::I1 ? (a.i[k] != 0 ? 1 : 0) : normInt(a.i[k], to);
        }
      }
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Bitcast: {
      const Tensor &a = get(op.operands[0]);
      Tensor r = makeTensor(*rt);
      DType from = a.type.dtype(), to = rt->dtype();
      for (size_t k = 0; k < r.size(); ++k) {
        uint64_t bits = ir::isFloat(from) ? floatToBits(a.f[k], from) : a.i[k];
        if (ir::isFloat(to))
          r.f[k] = floatFromBits(bits, to);
        else
          r.i[k] = normInt(bits, to);
      }
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::AddPtr: {
      const Tensor &p = get(op.operands[0]), &o = get(op.operands[1]);
      Tensor r = makeTensor(*rt);
      uint64_t size = ir::storageBytes(rt->elem.pointee);
      for (size_t k = 0; k < r.i.size(); ++k)
        r.i[k] = p.i[k] + o.i[k] * size; // o is sign- or zero-extended already; wraps mod 2^64
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Load: {
      const Tensor &p = get(op.operands[0]);
      const Tensor *mask = op.operands.size() > 1 ? &get(op.operands[1]) : nullptr;
      const Tensor *other = op.operands.size() > 2 ? &get(op.operands[2]) : nullptr;
      Tensor r = makeTensor(*rt);
      DType t = rt->dtype();
      for (size_t k = 0; k < r.size(); ++k) {
        if (mask && !mask->i[k]) {
          if (other)
            copyElem(r, k, *other, k);
          continue; // zero otherwise
        }
        mem_.check(p.i[k], ir::storageBytes(t), op, "load");
        loadElem(r, k, p.i[k], t);
      }
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Store: {
      const Tensor &p = get(op.operands[0]), &v = get(op.operands[1]);
      const Tensor *mask = op.operands.size() > 2 ? &get(op.operands[2]) : nullptr;
      DType t = v.type.dtype();
      for (size_t k = 0; k < p.i.size(); ++k) {
        if (mask && !mask->i[k])
          continue;
        mem_.check(p.i[k], ir::storageBytes(t), op, "store");
        storeElem(v, k, p.i[k], t);
      }
      return;
    }
    case OpKind::ExpandDims: case OpKind::Reshape: {
      // Row-major order is unchanged by inserting a size-1 dim or by a reshape.
      Tensor r = get(op.operands[0]);
      r.type = *rt;
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Broadcast: {
      const Tensor &a = get(op.operands[0]);
      Tensor r = makeTensor(*rt);
      const auto &in = a.type.shape;
      for (size_t k = 0; k < r.size(); ++k) {
        std::vector<int64_t> idx = unflatten(int64_t(k), rt->shape);
        for (size_t d = 0; d < idx.size(); ++d)
          if (in[d] == 1)
            idx[d] = 0;
        copyElem(r, k, a, size_t(flatten(idx, in)));
      }
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Permute: {
      const Tensor &a = get(op.operands[0]);
      Tensor r = makeTensor(*rt);
      for (size_t k = 0; k < r.size(); ++k) {
        std::vector<int64_t> idx = unflatten(int64_t(k), rt->shape), src(idx.size());
        for (size_t d = 0; d < idx.size(); ++d)
          src[size_t(op.permutation()[d])] = idx[d]; // result dim d is operand dim permutation()[d]
        copyElem(r, k, a, size_t(flatten(src, a.type.shape)));
      }
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Flip: {
      const Tensor &a = get(op.operands[0]);
      Tensor r = makeTensor(*rt);
      for (size_t k = 0; k < r.size(); ++k) {
        std::vector<int64_t> idx = unflatten(int64_t(k), rt->shape);
        idx[size_t(op.axis())] = rt->shape[size_t(op.axis())] - 1 - idx[size_t(op.axis())];
        copyElem(r, k, a, size_t(flatten(idx, a.type.shape)));
      }
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Cat: {
      // Concatenation along dim 0 of row-major tiles appends b's elements to a's.
      const Tensor &a = get(op.operands[0]), &b = get(op.operands[1]);
      Tensor r = makeTensor(*rt);
      for (size_t k = 0; k < a.size(); ++k)
        copyElem(r, k, a, k);
      for (size_t k = 0; k < b.size(); ++k)
        copyElem(r, a.size() + k, b, k);
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Join: {
      const Tensor &a = get(op.operands[0]), &b = get(op.operands[1]);
      Tensor r = makeTensor(*rt);
      for (size_t k = 0; k < a.size(); ++k) {
        copyElem(r, 2 * k, a, k);
        copyElem(r, 2 * k + 1, b, k);
      }
      env_[op.result()] = std::move(r);
      return;
    }
    case OpKind::Split: {
      const Tensor &a = get(op.operands[0]);
      Tensor lo = makeTensor(op.result(0)->type), hi = makeTensor(op.result(1)->type);
      for (size_t k = 0; k < lo.size(); ++k) {
        copyElem(lo, k, a, 2 * k);
        copyElem(hi, k, a, 2 * k + 1);
      }
      setResults(op, {std::move(lo), std::move(hi)});
      return;
    }
    case OpKind::Reduce: case OpKind::Scan: {
      execReduceOrScan(op);
      return;
    }
    case OpKind::Barrier: case OpKind::GridDepControl:
      return; // a program is evaluated by one thread, programs one after the other
    case OpKind::For: {
      execFor(op);
      return;
    }
    case OpKind::If: {
      const Tensor &c = get(op.operands[0]);
      const Block &region = *op.regions[c.i[0] ? 0 : 1];
      std::vector<Tensor> out = execBlock(region);
      if (!returned_)
        setResults(op, std::move(out));
      return;
    }
    case OpKind::While: {
      std::vector<Tensor> carried;
      for (const Value *v : op.operands)
        carried.push_back(get(v));
      for (;;) {
        charge(op, 1);
        bind(*op.regions[0], std::move(carried));
        std::vector<Tensor> cond = execBlock(*op.regions[0]);
        if (returned_)
          return;
        bool go = cond.at(0).i.at(0) != 0;
        std::vector<Tensor> forwarded(std::make_move_iterator(cond.begin() + 1), std::make_move_iterator(cond.end()));
        if (!go) {
          setResults(op, std::move(forwarded));
          return;
        }
        bind(*op.regions[1], std::move(forwarded));
        carried = execBlock(*op.regions[1]);
        if (returned_)
          return;
      }
    }
    default:
      throw InterpError(where(op) + " is not supported by the reference interpreter");
    }
  }

  /// Combines `x` into the accumulator `acc` (element `ai` of `r`) for reduce kind `rk`.
  void combine(Tensor &r, size_t ai, const Tensor &a, size_t xi, ir::ReduceKind rk, const Op &op) {
    DType t = r.type.dtype();
    OpKind k = rk == ir::ReduceKind::Sum ? OpKind::Add
               : rk == ir::ReduceKind::Max ? OpKind::Max
               : rk == ir::ReduceKind::Min ? OpKind::Min
                                           : OpKind::Mul;
    if (r.isFloatT())
      r.f[ai] = floatBinary(k, r.f[ai], a.f[xi], t, op);
    else
      r.i[ai] = intBinary(k, r.i[ai], a.i[xi], t, op);
  }

  /// Reduce (result without dim `axis`) and Scan (inclusive, forward or reverse): elements are
  /// combined sequentially in index order (reverse index order for a reverse scan).
  void execReduceOrScan(const Op &op) {
    const Tensor &a = get(op.operands[0]);
    const auto &shape = a.type.shape;
    size_t axis = size_t(op.axis());
    int64_t n = shape[axis];
    int64_t stride = stridesOf(shape)[axis];
    Tensor r = makeTensor(op.result()->type);
    bool scan = op.kind == OpKind::Scan;
    bool reverse = scan && op.isReverse();
    // Every line along `axis` starts at a flat index whose `axis` coordinate is 0.
    for (size_t base = 0; base < a.size(); ++base) {
      if (unflatten(int64_t(base), shape)[axis] != 0)
        continue;
      std::vector<int64_t> outIdx = unflatten(int64_t(base), shape);
      outIdx.erase(outIdx.begin() + int64_t(axis));
      std::vector<int64_t> outShape = shape;
      outShape.erase(outShape.begin() + int64_t(axis));
      size_t out = scan ? 0 : size_t(flatten(outIdx, outShape));
      for (int64_t s = 0; s < n; ++s) {
        int64_t j = reverse ? n - 1 - s : s;
        size_t src = base + size_t(j * stride);
        if (scan) {
          if (s == 0)
            copyElem(r, src, a, src);
          else {
            size_t prev = base + size_t((reverse ? j + 1 : j - 1) * stride);
            copyElem(r, src, r, prev);
            combine(r, src, a, src, op.reduceKind(), op);
          }
        } else if (s == 0) {
          copyElem(r, out, a, src);
        } else {
          combine(r, out, a, src, op.reduceKind(), op);
        }
      }
    }
    env_[op.result()] = std::move(r);
  }

  void execFor(const Op &op) {
    const Tensor &lb = get(op.operands[0]), &ub = get(op.operands[1]), &step = get(op.operands[2]);
    DType t = lb.type.dtype();
    if (ir::isFloat(t))
      throw InterpError(where(op) + " with a float induction variable is not supported by the reference interpreter");
    bool s = ir::isSigned(t);
    auto less = [&](uint64_t x, uint64_t y) { return s ? int64_t(x) < int64_t(y) : x < y; };
    if (!less(0, step.i[0]))
      throw InterpError(where(op) + ": the loop has a non-positive step");
    std::vector<Tensor> carried;
    for (size_t k = 3; k < op.operands.size(); ++k)
      carried.push_back(get(op.operands[k]));
    const Block &body = *op.regions[0];
    uint64_t iv = lb.i[0];
    while (less(iv, ub.i[0])) {
      charge(op, 1);
      Tensor ivT = makeTensor(body.args[0]->type);
      ivT.i[0] = iv;
      std::vector<Tensor> args;
      args.push_back(std::move(ivT));
      for (auto &c : carried)
        args.push_back(std::move(c));
      bind(body, std::move(args));
      carried = execBlock(body);
      if (returned_)
        return;
      uint64_t next = normInt(iv + step.i[0], t);
      if (!less(iv, next))
        break; // the induction variable would wrap: the loop has ended
      iv = next;
    }
    setResults(op, std::move(carried));
  }
};

} // namespace

std::string unsupportedOp(const ir::Function &f) {
  std::string found;
  ir::walk(const_cast<ir::Block &>(f.body), [&](Op &op) {
    if (found.empty() && !supported(op.kind))
      found = where(op) + " is not supported by the reference interpreter";
  });
  return found;
}

void interpret(const ir::Function &f, const std::array<uint32_t, 3> &grid, const std::vector<InterpArg> &args,
               const InterpOptions &options) {
  if (args.size() != f.params.size() || f.body.args.size() != f.params.size())
    throw InterpError("kernel '" + f.name + "' takes " + std::to_string(f.params.size()) + " arguments, got " +
                      std::to_string(args.size()));
  if (std::string u = unsupportedOp(f); !u.empty())
    throw InterpError(u);
  Memory mem;
  for (size_t p = 0; p < args.size(); ++p)
    if (f.params[p].type.isPointer()) {
      uint64_t b = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(args[p].data));
      mem.ranges.push_back({b, b + args[p].bytes});
    }
  uint64_t work = 0;
  for (uint32_t z = 0; z < grid[2]; ++z)
    for (uint32_t y = 0; y < grid[1]; ++y)
      for (uint32_t x = 0; x < grid[0]; ++x) {
        Program prog(f, mem, {x, y, z}, grid, work, options.maxWork);
        prog.run(args);
      }
}

} // namespace tle::difftest
