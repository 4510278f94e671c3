// CPU target semantics of the standard-library functions TLE builds from other ops: argmax /
// argmin and max/min with indices, clamp and propagate_nan, umulhi, flip, ravel, interleave,
// swizzle2d, debug_barrier, assume, and Triton's Philox random numbers (checked against the
// Random123 known-answer vectors through a reference written here from the algorithm).
#include "test_cpu_util.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <array>
#include <vector>

using namespace tle;
using namespace tle::cputest;
using cpu::ArgValue;

namespace {

const char *kHeader = "import triton\nimport triton.language as tl\n\n@triton.jit\n";
std::string kernel(const std::string &body) { return std::string(kHeader) + body; }
const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Index of the first maximum (or minimum) of `v`, NaNs ignored; 0 when every element is NaN.
template <typename T> int32_t firstExtremum(const std::vector<T> &v, bool isMax) {
  int32_t best = -1;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != v[i])
      continue;
    if (best < 0 || (isMax ? v[i] > v[size_t(best)] : v[i] < v[size_t(best)]))
      best = int32_t(i);
  }
  return best < 0 ? 0 : best;
}

/// Philox with W-bit words (Random123's philox4xW_R): each round multiplies counter words 0
/// and 2 by the round constants into double-width products and mixes the halves with the key,
/// which is then bumped by the Weyl constants.
template <typename W, typename WW> struct Philox {
  W mulA, mulB, weylA, weylB;
  std::array<W, 4> operator()(std::array<W, 4> c, W k0, W k1, int rounds = 10) const {
    constexpr int bits = sizeof(W) * 8;
    for (int r = 0; r < rounds; ++r) {
      WW p0 = WW(mulA) * c[0], p1 = WW(mulB) * c[2];
      c = {W(W(p1 >> bits) ^ c[1] ^ k0), W(p1), W(W(p0 >> bits) ^ c[3] ^ k1), W(p0)};
      k0 = W(k0 + weylA);
      k1 = W(k1 + weylB);
    }
    return c;
  }
};
const Philox<uint32_t, uint64_t> kPhilox32{0xD2511F53u, 0xCD9E8D57u, 0x9E3779B9u, 0xBB67AE85u};
const Philox<uint64_t, unsigned __int128> kPhilox64{0xD2E7470EE14C6C93ull, 0xCA5A826395121157ull,
                                                    0x9E3779B97F4A7C15ull, 0xBB67AE8584CAA73Bull};

/// Triton's uint -> [0, 1) map for 32-bit words: negatives (as int32) mirrored to -x - 1 = ~x,
/// converted to fp32 and scaled by 4.6566127342e-10 in fp32.
float uniform32(uint32_t bits) {
  int32_t x = int32_t(bits);
  if (x < 0)
    x = ~x;
  return float(x) * 4.6566127342e-10f;
}

} // namespace

