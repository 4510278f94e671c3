// Injected CUDA driver failures (MockCudaDriver.cpp's mock_fail): each surfaces as an error naming the failing call, leaks nothing, and the runtime keeps working.
#include "tle/Runtime/Launcher.h"
#include "tle/Runtime/Runtime.h"
#include "tle/Runtime/tle_launcher.h"
#include "tle/Runtime/tle_rt.h"

#include "MockSymbols.h"

#include <catch2/catch.hpp>

#include <functional>
#include <thread>

using namespace tle::rt;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;

namespace {

using MockLaunchHead = tle::test::MockLaunch;

/// The fake driver's control functions.
struct Mock {
  void (*fail)(const char *, int, int, int);
  void (*clear)();
  int (*injected)();
  int (*live)(int);
  const MockLaunchHead *(*last)();
  int launches() const;
};


const Mock &mock() {
  static Mock m = [] {
    Mock x;
    x.fail = tle::test::mockFn<void (*)(const char *, int, int, int)>("mock_fail");
    x.clear = tle::test::mockFn<void (*)()>("mock_clear_failures");
    x.injected = tle::test::mockFn<int (*)()>("mock_injected_failures");
    x.live = tle::test::mockFn<int (*)(int)>("mock_live");
    x.last = tle::test::mockFn<const MockLaunchHead *(*)()>("mock_last_launch");
    return x;
  }();
  return m;
}

int Mock::launches() const { return last()->launches; }

enum Resource { Modules = 0, Allocations = 1, Streams = 2, Events = 3 };

/// Clears injections when a test section ends, whatever happened in it.
struct Injections {
  Injections() { mock().clear(); }
  ~Injections() { mock().clear(); }
  /// The next call of `call` fails with `result` (after `skip` calls that succeed).
  void failNext(const char *call, int result, int skip = 0) { mock().fail(call, result, 1, skip); }
};

/// Runs `body`, which must throw a DriverError for `call` with `result` after `injections`
/// injected failures (the one being tested, not another); returns its message.
std::string driverError(const std::function<void()> &body, const std::string &call, int result, int injections = 1) {
  int before = mock().injected();
  try {
    body();
  } catch (const DriverError &e) {
    CHECK(e.call() == call);
    CHECK(e.result() == result);
    CHECK(mock().injected() == before + injections);
    return e.what();
  }
  FAIL("no DriverError from " << call);
  return "";
}

const char *kPtx = R"ptx(.version 8.0
.target sm_90a
.address_size 64
__tle_metadata_text = {"format": "tle-module", "version": 1, "target": "sm_90a", "compiler": "mock", "kernels": [{"name": "scale_kernel", "num_warps": 4, "params": [{"name": "out", "type": "*fp32", "divisibility": 16}, {"name": "in", "type": "*fp32", "divisibility": 16}, {"name": "n", "type": "i32"}, {"name": "alpha", "type": "fp32"}]}, {"name": "smem_kernel", "num_warps": 4, "shared_bytes": 98304, "params": [{"name": "out", "type": "*i32"}]}, {"name": "cluster_kernel", "num_warps": 8, "cluster": [2, 1, 1], "params": [{"name": "out", "type": "*fp32"}]}]}
.visible .entry scale_kernel(.param .u64 out, .param .u64 in, .param .u32 n, .param .f32 alpha) { ret; }
.visible .entry smem_kernel(.param .u64 out) { ret; }
.visible .entry cluster_kernel(.param .u64 out) { ret; }
)ptx";

/// Launches scale_kernel (out = 2 * in over 300 elements) and checks the result: the runtime works.
void checkWorks(const Device &dev) {
  Module mod = Module::fromPtx(dev, kPtx, "mock.ptx");
  Kernel k = mod.kernel("scale_kernel");
  std::vector<float> in(300);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = float(i);
  DeviceBuffer din = DeviceBuffer::fromHost(dev, in);
  DeviceBuffer dout(dev, in.size() * 4);
  dout.fillBytes(0);
  Stream s(dev);
  k.launch(Grid(3), s, dout, din, int32_t(300), 2.0f);
  s.synchronize();
  std::vector<float> out = dout.toHost<float>();
  CHECK(out[0] == 0.0f);
  CHECK(out[7] == 14.0f);
  CHECK(out[299] == 598.0f);
}

} // namespace

