// Internal to the driver test double: what its sources share (kernel functions, streams, captured launches, the launch lock, fault injection).
#pragma once

#include "CudaDriver.h"

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace tle::mockcuda {

using namespace tle::rt::cu;

/// A kernel of a loaded fake module: its entry name and parameter sizes (bytes, in order).
struct MockFunction {
  std::string name;
  std::vector<size_t> paramSizes;
  bool int8Operands = false; ///< the module's metadata types the first param *i8 (matmul_tn)
  bool fp32Operands = false; ///< ... or *fp32 (matmul_tf32, matmul_tn_tf32)
  int maxDynamicShared = 48 * 1024;
  int nonPortableCluster = 0; ///< CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
};

/// A launch kept for later (a stream capture or a graph's kernel node), with copies of its
/// argument bytes.
struct CapturedLaunch {
  CUfunction function;
  unsigned grid[3], block[3], shared;
  std::vector<std::vector<unsigned char>> args;
};

/// A stream: its device (-1: a stream of the foreign context) and capture state
/// (CUstreamCaptureStatus), with the launches captured so far.
struct MockStream {
  int device = 0;
  int capture = 0;
  std::vector<CapturedLaunch> captured;
};

/// The MockStream behind `s`, or nullptr for the default-stream handles (0, 1, 2).
MockStream *mockStream(CUstream s);

/// Captures in progress (global mode: module loads and blocking memsets fail meanwhile).
extern std::atomic<int> activeCaptures;

/// Guards launches, captures and graphs.
extern std::mutex mutex;

/// The injected result for this call of entry point `call` (cuda.h name without _v2), or
/// CUDA_SUCCESS to go on normally; counts the call (mock_calls).
CUresult injected(const char *call);

/// Launches (records, and runs the host emulation of) `fn`, or records it on a capturing stream.
/// Takes `mutex`. CUDA_ERROR_INVALID_CONTEXT without a current context, CUDA_ERROR_INVALID_VALUE
/// for a bad grid, block or shared memory size.
CUresult doLaunch(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                  unsigned shared, CUstream stream, void **args);

} // namespace tle::mockcuda

/// Returns the injected result of `call` from the calling entry point, if any.
#define MOCK_INJECT(call)                                                                                            \
  do {                                                                                                               \
    if (CUresult injected_result = tle::mockcuda::injected(call))                                                   \
      return injected_result;                                                                                        \
  } while (0)