TEST_CASE("lang: the Philox reference reproduces the Random123 known-answer vectors", "[cpu][lang][random]") {
  using A32 = std::array<uint32_t, 4>;
  REQUIRE(kPhilox32({0, 0, 0, 0}, 0, 0) == A32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  REQUIRE(kPhilox32({~0u, ~0u, ~0u, ~0u}, ~0u, ~0u) == A32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  REQUIRE(kPhilox32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0) ==
          A32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
  using A64 = std::array<uint64_t, 4>;
  REQUIRE(kPhilox64({0, 0, 0, 0}, 0, 0) ==
          A64{0x16554d9eca36314cull, 0xdb20fe9d672d0fdcull, 0xd7e772cee186176bull, 0x7e68b68aec7ba23bull});
}

TEST_CASE("lang: tl.philox gives the known-answer vectors", "[cpu][lang][random]") {
  std::string src = kernel(R"(def k(c_ptr, o_ptr, seed, N_ROUNDS: tl.constexpr):
    i = tl.arange(0, 4)
    c0 = tl.load(c_ptr + i * 4)
    c1 = tl.load(c_ptr + i * 4 + 1)
    c2 = tl.load(c_ptr + i * 4 + 2)
    c3 = tl.load(c_ptr + i * 4 + 3)
    a, b, c, d = tl.philox(seed, c0, c1, c2, c3, n_rounds=N_ROUNDS)
    tl.store(o_ptr + i * 4, a)
    tl.store(o_ptr + i * 4 + 1, b)
    tl.store(o_ptr + i * 4 + 2, c)
    tl.store(o_ptr + i * 4 + 3, d)
)");
  for (int rounds : {10, 7}) {
    Compiled k = compileSource(src, "*u32, *u32, i64, " + std::to_string(rounds));
    TLE_REQUIRE_COMPILED(k);
    // Four counters under one key per run; the key is the seed's 32-bit halves (low, high).
    for (uint64_t seed : {0x0ull, 0xffffffffffffffffull, 0x299f31d0a4093822ull}) {
      std::vector<uint32_t> c = {0, 0, 0, 0, ~0u, ~0u, ~0u, ~0u, 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344,
                                 1, 2, 3, 4};
      std::vector<uint32_t> o(16);
      k->run({1}, {ArgValue::ptr(c), ArgValue::ptr(o), ArgValue::of<int64_t>(int64_t(seed))});
      for (size_t n = 0; n < 4; ++n) {
        auto want = kPhilox32({c[4 * n], c[4 * n + 1], c[4 * n + 2], c[4 * n + 3]}, uint32_t(seed),
                              uint32_t(seed >> 32), rounds);
        for (size_t w = 0; w < 4; ++w) {
          INFO("rounds " << rounds << " seed " << seed << " counter " << n << " word " << w);
          REQUIRE(o[4 * n + w] == want[w]);
        }
      }
    }
  }
  // The vectors themselves, spelled out (10 rounds, key 0 and key pi).
  Compiled k = compileSource(src, "*u32, *u32, i64, 10");
  std::vector<uint32_t> c = {0, 0, 0, 0, 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0, 0, 0, 0, 0, 0, 0, 0};
  std::vector<uint32_t> o(16);
  k->run({1}, {ArgValue::ptr(c), ArgValue::ptr(o), ArgValue::of<int64_t>(0x299f31d0a4093822ll)});
  REQUIRE(o[4] == 0xd16cfe09);
  REQUIRE(o[7] == 0x24126ea1);
  k->run({1}, {ArgValue::ptr(c), ArgValue::ptr(o), ArgValue::of<int64_t>(0)});
  REQUIRE(o[0] == 0x6627e8d5);
  REQUIRE(o[3] == 0x9b00dbd8);
}

TEST_CASE("lang: randint, randint4x, rand, rand4x and randn match Triton's definitions", "[cpu][lang][random]") {
  std::string src = kernel(R"(def k(o_ptr, u_ptr, f_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK) * 3 + 5
    i = tl.arange(0, BLOCK)
    tl.store(o_ptr + i, tl.randint(seed, offs))
    a, b, c, d = tl.randint4x(seed, offs)
    tl.store(o_ptr + BLOCK + i, a)
    tl.store(o_ptr + 2 * BLOCK + i, b)
    tl.store(o_ptr + 3 * BLOCK + i, c)
    tl.store(o_ptr + 4 * BLOCK + i, d)
    tl.store(f_ptr + i, tl.rand(seed, offs))
    r0, r1, r2, r3 = tl.rand4x(seed, offs)
    tl.store(f_ptr + BLOCK + i, r3)
    tl.store(f_ptr + 2 * BLOCK + i, tl.randn(seed, offs))
    tl.store(f_ptr + 3 * BLOCK + i, tl.uint_to_uniform_float(tl.load(u_ptr + i)))
    n0, n1, n2, n3 = tl.randn4x(seed, offs)
    tl.store(f_ptr + 4 * BLOCK + i, n3)
)");
  Compiled k = compileSource(src, "*u32, *u32, *fp32, i32, 256");
  TLE_REQUIRE_COMPILED(k);
  const size_t B = 256;
  for (int32_t seed : {0, 42, -7, 0x7fffffff}) {
    std::vector<uint32_t> o(5 * B), u(B);
    std::vector<float> f(5 * B);
    for (size_t i = 0; i < B; ++i) // the edges of the uniform map: 0, INT_MAX, INT_MIN, -1
      u[i] = i == 0 ? 0u : i == 1 ? 0x7fffffffu : i == 2 ? 0x80000000u : i == 3 ? 0xffffffffu : uint32_t(i * 2654435761u);
    k->run({1}, {ArgValue::ptr(o), ArgValue::ptr(u), ArgValue::ptr(f), i32(seed)});
    // The seed goes to uint64 by sign extension: its high half is all ones when negative.
    uint64_t s = uint64_t(int64_t(seed));
    for (size_t i = 0; i < B; ++i) {
      INFO("seed " << seed << " i " << i);
      auto w = kPhilox32({uint32_t(i * 3 + 5), 0, 0, 0}, uint32_t(s), uint32_t(s >> 32));
      REQUIRE(o[i] == w[0]);
      for (size_t j = 0; j < 4; ++j)
        REQUIRE(o[(j + 1) * B + i] == w[j]);
      REQUIRE(f[i] == uniform32(w[0]));
      REQUIRE(f[i] >= 0.f);
      REQUIRE(f[i] < 1.f);
      REQUIRE(f[B + i] == uniform32(w[3]));
      // Box-Muller in double from the fp32 uniforms (the target's log/cos differ in the last bits).
      auto normal = [](float u1, float u2, bool sine) {
        double r = std::sqrt(-2.0 * std::log(double(std::max(1.0e-7f, u1))));
        double th = double(6.283185307179586f * u2);
        return r * (sine ? std::sin(th) : std::cos(th));
      };
      REQUIRE(std::fabs(f[2 * B + i] - normal(uniform32(w[0]), uniform32(w[1]), false)) < 1e-5);
      REQUIRE(f[3 * B + i] == uniform32(u[i]));
      REQUIRE(std::fabs(f[4 * B + i] - normal(uniform32(w[2]), uniform32(w[3]), true)) < 1e-5);
    }
    REQUIRE(f[3 * B + 1] < 1.f); // INT_MAX maps just below 1
    REQUIRE(f[3 * B + 2] == f[3 * B + 1]);
  }
}

TEST_CASE("lang: 64-bit offsets use Philox 4x64 keyed by the seed", "[cpu][lang][random]") {
  std::string src = kernel(R"(def k(o_ptr, f_ptr, seed, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    offs = i.to(tl.int64) * 1000000007 + 3
    tl.store(o_ptr + i, tl.randint(seed, offs))
    tl.store(f_ptr + i, tl.rand(seed, offs))
)");
  Compiled k = compileSource(src, "*u64, *fp32, i64, 64");
  TLE_REQUIRE_COMPILED(k);
  for (int64_t seed : {int64_t(0), int64_t(123456789012345), int64_t(-5)}) {
    std::vector<uint64_t> o(64);
    std::vector<float> f(64);
    k->run({1}, {ArgValue::ptr(o), ArgValue::ptr(f), ArgValue::of<int64_t>(seed)});
    for (size_t i = 0; i < 64; ++i) {
      INFO("seed " << seed << " i " << i);
      auto w = kPhilox64({uint64_t(i) * 1000000007ull + 3, 0, 0, 0}, uint64_t(seed), 0);
      REQUIRE(o[i] == w[0]);
      int64_t x = int64_t(w[0]);
      if (x < 0)
        x = ~x;
      REQUIRE(f[i] == float(x) * 1.0842020432385337e-19f);
    }
  }
}

TEST_CASE("lang: argmax and argmin give the first extremum, NaNs ignored", "[cpu][lang][argmax]") {
  std::string src = kernel(R"(def k(x_ptr, o_ptr, v_ptr, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :])
    tl.store(o_ptr + r, tl.argmax(x, axis=1))
    tl.store(o_ptr + M + r, tl.argmin(x, 1, tie_break_left=False))
    tl.store(o_ptr + 2 * M + c, x.argmax(0))
    tl.store(o_ptr + 2 * M + N + c, tl.argmin(x, axis=-2))
    v, j = tl.max(x, axis=1, return_indices=True)
    tl.store(v_ptr + r, v)
    tl.store(o_ptr + 2 * M + 2 * N + r, j)
    w, l = tl.min(x, 1, return_indices=True, return_indices_tie_break_left=True, keep_dims=True)
    tl.store(v_ptr + M + r[:, None] + tl.zeros_like(w).to(tl.int32), w)
    tl.store(o_ptr + 3 * M + 2 * N + r[:, None], l)
)");
  Compiled k = compileSource(src, "*fp32, *i32, *fp32, 8, 16");
  TLE_REQUIRE_COMPILED(k);
  const size_t M = 8, N = 16;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-3, 3);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<float> x(M * N);
    for (auto &e : x)
      e = float(small(rng)); // many ties
    // NaNs here and there, an all-NaN row and column, signed zeros.
    x[3] = kNaN;
    x[N * 2 + 5] = kNaN;
    for (size_t j = 0; j < N; ++j)
      x[N * 4 + j] = kNaN;
    for (size_t i = 0; i < M; ++i)
      x[i * N + 9] = kNaN;
    x[N * 5 + 0] = -0.f;
    x[N * 5 + 1] = 0.f;
    std::vector<int32_t> o(3 * M + 2 * N + M, -1);
    std::vector<float> v(2 * M);
    k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(o), ArgValue::ptr(v)});
    for (size_t i = 0; i < M; ++i) {
      std::vector<float> row(x.begin() + long(i * N), x.begin() + long((i + 1) * N));
      INFO("trial " << trial << " row " << i);
      REQUIRE(o[i] == firstExtremum(row, true));
      REQUIRE(o[M + i] == firstExtremum(row, false));
      REQUIRE(o[2 * M + 2 * N + i] == firstExtremum(row, true));
      REQUIRE(o[3 * M + 2 * N + i] == firstExtremum(row, false));
      float mx = row[size_t(firstExtremum(row, true))], mn = row[size_t(firstExtremum(row, false))];
      if (i == 4) {
        REQUIRE(std::isnan(v[i]));
        REQUIRE(std::isnan(v[M + i]));
      } else {
        REQUIRE(v[i] == mx);
        REQUIRE(v[M + i] == mn);
      }
    }
    for (size_t j = 0; j < N; ++j) {
      std::vector<float> col;
      for (size_t i = 0; i < M; ++i)
        col.push_back(x[i * N + j]);
      INFO("trial " << trial << " col " << j);
      REQUIRE(o[2 * M + j] == firstExtremum(col, true));
      REQUIRE(o[2 * M + N + j] == firstExtremum(col, false));
    }
  }
}

