// Kernel launches added as nodes of CUDA graphs built node by node (C++ and C APIs, generated launchers' lazy kernels), against the fake libcuda.
#include "tle/Runtime/Launcher.h"
#include "tle/Runtime/MockCuda.h"
#include "tle/Runtime/Runtime.h"
#include "tle/Runtime/tle_rt.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

using namespace tle::rt;
using Catch::Matchers::Contains;

namespace {

// scale_kernel: out[i] = alpha * in[i], emulated by the fake driver.
const char *kModule = R"ptx(
.visible .entry scale_kernel(.param .u64 out, .param .u64 in, .param .u32 n, .param .f32 alpha) { ret; }
__tle_metadata_text = {"format": "tle-module", "version": 1, "target": "sm_90a", "kernels": [{"name": "scale_kernel", "num_warps": 4, "params": [{"name": "out", "type": "*fp32", "divisibility": 16}, {"name": "in", "type": "*fp32", "divisibility": 16}, {"name": "n", "type": "i32"}, {"name": "alpha", "type": "fp32"}]}]}
)ptx";

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float(i);
  return v;
}

/// Argument `i` of the last kernel node, as a T.
template <class T> T nodeArg(const tle::mock::Driver &mock, int i) {
  T v{};
  REQUIRE(mock.lastGraphNodeArg(i, &v, sizeof v) == long(sizeof v));
  return v;
}

} // namespace

TEST_CASE("a kernel node carries the launch's function, grid, block, shared bytes and arguments", "[graph-node]") {
  tle::mock::Driver mock;
  Device dev(0);
  Kernel k = Module::fromPtx(dev, kModule).kernel("scale_kernel");
  DeviceBuffer a = DeviceBuffer::fromHost(dev, iota(256)), b(dev, 256 * 4), c(dev, 256 * 4);
  b.fillBytes(0);
  c.fillBytes(0);
  Graph g = Graph::create(dev);
  REQUIRE(g.graph() != nullptr);
  CHECK(g.handle() == nullptr); // not instantiated yet
  int launches = mock.lastLaunch().launches;

  GraphNode first = k.addNode(2, g, {}, b, a, int32_t(256), 2.0f); // b = 2a
  const tle::mock::GraphNode &rec = mock.lastGraphNode();
  CHECK(rec.node == first);
  CHECK(rec.graph == g.graph());
  CHECK(std::string(rec.function) == "scale_kernel");
  CHECK((rec.grid[0] == 2 && rec.grid[1] == 1 && rec.grid[2] == 1));
  CHECK((rec.block[0] == 128 && rec.block[1] == 1 && rec.block[2] == 1));
  CHECK(rec.shared == 0);
  CHECK(rec.numArgs == 4);
  CHECK(rec.numDeps == 0);
  CHECK(nodeArg<uint64_t>(mock, 0) == b.address());
  CHECK(nodeArg<uint64_t>(mock, 1) == a.address());
  CHECK(nodeArg<int32_t>(mock, 2) == 256);
  CHECK(nodeArg<float>(mock, 3) == 2.0f);

  // c = 3b after the first node, through the raw CUgraph and void * pointers.
  GraphNode second = k.addNode(Grid(2, 1, 1), g.graph(), first, reinterpret_cast<void *>(c.address()),
                               reinterpret_cast<const void *>(b.address()), int32_t(256), 3.0f);
  CHECK(mock.lastGraphNode().node == second);
  CHECK(mock.lastGraphNode().numDeps == 1);
  CHECK(mock.lastGraphNode().deps[0] == first);
  CHECK(nodeArg<float>(mock, 3) == 3.0f);

  // A node after both, with pre-packed arguments: the values are copied when the node is added.
  uint64_t cp = c.address();
  int32_t n = 256;
  float alpha = 0.5f;
  void *args[] = {&cp, &cp, &n, &alpha};
  GraphNode third = k.addNodeRaw(2, g, {first, second}, args, 4);
  alpha = 100.0f;
  n = 0;
  CHECK(mock.lastGraphNode().numDeps == 2);
  CHECK((mock.lastGraphNode().deps[0] == first && mock.lastGraphNode().deps[1] == second));
  CHECK(nodeArg<float>(mock, 3) == 0.5f);
  CHECK(third != nullptr);
  CHECK(mock.graphNodeCount(g.graph()) == 3);
  CHECK(mock.lastLaunch().launches == launches); // nothing ran while the graph was built

  Stream stream(dev);
  CHECK_THROWS_WITH(g.launch(stream), Contains("not instantiated; call instantiate()"));
  g.instantiate();
  REQUIRE(g.handle() != nullptr);
  g.launch(stream);
  CHECK(mock.lastLaunch().launches == launches + 3);
  std::vector<float> out = c.toHost<float>();
  CHECK(out[255] == 765.0f); // 0.5 * 3 * 2 * 255: the copied alpha, not the later 100
  a.copyFromHost(std::vector<float>(256, 1.0f));
  g.launch(stream); // a replay reads the buffers' current contents
  CHECK(c.toHost<float>()[7] == 3.0f);

  SECTION("nodes added after instantiate() join the graph at the next instantiate()") {
    k.addNode(1, g, third, c, c, int32_t(16), 2.0f);
    g.launch(stream); // the executable instantiated before the node was added
    CHECK(mock.lastLaunch().launches == launches + 9);
    g.instantiate();
    g.launch(stream);
    CHECK(mock.lastLaunch().launches == launches + 13);
    CHECK(c.toHost<float>()[0] == 6.0f);
  }
}

