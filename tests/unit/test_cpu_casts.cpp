// CPU target casts and 16-bit float arithmetic against an independent reference: the nearest
// representable fp16 / bf16 value found by searching all of them (ties to even), not by bit tricks.
#include "test_cpu_util.h"

#include "tle/Target/CPU/HostArray.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace tle;
using namespace tle::cputest;
using cpu::ArgValue;

namespace {

const char *kHeader = "import triton\nimport triton.language as tl\n\n@triton.jit\n";

float floatBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

/// fp32 inputs that stress rounding: ties, subnormals, overflow, specials, and random bit patterns.
std::vector<float> trickyFloats() {
  std::vector<float> v{0.f, -0.f, 1.f, -1.f, 65504.f, 65519.f, 65520.f, 65536.f, -65520.f, 1e-8f, 5.96e-8f,
                       2.98e-8f, 2.9802322e-8f, 6.1035156e-5f, 6.1e-5f, 1.0009765625f, 1.00048828125f,
                       1.00146484375f, 3.3895314e38f, 3.3961e38f, 3.4e38f, INFINITY, -INFINITY, 1.00390625f,
                       1.005859375f, 0.1f, 1.0f / 3, 2049.f, 2051.f, 1e-40f, -1e-45f};
  for (uint32_t b = 0x33000000; b < 0x33000000 + 64; ++b)
    v.push_back(floatBits(b)); // around half the smallest fp16 subnormal
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    float f = floatBits(rng());
    if (!std::isnan(f))
      v.push_back(f);
  }
  return v;
}

uint16_t loadBits(const std::vector<uint16_t> &v, size_t i) { return v[i]; }

} // namespace

TEST_CASE("cpu: fp32 -> fp16 / bf16 / i32 casts round as specified", "[cpu][casts]") {
  std::string src = std::string(kHeader) + R"(def cast_f32(x_ptr, h_ptr, b_ptr, i_ptr, u_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(h_ptr + offs, x.to(tl.float16), mask=m)
    tl.store(b_ptr + offs, x.to(tl.bfloat16), mask=m)
    tl.store(i_ptr + offs, x.to(tl.int32), mask=m)
    tl.store(u_ptr + offs, x.to(tl.uint8), mask=m)
)";
  Compiled k = compileSource(src, "*fp32, *fp16, *bf16, *i32, *u8, i32, 256");
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x = trickyFloats();
  x.push_back(NAN);
  x.push_back(-NAN);
  size_t n = x.size();
  std::vector<uint16_t> h(n), b(n);
  std::vector<int32_t> iv(n);
  std::vector<uint8_t> uv(n);
  k->run({static_cast<uint32_t>((n + 255) / 256)},
         {ArgValue::ptr(x), ArgValue::ptr(h), ArgValue::ptr(b), ArgValue::ptr(iv), ArgValue::ptr(uv), i32(int(n))});
  for (size_t i = 0; i < n; ++i) {
    INFO("x = " << x[i] << " (index " << i << ")");
    if (std::isnan(x[i])) {
      REQUIRE(((h[i] >> 10) & 31) == 31);
      REQUIRE((h[i] & 1023) != 0);
      REQUIRE(((b[i] >> 7) & 0xFF) == 0xFF);
      REQUIRE((b[i] & 0x7F) != 0);
      REQUIRE(iv[i] == 0); // NaN -> 0 (saturating conversion)
      continue;
    }
    REQUIRE(loadBits(h, i) == kHalf.round(x[i]));
    REQUIRE(loadBits(b, i) == kBF16.round(x[i]));
    double t = std::trunc(double(x[i]));
    int32_t wantI = t >= 2147483647.0 ? std::numeric_limits<int32_t>::max()
                    : t <= -2147483648.0 ? std::numeric_limits<int32_t>::min()
                                         : int32_t(t);
    REQUIRE(iv[i] == wantI); // truncation toward zero, saturating out of range
    uint8_t wantU = t >= 255 ? 255 : t <= 0 ? 0 : uint8_t(t);
    REQUIRE(uv[i] == wantU);
  }
}

