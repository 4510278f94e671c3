// Tests of the whole runtime (devices, modules, metadata read-back, launches, C ABI) against the fake libcuda.
#include "tle/Runtime/Runtime.h"
#include "tle/Runtime/tle_rt.h"

#include "MockSymbols.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

using namespace tle::rt;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

using tle::test::lastLaunch;
using tle::test::MockLaunch;

int lastSharedAttr() { return tle::test::mockFn<int (*)()>("mock_last_set_shared_attr")(); }

template <class T> T argAs(const MockLaunch &l, size_t i) {
  T v;
  std::memcpy(&v, l.args[i], sizeof(T));
  return v;
}

std::string metadataGlobal(const std::string &json, bool nul = true) {
  std::string s = "__tle_metadata[" + std::to_string(json.size() + nul) + "] = {";
  for (unsigned char c : json)
    s += std::to_string(unsigned(c)) + ", ";
  return s + (nul ? "0" : "") + "};\n";
}

const char *kKernels = R"ptx(
.visible .entry scale_kernel(.param .u64 out, .param .u64 in, .param .u32 n, .param .f32 alpha) { ret; }
.visible .entry smem_kernel(.param .u64 out) { ret; }
.visible .entry cluster_kernel(.param .u64 out, .param .u8 flag, .param .u16 h) { ret; }
)ptx";

std::string metadata(const std::string &extraKernels = "", int version = 1) {
  return R"({"format": "tle-module", "version": )" + std::to_string(version) +
         R"(, "target": "sm_90a", "compiler": "mock", "kernels": [
    {"name": "scale_kernel", "num_warps": 4, "params": [
      {"name": "out", "type": "*fp32", "divisibility": 16}, {"name": "in", "type": "*fp32", "divisibility": 16},
      {"name": "n", "type": "i32"}, {"name": "alpha", "type": "fp32"}], "constexprs": {"BLOCK": 128}},
    {"name": "smem_kernel", "num_warps": 4, "shared_bytes": 98304, "params": [{"name": "out", "type": "*i32"}]},
    {"name": "cluster_kernel", "num_warps": 8, "cluster": [2, 1, 1], "params": [
      {"name": "out", "type": "*fp32"}, {"name": "flag", "type": "i1"}, {"name": "h", "type": "fp16"}]})" +
         extraKernels + "]}";
}

std::string modulePtx(const std::string &json, bool nul = true) {
  return ".version 8.0\n.target sm_90a\n.address_size 64\n" + metadataGlobal(json, nul) + kKernels;
}

} // namespace

TEST_CASE("mock: device properties and availability", "[mock]") {
  std::string reason;
  CHECK(gpuAvailable(&reason));
  CHECK(Device::count() == 1);
  CHECK(driverVersion() == 13000);
  Device dev(0);
  CHECK(dev.name() == "Mock GPU");
  CHECK(dev.computeMajor() == 9);
  CHECK(dev.computeMinor() == 0);
  CHECK(dev.arch() == "sm_90a");
  CHECK(dev.smCount() == 132);
  CHECK(dev.l2CacheBytes() == size_t(50) << 20);
  CHECK(dev.maxSharedBytesPerBlockOptin() == 232448);
  CHECK(dev == Device(0));
  CHECK_THROWS_WITH(Device(1), Contains("device ordinal 1 is out of range (1 CUDA device)"));
  CHECK_NOTHROW(dev.synchronize());
}

