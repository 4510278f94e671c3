// The kernels across GPUs on the CPU target: W ranks run as W threads at once, each its own
// kernel run, on a host heap laid out as NCCL lays out a symmetric window (rank r's copy at
// lsaFlatBase + r * 4 GiB in one reserved range), with window records of NCCL's layout and device
// records of libtle_rt's (docs/runtime.md). examples/all_gather.tle and all_gather_gemm.tle must
// gather every rank's shard through remote stores, tle.signal and tle.signal_wait, twice (the
// signals consumed, or counted by epoch).
#include "test_cpu_util.h"
#include "tle/Target/CPU/HostArray.h"

#include <sys/mman.h>

#include <array>
#include <deque>
#include <exception>
#include <mutex>
#include <random>
#include <thread>

using namespace tle;
using namespace tle::cputest;

namespace {

constexpr uint64_t k4G = 1ull << 32;

/// W ranks' symmetric heaps 4 GiB apart, their signal areas, window records and device records.
class HostRanks {
public:
  explicit HostRanks(int w) : world(w) {
    void *p = mmap(nullptr, w * k4G, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(p != MAP_FAILED);
    base = static_cast<uint8_t *>(p);
    for (int r = 0; r < w; ++r)
      REQUIRE(mmap(base + r * k4G, kHeap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
              MAP_FAILED);
    Symmetric sig = alloc((64 + w + 1) * 8);
    for (int r = 0; r < w; ++r)
      records.push_back({uint64_t(uint32_t(r)) | uint64_t(uint32_t(w)) << 32, addr(sig.window[r]), 64, 0});
  }
  ~HostRanks() { munmap(base, world * k4G); }
  HostRanks(const HostRanks &) = delete;
  HostRanks &operator=(const HostRanks &) = delete;

  struct Symmetric {
    std::vector<uint8_t *> copy;   ///< each rank's copy
    std::vector<uint64_t *> window; ///< each rank's window record
  };
  /// A zeroed symmetric buffer of `bytes` on every rank.
  Symmetric alloc(size_t bytes) {
    size_t off = (used + 255) / 256 * 256;
    REQUIRE(off + bytes <= kHeap);
    used = off + bytes;
    Symmetric s;
    for (int r = 0; r < world; ++r) {
      s.copy.push_back(base + r * k4G + off);
      // NCCL's window record: winHost, lsaFlatBase, lsaRank | worldRank << 32, stride4G.
      windows.push_back({0, addr(base + off), uint64_t(uint32_t(r)) | uint64_t(uint32_t(r)) << 32, 1});
      s.window.push_back(windows.back().data());
    }
    return s;
  }
  /// Runs `k` on every rank at once (`args(r)` its arguments, `programs` programs each, all of them
  /// in threads of their own, so that programs waiting for each other all run).
  void runAll(const Compiled &k, uint32_t programs, const std::function<std::vector<cpu::ArgValue>(int)> &args) {
    std::vector<std::thread> ts;
    std::mutex m;
    std::string failure;
    for (int r = 0; r < world; ++r)
      ts.emplace_back([&, r] {
        try {
          cpu::RunOptions o;
          o.threads = programs;
          k->run({programs}, args(r), o);
        } catch (const std::exception &e) {
          std::lock_guard<std::mutex> g(m);
          failure = e.what();
        }
      });
    for (auto &t : ts)
      t.join();
    REQUIRE(failure.empty());
  }
  cpu::ArgValue record(int r) { return cpu::ArgValue::ptr(records[size_t(r)].data()); }
  static uint64_t addr(const void *p) { return reinterpret_cast<uint64_t>(p); }

  static constexpr size_t kHeap = 8u << 20;
  int world;
  uint8_t *base = nullptr;
  size_t used = 0;
  std::deque<std::array<uint64_t, 4>> records, windows;
};

uint16_t bf16(float f) { return cpu::bf16FromDouble(f); }
float fromBf16(uint16_t h) { return cpu::bf16ToFloat(h); }

} // namespace

TEST_CASE("cpu: all_gather over 1, 2 and 4 ranks as threads gathers every shard, twice", "[cpu][comm]") {
  for (int w : {1, 2, 4}) {
    INFO("world " << w);
    Compiled k = compileExample("all_gather.tle", "*i8, *i8, *fp32, i32, " + std::to_string(w) + ", 1024");
    TLE_REQUIRE_COMPILED(k);
    HostRanks R(w);
    const int n = 2500;
    HostRanks::Symmetric out = R.alloc(size_t(w) * n * 4);
    for (int round = 1; round <= 2; ++round) {
      std::vector<std::vector<float>> x(static_cast<size_t>(w), std::vector<float>(static_cast<size_t>(n)));
      for (int r = 0; r < w; ++r)
        for (int i = 0; i < n; ++i)
          x[size_t(r)][size_t(i)] = float(round * 100000 + r * 10000 + i);
      R.runAll(k, 3, [&](int r) {
        return std::vector<cpu::ArgValue>{R.record(r), cpu::ArgValue::ptr(out.window[size_t(r)]),
                                          cpu::ArgValue::ptr(x[size_t(r)]), i32(n)};
      });
      for (int r = 0; r < w; ++r) {
        const float *got = reinterpret_cast<const float *>(out.copy[size_t(r)]);
        for (int s = 0; s < w; ++s)
          for (int i = 0; i < n; ++i)
            REQUIRE(got[size_t(s) * n + size_t(i)] == x[size_t(s)][size_t(i)]);
      }
      // Every signal was consumed: the slots are zero again.
      for (int r = 0; r < w; ++r) {
        const uint64_t *slots = reinterpret_cast<const uint64_t *>(R.base + r * k4G);
        for (int s = 0; s < 64; ++s)
          REQUIRE(slots[s] == 0);
      }
    }
  }
}

TEST_CASE("cpu: all_gather_gemm over 2 and 3 ranks as threads equals gather(A) @ B, at epochs 1 and 2",
          "[cpu][comm]") {
  for (int w : {2, 3}) {
    INFO("world " << w);
    Compiled k = compileExample("all_gather_gemm.tle", "*i8, *i8, *bf16, *bf16, *bf16, i32, i32, i32, i32, " +
                                                           std::to_string(w) + ", 32, 32, 16");
    TLE_REQUIRE_COMPILED(k);
    HostRanks R(w);
    const int mShard = 40, N = 48, K = 40;
    std::mt19937 g(5);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    HostRanks::Symmetric a = R.alloc(size_t(w) * mShard * K * 2);
    std::vector<uint16_t> b(size_t(K) * N);
    for (auto &v : b)
      v = bf16(d(g));
    std::vector<float> want(size_t(w) * mShard * N, 0.f);
    for (int r = 0; r < w; ++r) {
      uint16_t *shard = reinterpret_cast<uint16_t *>(a.copy[size_t(r)]) + size_t(r) * mShard * K;
      for (size_t i = 0; i < size_t(mShard) * K; ++i)
        shard[i] = bf16(d(g));
      for (int m = 0; m < mShard; ++m)
        for (int kk = 0; kk < K; ++kk)
          for (int n = 0; n < N; ++n)
            want[(size_t(r) * mShard + size_t(m)) * N + size_t(n)] +=
                fromBf16(shard[size_t(m) * K + size_t(kk)]) * fromBf16(b[size_t(kk) * N + size_t(n)]);
    }
    std::vector<std::vector<uint16_t>> c(static_cast<size_t>(w), std::vector<uint16_t>(want.size()));
    for (int32_t epoch = 1; epoch <= 2; ++epoch) {
      for (auto &cr : c)
        std::fill(cr.begin(), cr.end(), uint16_t(0));
      R.runAll(k, 2, [&](int r) {
        return std::vector<cpu::ArgValue>{R.record(r),
                                          cpu::ArgValue::ptr(a.window[size_t(r)]),
                                          cpu::ArgValue::ptr(a.copy[size_t(r)]),
                                          cpu::ArgValue::ptr(b),
                                          cpu::ArgValue::ptr(c[size_t(r)]),
                                          i32(epoch),
                                          i32(mShard),
                                          i32(N),
                                          i32(K)};
      });
      for (int r = 0; r < w; ++r)
        for (size_t i = 0; i < want.size(); ++i) {
          INFO("epoch " << epoch << ", rank " << r << ", element " << i);
          REQUIRE(std::fabs(fromBf16(c[size_t(r)][i]) - want[i]) <= 1e-2f * (1.f + std::fabs(want[i])));
        }
    }
  }
}