TEST_CASE("cpu: fp64 and integer -> fp16 / bf16 round once (no double rounding)", "[cpu][casts]") {
  std::string src = std::string(kHeader) + R"(def narrow(d_ptr, i_ptr, l_ptr, hd_ptr, bd_ptr, hi_ptr, bi_ptr, hl_ptr, bl_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    d = tl.load(d_ptr + offs)
    i = tl.load(i_ptr + offs)
    l = tl.load(l_ptr + offs)
    tl.store(hd_ptr + offs, d.to(tl.float16))
    tl.store(bd_ptr + offs, d.to(tl.bfloat16))
    tl.store(hi_ptr + offs, i.to(tl.float16))
    tl.store(bi_ptr + offs, i.to(tl.bfloat16))
    tl.store(hl_ptr + offs, l.to(tl.float16))
    tl.store(bl_ptr + offs, l.to(tl.bfloat16))
)";
  Compiled k = compileSource(src, "*fp64, *i32, *i64, *fp16, *bf16, *fp16, *bf16, *fp16, *bf16, 32");
  TLE_REQUIRE_COMPILED(k);
  // Doubles just above an fp16 / bf16 tie, where rounding through fp32 first lands on the tie.
  std::vector<double> d{1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-8 + 0x1p-40, -(1 + 0x1p-11 + 0x1p-40), 65519.99999999,
                        65520.0, 1e300, -1e300, 1e-300, 0x1p-25 + 0x1p-60, 0x1p-25, 3 * 0x1p-26, 0.1, 1.0 / 3,
                        0x1p-149 * 0.75, 0x1.fffffep127 + 0x1p100, 2.0 / 3, -0.0, 1e5, 0x1p-133 + 0x1p-160,
                        0x1.01p-130, 4097.0001, 1.5, 2.5, 3.0009765625, 100.0, 1e-7, 1e-6, 1e-5, 12345.678, -7.75,
                        0x1.0080000001p0, 0x1.008p0};
  std::vector<int32_t> iv{2049, 2051, -2049, 65519, 65520, 2147483647, -2147483647 - 1, (1 << 24) + (1 << 16) + 1,
                          (1 << 24) + (1 << 16), 16777217, -16842753, 0, 1, -1, 4095, 4097, 257, 259, 511, 65535,
                          12345678, -12345678, 33554435, 100, 1000, 10000, 99999, 3, 7, 8191, 8193, 1 << 30};
  std::vector<int64_t> lv{(int64_t(1) << 53) + 1, (int64_t(1) << 62) + (int64_t(1) << 54) + 1, -((int64_t(1) << 40) + (int64_t(1) << 32) + 1),
                          std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 2049, 65520, -65504,
                          (int64_t(1) << 24) + (int64_t(1) << 16) + 1, 0, 1, -1, 300, 301, 302, 303, 1 << 20,
                          (int64_t(1) << 33) + (int64_t(1) << 25), (int64_t(1) << 33) + (int64_t(1) << 25) + 1, 42, 43,
                          44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54};
  REQUIRE(d.size() == 32);
  REQUIRE(iv.size() == 32);
  REQUIRE(lv.size() == 32);
  std::vector<uint16_t> hd(32), bd(32), hi(32), bi(32), hl(32), bl(32);
  k->run({1}, {ArgValue::ptr(d), ArgValue::ptr(iv), ArgValue::ptr(lv), ArgValue::ptr(hd), ArgValue::ptr(bd),
               ArgValue::ptr(hi), ArgValue::ptr(bi), ArgValue::ptr(hl), ArgValue::ptr(bl)});
  for (size_t i = 0; i < 32; ++i) {
    INFO("index " << i << ": d " << d[i] << ", i32 " << iv[i] << ", i64 " << lv[i]);
    REQUIRE(hd[i] == kHalf.round(d[i]));
    REQUIRE(bd[i] == kBF16.round(d[i]));
    REQUIRE(hi[i] == kHalf.round(double(iv[i])));
    REQUIRE(bi[i] == kBF16.round(double(iv[i])));
    // i64 values need more than a double's 53 bits: compare with the exactly computed long double.
    long double exact = static_cast<long double>(lv[i]);
    double nearestDouble = static_cast<double>(exact);
    uint16_t wantH = kHalf.round(nearestDouble), wantB = kBF16.round(nearestDouble);
    if (static_cast<long double>(nearestDouble) != exact) {
      // Break a tie the double created: nudge toward the exact value before rounding.
      double nudged = std::nextafter(nearestDouble, exact > nearestDouble ? INFINITY : -INFINITY);
      wantH = kHalf.round(nudged);
      wantB = kBF16.round(nudged);
    }
    REQUIRE(hl[i] == wantH);
    REQUIRE(bl[i] == wantB);
  }
}

