// Host implementations of the libdevice functions ExternCall names (`__nv_sinf` -> libm sinf),
// bound into the JIT by address.
#include "HostMath.h"

#include <cmath>
#include <cstring>
#include <map>

namespace tle::cpu::detail {

namespace {

// lgamma through the reentrant variants: plain lgamma writes the global `signgam`.
float lgammaF(float x) {
  int sign;
  return lgammaf_r(x, &sign);
}
double lgammaD(double x) {
  int sign;
  return lgamma_r(x, &sign);
}

float fastDivide(float x, float y) { return x / y; }

// The special functions libdevice has and the C library does not (CUDA Math API semantics),
// computed in double and rounded once for fp32.
constexpr double kPi = 3.14159265358979323846;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;

/// erfinv(y), |y| < 1: Newton's method on erf from an initial guess by the closed-form
/// approximation erfinv(y) ~ sign(y) sqrt(sqrt(b^2 - ln(1 - y^2) / a) - b), b = 2 / (pi a) +
/// ln(1 - y^2) / 2, a = 0.147 (relative error below 2e-3, so a few steps reach double precision).
double erfinvD(double y) {
  if (std::isnan(y) || y < -1 || y > 1)
    return NAN;
  if (y == 1 || y == -1)
    return std::copysign(INFINITY, y);
  const double a = 0.147, l = std::log1p(-y * y), b = 2 / (kPi * a) + l / 2;
  double x = std::copysign(std::sqrt(std::sqrt(b * b - l / a) - b), y);
  for (int i = 0; i < 4; ++i)
    x -= (std::erf(x) - y) / (kTwoOverSqrtPi * std::exp(-x * x));
  return x;
}

/// erfcinv(z), 0 < z < 2: Newton's method on erfc (precise for small z, where 1 - z would lose
/// the digits), from erfinv's guess.
double erfcinvD(double z) {
  if (std::isnan(z) || z < 0 || z > 2)
    return NAN;
  if (z == 0)
    return INFINITY;
  if (z == 2)
    return -INFINITY;
  double x = z > 1e-10 ? erfinvD(1 - z) : std::sqrt(-std::log(z * std::sqrt(kPi) * std::sqrt(-std::log(z))));
  if (std::isinf(x))
    x = std::copysign(5.0, x);
  for (int i = 0; i < 8; ++i)
    x += (std::erfc(x) - z) / (kTwoOverSqrtPi * std::exp(-x * x));
  return x;
}

/// erfcx(x) = exp(x^2) erfc(x); beyond 26, where erfc underflows, its asymptotic series.
double erfcxD(double x) {
  if (x < 26)
    return std::exp(x * x) * std::erfc(x);
  double r = 1 / (x * x), sum = 1, term = 1;
  for (int k = 1; k < 6; ++k)
    sum += (term *= -(2 * k - 1) * r / 2);
  return sum / (x * std::sqrt(kPi));
}

double normcdfD(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double normcdfinvD(double p) { return -std::sqrt(2.0) * erfcinvD(2 * p); }

/// sin(pi x), exact at the integers (signed zero) and halves.
double sinpiD(double x) {
  if (!std::isfinite(x))
    return NAN;
  double r = std::fmod(x, 2.0); // exact
  if (r == std::trunc(r))
    return std::copysign(0.0, x);
  if (std::fabs(r) == 0.5 || std::fabs(r) == 1.5)
    return std::copysign(std::fabs(r) == 0.5 ? 1.0 : -1.0, r);
  return std::sin(kPi * r);
}
/// cos(pi x) = sin(pi (r + 1/2)) for r = |x| mod 2 (exact), zero at the odd halves.
double cospiD(double x) {
  if (!std::isfinite(x))
    return NAN;
  double r = std::fmod(std::fabs(x), 2.0);
  if (r == 0.5 || r == 1.5)
    return 0.0;
  return sinpiD(r + 0.5);
}

double rcbrtD(double x) { return 1 / std::cbrt(x); }

/// The modified Bessel function I_n(x), n = 0 or 1, by its power series in |x| (every term
/// positive); I_1 is odd.
double besselI(int n, double x) {
  if (std::isnan(x))
    return NAN;
  const double ax = std::fabs(x), q = ax * ax / 4;
  double term = n ? ax / 2 : 1, sum = term;
  for (int k = 1; k < 1000 && term > sum * 1e-17; ++k)
    sum += (term *= q / (double(k) * (k + n)));
  return n && x < 0 ? -sum : sum;
}
double besselI0D(double x) { return besselI(0, x); }
double besselI1D(double x) { return besselI(1, x); }

/// The fp32 versions: the double function, rounded once.
template <double (*F)(double)> float asFloat(float x) { return static_cast<float>(F(x)); }

template <class R, class... A> void *addr(R (*fn)(A...)) { return reinterpret_cast<void *>(fn); }

using F1 = float (*)(float);
using F2 = float (*)(float, float);
using D1 = double (*)(double);
using D2 = double (*)(double, double);

const std::map<std::string, HostMathFn> &table() {
  static const std::map<std::string, HostMathFn> t = [] {
    std::map<std::string, HostMathFn> m;
    auto add1 = [&](const char *fn, F1 f, D1 d) {
      m[std::string(fn) + "f"] = {std::string(fn) + "f", addr(f), 1, false};
      m[fn] = {fn, addr(d), 1, true};
    };
    auto add2 = [&](const char *fn, F2 f, D2 d) {
      m[std::string(fn) + "f"] = {std::string(fn) + "f", addr(f), 2, false};
      m[fn] = {fn, addr(d), 2, true};
    };
    add1("sin", ::sinf, ::sin);
    add1("cos", ::cosf, ::cos);
    add1("tan", ::tanf, ::tan);
    add1("asin", ::asinf, ::asin);
    add1("acos", ::acosf, ::acos);
    add1("atan", ::atanf, ::atan);
    add1("sinh", ::sinhf, ::sinh);
    add1("cosh", ::coshf, ::cosh);
    add1("tanh", ::tanhf, ::tanh);
    add1("asinh", ::asinhf, ::asinh);
    add1("acosh", ::acoshf, ::acosh);
    add1("atanh", ::atanhf, ::atanh);
    add1("erf", ::erff, ::erf);
    add1("erfc", ::erfcf, ::erfc);
    add1("log1p", ::log1pf, ::log1p);
    add1("expm1", ::expm1f, ::expm1);
    add1("log10", ::log10f, ::log10);
    add1("exp10", ::exp10f, ::exp10);
    add1("cbrt", ::cbrtf, ::cbrt);
    add1("tgamma", ::tgammaf, ::tgamma);
    add1("lgamma", lgammaF, lgammaD);
    add1("nearbyint", ::nearbyintf, ::nearbyint);
    add1("logb", ::logbf, ::logb);
    add2("pow", ::powf, ::pow);
    add2("atan2", ::atan2f, ::atan2);
    add2("hypot", ::hypotf, ::hypot);
    add2("fmax", ::fmaxf, ::fmax);
    add2("fmin", ::fminf, ::fmin);
    add2("fdim", ::fdimf, ::fdim);
    add2("remainder", ::remainderf, ::remainder);
    add2("nextafter", ::nextafterf, ::nextafter);
    add1("j0", ::j0f, ::j0);
    add1("j1", ::j1f, ::j1);
    add1("y0", ::y0f, ::y0);
    add1("y1", ::y1f, ::y1);
    // Our own (no C library has them), under names of their own.
    auto own = [&](const char *fn, F1 f, D1 d) {
      m[std::string(fn) + "f"] = {std::string("__tle_cpu_") + fn + "f", addr(f), 1, false};
      m[fn] = {std::string("__tle_cpu_") + fn, addr(d), 1, true};
    };
    own("erfinv", asFloat<erfinvD>, erfinvD);
    own("erfcinv", asFloat<erfcinvD>, erfcinvD);
    own("erfcx", asFloat<erfcxD>, erfcxD);
    own("normcdf", asFloat<normcdfD>, normcdfD);
    own("normcdfinv", asFloat<normcdfinvD>, normcdfinvD);
    own("sinpi", asFloat<sinpiD>, sinpiD);
    own("cospi", asFloat<cospiD>, cospiD);
    own("rcbrt", asFloat<rcbrtD>, rcbrtD);
    own("cyl_bessel_i0", asFloat<besselI0D>, besselI0D);
    own("cyl_bessel_i1", asFloat<besselI1D>, besselI1D);
    // libdevice's fp32 approximations (__nv_fast_expf, ...): the exact functions here, under
    // names of their own so that they do not define the C library's symbols twice.
    auto fast = [&](const char *fn, void *f, unsigned arity) {
      m[fn] = {std::string("__tle_cpu_") + fn, f, arity, false};
    };
    fast("fast_expf", addr(static_cast<F1>(::expf)), 1);
    fast("fast_exp10f", addr(static_cast<F1>(::exp10f)), 1);
    fast("fast_logf", addr(static_cast<F1>(::logf)), 1);
    fast("fast_log2f", addr(static_cast<F1>(::log2f)), 1);
    fast("fast_log10f", addr(static_cast<F1>(::log10f)), 1);
    fast("fast_sinf", addr(static_cast<F1>(::sinf)), 1);
    fast("fast_cosf", addr(static_cast<F1>(::cosf)), 1);
    fast("fast_tanf", addr(static_cast<F1>(::tanf)), 1);
    fast("fast_powf", addr(static_cast<F2>(::powf)), 2);
    fast("fast_fdividef", addr(fastDivide), 2);
    // Renamed so that the JIT symbol cannot clash with LLVM's own lgamma handling.
    m["lgammaf"].symbol = "__tle_cpu_lgammaf";
    m["lgamma"].symbol = "__tle_cpu_lgamma";
    return m;
  }();
  return t;
}

} // namespace

const HostMathFn *hostMathFunction(const std::string &fn) {
  auto it = table().find(fn);
  return it == table().end() ? nullptr : &it->second;
}

const std::vector<HostSymbol> &hostSymbols() {
  static const std::vector<HostSymbol> all = [] {
    std::vector<HostSymbol> v = {
        {"expf", addr(static_cast<F1>(::expf))},       {"exp2f", addr(static_cast<F1>(::exp2f))},
        {"logf", addr(static_cast<F1>(::logf))},       {"log2f", addr(static_cast<F1>(::log2f))},
        {"sqrtf", addr(static_cast<F1>(::sqrtf))},     {"fmodf", addr(static_cast<F2>(::fmodf))},
        {"exp", addr(static_cast<D1>(::exp))},         {"exp2", addr(static_cast<D1>(::exp2))},
        {"log", addr(static_cast<D1>(::log))},         {"log2", addr(static_cast<D1>(::log2))},
        {"sqrt", addr(static_cast<D1>(::sqrt))},       {"fmod", addr(static_cast<D2>(::fmod))},
        {"ldexpf", addr(static_cast<float (*)(float, int)>(::ldexpf))},
        {"ldexp", addr(static_cast<double (*)(double, int)>(::ldexp))},
        {"fmaf", addr(static_cast<float (*)(float, float, float)>(::fmaf))},
        {"fma", addr(static_cast<double (*)(double, double, double)>(::fma))},
        {"memcpy", addr(&::memcpy)},                   {"memmove", addr(&::memmove)},
        {"memset", addr(&::memset)}};
    for (auto &[name, fn] : table())
      v.push_back({fn.symbol, fn.address});
    return v;
  }();
  return all;
}

bool isHostSymbol(const std::string &name) {
  if (name.rfind("__tle_", 0) == 0)
    return true;
  for (const HostSymbol &h : hostSymbols())
    if (h.name == name)
      return true;
  // Other C library names LLVM may call for intrinsics (rounding, powers, trigonometry).
  static const char *more[] = {"floorf", "floor", "ceilf", "ceil", "truncf", "trunc", "roundf", "round", "rintf",
                               "rint", "powf", "pow", "sinf", "sin", "cosf", "cos", "exp10f", "exp10", "log10f",
                               "log10", "copysignf", "copysign", "fminf", "fmin", "fmaxf", "fmax"};
  for (const char *m : more)
    if (name == m)
      return true;
  return false;
}

} // namespace tle::cpu::detail