TEST_CASE("faults: a failed module load is named, leaks no module, and the next load works", "[mock][faults]") {
  Device dev(0);
  Injections inj;
  int modules = mock().live(Modules);

  inj.failNext("cuModuleLoadDataEx", 2);
  std::string m = driverError([&] { Module::fromPtx(dev, kPtx, "mock.ptx"); }, "cuModuleLoadDataEx", 2);
  CHECK(m == "cuModuleLoadDataEx failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory): loading mock.ptx");
  CHECK(mock().live(Modules) == modules);

  // Loaded, then reading __tle_metadata back fails: the module is unloaded again.
  inj.failNext("cuModuleGetGlobal", 200);
  m = driverError([&] { Module::fromPtx(dev, kPtx, "mock.ptx"); }, "cuModuleGetGlobal", 200);
  CHECK(m == "cuModuleGetGlobal(__tle_metadata) failed: CUDA_ERROR_INVALID_IMAGE (device kernel image is "
             "invalid): in mock.ptx");
  CHECK(mock().live(Modules) == modules);

  inj.failNext("cuMemcpyDtoH", 700);
  m = driverError([&] { Module::fromPtx(dev, kPtx, "mock.ptx"); }, "cuMemcpyDtoH", 700);
  CHECK_THAT(m, StartsWith("cuMemcpyDtoH failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was "
                           "encountered)"));
  CHECK_THAT(m, EndsWith(": reading the __tle_metadata of mock.ptx"));
  CHECK(mock().live(Modules) == modules);

  // An error code the driver cannot name is still reported with its number.
  inj.failNext("cuModuleLoadDataEx", 12345);
  m = driverError([&] { Module::fromPtx(dev, kPtx, "mock.ptx"); }, "cuModuleLoadDataEx", 12345);
  CHECK(m == "cuModuleLoadDataEx failed: CUresult 12345 (unknown error): loading mock.ptx");

  checkWorks(dev);
  CHECK(mock().live(Modules) == modules);
}

TEST_CASE("faults: failures while creating a kernel are named and the next kernel() works", "[mock][faults]") {
  Device dev(0);
  Injections inj;
  Module mod = Module::fromPtx(dev, kPtx, "mock.ptx");

  inj.failNext("cuModuleGetFunction", 201);
  std::string m = driverError([&] { mod.kernel("scale_kernel"); }, "cuModuleGetFunction", 201);
  CHECK(m == "cuModuleGetFunction(scale_kernel) failed: CUDA_ERROR_INVALID_CONTEXT (invalid device context): in "
             "mock.ptx");

  inj.failNext("cuFuncGetAttribute", 1);
  m = driverError([&] { mod.kernel("scale_kernel"); }, "cuFuncGetAttribute", 1);
  CHECK(m == "cuFuncGetAttribute(SHARED_SIZE_BYTES) failed: CUDA_ERROR_INVALID_VALUE (invalid argument)");

  // 96 KiB of dynamic shared memory needs the opt-in attribute.
  inj.failNext("cuFuncSetAttribute", 1);
  m = driverError([&] { mod.kernel("smem_kernel"); }, "cuFuncSetAttribute", 1);
  CHECK(m == "cuFuncSetAttribute(smem_kernel, MAX_DYNAMIC_SHARED_SIZE_BYTES=98304) failed: "
             "CUDA_ERROR_INVALID_VALUE (invalid argument)");

  Kernel smem = mod.kernel("smem_kernel");
  DeviceBuffer out(dev, 512);
  Stream s(dev);
  smem.launch(1, s, out);
  CHECK(out.toHost<int32_t>()[5] == 6);
  checkWorks(dev);
}

