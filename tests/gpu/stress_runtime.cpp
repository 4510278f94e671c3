// tle-runtime-stress: many threads repeatedly load modules (from files and from bytes) and launch their kernels on their own streams, checking every result.
//
// Usage: tle-runtime-stress [--cubin-dir DIR] [--arch ARCH] [--threads N] [--seconds S]
// Each of N threads (default 16), until S seconds have passed (default: $TLE_STRESS_SECONDS, else
// 5), repeats: pick vector_add or softmax (alternating, offset by the thread's index), load its
// module from DIR (<example>.<arch>.cubin, or .ptx) either with Module::fromFile or from the
// file's bytes (Module::fromImage for a cubin, fromPtx for PTX; alternating), get the kernel,
// launch it twice on the thread's own stream with freshly drawn shapes and inputs in the thread's
// own buffers (outputs poisoned first), compare with a CPU reference (vector_add exactly,
// softmax within 2e-6 + 1e-5 * |ref|, padding left poisoned), and unload the module. Prints the
// iterations, launches and failures of every thread; exits 1 on any failure (or a thread that
// never completed an iteration), 77 ("SKIPPED: <reason>") without a GPU, 2 for a bad command line.
#include "tle/Runtime/Runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#ifndef TLE_EXAMPLES_BUILD_DIR
#define TLE_EXAMPLES_BUILD_DIR "examples"
#endif

using namespace tle::rt;

namespace {

struct Options {
  std::string cubinDir = TLE_EXAMPLES_BUILD_DIR;
  std::string arch;
  int threads = 16;
  double seconds = 5;
};

/// One example module: its file, its bytes, and how to load it from them.
struct ModuleSource {
  std::string example, kernel, path;
  std::vector<char> bytes;
  bool isPtx = false;
};

/// What one thread did.
struct ThreadStats {
  uint64_t iterations = 0, launches = 0, fromFile = 0, fromBytes = 0, vectorAdd = 0, softmax = 0;
  uint64_t failures = 0;
  std::vector<std::string> messages; // the first few failures
  void fail(std::string m) {
    ++failures;
    if (messages.size() < 3)
      messages.push_back(std::move(m));
  }
};

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

constexpr uint32_t kPoison = 0xffffffffu; // a NaN; fillBytes(0xff)

/// One vector_add launch with n drawn at random; returns an empty string or the first mismatch.
std::string runVectorAdd(const Device &dev, Stream &stream, const Kernel &k, std::mt19937_64 &rng) {
  const int64_t block = k.info().constexprInt("BLOCK").value_or(1024);
  const int64_t n = std::uniform_int_distribution<int64_t>(1, 200000)(rng);
  const int64_t padded = (n + block - 1) / block * block + 64;
  std::uniform_real_distribution<float> u(-100.f, 100.f);
  std::vector<float> x(static_cast<size_t>(padded)), y(static_cast<size_t>(padded));
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = u(rng);
    y[i] = u(rng);
  }
  DeviceBuffer dx = DeviceBuffer::fromHost(dev, x), dy = DeviceBuffer::fromHost(dev, y), dz(dev, x.size() * 4);
  dz.fillBytesAsync(0xff, stream); // on the thread's stream: no implicit device-wide ordering
  k.launch(unsigned((n + block - 1) / block), stream, dx, dy, dz, int32_t(n));
  stream.synchronize();
  std::vector<float> z = dz.toHost<float>();
  for (int64_t i = 0; i < padded; ++i) {
    uint32_t want = i < n ? bits(x[size_t(i)] + y[size_t(i)]) : kPoison;
    if (bits(z[size_t(i)]) != want)
      return "vector_add n=" + std::to_string(n) + ": z[" + std::to_string(i) + "] = " +
             std::to_string(z[size_t(i)]) + (i < n ? ", expected " + std::to_string(x[size_t(i)] + y[size_t(i)])
                                                   : " past n, expected the poison left untouched");
  }
  return "";
}

