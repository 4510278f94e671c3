// CPU target semantics, op by op: masked loads, broadcasting, reductions along every axis,
// integer division and shifts, float min/max, math, control flow with carried tiles, program ids.
#include "test_cpu_util.h"

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

std::string kernel(const std::string &body) { return std::string(kHeader) + body; }

} // namespace

TEST_CASE("cpu: masked loads yield other or zero and touch no memory", "[cpu][ops]") {
  std::string src = kernel(R"(def masked(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x_ptr + offs, mask=m, other=-1.5)
    b = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, a)
    tl.store(y_ptr + BLOCK + offs, b)
    tl.store(y_ptr + 2 * BLOCK + offs, a + 1.0, mask=offs >= n)
)");
  cpu::CompileOptions checked;
  checked.checkBounds = true; // a masked-off lane's address lies outside x: touching it would be reported
  Compiled k = compileSource(src, "*fp32, *fp32, i32, 64", checked);
  TLE_REQUIRE_COMPILED(k);
  for (int n : {0, 1, 37, 64}) {
    std::vector<float> x(size_t(std::max(n, 1)));
    for (int i = 0; i < n; ++i)
      x[size_t(i)] = float(i) * 0.5f;
    std::vector<float> y(3 * 64, 99.f);
    k->run({1}, {ArgValue::ptr(x.data(), size_t(n) * 4), ArgValue::ptr(y), i32(n)});
    for (int i = 0; i < 64; ++i) {
      INFO("n " << n << ", i " << i);
      REQUIRE(y[size_t(i)] == (i < n ? float(i) * 0.5f : -1.5f));
      REQUIRE(y[64 + size_t(i)] == (i < n ? float(i) * 0.5f : 0.f));
      REQUIRE(y[128 + size_t(i)] == (i < n ? 99.f : -0.5f));
    }
  }
}

TEST_CASE("cpu: broadcasting x[:, None] against y[None, :]", "[cpu][ops]") {
  std::string src = kernel(R"(def outer(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, M)
    j = tl.arange(0, N)
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + j)
    z = x[:, None] * 10.0 + y[None, :]
    tl.store(out_ptr + i[:, None] * N + j[None, :], z)
)");
  for (auto [M, N] : {std::pair{4, 8}, std::pair{16, 2}, std::pair{1, 32}, std::pair{32, 1}}) {
    Compiled k = compileSource(src, "*fp32, *fp32, *fp32, " + std::to_string(M) + ", " + std::to_string(N));
    TLE_REQUIRE_COMPILED(k);
    std::vector<float> x(static_cast<size_t>(M)), y(static_cast<size_t>(N)), out(static_cast<size_t>(M * N));
    for (int i = 0; i < M; ++i)
      x[size_t(i)] = float(i);
    for (int j = 0; j < N; ++j)
      y[size_t(j)] = float(j) / 8;
    k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(out)});
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        REQUIRE(out[size_t(i * N + j)] == float(i) * 10 + float(j) / 8);
  }
}

