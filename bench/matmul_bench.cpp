// tle-bench-matmul: examples/matmul.tle (fp16 in, fp32 accumulate, fp16 out) through libtle_rt:
// checks results against a float64 CPU reference, then times it with CUDA events.
//
// Usage: tle-bench-matmul --cubin FILE [--sizes MxNxK,...] [--reps N] [--out FILE.json]
// Correctness: sizes up to 2^27 multiply-adds are checked in full; larger ones on 4096 sampled
// elements of C (each a float64 dot product of the fp16 inputs). Tolerance: |err| <= 1e-2 + 1e-2 |ref|
// (fp16 output rounding of sums of up to K products).
#include "tle/Runtime/Runtime.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace tle::rt;
using json = nlohmann::json;

namespace {

struct Size {
  int64_t m, n, k;
};

std::vector<Size> parseSizes(const std::string &s) {
  std::vector<Size> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t comma = s.find(',', pos);
    std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    Size z{};
    if (std::sscanf(item.c_str(), "%ldx%ldx%ld", &z.m, &z.n, &z.k) != 3)
      throw Error("bad size '" + item + "' (expected MxNxK)");
    out.push_back(z);
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  std::string cubin, out;
  std::string sizes = "256x256x256,300x200x100,1024x1024x1024,4096x4096x4096,8192x8192x8192";
  int reps = 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc)
        throw Error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--cubin")
      cubin = next();
    else if (a == "--sizes")
      sizes = next();
    else if (a == "--reps")
      reps = std::stoi(next());
    else if (a == "--out")
      out = next();
    else {
      std::fprintf(stderr, "usage: tle-bench-matmul --cubin FILE [--sizes MxNxK,...] [--reps N] [--out FILE]\n");
      return 2;
    }
  }
  std::string reason;
  if (!gpuAvailable(&reason)) {
    std::fprintf(stderr, "SKIPPED: tle-bench-matmul needs a CUDA GPU: %s\n", reason.c_str());
    return 77;
  }
  try {
    Device dev(0);
    Module mod = Module::fromFile(dev, cubin);
    Kernel k = mod.kernel("matmul_kernel");
    const KernelInfo &ki = k.info();
    int64_t bm = ki.constexprInt("BLOCK_M").value_or(0), bn = ki.constexprInt("BLOCK_N").value_or(0);
    std::printf("tle-bench-matmul: %s, %s: num_warps %d, shared %u B, %d regs, BLOCK %ldx%ldx%ld\n",
                dev.name().c_str(), cubin.c_str(), ki.numWarps, ki.sharedBytes, k.numRegisters(), bm, bn,
                ki.constexprInt("BLOCK_K").value_or(0));
    Stream stream(dev);
    json results = json::array();
    bool allOk = true;
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (const Size &z : parseSizes(sizes)) {
      std::vector<Half> a(size_t(z.m * z.k)), b(size_t(z.k * z.n));
      for (auto &x : a)
        x = Half::fromFloat(dist(rng));
      for (auto &x : b)
        x = Half::fromFloat(dist(rng));
      DeviceBuffer da = DeviceBuffer::fromHost(dev, a), db = DeviceBuffer::fromHost(dev, b);
      DeviceBuffer dc(dev, size_t(z.m * z.n) * 2);
      dc.fillBytes(0xff);
      unsigned grid = unsigned(((z.m + bm - 1) / bm) * ((z.n + bn - 1) / bn));
      auto run = [&] {
        k.launch(grid, stream, da, db, dc, int32_t(z.m), int32_t(z.n), int32_t(z.k), int32_t(z.k), int32_t(z.n),
                 int32_t(z.n));
      };
      run();
      stream.synchronize();
      std::vector<Half> c = dc.toHost<Half>();
      // Reference on all elements (small sizes) or a sample.
      std::vector<std::pair<int64_t, int64_t>> idx;
      if (double(z.m) * z.n * z.k <= double(1 << 27)) {
        for (int64_t i = 0; i < z.m; ++i)
          for (int64_t j = 0; j < z.n; ++j)
            idx.push_back({i, j});
      } else {
        std::uniform_int_distribution<int64_t> di(0, z.m - 1), dj(0, z.n - 1);
        for (int s = 0; s < 4096; ++s)
          idx.push_back({di(rng), dj(rng)});
      }
      double maxErr = 0;
      size_t bad = 0;
      for (auto [i, j] : idx) {
        double ref = 0;
        for (int64_t kk = 0; kk < z.k; ++kk)
          ref += double(a[size_t(i * z.k + kk)].toFloat()) * double(b[size_t(kk * z.n + j)].toFloat());
        double got = c[size_t(i * z.n + j)].toFloat();
        double err = std::fabs(got - ref);
        if (!std::isfinite(got))
          err = INFINITY;
        maxErr = std::max(maxErr, err);
        bad += !(err <= 1e-2 + 1e-2 * std::fabs(ref));
      }
      bool ok = bad == 0;
      allOk &= ok;
      // Timing.
      double ms = 0, tflops = 0;
      if (ok) {
        for (int w = 0; w < 3; ++w)
          run();
        std::vector<double> t;
        for (int r = 0; r < reps; ++r) {
          Event e0(dev), e1(dev);
          e0.record(stream);
          run();
          e1.record(stream);
          stream.synchronize();
          t.push_back(Event::elapsedMs(e0, e1));
        }
        ms = median(t);
        tflops = 2.0 * z.m * z.n * z.k / (ms * 1e-3) / 1e12;
      }
      std::printf("  %5ldx%5ldx%5ld  checked %7zu  max_err %.3e  %s  median %9.4f ms  %7.1f TFLOP/s\n", z.m, z.n, z.k,
                  idx.size(), maxErr, ok ? "PASS" : "FAIL", ms, tflops);
      results.push_back({{"m", z.m}, {"n", z.n}, {"k", z.k}, {"checked", idx.size()}, {"max_err", maxErr},
                         {"pass", ok}, {"median_ms", ms}, {"tflops", tflops}});
    }
    if (!out.empty()) {
      std::ofstream f(out);
      f << json{{"benchmark", "matmul_fp16"}, {"device", dev.name()}, {"cubin", cubin},
                {"registers", k.numRegisters()}, {"num_warps", ki.numWarps}, {"results", results}}
               .dump(2)
        << "\n";
    }
    return allOk ? 0 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tle-bench-matmul: %s\n", e.what());
    return 1;
  }
}
