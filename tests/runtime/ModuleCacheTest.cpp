// ModuleCache against the fake libcuda: one driver load per key (also under 16 racing threads), hits, devices, eviction, failures not cached, the C ABI.
#include "tle/Runtime/Launcher.h"
#include "tle/Runtime/ModuleCache.h"
#include "tle/Runtime/Runtime.h"
#include "tle/Runtime/tle_rt.h"

#include "MockSymbols.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

using namespace tle::rt;
using Catch::Matchers::Contains;

namespace {

/// Calls of driver entry point `call` so far.
int calls(const char *call) { return tle::test::mockFn<int (*)(const char *)>("mock_calls")(call); }
int loads() { return calls("cuModuleLoadDataEx"); }
void delay(const char *call, int us) { tle::test::mockFn<void (*)(const char *, int)>("mock_delay")(call, us); }
int maxConcurrent(const char *call) {
  return tle::test::mockFn<int (*)(const char *)>("mock_max_concurrent")(call);
}
void setDeviceCount(int n) { tle::test::mockFn<void (*)(int)>("mock_set_device_count")(n); }
int moduleDevice(void *m) { return tle::test::mockFn<int (*)(void *)>("mock_module_device")(m); }
int liveModules() { return tle::test::mockFn<int (*)(int)>("mock_live")(0); }
void failNext(const char *call, int result) {
  tle::test::mockFn<void (*)(const char *, int, int, int)>("mock_fail")(call, result, 1, 0);
}

/// A PTX-text module with one kernel `scale_kernel` and metadata; `tag` makes distinct bytes.
std::string modulePtx(const std::string &tag) {
  return "// module " + tag + "\n" +
         ".visible .entry scale_kernel(.param .u64 out, .param .u64 in, .param .u32 n, .param .f32 alpha)\n"
         R"(__tle_metadata_text = {"format": "tle-module", "version": 1, "target": "sm_90a", "compiler": "mock", )"
         R"("kernels": [{"name": "scale_kernel", "num_warps": 4, "params": [{"name": "out", "type": "*fp32"}, )"
         R"({"name": "in", "type": "*fp32"}, {"name": "n", "type": "i32"}, {"name": "alpha", "type": "fp32"}]}]})"
         "\n";
}

/// Launches scale_kernel of `mod` on 4 floats and returns out[3] (= 3 * 2).
float runScale(const Module &mod) {
  const Device &dev = mod.device();
  Kernel k = mod.kernel("scale_kernel");
  DeviceBuffer in = DeviceBuffer::fromHost(dev, std::vector<float>{0, 1, 2, 3});
  DeviceBuffer out(dev, 16);
  Stream s(dev);
  k.launch(1, s, out, in, int32_t(4), 2.0f);
  s.synchronize();
  return out.toHost<float>()[3];
}

/// Starts `n` threads running `body(i)` as close to the same moment as possible and joins them.
template <class F> void race(int n, F body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      ++ready;
      while (!go.load())
        std::this_thread::yield();
      body(i);
    });
  while (ready.load() < n)
    std::this_thread::yield();
  go = true;
  for (auto &t : threads)
    t.join();
}

} // namespace