TEST_CASE("lang: argmax of integers and half floats keeps exact values", "[cpu][lang][argmax]") {
  std::string src = kernel(R"(def k(a_ptr, b_ptr, h_ptr, o_ptr, va_ptr, vb_ptr, vh_ptr, N: tl.constexpr):
    c = tl.arange(0, N)
    a = tl.load(a_ptr + c)
    b = tl.load(b_ptr + c)
    h = tl.load(h_ptr + c)
    tl.store(o_ptr, tl.argmax(a, 0))
    tl.store(o_ptr + 1, tl.argmin(a, 0))
    tl.store(o_ptr + 2, tl.argmax(b, 0))
    tl.store(o_ptr + 3, tl.argmin(b, 0))
    tl.store(o_ptr + 4, tl.argmax(h, 0))
    tl.store(o_ptr + 5, tl.argmin(h, 0))
    tl.store(o_ptr + 6, tl.argmax(a > 0, 0))
    va, ia = tl.max(a, 0, return_indices=True)
    vb, ib = tl.min(b, return_indices=True)
    vh, ih = tl.max(h, 0, return_indices=True)
    tl.static_assert(va.dtype == tl.int64)
    tl.static_assert(vb.dtype == tl.uint8)
    tl.static_assert(vh.dtype == tl.float16)
    tl.static_assert(ih.dtype == tl.int32)
    tl.store(va_ptr, va)
    tl.store(vb_ptr, vb)
    tl.store(vh_ptr, vh)
)");
  Compiled k = compileSource(src, "*i64, *u8, *fp16, *i32, *i64, *u8, *fp16, 32");
  TLE_REQUIRE_COMPILED(k);
  std::vector<int64_t> a(32);
  std::vector<uint8_t> bb(32);
  std::vector<uint16_t> h(32);
  for (size_t i = 0; i < 32; ++i) {
    a[i] = (int64_t(i) * 7919 % 23 - 11) * 1000000000000ll;
    bb[i] = uint8_t(200 + (i * 37) % 56);
    h[i] = kHalf.round((long double)(int(i * 13 % 17) - 8) / 4);
  }
  a[20] = std::numeric_limits<int64_t>::max();
  a[25] = std::numeric_limits<int64_t>::max();
  a[3] = std::numeric_limits<int64_t>::min();
  std::vector<int32_t> o(7, -1);
  std::vector<int64_t> va(1);
  std::vector<uint8_t> vb(1);
  std::vector<uint16_t> vh(1);
  k->run({1}, {ArgValue::ptr(a), ArgValue::ptr(bb), ArgValue::ptr(h), ArgValue::ptr(o), ArgValue::ptr(va),
               ArgValue::ptr(vb), ArgValue::ptr(vh)});
  std::vector<float> hf;
  for (auto e : h)
    hf.push_back(float(kHalf.value(e)));
  std::vector<int> pos;
  for (auto e : a)
    pos.push_back(e > 0);
  REQUIRE(o[0] == 20);
  REQUIRE(o[1] == 3);
  REQUIRE(o[2] == firstExtremum(bb, true));
  REQUIRE(o[3] == firstExtremum(bb, false));
  REQUIRE(o[4] == firstExtremum(hf, true));
  REQUIRE(o[5] == firstExtremum(hf, false));
  REQUIRE(o[6] == firstExtremum(pos, true));
  REQUIRE(va[0] == std::numeric_limits<int64_t>::max());
  REQUIRE(vb[0] == bb[size_t(firstExtremum(bb, false))]);
  REQUIRE(vh[0] == h[size_t(firstExtremum(hf, true))]);
}

