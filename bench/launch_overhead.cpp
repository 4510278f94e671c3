// tle-bench-launch: the host cost of one kernel launch through a generated launcher, libtle_rt's C++ and C APIs, and cuLaunchKernel directly.
//
// Usage: tle-bench-launch [--launches 200000] [--burst 256] [--rounds 5] [--out result.json]
// The kernel is examples/vector_add.tle (one 1024-element block, so the GPU finishes each launch in
// a few microseconds); its launcher (bench_add, tlec --emit-header) is embedded. Method: launches
// go in bursts of --burst (below the driver's queue depth, so a launch never waits for the GPU),
// the stream is synchronised between bursts, and only the host time of the burst's launch calls is
// counted (steady_clock). The variants take turns burst by burst, --rounds times over; each
// reports the median over rounds of the mean time per launch, and its excess over cuLaunchKernel.
// Variants: cuLaunchKernel (the CUfunction of the same module, arguments packed once),
// tle_rt_launch (C API, void ** arguments), Kernel::launchRaw, Kernel::launch (typed, checked),
// the generated launcher on a tle::rt::Stream with DeviceBuffers, and on a raw cudaStream_t with
// void * pointers (the engine's call), and one replay of a CUDA graph of --burst launches divided
// by --burst. Runs on the fake driver too (ctest runtime.bench-launch-on-mock-driver), where the
// numbers show libtle_rt's own cost above the fake's cuLaunchKernel. Triton's launcher on the same
// kernel: bench/launch_overhead_triton.py --tle-json (this program's --out) adds its rows.
#define TLE_LAUNCHER_IMPLEMENTATION
#include "bench_add.h"

#include "tle/Runtime/tle_rt.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace tle::rt;

namespace {

struct Options {
  long launches = 200000;
  int burst = 256;
  int rounds = 5;
  std::string out;
};

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tle-bench-launch: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--launches")
      o.launches = std::atol(next().c_str());
    else if (a == "--burst")
      o.burst = std::atoi(next().c_str());
    else if (a == "--rounds")
      o.rounds = std::atoi(next().c_str());
    else if (a == "--out")
      o.out = next();
    else {
      std::fprintf(stderr, "usage: tle-bench-launch [--launches N] [--burst N] [--rounds N] [--out FILE]\n");
      std::exit(2);
    }
  }
  if (o.launches < 1 || o.burst < 1 || o.rounds < 1) {
    std::fprintf(stderr, "tle-bench-launch: --launches, --burst and --rounds must be positive\n");
    std::exit(2);
  }
  return o;
}

/// One way of launching: `launch(k)` makes k calls, each standing for `launchesPerCall` launches.
struct Variant {
  Variant(std::string n, std::function<void(int)> f, int per = 1)
      : name(std::move(n)), launch(std::move(f)), launchesPerCall(per) {}
  std::string name;
  std::function<void(int)> launch;
  int launchesPerCall;             ///< 1, or a graph's burst
  std::vector<double> usPerLaunch; ///< per round
};

