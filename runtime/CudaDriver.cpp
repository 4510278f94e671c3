// Loads libcuda.so.1 with dlopen on first use, resolves the driver entry points and names CUresults.
#include "CudaDriver.h"

#include "tle/Runtime/Runtime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace tle::rt::cu {
namespace {

struct Loaded {
  Api api{};
  bool ok = false;
  std::string error; // the NoDriverError message when !ok
};

// Resolves `names` in order (the first exported one wins) into `slot`.
template <class Fn> bool resolve(void *lib, Fn &slot, std::initializer_list<const char *> names) {
  for (const char *name : names) {
    if (void *sym = dlsym(lib, name)) {
      slot = reinterpret_cast<Fn>(sym);
      return true;
    }
  }
  return false;
}

void load(Loaded &out) {
  const char *env = std::getenv("TLE_RT_CUDA_DRIVER");
  std::string path = env && *env ? env : "libcuda.so.1";
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    out.error = "libtle_rt: cannot load the CUDA driver (" + path + "): " +
                (why ? why : "unknown dlopen error");
    return;
  }
  Api &a = out.api;
  std::string missing;
  auto need = [&](auto &slot, std::initializer_list<const char *> names) {
    if (!resolve(lib, slot, names)) {
      if (!missing.empty())
        missing += ", ";
      missing += *names.begin();
    }
  };
  // Versioned names are those cuda.h #defines the plain name to (CUDA 12/13).
  need(a.cuInit, {"cuInit"});
  need(a.cuDriverGetVersion, {"cuDriverGetVersion"});
  need(a.cuGetErrorName, {"cuGetErrorName"});
  need(a.cuGetErrorString, {"cuGetErrorString"});
  need(a.cuDeviceGetCount, {"cuDeviceGetCount"});
  need(a.cuDeviceGet, {"cuDeviceGet"});
  need(a.cuDeviceGetName, {"cuDeviceGetName"});
  need(a.cuDeviceGetAttribute, {"cuDeviceGetAttribute"});
  need(a.cuDeviceTotalMem, {"cuDeviceTotalMem_v2"});
  need(a.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"});
  need(a.cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2"});
  need(a.cuCtxGetCurrent, {"cuCtxGetCurrent"});
  need(a.cuCtxSetCurrent, {"cuCtxSetCurrent"});
  need(a.cuCtxSynchronize, {"cuCtxSynchronize"});
  need(a.cuCtxGetDevice, {"cuCtxGetDevice"});
  need(a.cuModuleLoadDataEx, {"cuModuleLoadDataEx"});
  need(a.cuModuleUnload, {"cuModuleUnload"});
  need(a.cuModuleGetFunction, {"cuModuleGetFunction"});
  need(a.cuModuleGetGlobal, {"cuModuleGetGlobal_v2"});
  need(a.cuFuncGetAttribute, {"cuFuncGetAttribute"});
  need(a.cuFuncSetAttribute, {"cuFuncSetAttribute"});
  need(a.cuLaunchKernel, {"cuLaunchKernel"});
  need(a.cuMemAlloc, {"cuMemAlloc_v2"});
  need(a.cuMemFree, {"cuMemFree_v2"});
  need(a.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"});
  need(a.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"});
  need(a.cuMemcpyDtoD, {"cuMemcpyDtoD_v2"});
  need(a.cuMemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"});
  need(a.cuMemsetD8, {"cuMemsetD8_v2"});
  need(a.cuMemsetD32, {"cuMemsetD32_v2"});
  need(a.cuMemsetD8Async, {"cuMemsetD8Async"});
  need(a.cuMemsetD32Async, {"cuMemsetD32Async"});
  need(a.cuStreamCreate, {"cuStreamCreate"});
  need(a.cuStreamDestroy, {"cuStreamDestroy_v2"});
  need(a.cuStreamSynchronize, {"cuStreamSynchronize"});
  need(a.cuStreamGetCtx, {"cuStreamGetCtx"});
  need(a.cuStreamIsCapturing, {"cuStreamIsCapturing"});
  need(a.cuEventCreate, {"cuEventCreate"});
  need(a.cuEventDestroy, {"cuEventDestroy_v2"});
  need(a.cuEventRecord, {"cuEventRecord"});
  need(a.cuEventSynchronize, {"cuEventSynchronize"});
  // cuda.h 12.8+ maps cuEventElapsedTime to _v2; older drivers only export the original.
  need(a.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
  // Optional (CUDA 12.0+): only needed for cluster or cooperative launches.
  resolve(lib, a.cuLaunchKernelEx, {"cuLaunchKernelEx"});
  // Optional: checks that a cooperative launch's grid can be resident at once.
  resolve(lib, a.cuOccupancyMaxActiveBlocksPerMultiprocessor, {"cuOccupancyMaxActiveBlocksPerMultiprocessor"});
  // Optional: only needed to capture and replay CUDA graphs (tle::rt::Graph).
  resolve(lib, a.cuStreamBeginCapture, {"cuStreamBeginCapture_v2"});
  resolve(lib, a.cuStreamEndCapture, {"cuStreamEndCapture"});
  resolve(lib, a.cuGraphInstantiateWithFlags, {"cuGraphInstantiateWithFlags"});
  resolve(lib, a.cuGraphLaunch, {"cuGraphLaunch"});
  resolve(lib, a.cuGraphExecDestroy, {"cuGraphExecDestroy"});
  resolve(lib, a.cuGraphDestroy, {"cuGraphDestroy"});
  // Optional: only needed to build graphs node by node (Graph::create, Kernel::addNode).
  resolve(lib, a.cuGraphCreate, {"cuGraphCreate"});
  resolve(lib, a.cuGraphAddKernelNode, {"cuGraphAddKernelNode_v2"});
  resolve(lib, a.cuGraphAddEmptyNode, {"cuGraphAddEmptyNode"});
  resolve(lib, a.cuGraphKernelNodeSetAttribute, {"cuGraphKernelNodeSetAttribute"});
  resolve(lib, a.cuGraphDestroyNode, {"cuGraphDestroyNode"});
  // Optional (CUDA 12.0+): only needed to build TMA descriptors (TensorMap.h).
  resolve(lib, a.cuTensorMapEncodeTiled, {"cuTensorMapEncodeTiled"});
  // Optional: the context that owns a TMA descriptor's address (encodeTensorMapTiled).
  resolve(lib, a.cuPointerGetAttribute, {"cuPointerGetAttribute"});
  // Optional (CUDA 12.4+): checks a kernel's metadata against its entry function's parameters.
  resolve(lib, a.cuFuncGetParamInfo, {"cuFuncGetParamInfo"});
  if (!missing.empty()) {
    out.error = "libtle_rt: the CUDA driver (" + path + ") lacks " + missing +
                " (libtle_rt needs a CUDA 12 or newer driver)";
    return;
  }
  CUresult r = a.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char *name = nullptr, *text = nullptr;
    a.cuGetErrorName(r, &name);
    a.cuGetErrorString(r, &text);
    out.error = std::string("libtle_rt: cuInit failed: ") + (name ? name : "CUresult " + std::to_string(r)) +
                " (" + (text ? text : "no description") + ")";
    return;
  }
  out.ok = true;
}

// Never destroyed: objects released during static destruction (e.g. a global Device) still call
// into the driver through it.
Loaded &loaded() {
  static Loaded *state = new Loaded;
  static std::once_flag once;
  std::call_once(once, [] { load(*state); });
  return *state;
}

} // namespace

const Api &api() {
  Loaded &l = loaded();
  if (!l.ok)
    throw NoDriverError(l.error);
  return l.api;
}

std::string describe(CUresult result) {
  const char *name = nullptr, *text = nullptr;
  Loaded &l = loaded();
  if (l.api.cuGetErrorName)
    l.api.cuGetErrorName(result, &name);
  if (l.api.cuGetErrorString)
    l.api.cuGetErrorString(result, &text);
  std::string s = name ? name : "CUresult " + std::to_string(result);
  s += " (";
  s += text ? text : "unknown error";
  s += ")";
  return s;
}

void fail(std::string_view call, CUresult result, std::string_view detail) {
  std::string msg(call);
  msg += " failed: ";
  msg += describe(result);
  if (!detail.empty()) {
    msg += detail[0] == '\n' ? "" : ": ";
    msg += detail;
  }
  // The call name for DriverError::call() is the entry point, without any "(...)" detail.
  std::string name(call.substr(0, call.find('(')));
  throw DriverError(name, result, msg);
}

} // namespace tle::rt::cu