TEST_CASE("mock: metadata is read back and typed launches pack arguments", "[mock]") {
  Device dev(0);
  Module mod = Module::fromPtx(dev, modulePtx(metadata()), "mock.ptx");
  REQUIRE(mod.hasMetadata());
  CHECK(mod.info().compiler == "mock");
  CHECK(mod.info().kernels.size() == 3);
  CHECK(mod.label() == "mock.ptx");
  Kernel k = mod.kernel("scale_kernel");
  CHECK(k.info().block == std::array<unsigned, 3>{128, 1, 1});
  CHECK(k.info().constexprInt("BLOCK") == 128);
  CHECK(k.numRegisters() == 32);
  CHECK(k.device() == dev);

  std::vector<float> in(300);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = float(i);
  DeviceBuffer din = DeviceBuffer::fromHost(dev, in);
  DeviceBuffer dout(dev, in.size() * 4);
  dout.fillBytes(0);
  Stream stream(dev);
  k.launch(Grid(3), stream, dout, din, int32_t(300), 2.5f);
  const MockLaunch &l = lastLaunch();
  CHECK(std::string(l.function) == "scale_kernel");
  CHECK(l.grid[0] == 3);
  CHECK(l.grid[1] == 1);
  CHECK(l.block[0] == 128);
  CHECK(l.shared == 0);
  CHECK(l.stream == stream.handle());
  CHECK(l.viaEx == 0);
  CHECK(argAs<uint64_t>(l, 0) == dout.address());
  CHECK(argAs<uint64_t>(l, 1) == din.address());
  CHECK(argAs<int32_t>(l, 2) == 300);
  CHECK(argAs<float>(l, 3) == 2.5f);
  stream.synchronize();
  std::vector<float> out = dout.toHost<float>();
  CHECK(out[299] == 299 * 2.5f);

  // DevicePtr arguments, offsets and refused launches.
  k.launch(1, stream, dout.ptr(16), DevicePtr{din.address()}, int32_t(1), 1.0f);
  CHECK(argAs<uint64_t>(lastLaunch(), 0) == dout.address() + 16);
  int before = lastLaunch().launches;
  CHECK_THROWS_AS(k.launch(1, stream, dout, din, int64_t(1), 1.0f), ArgumentError);
  CHECK_THROWS_AS(k.launch(1, stream, dout, din, int32_t(1), 1.0), ArgumentError);
  CHECK_THROWS_AS(k.launch(1, stream, dout, din, int32_t(1)), ArgumentError);
  CHECK_THROWS_WITH(k.launch(1, stream, dout.ptr(8), din, int32_t(1), 1.0f), Contains("divisible by 16"));
  CHECK_THROWS_WITH(k.launch(Grid(1, 70000), stream, dout, din, int32_t(1), 1.0f),
                    Contains("grid (1, 70000, 1) is invalid"));
  CHECK(lastLaunch().launches == before);

  // Raw launches.
  uint64_t po = dout.address(), pi = din.address();
  int32_t n = 5;
  float a = -1.0f;
  void *args[] = {&po, &pi, &n, &a};
  k.launchRaw(1, stream, args, 4);
  CHECK(argAs<int32_t>(lastLaunch(), 2) == 5);
  CHECK_THROWS_WITH(k.launchRaw(1, stream, args, 3), Contains("expects 4 arguments"));
  void *nullArgs[] = {&po, nullptr, &n, &a};
  CHECK_THROWS_WITH(k.launchRaw(1, stream, nullArgs, 4), Contains("argument 1 ('in') is a null pointer"));
}

TEST_CASE("mock: a kernel is looked up by its name and launched through its metadata symbol", "[mock]") {
  // tlec mangles a name PTX does not accept ("kérnel") into the entry symbol and keeps the
  // source name in "name"; kernel(name) must find the entry under "symbol".
  const std::string ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n" +
                          metadataGlobal(R"({"format": "tle-module", "version": 1, "target": "sm_90a", "kernels": [
    {"name": "k\u00e9rnel", "symbol": "k$c3$a9rnel", "num_warps": 1, "params": [{"name": "out", "type": "*fp32"}]}]})") +
                          ".visible .entry k$c3$a9rnel(.param .u64 out) { ret; }\n";
  Device dev(0);
  Module mod = Module::fromPtx(dev, ptx, "mangled.ptx");
  Kernel k = mod.kernel("k\xc3\xa9rnel");
  CHECK(k.info().name == "k\xc3\xa9rnel");
  CHECK(k.info().symbol == "k$c3$a9rnel");
  DeviceBuffer out(dev, 16);
  Stream stream(dev);
  k.launch(Grid(1), stream, out);
  CHECK(std::string(lastLaunch().function) == "k$c3$a9rnel");
  CHECK_THROWS_WITH(Module::fromPtx(dev, ".version 8.0\n.target sm_90a\n.address_size 64\n" +
                                             metadataGlobal(R"({"format": "tle-module", "version": 1, "target": "sm_90a",
    "kernels": [{"name": "k", "symbol": "", "num_warps": 1, "params": []}]})"),
                                         "empty.ptx")
                        .info(),
                    Contains("kernels[0].symbol: empty entry symbol"));
}

