// The runtime tests' access to what the driver test double exports besides the driver API
// (mock_calls, mock_last_tensor_map, ...: see runtime/mock/MockCudaDriver.cpp).
#pragma once

#include "mock/MockLaunch.h"
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

/// The test double's launch record (runtime/mock/MockLaunch.h, shared with the double).
using MockLaunch = ::MockLaunch;


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
