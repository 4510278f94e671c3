// Tests that libtle_rt fails cleanly, with a message naming the cause, when the CUDA driver is absent.
#include "tle/Runtime/Runtime.h"
#include "tle/Runtime/tle_rt.h"

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdlib>

using namespace tle::rt;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// The driver library libtle_rt will try, and whether this process can load it.
std::string driverName() {
  const char *env = std::getenv("TLE_RT_CUDA_DRIVER");
  return env && *env ? env : "libcuda.so.1";
}

bool driverLoads() {
  void *h = dlopen(driverName().c_str(), RTLD_NOW | RTLD_LOCAL);
  return h != nullptr;
}

std::string expectedPrefix() { return "libtle_rt: cannot load the CUDA driver (" + driverName() + "): "; }

} // namespace

TEST_CASE("without a driver, devices and modules throw NoDriverError", "[nodriver][default-driver]") {
  if (driverLoads()) {
    WARN("the CUDA driver " << driverName() << " loads here: the no-driver path is not exercised");
    std::string reason;
    bool ok = gpuAvailable(&reason); // must not crash either way
    INFO(reason);
    SUCCEED();
    (void)ok;
    return;
  }
  CHECK_THROWS_AS(Device::count(), NoDriverError);
  CHECK_THROWS_WITH(Device::count(), StartsWith(expectedPrefix()));
  CHECK_THROWS_AS(Device(0), NoDriverError);
  CHECK_THROWS_WITH(Device(0), StartsWith(expectedPrefix()));
  CHECK_THROWS_WITH(Device(0), Contains(driverName()));
  // Loading a module needs a device: the same clear error, on every attempt.
  for (int attempt = 0; attempt < 2; ++attempt)
    CHECK_THROWS_AS(Module::fromFile(Device(0), "softmax.sm_90a.cubin"), NoDriverError);
  CHECK_THROWS_WITH(Module::fromFile(Device(0), "softmax.sm_90a.cubin"), StartsWith(expectedPrefix()));
  CHECK_THROWS_AS(driverVersion(), NoDriverError);
  std::string reason;
  CHECK_FALSE(gpuAvailable(&reason));
  CHECK_THAT(reason, StartsWith(expectedPrefix()));
}

extern "C" int tle_rt_c_header_check(void);

TEST_CASE("tle_rt.h compiles as C and links", "[capi]") { CHECK(tle_rt_c_header_check() == 36); }

TEST_CASE("without a driver, the C ABI reports TLE_RT_ERROR_NO_DRIVER", "[nodriver][default-driver]") {
  if (driverLoads()) {
    WARN("the CUDA driver " << driverName() << " loads here: the no-driver path is not exercised");
    return;
  }
  int count = -1;
  CHECK(tle_rt_device_count(&count) == TLE_RT_ERROR_NO_DRIVER);
  CHECK_THAT(std::string(tle_rt_last_error()), StartsWith(expectedPrefix()));
  tle_rt_module mod = reinterpret_cast<tle_rt_module>(0x1);
  CHECK(tle_rt_module_load_file(0, "softmax.sm_90a.cubin", &mod) == TLE_RT_ERROR_NO_DRIVER);
  CHECK(mod == nullptr);
  CHECK_THAT(std::string(tle_rt_last_error()), StartsWith(expectedPrefix()));
  CHECK(tle_rt_module_load_file(0, nullptr, &mod) == TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(tle_rt_last_error()), Contains("NULL"));
  CHECK(tle_rt_launch(nullptr, 1, 1, 1, nullptr, nullptr, 0) == TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK(tle_rt_kernel_num_params(nullptr) == 0);
  CHECK(tle_rt_module_metadata(nullptr) == nullptr);
  tle_rt_module_unload(nullptr);
  tle_rt_kernel_release(nullptr);
}
