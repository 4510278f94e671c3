// CPU target math: libdevice-backed functions (tl.sin, libdevice.*), tl.fma (exact for fp16/bf16
// too), tl.div_rn, and fp_downcast_rounding="rtz" casts.
#include "test_cpu_util.h"

#include "tle/Target/CPU/HostArray.h"

#include <cmath>
#include <random>
#include <vector>

using namespace tle;
using namespace tle::cputest;
using cpu::ArgValue;

namespace {
const char *kHeader = "import triton\nimport triton.language as tl\n\n@triton.jit\n";

bool same(double got, double want) { return (std::isnan(got) && std::isnan(want)) || got == want; }
} // namespace

TEST_CASE("cpu: libdevice functions match the host's libm", "[cpu][math]") {
  std::string src = std::string("from triton.language.extra import libdevice\n") + kHeader + R"(def lib(x_ptr, y_ptr, o_ptr, i_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.sin(x))
    tl.store(o_ptr + BLOCK + offs, tl.floor(x))
    tl.store(o_ptr + 2 * BLOCK + offs, tl.erf(x))
    tl.store(o_ptr + 3 * BLOCK + offs, tl.pow(x, y))
    tl.store(o_ptr + 4 * BLOCK + offs, tl.atan2(x, y))
    tl.store(o_ptr + 5 * BLOCK + offs, tl.math.tanh(x))
    tl.store(o_ptr + 6 * BLOCK + offs, tl.log1p(tl.abs(x)))
    tl.store(o_ptr + 7 * BLOCK + offs, tl.ceil(x))
    tl.store(i_ptr + offs, libdevice.isnan(x).to(tl.int32) + 2 * libdevice.isinf(x).to(tl.int32) + 4 * libdevice.signbit(x).to(tl.int32))
)";
  for (const char *ty : {"fp32", "fp64"}) {
    INFO(ty);
    Compiled k = compileSource(src, std::string("*") + ty + ", *" + ty + ", *" + ty + ", *i32, 16");
    TLE_REQUIRE_COMPILED(k);
    std::vector<double> xs{0.5, -0.5, 2.25, -3.75, 0.0, -0.0, 10.0, 1e-3, NAN, INFINITY, -INFINITY, 7.5, -100.25, 3.0,
                           0.125, 1.0};
    std::vector<double> ys{2.0, 3.0, -1.5, 2.0, 0.5, 1.0, 0.3, 2.0, 1.0, -2.0, 3.0, 0.5, 2.0, -3.0, 0.0, 100.0};
    std::vector<int32_t> iv(16);
    auto check = [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> x(xs.begin(), xs.end()), y(ys.begin(), ys.end()), o(8 * 16);
      k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(o), ArgValue::ptr(iv)});
      for (size_t i = 0; i < 16; ++i) {
        INFO("x " << x[i] << ", y " << y[i]);
        REQUIRE(same(o[i], std::sin(x[i])));
        REQUIRE(same(o[16 + i], std::floor(x[i])));
        REQUIRE(same(o[32 + i], std::erf(x[i])));
        REQUIRE(same(o[48 + i], std::pow(x[i], y[i])));
        REQUIRE(same(o[64 + i], std::atan2(x[i], y[i])));
        REQUIRE(same(o[80 + i], std::tanh(x[i])));
        REQUIRE(same(o[96 + i], std::log1p(std::fabs(x[i]))));
        REQUIRE(same(o[112 + i], std::ceil(x[i])));
        REQUIRE(iv[i] == int(std::isnan(x[i])) + 2 * int(std::isinf(x[i])) + 4 * int(std::signbit(x[i])));
      }
    };
    if (std::string(ty) == "fp32")
      check(0.f);
    else
      check(0.0);
  }
}

