// GPU test of CUDA Graphs: a three-kernel step through generated launchers (raw cudaStream_t and void * included), captured or built node by node, replayed and checked.
//
// Usage: tle-graph-tests [--part capture|nodes|all] [--steps N]. The step is z = x + y, w = z + z
// (graph_add, the launcher of examples/vector_add.tle), out = softmax(w) row by row
// (graph_softmax, examples/softmax.tle). Part "capture" checks: the eager step against a CPU
// reference; that a launch whose kernel is not loaded yet is refused inside a capture (naming
// graph_add_load) and leaves the capture usable; that the captured graph, replayed after new
// inputs are copied in, gives the reference each time; and times N eager steps against N replays.
// Part "nodes" builds the step as explicit kernel nodes (Graph::create, the launchers' NAME_node,
// Kernel::addNode) with their dependencies, beside an independent node v = y + y and an empty node
// joining both branches; checks that a node of a kernel not loaded yet is refused naming
// graph_add_load, that an empty grid adds an empty node, and that every replay on new inputs gives
// exactly the eager launches' results; and times it. Exit status: 0 every check passes, 1 a check
// fails, 77 no usable GPU or no image for it (ctest reports "Skipped").
#define TLE_LAUNCHER_IMPLEMENTATION
#include "graph_add.h"
#include "graph_softmax.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace tle::rt;

namespace {

constexpr int kSkip = 77;
constexpr int kRows = 256, kCols = 1024, kN = kRows * kCols;
int failures = 0;

void check(bool ok, const std::string &what) {
  std::printf("%s  %s\n", ok ? "PASS" : "FAIL", what.c_str());
  failures += !ok;
}

/// softmax(2 * (x + y)) per row of kCols, in double.
std::vector<double> reference(const std::vector<float> &x, const std::vector<float> &y) {
  std::vector<double> out(kN);
  for (int r = 0; r < kRows; ++r) {
    const size_t base = size_t(r) * kCols;
    double m = -INFINITY, sum = 0;
    for (int c = 0; c < kCols; ++c)
      m = std::fmax(m, 2.0 * double(float(x[base + c] + y[base + c])));
    for (int c = 0; c < kCols; ++c)
      sum += std::exp(2.0 * double(float(x[base + c] + y[base + c])) - m);
    for (int c = 0; c < kCols; ++c)
      out[base + c] = std::exp(2.0 * double(float(x[base + c] + y[base + c])) - m) / sum;
  }
  return out;
}

/// The largest absolute difference between `got` and `want`.
double maxError(const std::vector<float> &got, const std::vector<double> &want) {
  double e = 0;
  for (size_t i = 0; i < got.size(); ++i)
    e = std::fmax(e, std::fabs(double(got[i]) - want[i]));
  return e;
}

std::vector<float> inputs(unsigned seed) {
  std::vector<float> v(kN);
  for (int i = 0; i < kN; ++i)
    v[i] = float(int((i * 2654435761u + seed * 40503u) % 2001u) - 1000) / 400.0f;
  return v;
}

struct Buffers {
  DeviceBuffer x, y, z, w, out;
  explicit Buffers(const Device &dev)
      : x(dev, kN * 4), y(dev, kN * 4), z(dev, kN * 4), w(dev, kN * 4), out(dev, kN * 4) {}
};

/// One step: two adds and a softmax, each through a generated launcher; the second add takes the
/// engine's view (a raw cudaStream_t and void * device pointers).
void step(Stream &stream, Buffers &b) {
  graph_add(stream, b.x, b.y, b.z, kN);
  auto *raw = static_cast<CUstream_st *>(stream.handle());
  void *z = reinterpret_cast<void *>(b.z.address()), *w = reinterpret_cast<void *>(b.w.address());
  graph_add(raw, z, z, w, kN);
  graph_softmax(stream, Grid(kRows), b.out, b.w, kCols, kCols, kRows, kCols);
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Stream capture and replay of the step (part "capture").
void captureAndReplay(const Device &dev, int steps) {
  Stream stream(dev);
  Buffers b(dev);
  std::vector<float> hx = inputs(1), hy = inputs(2);
  b.x.copyFromHost(hx);
  b.y.copyFromHost(hy);

  step(stream, b);
  stream.synchronize();
  double eagerErr = maxError(b.out.toHost<float>(), reference(hx, hy));
  check(eagerErr < 1e-5, "eager step matches the reference (max error " + std::to_string(eagerErr) + ")");

  // Not loaded inside a capture: refused before any module load, the capture stays usable.
  graph_add_unload();
  Graph::beginCapture(stream);
  check(stream.isCapturing(), "the stream reports the capture");
  graph_softmax(stream, Grid(kRows), b.out, b.w, kCols, kCols, kRows, kCols); // loaded: captured
  try {
    step(stream, b);
    check(false, "a launch of an unloaded kernel inside a capture should throw");
  } catch (const Error &e) {
    check(std::strstr(e.what(), "call graph_add_load(device) before the capture") != nullptr,
          std::string("unloaded kernel refused inside the capture: ") + e.what());
  }
  Graph empty = Graph::endCapture(stream);
  check(!stream.isCapturing(), "the refused capture ended cleanly");

  graph_add_load(dev);
  graph_softmax_load(dev);
  Graph::beginCapture(stream);
  step(stream, b);
  Graph g = Graph::endCapture(stream);
  for (unsigned replay = 0; replay < 3; ++replay) {
    hx = inputs(10 + replay);
    hy = inputs(20 + replay);
    b.x.copyFromHost(hx);
    b.y.copyFromHost(hy);
    b.out.fillBytes(0);
    g.launch(stream);
    stream.synchronize();
    double err = maxError(b.out.toHost<float>(), reference(hx, hy));
    check(err < 1e-5, "replay " + std::to_string(replay) + " on new inputs matches the reference (max error " +
                          std::to_string(err) + ")");
  }

  // Eager launches against replays of the captured step.
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i)
    step(stream, b);
  stream.synchronize();
  double eager = seconds(t0);
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i)
    g.launch(stream);
  stream.synchronize();
  double graph = seconds(t0);
  std::printf("timing: %d steps of 3 kernels: eager %.2f us/step, graph replay %.2f us/step\n", steps,
              1e6 * eager / steps, 1e6 * graph / steps);
}