TEST_CASE("cpu: reductions along each axis, summed in index order", "[cpu][ops]") {
  std::string src = kernel(R"(def red(x_ptr, s0_ptr, s1_ptr, mx0_ptr, mn1_ptr, M: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, M)
    j = tl.arange(0, N)
    x = tl.load(x_ptr + i[:, None] * N + j[None, :])
    tl.store(s0_ptr + j, tl.sum(x, axis=0))
    tl.store(s1_ptr + i, tl.sum(x, axis=1))
    tl.store(mx0_ptr + j, tl.max(x, axis=0))
    tl.store(mn1_ptr + i, tl.min(x, axis=1))
)");
  std::mt19937 rng(11);
  for (auto [M, N] : {std::pair{8, 16}, std::pair{1, 64}, std::pair{64, 1}, std::pair{32, 32}}) {
    INFO("M " << M << ", N " << N);
    SECTION("fp32 " + std::to_string(M) + "x" + std::to_string(N)) {
      Compiled k = compileSource(src, "*fp32, *fp32, *fp32, *fp32, *fp32, " + std::to_string(M) + ", " + std::to_string(N));
      TLE_REQUIRE_COMPILED(k);
      std::uniform_real_distribution<float> u(-1e3f, 1e3f);
      std::vector<float> x(static_cast<size_t>(M * N)), s0(static_cast<size_t>(N)), s1(static_cast<size_t>(M)), mx0(static_cast<size_t>(N)), mn1(static_cast<size_t>(M));
      for (auto &v : x)
        v = u(rng);
      x[0] = NAN; // max/min ignore NaN; sums propagate it
      k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(s0), ArgValue::ptr(s1), ArgValue::ptr(mx0), ArgValue::ptr(mn1)});
      for (int j = 0; j < N; ++j) {
        float s = x[size_t(j)], mx = -INFINITY;
        for (int i = 1; i < M; ++i)
          s += x[size_t(i * N + j)];
        for (int i = 0; i < M; ++i)
          if (!std::isnan(x[size_t(i * N + j)]))
            mx = std::max(mx, x[size_t(i * N + j)]);
        if (j == 0)
          REQUIRE(std::isnan(s0[0]));
        else
          REQUIRE(s0[size_t(j)] == s); // bit-exact: the documented order
        if (M == 1 && j == 0)
          REQUIRE(std::isnan(mx0[0]));
        else
          REQUIRE(mx0[size_t(j)] == mx);
      }
      for (int i = 0; i < M; ++i) {
        float s = x[size_t(i * N)], mn = INFINITY;
        for (int j = 1; j < N; ++j)
          s += x[size_t(i * N + j)];
        for (int j = 0; j < N; ++j)
          if (!std::isnan(x[size_t(i * N + j)]))
            mn = std::min(mn, x[size_t(i * N + j)]);
        if (i == 0)
          REQUIRE(std::isnan(s1[0]));
        else
          REQUIRE(s1[size_t(i)] == s);
        if (N == 1 && i == 0)
          REQUIRE(std::isnan(mn1[0]));
        else
          REQUIRE(mn1[size_t(i)] == mn);
      }
    }
    SECTION("i32 " + std::to_string(M) + "x" + std::to_string(N)) {
      Compiled k = compileSource(src, "*i32, *i32, *i32, *i32, *i32, " + std::to_string(M) + ", " + std::to_string(N));
      TLE_REQUIRE_COMPILED(k);
      std::uniform_int_distribution<int32_t> u(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
      std::vector<int32_t> x(static_cast<size_t>(M * N)), s0(static_cast<size_t>(N)), s1(static_cast<size_t>(M)), mx0(static_cast<size_t>(N)), mn1(static_cast<size_t>(M));
      for (auto &v : x)
        v = u(rng);
      k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(s0), ArgValue::ptr(s1), ArgValue::ptr(mx0), ArgValue::ptr(mn1)});
      for (int j = 0; j < N; ++j) {
        uint32_t s = 0;
        int32_t mx = std::numeric_limits<int32_t>::min();
        for (int i = 0; i < M; ++i) {
          s += uint32_t(x[size_t(i * N + j)]); // wraps
          mx = std::max(mx, x[size_t(i * N + j)]);
        }
        REQUIRE(s0[size_t(j)] == int32_t(s));
        REQUIRE(mx0[size_t(j)] == mx);
      }
      for (int i = 0; i < M; ++i) {
        uint32_t s = 0;
        int32_t mn = std::numeric_limits<int32_t>::max();
        for (int j = 0; j < N; ++j) {
          s += uint32_t(x[size_t(i * N + j)]);
          mn = std::min(mn, x[size_t(i * N + j)]);
        }
        REQUIRE(s1[size_t(i)] == int32_t(s));
        REQUIRE(mn1[size_t(i)] == mn);
      }
    }
  }
}