TEST_CASE("lang: clamp and propagate_nan", "[cpu][lang][clamp]") {
  std::string src = kernel(R"(def k(x_ptr, lo_ptr, o_ptr, N: tl.constexpr):
    c = tl.arange(0, N)
    x = tl.load(x_ptr + c)
    lo = tl.load(lo_ptr + c)
    tl.store(o_ptr + c, tl.clamp(x, -0.5, 0.75))
    tl.store(o_ptr + N + c, tl.clamp(x, -0.5, 0.75, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 2 * N + c, tl.clamp(x, lo, 1.0))
    tl.store(o_ptr + 3 * N + c, tl.clamp(x, lo, 1.0, tl.PropagateNan.ALL))
    tl.store(o_ptr + 4 * N + c, tl.maximum(x, lo, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 5 * N + c, tl.minimum(x, lo, propagate_nan=tl.PropagateNan.NONE))
)");
  Compiled k = compileSource(src, "*fp32, *fp32, *fp32, 16");
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x = {-2, -0.5f, -0.25f, 0, 0.5f, 0.75f, 0.8f, 3, kNaN, kNaN, -1, 1, 2, kNaN, -0.6f, 0.1f};
  std::vector<float> lo = {0, 0, kNaN, 0, 0.6f, -1, kNaN, 0, 0, kNaN, -2, 0.5f, kNaN, kNaN, -0.7f, 0.2f};
  std::vector<float> o(6 * 16);
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(lo), ArgValue::ptr(o)});
  auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
  for (size_t i = 0; i < 16; ++i) {
    INFO("i " << i << " x " << x[i] << " lo " << lo[i]);
    // NONE: fminf(fmaxf(x, lo), hi) (a NaN operand is ignored); ALL: NaN if any operand is.
    REQUIRE(same(o[i], std::fmin(std::fmax(x[i], -0.5f), 0.75f)));
    REQUIRE(same(o[16 + i], std::isnan(x[i]) ? kNaN : std::fmin(std::fmax(x[i], -0.5f), 0.75f)));
    REQUIRE(same(o[32 + i], std::fmin(std::fmax(x[i], lo[i]), 1.0f)));
    REQUIRE(same(o[48 + i], std::isnan(x[i]) || std::isnan(lo[i]) ? kNaN : std::fmin(std::fmax(x[i], lo[i]), 1.0f)));
    REQUIRE(same(o[64 + i], std::isnan(x[i]) || std::isnan(lo[i]) ? kNaN : std::fmax(x[i], lo[i])));
    REQUIRE(same(o[80 + i], std::fmin(x[i], lo[i])));
  }
}

