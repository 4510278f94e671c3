// The fake libcuda reads cubins as the driver does: __tle_metadata from the ELF symbol table, kernels and parameter sizes from it.
#include "tle/Runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <vector>

using namespace tle::rt;
using Catch::Matchers::Contains;

TEST_CASE("a tlec cubin loads on the fake driver with its metadata and launches", "[cubin]") {
  std::string path = std::string(TLE_EXAMPLES_BUILD_DIR) + "/vector_add.sm_90a.cubin";
  if (!std::filesystem::exists(path)) {
    WARN("no cubin (built without the CUDA toolkit): " << path);
    return;
  }
  Device dev(0);
  Module mod = Module::fromFile(dev, path);
  REQUIRE(mod.hasMetadata()); // it said "the module has no __tle_metadata" on cubins
  CHECK(mod.info().target == "sm_90a");
  Kernel k = mod.kernel("add_kernel");
  CHECK(k.info().params.size() == 4);
  std::vector<float> hx(3000), hy(3000);
  for (int i = 0; i < 3000; ++i) {
    hx[size_t(i)] = float(i);
    hy[size_t(i)] = 0.5f;
  }
  DeviceBuffer x = DeviceBuffer::fromHost(dev, hx), y = DeviceBuffer::fromHost(dev, hy), z(dev, 3000 * 4);
  Stream stream(dev);
  k.launch(3, stream, x, y, z, int32_t(3000)); // add_kernel is emulated: BLOCK = 1024
  std::vector<float> out = z.toHost<float>();
  CHECK(out[0] == 0.5f);
  CHECK(out[2999] == 2999.5f);
}

TEST_CASE("an ELF image without metadata loads without it, as on the driver", "[cubin]") {
  // A minimal 64-bit little-endian ELF header with no sections.
  std::vector<unsigned char> elf(64, 0);
  const unsigned char magic[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  std::copy(std::begin(magic), std::end(magic), elf.begin());
  Device dev(0);
  Module mod = Module::fromImage(dev, elf.data(), elf.size(), "empty.cubin");
  CHECK_FALSE(mod.hasMetadata());
  CHECK_THROWS_WITH(mod.kernel("k"), Contains("empty.cubin: the module has no __tle_metadata"));
}