TEST_CASE("mock: a kernel whose metadata disagrees with its entry function's parameters is refused", "[mock]") {
  // Found by tle-fuzz-runtime: a PTX module whose __tle_metadata lists other parameters than its
  // entry function was launched with an argument buffer of the metadata's layout, and the driver
  // read past it (cuFuncGetParamInfo now checks each parameter's size and their count).
  auto module = [](const std::string &params, const std::string &entry) {
    return ".version 8.0\n.target sm_90a\n.address_size 64\n" +
           metadataGlobal(R"({"format": "tle-module", "version": 1, "target": "sm_90a", "kernels": [
    {"name": "k", "num_warps": 1, "params": [)" + params + "]}]}") +
           ".visible .entry k(" + entry + ") { ret; }\n";
  };
  Device dev(0);
  const std::string ptr = R"({"name": "out", "type": "*fp32"})", n32 = R"({"name": "n", "type": "i32"})";
  Module fewer = Module::fromPtx(dev, module(ptr, ".param .u64 out, .param .u32 n"), "fewer.ptx");
  CHECK_THROWS_WITH(fewer.kernel("k"), Contains("fewer.ptx: kernel k: the metadata describes 1 launch parameter "
                                                "but the entry function has more"));
  Module more = Module::fromPtx(dev, module(ptr + ", " + n32, ".param .u64 out"), "more.ptx");
  CHECK_THROWS_WITH(more.kernel("k"), Contains("more.ptx: kernel k: the metadata describes 2 launch parameters but "
                                               "the entry function has 1 (the module's code and its __tle_metadata "
                                               "disagree)"));
  Module wider = Module::fromPtx(dev, module(ptr + ", " + R"({"name": "n", "type": "i64"})", ".param .u64 out, .param .u32 n"),
                                 "wider.ptx");
  CHECK_THROWS_WITH(wider.kernel("k"), Contains("wider.ptx: kernel k: launch parameter 1 is parameter 'n' (i64) of 8 "
                                                "bytes in the metadata but 4 bytes in the entry function"));
  // Agreeing lists load.
  Module same = Module::fromPtx(dev, module(ptr + ", " + n32, ".param .u64 out, .param .u32 n"), "same.ptx");
  CHECK(same.kernel("k").info().params.size() == 2);
}

TEST_CASE("mock: large dynamic shared memory and cluster launches", "[mock]") {
  Device dev(0);
  Module mod = Module::fromPtx(dev, modulePtx(metadata()), "mock.ptx");
  Stream stream(dev);
  Kernel smem = mod.kernel("smem_kernel");
  CHECK(lastSharedAttr() == 98304);
  DeviceBuffer out(dev, 512);
  smem.launch(1, stream, out);
  CHECK(lastLaunch().shared == 98304);
  CHECK(out.toHost<int32_t>()[5] == 6);

  Kernel cl = mod.kernel("cluster_kernel");
  cl.launch(Grid(4, 2), stream, out, true, Half::fromFloat(1.0f));
  const MockLaunch &l = lastLaunch();
  CHECK(l.viaEx == 1);
  CHECK(l.cluster[0] == 2);
  CHECK(l.cluster[1] == 1);
  CHECK(l.block[0] == 256);
  CHECK(l.grid[1] == 2);
  CHECK(l.args[1][0] == 1);
  CHECK(argAs<uint16_t>(l, 2) == 0x3c00);
  CHECK_THROWS_WITH(cl.launch(3, stream, out, true, Half::fromFloat(1.0f)),
                    Contains("grid (3, 1, 1) is not a multiple of the cluster (2, 1, 1)"));
}