using CuLaunchKernel = int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               void *, void **, void **);

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  std::string why;
  if (!gpuAvailable(&why)) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return 77;
  }
  Device dev(0);
  dev.makeCurrent(); // as an engine on the CUDA runtime: the primary context is current
  Stream stream(dev);
  auto *raw = static_cast<CUstream_st *>(stream.handle());
  const int32_t n = 1024;
  DeviceBuffer x(dev, n * 4), y(dev, n * 4), z(dev, n * 4);
  x.fillBytes(0);
  y.fillBytes(0);
  void *px = reinterpret_cast<void *>(x.address()), *py = reinterpret_cast<void *>(y.address());
  void *pz = reinterpret_cast<void *>(z.address());

  bench_add_load(dev);
  bench_add(stream, x, y, z, n); // the module the other variants share: the launcher's own
  stream.synchronize();
  const Kernel &kernel = tle_launcher_bench_add::kernel0.get(dev);
  tle_rt_module cmod = nullptr;
  tle_rt_kernel ck = nullptr;
  if (tle_rt_module_cache_get(nullptr, dev.ordinal(), tle_launcher_bench_add::image0_0,
                              sizeof(tle_launcher_bench_add::image0_0), &cmod) != TLE_RT_SUCCESS ||
      tle_rt_module_get_kernel(cmod, "add_kernel", &ck) != TLE_RT_SUCCESS) {
    std::fprintf(stderr, "tle-bench-launch: %s\n", tle_rt_last_error());
    return 1;
  }
  const char *driverPath = std::getenv("TLE_RT_CUDA_DRIVER");
  void *lib = dlopen(driverPath && *driverPath ? driverPath : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  auto cuLaunchKernel = lib ? reinterpret_cast<CuLaunchKernel>(dlsym(lib, "cuLaunchKernel")) : nullptr;
  if (!cuLaunchKernel) {
    std::fprintf(stderr, "tle-bench-launch: cannot resolve cuLaunchKernel\n");
    return 1;
  }
  uint64_t ax = x.address(), ay = y.address(), az = z.address();
  int32_t an = n;
  void *args[] = {&ax, &ay, &az, &an};
  const unsigned block = kernel.info().block[0], shared = kernel.info().sharedBytes;

  std::vector<Variant> variants = {
      {"cuLaunchKernel", [&](int k) {
         for (int i = 0; i < k; ++i)
           if (cuLaunchKernel(kernel.function(), 1, 1, 1, block, 1, 1, shared, raw, args, nullptr) != 0)
             throw Error("cuLaunchKernel failed");
       }},
      {"tle_rt_launch (C API)", [&](int k) {
         for (int i = 0; i < k; ++i)
           if (tle_rt_launch(ck, 1, 1, 1, raw, args, 4) != TLE_RT_SUCCESS)
             throw Error(tle_rt_last_error());
       }},
      {"Kernel::launchRaw", [&](int k) {
         for (int i = 0; i < k; ++i)
           kernel.launchRaw(1, stream, args, 4);
       }},
      {"Kernel::launch (typed)", [&](int k) {
         for (int i = 0; i < k; ++i)
           kernel.launch(1, stream, x, y, z, n);
       }},
      {"launcher (Stream, DeviceBuffer)", [&](int k) {
         for (int i = 0; i < k; ++i)
           bench_add(stream, x, y, z, n);
       }},
      {"launcher (cudaStream_t, void *)", [&](int k) {
         for (int i = 0; i < k; ++i)
           bench_add(raw, px, py, pz, n);
       }},
  };
  Graph::beginCapture(stream);
  for (int i = 0; i < o.burst; ++i)
    bench_add(raw, px, py, pz, n);
  Graph graph = Graph::endCapture(stream);
  variants.push_back({"graph replay (per launch)", [&](int k) {
                        for (int i = 0; i < k; ++i)
                          graph.launch(stream);
                      },
                      o.burst});

  const long bursts = std::max(1L, o.launches / o.burst);
  for (int round = 0; round < o.rounds; ++round) {
    std::vector<double> seconds(variants.size(), 0.0);
    for (long b = 0; b < bursts; ++b)
      for (size_t v = 0; v < variants.size(); ++v) {
        int calls = std::max(1, o.burst / variants[v].launchesPerCall);
        auto t0 = std::chrono::steady_clock::now();
        variants[v].launch(calls);
        seconds[v] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        stream.synchronize();
      }
    for (size_t v = 0; v < variants.size(); ++v)
      variants[v].usPerLaunch.push_back(1e6 * seconds[v] / double(bursts * o.burst));
  }

  double base = median(variants[0].usPerLaunch);
  std::printf("device: %s; driver %d; %ld launches per variant per round, bursts of %d, %d rounds\n",
              dev.name().c_str(), driverVersion(), bursts * o.burst, o.burst, o.rounds);
  std::printf("| variant | us per launch (median) | over cuLaunchKernel |\n| --- | ---: | ---: |\n");
  std::string json = "{\"device\": \"" + dev.name() + "\", \"launches_per_round\": " + std::to_string(bursts * o.burst) +
                     ", \"burst\": " + std::to_string(o.burst) + ", \"rounds\": " + std::to_string(o.rounds) +
                     ", \"variants\": [";
  for (size_t v = 0; v < variants.size(); ++v) {
    double m = median(variants[v].usPerLaunch);
    std::printf("| %s | %.3f | %+.3f |\n", variants[v].name.c_str(), m, m - base);
    char item[256];
    std::snprintf(item, sizeof item, "%s{\"name\": \"%s\", \"us_per_launch\": %.4f, \"over_cuLaunchKernel_us\": %.4f}",
                  v ? ", " : "", variants[v].name.c_str(), m, m - base);
    json += item;
  }
  json += "]}\n";
  if (!o.out.empty())
    std::ofstream(o.out) << json;
  tle_rt_kernel_release(ck);
  tle_rt_module_unload(cmod);
  return 0;
}
