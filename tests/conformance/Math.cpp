// Family "math": unary math (tl.* and libdevice.*) over fp32 / fp64 (and fp16 / bf16 for the tl
// functions) against long-double references within the documented tolerances; abs, maximum and
// minimum on every numeric dtype (NaN-ignoring for floats); fma, fdiv, div_rn, pow, atan2,
// hypot, fmod, copysign.
#include "Families.h"

namespace tle::conformance {

namespace {

constexpr size_t kN = 64;

struct Fn1 {
  const char *name, *call; ///< case name, source spelling ("tl.exp")
  long double lo, hi;      ///< input domain
  std::function<long double(long double)> ref;
  bool tlFn;               ///< a tl.* function (also tested on fp16 / bf16)
  bool specials;           ///< add +-0, +-inf, NaN inputs
  double ulps;             ///< CPU tolerance for fp32 / fp64, in ulps (0: exact)
  int gpu;                 ///< GPU tolerance: 0 exact, 1 libdevice (a few ulps), 2 approximate (ex2/lg2/rsqrt.approx)
};

long double sigmoidRef(long double x) { return 1.0L / (1.0L + std::exp(-x)); }

const std::vector<Fn1> &fns() {
  static const std::vector<Fn1> v = {
      {"exp", "tl.exp", -20, 20, [](long double x) { return std::exp(x); }, true, true, 1, 2},
      {"exp2", "tl.exp2", -30, 30, [](long double x) { return std::exp2(x); }, true, true, 1, 2},
      {"log", "tl.log", 0.001, 100, [](long double x) { return std::log(x); }, true, true, 1, 2},
      {"log2", "tl.log2", 0.001, 100, [](long double x) { return std::log2(x); }, true, true, 1, 2},
      {"sqrt", "tl.sqrt", 0, 1000, [](long double x) { return std::sqrt(x); }, true, true, 0, 0},
      {"sqrt_rn", "tl.sqrt_rn", 0, 1000, [](long double x) { return std::sqrt(x); }, false, true, 0, 0},
      {"rsqrt", "tl.rsqrt", 0.01, 1000, [](long double x) { return 1.0L / std::sqrt(x); }, true, false, 1, 2},
      {"abs", "tl.abs", -100, 100, [](long double x) { return std::fabs(x); }, true, true, 0, 0},
      {"floor", "tl.floor", -100, 100, [](long double x) { return std::floor(x); }, true, true, 0, 0},
      {"ceil", "tl.ceil", -100, 100, [](long double x) { return std::ceil(x); }, true, true, 0, 0},
      {"trunc", "tl.trunc", -100, 100, [](long double x) { return std::trunc(x); }, false, true, 0, 0},
      {"sin", "tl.sin", -10, 10, [](long double x) { return std::sin(x); }, true, false, 1, 1},
      {"cos", "tl.cos", -10, 10, [](long double x) { return std::cos(x); }, true, false, 1, 1},
      {"tanh", "tl.tanh", -5, 5, [](long double x) { return std::tanh(x); }, false, false, 2, 1},
      {"erf", "tl.erf", -4, 4, [](long double x) { return std::erf(x); }, false, false, 2, 1},
      {"log1p", "tl.log1p", -0.9, 50, [](long double x) { return std::log1p(x); }, false, false, 2, 1},
      {"sigmoid", "tl.sigmoid", -20, 20, sigmoidRef, false, false, 3, 2},
      {"tan", "libdevice.tan", -1.5, 1.5, [](long double x) { return std::tan(x); }, false, false, 2, 1},
      {"asin", "libdevice.asin", -0.99, 0.99, [](long double x) { return std::asin(x); }, false, false, 2, 1},
      {"acos", "libdevice.acos", -0.99, 0.99, [](long double x) { return std::acos(x); }, false, false, 2, 1},
      {"atan", "libdevice.atan", -10, 10, [](long double x) { return std::atan(x); }, false, false, 2, 1},
      {"sinh", "libdevice.sinh", -5, 5, [](long double x) { return std::sinh(x); }, false, false, 2, 1},
      {"cosh", "libdevice.cosh", -5, 5, [](long double x) { return std::cosh(x); }, false, false, 2, 1},
      {"asinh", "libdevice.asinh", -10, 10, [](long double x) { return std::asinh(x); }, false, false, 2, 1},
      {"acosh", "libdevice.acosh", 1, 10, [](long double x) { return std::acosh(x); }, false, false, 2, 1},
      {"atanh", "libdevice.atanh", -0.9, 0.9, [](long double x) { return std::atanh(x); }, false, false, 2, 1},
      {"erfc", "libdevice.erfc", -2, 4, [](long double x) { return std::erfc(x); }, false, false, 4, 1},
      {"expm1", "libdevice.expm1", -5, 5, [](long double x) { return std::expm1(x); }, false, false, 2, 1},
      {"exp10", "libdevice.exp10", -10, 10, [](long double x) { return std::pow(10.0L, x); }, false, false, 2, 1},
      {"log10", "libdevice.log10", 0.001, 1000, [](long double x) { return std::log10(x); }, false, false, 2, 1},
      {"cbrt", "libdevice.cbrt", -100, 100, [](long double x) { return std::cbrt(x); }, false, false, 2, 1},
      {"rint", "libdevice.rint", -100, 100, [](long double x) { return std::nearbyint(x); }, false, true, 0, 0},
      {"round", "libdevice.round", -100, 100, [](long double x) { return std::round(x); }, false, true, 0, 0},
      {"lgamma", "libdevice.lgamma", 0.1, 20, [](long double x) { return std::lgamma(x); }, false, false, 8, 1},
      {"tgamma", "libdevice.tgamma", 0.5, 10, [](long double x) { return std::tgamma(x); }, false, false, 8, 1},
  };
  return v;
}

Tol gpuTol(int kind, DType t) {
  if (kind == 0)
    return Tol::exact();
  if (t == DType::F16 || t == DType::BF16)
    return Tol::ulp(2);
  if (kind == 1)
    return Tol::ulp(t == DType::F64 ? 2 : 4);
  return t == DType::F64 ? Tol::ulp(2) : Tol::close(2e-5, 1e-6);
}

void unary(Suite &s, const Fn1 &f, DType t) {
  Rng rng(std::hash<std::string>()(f.name) + uint64_t(t));
  Buffer x(t, kN);
  for (size_t i = 0; i < kN; ++i) {
    long double v = rng.real(double(f.lo), double(f.hi));
    if (i % 8 == 5)
      v = std::round(v * 2) / 2; // halves: rounding functions' ties
    x.setF(i, v);
  }
  if (f.specials) {
    const long double sp[] = {0.0L, -0.0L, INFINITY, -INFINITY, NAN, -1.0L};
    for (size_t k = 0; k < 6; ++k)
      x.setF(60 - 2 * k, sp[k]);
  }
  Buffer want(t, kN);
  bool sqrtFn = std::string(f.name).rfind("sqrt", 0) == 0;
  for (size_t i = 0; i < kN; ++i) // sqrt: correctly rounded in double (no long double double rounding)
    want.setF(i, sqrtFn ? (long double)std::sqrt(double(x.getF(i))) : f.ref(x.getF(i)));
  Tol cpu = f.ulps == 0 ? Tol::exact() : (t == DType::F16 || t == DType::BF16) ? Tol::ulp(1) : Tol::ulp(f.ulps);
  Run run;
  run.args = {Arg::buf(x), Arg::buf(Buffer(t, kN))};
  expect(run, 1, std::string("math/") + f.name + "/" + tag(t), want, cpu, gpuTol(f.gpu, t));
  Batch b;
  b.name = std::string("math/") + f.name + "/" + tag(t);
  b.source = module(subst("@triton.jit\ndef k(x_ptr, o_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                          "    y = {F}(tl.load(x_ptr + offs))\n    tl.static_assert(y.dtype == {T})\n    tl.store(o_ptr + offs, y)\n",
                          {{"F", f.call}, {"T", tlName(t)}}));
  b.signature = ptrSig({t, t}, std::to_string(kN));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// abs, maximum, minimum on every numeric dtype.
void absMinMax(Suite &s, DType t) {
  Rng rng(uint64_t(t) + 4242);
  Buffer x = randomBuffer(t, kN, rng, 100, true), y = randomBuffer(t, kN, rng, 100, true);
  for (size_t i = 0; i < kN; i += 5)
    y.setBits(i, x.bits(i));
  Buffer wa(t, kN), wmax(t, kN), wmin(t, kN);
  for (size_t i = 0; i < kN; ++i) {
    Val a = elem(x, i), b = elem(y, i);
    if (isFloatT(t)) {
      wa.setF(i, std::fabs(a.f));
      // NaN-ignoring (maxnum / minnum); the sign of equal zeros is not checked.
      wmax.setF(i, std::isnan(a.f) ? b.f : std::isnan(b.f) ? a.f : std::max(a.f, b.f));
      wmin.setF(i, std::isnan(a.f) ? b.f : std::isnan(b.f) ? a.f : std::min(a.f, b.f));
    } else {
      bool sgn = isSignedT(t);
      wa.setI(i, sgn && int64_t(a.i) < 0 ? wrapInt(0 - a.i, t) : a.i);
      bool less = sgn ? int64_t(a.i) < int64_t(b.i) : a.i < b.i;
      wmax.setI(i, less ? b.i : a.i);
      wmin.setI(i, less ? a.i : b.i);
    }
  }
  Run run;
  run.args = {Arg::buf(x), Arg::buf(y), Arg::buf(Buffer(t, kN)), Arg::buf(Buffer(t, kN)), Arg::buf(Buffer(t, kN))};
  expect(run, 2, "math/abs_all/" + tag(t), wa);
  expect(run, 3, "math/maximum/" + tag(t), wmax, Tol::exact().anyZero());
  expect(run, 4, "math/minimum/" + tag(t), wmin, Tol::exact().anyZero());
  Batch b;
  b.name = "math/minmax/" + tag(t);
  b.source = module("@triton.jit\ndef k(x_ptr, y_ptr, oa, omax, omin, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                    "    x = tl.load(x_ptr + offs)\n    y = tl.load(y_ptr + offs)\n    tl.store(oa + offs, tl.abs(x))\n"
                    "    tl.store(omax + offs, tl.maximum(x, y))\n    tl.store(omin + offs, tl.minimum(x, y))\n");
  b.signature = ptrSig({t, t, t, t, t}, std::to_string(kN));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// Binary and ternary float functions.
void binaryFns(Suite &s, DType t) {
  Rng rng(uint64_t(t) + 777);
  Buffer x(t, kN), y(t, kN), z(t, kN);
  for (size_t i = 0; i < kN; ++i) {
    x.setF(i, rng.real(-10, 10));
    y.setF(i, rng.real(-10, 10));
    z.setF(i, rng.real(-100, 100));
  }
  Buffer px(t, kN); // positive bases for pow
  for (size_t i = 0; i < kN; ++i)
    px.setF(i, rng.real(0.1, 5));
  struct F2 {
    const char *name, *expr;
    std::function<long double(long double, long double, long double, long double)> ref; // x, y, z, px
    Tol cpu, gpu;
  };
  bool f32 = t == DType::F32;
  std::vector<F2> fs = {
      {"fma", "tl.fma(x, y, z)", [](long double a, long double b, long double c, long double) { return std::fma(a, b, c); }, Tol::exact(), Tol::exact()},
      {"div_rn", "tl.div_rn(x, y)", [](long double a, long double b, long double, long double) { return a / b; }, Tol::exact(), Tol::exact()},
      {"fdiv", "tl.fdiv(x, y)", [](long double a, long double b, long double, long double) { return a / b; }, Tol::exact(), f32 ? Tol::ulp(2) : Tol::exact()},
      {"pow", "libdevice.pow(px, y)", [](long double, long double b, long double, long double p) { return std::pow(p, b); }, Tol::ulp(2), Tol::ulp(4)},
      {"atan2", "libdevice.atan2(x, y)", [](long double a, long double b, long double, long double) { return std::atan2(a, b); }, Tol::ulp(2), Tol::ulp(4)},
      {"hypot", "libdevice.hypot(x, y)", [](long double a, long double b, long double, long double) { return std::hypot(a, b); }, Tol::ulp(2), Tol::ulp(4)},
      {"fmod", "libdevice.fmod(z, y)", [](long double, long double b, long double c, long double) { return std::fmod(c, b); }, Tol::exact(), Tol::exact()},
      {"copysign", "libdevice.copysign(z, x)", [](long double a, long double, long double c, long double) { return std::copysign(c, a); }, Tol::exact(), Tol::exact()},
      {"tl_pow", "tl.pow(px, y)", [](long double, long double b, long double, long double p) { return std::pow(p, b); }, Tol::ulp(2), Tol::ulp(4)},
      {"tl_atan2", "tl.atan2(x, y)", [](long double a, long double b, long double, long double) { return std::atan2(a, b); }, Tol::ulp(2), Tol::ulp(4)},
  };
  for (auto &f : fs) {
    Buffer want(t, kN);
    for (size_t i = 0; i < kN; ++i) {
      long double a = x.getF(i), b = y.getF(i), c = z.getF(i), p = px.getF(i);
      std::string n = f.name;
      if (n == "fma") // one rounding: the C library's correctly rounded fma in the target precision
        want.setF(i, t == DType::F64 ? (long double)std::fma(double(a), double(b), double(c))
                                     : (long double)std::fma(float(a), float(b), float(c)));
      else if (n == "div_rn" || n == "fdiv") // IEEE division in double (then to fp32: innocuous)
        want.setF(i, (long double)(double(a) / double(b)));
      else
        want.setF(i, f.ref(a, b, c, p));
    }
    Run run;
    run.args = {Arg::buf(x), Arg::buf(y), Arg::buf(z), Arg::buf(px), Arg::buf(Buffer(t, kN))};
    expect(run, 4, std::string("math/") + f.name + "/" + tag(t), want, f.cpu, f.gpu);
    Batch b;
    b.name = std::string("math/") + f.name + "/" + tag(t);
    b.source = module(subst("@triton.jit\ndef k(x_ptr, y_ptr, z_ptr, p_ptr, o_ptr, BLOCK: tl.constexpr):\n"
                            "    offs = tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs)\n    y = tl.load(y_ptr + offs)\n"
                            "    z = tl.load(z_ptr + offs)\n    px = tl.load(p_ptr + offs)\n    tl.store(o_ptr + offs, {E})\n",
                            {{"E", f.expr}}));
    b.signature = ptrSig({t, t, t, t, t}, std::to_string(kN));
    b.runs.push_back(std::move(run));
    s.add(std::move(b));
  }
}

} // namespace

void addMath(Suite &s) {
  for (const Fn1 &f : fns()) {
    for (DType t : {DType::F32, DType::F64})
      unary(s, f, t);
    if (f.tlFn)
      for (DType t : {DType::F16, DType::BF16}) {
        if (std::string(f.name) == "abs") {
          unary(s, f, t);
          continue;
        }
        // Triton's math functions check for fp32 / fp64 (_check_dtype): half types are errors.
        Batch e;
        e.name = std::string("math/error/") + f.name + "_" + tag(t);
        e.source = module(subst("@triton.jit\ndef k(x_ptr):\n    offs = tl.arange(0, 16)\n"
                                "    tl.store(x_ptr + offs, {F}(tl.load(x_ptr + offs)))\n", {{"F", f.call}}));
        e.signature = ptrSig({t});
        e.expectError = "expects fp32 or fp64";
        s.add(std::move(e));
      }
  }
  for (DType t : kNumDTypes)
    absMinMax(s, t);
  for (DType t : {DType::F32, DType::F64})
    binaryFns(s, t);
}

} // namespace tle::conformance