TEST_CASE("a kernel node has the kernel's block, shared memory and cluster or cooperative attributes", "[graph-node]") {
  tle::mock::Driver mock;
  Device dev(0);
  Module mod = Module::fromPtx(dev, kModule);
  KernelInfo info = mod.info().kernels[0];
  info.block = {64, 2, 1};
  info.sharedBytes = 4096;
  info.cluster = {2, 1, 1};
  Kernel k = mod.kernel("scale_kernel", info);
  DeviceBuffer buf(dev, 1024);
  Graph g = Graph::create(dev);
  k.addNode(4, g, {}, buf, buf, int32_t(0), 1.0f);
  const tle::mock::GraphNode &rec = mock.lastGraphNode();
  CHECK((rec.block[0] == 64 && rec.block[1] == 2 && rec.block[2] == 1));
  CHECK(rec.shared == 4096);
  CHECK((rec.cluster[0] == 2 && rec.cluster[1] == 1 && rec.cluster[2] == 1));
  CHECK(rec.cooperative == 0);
  CHECK_THROWS_WITH(k.addNode(3, g, {}, buf, buf, int32_t(0), 1.0f),
                    Contains("grid (3, 1, 1) is not a multiple of the cluster (2, 1, 1)"));

  info.cluster = {1, 1, 1};
  info.cooperative = true;
  Kernel coop = mod.kernel("scale_kernel", info);
  coop.addNode(4, g, {}, buf, buf, int32_t(0), 1.0f);
  CHECK(mock.lastGraphNode().cooperative == 1);
  CHECK((mock.lastGraphNode().cluster[0] == 1 && mock.lastGraphNode().cluster[1] == 1));
}

TEST_CASE("a kernel node is checked as a launch is, and the driver's refusals are errors", "[graph-node]") {
  tle::mock::Driver mock;
  Device dev(0);
  Kernel k = Module::fromPtx(dev, kModule).kernel("scale_kernel");
  DeviceBuffer buf(dev, 1024);
  Graph g = Graph::create(dev);
  GraphNode ok = k.addNode(1, g, {}, buf, buf, int32_t(4), 1.0f);
  int adds = mock.lastGraphNode().adds;

  CHECK_THROWS_WITH(k.addNode(1, g, ok, buf, buf, int64_t(4), 1.0f),
                    Contains("argument 2 ('n') has parameter type i32"));
  CHECK_THROWS_AS(k.addNode(1, g, ok, buf, buf, int32_t(4)), ArgumentError);
  CHECK_THROWS_WITH(k.addNode(1, g, ok, buf.ptr(4), buf, int32_t(4), 1.0f), Contains("is declared *fp32:16"));
  CHECK_THROWS_WITH(k.addNode(Grid(0, 1, 1), g, ok, buf, buf, int32_t(4), 1.0f),
                    Contains("grid (0, 1, 1) is invalid"));
  CHECK_THROWS_WITH(k.addNode(1, g, GraphNode(nullptr), buf, buf, int32_t(4), 1.0f),
                    Contains("scale_kernel: dependency 0 is a null node"));
  CHECK_THROWS_WITH(k.addNode(1, g, GraphDeps(nullptr, 2), buf, buf, int32_t(4), 1.0f),
                    Contains("the dependency array is null"));
  Graph empty;
  CHECK_THROWS_WITH(k.addNode(1, empty, {}, buf, buf, int32_t(4), 1.0f), Contains("the graph is null"));
  CHECK_THROWS_AS(empty.instantiate(), ArgumentError);
  int32_t n = 4;
  float alpha = 1.0f;
  uint64_t p = buf.address();
  void *withNull[] = {&p, nullptr, &n, &alpha};
  CHECK_THROWS_WITH(k.addNodeRaw(1, g, {}, withNull, 4), Contains("argument 1 ('in') is a null pointer"));
  CHECK(mock.lastGraphNode().adds == adds); // nothing reached the driver

  // A dependency that is not a node of this graph: the driver refuses it.
  Graph other = Graph::create(dev);
  CHECK_THROWS_WITH(k.addNode(1, other, ok, buf, buf, int32_t(4), 1.0f),
                    Contains("cuGraphAddKernelNode(scale_kernel) failed: CUDA_ERROR_INVALID_VALUE") &&
                        Contains("1 dependencies"));
  mock.fail("cuGraphAddKernelNode", 2);
  CHECK_THROWS_AS(k.addNode(1, g, ok, buf, buf, int32_t(4), 1.0f), DriverError);
  CHECK(mock.graphNodeCount(g.graph()) == 1);
}