TEST_CASE("cpu: reduction over the middle axis of a 3-D tile", "[cpu][ops]") {
  std::string src = kernel(R"(def red3(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    i = tl.arange(0, M)
    j = tl.arange(0, N)
    k = tl.arange(0, K)
    x = tl.load(x_ptr + i[:, None, None] * N * K + j[None, :, None] * K + k[None, None, :])
    tl.store(o_ptr + i[:, None] * K + k[None, :], tl.sum(x, axis=1))
    tl.store(o_ptr + M * K + i, tl.max(tl.max(x, axis=2), axis=1))
)");
  const int M = 4, N = 8, K = 16;
  Compiled k = compileSource(src, "*fp32, *fp32, 4, 8, 16");
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x(M * N * K), o(M * K + M);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float((i * 37) % 101) - 50.f;
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(o)});
  for (int i = 0; i < M; ++i) {
    float mx = -INFINITY;
    for (int kk = 0; kk < K; ++kk) {
      float s = 0;
      for (int j = 0; j < N; ++j) {
        s += x[size_t((i * N + j) * K + kk)];
        mx = std::max(mx, x[size_t((i * N + j) * K + kk)]);
      }
      REQUIRE(o[size_t(i * K + kk)] == s);
    }
    REQUIRE(o[size_t(M * K + i)] == mx);
  }
}

