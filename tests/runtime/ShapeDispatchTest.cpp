// A tle-link shape dispatcher (softmax for n_cols <= 128, n_cols <= 1024 with n_rows % 4 == 0, or a fallback) chooses, explains and launches on the fake libcuda.
#include "softmax_shapes.h" // the C++ launcher; the C one is declared below (one header per unit)

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace tle::rt;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

extern std::string mockDriverPath;

/// The C launcher's explaining select (softmax_shapes_c.h).
extern "C" int softmax_shapes_select_why(char *why, size_t cap, uint64_t output_ptr, uint64_t input_ptr,
                                         int32_t input_row_stride, int32_t output_row_stride, int32_t n_rows,
                                         int32_t n_cols);

namespace {

/// The block size of the last launch the fake driver recorded (mock_last_launch: after the
/// function name come grid[3] and block[3]).
unsigned lastBlock() {
  void *h = dlopen(mockDriverPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  auto fn = reinterpret_cast<const char *(*)()>(dlsym(h, "mock_last_launch"));
  const char *launch = fn();
  unsigned block;
  std::memcpy(&block, launch + 128 + 3 * sizeof(unsigned), sizeof block);
  return block;
}

} // namespace

TEST_CASE("a shape dispatcher chooses by range predicates and says why", "[shapes]") {
  DevicePtr p{0x10000};
  std::string why;
  CHECK(softmax_shapes_select(p, p, 128, 128, 4, 100) == 0);
  CHECK(softmax_shapes_select(p, p, 128, 128, 4, 100, &why) == 0);
  CHECK_THAT(why, StartsWith("softmax_shapes: spec 0 [") && Contains("when n_cols <= 128] chosen"));

  CHECK(softmax_shapes_select(p, p, 1024, 1024, 8, 500, &why) == 1);
  CHECK_THAT(why, Contains("spec 1 [") && Contains("] chosen; spec 0 [") &&
                      Contains("rejected: 'n_cols' (= 500) breaks n_cols <= 128"));

  CHECK(softmax_shapes_select(p, p, 1024, 1024, 3, 500, &why) == 2);
  CHECK_THAT(why, Contains("spec 2 [") && Contains("'n_rows' (= 3) breaks n_rows % 4 == 0"));

  CHECK(softmax_shapes_select(p, p, 128, 128, -4, 100) == 0); // -4 % 4 == 0 and 100 <= 128
  CHECK(softmax_shapes_select(DevicePtr{0x10004}, p, 1, 1, 1, 1, &why) == -1);
  CHECK_THAT(why, Contains("no specialisation accepts these arguments") &&
                      Contains("'output_ptr' (= 0x10004) is not 16-byte aligned"));

  char buf[1024];
  CHECK(softmax_shapes_select_why(buf, sizeof buf, 0x10000, 0x10000, 1024, 1024, 8, 1000) == 1);
  CHECK_THAT(std::string(buf), Contains("'n_cols' (= 1000) breaks n_cols <= 128"));
  CHECK(softmax_shapes_select_why(buf, sizeof buf, 0x10000, 0x10000, 1024, 1024, 6, 1000) == 2); // 6 % 4 != 0
  CHECK_THAT(std::string(buf), Contains("'n_rows' (= 6) breaks n_rows % 4 == 0"));
}

TEST_CASE("a shape dispatcher launches the chosen specialisation", "[shapes]") {
  Device dev(0);
  Stream stream(dev);
  for (int cols : {100, 700}) {
    for (int rows : {4, 3}) {
      std::vector<float> in(size_t(rows) * 1024);
      for (size_t i = 0; i < in.size(); ++i)
        in[i] = float(i % 17) / 8.0f;
      DeviceBuffer x = DeviceBuffer::fromHost(dev, in), y(dev, in.size() * 4);
      softmax_shapes(stream, y, x, 1024, 1024, rows, cols);
      int spec = softmax_shapes_select(y, x, 1024, 1024, rows, cols);
      CHECK(lastBlock() == (spec == 2 ? 256u : 128u)); // spec 2 has 8 warps
      std::vector<float> out = y.toHost<float>();
      double sum = 0;
      for (int c = 0; c < cols; ++c)
        sum += out[size_t(c)];
      CHECK(std::fabs(sum - 1.0) < 1e-5);
    }
  }
  // A direct call of a specialisation checks its predicates too.
  DeviceBuffer b(dev, 4096 * 4);
  CHECK_THROWS_WITH(softmax_shapes_spec0(stream, b, b, 1024, 1024, 1, 500),
                    StartsWith("softmax_shapes: argument 'n_cols' (= 500) breaks n_cols <= 128 (required by spec 0"));
}
