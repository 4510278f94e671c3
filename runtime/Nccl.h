// The subset of NCCL libtle_rt uses, declared here and resolved from libnccl.so.2 at run time.
//
// Types, values and signatures follow nccl.h of NCCL 2.28 (the CUDA toolkit's NCCL); the window
// entry points (ncclCommWindowRegister / Deregister) appeared in NCCL 2.27, the oldest release
// libtle_rt accepts. Nothing here needs NCCL at build time: the library is opened with dlopen the
// first time a communicator is made (`TLE_RT_NCCL` names another library, e.g. the test double
// runtime/mock/MockNccl.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tle::rt::nccl {

/// ncclResult_t (a C enum in nccl.h).
using ncclResult_t = int;
struct ncclComm;
/// A communicator handle.
using ncclComm_t = ncclComm *;
/// NCCL's window record in device memory (nccl_device/impl/core__types.h); opaque to the host.
struct ncclWindow_vidmem;
/// A window handle: the device address of the window record.
using ncclWindow_t = ncclWindow_vidmem *;

/// ncclUniqueId: 128 opaque bytes, passed by value to ncclCommInitRank.
struct ncclUniqueId {
  char internal[128];
};
static_assert(sizeof(ncclUniqueId) == 128, "ncclUniqueId is NCCL_UNIQUE_ID_BYTES bytes");

// ncclResult_t values.
enum : int {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
};

/// Window registration flag: a window every rank registers collectively, with the same size, so
/// that kernels reach each peer's copy through the window record (nccl.h's value).
constexpr int NCCL_WIN_COLL_SYMMETRIC = 0x01;

/// The resolved NCCL entry points, named after the nccl.h function each one is.
struct Api {
  ncclResult_t (*ncclGetVersion)(int *);
  ncclResult_t (*ncclGetUniqueId)(ncclUniqueId *);
  ncclResult_t (*ncclCommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
  ncclResult_t (*ncclCommInitAll)(ncclComm_t *, int, const int *);
  ncclResult_t (*ncclCommDestroy)(ncclComm_t);
  ncclResult_t (*ncclCommCount)(ncclComm_t, int *);
  ncclResult_t (*ncclCommUserRank)(ncclComm_t, int *);
  ncclResult_t (*ncclCommCuDevice)(ncclComm_t, int *);
  const char *(*ncclGetErrorString)(ncclResult_t);
  const char *(*ncclGetLastError)(ncclComm_t);
  ncclResult_t (*ncclGroupStart)();
  ncclResult_t (*ncclGroupEnd)();
  ncclResult_t (*ncclMemAlloc)(void **, size_t);
  ncclResult_t (*ncclMemFree)(void *);
  ncclResult_t (*ncclCommWindowRegister)(ncclComm_t, void *, size_t, ncclWindow_t *, int);
  ncclResult_t (*ncclCommWindowDeregister)(ncclComm_t, ncclWindow_t);
};

/// The NCCL entry points, loading libnccl.so.2 (or $TLE_RT_NCCL) on first use, once per process.
/// Throws NoNcclError with the cause (the same one on every call) when that fails.
const Api &api();

/// "ncclInternalError (internal error - ...)" for `result`: its enum name and NCCL's string.
std::string describe(ncclResult_t result);

/// Throws NcclError "<call> failed: <describe(result)>: <detail>", followed by NCCL's last error
/// message (ncclGetLastError(comm)) when it has one.
[[noreturn]] void fail(std::string_view call, ncclResult_t result, ncclComm_t comm,
                       std::string_view detail = {});

/// Throws via fail() unless `result` is ncclSuccess.
inline void check(ncclResult_t result, std::string_view call, ncclComm_t comm,
                  std::string_view detail = {}) {
  if (result != ncclSuccess)
    fail(call, result, comm, detail);
}

} // namespace tle::rt::nccl
