// Loads libnccl.so.2 with dlopen on first use, resolves the NCCL entry points and words NCCL's failures.
#include "Nccl.h"

#include "tle/Runtime/Communicator.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <type_traits>

namespace tle::rt::nccl {
namespace {

struct Loaded {
  Api api{};
  bool ok = false;
  std::string error; // the NoNcclError message when !ok
};

/// The library to open: $TLE_RT_NCCL, else the soname of NCCL 2.
std::string libraryPath() {
  const char *env = std::getenv("TLE_RT_NCCL");
  return env && *env ? env : "libnccl.so.2";
}

/// Resolves every entry point of Api from `lib`; returns the names it lacks, comma-separated.
std::string resolveAll(void *lib, Api &a) {
  std::string missing;
  auto need = [&](auto &slot, const char *name) {
    if (void *sym = dlsym(lib, name)) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(sym);
      return;
    }
    missing += missing.empty() ? "" : ", ";
    missing += name;
  };
  need(a.ncclGetVersion, "ncclGetVersion");
  need(a.ncclGetUniqueId, "ncclGetUniqueId");
  need(a.ncclCommInitRank, "ncclCommInitRank");
  need(a.ncclCommInitAll, "ncclCommInitAll");
  need(a.ncclCommDestroy, "ncclCommDestroy");
  need(a.ncclCommCount, "ncclCommCount");
  need(a.ncclCommUserRank, "ncclCommUserRank");
  need(a.ncclCommCuDevice, "ncclCommCuDevice");
  need(a.ncclGetErrorString, "ncclGetErrorString");
  need(a.ncclGetLastError, "ncclGetLastError");
  need(a.ncclGroupStart, "ncclGroupStart");
  need(a.ncclGroupEnd, "ncclGroupEnd");
  need(a.ncclMemAlloc, "ncclMemAlloc");
  need(a.ncclMemFree, "ncclMemFree");
  need(a.ncclCommWindowRegister, "ncclCommWindowRegister");
  need(a.ncclCommWindowDeregister, "ncclCommWindowDeregister");
  return missing;
}

void load(Loaded &out) {
  std::string path = libraryPath();
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    out.error = "libtle_rt: NCCL was not found: cannot load " + path + " (" +
                (why ? why : "unknown dlopen error") +
                "); install NCCL 2.27 or newer (the CUDA toolkit's NCCL) or set TLE_RT_NCCL to "
                "the library's path";
    return;
  }
  std::string missing = resolveAll(lib, out.api);
  if (!missing.empty()) {
    int version = 0;
    if (out.api.ncclGetVersion)
      out.api.ncclGetVersion(&version);
    out.error = "libtle_rt: the NCCL library " + path +
                (version ? " (version code " + std::to_string(version) + ")" : std::string()) +
                " lacks " + missing + "; libtle_rt's communicators need NCCL 2.27 or newer";
    return;
  }
  out.ok = true;
}

// Never destroyed: communicators released during static destruction still call into NCCL.
Loaded &loaded() {
  static Loaded *state = new Loaded;
  static std::once_flag once;
  std::call_once(once, [] { load(*state); });
  return *state;
}

const char *resultName(ncclResult_t r) {
  switch (r) {
  case ncclSuccess: return "ncclSuccess";
  case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
  case ncclSystemError: return "ncclSystemError";
  case ncclInternalError: return "ncclInternalError";
  case ncclInvalidArgument: return "ncclInvalidArgument";
  case ncclInvalidUsage: return "ncclInvalidUsage";
  case ncclRemoteError: return "ncclRemoteError";
  case ncclInProgress: return "ncclInProgress";
  default: return nullptr;
  }
}

} // namespace

const Api &api() {
  Loaded &l = loaded();
  if (!l.ok)
    throw NoNcclError(l.error);
  return l.api;
}

std::string describe(ncclResult_t result) {
  const char *name = resultName(result);
  std::string s = name ? name : "ncclResult_t " + std::to_string(result);
  const Api &a = loaded().api;
  const char *text = a.ncclGetErrorString ? a.ncclGetErrorString(result) : nullptr;
  s += " (";
  s += text && *text ? text : "unknown error";
  s += ")";
  return s;
}

void fail(std::string_view call, ncclResult_t result, ncclComm_t comm, std::string_view detail) {
  std::string msg(call);
  msg += " failed: ";
  msg += describe(result);
  if (!detail.empty()) {
    msg += ": ";
    msg += detail;
  }
  const Api &a = loaded().api;
  const char *last = a.ncclGetLastError ? a.ncclGetLastError(comm) : nullptr;
  if (last && *last) {
    msg += "; NCCL's last error: ";
    msg += last;
  }
  throw NcclError(std::string(call), result, msg);
}

} // namespace tle::rt::nccl
