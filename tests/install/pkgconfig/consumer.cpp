// tle-pkgconfig-consumer: an engine's use of the installed package through pkg-config only: a generated launcher called with a raw cudaStream_t and void * pointers, and a captured graph, on the installed driver test double.
//
// Built by run_install_test.cmake with `c++ $(pkg-config --cflags --libs tle_rt)` against add.h,
// which the installed tlec generated from examples/vector_add.tle; run with TLE_RT_CUDA_DRIVER set
// to pkg-config's mock_cuda_driver. Exit status: 0 every check passes, 1 a check fails.
#define TLE_LAUNCHER_IMPLEMENTATION
#include "add.h"

#include "tle/Runtime/MockCuda.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

/// The CUDA runtime's stream type, as driver_types.h declares it (no CUDA header needed).
using cudaStream_t = struct CUstream_st *;

namespace {

int failures = 0;

void check(bool ok, const std::string &what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += !ok;
}

/// z == x + y on n elements, for x[i] = i, y[i] = 2i.
bool sumIsRight(const tle::rt::DeviceBuffer &z, int n) {
  std::vector<float> h = z.toHost<float>();
  for (int i = 0; i < n; ++i)
    if (h[size_t(i)] != 3.0f * float(i))
      return false;
  return true;
}

} // namespace

int main() {
  using namespace tle::rt;
  try {
    tle::mock::Driver mock; // the installed test double, as TLE_RT_CUDA_DRIVER names it
    Device dev(0);
    Stream engineStream(dev);
    cudaStream_t stream = static_cast<cudaStream_t>(engineStream.handle()); // the engine's handle
    const int n = 3000;
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; ++i) {
      hx[size_t(i)] = float(i);
      hy[size_t(i)] = 2.0f * float(i);
    }
    DeviceBuffer bx = DeviceBuffer::fromHost(dev, hx), by = DeviceBuffer::fromHost(dev, hy), bz(dev, n * 4);
    void *x = reinterpret_cast<void *>(bx.address()), *y = reinterpret_cast<void *>(by.address());
    void *z = reinterpret_cast<void *>(bz.address());

    add(stream, x, y, z, n); // raw cudaStream_t, raw void * device pointers
    const tle::mock::Launch &l = mock.lastLaunch();
    check(std::strcmp(l.function, "add_kernel") == 0 && l.grid[0] == 3 && l.stream == stream,
          "add(cudaStream_t, void *...) launched add_kernel on 3 blocks on the engine's stream");
    check(sumIsRight(bz, n), "z = x + y");
    try {
      add(stream, static_cast<char *>(x) + 4, y, z, n);
      check(false, "a misaligned void * should be refused");
    } catch (const ArgumentError &e) {
      check(std::strstr(e.what(), "x_ptr") != nullptr, std::string("misaligned void * refused: ") + e.what());
    }

    // CUDA Graphs: a load inside a capture is refused, naming add_load; loaded first, it replays.
    add_unload();
    int loads = mock.calls("cuModuleLoadDataEx");
    Graph::beginCapture(engineStream);
    try {
      add(stream, x, y, z, n);
      check(false, "a launch needing a module load inside a capture should throw");
    } catch (const Error &e) {
      check(std::strstr(e.what(), "call add_load(device) before the capture") != nullptr,
            std::string("load inside a capture refused: ") + e.what());
    }
    Graph::endCapture(engineStream);
    check(mock.calls("cuModuleLoadDataEx") == loads, "no module load reached the driver during the capture");
    add_load(dev);
    Graph::beginCapture(engineStream);
    add(stream, x, y, z, n);
    Graph step = Graph::endCapture(engineStream);
    bz.fillBytes(0);
    step.launch(engineStream);
    check(sumIsRight(bz, n), "the captured step replays: z = x + y");
  } catch (const std::exception &e) {
    check(false, std::string("unexpected error: ") + e.what());
  }
  std::printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