TEST_CASE("module cache: the same bytes give the same module with one driver load", "[mock][cache]") {
  Device dev(0);
  ModuleCache cache;
  std::string a = modulePtx("a"), b = modulePtx("b");
  int before = loads();
  Module m1 = cache.getPtx(dev, a, "a.ptx");
  Module m2 = cache.getPtx(dev, a, "other label");
  CHECK(m1 == m2);
  CHECK(m2.label() == "a.ptx"); // the loading call's label
  CHECK(loads() == before + 1);
  // A terminating NUL is not part of the key; a copy of the bytes is the same key.
  std::string copy = a;
  Module m3 = cache.get(dev, ImageKind::Ptx, copy.c_str(), copy.size() + 1);
  CHECK(m3 == m1);
  CHECK(loads() == before + 1);
  Module mb = cache.getPtx(dev, b);
  CHECK(mb != m1);
  CHECK(mb.label() == "<ptx text>");
  CHECK(loads() == before + 2);

  ModuleCacheStats s = cache.stats();
  CHECK(s.misses == 2);
  CHECK(s.hits == 2);
  CHECK(s.joins == 0);
  CHECK(s.failures == 0);
  CHECK(s.entries == 2);
  CHECK(s.loading == 0);
  CHECK(cache.size() == 2);
  CHECK(cache.contains(dev, ImageKind::Ptx, a.data(), a.size()));
  CHECK_FALSE(cache.contains(dev, ImageKind::Binary, a.data(), a.size()));
  CHECK_FALSE(cache.contains(dev, ImageKind::Ptx, "x", 1));
  CHECK(runScale(m1) == 6.0f);

  // The same bytes as a binary image are another key, refused before any load (no ELF magic).
  CHECK_THROWS_AS(cache.get(dev, ImageKind::Binary, a.data(), a.size()), ArgumentError);
  CHECK_THROWS_WITH(cache.getImage(dev, a.data(), a.size(), "a.cubin"),
                    Contains("a.cubin has neither the ELF nor the fatbin magic"));
  CHECK_THROWS_WITH(cache.getPtx(dev, ""), Contains("ModuleCache::get: <ptx text> is empty"));
  CHECK_THROWS_AS(cache.get(dev, ImageKind::Ptx, nullptr, 4), ArgumentError);
  CHECK(loads() == before + 2);
  cache.resetStats();
  CHECK(cache.stats().misses == 0);
  CHECK(cache.stats().entries == 2);
}

TEST_CASE("module cache: 16 racing threads load each key once", "[mock][cache]") {
  Device dev(0);
  ModuleCache cache;
  std::string keys[2] = {modulePtx("race-0"), modulePtx("race-1")};
  delay("cuModuleLoadDataEx", 100000); // 100 ms per load: the racers overlap the load
  int before = loads();
  std::vector<Module> got(16, Module::fromPtx(dev, modulePtx("placeholder")));
  race(16, [&](int i) { got[size_t(i)] = cache.getPtx(dev, keys[i % 2]); });
  delay("cuModuleLoadDataEx", 0);
  CHECK(loads() == before + 1 + 2); // the placeholder, then one per key
  for (int i = 2; i < 16; ++i)
    CHECK(got[size_t(i)] == got[size_t(i % 2)]);
  CHECK(got[0] != got[1]);
  ModuleCacheStats s = cache.stats();
  CHECK(s.misses == 2);
  CHECK(s.hits + s.joins == 14);
  CHECK(s.joins >= 1);
  CHECK(s.entries == 2);
  CHECK(s.loading == 0);
  CHECK(runScale(got[7]) == 6.0f);
}

TEST_CASE("module cache: different keys load in parallel", "[mock][cache]") {
  Device dev(0);
  ModuleCache cache;
  std::vector<std::string> keys;
  for (int i = 0; i < 4; ++i)
    keys.push_back(modulePtx("parallel-" + std::to_string(i)));
  delay("cuModuleLoadDataEx", 300000);
  int before = loads();
  race(4, [&](int i) { cache.getPtx(dev, keys[size_t(i)]); });
  delay("cuModuleLoadDataEx", 0);
  CHECK(loads() == before + 4);
  CHECK(maxConcurrent("cuModuleLoadDataEx") >= 2); // loads overlapped: no lock held across a load
  CHECK(cache.stats().misses == 4);
}

TEST_CASE("module cache: devices are separate keys", "[mock][cache]") {
  setDeviceCount(2);
  {
    Device d0(0), d1(1);
    REQUIRE(d0.context() != d1.context());
    ModuleCache cache;
    std::string a = modulePtx("devices");
    int before = loads();
    Module m0 = cache.getPtx(d0, a), m1 = cache.getPtx(d1, a);
    CHECK(loads() == before + 2);
    CHECK(m0 != m1);
    CHECK(m0.device() == d0);
    CHECK(m1.device() == d1);
    CHECK(moduleDevice(m0.handle()) == 0); // loaded with device 0's context current
    CHECK(moduleDevice(m1.handle()) == 1);
    CHECK(cache.getPtx(d1, a) == m1);
    CHECK(cache.getPtx(d0, a) == m0);
    CHECK(loads() == before + 2);
    CHECK(cache.stats().hits == 2);
    CHECK(runScale(m1) == 6.0f);

    CHECK(cache.evictDevice(d1) == 1);
    CHECK_FALSE(cache.contains(d1, ImageKind::Ptx, a.data(), a.size()));
    CHECK(cache.contains(d0, ImageKind::Ptx, a.data(), a.size()));
    CHECK(cache.getPtx(d1, a) != m1); // loaded again
    CHECK(loads() == before + 3);
  }
  setDeviceCount(1);
}