TEST_CASE("lang: umulhi on 32- and 64-bit integers", "[cpu][lang][umulhi]") {
  std::string src = kernel(R"(def k(a_ptr, b_ptr, c_ptr, d_ptr, o_ptr, p_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(a_ptr + i)
    b = tl.load(b_ptr + i)
    c = tl.load(c_ptr + i)
    d = tl.load(d_ptr + i)
    tl.store(o_ptr + i, tl.umulhi(a, b))
    tl.store(o_ptr + N + i, tl.umulhi(a.to(tl.int32, bitcast=True), b.to(tl.int32, bitcast=True)).to(tl.uint32, bitcast=True))
    tl.store(o_ptr + 2 * N + i, tl.umulhi(0xCD9E8D57, a))
    tl.store(p_ptr + i, tl.umulhi(c, d))
    tl.store(p_ptr + N + i, tl.umulhi(c.to(tl.int64, bitcast=True), d.to(tl.int64, bitcast=True)).to(tl.uint64, bitcast=True))
)");
  Compiled k = compileSource(src, "*u32, *u32, *u64, *u64, *u32, *u64, 64");
  TLE_REQUIRE_COMPILED(k);
  std::mt19937_64 rng(3);
  std::vector<uint32_t> a(64), b(64), o(3 * 64);
  std::vector<uint64_t> c(64), d(64), p(2 * 64);
  for (size_t i = 0; i < 64; ++i) {
    a[i] = uint32_t(rng());
    b[i] = uint32_t(rng());
    c[i] = rng();
    d[i] = rng();
  }
  a[0] = b[0] = 0xffffffffu;
  c[0] = d[0] = ~0ull;
  a[1] = 0;
  c[1] = 1;
  k->run({1}, {ArgValue::ptr(a), ArgValue::ptr(b), ArgValue::ptr(c), ArgValue::ptr(d), ArgValue::ptr(o), ArgValue::ptr(p)});
  for (size_t i = 0; i < 64; ++i) {
    INFO("i " << i);
    uint32_t hi = uint32_t((uint64_t(a[i]) * b[i]) >> 32);
    REQUIRE(o[i] == hi);
    REQUIRE(o[64 + i] == hi); // signed operands: the same unsigned product
    REQUIRE(o[128 + i] == uint32_t((uint64_t(0xCD9E8D57u) * a[i]) >> 32));
    uint64_t hi64 = uint64_t((unsigned __int128)c[i] * d[i] >> 64);
    REQUIRE(p[i] == hi64);
    REQUIRE(p[64 + i] == hi64);
  }
  REQUIRE(o[0] == 0xfffffffeu);
  REQUIRE(p[0] == ~1ull);
}