TEST_CASE("the C API adds kernel and empty nodes with tle_rt_launch's checks", "[graph-node]") {
  tle::mock::Driver mock;
  Device dev(0);
  tle_rt_module m = nullptr;
  tle_rt_kernel k = nullptr;
  REQUIRE(tle_rt_module_load_data(0, kModule, 0, &m) == TLE_RT_SUCCESS);
  REQUIRE(tle_rt_module_get_kernel(m, "scale_kernel", &k) == TLE_RT_SUCCESS);
  DeviceBuffer a = DeviceBuffer::fromHost(dev, iota(64)), b(dev, 64 * 4);
  Graph g = Graph::create(dev);
  void *graph = g.graph();
  uint64_t pa = a.address(), pb = b.address();
  int32_t n = 64;
  float alpha = 4.0f;
  void *args[] = {&pb, &pa, &n, &alpha};
  void *first = nullptr, *joined = nullptr, *second = nullptr;
  REQUIRE(tle_rt_graph_add_kernel_node(k, graph, nullptr, 0, 1, 1, 1, args, 4, &first) == TLE_RT_SUCCESS);
  CHECK(mock.lastGraphNode().node == first);
  CHECK(nodeArg<float>(mock, 3) == 4.0f);
  REQUIRE(tle_rt_graph_add_empty_node(graph, &first, 1, &joined) == TLE_RT_SUCCESS);
  CHECK(joined != nullptr);
  alpha = 0.25f;
  void *args2[] = {&pb, &pb, &n, &alpha};
  REQUIRE(tle_rt_graph_add_kernel_node(k, graph, &joined, 1, 1, 1, 1, args2, 4, &second) == TLE_RT_SUCCESS);
  CHECK(mock.lastGraphNode().deps[0] == joined);
  CHECK(mock.graphNodeCount(graph) == 3);
  g.instantiate();
  Stream stream(dev);
  g.launch(stream);
  CHECK(b.toHost<float>()[9] == 9.0f); // 0.25 * 4 * 9

  void *none = nullptr;
  CHECK(tle_rt_graph_add_kernel_node(k, graph, nullptr, 0, 1, 1, 1, args, 3, &none) == TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(tle_rt_last_error(), Contains("scale_kernel expects 4 arguments"));
  CHECK(tle_rt_graph_add_kernel_node(k, nullptr, nullptr, 0, 1, 1, 1, args, 4, &none) ==
        TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(tle_rt_last_error(), Contains("the graph is null"));
  CHECK(tle_rt_graph_add_kernel_node(k, graph, nullptr, 0, 1, 1, 1, args, 4, nullptr) ==
        TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK(tle_rt_graph_add_kernel_node(k, graph, nullptr, 0, 0, 1, 1, args, 4, &none) == TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(tle_rt_last_error(), Contains("grid (0, 1, 1) is invalid"));
  CHECK(tle_rt_graph_add_empty_node(graph, nullptr, 1, &none) == TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK(none == nullptr);
  CHECK(mock.graphNodeCount(graph) == 3);
  tle_rt_kernel_release(k);
  tle_rt_module_unload(m);
}

TEST_CASE("generated launchers add a node only of a kernel already loaded, naming the load function", "[graph-node]") {
  tle::mock::Driver mock;
  Device dev(0);
  std::string ptx = kModule;
  const tle_launcher_image images[] = {
      {"sm_90a", reinterpret_cast<const unsigned char *>(ptx.c_str()), ptx.size() + 1, 1}};
  static tle::launcher::LazyKernel lk("scale", "scale_kernel", images, 1, "scale_load");
  static tle_launcher_lazy_kernel lazy = TLE_LAUNCHER_LAZY_KERNEL_INIT("scale_kernel", nullptr, 0);
  lazy.images = images;
  lazy.num_images = 1;
  int loads = mock.calls("cuModuleLoadDataEx");
  CHECK_THROWS_WITH(lk.loaded(dev), "scale: kernel scale_kernel is not loaded on device 0; call scale_load(device) "
                                    "before adding it to a graph (adding a graph node never loads a module)");
  tle_rt_kernel ck = nullptr;
  CHECK(tle_launcher_get_loaded_kernel(&lazy, "scale", "scale_load", 0, &ck) == TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(tle_launcher_last_error(), Contains("call scale_load(0) before adding it to a graph"));
  CHECK(mock.calls("cuModuleLoadDataEx") == loads); // nothing was loaded

  lk.get(dev); // what scale_load does
  REQUIRE(tle_launcher_get_kernel(&lazy, "scale", 0, &ck) == TLE_RT_SUCCESS);
  CHECK(&lk.loaded(dev) == &lk.get(dev));
  REQUIRE(tle_launcher_get_loaded_kernel(&lazy, "scale", "scale_load", 0, &ck) == TLE_RT_SUCCESS);
  lk.unload();
  tle_launcher_unload(&lazy);
}
