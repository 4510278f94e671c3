// Controls of the driver test double (libtle-mock-cuda.so, a fake libcuda) for consumers' tests without a GPU: the last launch and graph node, call counts, injected failures.
//
// Run the test with TLE_RT_CUDA_DRIVER set to the installed test double (<libdir>/tle/
// libtle-mock-cuda.so: CMake's TLE_MOCK_CUDA_DRIVER, pkg-config's `mock_cuda_driver` variable);
// libtle_rt then loads it instead of libcuda.so.1. It behaves as one compute capability 9.0
// device whose memory is host memory (a CUdeviceptr is a host address), loads tlec's cubins and
// PTX (reading their __tle_metadata), records every launch and graph node, and runs host
// emulations of the examples' kernels (add_kernel, softmax_kernel, layer_norm_fwd, matmul_kernel,
// ...); launches of other kernels are recorded and do nothing. Header-only; needs -ldl.
#pragma once

#include <dlfcn.h>

#include <cstddef>
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

/// The last kernel node the test double saw added to a CUDA graph (its MockGraphNodeRecord).
struct GraphNode {
  int adds;                   ///< kernel nodes added so far in the process
  void *graph;                ///< the CUgraph
  void *node;                 ///< the new CUgraphNode
  char function[128];         ///< the kernel's entry symbol
  unsigned grid[3], block[3]; ///< the launch geometry
  unsigned shared;            ///< dynamic shared memory, bytes
  unsigned numArgs;           ///< argument values the node copied (the kernel's parameters)
  unsigned numDeps;           ///< dependencies
  void *deps[8];              ///< the first 8 dependencies (CUgraphNode)
  unsigned cluster[3];        ///< its cluster dimension attribute (1, 1, 1 when unset)
  int cooperative;            ///< its cooperative attribute
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
  /// The last kernel node added to a graph (cuGraphAddKernelNode; overwritten by the next one).
  const GraphNode &lastGraphNode() const { return *fn<const GraphNode *(*)()>("mock_last_graph_node")(); }
  /// Copies argument `index` of the last kernel node (up to `cap` bytes) into `out`; its size in
  /// bytes, or -1 when there is no such argument.
  long lastGraphNodeArg(int index, void *out, size_t cap) const {
    return fn<long (*)(int, void *, size_t)>("mock_last_graph_node_arg")(index, out, cap);
  }
  /// The nodes (kernel and empty) of CUgraph `graph`.
  int graphNodeCount(void *graph) const { return fn<int (*)(void *)>("mock_graph_node_count")(graph); }
  /// Live resources: 0 modules, 1 allocations, 2 streams, 3 events.
  int live(int what) const { return fn<int (*)(int)>("mock_live")(what); }

private:
  template <class F> F fn(const char *name) const { return reinterpret_cast<F>(dlsym(handle_, name)); }
  void *handle_ = nullptr;
};

} // namespace tle::mock
