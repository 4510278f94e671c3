// A tle-link shape dispatcher (softmax for n_cols <= 128, n_cols <= 1024 with n_rows % 4 == 0, or a fallback) chooses, explains and launches on the fake libcuda.
#include "softmax_shapes.h" // the C++ launcher; the C one is declared below (one header per unit)

#include "tle/Runtime/MockCuda.h"

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

/// The C launcher's graph-node function with the computed grid, and its load (softmax_shapes_c.h).
extern "C" tle_rt_status softmax_shapes_node(void *graph, void *const *deps, size_t num_deps, int device,
                                             uint64_t output_ptr, uint64_t input_ptr, int32_t input_row_stride,
                                             int32_t output_row_stride, int32_t n_rows, int32_t n_cols, void **node);
extern "C" tle_rt_status softmax_shapes_load(int device);

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

TEST_CASE("a shape dispatcher adds the chosen specialisation as a graph node", "[shapes][graph-node]") {
  tle::mock::Driver mock;
  Device dev(0);
  Stream stream(dev);
  std::vector<float> in(4 * 1024);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = float(i % 13) / 4.0f;
  DeviceBuffer x = DeviceBuffer::fromHost(dev, in), y(dev, in.size() * 4), z(dev, in.size() * 4);
  Graph g = Graph::create(dev);
  softmax_shapes_unload(); // an earlier test case may have loaded the kernels
  CHECK_THROWS_WITH(softmax_shapes_node(g, {}, y, x, 1024, 1024, 4, 700),
                    Contains("softmax_shapes (spec 1): kernel softmax_kernel is not loaded on device 0; call "
                             "softmax_shapes_load(device) before adding it to a graph"));
  softmax_shapes_load(dev);
  int launches = mock.lastLaunch().launches;
  GraphNode first = softmax_shapes_node(g, {}, y, x, 1024, 1024, 4, 700); // spec 1: 4 warps, a block per row
  const tle::mock::GraphNode &rec = mock.lastGraphNode();
  CHECK(rec.node == first);
  CHECK(std::string(rec.function) == "softmax_kernel");
  CHECK((rec.grid[0] == 4 && rec.grid[1] == 1 && rec.block[0] == 128));
  CHECK(rec.numArgs == 6);
  int adds = rec.adds;
  // No rows: an empty node after the first, and no kernel node.
  GraphNode empty = softmax_shapes_node(g, first, y, x, 1024, 1024, 0, 700);
  CHECK(mock.lastGraphNode().adds == adds);
  CHECK(mock.graphNodeCount(g.graph()) == 2);
  CHECK_THROWS_WITH(softmax_shapes_node(g, empty, y.ptr(4), x, 1024, 1024, 4, 100),
                    Contains("no specialisation accepts these arguments"));
  CHECK(mock.graphNodeCount(g.graph()) == 2);

  // The C launcher (a module of its own) after the empty node: z = softmax(y).
  void *node = nullptr, *dep = empty;
  CHECK(softmax_shapes_node(g.graph(), &dep, 1, 0, z.address(), y.address(), 1024, 1024, 4, 100, &node) ==
        TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(tle_launcher_last_error(), Contains("call softmax_shapes_load(0) before adding it to a graph"));
  REQUIRE(softmax_shapes_load(0) == TLE_RT_SUCCESS);
  REQUIRE(softmax_shapes_node(g.graph(), &dep, 1, 0, z.address(), y.address(), 1024, 1024, 4, 100, &node) ==
          TLE_RT_SUCCESS);
  CHECK(mock.lastGraphNode().node == node);
  CHECK(mock.lastGraphNode().deps[0] == empty);
  CHECK(mock.lastLaunch().launches == launches); // nothing ran yet

  g.instantiate();
  g.launch(stream);
  CHECK(mock.lastLaunch().launches == launches + 2);
  std::vector<float> out = z.toHost<float>();
  for (int r = 0; r < 4; ++r) {
    double sum = 0;
    for (int c = 0; c < 100; ++c)
      sum += out[size_t(r) * 1024 + size_t(c)];
    CHECK(std::fabs(sum - 1.0) < 1e-5);
  }
}