TEST_CASE("module cache: evict and clear; held modules stay loaded", "[mock][cache]") {
  Device dev(0);
  int live0 = liveModules();
  std::string a = modulePtx("evict-a"), b = modulePtx("evict-b");
  {
    ModuleCache cache;
    Module held = cache.getPtx(dev, a);
    cache.getPtx(dev, b);
    CHECK(liveModules() == live0 + 2);
    CHECK(cache.evict(dev, ImageKind::Ptx, b.data(), b.size()));
    CHECK_FALSE(cache.evict(dev, ImageKind::Ptx, b.data(), b.size()));
    CHECK(liveModules() == live0 + 1); // b was held by the cache only
    CHECK(cache.clear() == 1);
    CHECK(cache.size() == 0);
    CHECK(cache.stats().evictions == 2);
    CHECK(liveModules() == live0 + 1); // `held` keeps a loaded
    CHECK(runScale(held) == 6.0f);
    int before = loads();
    Module again = cache.getPtx(dev, a);
    CHECK(again != held); // a new entry, a new load
    CHECK(loads() == before + 1);
    // The cache goes away first; its modules live on with their holders.
  }
  CHECK(liveModules() == live0);

  ModuleCache cache;
  Module kept = cache.getPtx(dev, a);
  {
    ModuleCache doomed;
    kept = doomed.getPtx(dev, b);
  }
  CHECK(runScale(kept) == 6.0f);
}

TEST_CASE("module cache: capacity drops the least recently used entries", "[mock][cache]") {
  Device dev(0);
  ModuleCache cache(2);
  CHECK(cache.capacity() == 2);
  std::string k[4];
  for (int i = 0; i < 4; ++i)
    k[i] = modulePtx("lru-" + std::to_string(i));
  auto has = [&](int i) { return cache.contains(dev, ImageKind::Ptx, k[i].data(), k[i].size()); };
  cache.getPtx(dev, k[0]);
  cache.getPtx(dev, k[1]);
  cache.getPtx(dev, k[2]); // drops 0
  CHECK(cache.size() == 2);
  CHECK_FALSE(has(0));
  CHECK(has(1));
  CHECK(has(2));
  cache.getPtx(dev, k[1]); // 1 is now the most recent
  cache.getPtx(dev, k[3]); // drops 2
  CHECK(has(1));
  CHECK_FALSE(has(2));
  CHECK(has(3));
  CHECK(cache.stats().evictions == 2);
  cache.setCapacity(1); // keeps the most recent: 3
  CHECK(cache.size() == 1);
  CHECK(has(3));
  cache.setCapacity(0);
  for (int i = 0; i < 4; ++i)
    cache.getPtx(dev, k[i]);
  CHECK(cache.size() == 4);
}

TEST_CASE("module cache: a failed load is not cached and the next get retries", "[mock][cache]") {
  Device dev(0);
  ModuleCache cache;
  int live0 = liveModules();
  std::string a = modulePtx("fail-once");
  int before = loads();
  failNext("cuModuleLoadDataEx", 2);
  try {
    cache.getPtx(dev, a, "a.ptx");
    FAIL("expected a DriverError");
  } catch (const DriverError &e) {
    CHECK(e.call() == "cuModuleLoadDataEx");
    CHECK(e.result() == 2);
    CHECK_THAT(std::string(e.what()), Contains("CUDA_ERROR_OUT_OF_MEMORY") && Contains("loading a.ptx"));
  }
  CHECK(cache.size() == 0);
  CHECK(cache.stats().failures == 1);
  Module m = cache.getPtx(dev, a);
  CHECK(loads() == before + 2);
  CHECK(runScale(m) == 6.0f);
  CHECK(cache.stats().misses == 2);

  // Invalid PTX: the JIT log comes through every time, each get tries again.
  std::string bogus = ".visible .entry k() { bogus; }";
  before = loads();
  for (int i = 0; i < 2; ++i)
    CHECK_THROWS_MATCHES(cache.getPtx(dev, bogus, "bogus.ptx"), DriverError,
                         Catch::Matchers::Predicate<DriverError>([](const DriverError &e) {
                           return e.result() == 218 &&
                                  std::string(e.what()).find("unknown instruction 'bogus'") != std::string::npos;
                         }));
  CHECK(loads() == before + 2);

  // Malformed metadata: MetadataError, the module unloaded again, nothing cached.
  std::string badMeta = ".visible .entry k()\n__tle_metadata_text = {\"format\": \"nope\"}\n";
  CHECK_THROWS_AS(cache.getPtx(dev, badMeta), MetadataError);
  CHECK(cache.size() == 1);
  CHECK(cache.stats().failures == 4);
  CHECK(liveModules() == live0 + 1); // only `a`: the failed loads left nothing behind
}