/// One softmax launch with rows and columns drawn at random; returns "" or the first mismatch.
std::string runSoftmax(const Device &dev, Stream &stream, const Kernel &k, std::mt19937_64 &rng) {
  const int64_t blockSize = k.info().constexprInt("BLOCK_SIZE").value_or(1024);
  const int64_t rows = std::uniform_int_distribution<int64_t>(1, 300)(rng);
  const int64_t cols = std::uniform_int_distribution<int64_t>(1, blockSize)(rng);
  const int64_t stride = (cols + 15) / 16 * 16;
  const unsigned grid = unsigned(std::uniform_int_distribution<int64_t>(1, rows)(rng));
  std::normal_distribution<float> unit(0.f, 3.f);
  std::vector<float> in(size_t(rows * stride), 0.f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      in[size_t(r * stride + c)] = unit(rng);
  DeviceBuffer din = DeviceBuffer::fromHost(dev, in), dout(dev, in.size() * 4);
  dout.fillBytesAsync(0xff, stream);
  k.launch(grid, stream, dout, din, int32_t(stride), int32_t(stride), int32_t(rows), int32_t(cols));
  stream.synchronize();
  std::vector<float> out = dout.toHost<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float *x = &in[size_t(r * stride)];
    double m = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      m = std::max(m, double(x[c]));
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(double(x[c]) - m);
    for (int64_t c = 0; c < stride; ++c) {
      float got = out[size_t(r * stride + c)];
      std::string where = "softmax " + std::to_string(rows) + "x" + std::to_string(cols) + " grid " +
                          std::to_string(grid) + ": out[" + std::to_string(r) + "][" + std::to_string(c) + "] = " +
                          std::to_string(got);
      if (c >= cols) {
        if (bits(got) != kPoison)
          return where + " in the padding, expected the poison left untouched";
        continue;
      }
      double want = std::exp(double(x[c]) - m) / sum;
      if (!(std::fabs(double(got) - want) <= 2e-6 + 1e-5 * want))
        return where + ", expected " + std::to_string(want);
    }
  }
  return "";
}

/// The body of one thread: iterate until `deadline` (or 10 failures).
void worker(int index, const Device &dev, const std::vector<ModuleSource> &sources,
            std::chrono::steady_clock::time_point deadline, ThreadStats &st) {
  std::mt19937_64 rng(0x5eed0000u + uint64_t(index));
  std::optional<Stream> stream;
  try {
    stream.emplace(dev);
  } catch (const std::exception &e) {
    st.fail(std::string("creating the thread's stream: ") + e.what());
    return;
  }
  for (uint64_t it = 0; std::chrono::steady_clock::now() < deadline; ++it) {
    const ModuleSource &src = sources[size_t(index + int(it)) % sources.size()];
    const bool fromFile = (it / 2) % 2 == 0;
    try {
      Module mod = fromFile           ? Module::fromFile(dev, src.path)
                   : src.isPtx        ? Module::fromPtx(dev, std::string_view(src.bytes.data(), src.bytes.size()),
                                                        src.path + " (bytes)")
                                      : Module::fromImage(dev, src.bytes.data(), src.bytes.size(), src.path + " (bytes)");
      Kernel k = mod.kernel(src.kernel);
      for (int launch = 0; launch < 2; ++launch) {
        std::string err = src.example == "vector_add" ? runVectorAdd(dev, *stream, k, rng)
                                                      : runSoftmax(dev, *stream, k, rng);
        ++st.launches;
        if (!err.empty())
          st.fail("iteration " + std::to_string(it) + ": " + err);
      }
    } catch (const std::exception &e) {
      st.fail("iteration " + std::to_string(it) + " (" + src.example + (fromFile ? ", from the file" : ", from bytes") +
              "): " + e.what());
    }
    ++st.iterations;
    ++(fromFile ? st.fromFile : st.fromBytes);
    ++(src.example == "vector_add" ? st.vectorAdd : st.softmax);
    if (st.failures >= 10)
      return; // enough to report; do not flood
  }
}

