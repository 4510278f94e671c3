// The dispatcher tle-bench --tune --dispatch generates for examples/tune/add_rmsnorm.json: which variant it chooses per row count and why (no GPU), and, with --gpu, its launches against a host reference.
//
// Usage: tle-tune-dispatch-run [--gpu] [--expect ROWS:VARIANT ...]
//   without --gpu: prints `M=<M>: variant <I>: <why>` for a list of row counts and checks each
//   --expect ROWS:VARIANT (the variant the table must choose for M = ROWS); status 1 on a mismatch.
//   --gpu: launches the dispatcher for each row count on the GPU (status 77 without one) and checks
//   y and h against a float64 host reference (|got - want| <= 1e-2 + 1e-2 |want|).
#include "add_rmsnorm_kernel_tuned.h"

#include "harness/Tensor.h"

#include "tle/Runtime/Runtime.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using tle::bench::DType;
using tle::bench::HostTensor;

constexpr int64_t kN = 4096; // the hidden size the spec tunes for (a constexpr of the modules)
constexpr float kEps = 1e-6f;

/// The row counts tried: the tuned sizes, values between them and beyond the largest.
const std::vector<int32_t> kRows = {1, 8, 9, 64, 65, 300, 512, 513, 4096, 5000, 16384};

int selectOnly(const std::map<int32_t, int> &expect) {
  tle::rt::DevicePtr p{0x10000}; // aligned addresses: only the shape predicates decide
  int bad = 0;
  for (int32_t m : kRows) {
    std::string why;
    int v = add_rmsnorm_kernel_tuned_select(p, p, p, p, p, m, kEps, &why);
    std::printf("M=%d: variant %d: %s\n", m, v, why.c_str());
    auto e = expect.find(m);
    if (e != expect.end() && e->second != v) {
      std::printf("  MISMATCH: the table's variant for M=%d is %d\n", m, e->second);
      ++bad;
    }
  }
  return bad ? 1 : 0;
}

/// Launches the dispatcher for M rows on the GPU and compares with the host reference.
bool runOnGpu(tle::rt::Device &dev, tle::rt::Stream &stream, int32_t m) {
  HostTensor x(DType::F16, {m, kN}), r(DType::F16, {m, kN}), w(DType::F16, {kN}), y(DType::F16, {m, kN}),
      h(DType::F16, {m, kN});
  tle::bench::fillTensor(x, {tle::bench::InitSpec::Normal, 0, 1}, 11 + uint64_t(m));
  tle::bench::fillTensor(r, {tle::bench::InitSpec::Normal, 0, 1}, 13 + uint64_t(m));
  tle::bench::fillTensor(w, {tle::bench::InitSpec::Uniform, 0.5, 1.5}, 17);
  auto upload = [&](const HostTensor &t) {
    tle::rt::DeviceBuffer b(dev, t.bytes());
    b.copyFromHost(t.data(), t.bytes());
    return b;
  };
  tle::rt::DeviceBuffer dx = upload(x), dr = upload(r), dw = upload(w);
  tle::rt::DeviceBuffer dy(dev, y.bytes()), dh(dev, h.bytes());
  dy.fillBytes(0xff);
  dh.fillBytes(0xff);
  std::string why;
  int v = add_rmsnorm_kernel_tuned_select(dx, dr, dw, dy, dh, m, kEps, &why);
  add_rmsnorm_kernel_tuned(stream, dx, dr, dw, dy, dh, m, kEps);
  stream.synchronize();
  dy.copyToHost(y.data(), y.bytes());
  dh.copyToHost(h.data(), h.bytes());
  double worst = 0;
  size_t bad = 0;
  for (int64_t row = 0; row < m; ++row) {
    double ss = 0;
    std::vector<double> hs(kN);
    for (int64_t c = 0; c < kN; ++c) {
      hs[size_t(c)] = double(float(x.get(size_t(row * kN + c)))) + double(float(r.get(size_t(row * kN + c))));
      ss += hs[size_t(c)] * hs[size_t(c)];
    }
    double rstd = 1.0 / std::sqrt(ss / double(kN) + double(kEps));
    for (int64_t c = 0; c < kN; ++c) {
      size_t i = size_t(row * kN + c);
      double wantY = hs[size_t(c)] * rstd * w.get(size_t(c)), wantH = hs[size_t(c)];
      double ey = std::fabs(y.get(i) - wantY), eh = std::fabs(h.get(i) - wantH);
      if (!(ey <= 1e-2 + 1e-2 * std::fabs(wantY)) || !(eh <= 1e-2 + 1e-2 * std::fabs(wantH)))
        ++bad;
      worst = std::max({worst, std::isfinite(ey) ? ey : INFINITY, std::isfinite(eh) ? eh : INFINITY});
    }
  }
  std::printf("M=%d: variant %d, max |error| %.3e, %zu bad of %lld: %s\n  %s\n", m, v, worst, bad,
              (long long)(2 * int64_t(m) * kN), bad ? "WRONG" : "ok", why.c_str());
  return bad == 0;
}

} // namespace

int main(int argc, char **argv) {
  bool gpu = false;
  std::map<int32_t, int> expect;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--gpu") {
      gpu = true;
    } else if (a == "--expect" && i + 1 < argc) {
      std::string e = argv[++i];
      size_t colon = e.find(':');
      if (colon == std::string::npos) {
        std::fprintf(stderr, "tle-tune-dispatch-run: --expect ROWS:VARIANT, got '%s'\n", e.c_str());
        return 2;
      }
      expect[int32_t(std::atoi(e.substr(0, colon).c_str()))] = std::atoi(e.substr(colon + 1).c_str());
    } else {
      std::fprintf(stderr, "usage: tle-tune-dispatch-run [--gpu] [--expect ROWS:VARIANT ...]\n");
      return 2;
    }
  }
  if (!gpu)
    return selectOnly(expect);
  std::string reason;
  if (!tle::rt::gpuAvailable(&reason)) {
    std::printf("tle-tune-dispatch-run: no usable CUDA GPU (%s)\n", reason.c_str());
    return 77;
  }
  tle::rt::Device dev(0);
  tle::rt::Stream stream(dev);
  bool ok = true;
  for (int32_t m : kRows)
    ok &= runOnGpu(dev, stream, m);
  std::printf("%s\n", ok ? "dispatcher: every launch matched the reference" : "dispatcher: WRONG results");
  return ok ? 0 : 1;
}