/// The step as explicit kernel nodes, with a second branch v = y + y and an empty node joining
/// both: z = x + y -> w = z + z -> out = softmax(w), and v; then an empty-grid node after the join.
Graph buildStep(const Device &dev, Buffers &b, DeviceBuffer &v) {
  Graph g = Graph::create(dev);
  GraphNode add1 = graph_add_node(g, {}, b.x, b.y, b.z, kN);
  void *z = reinterpret_cast<void *>(b.z.address()), *w = reinterpret_cast<void *>(b.w.address());
  GraphNode add2 = graph_add_node(g.graph(), add1, dev, z, z, w, kN); // the engine's view: a raw CUgraph
  const Kernel &softmax = tle_launcher_graph_softmax::kernel0.loaded(dev);
  GraphNode soft = softmax.addNode(Grid(kRows), g, add2, b.out, b.w, int32_t(kCols), int32_t(kCols), int32_t(kRows),
                                   int32_t(kCols));
  GraphNode twice = graph_add_node(g, {}, b.y, b.y, v, kN);
  GraphNode join = addEmptyGraphNode(g.graph(), {soft, twice});
  graph_add_node(g, join, b.x, b.y, b.z, 0); // n = 0: an empty grid, so an empty node
  g.instantiate();
  return g;
}

/// Graphs built node by node (part "nodes").
void explicitNodes(const Device &dev, int steps) {
  Stream stream(dev);
  Buffers b(dev);
  DeviceBuffer v(dev, kN * 4);
  graph_add_unload();
  graph_softmax_load(dev);
  try {
    Graph g = Graph::create(dev);
    graph_add_node(g, {}, b.x, b.y, b.z, kN);
    check(false, "a node of an unloaded kernel should be refused");
  } catch (const Error &e) {
    check(std::strstr(e.what(), "call graph_add_load(device) before adding it to a graph") != nullptr,
          std::string("a node of an unloaded kernel refused: ") + e.what());
  }
  graph_add_load(dev);
  Graph g = buildStep(dev, b, v);
  for (unsigned replay = 0; replay < 3; ++replay) {
    std::vector<float> hx = inputs(30 + replay), hy = inputs(40 + replay);
    b.x.copyFromHost(hx);
    b.y.copyFromHost(hy);
    step(stream, b); // eager launches
    graph_add(stream, b.y, b.y, v, kN);
    stream.synchronize();
    std::vector<float> eagerOut = b.out.toHost<float>(), eagerV = v.toHost<float>();
    b.out.fillBytes(0);
    v.fillBytes(0);
    b.z.fillBytes(0);
    b.w.fillBytes(0);
    g.launch(stream);
    stream.synchronize();
    std::vector<float> out = b.out.toHost<float>(), gv = v.toHost<float>();
    bool same = std::memcmp(out.data(), eagerOut.data(), out.size() * 4) == 0 &&
                std::memcmp(gv.data(), eagerV.data(), gv.size() * 4) == 0;
    check(same, "replay " + std::to_string(replay) + " of the node graph equals the eager launches bit for bit");
    double err = maxError(out, reference(hx, hy));
    check(err < 1e-5, "replay " + std::to_string(replay) + " matches the reference (max error " + std::to_string(err) +
                          ")");
    check(gv[7] == 2.0f * hy[7], "the independent branch v = y + y ran");
  }
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i)
    g.launch(stream);
  stream.synchronize();
  std::printf("timing: %d replays of the 4-kernel node graph: %.2f us/replay\n", steps,
              1e6 * seconds(t0) / steps);
}

} // namespace

int main(int argc, char **argv) {
  int steps = 200;
  std::string part = "all";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0)
      steps = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--part") == 0)
      part = argv[i + 1];
  }
  if (part != "all" && part != "capture" && part != "nodes") {
    std::printf("usage: tle-graph-tests [--part capture|nodes|all] [--steps N]\n");
    return 2;
  }
  std::string why;
  if (!gpuAvailable(&why)) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return kSkip;
  }
  try {
    Device dev(0);
    std::printf("device: %s (%s)\n", dev.name().c_str(), dev.arch().c_str());
    if (dev.arch() != "sm_90a") {
      std::printf("SKIPPED: the launchers embed sm_90a images only\n");
      return kSkip;
    }
    if (part != "nodes")
      captureAndReplay(dev, steps);
    if (part != "capture")
      explicitNodes(dev, steps);
  } catch (const Error &e) {
    check(false, std::string("unexpected error: ") + e.what());
  }
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