TEST_CASE("module cache: racing callers of a failing load all get its error", "[mock][cache]") {
  Device dev(0);
  ModuleCache cache;
  std::string bogus = "// racing\n.visible .entry k() { bogus; }";
  delay("cuModuleLoadDataEx", 300000);
  int before = loads();
  std::atomic<int> driverErrors{0};
  race(8, [&](int) {
    try {
      cache.getPtx(dev, bogus, "racing.ptx");
    } catch (const DriverError &e) {
      if (e.result() == 218 && std::string(e.what()).find("racing.ptx") != std::string::npos)
        ++driverErrors;
    }
  });
  delay("cuModuleLoadDataEx", 0);
  CHECK(driverErrors == 8);
  ModuleCacheStats s = cache.stats();
  CHECK(s.misses + s.joins == 8);
  CHECK(s.joins >= 1);
  CHECK(s.failures == s.misses);
  CHECK(loads() == before + int(s.misses));
  CHECK(s.entries == 0);
  CHECK_THROWS_AS(cache.getPtx(dev, bogus), DriverError); // not cached: loads again
  CHECK(loads() == before + int(s.misses) + 1);
}

TEST_CASE("module cache: files are keyed by content", "[mock][cache]") {
  Device dev(0);
  ModuleCache cache;
  std::string path = "module-cache-test-" + std::to_string(getpid()) + ".ptx";
  std::ofstream(path) << modulePtx("file-1");
  int before = loads();
  Module m1 = cache.getFile(dev, path);
  CHECK(cache.getFile(dev, path) == m1);
  CHECK(m1.label() == path);
  CHECK(loads() == before + 1);
  std::ofstream(path) << modulePtx("file-2");
  Module m2 = cache.getFile(dev, path);
  CHECK(m2 != m1);
  CHECK(loads() == before + 2);
  std::string ptx = modulePtx("file-1");
  CHECK(cache.getPtx(dev, ptx) == m1); // same bytes from memory: same entry
  std::remove(path.c_str());
  CHECK_THROWS_WITH(cache.getFile(dev, path), Contains("cannot open module file"));
}

