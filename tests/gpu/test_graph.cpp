// GPU test of CUDA Graph capture: a three-kernel step through generated launchers (raw cudaStream_t and void * included), captured, replayed and checked.
//
// Usage: tle-graph-tests [--steps N]. The step is z = x + y, w = z + z (graph_add, the launcher of
// examples/vector_add.tle), out = softmax(w) row by row (graph_softmax, examples/softmax.tle). It
// checks: the eager step against a CPU reference; that a launch whose kernel is not loaded yet is
// refused inside a capture (naming graph_add_load) and leaves the capture usable; that the
// captured graph, replayed after new inputs are copied in, gives the reference each time; and
// times N eager steps against N replays. Exit status: 0 every check passes, 1 a check fails, 77
// no usable GPU or no image for it (ctest reports "Skipped").
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

} // namespace

int main(int argc, char **argv) {
  int steps = 200;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--steps") == 0)
      steps = std::atoi(argv[i + 1]);
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
  } catch (const Error &e) {
    check(false, std::string("unexpected error: ") + e.what());
  }
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
