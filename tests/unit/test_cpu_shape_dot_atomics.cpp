// CPU target: shape ops (trans/permute, reshape, cat, join, split), scans, tl.dot over dtypes and
// precisions, and atomics from many concurrent programs.
#include "test_cpu_util.h"

#include "tle/Target/CPU/HostArray.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace tle;
using namespace tle::cputest;
using cpu::ArgValue;

namespace {

const char *kHeader = "import triton\nimport triton.language as tl\n\n@triton.jit\n";

/// Rounds to TF32 (10 fraction bits) to nearest, ties away from zero, like cvt.rna.tf32.f32.
double tf32(float x) {
  if (!std::isfinite(x) || x == 0)
    return x;
  int e;
  double m = std::frexp(double(x), &e); // x = m * 2^e, 0.5 <= |m| < 1
  double scaled = m * 2048;             // 11 significant bits
  double r = std::trunc(scaled + (scaled > 0 ? 0.5 : -0.5));
  return std::ldexp(r / 2048, e);
}

} // namespace

TEST_CASE("cpu: trans, permute, reshape, cat, join, split", "[cpu][shape]") {
  std::string src = std::string(kHeader) + R"(def shapes(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, M)
    j = tl.arange(0, N)
    x = tl.load(x_ptr + i[:, None] * N + j[None, :])
    t = tl.trans(x)
    tl.store(o_ptr + j[:, None] * M + i[None, :], t)
    r = tl.reshape(x, [N, M])
    tl.store(o_ptr + M * N + j[:, None] * M + i[None, :], r)
    c = tl.cat(x, x + 1000.0)
    i2 = tl.arange(0, 2 * M)
    tl.store(o_ptr + 2 * M * N + i2[:, None] * N + j[None, :], c)
    jn = tl.join(x, x * 2.0)
    a, b = tl.split(jn)
    tl.store(o_ptr + 4 * M * N + i[:, None] * N + j[None, :], a + b * 10.0)
    p = tl.permute(jn, (2, 0, 1))
    k2 = tl.arange(0, 2)
    tl.store(o_ptr + 5 * M * N + k2[:, None, None] * M * N + i[None, :, None] * N + j[None, None, :], p)
)";
  const int M = 4, N = 8;
  Compiled k = compileSource(src, "*fp32, *fp32, 4, 8");
  TLE_REQUIRE_COMPILED(k);
  std::vector<float> x(M * N), o(7 * M * N, -1.f);
  for (int v = 0; v < M * N; ++v)
    x[size_t(v)] = float(v);
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(o)});
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float xv = float(i * N + j);
      REQUIRE(o[size_t(j * M + i)] == xv);                   // trans
      REQUIRE(o[size_t(M * N + i * N + j)] == xv);           // reshape keeps row-major order
      REQUIRE(o[size_t(2 * M * N + i * N + j)] == xv);       // cat: a, then b
      REQUIRE(o[size_t(3 * M * N + i * N + j)] == xv + 1000); // rows M.. of the cat
      REQUIRE(o[size_t(4 * M * N + i * N + j)] == xv + 20 * xv);
      REQUIRE(o[size_t(5 * M * N + i * N + j)] == xv);       // permute(join)[0]
      REQUIRE(o[size_t(6 * M * N + i * N + j)] == 2 * xv);   // permute(join)[1]
    }
}

TEST_CASE("cpu: cumsum and cumprod, forward and reverse, along each axis", "[cpu][shape]") {
  std::string src = std::string(kHeader) + R"(def scans(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, M)
    j = tl.arange(0, N)
    off = i[:, None] * N + j[None, :]
    x = tl.load(x_ptr + off)
    tl.store(o_ptr + off, tl.cumsum(x, axis=1))
    tl.store(o_ptr + M * N + off, tl.cumsum(x, axis=0, reverse=True))
    tl.store(o_ptr + 2 * M * N + off, tl.cumprod(x, axis=0))
    tl.store(o_ptr + 3 * M * N + off, tl.cumprod(x, axis=1, reverse=True))
)";
  const int M = 4, N = 8;
  Compiled k = compileSource(src, "*i32, *i32, 4, 8");
  TLE_REQUIRE_COMPILED(k);
  std::vector<int32_t> x(M * N), o(4 * M * N);
  for (int v = 0; v < M * N; ++v)
    x[size_t(v)] = (v * 7) % 5 - 2;
  k->run({1}, {ArgValue::ptr(x), ArgValue::ptr(o)});
  auto X = [&](int i, int j) { return x[size_t(i * N + j)]; };
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      int32_t s1 = 0, s0r = 0, p0 = 1, p1r = 1;
      for (int jj = 0; jj <= j; ++jj)
        s1 += X(i, jj);
      for (int ii = i; ii < M; ++ii)
        s0r += X(ii, j);
      for (int ii = 0; ii <= i; ++ii)
        p0 *= X(ii, j);
      for (int jj = j; jj < N; ++jj)
        p1r *= X(i, jj);
      REQUIRE(o[size_t(i * N + j)] == s1);
      REQUIRE(o[size_t(M * N + i * N + j)] == s0r);
      REQUIRE(o[size_t(2 * M * N + i * N + j)] == p0);
      REQUIRE(o[size_t(3 * M * N + i * N + j)] == p1r);
    }
}