TEST_CASE("cpu: tl.fma rounds once, also for fp16 and bf16", "[cpu][math]") {
  std::string src = std::string(kHeader) + R"(def fm(a_ptr, b_ptr, c_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    c = tl.load(c_ptr + offs)
    tl.store(o_ptr + offs, tl.fma(a, b, c))
)";
  Compiled k32 = compileSource(src, "*fp32, *fp32, *fp32, *fp32, 4");
  TLE_REQUIRE_COMPILED(k32);
  std::vector<float> a{1 + 0x1p-12f, 3.f, 0.1f, 1e30f}, b{1 - 0x1p-12f, 0.1f, 10.f, 1e10f}, c{-1.f, -0.3f, -1.f, -INFINITY};
  std::vector<float> o(4);
  k32->run({1}, {ArgValue::ptr(a), ArgValue::ptr(b), ArgValue::ptr(c), ArgValue::ptr(o)});
  for (size_t i = 0; i < 4; ++i)
    REQUIRE(same(o[i], std::fma(a[i], b[i], c[i])));
  REQUIRE(o[0] == -0x1p-24f); // a*b+c exactly; separate rounding would give 0

  for (const char *ty : {"fp16", "bf16"}) {
    INFO(ty);
    const Format16 &F = std::string(ty) == "fp16" ? kHalf : kBF16;
    Compiled k = compileSource(src, std::string("*") + ty + ", *" + ty + ", *" + ty + ", *" + ty + ", 1024");
    TLE_REQUIRE_COMPILED(k);
    std::mt19937 rng(13);
    std::uniform_real_distribution<double> mag(-8, 8);
    std::uniform_int_distribution<int> sgn(0, 1);
    auto draw = [&] { return F.round((sgn(rng) ? -1 : 1) * std::exp2(mag(rng))); };
    std::vector<uint16_t> A(1024), Bv(1024), C(1024), O(1024);
    for (size_t i = 0; i < 1024; ++i) {
      A[i] = draw();
      Bv[i] = draw();
      // c close to -a*b so that the sum cancels and the single rounding matters.
      C[i] = i % 2 ? draw() : F.round(-F.value(A[i]) * F.value(Bv[i]));
    }
    k->run({1}, {ArgValue::ptr(A), ArgValue::ptr(Bv), ArgValue::ptr(C), ArgValue::ptr(O)});
    for (size_t i = 0; i < 1024; ++i) {
      long double exact = (long double)F.value(A[i]) * F.value(Bv[i]) + F.value(C[i]);
      uint16_t want = F.round(exact);
      if (exact == 0)
        want = 0; // +0 under round to nearest (operands of opposite signs)
      INFO(F.value(A[i]) << " * " << F.value(Bv[i]) << " + " << F.value(C[i]));
      REQUIRE(O[i] == want);
    }
  }
}

TEST_CASE("cpu: tl.div_rn and fp_downcast_rounding='rtz'", "[cpu][math]") {
  std::string src = std::string(kHeader) + R"(def rd(x_ptr, y_ptr, q_ptr, h_ptr, b_ptr, f_ptr, d_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(q_ptr + offs, tl.div_rn(x, y))
    tl.store(h_ptr + offs, x.to(tl.float16, fp_downcast_rounding="rtz"))
    tl.store(b_ptr + offs, x.to(tl.bfloat16, fp_downcast_rounding="rtz"))
    d = tl.load(d_ptr + offs)
    tl.store(f_ptr + offs, d.to(tl.float32, fp_downcast_rounding="rtz"))
)";
  Compiled k = compileSource(src, "*fp32, *fp32, *fp32, *fp16, *bf16, *fp32, *fp64, 64");
  TLE_REQUIRE_COMPILED(k);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-70000.f, 70000.f);
  std::vector<float> x(64), y(64), q(64), f(64);
  std::vector<uint16_t> h(64), b(64);
  std::vector<double> d(64);
  for (size_t i = 0; i < 64; ++i) {
    x[i] = i < 4 ? std::vector<float>{1e-6f, -3e-8f, 65519.f, -1e20f}[i] : u(rng) / float(1 + (i % 7) * 1000);
    y[i] = u(rng);
    d[i] = double(x[i]) * (1 + 1e-12 * double(i)) + (i % 3 ? 1e-30 : 0);
  }
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(q), ArgValue::ptr(h), ArgValue::ptr(b),
               ArgValue::ptr(f), ArgValue::ptr(d)});
  for (size_t i = 0; i < 64; ++i) {
    INFO("x " << x[i] << ", d " << d[i]);
    REQUIRE(q[i] == x[i] / y[i]);
    REQUIRE(h[i] == kHalf.truncate(x[i]));
    REQUIRE(b[i] == kBF16.truncate(x[i]));
    float want = static_cast<float>(d[i]);
    if (std::fabs(double(want)) > std::fabs(d[i]))
      want = std::nextafter(want, 0.f);
    REQUIRE(f[i] == want);
  }
}
