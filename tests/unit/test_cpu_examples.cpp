// The examples (vector_add, softmax, layernorm) on the CPU target, against float64 references
// computed here, over several shapes including non-powers of two.
#include "test_cpu_util.h"

#include <cmath>
#include <random>
#include <vector>

using namespace tle;
using namespace tle::cputest;

namespace {

std::vector<float> randomVector(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto &x : v)
    x = u(rng);
  return v;
}

uint32_t cdiv(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

int64_t nextPow2(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

constexpr float kSentinel = 12345.f;

} // namespace

TEST_CASE("cpu: vector_add matches x + y, leaves the tail untouched", "[cpu][examples]") {
  for (int block : {1024, 128}) {
    Compiled k = compileExample("vector_add.tle", "*fp32:16, *fp32:16, *fp32:16, i32, " + std::to_string(block));
    TLE_REQUIRE_COMPILED(k);
    for (int n : {1, 127, 1000, 4096, 12345}) {
      INFO("BLOCK " << block << ", n " << n);
      auto x = randomVector(static_cast<size_t>(n), 1), y = randomVector(static_cast<size_t>(n), 2);
      // z is padded past n to a whole number of blocks: the masked tail must stay untouched.
      size_t padded = size_t(cdiv(static_cast<uint64_t>(n), static_cast<uint64_t>(block))) * static_cast<size_t>(block);
      x.resize(padded, kSentinel);
      y.resize(padded, kSentinel);
      std::vector<float> z(padded, kSentinel);
      k->run({cdiv(static_cast<uint64_t>(n), static_cast<uint64_t>(block))},
             {cpu::ArgValue::ptr(x), cpu::ArgValue::ptr(y), cpu::ArgValue::ptr(z), i32(n)});
      for (int i = 0; i < n; ++i)
        REQUIRE(z[size_t(i)] == static_cast<float>(double(x[size_t(i)]) + double(y[size_t(i)])));
      for (size_t i = static_cast<size_t>(n); i < padded; ++i)
        REQUIRE(z[i] == kSentinel);
    }
  }
}

TEST_CASE("cpu: softmax matches a float64 reference", "[cpu][examples]") {
  struct Shape {
    int rows, cols, grid;
  };
  for (Shape s : {Shape{1, 1, 1}, Shape{7, 100, 7}, Shape{64, 1000, 8}, Shape{33, 1024, 33}, Shape{5, 777, 2},
                  Shape{3, 2048, 1}}) {
    int64_t block = nextPow2(s.cols);
    INFO("rows " << s.rows << ", cols " << s.cols << ", grid " << s.grid);
    Compiled k = compileExample("softmax.tle", "*fp32:16, *fp32:16, i32, i32, i32, i32, " + std::to_string(block));
    TLE_REQUIRE_COMPILED(k);
    int inStride = s.cols + 3, outStride = s.cols + 5; // padded rows: padding must stay untouched
    auto in = randomVector(size_t(s.rows) * size_t(inStride), 3, -4.f, 4.f);
    std::vector<float> out(size_t(s.rows) * size_t(outStride), kSentinel);
    k->run({static_cast<uint32_t>(s.grid)},
           {cpu::ArgValue::ptr(out), cpu::ArgValue::ptr(in), i32(inStride), i32(outStride), i32(s.rows), i32(s.cols)});
    for (int r = 0; r < s.rows; ++r) {
      const float *x = &in[size_t(r) * size_t(inStride)];
      double mx = -INFINITY, sum = 0;
      for (int c = 0; c < s.cols; ++c)
        mx = std::max(mx, double(x[c]));
      for (int c = 0; c < s.cols; ++c)
        sum += std::exp(double(x[c]) - mx);
      for (int c = 0; c < outStride; ++c) {
        float got = out[size_t(r) * size_t(outStride) + size_t(c)];
        if (c >= s.cols) {
          REQUIRE(got == kSentinel);
          continue;
        }
        double want = std::exp(double(x[c]) - mx) / sum;
        REQUIRE(std::fabs(got - want) <= 1e-5 * want + 1e-9);
      }
    }
  }
}

TEST_CASE("cpu: layernorm matches a float64 reference", "[cpu][examples]") {
  struct Shape {
    int M, N, block;
  };
  for (Shape s : {Shape{1, 1, 1024}, Shape{4, 1000, 1024}, Shape{16, 1024, 1024}, Shape{3, 3000, 1024},
                  Shape{7, 4097, 256}, Shape{2, 100, 16}}) {
    INFO("M " << s.M << ", N " << s.N << ", BLOCK_SIZE " << s.block);
    Compiled k = compileExample("layernorm.tle", "*fp32:16, *fp32:16, *fp32:16, *fp32:16, *fp32:16, *fp32:16, i32, "
                                                 "i32, fp32, " + std::to_string(s.block));
    TLE_REQUIRE_COMPILED(k);
    int stride = s.N + 1;
    auto X = randomVector(size_t(s.M) * size_t(stride), 4, -2.f, 3.f);
    auto W = randomVector(size_t(s.N), 5), Bv = randomVector(size_t(s.N), 6);
    std::vector<float> Y(size_t(s.M) * size_t(stride), kSentinel), Mean(size_t(s.M)), Rstd(size_t(s.M));
    float eps = 1e-5f;
    k->run({static_cast<uint32_t>(s.M)},
           {cpu::ArgValue::ptr(X), cpu::ArgValue::ptr(Y), cpu::ArgValue::ptr(W), cpu::ArgValue::ptr(Bv),
            cpu::ArgValue::ptr(Mean), cpu::ArgValue::ptr(Rstd), i32(stride), i32(s.N), cpu::ArgValue::of(eps)});
    for (int r = 0; r < s.M; ++r) {
      const float *x = &X[size_t(r) * size_t(stride)];
      double mean = 0, var = 0;
      for (int c = 0; c < s.N; ++c)
        mean += x[c];
      mean /= s.N;
      for (int c = 0; c < s.N; ++c)
        var += (x[c] - mean) * (x[c] - mean);
      var /= s.N;
      double rstd = 1 / std::sqrt(var + double(eps));
      REQUIRE(std::fabs(Mean[size_t(r)] - mean) <= 1e-5 * (1 + std::fabs(mean)));
      REQUIRE(std::fabs(Rstd[size_t(r)] - rstd) <= 1e-5 * rstd);
      for (int c = 0; c < s.N; ++c) {
        double want = (x[c] - mean) * rstd * W[size_t(c)] + Bv[size_t(c)];
        REQUIRE(std::fabs(Y[size_t(r) * size_t(stride) + size_t(c)] - want) <= 2e-5 * (1 + std::fabs(want)));
      }
      REQUIRE(Y[size_t(r) * size_t(stride) + size_t(s.N)] == kSentinel);
    }
  }
}

TEST_CASE("cpu: tiles larger than the stack budget live in the heap frame", "[cpu][examples]") {
  Compiled k = compileExample("vector_add.tle", "*fp32:16, *fp32:16, *fp32:16, i32, 65536");
  TLE_REQUIRE_COMPILED(k);
  int n = 100000;
  auto x = randomVector(size_t(n), 7), y = randomVector(size_t(n), 8);
  std::vector<float> z(size_t(n), kSentinel);
  k->run({2}, {cpu::ArgValue::ptr(x), cpu::ArgValue::ptr(y), cpu::ArgValue::ptr(z), i32(n)}, {3});
  for (int i = 0; i < n; ++i)
    REQUIRE(z[size_t(i)] == x[size_t(i)] + y[size_t(i)]);
}