TEST_CASE("mock: a cluster of 16 CTAs opts the kernel into the non-portable size", "[mock]") {
  // Above 8 CTAs (the portable size) the driver launches a cluster only for a function that set
  // CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED (the test double refuses it otherwise, as
  // the driver does, with CUDA_ERROR_INVALID_CLUSTER_SIZE); libtle_rt sets it when loading such a
  // kernel, so the launch goes through with the cluster as the metadata gives it.
  auto module = [](int cluster) {
    return ".version 8.0\n.target sm_90a\n.address_size 64\n" +
           metadataGlobal(R"({"format": "tle-module", "version": 1, "target": "sm_90a", "kernels": [
    {"name": "k", "num_warps": 4, "cluster": [)" + std::to_string(cluster) +
                          R"(, 1, 1], "params": [{"name": "out", "type": "*fp32"}]}]})") +
           ".visible .entry k(.param .u64 out) { ret; }\n";
  };
  Device dev(0);
  Stream stream(dev);
  DeviceBuffer out(dev, 64);
  Module big = Module::fromPtx(dev, module(16), "cluster16.ptx");
  big.kernel("k").launch(Grid(32), stream, out);
  CHECK(lastLaunch().cluster[0] == 16);
  CHECK(lastLaunch().grid[0] == 32);
  Module portable = Module::fromPtx(dev, module(8), "cluster8.ptx");
  portable.kernel("k").launch(Grid(16), stream, out);
  CHECK(lastLaunch().cluster[0] == 8);
}

TEST_CASE("mock: cooperative launches are checked for co-residency first", "[mock]") {
  // A kernel with a grid-wide barrier ("cooperative": true) is launched with the cooperative
  // attribute; a grid larger than the device holds at once (the test double: 2048 threads per SM,
  // 132 SMs, so 16 CTAs of 128 threads per SM: 2112) is refused before any launch.
  const char *ptx = ".visible .entry coop_kernel(.param .u64 out) { ret; }\n";
  std::string json = R"({"format": "tle-module", "version": 1, "target": "sm_90a", "compiler": "mock", "kernels": [
    {"name": "coop_kernel", "num_warps": 4, "cooperative": true, "params": [{"name": "out", "type": "*fp32"}]},
    {"name": "coop_smem_kernel", "num_warps": 4, "cooperative": true, "shared_bytes": 65536,
     "params": [{"name": "out", "type": "*fp32"}]}]})";
  std::string text = ".version 8.0\n.target sm_90a\n.address_size 64\n" + metadataGlobal(json) + ptx +
                     ".visible .entry coop_smem_kernel(.param .u64 out) { ret; }\n";
  Device dev(0);
  Module mod = Module::fromPtx(dev, text, "coop.ptx");
  Stream stream(dev);
  DeviceBuffer out(dev, 64);
  Kernel k = mod.kernel("coop_kernel");
  CHECK(k.maxCoResidentBlocks() == 16 * 132);
  k.launch(Grid(66, 32), stream, out); // 2112 CTAs: every one resident
  const MockLaunch &l = lastLaunch();
  CHECK(l.viaEx == 1);
  CHECK(l.cooperative == 1);
  CHECK(l.grid[0] == 66);
  int launches = l.launches;
  CHECK_THROWS_WITH(k.launch(2113, stream, out),
                    Contains("coop_kernel: a cooperative launch (the kernel has a grid-wide barrier, so every CTA must "
                             "be resident at once) of grid (2113, 1, 1) = 2113 CTAs exceeds the 2112 that fit on Mock "
                             "GPU at once (16 per SM x 132 SMs with 128 threads and 0 bytes of dynamic shared memory "
                             "per CTA); launch at most 2112 CTAs"));
  CHECK(lastLaunch().launches == launches);
  // Shared memory bounds it too: 64 KiB per CTA leaves 3 per SM.
  Kernel s = mod.kernel("coop_smem_kernel");
  CHECK(s.maxCoResidentBlocks() == 3 * 132);
  CHECK_NOTHROW(s.launch(396, stream, out));
  CHECK_THROWS_WITH(s.launch(397, stream, out), Contains("exceeds the 396 that fit"));
}

