// Host implementations of the libdevice functions ExternCall names (`__nv_sinf` -> libm sinf),
// bound into the JIT by address.
#include "HostMath.h"

#include <cmath>
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
    add2("pow", ::powf, ::pow);
    add2("atan2", ::atan2f, ::atan2);
    add2("hypot", ::hypotf, ::hypot);
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

std::vector<HostMathFn> hostMathFunctions() {
  std::vector<HostMathFn> all;
  for (auto &[name, fn] : table())
    all.push_back(fn);
  return all;
}

} // namespace tle::cpu::detail
