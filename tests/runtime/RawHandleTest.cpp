// Raw CUstream / void* launches, the caller's context left as found, and CUDA Graph capture, against the fake libcuda.
#include "tle/Runtime/Launcher.h"
#include "tle/Runtime/Runtime.h"
#include "tle/Runtime/tle_rt.h"

#include "MockSymbols.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

using namespace tle::rt;
using Catch::Matchers::Contains;

namespace {

using tle::test::mockFn;

int mockCalls(const char *call) { return mockFn<int (*)(const char *)>("mock_calls")(call); }
void *mockCurrent() { return mockFn<void *(*)()>("mock_current")(); }
void mockSetCurrent(void *ctx) { mockFn<void (*)(void *)>("mock_set_current")(ctx); }

// scale_kernel: out[i] = alpha * in[i], emulated by the fake driver.
const char *kModule = R"ptx(
.visible .entry scale_kernel(.param .u64 out, .param .u64 in, .param .u32 n, .param .f32 alpha) { ret; }
__tle_metadata_text = {"format": "tle-module", "version": 1, "target": "sm_90a", "kernels": [{"name": "scale_kernel", "num_warps": 4, "params": [{"name": "out", "type": "*fp32", "divisibility": 16}, {"name": "in", "type": "*fp32", "divisibility": 16}, {"name": "n", "type": "i32"}, {"name": "alpha", "type": "fp32"}]}]}
)ptx";

/// The engine's view of a stream: the CUDA runtime's cudaStream_t is a CUstream_st *.
CUstream_st *raw(const Stream &s) { return static_cast<CUstream_st *>(s.handle()); }

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float(i);
  return v;
}

} // namespace

TEST_CASE("a kernel launches on a raw CUstream with raw void * device pointers", "[raw]") {
  Device dev(0);
  Kernel k = Module::fromPtx(dev, kModule).kernel("scale_kernel");
  Stream stream(dev);
  DeviceBuffer in = DeviceBuffer::fromHost(dev, iota(256)), out(dev, 256 * 4);
  void *outPtr = reinterpret_cast<void *>(out.address());
  const void *inPtr = reinterpret_cast<const void *>(in.address());
  k.launch(2, raw(stream), outPtr, inPtr, int32_t(256), 3.0f);
  std::vector<float> host = out.toHost<float>();
  CHECK(host[0] == 0.0f);
  CHECK(host[255] == 765.0f);

  SECTION("the same checks as the typed launch") {
    CHECK_THROWS_WITH(k.launch(2, raw(stream), outPtr, inPtr, int64_t(256), 3.0f),
                      Contains("argument 2 ('n') has parameter type i32"));
    void *misaligned = reinterpret_cast<void *>(out.address() + 4);
    CHECK_THROWS_WITH(k.launch(2, raw(stream), misaligned, inPtr, int32_t(256), 3.0f),
                      Contains("is declared *fp32:16"));
    CHECK_THROWS_AS(k.launch(2, raw(stream), outPtr, inPtr, int32_t(256)), ArgumentError);
  }
  SECTION("nullptr is the legacy default stream of the current device") {
    k.launch(1, nullptr, outPtr, inPtr, int32_t(4), 1.0f);
    CHECK(out.toHost<float>()[3] == 3.0f);
  }
  SECTION("launchRaw takes a raw stream too") {
    int32_t n = 16;
    float alpha = 2.0f;
    void *args[] = {&outPtr, &inPtr, &n, &alpha};
    k.launchRaw(1, raw(stream), args, 4);
    CHECK(out.toHost<float>()[15] == 30.0f);
  }
}

TEST_CASE("a raw stream's device comes from its context", "[raw]") {
  Device dev(0);
  Stream stream(dev);
  CHECK(Device::ofStream(raw(stream)) == dev);
  Stream wrapped = Stream::wrap(raw(stream));
  CHECK(wrapped.device() == dev);
  CHECK(wrapped.handle() == stream.handle());
  int ordinal = -1;
  CHECK(tle_rt_stream_device(stream.handle(), &ordinal) == TLE_RT_SUCCESS);
  CHECK(ordinal == 0);

  SECTION("a stream of a context that is not a primary context is refused") {
    void *foreign = mockFn<void *(*)()>("mock_foreign_stream")();
    CHECK_THROWS_WITH(Device::ofStream(static_cast<CUstream_st *>(foreign)),
                      Contains("not the primary context of device 0"));
    Kernel k = Module::fromPtx(dev, kModule).kernel("scale_kernel");
    DeviceBuffer buf(dev, 64);
    CHECK_THROWS_AS(k.launch(1, static_cast<CUstream_st *>(foreign), buf, buf, int32_t(0), 1.0f), ArgumentError);
    int32_t n = 0;
    float alpha = 1.0f;
    uint64_t p = buf.address();
    void *args[] = {&p, &p, &n, &alpha};
    tle_rt_module m = nullptr;
    tle_rt_kernel ck = nullptr;
    REQUIRE(tle_rt_module_load_data(0, kModule, 0, &m) == TLE_RT_SUCCESS);
    REQUIRE(tle_rt_module_get_kernel(m, "scale_kernel", &ck) == TLE_RT_SUCCESS);
    CHECK(tle_rt_launch(ck, 1, 1, 1, foreign, args, 4) == TLE_RT_ERROR_INVALID_ARGUMENT);
    CHECK_THAT(tle_rt_last_error(), Contains("not the primary context"));
    tle_rt_kernel_release(ck);
    tle_rt_module_unload(m);
    mockFn<int (*)(void *)>("cuStreamDestroy_v2")(foreign);
  }
}