TEST_CASE("mock: a kernel needing more shared memory than the device allows is refused", "[mock]") {
  // 232448 bytes (227 KiB) is the device's opt-in limit per block; 240000 exceeds it. The
  // kernel is refused when it is looked up, with both numbers, before any launch is attempted.
  Device dev(0);
  std::string json = metadata(R"(,
    {"name": "huge_smem_kernel", "num_warps": 4, "shared_bytes": 240000, "params": [{"name": "out", "type": "*i32"}]})");
  Module mod = Module::fromPtx(dev, modulePtx(json) + ".visible .entry huge_smem_kernel(.param .u64 out) { ret; }\n",
                               "huge.ptx");
  int launchesBefore = lastLaunch().launches;
  CHECK_THROWS_WITH(mod.kernel("huge_smem_kernel"),
                    Contains("huge_smem_kernel: needs 240000 bytes of dynamic + 0 bytes of static shared memory per "
                             "block, but") &&
                        Contains("allows at most 232448"));
  CHECK(lastLaunch().launches == launchesBefore);
  // The module's other kernels are still usable.
  Kernel ok = mod.kernel("smem_kernel");
  CHECK(ok.info().sharedBytes == 98304);
}

TEST_CASE("mock: module and metadata failures are named", "[mock]") {
  Device dev(0);
  // The driver rejects the module: call, CUresult name and string, JIT log.
  try {
    Module::fromPtx(dev, ".version 8.0\n.target sm_90a\nbogus;\n", "bad.ptx");
    FAIL("no exception");
  } catch (const DriverError &e) {
    CHECK(e.call() == "cuModuleLoadDataEx");
    CHECK(e.result() == 218);
    CHECK_THAT(e.what(), StartsWith("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT "
                                    "compilation failed): loading bad.ptx\nJIT error log:\nmock ptxas: "
                                    "error: unknown instruction 'bogus'"));
  }
  // Metadata names a kernel the module lacks.
  std::string ghost = R"(, {"name": "ghost_kernel", "num_warps": 1, "params": []})";
  Module m = Module::fromPtx(dev, modulePtx(metadata(ghost)), "ghost.ptx");
  try {
    m.kernel("ghost_kernel");
    FAIL("no exception");
  } catch (const DriverError &e) {
    CHECK(e.call() == "cuModuleGetFunction");
    CHECK_THAT(e.what(), StartsWith("cuModuleGetFunction(ghost_kernel) failed: CUDA_ERROR_NOT_FOUND "
                                    "(named symbol not found): in ghost.ptx"));
  }
  CHECK_THROWS_WITH(m.kernel("nope"),
                    Contains("ghost.ptx: no kernel 'nope' in the module's metadata (it has: scale_kernel, "
                             "smem_kernel, cluster_kernel, ghost_kernel)"));
  // Newer metadata, malformed metadata, no NUL.
  CHECK_THROWS_WITH(Module::fromPtx(dev, modulePtx(metadata("", 2)), "v2.ptx"),
                    StartsWith("v2.ptx: __tle_metadata version 2 is newer than this libtle_rt reads"));
  CHECK_THROWS_AS(Module::fromPtx(dev, modulePtx("{oops"), "bad.ptx"), MetadataError);
  CHECK_THROWS_WITH(Module::fromPtx(dev, modulePtx("{oops"), "bad.ptx"),
                    StartsWith("bad.ptx: invalid __tle_metadata: not valid JSON"));
  CHECK_THROWS_WITH(Module::fromPtx(dev, modulePtx(metadata(), false), "nonul.ptx"),
                    Contains("nonul.ptx: __tle_metadata"));
  // No metadata at all: loads, but kernel(name) needs a caller-supplied KernelInfo.
  Module plain = Module::fromPtx(dev, std::string(".version 8.0\n") + kKernels, "plain.ptx");
  CHECK_FALSE(plain.hasMetadata());
  CHECK_THROWS_AS(plain.kernel("scale_kernel"), MetadataError);
  CHECK_THROWS_WITH(plain.info(), Contains("plain.ptx: the module has no __tle_metadata (was it compiled by tlec?)"));
  KernelInfo info = m.info().kernels[0];
  Kernel k = plain.kernel("scale_kernel", info);
  Stream s(dev);
  DeviceBuffer b(dev, 1024);
  k.launch(1, s, b, b, int32_t(0), 0.0f);
  CHECK(std::string(lastLaunch().function) == "scale_kernel");
  // Too much shared memory for the device is refused when the kernel is created.
  KernelInfo huge = info;
  huge.sharedBytes = 300000;
  CHECK_THROWS_WITH(plain.kernel("scale_kernel", huge), Contains("needs 300000 bytes of dynamic"));
}

