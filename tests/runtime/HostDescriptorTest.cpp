// A kernel taking host tensor descriptors (signature tensordesc<...>) launched through its generated C++ launcher on the fake libcuda: the launcher takes each descriptor's base, shape and strides, and libtle_rt builds the CUtensorMaps from them and passes them by value.
#define TLE_LAUNCHER_IMPLEMENTATION
#include "host_desc_matmul.h" // tlec --emit-header of tests/corpus/seqkit/ops/descriptors.py's desc_matmul_kernel

#include "tle/Runtime/MockCuda.h"

#include "MockSymbols.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

using namespace tle::rt;
using Catch::Matchers::Contains;

namespace {

/// The first 8 bytes of argument `i` of the last launch (a CUtensorMap starts with its address).
uint64_t launchArgWord(int i) {
  std::vector<unsigned char> arg = tle::test::lastLaunchArg(i);
  REQUIRE(arg.size() == 128);
  uint64_t w = 0;
  std::memcpy(&w, arg.data(), sizeof w);
  return w;
}

} // namespace

TEST_CASE("host tensor descriptors: the launcher's parts become CUtensorMaps at each launch", "[hostdesc]") {
  tle::mock::Driver mock;
  Device dev(0);
  Stream stream(dev);
  const int32_t M = 256, N = 384, K = 512;
  DeviceBuffer a(dev, size_t(M) * K * 2), b(dev, size_t(K) * N * 2), c(dev, size_t(M) * N * 2);
  const int encodes = mock.calls("cuTensorMapEncodeTiled");
  // C = A @ B, row-major: A is M x K (row stride K), B is K x N, C is M x N.
  host_desc_matmul(stream, a, M, K, K, b, K, N, N, c, M, N, N, K);
  CHECK(mock.calls("cuTensorMapEncodeTiled") == encodes + 3); // a, b, c
  const tle::mock::Launch &l = mock.lastLaunch();
  CHECK(std::string(l.function) == "desc_matmul_kernel");
  CHECK((l.grid[0] == 2 && l.grid[1] == 3 && l.block[0] == 256)); // cdiv(M, 128) x cdiv(N, 128), 8 warps
  CHECK(l.numArgs == 16); // 13 parameters, then the three maps
  // The last map built is C's: fp16 (6), innermost dimension first, strides in bytes, box [128, 64].
  const MockTensorMapCall &e = tle::test::lastTensorMapEncode();
  CHECK(reinterpret_cast<uint64_t>(e.globalAddress) == c.address());
  CHECK(e.dataType == 6);
  CHECK(e.rank == 2);
  CHECK((e.globalDim[0] == uint64_t(N) && e.globalDim[1] == uint64_t(M)));
  CHECK(e.globalStrides[0] == uint64_t(N) * 2);
  CHECK((e.boxDim[0] == 64 && e.boxDim[1] == 128));
  CHECK(e.swizzle == 3); // 128-byte swizzle
  CHECK(launchArgWord(13) == a.address());
  CHECK(launchArgWord(14) == b.address());
  CHECK(launchArgWord(15) == c.address());

  // The next launch builds them again from its own arguments (a view of C's second row block).
  host_desc_matmul(stream, a, M, K, K, b, K, N, N, c.ptr(size_t(128) * N * 2), 128, N, N, K);
  CHECK(mock.calls("cuTensorMapEncodeTiled") == encodes + 6);
  CHECK(reinterpret_cast<uint64_t>(tle::test::lastTensorMapEncode().globalAddress) == c.address() + uint64_t(128) * N * 2);
  CHECK(tle::test::lastTensorMapEncode().globalDim[1] == 128);

  // A stride TMA cannot take (not a multiple of 16 bytes) is refused before the launch, naming the
  // descriptor; the launcher's own requirement (stride0 % 16 == 0, elements) comes first.
  CHECK_THROWS_WITH(host_desc_matmul(stream, a, M, K, K + 8, b, K, N, N, c, M, N, N, K),
                    Contains("a_desc_stride0"));
}