TEST_CASE("faults: failed launches are named, launch nothing, and the next launch works", "[mock][faults]") {
  Device dev(0);
  Injections inj;
  Module mod = Module::fromPtx(dev, kPtx, "mock.ptx");
  Kernel k = mod.kernel("scale_kernel");
  DeviceBuffer in = DeviceBuffer::fromHost(dev, std::vector<float>(256, 1.5f));
  DeviceBuffer out(dev, 256 * 4);
  out.fillBytes(0);
  Stream s(dev);

  int launches = mock().launches();
  inj.failNext("cuLaunchKernel", 701);
  std::string m = driverError([&] { k.launch(Grid(2), s, out, in, int32_t(256), 2.0f); }, "cuLaunchKernel", 701);
  CHECK(m == "cuLaunchKernel(scale_kernel) failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources "
             "requested for launch): grid (2, 1, 1), block (128, 1, 1), 0 bytes of dynamic shared memory");
  CHECK(mock().launches() == launches);
  CHECK(out.toHost<float>()[0] == 0.0f);

  k.launch(Grid(2), s, out, in, int32_t(256), 2.0f);
  CHECK(mock().launches() == launches + 1);
  CHECK(out.toHost<float>()[255] == 3.0f);

  // Cluster launches go through cuLaunchKernelEx.
  Kernel cl = mod.kernel("cluster_kernel");
  inj.failNext("cuLaunchKernelEx", 719);
  m = driverError([&] { cl.launch(Grid(4), s, out); }, "cuLaunchKernelEx", 719);
  CHECK(m == "cuLaunchKernelEx(cluster_kernel) failed: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure): grid "
             "(4, 1, 1), cluster (2, 1, 1), cooperative false");
  cl.launch(Grid(4), s, out);
  CHECK(mock().launches() == launches + 2);

  // An asynchronous failure shows at the next synchronisation.
  inj.failNext("cuStreamSynchronize", 719);
  m = driverError([&] { s.synchronize(); }, "cuStreamSynchronize", 719);
  CHECK(m == "cuStreamSynchronize failed: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)");
  s.synchronize();
  inj.failNext("cuCtxSynchronize", 700);
  driverError([&] { dev.synchronize(); }, "cuCtxSynchronize", 700);
  dev.synchronize();

  // A thread where the context cannot be made current.
  std::string threadError;
  std::thread t([&] {
    inj.failNext("cuCtxSetCurrent", 201);
    threadError = driverError([&] { k.launch(Grid(2), s, out, in, int32_t(256), 4.0f); }, "cuCtxSetCurrent", 201);
    k.launch(Grid(2), s, out, in, int32_t(256), 4.0f);
  });
  t.join();
  CHECK(threadError == "cuCtxSetCurrent failed: CUDA_ERROR_INVALID_CONTEXT (invalid device context)");
  CHECK(out.toHost<float>()[100] == 6.0f);
  checkWorks(dev);
}

TEST_CASE("faults: failed allocations and copies are named and leak no memory", "[mock][faults]") {
  Device dev(0);
  Injections inj;
  int allocations = mock().live(Allocations);

  inj.failNext("cuMemAlloc", 2);
  std::string m = driverError([&] { DeviceBuffer b(dev, 1 << 20); }, "cuMemAlloc", 2);
  CHECK(m == "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory): allocating 1048576 bytes on device 0");
  CHECK(mock().live(Allocations) == allocations);
  // When the driver cannot name the error either, the number is given.
  inj.failNext("cuMemAlloc", 2);
  mock().fail("cuGetErrorName", 1, 1, 0);
  m = driverError([&] { DeviceBuffer b(dev, 64); }, "cuMemAlloc", 2, 2);
  CHECK(m == "cuMemAlloc failed: CUresult 2 (out of memory): allocating 64 bytes on device 0");

  // The allocation succeeds, the upload fails: the buffer is freed.
  std::vector<int32_t> v = {1, 2, 3, 4, 5, 6, 7, 8};
  inj.failNext("cuMemcpyHtoD", 700);
  driverError([&] { DeviceBuffer::fromHost(dev, v); }, "cuMemcpyHtoD", 700);
  CHECK(mock().live(Allocations) == allocations);

  DeviceBuffer a = DeviceBuffer::fromHost(dev, v);
  CHECK(mock().live(Allocations) == allocations + 1);
  inj.failNext("cuMemcpyDtoH", 700);
  driverError([&] { a.toHost<int32_t>(); }, "cuMemcpyDtoH", 700);
  CHECK(a.toHost<int32_t>() == v);

  DeviceBuffer b(dev, 32);
  Stream s(dev);
  inj.failNext("cuMemcpyDtoD", 1);
  driverError([&] { b.copyFromDevice(a, 32); }, "cuMemcpyDtoD", 1);
  inj.failNext("cuMemcpyDtoDAsync", 1);
  driverError([&] { b.copyFromDeviceAsync(a, 32, s); }, "cuMemcpyDtoDAsync", 1);
  inj.failNext("cuMemsetD8", 1);
  driverError([&] { b.fillBytes(0); }, "cuMemsetD8", 1);
  inj.failNext("cuMemsetD32Async", 1);
  driverError([&] { b.fill32Async(9, s); }, "cuMemsetD32Async", 1);
  b.copyFromDevice(a, 32);
  CHECK(b.toHost<int32_t>() == v);
  b.fill32(9);
  CHECK(b.toHost<int32_t>()[3] == 9);
  CHECK(mock().live(Allocations) == allocations + 2);
}