TEST_CASE("mock: hostile metadata and module files are refused with an error", "[mock]") {
  Device dev(0);
  // Nested 100,000 levels in the constexprs: before the limit, the parser overflowed the stack.
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string json = R"({"format": "tle-module", "version": 1, "target": "sm_90a", "kernels": [
    {"name": "scale_kernel", "num_warps": 4, "params": [], "constexprs": {"X": )" + deep + "}}]}";
  CHECK_THROWS_WITH(Module::fromPtx(dev, modulePtx(json), "deep.ptx"),
                    Contains("deep.ptx: invalid __tle_metadata: the document nests 100004 levels deep, more "
                             "than the limit of 64"));
  // Brackets inside strings do not count.
  std::string quoted = R"({"format": "tle-module", "version": 1, "target": "sm_90a", "kernels": [
    {"name": "scale_kernel", "num_warps": 4, "params": [], "constexprs": {"S": ")" + std::string(1000, '[') + "\"}}]}";
  CHECK(Module::fromPtx(dev, modulePtx(quoted), "quoted.ptx").info().kernels.at(0).constexprs.size() == 1);
  // A device that never ends, and a directory, are named instead of read.
  CHECK_THROWS_WITH(Module::fromFile(dev, "/dev/zero"),
                    Contains("libtle_rt: module file '/dev/zero' is not a regular file"));
  CHECK_THROWS_WITH(Module::fromFile(dev, "/tmp"), Contains("libtle_rt: module file '/tmp' is a directory"));
  // In-memory PTX with a size is read no further than that size (strlen ran past it).
  std::string ptx = modulePtx(metadata());
  std::string padded = ptx + "\nbogus;\n";
  tle_rt_module m = nullptr;
  REQUIRE(tle_rt_module_load_data(0, padded.data(), ptx.size(), &m) == TLE_RT_SUCCESS);
  tle_rt_module_unload(m);
  CHECK(tle_rt_module_load_data(0, padded.data(), 0, &m) == TLE_RT_ERROR_DRIVER); // NUL-terminated: all of it
}

TEST_CASE("mock: files and images", "[mock]") {
  Device dev(0);
  CHECK_THROWS_WITH(Module::fromFile(dev, "/nonexistent/softmax.cubin"),
                    StartsWith("libtle_rt: cannot open module file '/nonexistent/softmax.cubin'"));
  char tmpl[] = "/tmp/tle-mock-module-XXXXXX";
  int fd = mkstemp(tmpl);
  REQUIRE(fd >= 0);
  close(fd);
  std::string path = tmpl;
  {
    std::ofstream f(path);
    f << modulePtx(metadata());
  }
  Module m = Module::fromFile(dev, path);
  CHECK(m.label() == path);
  CHECK(m.info().kernels.at(0).name == "scale_kernel");
  std::remove(path.c_str());
  CHECK_THROWS_AS(Module::fromImage(dev, "not an elf", 10), ArgumentError);
}

TEST_CASE("mock: device buffers", "[mock]") {
  Device dev(0);
  std::vector<int32_t> v = {1, 2, 3, 4, 5, 6, 7, 8};
  DeviceBuffer a = DeviceBuffer::fromHost(dev, v);
  CHECK(a.bytes() == 32);
  CHECK(a.address() % 256 == 0);
  CHECK(a.deviceOrdinal() == 0);
  CHECK(a.toHost<int32_t>() == v);
  DeviceBuffer b(dev, 32);
  b.copyFromDevice(a, 16, 16, 0);
  b.copyFromDevice(a, 16, 0, 16);
  CHECK(b.toHost<int32_t>() == std::vector<int32_t>{5, 6, 7, 8, 1, 2, 3, 4});
  b.fill32(7);
  CHECK(b.toHost<int32_t>()[7] == 7);
  CHECK_THROWS_AS(b.copyFromHost(v.data(), 36), ArgumentError);
  CHECK_THROWS_AS(b.ptr(33), ArgumentError);
  DeviceBuffer moved = std::move(b);
  CHECK(b.bytes() == 0);
  CHECK(moved.bytes() == 32);
  DeviceBuffer empty(dev, 0);
  CHECK(empty.address() == 0);
  CHECK(DeviceBuffer().deviceOrdinal() == -1);
}

TEST_CASE("mock: launches from another thread make the context current there", "[mock]") {
  Device dev(0);
  Module mod = Module::fromPtx(dev, modulePtx(metadata()), "mock.ptx");
  Kernel k = mod.kernel("scale_kernel");
  DeviceBuffer b(dev, 512);
  std::string error;
  std::thread t([&] {
    try {
      Stream s(dev);
      k.launch(1, s, b, b, int32_t(1), 1.0f);
      s.synchronize();
      Event e0(dev), e1(dev);
      e0.record(s);
      e1.record(s);
      CHECK(Event::elapsedMs(e0, e1) >= 0);
    } catch (const std::exception &e) {
      error = e.what();
    }
  });
  t.join();
  CHECK(error == "");
}

TEST_CASE("mock: the C ABI", "[mock]") {
  std::string ptx = modulePtx(metadata());
  tle_rt_module m = nullptr;
  REQUIRE(tle_rt_module_load_data(0, ptx.c_str(), ptx.size() + 1, &m) == TLE_RT_SUCCESS);
  CHECK_THAT(std::string(tle_rt_module_metadata(m)), StartsWith("{\"format\": \"tle-module\""));
  tle_rt_kernel k = nullptr;
  CHECK(tle_rt_module_get_kernel(m, "missing", &k) == TLE_RT_ERROR_METADATA);
  CHECK_THAT(std::string(tle_rt_last_error()), Contains("no kernel 'missing'"));
  REQUIRE(tle_rt_module_get_kernel(m, "scale_kernel", &k) == TLE_RT_SUCCESS);
  tle_rt_module_unload(m); // the kernel keeps the module loaded
  CHECK(tle_rt_kernel_num_params(k) == 4);
  CHECK(std::string(tle_rt_kernel_param_name(k, 3)) == "alpha");
  CHECK(std::string(tle_rt_kernel_param_type(k, 0)) == "*fp32");
  CHECK(tle_rt_kernel_param_type(k, 4) == nullptr);
  CHECK(tle_rt_kernel_block_threads(k) == 128);
  CHECK(tle_rt_kernel_shared_bytes(k) == 0);
  Device dev(0);
  DeviceBuffer b(dev, 512);
  uint64_t p = b.address();
  int32_t n = 7;
  float a = 1.5f;
  void *args[] = {&p, &p, &n, &a};
  CHECK(tle_rt_launch(k, 2, 1, 1, nullptr, args, 4) == TLE_RT_SUCCESS);
  CHECK(argAs<int32_t>(lastLaunch(), 2) == 7);
  CHECK(lastLaunch().grid[0] == 2);
  CHECK(tle_rt_launch(k, 0, 1, 1, nullptr, args, 4) == TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(tle_rt_last_error()), Contains("grid (0, 1, 1) is invalid"));
  void *ctx = nullptr;
  CHECK(tle_rt_device_context(0, &ctx) == TLE_RT_SUCCESS);
  CHECK(ctx == dev.context());
  CHECK(tle_rt_device_synchronize(0) == TLE_RT_SUCCESS);
  CHECK(tle_rt_device_synchronize(3) == TLE_RT_ERROR_OTHER);
  tle_rt_kernel_release(k);
  tle_rt_module mf = nullptr;
  CHECK(tle_rt_module_load_file(0, "/nonexistent.cubin", &mf) == TLE_RT_ERROR_OTHER);
  CHECK(mf == nullptr);
}