TEST_CASE("module cache: the C ABI", "[mock][cache][capi]") {
  tle_rt_module_cache cache = nullptr;
  REQUIRE(tle_rt_module_cache_create(0, &cache) == TLE_RT_SUCCESS);
  std::string ptx = modulePtx("c-abi");
  int before = loads();
  tle_rt_module m1 = nullptr, m2 = nullptr;
  REQUIRE(tle_rt_module_cache_get(cache, 0, ptx.c_str(), 0, &m1) == TLE_RT_SUCCESS);
  REQUIRE(tle_rt_module_cache_get(cache, 0, ptx.c_str(), 0, &m2) == TLE_RT_SUCCESS);
  CHECK(m1 != m2);                                                      // two handles...
  CHECK(tle_rt_module_metadata(m1) == tle_rt_module_metadata(m2));      // ...of one module
  CHECK(loads() == before + 1);
  tle_rt_module_cache_stats s{};
  REQUIRE(tle_rt_module_cache_get_stats(cache, &s) == TLE_RT_SUCCESS);
  CHECK(s.misses == 1);
  CHECK(s.hits == 1);
  CHECK(s.entries == 1);
  tle_rt_kernel k = nullptr;
  REQUIRE(tle_rt_module_get_kernel(m2, "scale_kernel", &k) == TLE_RT_SUCCESS);
  tle_rt_kernel_release(k);

  tle_rt_module bad = nullptr;
  CHECK(tle_rt_module_cache_get(cache, 0, ".entry k() { bogus; }", 0, &bad) == TLE_RT_ERROR_DRIVER);
  // PTX with a size is read no further than that size (strlen ran past it into the bad text).
  std::string padded = ptx + "\nbogus;\n";
  tle_rt_module sized = nullptr;
  REQUIRE(tle_rt_module_cache_get(cache, 0, padded.data(), ptx.size(), &sized) == TLE_RT_SUCCESS);
  tle_rt_module_unload(sized);
  CHECK(bad == nullptr);
  CHECK_THAT(std::string(tle_rt_last_error()), Contains("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX"));
  CHECK(tle_rt_module_cache_get(cache, 0, nullptr, 0, &bad) == TLE_RT_ERROR_INVALID_ARGUMENT);

  int evicted = -1;
  REQUIRE(tle_rt_module_cache_evict(cache, 0, ptx.c_str(), 0, &evicted) == TLE_RT_SUCCESS);
  CHECK(evicted == 1);
  REQUIRE(tle_rt_module_cache_evict(cache, 0, ptx.c_str(), 0, &evicted) == TLE_RT_SUCCESS);
  CHECK(evicted == 0);
  CHECK(tle_rt_module_metadata(m1) != nullptr); // still loaded: the handles hold it
  tle_rt_module_unload(m1);
  tle_rt_module_unload(m2);
  tle_rt_module_cache_destroy(cache);

  // NULL: the process-wide cache.
  tle_rt_module g1 = nullptr, g2 = nullptr;
  tle_rt_module_cache_clear(nullptr);
  before = loads();
  REQUIRE(tle_rt_module_cache_get(nullptr, 0, ptx.c_str(), 0, &g1) == TLE_RT_SUCCESS);
  REQUIRE(tle_rt_module_cache_get(nullptr, 0, ptx.c_str(), 0, &g2) == TLE_RT_SUCCESS);
  CHECK(loads() == before + 1);
  CHECK(tle_rt_module_metadata(g1) == tle_rt_module_metadata(g2));
  CHECK(ModuleCache::global().size() == 1);
  CHECK(tle_rt_module_cache_clear(nullptr) == 1);
  tle_rt_module_unload(g1);
  tle_rt_module_unload(g2);
}

TEST_CASE("module cache: generated launchers embedding one image share one module", "[mock][cache][launcher]") {
  Device dev(0);
  ModuleCache::global().clear();
  int live0 = liveModules();
  std::string ptx = modulePtx("launchers");
  const tle_launcher_image images[] = {
      {"sm_90a", reinterpret_cast<const unsigned char *>(ptx.c_str()), ptx.size() + 1, 1}};
  int before = loads();

  // C++ launchers (tlec --emit-header): two kernels of one bundle, two LazyKernels, one load.
  static tle::launcher::LazyKernel first("first", "scale_kernel", images, 1);
  static tle::launcher::LazyKernel second("second", "scale_kernel", images, 1);
  const Kernel &k1 = first.get(dev);
  const Kernel &k2 = second.get(dev);
  CHECK(loads() == before + 1);
  CHECK(k1.function() == k2.function()); // the same CUfunction of the same CUmodule
  CHECK(&first.get(dev) == &k1);

  // C launchers: the same image through the C ABI's process-wide cache, still one load.
  static tle_launcher_lazy_kernel lazy = TLE_LAUNCHER_LAZY_KERNEL_INIT("scale_kernel", nullptr, 0);
  lazy.images = images;
  lazy.num_images = 1;
  tle_rt_kernel ck = nullptr;
  REQUIRE(tle_launcher_get_kernel(&lazy, "c_scale", 0, &ck) == TLE_RT_SUCCESS);
  CHECK(loads() == before + 1);
  CHECK(liveModules() == live0 + 1);
  CHECK(ModuleCache::global().size() == 1);

  // Unloading drops the cache entry; the module goes once the last launcher lets go.
  first.unload();
  CHECK(ModuleCache::global().size() == 0);
  CHECK(liveModules() == live0 + 1); // `second` and the C launcher still hold it
  float x = runScale(Module::fromPtx(dev, ptx));
  CHECK(x == 6.0f);
  second.unload();
  tle_launcher_unload(&lazy);
  CHECK(liveModules() == live0);
  // A launcher used again loads again.
  first.get(dev);
  CHECK(loads() == before + 3); // the fromPtx above, and this one
  first.unload();
  CHECK(liveModules() == live0);
}
