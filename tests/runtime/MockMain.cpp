// Catch2 entry point for the mock-driver tests: points libtle_rt at the fake libcuda (and the fake NCCL) next to this executable.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <string>

/// The fake driver's path (set before any libtle_rt call).
std::string mockDriverPath;
/// The fake NCCL's path (libtle-mock-nccl.so next to this executable).
std::string mockNcclPath;

int main(int argc, char **argv) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string exe = n > 0 ? std::string(buf, size_t(n)) : std::string(argv[0]);
  // TLE_MOCK_DRIVER_NAME picks another fake from the same directory (e.g. one without
  // cuTensorMapEncodeTiled).
  const char *name = std::getenv("TLE_MOCK_DRIVER_NAME");
  mockDriverPath = exe.substr(0, exe.rfind('/')) + "/" + (name && *name ? name : "libtle-mock-cuda.so");
  setenv("TLE_RT_CUDA_DRIVER", mockDriverPath.c_str(), 1);
  // The communicators' NCCL: the fake one, unless the test's environment names another library
  // (runtime.comm.no-nccl names one that does not exist).
  mockNcclPath = exe.substr(0, exe.rfind('/')) + "/libtle-mock-nccl.so";
  setenv("TLE_RT_NCCL", mockNcclPath.c_str(), 0);
  return Catch::Session().run(argc, argv);
}