TEST_CASE("cpu: tl.dot over fp16, bf16, fp32 (tf32 and ieee), int8", "[cpu][dot]") {
  std::string src = std::string(kHeader) + R"(def mm(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    acc = tl.full([M, N], 1.0, dtype=tl.float32)
    acc = tl.dot(a, b, acc, input_precision="PREC")
    tl.store(c_ptr + m[:, None] * N + n[None, :], acc)
)";
  const int M = 16, N = 32, K = 64;
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(-1, 1);
  for (std::string ty : {"fp16", "bf16", "fp32:tf32", "fp32:ieee"}) {
    INFO(ty);
    std::string dt = ty.substr(0, ty.find(':'));
    std::string prec = ty.find(':') == std::string::npos ? "tf32" : ty.substr(ty.find(':') + 1);
    auto withPrec = [&](const std::string &p) {
      std::string text = src;
      text.replace(text.find("PREC"), 4, p);
      return text;
    };
    Compiled kern = compileSource(withPrec(prec), "*" + dt + ", *" + dt + ", *fp32, 16, 32, 64");
    TLE_REQUIRE_COMPILED(kern);
    std::vector<double> A(M * K), Bm(K * N);
    std::vector<uint16_t> a16(M * K), b16(K * N);
    std::vector<float> a32(M * K), b32(K * N), c(M * N);
    for (size_t i = 0; i < A.size(); ++i) {
      float v = u(rng);
      if (dt == "fp16") { a16[i] = cpu::halfFromDouble(v); A[i] = cpu::halfToFloat(a16[i]); }
      else if (dt == "bf16") { a16[i] = cpu::bf16FromDouble(v); A[i] = cpu::bf16ToFloat(a16[i]); }
      else { a32[i] = v; A[i] = prec == "tf32" ? tf32(v) : v; }
    }
    for (size_t i = 0; i < Bm.size(); ++i) {
      float v = u(rng);
      if (dt == "fp16") { b16[i] = cpu::halfFromDouble(v); Bm[i] = cpu::halfToFloat(b16[i]); }
      else if (dt == "bf16") { b16[i] = cpu::bf16FromDouble(v); Bm[i] = cpu::bf16ToFloat(b16[i]); }
      else { b32[i] = v; Bm[i] = prec == "tf32" ? tf32(v) : v; }
    }
    if (dt == "fp32")
      kern->run({1}, {ArgValue::ptr(a32), ArgValue::ptr(b32), ArgValue::ptr(c)});
    else
      kern->run({1}, {ArgValue::ptr(a16), ArgValue::ptr(b16), ArgValue::ptr(c)});
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double want = 1, mag = 1;
        for (int kk = 0; kk < K; ++kk) {
          want += A[size_t(m * K + kk)] * Bm[size_t(kk * N + n)];
          mag += std::fabs(A[size_t(m * K + kk)] * Bm[size_t(kk * N + n)]);
        }
        REQUIRE(std::fabs(c[size_t(m * N + n)] - want) <= 1e-6 * mag);
      }
  }
  SECTION("tf32 rounds the inputs; ieee does not") {
    std::vector<float> a(M * K, 1.f + 0x1p-12f), b(K * N, 1.f), c(M * N);
    std::string tsrc = src, isrc = src;
    tsrc.replace(tsrc.find("PREC"), 4, "tf32");
    isrc.replace(isrc.find("PREC"), 4, "ieee");
    Compiled t = compileSource(tsrc, "*fp32, *fp32, *fp32, 16, 32, 64");
    TLE_REQUIRE_COMPILED(t);
    t->run({1}, {ArgValue::ptr(a), ArgValue::ptr(b), ArgValue::ptr(c)});
    REQUIRE(c[0] == 1 + 64.f);
    Compiled ie = compileSource(isrc, "*fp32, *fp32, *fp32, 16, 32, 64");
    TLE_REQUIRE_COMPILED(ie);
    ie->run({1}, {ArgValue::ptr(a), ArgValue::ptr(b), ArgValue::ptr(c)});
    REQUIRE(c[0] == 1 + 64 * (1.f + 0x1p-12f));
  }
}