TEST_CASE("faults: streams and events", "[mock][faults]") {
  Device dev(0);
  Injections inj;
  int streams = mock().live(Streams), events = mock().live(Events);
  inj.failNext("cuStreamCreate", 2);
  std::string m = driverError([&] { Stream s(dev); }, "cuStreamCreate", 2);
  CHECK(m == "cuStreamCreate failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  CHECK(mock().live(Streams) == streams);
  inj.failNext("cuEventCreate", 2);
  driverError([&] { Event e(dev); }, "cuEventCreate", 2);
  CHECK(mock().live(Events) == events);

  Stream s(dev);
  Event e0(dev), e1(dev);
  inj.failNext("cuEventRecord", 1);
  driverError([&] { e0.record(s); }, "cuEventRecord", 1);
  e0.record(s);
  e1.record(s);
  inj.failNext("cuEventElapsedTime", 1);
  driverError([&] { Event::elapsedMs(e0, e1); }, "cuEventElapsedTime", 1);
  CHECK(Event::elapsedMs(e0, e1) > 0.0f);
  CHECK(mock().live(Streams) == streams + 1);
  CHECK(mock().live(Events) == events + 2);
}

TEST_CASE("faults: the C ABI reports the failing call and keeps working", "[mock][faults]") {
  Injections inj;
  std::string ptx = kPtx;
  tle_rt_module m = nullptr;
  inj.failNext("cuModuleLoadDataEx", 2);
  CHECK(tle_rt_module_load_data(0, ptx.c_str(), ptx.size() + 1, &m) == TLE_RT_ERROR_DRIVER);
  CHECK(m == nullptr);
  CHECK_THAT(std::string(tle_rt_last_error()), StartsWith("cuModuleLoadDataEx failed: CUDA_ERROR_OUT_OF_MEMORY"));
  REQUIRE(tle_rt_module_load_data(0, ptx.c_str(), ptx.size() + 1, &m) == TLE_RT_SUCCESS);

  tle_rt_kernel k = nullptr;
  inj.failNext("cuModuleGetFunction", 201);
  CHECK(tle_rt_module_get_kernel(m, "scale_kernel", &k) == TLE_RT_ERROR_DRIVER);
  CHECK_THAT(std::string(tle_rt_last_error()), StartsWith("cuModuleGetFunction(scale_kernel) failed"));
  REQUIRE(tle_rt_module_get_kernel(m, "scale_kernel", &k) == TLE_RT_SUCCESS);

  Device dev(0);
  DeviceBuffer in = DeviceBuffer::fromHost(dev, std::vector<float>(128, 2.0f));
  DeviceBuffer out(dev, 128 * 4);
  uint64_t po = out.address(), pi = in.address();
  int32_t n = 128;
  float a = 0.5f;
  void *args[] = {&po, &pi, &n, &a};
  inj.failNext("cuLaunchKernel", 701);
  CHECK(tle_rt_launch(k, 1, 1, 1, nullptr, args, 4) == TLE_RT_ERROR_DRIVER);
  CHECK_THAT(std::string(tle_rt_last_error()),
             StartsWith("cuLaunchKernel(scale_kernel) failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"));
  CHECK(tle_rt_launch(k, 1, 1, 1, nullptr, args, 4) == TLE_RT_SUCCESS);
  CHECK(out.toHost<float>()[127] == 1.0f);
  inj.failNext("cuCtxSynchronize", 719);
  CHECK(tle_rt_device_synchronize(0) == TLE_RT_ERROR_DRIVER);
  CHECK(std::string(tle_rt_last_error()) == "cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)");
  CHECK(tle_rt_device_synchronize(0) == TLE_RT_SUCCESS);
  tle_rt_kernel_release(k);
  tle_rt_module_unload(m);
}

TEST_CASE("faults: generated launchers retry a kernel whose module failed to load", "[mock][faults]") {
  Injections inj;
  std::string ptx = kPtx;
  const tle_launcher_image images[] = {{"sm_90a", reinterpret_cast<const unsigned char *>(ptx.c_str()), ptx.size() + 1, 1}};

  // The C launchers' lazy kernel: the failure is reported, nothing is cached, the next call loads.
  static tle_launcher_lazy_kernel lazy = TLE_LAUNCHER_LAZY_KERNEL_INIT("scale_kernel", nullptr, 0);
  lazy.images = images;
  lazy.num_images = 1;
  tle_rt_kernel k = nullptr;
  inj.failNext("cuModuleLoadDataEx", 2);
  CHECK(tle_launcher_get_kernel(&lazy, "scale", 0, &k) == TLE_RT_ERROR_DRIVER);
  CHECK(std::string(tle_launcher_last_error()) ==
        "scale: no image of kernel scale_kernel loads on device 0 (tried sm_90a PTX); last error: cuModuleLoadDataEx "
        "failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory): loading <ptx text>");
  REQUIRE(tle_launcher_get_kernel(&lazy, "scale", 0, &k) == TLE_RT_SUCCESS);
  CHECK(tle_rt_kernel_num_params(k) == 4);
  tle_launcher_unload(&lazy);

  // The C++ launchers' LazyKernel.
  static tle::launcher::LazyKernel lk("scale", "scale_kernel", images, 1);
  Device dev(0);
  inj.failNext("cuModuleGetFunction", 201);
  std::string m = driverError([&] { lk.get(dev); }, "cuModuleGetFunction", 201);
  CHECK_THAT(m, StartsWith("cuModuleGetFunction(scale_kernel) failed: CUDA_ERROR_INVALID_CONTEXT"));
  const Kernel &kernel = lk.get(dev);
  DeviceBuffer in = DeviceBuffer::fromHost(dev, std::vector<float>(128, 3.0f));
  DeviceBuffer out(dev, 128 * 4);
  Stream s(dev);
  kernel.launch(1, s, out, in, int32_t(128), 2.0f);
  CHECK(out.toHost<float>()[64] == 6.0f);
  lk.unload();
}

// Hidden from the default run: opening a device fails only when no Device of that ordinal is
// open in the process yet, so ctest runs this in a process of its own (tests/runtime/CMakeLists.txt).
TEST_CASE("faults: opening a device", "[.][device-open]") {
  Injections inj;
  for (const char *call : {"cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetAttribute",
                           "cuDeviceTotalMem", "cuDevicePrimaryCtxRetain"}) {
    INFO(call);
    inj.failNext(call, 3);
    std::string m = driverError([&] { Device d(0); }, call, 3);
    CHECK_THAT(m, StartsWith(std::string(call)));
    CHECK_THAT(m, Contains("CUDA_ERROR_NOT_INITIALIZED (initialization error)"));
  }
  Device dev(0);
  CHECK(dev.name() == "Mock GPU");
  checkWorks(dev);
}

// Hidden: run by ctest with TLE_MOCK_CUDA_FAIL=cuInit=3, so cuInit fails when libtle_rt loads the driver.
TEST_CASE("faults: cuInit fails", "[.][cuinit]") {
  std::string reason;
  CHECK_FALSE(gpuAvailable(&reason));
  CHECK(reason == "libtle_rt: cuInit failed: CUDA_ERROR_NOT_INITIALIZED (initialization error)");
  CHECK_THROWS_AS(Device(0), NoDriverError);
  int n = -1;
  CHECK(tle_rt_device_count(&n) == TLE_RT_ERROR_NO_DRIVER);
  CHECK(std::string(tle_rt_last_error()) == "libtle_rt: cuInit failed: CUDA_ERROR_NOT_INITIALIZED (initialization error)");
}
