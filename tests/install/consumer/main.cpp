// tle-consumer: runs the launchers tle_add_kernels generated for examples/vector_add.tle (C++ and C) and checks the results.
//
// Usage: tle-consumer [--ptx-only]   (--ptx-only: only the PTX dispatcher `add`, single-threaded,
//                                     for the fake driver)
// Exit status: 0 pass, 1 fail, 77 no GPU (after the checks that need none).
#include "add.h"        // dispatcher over two specialisations (PTX)
#include "add_expr.h"   // BLOCK given to tle_add_kernels as an expression (DEFINES "BLOCK=2 * 512")
#include "softmax_by_shape.h" // shape dispatcher: n_cols <= 128, else the fallback
#include "vector_add.h" // add_kernel from the example's `# Compile:` line

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern "C" int consumer_c_add(int device, uint64_t x, uint64_t y, uint64_t z, int32_t n);

namespace {

int failures = 0;

void check(bool ok, const std::string &what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += !ok;
}

/// z == x + y on the first n elements, for x[i] = i, y[i] = 2i.
bool sumIsRight(const tle::rt::DeviceBuffer &z, int n) {
  std::vector<float> h = z.toHost<float>();
  for (int i = 0; i < n; ++i)
    if (h[i] != 3.0f * float(i))
      return false;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  using namespace tle::rt;
  bool ptxOnly = argc > 1 && std::strcmp(argv[1], "--ptx-only") == 0;

  // Dispatch decisions need no GPU.
  DevicePtr aligned{0x10000}, misaligned{0x10004};
  check(add_select(aligned, aligned, aligned, 4096) == 0, "add_select: aligned, n % 16 == 0 -> spec 0");
  check(add_select(aligned, aligned, aligned, 1000) == 1, "add_select: n % 16 != 0 -> spec 1");
  check(add_select(misaligned, aligned, aligned, 4096) == 1, "add_select: misaligned x -> spec 1");
  check(add_kernel_select(misaligned, aligned, aligned, 4096) == -1, "add_kernel_select: misaligned x -> none");
  check(add_expr_select(aligned, aligned, aligned, 1000) == 0, "add_expr_select: aligned -> spec 0");
  std::string shapeWhy;
  check(softmax_by_shape_select(aligned, aligned, 128, 128, 4, 100) == 0, "softmax_by_shape: 100 columns -> spec 0");
  int shapeSpec = softmax_by_shape_select(aligned, aligned, 1024, 1024, 4, 500, &shapeWhy);
  check(shapeSpec == 1 && shapeWhy.find("rejected: 'n_cols' (= 500) breaks n_cols <= 128") != std::string::npos,
        "softmax_by_shape: 500 columns -> spec 1: " + shapeWhy);

  std::string why;
  if (!gpuAvailable(&why)) {
    std::printf("no GPU: %s\n", why.c_str());
    return failures ? 1 : 77;
  }
  Device dev(0);
  Stream stream(dev);
  std::printf("device: %s (%s)\n", dev.name().c_str(), dev.arch().c_str());
  for (int n : {4096, 1000}) {
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; ++i) {
      hx[i] = float(i);
      hy[i] = 2.0f * float(i);
    }
    DeviceBuffer x = DeviceBuffer::fromHost(dev, hx), y = DeviceBuffer::fromHost(dev, hy), z(dev, n * sizeof(float));
    try {
      z.fillBytes(0);
      add(stream, x, y, z, n); // grid cdiv(n, 1024) from the launcher
      stream.synchronize();
      check(sumIsRight(z, n), "C++ dispatcher add, n = " + std::to_string(n) + " (spec " +
                                  std::to_string(add_select(x, y, z, n)) + ")");
      z.fillBytes(0);
      check(consumer_c_add(dev.ordinal(), x.address(), y.address(), z.address(), n) == 0 && sumIsRight(z, n),
            "C dispatcher add, n = " + std::to_string(n));
      if (!ptxOnly) {
        z.fillBytes(0);
        add_kernel(stream, Grid(unsigned((n + 1023) / 1024)), x, y, z, n);
        stream.synchronize();
        check(sumIsRight(z, n), "C++ launcher add_kernel (explicit grid), n = " + std::to_string(n));
      }
    } catch (const Error &e) {
      check(false, std::string("unexpected error: ") + e.what());
    }
  }
  // Concurrent first launches: 8 threads, each with its own stream and buffers, race to load the
  // dispatcher's kernels (unloaded first) and then launch 50 times each.
  if (!ptxOnly) {
    add_unload();
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&, t] {
        try {
          Stream s(dev);
          int n = 1000 + 512 * t; // t even: a multiple of 16 (spec 0); odd: spec 1
          std::vector<float> hx(n), hy(n);
          for (int i = 0; i < n; ++i) {
            hx[i] = float(i);
            hy[i] = 2.0f * float(i);
          }
          DeviceBuffer x = DeviceBuffer::fromHost(dev, hx), y = DeviceBuffer::fromHost(dev, hy), z(dev, n * 4);
          for (int it = 0; it < 50; ++it) {
            z.fillBytes(0);
            add(s, x, y, z, n);
            s.synchronize();
            wrong += !sumIsRight(z, n);
          }
        } catch (const Error &e) {
          std::printf("thread %d: %s\n", t, e.what());
          ++wrong;
        }
      });
    for (auto &th : threads)
      th.join();
    check(wrong == 0, "8 threads x 50 launches through the dispatcher after add_unload(), results checked");
  }
  // A broken promise is an exception naming the launcher and the argument, not a launch.
  try {
    DeviceBuffer b(dev, 4096 * sizeof(float));
    add_kernel(stream, Grid(4), b.ptr(4), b, b, 4096);
    check(false, "add_kernel with a misaligned pointer should throw");
  } catch (const ArgumentError &e) {
    check(std::strstr(e.what(), "x_ptr") != nullptr, std::string("misaligned pointer refused: ") + e.what());
  }
  std::printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