TEST_CASE("lang: flip, ravel and interleave", "[cpu][lang][shape]") {
  std::string src = kernel(R"(def k(x_ptr, y_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    idx = r[:, None] * N + c[None, :]
    x = tl.load(x_ptr + idx)
    y = tl.load(y_ptr + idx)
    tl.store(o_ptr + idx, tl.flip(x, 0))
    tl.store(o_ptr + M * N + idx, tl.flip(x, dim=1))
    tl.store(o_ptr + 2 * M * N + idx, x.flip())
    tl.store(o_ptr + 3 * M * N + tl.arange(0, M * N), tl.ravel(tl.flip(x, -2)))
    tl.store(o_ptr + 4 * M * N + tl.arange(0, 2 * M * N), tl.ravel(tl.interleave(x, y)))
    tl.store(o_ptr + 6 * M * N + c, tl.flip(tl.load(x_ptr + c)))
    z = tl.reshape(x, (2, M // 2, N))
    tl.store(o_ptr + 7 * M * N + tl.arange(0, M * N), tl.flip(z, 1).ravel())
    s = tl.interleave(tl.load(x_ptr + 1), tl.load(y_ptr + 2))
    tl.static_assert(len(s.shape) == 1 and s.shape[0] == 2)
    tl.store(o_ptr + 8 * M * N + tl.arange(0, 2), s)
)");
  Compiled k = compileSource(src, "*i16, *i16, *i16, 4, 8");
  TLE_REQUIRE_COMPILED(k);
  const size_t M = 4, N = 8, S = M * N;
  std::vector<int16_t> x(S), y(S), o(8 * S + 2);
  for (size_t i = 0; i < S; ++i) {
    x[i] = int16_t(i * 3 + 1);
    y[i] = int16_t(-int(i) - 100);
  }
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(o)});
  for (size_t i = 0; i < M; ++i)
    for (size_t j = 0; j < N; ++j) {
      INFO("i " << i << " j " << j);
      REQUIRE(o[i * N + j] == x[(M - 1 - i) * N + j]);
      REQUIRE(o[S + i * N + j] == x[i * N + (N - 1 - j)]);
      REQUIRE(o[2 * S + i * N + j] == x[i * N + (N - 1 - j)]); // dim=None: the last dim
      REQUIRE(o[3 * S + i * N + j] == x[(M - 1 - i) * N + j]);
      REQUIRE(o[4 * S + 2 * (i * N + j)] == x[i * N + j]);
      REQUIRE(o[4 * S + 2 * (i * N + j) + 1] == y[i * N + j]);
    }
  for (size_t j = 0; j < N; ++j)
    REQUIRE(o[6 * S + j] == x[N - 1 - j]);
  // [2, M/2, N] flipped along the middle dim.
  for (size_t a = 0; a < 2; ++a)
    for (size_t m = 0; m < M / 2; ++m)
      for (size_t j = 0; j < N; ++j)
        REQUIRE(o[7 * S + (a * (M / 2) + m) * N + j] == x[(a * (M / 2) + (M / 2 - 1 - m)) * N + j]);
  // Two scalars interleave into a 2-element tile.
  REQUIRE(o[8 * S] == x[1]);
  REQUIRE(o[8 * S + 1] == y[2]);
}

