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
    fast("fast_dividef", addr(fastDivide), 2);
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
