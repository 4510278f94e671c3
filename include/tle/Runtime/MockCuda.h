// Controls of the driver test double (libtle-mock-cuda.so, a fake libcuda) for consumers' tests without a GPU: the last launch, call counts, injected failures.
//
// Run the test with TLE_RT_CUDA_DRIVER set to the installed test double (<libdir>/tle/
// libtle-mock-cuda.so: CMake's TLE_MOCK_CUDA_DRIVER, pkg-config's `mock_cuda_driver` variable);
// libtle_rt then loads it instead of libcuda.so.1. It behaves as one compute capability 9.0
// device whose memory is host memory (a CUdeviceptr is a host address), loads tlec's cubins and
// PTX (reading their __tle_metadata), records every launch and runs host emulations of the
// examples' kernels (add_kernel, softmax_kernel, layer_norm_fwd, matmul_kernel, ...); launches of
// other kernels are recorded and do nothing. Header-only; needs -ldl.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace tle::mock {

/// The last launch the test double saw (its MockLaunch record).
struct Launch {
  char function[128];            ///< the kernel's entry symbol
  unsigned grid[3], block[3];    ///< the launch geometry
  unsigned shared;               ///< dynamic shared memory, bytes
  void *stream;                  ///< the CUstream
  unsigned numArgs;              ///< parameters of the kernel
  unsigned char args[16][8];     ///< the first 8 bytes of each of the first 16 arguments
  unsigned cluster[3];           ///< cluster dims (cuLaunchKernelEx)
  int cooperative;               ///< cooperative launch requested
  int viaEx;                     ///< launched with cuLaunchKernelEx
  int launches;                  ///< launches so far in the process
};

/// The test double named by TLE_RT_CUDA_DRIVER (the same loaded copy libtle_rt uses).
class Driver {
public:
  /// Opens the library TLE_RT_CUDA_DRIVER names. Throws std::runtime_error when it is unset or
  /// is not the test double.
  Driver() {
    const char *path = std::getenv("TLE_RT_CUDA_DRIVER");
    if (!path || !*path)
      throw std::runtime_error("tle::mock::Driver: TLE_RT_CUDA_DRIVER is not set");
    handle_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle_ || !dlsym(handle_, "mock_last_launch"))
      throw std::runtime_error(std::string("tle::mock::Driver: ") + path + " is not the TLE driver test double");
  }
  /// The last launch (the record is overwritten by the next one).
  const Launch &lastLaunch() const { return *fn<const Launch *(*)()>("mock_last_launch")(); }
  /// How many times driver entry point `call` (cuda.h name without _v2, e.g. "cuModuleLoadDataEx") ran.
  int calls(const char *call) const { return fn<int (*)(const char *)>("mock_calls")(call); }
  /// Makes the next `count` calls of `call` (-1: all) after `skip` successful ones return CUresult `result`.
  void fail(const char *call, int result, int count = 1, int skip = 0) const {
    fn<void (*)(const char *, int, int, int)>("mock_fail")(call, result, count, skip);
  }
  /// Removes every pending injected failure.
  void clearFailures() const { fn<void (*)()>("mock_clear_failures")(); }
  /// Live resources: 0 modules, 1 allocations, 2 streams, 3 events.
  int live(int what) const { return fn<int (*)(int)>("mock_live")(what); }

private:
  template <class F> F fn(const char *name) const { return reinterpret_cast<F>(dlsym(handle_, name)); }
  void *handle_ = nullptr;
};

} // namespace tle::mock
