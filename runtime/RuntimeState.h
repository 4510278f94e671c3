// Internal to libtle_rt: the state behind Device and Module, and the scoped current context, shared by its sources.
#pragma once

#include "CudaDriver.h"
#include "tle/Runtime/Runtime.h"

#include <new>
#include <optional>
#include <string>

namespace tle::rt::detail {

using namespace cu;

/// One device and its retained primary context; shared by every object on that device.
struct DeviceState {
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string name;
  int ccMajor = 0, ccMinor = 0, smCount = 0;
  size_t totalMem = 0, l2Bytes = 0, sharedOptin = 0;

  ~DeviceState() {
    if (!context)
      return;
    try {
      api().cuDevicePrimaryCtxRelease(device);
    } catch (...) {
    }
  }

  /// Makes the context current on this thread; cheap when it already is.
  void makeCurrent() const {
    const Api &a = api();
    CUcontext cur = nullptr;
    if (a.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == context)
      return;
    check(a.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  }
};

/// Makes `context` current on the calling thread for the scope and, when it was not, restores the
/// caller's current context (possibly none) at the end: libtle_rt leaves the thread's context as
/// it found it. Costs one cuCtxGetCurrent when the context is already current.
class ScopedContext {
public:
  /// Throws DriverError when the context cannot be made current.
  explicit ScopedContext(CUcontext context) {
    if (!enter(context))
      check(result_, "cuCtxSetCurrent");
  }
  /// For destructors: never throws; ok() says whether the context is current.
  ScopedContext(CUcontext context, std::nothrow_t) noexcept {
    try {
      enter(context);
    } catch (...) {
      result_ = CUDA_ERROR_INVALID_VALUE;
    }
  }
  ~ScopedContext() {
    if (switched_)
      api().cuCtxSetCurrent(previous_); // the driver's loader succeeded, so api() cannot throw
  }
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;
  /// True when the context is current.
  bool ok() const { return result_ == CUDA_SUCCESS; }

private:
  bool enter(CUcontext context) {
    const Api &a = api();
    if (a.cuCtxGetCurrent(&previous_) == CUDA_SUCCESS && previous_ == context)
      return true;
    result_ = a.cuCtxSetCurrent(context);
    switched_ = result_ == CUDA_SUCCESS;
    return switched_;
  }
  CUcontext previous_ = nullptr;
  CUresult result_ = CUDA_SUCCESS;
  bool switched_ = false;
};

/// A loaded module, its metadata and JIT log.
struct ModuleState {
  explicit ModuleState(const Device &d) : device(d) {}
  Device device;
  CUmodule module = nullptr;
  std::string label;
  std::string jitLog;
  std::optional<ModuleInfo> info;

  ~ModuleState() {
    if (!module)
      return;
    ScopedContext scope(static_cast<CUcontext>(device.context()), std::nothrow);
    if (scope.ok())
      api().cuModuleUnload(module);
  }
};

} // namespace tle::rt::detail