bool parseArgs(int argc, char **argv, Options &o) {
  if (const char *env = std::getenv("TLE_STRESS_SECONDS"))
    o.seconds = std::atof(env);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool hasValue = i + 1 < argc;
    if (a == "--cubin-dir" && hasValue)
      o.cubinDir = argv[++i];
    else if (a == "--arch" && hasValue)
      o.arch = argv[++i];
    else if (a == "--threads" && hasValue)
      o.threads = std::atoi(argv[++i]);
    else if (a == "--seconds" && hasValue)
      o.seconds = std::atof(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: tle-runtime-stress [--cubin-dir DIR] [--arch ARCH] [--threads N (16)] "
                   "[--seconds S ($TLE_STRESS_SECONDS, else 5)]\n");
      return false;
    }
  }
  if (o.threads < 1 || o.threads > 1024 || !(o.seconds > 0)) {
    std::fprintf(stderr, "tle-runtime-stress: --threads must be in 1..1024 and --seconds positive\n");
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseArgs(argc, argv, o))
    return 2;
  std::string reason;
  if (!gpuAvailable(&reason)) {
    std::printf("SKIPPED: %s\n", reason.c_str());
    return 77;
  }
  try {
    Device dev(0);
    const std::string arch = o.arch.empty() ? dev.arch() : o.arch;
    std::vector<ModuleSource> sources;
    for (auto [example, kernel] : {std::pair{"vector_add", "add_kernel"}, std::pair{"softmax", "softmax_kernel"}}) {
      ModuleSource s{example, kernel, "", {}, false};
      for (const char *ext : {".cubin", ".ptx"}) {
        std::string p = o.cubinDir + "/" + example + "." + arch + ext;
        std::ifstream f(p, std::ios::binary);
        if (!f)
          continue;
        s.path = p;
        s.bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
        s.isPtx = std::string(ext) == ".ptx";
        break;
      }
      if (s.path.empty()) {
        std::printf("FAIL: no module %s/%s.%s.cubin (or .ptx); build the examples or pass --cubin-dir\n",
                    o.cubinDir.c_str(), example, arch.c_str());
        return 1;
      }
      sources.push_back(std::move(s));
    }
    std::printf("tle-runtime-stress: %d threads for %g s on %s (%s); modules %s, %s\n", o.threads, o.seconds,
                dev.name().c_str(), arch.c_str(), sources[0].path.c_str(), sources[1].path.c_str());
    std::fflush(stdout);

    auto start = std::chrono::steady_clock::now();
    auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(o.seconds));
    std::vector<ThreadStats> stats(size_t(o.threads));
    std::vector<std::thread> pool;
    for (int t = 0; t < o.threads; ++t)
      pool.emplace_back(worker, t, std::cref(dev), std::cref(sources), deadline, std::ref(stats[size_t(t)]));
    for (auto &th : pool)
      th.join();
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    uint64_t iterations = 0, launches = 0, failures = 0;
    bool idle = false;
    for (int t = 0; t < o.threads; ++t) {
      const ThreadStats &s = stats[size_t(t)];
      std::printf("thread %2d: %6llu iterations (%llu vector_add, %llu softmax; %llu loaded from the file, %llu from "
                  "bytes), %6llu launches, %llu failures\n",
                  t, (unsigned long long)s.iterations, (unsigned long long)s.vectorAdd, (unsigned long long)s.softmax,
                  (unsigned long long)s.fromFile, (unsigned long long)s.fromBytes, (unsigned long long)s.launches,
                  (unsigned long long)s.failures);
      for (const std::string &m : s.messages)
        std::printf("  FAIL: %s\n", m.c_str());
      iterations += s.iterations;
      launches += s.launches;
      failures += s.failures;
      idle = idle || s.iterations == 0;
    }
    std::printf("total: %llu iterations (module loads), %llu launches, %llu failures in %.1f s\n",
                (unsigned long long)iterations, (unsigned long long)launches, (unsigned long long)failures, elapsed);
    if (failures || idle) {
      std::printf("FAILED%s\n", idle ? " (a thread completed no iteration)" : "");
      return 1;
    }
    std::printf("PASSED\n");
    return 0;
  } catch (const std::exception &e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