TEST_CASE("lang: flip of booleans and floats", "[cpu][lang][shape]") {
  std::string src = kernel(R"(def k(x_ptr, o_ptr, b_ptr, N: tl.constexpr):
    c = tl.arange(0, N)
    x = tl.load(x_ptr + c)
    tl.store(o_ptr + c, tl.flip(x, 0))
    tl.store(b_ptr + c, tl.flip(x > 0, 0).to(tl.int8))
)");
  Compiled k = compileSource(src, "*fp64, *fp64, *i8, 128");
  TLE_REQUIRE_COMPILED(k);
  std::vector<double> x(128), o(128);
  std::vector<int8_t> bo(128);
  for (size_t i = 0; i < 128; ++i)
    x[i] = std::sin(double(i)) * 10;
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(o), ArgValue::ptr(bo)});
  for (size_t i = 0; i < 128; ++i) {
    REQUIRE(o[i] == x[127 - i]);
    REQUIRE(bo[i] == (x[127 - i] > 0));
  }
}

TEST_CASE("lang: swizzle2d regroups program ids as Triton defines", "[cpu][lang][swizzle]") {
  std::string src = kernel(R"(def k(o_ptr, size_i, size_j, SIZE_G: tl.constexpr, BLOCK: tl.constexpr):
    t = tl.arange(0, BLOCK)
    i = t // size_j
    j = t % size_j
    ni, nj = tl.swizzle2d(i, j, size_i, size_j, SIZE_G)
    m = t < size_i * size_j
    tl.store(o_ptr + 2 * t, ni, mask=m)
    tl.store(o_ptr + 2 * t + 1, nj, mask=m)
    ci, cj = tl.swizzle2d(5, 2, 7, 3, 2)
    tl.static_assert(ci == 5)
    tl.static_assert(cj == 2)
)");
  for (int g : {1, 2, 3, 4}) {
    Compiled k = compileSource(src, "*i32, i32, i32, " + std::to_string(g) + ", 128");
    TLE_REQUIRE_COMPILED(k);
    for (auto [si, sj] : {std::pair{7, 3}, std::pair{8, 16}, std::pair{5, 5}, std::pair{1, 9}}) {
      std::vector<int32_t> o(256, -1);
      k->run({1}, {ArgValue::ptr(o), i32(si), i32(sj)});
      // Reference: groups of g rows (the last one shorter) are walked column by column, each
      // column top to bottom; the t-th program (row-major over size_i x size_j) takes the t-th
      // position of that walk.
      std::vector<std::pair<int, int>> walk;
      for (int g0 = 0; g0 < si; g0 += g) {
        int rows = std::min(g, si - g0);
        for (int col = 0; col < sj; ++col)
          for (int r = 0; r < rows; ++r)
            walk.push_back({g0 + r, col});
      }
      // The walk covers every (i, j) exactly once.
      std::set<std::pair<int, int>> seen(walk.begin(), walk.end());
      REQUIRE(seen.size() == size_t(si * sj));
      for (int t = 0; t < si * sj; ++t) {
        INFO("g " << g << " size " << si << "x" << sj << " t " << t);
        REQUIRE(o[size_t(2 * t)] == walk[size_t(t)].first);
        REQUIRE(o[size_t(2 * t + 1)] == walk[size_t(t)].second);
      }
    }
  }
}

TEST_CASE("lang: debug_barrier and assume change nothing on the CPU", "[cpu][lang]") {
  std::string src = kernel(R"(def k(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    tl.assume(n > 0)
    tl.assume(BLOCK > 0)
    c = tl.arange(0, BLOCK)
    tl.assume(c >= 0)
    x = tl.load(x_ptr + c, mask=c < n)
    tl.debug_barrier()
    tl.store(o_ptr + c, x * 2, mask=c < n)
)");
  Compiled k = compileSource(src, "*i32, *i32, i32, 32");
  TLE_REQUIRE_COMPILED(k);
  std::vector<int32_t> x(32), o(32, 0);
  for (size_t i = 0; i < 32; ++i)
    x[i] = int32_t(i) - 5;
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(o), i32(20)});
  for (size_t i = 0; i < 32; ++i)
    REQUIRE(o[i] == (i < 20 ? 2 * x[i] : 0));
}