TEST_CASE("cpu: tl.dot on int8 accumulates exactly in int32", "[cpu][dot]") {
  std::string src = std::string(kHeader) + R"(def imm(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b))
)";
  const int M = 16, N = 16, K = 32;
  Compiled k = compileSource(src, "*i8, *i8, *i32, 16, 16, 32");
  TLE_REQUIRE_COMPILED(k);
  std::vector<int8_t> a(M * K), b(K * N);
  std::vector<int32_t> c(M * N);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = int8_t(int(i * 37 % 256) - 128);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = int8_t(int(i * 91 % 256) - 128);
  k->run({1}, {ArgValue::ptr(a), ArgValue::ptr(b), ArgValue::ptr(c)});
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      int32_t want = 0;
      for (int kk = 0; kk < K; ++kk)
        want += int32_t(a[size_t(m * K + kk)]) * int32_t(b[size_t(kk * N + n)]);
      REQUIRE(c[size_t(m * N + n)] == want);
    }
}

TEST_CASE("cpu: atomics from concurrent programs, with duplicate addresses and masks", "[cpu][atomics]") {
  std::string src = std::string(kHeader) + R"(def atoms(cnt_ptr, f_ptr, h_ptr, mx_ptr, old_ptr, lock_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(cnt_ptr + offs % 4, offs + 1, mask=m)
    tl.atomic_add(f_ptr + offs % 4, (offs + 1).to(tl.float32), mask=m)
    tl.atomic_add(h_ptr + offs % 4, (offs % 3).to(tl.float16), mask=m)
    v = ((pid * 37) % 101 - 50).to(tl.float32)
    tl.atomic_max(mx_ptr, v)
    tl.atomic_min(mx_ptr + 1, v)
    old = tl.atomic_xchg(old_ptr + pid + offs * 0, pid + 7 + offs * 0, mask=offs < 0)
    tl.store(old_ptr + 64 + pid, tl.sum(old, axis=0))
    prev = tl.atomic_cas(lock_ptr, 0, pid + 1)
    tl.store(lock_ptr + 1 + pid, prev)
)";
  Compiled k = compileSource(src, "*i32, *fp32, *fp16, *fp32, *i32, *i32, i32, 16");
  TLE_REQUIRE_COMPILED(k);
  const int P = 64, n = 13;
  for (unsigned threads : {1u, 8u}) {
    std::vector<int32_t> cnt(4), old(2 * P, -5), lock(1 + P, -1);
    std::vector<float> f(4), mx{-1000.f, 1000.f};
    std::vector<uint16_t> h(4, 0);
    lock[0] = 0;
    k->run({P}, {ArgValue::ptr(cnt), ArgValue::ptr(f), ArgValue::ptr(h), ArgValue::ptr(mx), ArgValue::ptr(old),
                 ArgValue::ptr(lock), i32(n)},
           {threads});
    for (int slot = 0; slot < 4; ++slot) {
      int32_t want = 0, wantH = 0;
      for (int o = slot; o < n; o += 4) {
        want += o + 1;
        wantH += o % 3;
      }
      REQUIRE(cnt[size_t(slot)] == P * want);
      REQUIRE(f[size_t(slot)] == float(P * want));
      REQUIRE(cpu::halfToFloat(h[size_t(slot)]) == float(P * wantH));
    }
    float vmax = -1000, vmin = 1000;
    for (int p = 0; p < P; ++p) {
      vmax = std::max(vmax, float((p * 37) % 101 - 50));
      vmin = std::min(vmin, float((p * 37) % 101 - 50));
    }
    REQUIRE(mx[0] == vmax);
    REQUIRE(mx[1] == vmin);
    for (int p = 0; p < P; ++p) {
      REQUIRE(old[size_t(p)] == -5);      // fully masked: nothing written
      REQUIRE(old[size_t(P + p)] == 0);   // masked-off atomics yield zero
    }
    // Exactly one program saw the lock free; it holds its id + 1.
    int winners = 0;
    for (int p = 0; p < P; ++p) {
      if (lock[1 + size_t(p)] == 0) {
        ++winners;
        REQUIRE(lock[0] == p + 1);
      } else {
        REQUIRE(lock[1 + size_t(p)] == lock[0]);
      }
    }
    REQUIRE(winners == 1);
  }
}
