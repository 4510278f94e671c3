// The runtime tests' access to what the driver test double exports besides the driver API
// (mock_calls, mock_last_tensor_map, ...: see runtime/mock/MockCudaDriver.cpp).
#pragma once

#include "mock/MockTensorMap.h"

#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <string>
#include <vector>

extern std::string mockDriverPath;

namespace tle::test {

/// The address of `name` in the driver test double (the test fails when it is missing).
inline void *mockSymbol(const char *name) {
  void *h = dlopen(mockDriverPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h);
  void *s = dlsym(h, name);
  REQUIRE(s);
  return s;
}

/// The test double's function `name`, as a pointer of type Fn.
template <class Fn> Fn mockFn(const char *name) { return reinterpret_cast<Fn>(mockSymbol(name)); }

/// The head of the test double's record of a launch (MockLaunch in runtime/mock/MockCudaDriver.cpp),
/// up to its launch counter: the fields must stay in that struct's order.
struct MockLaunch {
  char function[128];
  unsigned grid[3], block[3], shared;
  void *stream;
  unsigned numArgs;
  unsigned char args[16][8];
  unsigned cluster[3];
  int cooperative;
  int viaEx;
  int launches;
};

/// The test double's last launch.
inline const MockLaunch &lastLaunch() { return *mockFn<const MockLaunch *(*)()>("mock_last_launch")(); }

/// The arguments of the test double's last cuTensorMapEncodeTiled call.
inline const MockTensorMapCall &lastTensorMapEncode() {
  return *mockFn<const MockTensorMapCall *(*)()>("mock_last_tensor_map")();
}

/// Argument `i` of the test double's last launch, whole (empty bytes when it has none).
inline std::vector<unsigned char> lastLaunchArg(int i) {
  auto fn = mockFn<long (*)(int, void *, size_t)>("mock_last_launch_arg");
  std::vector<unsigned char> buf(256);
  long n = fn(i, buf.data(), buf.size());
  REQUIRE(n >= 0);
  buf.resize(size_t(n));
  return buf;
}

} // namespace tle::test