TEST_CASE("cpu: fp16 and bf16 arithmetic is the correctly rounded result", "[cpu][casts]") {
  std::string src = std::string(kHeader) + R"(def arith16(a_ptr, b_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(o_ptr + offs, a + b)
    tl.store(o_ptr + BLOCK + offs, a * b)
    tl.store(o_ptr + 2 * BLOCK + offs, a - b)
    tl.store(o_ptr + 3 * BLOCK + offs, a / b)
    tl.store(o_ptr + 4 * BLOCK + offs, tl.maximum(a, b))
    tl.store(o_ptr + 5 * BLOCK + offs, -a)
    tl.store(o_ptr + 6 * BLOCK + offs, tl.sum(a, axis=0) + b * 0)
)";
  for (const char *ty : {"fp16", "bf16"}) {
    const Format16 &F = std::string(ty) == "fp16" ? kHalf : kBF16;
    Compiled k = compileSource(src, std::string("*") + ty + ", *" + ty + ", *" + ty + ", 256");
    TLE_REQUIRE_COMPILED(k);
    std::mt19937 rng(9);
    std::uniform_real_distribution<double> u(-300, 300);
    std::vector<uint16_t> a(256), b(256), o(7 * 256);
    for (size_t i = 0; i < 256; ++i) {
      a[i] = F.round(u(rng));
      b[i] = F.round(i % 17 == 0 ? u(rng) * 1e-3 : u(rng));
    }
    k->run({1}, {ArgValue::ptr(a), ArgValue::ptr(b), ArgValue::ptr(o)});
    uint16_t sum = a[0];
    for (size_t i = 1; i < 256; ++i) // accumulated in the operand dtype, in index order
      sum = F.round(F.value(sum) + F.value(a[i]));
    for (size_t i = 0; i < 256; ++i) {
      INFO(ty << " a " << F.value(a[i]) << ", b " << F.value(b[i]));
      double x = F.value(a[i]), y = F.value(b[i]);
      REQUIRE(o[i] == F.round(x + y));
      REQUIRE(o[256 + i] == F.round(x * y));
      REQUIRE(o[512 + i] == F.round(x - y));
      REQUIRE(o[768 + i] == F.round(x / y));
      REQUIRE(o[1024 + i] == F.round(std::max(x, y)));
      REQUIRE(o[1280 + i] == (a[i] ^ 0x8000));
      REQUIRE(F.value(o[1536 + i]) == F.value(sum)); // sum + (b * 0): -0 and +0 compare equal
    }
  }
}

TEST_CASE("cpu: integer casts extend by the source's signedness and truncate", "[cpu][casts]") {
  std::string src = std::string(kHeader) + R"(def icast(a_ptr, b_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(o_ptr + offs, a.to(tl.int32))
    tl.store(o_ptr + BLOCK + offs, b.to(tl.int32))
    tl.store(o_ptr + 2 * BLOCK + offs, (b * 3).to(tl.int8).to(tl.int32))
    tl.store(o_ptr + 3 * BLOCK + offs, (a != 0).to(tl.int32))
    tl.store(o_ptr + 4 * BLOCK + offs, a.to(tl.uint32).to(tl.float32).to(tl.int32))
)";
  Compiled k = compileSource(src, "*i8, *u8, *i32, 8");
  TLE_REQUIRE_COMPILED(k);
  std::vector<int8_t> a{-128, -1, 0, 1, 127, -5, 100, -100};
  std::vector<uint8_t> b{0, 1, 127, 128, 255, 200, 3, 99};
  std::vector<int32_t> o(5 * 8);
  k->run({1}, {ArgValue::ptr(a), ArgValue::ptr(b), ArgValue::ptr(o)});
  for (size_t i = 0; i < 8; ++i) {
    REQUIRE(o[i] == a[i]);
    REQUIRE(o[8 + i] == b[i]);
    REQUIRE(o[16 + i] == int8_t(uint8_t(b[i] * 3u))); // u8 arithmetic wraps, then u8 -> i8 -> i32
    REQUIRE(o[24 + i] == (a[i] != 0));
    float f = float(uint32_t(int32_t(a[i]))); // i8 -> u32 sign-extends, then converts
    REQUIRE(o[32 + i] == (f >= 2147483648.f ? std::numeric_limits<int32_t>::max() : int32_t(f)));
  }
}

TEST_CASE("cpu: the host fp16 / bf16 helpers agree with the reference on every fp16 / bf16 value", "[cpu][casts]") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    auto v = static_cast<uint16_t>(h);
    if (((v >> 10) & 31) != 31) { // finite fp16
      REQUIRE(double(cpu::halfToFloat(v)) == kHalf.value(v));
      REQUIRE(cpu::halfFromDouble(kHalf.value(v)) == v);
    } else {
      REQUIRE(std::isinf(cpu::halfToFloat(v)) == !(v & 1023));
      REQUIRE(std::isnan(cpu::halfToFloat(v)) == bool(v & 1023));
    }
    if (((v >> 7) & 0xFF) != 0xFF) { // finite bf16
      REQUIRE(double(cpu::bf16ToFloat(v)) == kBF16.value(v));
      REQUIRE(cpu::bf16FromDouble(kBF16.value(v)) == v);
    }
  }
  REQUIRE(cpu::halfFromDouble(INFINITY) == 0x7C00);
  REQUIRE(cpu::bf16FromDouble(-INFINITY) == 0xFF80);
  for (double x : {1 + 0x1p-11 + 0x1p-40, 65520.0, 65519.9, 1e-30, 0x1p-25, 0x1p-25 + 0x1p-70, 1e300})
    REQUIRE(cpu::halfFromDouble(x) == kHalf.round(x));
}