TEST_CASE("cpu: integer // and % truncate; division by zero yields 0", "[cpu][ops]") {
  std::string src = kernel(R"(def divmod(a_ptr, b_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m)
    b = tl.load(b_ptr + offs, mask=m, other=1)
    tl.store(q_ptr + offs, a // b, mask=m)
    tl.store(r_ptr + offs, a % b, mask=m)
)");
  SECTION("i32") {
    Compiled k = compileSource(src, "*i32, *i32, *i32, *i32, i32, 64");
    TLE_REQUIRE_COMPILED(k);
    const int32_t mn = std::numeric_limits<int32_t>::min();
    std::vector<int32_t> a{7, -7, 7, -7, 0, 5, mn, mn, mn, 123456789, -1, 1, 0};
    std::vector<int32_t> b{2, 2, -2, -2, 3, 0, -1, 1, 0, 1000, 7, -7, 0};
    int n = int(a.size());
    std::vector<int32_t> q(a.size()), r(a.size());
    k->run({1}, {ArgValue::ptr(a), ArgValue::ptr(b), ArgValue::ptr(q), ArgValue::ptr(r), i32(n)});
    for (size_t i = 0; i < a.size(); ++i) {
      INFO(a[i] << " // " << b[i]);
      int32_t wq = b[i] == 0 ? 0 : (a[i] == mn && b[i] == -1) ? mn : a[i] / b[i];
      int32_t wr = b[i] == 0 || b[i] == -1 ? 0 : a[i] % b[i];
      REQUIRE(q[i] == wq);
      REQUIRE(r[i] == wr);
    }
  }
  SECTION("u32 and i8") {
    Compiled ku = compileSource(src, "*u32, *u32, *u32, *u32, i32, 64");
    TLE_REQUIRE_COMPILED(ku);
    std::vector<uint32_t> a{7, 0xFFFFFFFFu, 0x80000000u, 5, 0}, b{2, 3, 0xFFFFFFFFu, 0, 0};
    std::vector<uint32_t> q(a.size()), r(a.size());
    ku->run({1}, {ArgValue::ptr(a), ArgValue::ptr(b), ArgValue::ptr(q), ArgValue::ptr(r), i32(int(a.size()))});
    for (size_t i = 0; i < a.size(); ++i) {
      REQUIRE(q[i] == (b[i] ? a[i] / b[i] : 0));
      REQUIRE(r[i] == (b[i] ? a[i] % b[i] : 0));
    }
    Compiled k8 = compileSource(src, "*i8, *i8, *i8, *i8, i32, 64");
    TLE_REQUIRE_COMPILED(k8);
    std::vector<int8_t> a8{-128, -128, 100, -100, 9}, b8{-1, 3, -7, 7, 0}, q8(5), r8(5);
    k8->run({1}, {ArgValue::ptr(a8), ArgValue::ptr(b8), ArgValue::ptr(q8), ArgValue::ptr(r8), i32(5)});
    std::vector<int8_t> wq{-128, -42, -14, -14, 0}, wr{0, -2, 2, -2, 0};
    REQUIRE(q8 == wq);
    REQUIRE(r8 == wr);
  }
}

TEST_CASE("cpu: shifts clamp amounts past the bit width", "[cpu][ops]") {
  std::string src = kernel(R"(def shifts(a_ptr, b_ptr, l_ptr, r_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(l_ptr + offs, a << b)
    tl.store(r_ptr + offs, a >> b)
)");
  Compiled k = compileSource(src, "*i32, *i32, *i32, *i32, 8");
  TLE_REQUIRE_COMPILED(k);
  std::vector<int32_t> a{-8, -8, -8, -8, 5, 5, 5, 1}, b{0, 1, 31, 32, 33, -1, 3, 30}, l(8), r(8);
  k->run({1}, {ArgValue::ptr(a), ArgValue::ptr(b), ArgValue::ptr(l), ArgValue::ptr(r)});
  std::vector<int32_t> wl{-8, -16, 0, 0, 0, 0, 40, 1 << 30}, wr{-8, -4, -1, -1, 0, 0, 0, 0};
  REQUIRE(l == wl);
  REQUIRE(r == wr);
  Compiled ku = compileSource(src, "*u32, *u32, *u32, *u32, 8");
  TLE_REQUIRE_COMPILED(ku);
  std::vector<uint32_t> ua{0x80000000u, 0x80000000u, 0x80000000u, 1, 1, 1, 1, 1}, ub{1, 31, 32, 0, 31, 32, 100, 4};
  std::vector<uint32_t> ul(8), ur(8);
  ku->run({1}, {ArgValue::ptr(ua), ArgValue::ptr(ub), ArgValue::ptr(ul), ArgValue::ptr(ur)});
  std::vector<uint32_t> wul{0, 0, 0, 1, 0x80000000u, 0, 0, 16}, wur{0x40000000u, 1, 0, 1, 0, 0, 0, 0};
  REQUIRE(ul == wul);
  REQUIRE(ur == wur);
}

TEST_CASE("cpu: float maximum/minimum ignore NaN; math matches libm closely", "[cpu][ops]") {
  std::string src = kernel(R"(def fmath(x_ptr, y_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.maximum(x, y))
    tl.store(o_ptr + BLOCK + offs, tl.minimum(x, y))
    tl.store(o_ptr + 2 * BLOCK + offs, tl.exp(x))
    tl.store(o_ptr + 3 * BLOCK + offs, tl.log(tl.abs(x)))
    tl.store(o_ptr + 4 * BLOCK + offs, tl.sqrt(tl.abs(y)))
    tl.store(o_ptr + 5 * BLOCK + offs, tl.rsqrt(tl.abs(y)))
    tl.store(o_ptr + 6 * BLOCK + offs, x / y)
    tl.store(o_ptr + 7 * BLOCK + offs, x % y)
)");
  Compiled k = compileSource(src, "*fp32, *fp32, *fp32, 16");
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x{1, NAN, -3, NAN, 0.5f, -0.f, 10, -10, 2, 3, 4, 5, 6, 7, 88, -88};
  std::vector<float> y{NAN, 2, -4, NAN, 0.25f, 0.f, -3, 3, 7, 1.5f, -2, 0.1f, 100, 7, 3, 1};
  std::vector<float> o(8 * 16);
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(y), ArgValue::ptr(o)});
  auto close = [](double got, double want, double rel) {
    return (std::isnan(got) && std::isnan(want)) || got == want || std::fabs(got - want) <= rel * std::fabs(want);
  };
  for (size_t i = 0; i < 16; ++i) {
    INFO("i " << i << ": x " << x[i] << ", y " << y[i]);
    double fx = x[i], fy = y[i];
    if (std::isnan(fx) && std::isnan(fy)) {
      REQUIRE(std::isnan(o[i]));
    } else {
      REQUIRE(o[i] == (std::isnan(fx) ? float(fy) : std::isnan(fy) ? float(fx) : std::max(x[i], y[i])));
      REQUIRE(o[16 + i] == (std::isnan(fx) ? float(fy) : std::isnan(fy) ? float(fx) : std::min(x[i], y[i])));
    }
    REQUIRE(close(o[32 + i], std::exp(fx), 2e-7));
    REQUIRE(close(o[48 + i], std::log(std::fabs(fx)), 2e-7));
    REQUIRE(close(o[64 + i], std::sqrt(std::fabs(y[i])), 0)); // IEEE, correctly rounded
    REQUIRE(close(o[80 + i], 1 / std::sqrt(std::fabs(fy)), 2.5e-7));
    REQUIRE((std::isnan(o[96 + i]) ? std::isnan(x[i] / y[i]) : o[96 + i] == x[i] / y[i]));
    REQUIRE(close(o[112 + i], std::fmod(x[i], y[i]), 0));
  }
}

