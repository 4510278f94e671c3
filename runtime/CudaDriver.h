// The subset of the CUDA driver API libtle_rt uses, declared here and resolved from libcuda.so.1 at run time.
//
// Types, enum values and function signatures follow cuda.h of CUDA 12.x and 13.0 (the driver
// ABI is stable across them). Entry points that cuda.h maps to versioned names (cuMemAlloc ->
// cuMemAlloc_v2, ...) are resolved by their versioned export names, listed in CudaDriver.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// The stream, graph and graph node objects at global scope, as cuda.h and the CUDA runtime declare
// them (Runtime.h too).
struct CUstream_st;
struct CUgraph_st;
struct CUgraphNode_st;

namespace tle::rt::cu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUevent_st;
struct CUgraphExec_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = ::CUstream_st *;
using CUevent = CUevent_st *;
using CUgraph = ::CUgraph_st *;
using CUgraphNode = ::CUgraphNode_st *;
using CUgraphExec = CUgraphExec_st *;

// CUresult values referred to by name.
enum : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_NOT_FOUND = 500,
};

// CUdevice_attribute
enum : int {
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

// CUfunction_attribute
enum : int {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
};

// CUjit_option
enum : int {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
};

// CUstreamCaptureStatus and CUstreamCaptureMode.
enum : int {
  CU_STREAM_CAPTURE_STATUS_NONE = 0,
  CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
  CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
};

// The special stream handles of cuda.h: the legacy and the per-thread default stream.
inline CUstream const CU_STREAM_LEGACY = reinterpret_cast<CUstream>(0x1);
inline CUstream const CU_STREAM_PER_THREAD = reinterpret_cast<CUstream>(0x2);

// Stream and event creation flags.
enum : unsigned { CU_STREAM_DEFAULT = 0, CU_EVENT_DEFAULT = 0 };

// CUlaunchAttributeID
enum : int { CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4 };

/// CUlaunchAttributeValue: a 64-byte union; only the members libtle_rt sets are spelled out.
union alignas(8) CUlaunchAttributeValue {
  char pad[64];
  int cooperative;
  struct {
    unsigned x, y, z;
  } clusterDim;
};

/// CUlaunchAttribute: the id, padded to 8 bytes, then the value.
struct CUlaunchAttribute {
  int id;
  char pad[8 - sizeof(int)];
  CUlaunchAttributeValue value;
};

static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute layout follows cuda.h");

/// CUlaunchConfig (cuLaunchKernelEx).
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};
static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig layout follows cuda.h");

/// CUDA_KERNEL_NODE_PARAMS (_v2, CUDA 12.0+: cuGraphAddKernelNode_v2). `kern` and `ctx` are
/// ignored when `func` is set, as libtle_rt always sets it.
struct CUDA_KERNEL_NODE_PARAMS {
  CUfunction func;
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  void **kernelParams;
  void **extra;
  void *kern; // CUkernel
  CUcontext ctx;
};
static_assert(sizeof(CUDA_KERNEL_NODE_PARAMS) == 72, "CUDA_KERNEL_NODE_PARAMS_v2 layout follows cuda.h");

/// CUtensorMap: the 128-byte opaque TMA descriptor (cuda.h: 16 cuuint64_t; the encode call
/// requires a 64-byte aligned address).
struct alignas(64) CUtensorMap {
  uint64_t opaque[16];
};
static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap layout follows cuda.h");

/// cuTensorMapEncodeTiled's signature (CUDA 12.0+). The enum parameters (CUtensorMapDataType,
/// CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill)
/// are C enums, passed as int.
using CuTensorMapEncodeTiledFn = CUresult (*)(CUtensorMap *tensorMap, int tensorDataType,
                                              unsigned tensorRank, void *globalAddress,
                                              const uint64_t *globalDim,  // cuuint64_t
                                              const uint64_t *globalStrides,
                                              const uint32_t *boxDim,     // cuuint32_t
                                              const uint32_t *elementStrides,
                                              int interleave, int swizzle, int l2Promotion,
                                              int oobFill);

/// The resolved driver entry points. Members named after the cuda.h API name they implement.
struct Api {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);                     // _v2
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);                      // _v2
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuCtxGetDevice)(CUdevice *);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule, const char *); // _v2
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *); // optional (CUDA 12.4+)
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **); // optional
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t); // optional
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);                        // _v2
  CUresult (*cuMemFree)(CUdeviceptr);                                   // _v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);          // _v2
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);                // _v2
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);           // _v2
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream); // _v2
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);           // _v2
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t);               // _v2
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);                                // _v2
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamGetCtx)(CUstream, CUcontext *);
  CUresult (*cuStreamIsCapturing)(CUstream, int *); // CUstreamCaptureStatus
  // Optional (graphs): stream capture and replay.
  CUresult (*cuStreamBeginCapture)(CUstream, int);  // _v2; CUstreamCaptureMode
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
  // Optional (explicit graphs): graphs built node by node.
  CUresult (*cuGraphCreate)(CUgraph *, unsigned);
  CUresult (*cuGraphAddKernelNode)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                                   const CUDA_KERNEL_NODE_PARAMS *); // _v2
  CUresult (*cuGraphAddEmptyNode)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t);
  CUresult (*cuGraphKernelNodeSetAttribute)(CUgraphNode, int, const CUlaunchAttributeValue *);
  CUresult (*cuGraphDestroyNode)(CUgraphNode);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);                                  // _v2
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent); // _v2 where the driver has it
  CuTensorMapEncodeTiledFn cuTensorMapEncodeTiled;             // optional (CUDA 12.0+)
  CUresult (*cuPointerGetAttribute)(void *, int, CUdeviceptr);  // optional; CUpointer_attribute
};

/// The driver entry points, loading libcuda.so.1 (or $TLE_RT_CUDA_DRIVER) and calling cuInit(0)
/// on first use, once per process. Throws NoDriverError with the cause (the same one on every
/// call) when that fails.
const Api &api();

/// "CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)" for `result`.
std::string describe(CUresult result);

/// Throws DriverError "<call> failed: <describe(result)>" followed by `detail` when non-empty.
[[noreturn]] void fail(std::string_view call, CUresult result, std::string_view detail = {});

/// Throws via fail() unless `result` is CUDA_SUCCESS.
inline void check(CUresult result, std::string_view call) {
  if (result != CUDA_SUCCESS)
    fail(call, result);
}

} // namespace tle::rt::cu