TEST_CASE("libtle_rt leaves the calling thread's context as it found it", "[context]") {
  Device dev(0);
  void *mine = mockFn<void *(*)()>("mock_foreign_context")(); // the engine's own context
  mockSetCurrent(mine);
  Stream stream(dev);
  Kernel k = Module::fromPtx(dev, kModule).kernel("scale_kernel");
  DeviceBuffer buf(dev, 64);
  k.launch(1, stream, buf, buf, int32_t(0), 1.0f);
  stream.synchronize();
  dev.synchronize();
  CHECK(mockCurrent() == mine);

  mockSetCurrent(nullptr); // no context current: none after the calls either
  k.launch(1, stream, buf, buf, int32_t(0), 1.0f);
  buf.fillBytes(0);
  CHECK(mockCurrent() == nullptr);

  // Only the explicit makeCurrent switches the thread to the primary context.
  dev.makeCurrent();
  CHECK(mockCurrent() == dev.context());
  int before = mockCalls("cuCtxSetCurrent");
  k.launch(1, stream, buf, buf, int32_t(0), 1.0f); // already current: no switch at all
  CHECK(mockCalls("cuCtxSetCurrent") == before);
}

TEST_CASE("launches are captured into a CUDA graph and replayed", "[graph]") {
  Device dev(0);
  Kernel k = Module::fromPtx(dev, kModule).kernel("scale_kernel");
  Stream stream(dev);
  DeviceBuffer a = DeviceBuffer::fromHost(dev, iota(128)), b(dev, 128 * 4), c(dev, 128 * 4);
  CHECK_FALSE(stream.isCapturing());
  Graph::beginCapture(stream);
  CHECK(stream.isCapturing());
  int capturing = 0;
  CHECK(tle_rt_stream_is_capturing(stream.handle(), &capturing) == TLE_RT_SUCCESS);
  CHECK(capturing == 1);
  // A two-kernel step: b = 2a, c = 3b; recorded, not run.
  k.launch(1, stream, b, a, int32_t(128), 2.0f);
  k.launch(1, raw(stream), reinterpret_cast<void *>(c.address()), reinterpret_cast<void *>(b.address()),
           int32_t(128), 3.0f);
  SECTION("a module load inside the capture fails in the driver") {
    CHECK_THROWS_AS(Module::fromPtx(dev, kModule), DriverError);
    Graph::endCapture(stream);
  }
  SECTION("replays run the step") {
    Graph g = Graph::endCapture(stream);
    CHECK_FALSE(stream.isCapturing());
    c.fillBytes(0);
    CHECK(c.toHost<float>()[127] == 0.0f); // nothing ran during the capture
    g.launch(stream);
    CHECK(c.toHost<float>()[127] == 762.0f);
    a.copyFromHost(std::vector<float>(128, 1.0f));
    g.launch(stream); // the replay reads the buffers' current contents
    CHECK(c.toHost<float>()[5] == 6.0f);
    Graph moved = std::move(g);
    CHECK_THROWS_AS(g.launch(stream), ArgumentError);
    CHECK(moved.handle() != nullptr);
  }
}

TEST_CASE("generated launchers refuse to load a kernel inside a capture and name the load function", "[graph]") {
  Device dev(0);
  std::string ptx = kModule;
  const tle_launcher_image images[] = {
      {"sm_90a", reinterpret_cast<const unsigned char *>(ptx.c_str()), ptx.size() + 1, 1}};
  static tle::launcher::LazyKernel lk("scale", "scale_kernel", images, 1, "scale_load");
  static tle_launcher_lazy_kernel lazy = TLE_LAUNCHER_LAZY_KERNEL_INIT("scale_kernel", nullptr, 0);
  lazy.images = images;
  lazy.num_images = 1;
  Stream stream(dev);
  DeviceBuffer a = DeviceBuffer::fromHost(dev, iota(64)), b(dev, 64 * 4);
  int loads = mockCalls("cuModuleLoadDataEx");

  Graph::beginCapture(stream);
  CHECK_THROWS_WITH(lk.get(stream), "scale: kernel scale_kernel is not loaded on device 0 and the stream is being "
                                    "captured into a CUDA graph, where loading a module is not allowed; call "
                                    "scale_load(device) before the capture");
  tle_rt_kernel ck = nullptr;
  CHECK(tle_launcher_get_kernel_for_stream(&lazy, "scale", "scale_load", 0, stream.handle(), &ck) ==
        TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(tle_launcher_last_error(), Contains("call scale_load(0) before the capture"));
  CHECK(mockCalls("cuModuleLoadDataEx") == loads); // no load reached the driver
  Graph::endCapture(stream);

  // Loaded first (what NAME_load does), the same launches are captured and replayed.
  lk.get(dev);
  REQUIRE(tle_launcher_get_kernel(&lazy, "scale", 0, &ck) == TLE_RT_SUCCESS);
  Graph::beginCapture(stream);
  lk.get(stream).launch(1, stream, b, a, int32_t(64), 2.0f);
  REQUIRE(tle_launcher_get_kernel_for_stream(&lazy, "scale", "scale_load", 0, stream.handle(), &ck) == TLE_RT_SUCCESS);
  int32_t n = 64;
  float alpha = 10.0f;
  uint64_t bp = b.address();
  void *args[] = {&bp, &bp, &n, &alpha};
  CHECK(tle_rt_launch(ck, 1, 1, 1, stream.handle(), args, 4) == TLE_RT_SUCCESS);
  Graph g = Graph::endCapture(stream);
  b.fillBytes(0);
  g.launch(stream);
  CHECK(b.toHost<float>()[7] == 140.0f); // (2 * 7) * 10
  lk.unload();
  tle_launcher_unload(&lazy);
}