TEST_CASE("cpu: loop-carried tiles and scalars, including a swap and a zero-trip loop", "[cpu][ops]") {
  std::string src = kernel(R"(def fib(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.zeros([BLOCK], dtype=tl.int32)
    b = offs
    s = tl.program_id(0) * 0
    for i in range(0, n):
        a, b = b, a + b
        s += i
    tl.store(out_ptr + offs, a)
    tl.store(out_ptr + BLOCK + offs, b)
    tl.store(out_ptr + 2 * BLOCK, s)
)");
  Compiled k = compileSource(src, "*i32, i32, 16");
  TLE_REQUIRE_COMPILED(k);
  for (int n : {0, 1, 2, 10}) {
    std::vector<int32_t> out(33, -1);
    k->run({1}, {ArgValue::ptr(out), i32(n)});
    for (int i = 0; i < 16; ++i) {
      int32_t a = 0, b = i;
      for (int t = 0; t < n; ++t) {
        int32_t c = a + b;
        a = b;
        b = c;
      }
      REQUIRE(out[size_t(i)] == a);
      REQUIRE(out[16 + size_t(i)] == b);
    }
    REQUIRE(out[32] == n * (n - 1) / 2);
  }
}

TEST_CASE("cpu: a carried tile read through a broadcast of another carried tile", "[cpu][ops]") {
  std::string src = kernel(R"(def carried(out_ptr, n, M: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, M)
    j = tl.arange(0, N)
    acc = (i[:, None] * N + j[None, :]).to(tl.float32)
    row = j[None, :].to(tl.float32) + 0.5
    for t in range(0, n):
        acc = acc + row
        row = row * 2.0
    tl.store(out_ptr + i[:, None] * N + j[None, :], acc)
    tl.store(out_ptr + M * N + j[None, :], row)
)");
  const int M = 4, N = 8;
  Compiled k = compileSource(src, "*fp32, i32, 4, 8");
  TLE_REQUIRE_COMPILED(k);
  for (int n : {0, 1, 5}) {
    std::vector<float> out(M * N + N);
    k->run({1}, {ArgValue::ptr(out), i32(n)});
    for (int j = 0; j < N; ++j) {
      float row = float(j) + 0.5f, added = 0;
      for (int t = 0; t < n; ++t) {
        added += row;
        row *= 2;
      }
      for (int i = 0; i < M; ++i) {
        float acc = float(i * N + j);
        float r = float(j) + 0.5f;
        for (int t = 0; t < n; ++t) {
          acc += r;
          r *= 2;
        }
        REQUIRE(out[size_t(i * N + j)] == acc);
      }
      REQUIRE(out[size_t(M * N + j)] == row);
    }
  }
}

