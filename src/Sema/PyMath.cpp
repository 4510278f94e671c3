// Python's `math` module on compile-time numbers: the constants and the functions that kernels
// and their modules use to compute constexprs (`_kAlpha = tl.constexpr(math.sqrt(2.0 / math.pi))`,
// `LOG2_N: tl.constexpr = math.ceil(math.log2(N))`). Each follows CPython's math (ints where
// Python returns ints: floor, ceil, trunc, isqrt, gcd, lcm, factorial, comb, perm, prod of ints).
#include "Binder.h"
#include "Registry.h"

#include <climits>
#include <cmath>
#include <limits>
#include <numeric>

namespace tle::sema {

namespace {

/// The compile-time number of parameter `k` (bool and int as Python converts them).
double number(Specializer &S, const BuiltinCall &c, const std::string &k) {
  const Arg &a = c.p.get(k);
  if (a.val.kind == SVal::Kind::Float)
    return a.val.f;
  if (a.val.kind == SVal::Kind::Int || a.val.kind == SVal::Kind::Bool)
    return static_cast<double>(a.val.i);
  S.fail(a.loc, "math." + c.fname + "() takes compile-time numbers (Python's math module), got " + a.val.describe());
}

/// The compile-time integer of parameter `k`.
int64_t integer(Specializer &S, const BuiltinCall &c, const std::string &k) {
  const Arg &a = c.p.get(k);
  if (a.val.kind != SVal::Kind::Int && a.val.kind != SVal::Kind::Bool)
    S.fail(a.loc, "math." + c.fname + "() takes compile-time integers, got " + a.val.describe());
  return a.val.i;
}

/// A float result; a domain error (NaN from a non-NaN argument) or overflow as Python raises it.
SVal real(Specializer &S, const BuiltinCall &c, double r, bool argNan = false) {
  if (std::isnan(r) && !argNan)
    S.fail(c.loc, "math." + c.fname + "(): math domain error (Python raises ValueError)");
  return SVal::real(r);
}

/// A float result rounded to an int (floor, ceil, trunc): Python raises on inf and NaN.
SVal toInt(Specializer &S, const BuiltinCall &c, double r) {
  if (!std::isfinite(r) || std::fabs(r) >= 9.2e18)
    S.fail(c.loc, "math." + c.fname + "() of " + std::to_string(r) + " has no int64 value");
  return SVal::integer(static_cast<int64_t>(r));
}

using Unary = double (*)(double);
template <Unary F> SVal unary(Specializer &S, const BuiltinCall &c) {
  double x = number(S, c, "x");
  return real(S, c, F(x), std::isnan(x));
}

double dsqrt(double x) { return std::sqrt(x); }
double dexp(double x) { return std::exp(x); }
double dexp2(double x) { return std::exp2(x); }
double dlog2(double x) { return x > 0 || std::isnan(x) ? std::log2(x) : NAN; }
double dlog10(double x) { return x > 0 || std::isnan(x) ? std::log10(x) : NAN; }
double dlog1p(double x) { return x > -1 || std::isnan(x) ? std::log1p(x) : NAN; }
double dexpm1(double x) { return std::expm1(x); }
double dfabs(double x) { return std::fabs(x); }
double dsin(double x) { return std::sin(x); }
double dcos(double x) { return std::cos(x); }
double dtan(double x) { return std::tan(x); }
double dasin(double x) { return std::asin(x); }
double dacos(double x) { return std::acos(x); }
double datan(double x) { return std::atan(x); }
double dsinh(double x) { return std::sinh(x); }
double dcosh(double x) { return std::cosh(x); }
double dtanh(double x) { return std::tanh(x); }
double derf(double x) { return std::erf(x); }
double derfc(double x) { return std::erfc(x); }
double dgamma(double x) { return std::tgamma(x); }
double dlgamma(double x) { return std::lgamma(x); }
double ddegrees(double x) { return x * 180.0 / M_PI; }
double dradians(double x) { return x * M_PI / 180.0; }

SVal log(Specializer &S, const BuiltinCall &c) {
  double x = number(S, c, "x");
  double r = x > 0 || std::isnan(x) ? std::log(x) : NAN;
  if (c.p.has("base")) {
    double b = number(S, c, "base");
    r = b > 0 && b != 1 ? r / std::log(b) : NAN;
  }
  return real(S, c, r, std::isnan(x));
}

SVal pow(Specializer &S, const BuiltinCall &c) {
  double x = number(S, c, "x"), y = number(S, c, "y");
  return real(S, c, std::pow(x, y), std::isnan(x) || std::isnan(y));
}

template <double (*F)(double, double)> SVal binary(Specializer &S, const BuiltinCall &c) {
  double x = number(S, c, "x"), y = number(S, c, "y");
  return real(S, c, F(x, y), std::isnan(x) || std::isnan(y));
}
double datan2(double y, double x) { return std::atan2(y, x); }
double dhypot(double x, double y) { return std::hypot(x, y); }
double dcopysign(double x, double y) { return std::copysign(x, y); }
double dfmod(double x, double y) { return y != 0 ? std::fmod(x, y) : NAN; }

SVal floor(Specializer &S, const BuiltinCall &c) { return toInt(S, c, std::floor(number(S, c, "x"))); }
SVal ceil(Specializer &S, const BuiltinCall &c) { return toInt(S, c, std::ceil(number(S, c, "x"))); }
SVal trunc(Specializer &S, const BuiltinCall &c) { return toInt(S, c, std::trunc(number(S, c, "x"))); }
SVal isnan(Specializer &S, const BuiltinCall &c) { return SVal::boolean(std::isnan(number(S, c, "x"))); }
SVal isinf(Specializer &S, const BuiltinCall &c) { return SVal::boolean(std::isinf(number(S, c, "x"))); }
SVal isfinite(Specializer &S, const BuiltinCall &c) { return SVal::boolean(std::isfinite(number(S, c, "x"))); }

SVal isqrt(Specializer &S, const BuiltinCall &c) {
  int64_t n = integer(S, c, "n");
  if (n < 0)
    S.fail(c.loc, "math.isqrt() of a negative number");
  auto r = static_cast<int64_t>(std::sqrt(static_cast<double>(n)));
  while (r > 0 && r > n / r)
    --r;
  while ((r + 1) <= n / (r + 1))
    ++r;
  return SVal::integer(r);
}

/// gcd / lcm of any number of ints (Python 3.9+).
SVal gcdLcm(Specializer &S, const BuiltinCall &c, bool lcm) {
  int64_t acc = lcm ? 1 : 0;
  for (const Arg &a : c.args.pos) {
    if (a.val.kind != SVal::Kind::Int && a.val.kind != SVal::Kind::Bool)
      S.fail(a.loc, "math." + c.fname + "() takes compile-time integers, got " + a.val.describe());
    if (a.val.i == INT64_MIN)
      S.fail(a.loc, "math." + c.fname + "() of -2**63 has no int64 value");
    int64_t v = a.val.i < 0 ? -a.val.i : a.val.i;
    if (!lcm) {
      acc = std::gcd(acc, v);
      continue;
    }
    if (acc != 0 && v != 0 && __builtin_mul_overflow(acc / std::gcd(acc, v), v, &acc))
      S.fail(a.loc, "math.lcm() overflows int64");
    if (v == 0)
      acc = 0;
  }
  return SVal::integer(acc);
}
SVal gcd(Specializer &S, const BuiltinCall &c) { return gcdLcm(S, c, false); }
SVal lcm(Specializer &S, const BuiltinCall &c) { return gcdLcm(S, c, true); }

SVal factorial(Specializer &S, const BuiltinCall &c) {
  int64_t n = integer(S, c, "n");
  if (n < 0 || n > 20)
    S.fail(c.loc, "math.factorial(" + std::to_string(n) + ") has no int64 value (0 <= n <= 20)");
  int64_t r = 1;
  for (int64_t i = 2; i <= n; ++i)
    r *= i;
  return SVal::integer(r);
}

/// math.prod(iterable, start=1): of ints an int, else a float.
SVal prod(Specializer &S, const BuiltinCall &c) {
  const Arg &it = c.p.get("iterable");
  if (it.val.kind != SVal::Kind::Tuple)
    S.fail(it.loc, "math.prod() takes a tuple or list of compile-time numbers, got " + it.val.describe());
  SVal acc = c.p.has("start") ? c.p.get("start").val : SVal::integer(1);
  for (const SVal &e : it.val.elts) {
    if (!e.isNumber() || !acc.isNumber())
      S.fail(it.loc, "math.prod() takes compile-time numbers, got " + e.describe());
    int64_t r = 0;
    if (e.kind != SVal::Kind::Float && acc.kind != SVal::Kind::Float) {
      if (__builtin_mul_overflow(acc.i, e.i, &r))
        S.fail(it.loc, "math.prod() overflows int64");
      acc = SVal::integer(r);
    } else {
      acc = SVal::real((acc.kind == SVal::Kind::Float ? acc.f : double(acc.i)) *
                       (e.kind == SVal::Kind::Float ? e.f : double(e.i)));
    }
  }
  return acc;
}

} // namespace

std::optional<SVal> pyMathConstant(const std::string &name) {
  if (name == "pi")
    return SVal::real(M_PI);
  if (name == "e")
    return SVal::real(M_E);
  if (name == "tau")
    return SVal::real(2 * M_PI);
  if (name == "inf")
    return SVal::real(std::numeric_limits<double>::infinity());
  if (name == "nan")
    return SVal::real(std::numeric_limits<double>::quiet_NaN());
  return std::nullopt;
}

std::vector<BuiltinSpec> pyMathBuiltins() {
  return {
      {"math.sqrt", "x, /", unary<dsqrt>}, {"math.exp", "x, /", unary<dexp>}, {"math.exp2", "x, /", unary<dexp2>},
      {"math.expm1", "x, /", unary<dexpm1>}, {"math.log", "x, base=None, /", log},
      {"math.log2", "x, /", unary<dlog2>}, {"math.log10", "x, /", unary<dlog10>},
      {"math.log1p", "x, /", unary<dlog1p>}, {"math.pow", "x, y, /", pow}, {"math.fabs", "x, /", unary<dfabs>},
      {"math.sin", "x, /", unary<dsin>}, {"math.cos", "x, /", unary<dcos>}, {"math.tan", "x, /", unary<dtan>},
      {"math.asin", "x, /", unary<dasin>}, {"math.acos", "x, /", unary<dacos>},
      {"math.atan", "x, /", unary<datan>}, {"math.atan2", "y, x, /", binary<datan2>},
      {"math.sinh", "x, /", unary<dsinh>}, {"math.cosh", "x, /", unary<dcosh>},
      {"math.tanh", "x, /", unary<dtanh>}, {"math.erf", "x, /", unary<derf>}, {"math.erfc", "x, /", unary<derfc>},
      {"math.gamma", "x, /", unary<dgamma>}, {"math.lgamma", "x, /", unary<dlgamma>},
      {"math.degrees", "x, /", unary<ddegrees>}, {"math.radians", "x, /", unary<dradians>},
      {"math.hypot", "x, y, /", binary<dhypot>}, {"math.copysign", "x, y, /", binary<dcopysign>},
      {"math.fmod", "x, y, /", binary<dfmod>}, {"math.floor", "x, /", floor}, {"math.ceil", "x, /", ceil},
      {"math.trunc", "x, /", trunc}, {"math.isnan", "x, /", isnan}, {"math.isinf", "x, /", isinf},
      {"math.isfinite", "x, /", isfinite}, {"math.isqrt", "n, /", isqrt}, {"math.gcd", "*integers", gcd},
      {"math.lcm", "*integers", lcm}, {"math.factorial", "n, /", factorial},
      {"math.prod", "iterable, /, *, start=1", prod},
  };
}

} // namespace tle::sema