TEST_CASE("cpu: runtime if with tile results and while loops", "[cpu][ops]") {
  std::string src = kernel(R"(def ctl(x_ptr, o_ptr, flag, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if flag > 0:
        y = x + 1
    else:
        y = x * 2
    c = n * 0
    while c < n:
        y = y * 3
        c += 1
    tl.store(o_ptr + offs, y)
    v = tl.load(x_ptr + BLOCK + tl.program_id(0))
    steps = n * 0
    while v != 1:
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        steps += 1
    tl.store(o_ptr + BLOCK + tl.program_id(0), steps)
)");
  Compiled k = compileSource(src, "*i32, *i32, i32, i32, 8");
  TLE_REQUIRE_COMPILED(k);
  auto collatz = [](int32_t v) {
    int steps = 0;
    while (v != 1) {
      v = v % 2 == 0 ? v / 2 : 3 * v + 1;
      ++steps;
    }
    return steps;
  };
  for (int flag : {0, 1})
    for (int n : {0, 3}) {
      std::vector<int32_t> x{1, 2, 3, 4, 5, 6, 7, 8, 27, 97, 1, 6}, o(8 + 4, -1);
      k->run({4}, {ArgValue::ptr(x), ArgValue::ptr(o), i32(flag), i32(n)});
      for (int i = 0; i < 8; ++i) {
        int32_t y = flag > 0 ? x[size_t(i)] + 1 : x[size_t(i)] * 2;
        for (int t = 0; t < n; ++t)
          y *= 3;
        REQUIRE(o[size_t(i)] == y);
      }
      for (int p = 0; p < 4; ++p)
        REQUIRE(o[8 + size_t(p)] == collatz(x[8 + size_t(p)]));
    }
}

TEST_CASE("cpu: program ids and grid sizes along x, y and z", "[cpu][ops]") {
  std::string src = kernel(R"(def ids(out_ptr):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(2)
    nx = tl.num_programs(0)
    ny = tl.num_programs(1)
    nz = tl.num_programs(2)
    tl.store(out_ptr + (z * ny + y) * nx + x, x + 100 * y + 10000 * z + 1000000 * (nx + 10 * ny + 100 * nz))
)");
  Compiled k = compileSource(src, "*i32");
  TLE_REQUIRE_COMPILED(k);
  for (unsigned threads : {1u, 4u}) {
    std::vector<int32_t> out(5 * 3 * 2, -1);
    k->run({5, 3, 2}, {ArgValue::ptr(out)}, {threads});
    for (int z = 0; z < 2; ++z)
      for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 5; ++x)
          REQUIRE(out[size_t((z * 3 + y) * 5 + x)] == x + 100 * y + 10000 * z + 1000000 * (5 + 30 + 200));
  }
}

TEST_CASE("cpu: int64 offsets past 2^31 elements are not truncated", "[cpu][ops]") {
  std::string src = kernel(R"(def far(p, off, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    q = p + off
    tl.store(q + offs, offs.to(tl.float32))
)");
  Compiled k = compileSource(src, "*fp32, i64, 8");
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> buf(8, -1.f);
  const int64_t off = (int64_t(1) << 32) + 3;
  // The pointer argument lies `off` elements before the buffer; only p + off is dereferenced.
  auto base = reinterpret_cast<uintptr_t>(buf.data()) - static_cast<uintptr_t>(off) * sizeof(float);
  k->run({1}, {ArgValue::ptr(reinterpret_cast<void *>(base)), ArgValue::of<int64_t>(off)});
  for (int i = 0; i < 8; ++i)
    REQUIRE(buf[size_t(i)] == float(i));
}
