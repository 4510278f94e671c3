// TMA descriptors against the fake libcuda: the exact cuTensorMapEncodeTiled arguments, driver failures, the missing entry point, and nvTmaDesc launches.
#include "tle/Runtime/Runtime.h"
#include "tle/Runtime/TensorMap.h"
#include "tle/Runtime/tle_rt.h"

#include "MockSymbols.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace tle::rt;
using Catch::Matchers::Contains;

namespace {

int calls(const char *call) { return tle::test::mockFn<int (*)(const char *)>("mock_calls")(call); }

std::vector<unsigned char> bytesOf(const TensorMap &m) {
  const auto *p = reinterpret_cast<const unsigned char *>(&m);
  return {p, p + sizeof(m)};
}

/// 1000 x 512 fp16 at `address`, 128 x 64 boxes, 128B swizzle, 128B L2 promotion.
TensorMapDesc matrixDesc(uint64_t address) {
  TensorMapDesc d;
  d.base = DevicePtr{address};
  d.dtype = "fp16";
  d.shape = {1000, 512};
  d.strides = {512, 1};
  d.box = {128, 64};
  d.swizzle = TensorMapSwizzle::B128;
  d.l2Promotion = TensorMapL2Promotion::B128;
  return d;
}

const char *kTmaModule =
    ".visible .entry tma_kernel(.param .align 64 .b8 desc[128], .param .u64 out, .param .u32 n)\n"
    R"(__tle_metadata_text = {"format": "tle-module", "version": 1, "target": "sm_90a", "kernels": [)"
    R"({"name": "tma_kernel", "num_warps": 4, "params": [{"name": "desc", "type": "nvTmaDesc"}, )"
    R"({"name": "out", "type": "*fp32", "divisibility": 16}, {"name": "n", "type": "i32"}]}]})"
    "\n";

} // namespace

TEST_CASE("tensor map: a valid description reaches the driver with exactly its values", "[mock][tensormap]") {
  Device dev(0);
  DeviceBuffer a(dev, 1000 * 512 * 2);
  TensorMapDesc d = matrixDesc(a.address());
  d.elementStrides = {2, 1};
  int before = tle::test::lastTensorMapEncode().calls;
  TensorMap map = encodeTensorMapTiled(d);
  const MockTensorMapCall &c = tle::test::lastTensorMapEncode();
  REQUIRE(c.calls == before + 1);
  CHECK(reinterpret_cast<uintptr_t>(c.tensorMap) % 64 == 0);
  CHECK(c.dataType == 6); // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
  CHECK(c.rank == 2);
  CHECK(reinterpret_cast<uint64_t>(c.globalAddress) == a.address());
  CHECK(c.globalDim[0] == 512);  // innermost first
  CHECK(c.globalDim[1] == 1000);
  CHECK(c.globalStrides[0] == 1024); // bytes of dimension 1
  CHECK(c.boxDim[0] == 64);
  CHECK(c.boxDim[1] == 128);
  CHECK(c.elementStrides[0] == 1);
  CHECK(c.elementStrides[1] == 2);
  CHECK(c.interleave == 0);
  CHECK(c.swizzle == 3);     // CU_TENSOR_MAP_SWIZZLE_128B
  CHECK(c.l2Promotion == 2); // CU_TENSOR_MAP_L2_PROMOTION_L2_128B
  CHECK(c.oobFill == 0);
  // The bytes the driver wrote come back unchanged.
  CHECK(map.opaque[0] == a.address());
  CHECK(map.opaque[1] == (0x544d41ull << 40 | 6ull << 32 | 2ull << 24 | 0ull << 16 | 3ull << 8 | 2ull << 4 | 0));
  CHECK(map.opaque[2] == 512);
  CHECK(map.opaque[3] == 1000);
  CHECK(map.opaque[7] == 64);
  CHECK(map.opaque[8] == 128);
  CHECK(map.opaque[15] == 0x600d);

  // A 3-D fp32 tensor with NaN fill and no swizzle.
  TensorMapDesc e;
  e.base = DevicePtr{a.address() + 256};
  e.dtype = "fp32";
  e.shape = {2, 30, 40};
  e.strides = {32 * 40, 40, 1};
  e.box = {1, 16, 8};
  e.oobFill = TensorMapOobFill::NanRequestZeroFma;
  encodeTensorMapTiled(e);
  const MockTensorMapCall &c3 = tle::test::lastTensorMapEncode();
  CHECK(c3.dataType == 7);
  CHECK(c3.rank == 3);
  CHECK(reinterpret_cast<uint64_t>(c3.globalAddress) == a.address() + 256);
  CHECK(c3.globalDim[0] == 40);
  CHECK(c3.globalDim[1] == 30);
  CHECK(c3.globalDim[2] == 2);
  CHECK(c3.globalStrides[0] == 160);
  CHECK(c3.globalStrides[1] == 32 * 40 * 4);
  CHECK(c3.boxDim[0] == 8);
  CHECK(c3.boxDim[1] == 16);
  CHECK(c3.boxDim[2] == 1);
  CHECK(c3.swizzle == 0);
  CHECK(c3.oobFill == 1);

  // The C ABI writes the same bytes.
  alignas(64) unsigned char raw[128];
  int64_t shape[] = {1000, 512}, strides[] = {512, 1}, box[] = {128, 64}, es[] = {2, 1};
  REQUIRE(tle_rt_tensor_map_encode_tiled(raw, "fp16", 2, a.address(), shape, strides, box, es, 0, 3, 2, 0) ==
          TLE_RT_SUCCESS);
  CHECK(std::memcmp(raw, &map, 128) == 0);
}

TEST_CASE("tensor map: invalid descriptions never reach the driver", "[mock][tensormap]") {
  int before = calls("cuTensorMapEncodeTiled");
  TensorMapDesc d = matrixDesc(0x10008);
  CHECK_THROWS_WITH(encodeTensorMapTiled(d),
                    "encodeTensorMapTiled: the global address 0x10008 is not 16-byte aligned");
  d = matrixDesc(0x10000);
  d.box = {300, 64};
  CHECK_THROWS_AS(encodeTensorMapTiled(d), ArgumentError);
  CHECK(calls("cuTensorMapEncodeTiled") == before);
}

TEST_CASE("tensor map: a driver refusal is a DriverError naming the call and the tensor", "[mock][tensormap]") {
  auto failNext = tle::test::mockFn<void (*)(const char *, int, int, int)>("mock_fail");
  failNext("cuTensorMapEncodeTiled", 1, 1, 0);
  try {
    encodeTensorMapTiled(matrixDesc(0x10000));
    FAIL("expected a DriverError");
  } catch (const DriverError &e) {
    CHECK(e.call() == "cuTensorMapEncodeTiled");
    CHECK(e.result() == 1);
    CHECK(std::string(e.what()) ==
          "cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (invalid argument): dtype fp16, "
          "shape [1000, 512], strides [512, 1], box [128, 64], address 0x10000, swizzle 128B");
  }
  CHECK_NOTHROW(encodeTensorMapTiled(matrixDesc(0x10000))); // the next call works
}

TEST_CASE("tensor map: nvTmaDesc parameters take a TensorMap by value", "[mock][tensormap]") {
  Device dev(0);
  Module mod = Module::fromPtx(dev, kTmaModule, "tma.ptx");
  Kernel k = mod.kernel("tma_kernel");
  REQUIRE(k.info().params.size() == 3);
  CHECK(k.info().params[0].type.kind == ScalarKind::TensorMap);
  CHECK(k.info().params[0].type.argBytes() == 128);
  CHECK(k.info().signature() == "nvTmaDesc, *fp32:16, i32");
  DeviceBuffer out(dev, 4096);
  TensorMap map = encodeTensorMapTiled(matrixDesc(out.address()));
  Stream stream(dev);

  k.launch(Grid(4), stream, map, out, int32_t(7));
  std::vector<unsigned char> desc = tle::test::lastLaunchArg(0);
  CHECK(desc.size() == 128);
  CHECK(desc == bytesOf(map));
  std::vector<unsigned char> ptr = tle::test::lastLaunchArg(1);
  uint64_t addr = 0;
  std::memcpy(&addr, ptr.data(), 8);
  CHECK(addr == out.address());
  std::vector<unsigned char> n = tle::test::lastLaunchArg(2);
  CHECK(n.size() == 4);
  CHECK(n[0] == 7);

  // launchRaw and the C ABI: args[i] points at the 128 bytes.
  TensorMap other = map;
  other.opaque[5] = 0xabcdef;
  uint64_t address = out.address();
  int32_t count = 9;
  void *args[] = {&other, &address, &count};
  k.launchRaw(Grid(1), stream, args, 3);
  CHECK(tle::test::lastLaunchArg(0) == bytesOf(other));
  tle_rt_module cm = nullptr;
  tle_rt_kernel ck = nullptr;
  REQUIRE(tle_rt_module_load_data(0, kTmaModule, 0, &cm) == TLE_RT_SUCCESS);
  REQUIRE(tle_rt_module_get_kernel(cm, "tma_kernel", &ck) == TLE_RT_SUCCESS);
  CHECK(std::string(tle_rt_kernel_param_type(ck, 0)) == "nvTmaDesc");
  REQUIRE(tle_rt_launch(ck, 2, 1, 1, nullptr, args, 3) == TLE_RT_SUCCESS);
  CHECK(tle::test::lastLaunchArg(0) == bytesOf(other));
  tle_rt_kernel_release(ck);
  tle_rt_module_unload(cm);

  // Typed launches refuse anything else for the descriptor, and the descriptor elsewhere.
  CHECK_THROWS_WITH(k.launch(Grid(1), stream, out.ptr(), out, int32_t(1)),
                    "tma_kernel: argument 0 ('desc') has parameter type nvTmaDesc (C++ tle::rt::TensorMap) "
                    "but was given tle::rt::DevicePtr (pointer); build the descriptor with "
                    "tle::rt::encodeTensorMapTiled");
  CHECK_THROWS_WITH(k.launch(Grid(1), stream, map, map, int32_t(1)),
                    "tma_kernel: argument 1 ('out') has parameter type *fp32 (C++ tle::rt::DeviceBuffer or "
                    "tle::rt::DevicePtr) but was given tle::rt::TensorMap (nvTmaDesc)");
  CHECK_THROWS_WITH(k.launch(Grid(1), stream, map, out, int64_t(1)), Contains("cast the argument to int32_t"));
}

// Run by ctest runtime.tensormap.missing-symbol, with the fake driver that lacks the entry point.
TEST_CASE("tensor map: a driver without cuTensorMapEncodeTiled", "[.][tensormap-missing]") {
  REQUIRE(mockDriverPath.find("notma") != std::string::npos);
  Device dev(0); // the rest of the runtime works
  CHECK(dev.name() == "Mock GPU");
  try {
    encodeTensorMapTiled(matrixDesc(0x10000));
    FAIL("expected an Error");
  } catch (const DriverError &) {
    FAIL("a missing entry point is not a DriverError");
  } catch (const Error &e) {
    CHECK(std::string(e.what()) == "encodeTensorMapTiled: the CUDA driver lacks cuTensorMapEncodeTiled "
                                   "(TMA descriptors need a CUDA 12.0 or newer driver)");
  }
  // The checks still come first.
  CHECK_THROWS_AS(encodeTensorMapTiled(matrixDesc(0x10004)), ArgumentError);
  alignas(64) unsigned char raw[128];
  int64_t shape[] = {1000, 512}, strides[] = {512, 1}, box[] = {128, 64};
  CHECK(tle_rt_tensor_map_encode_tiled(raw, "fp16", 2, 0x10000, shape, strides, box, nullptr, 0, 3, 0, 0) ==
        TLE_RT_ERROR_OTHER);
  CHECK_THAT(std::string(tle_rt_last_error()), Contains("lacks cuTensorMapEncodeTiled"));
}

namespace {

// A kernel as tlec emits it for tensor-descriptor loads copied with TMA: the metadata names the
// descriptor's base, shape and strides among the params; the launch appends the descriptor.
const char *kDerivedModule =
    ".visible .entry mm(.param .u64 a, .param .u32 M, .param .u32 K, .param .u32 lda, "
    ".param .align 64 .b8 tensor_map_0[128])\n"
    R"(__tle_metadata_text = {"format": "tle-module", "version": 1, "target": "sm_90a", "kernels": [)"
    R"({"name": "mm", "num_warps": 4, "params": [{"name": "a", "type": "*fp16", "divisibility": 16}, )"
    R"({"name": "M", "type": "i32"}, {"name": "K", "type": "i32"}, {"name": "lda", "type": "i32"}], )"
    R"("tensor_maps": [{"dtype": "fp16", "base": "a", "shape": ["M", "K"], "strides": ["lda", 1], )"
    R"("box": [128, 64], "swizzle": 128}]}]})"
    "\n";

std::string withTensorMap(const std::string &map) {
  return R"({"format": "tle-module", "version": 1, "target": "sm_90a", "kernels": [{"name": "mm", )"
         R"("num_warps": 4, "params": [{"name": "a", "type": "*fp16"}, {"name": "M", "type": "i32"}], )"
         R"("tensor_maps": [)" + map + "]}]}";
}

} // namespace

TEST_CASE("tensor map: descriptors of the metadata are built from the arguments at every launch",
          "[mock][tensormap]") {
  Device dev(0);
  Module mod = Module::fromPtx(dev, kDerivedModule, "mm.ptx");
  Kernel k = mod.kernel("mm");
  const KernelInfo &ki = k.info();
  REQUIRE(ki.params.size() == 4); // callers pass the params only
  REQUIRE(ki.tensorMaps.size() == 1);
  CHECK(ki.tensorMaps[0].base == 0);
  CHECK(ki.tensorMaps[0].shape[0].params == std::vector<int>{1});
  CHECK(ki.tensorMaps[0].strides[1].params.empty());
  CHECK(ki.tensorMaps[0].strides[1].value == 1);
  DeviceBuffer a(dev, 300 * 520 * 2);
  Stream stream(dev);
  int before = tle::test::lastTensorMapEncode().calls;
  k.launch(Grid(3), stream, a, int32_t(300), int32_t(500), int32_t(520));
  const MockTensorMapCall &c = tle::test::lastTensorMapEncode();
  REQUIRE(c.calls == before + 1);
  CHECK(reinterpret_cast<uint64_t>(c.globalAddress) == a.address());
  CHECK(c.dataType == 6);
  CHECK(c.globalDim[0] == 500); // K, innermost first
  CHECK(c.globalDim[1] == 300); // M
  CHECK(c.globalStrides[0] == 1040); // lda in bytes
  CHECK(c.boxDim[0] == 64);
  CHECK(c.boxDim[1] == 128);
  CHECK(c.swizzle == 3);
  // The descriptor the driver wrote is the fifth argument of the launch.
  std::vector<unsigned char> desc = tle::test::lastLaunchArg(4);
  REQUIRE(desc.size() == 128);
  uint64_t first = 0;
  std::memcpy(&first, desc.data(), 8);
  CHECK(first == a.address());

  // launchRaw and the C ABI build it too.
  uint64_t address = a.address() + 1024;
  int32_t m = 7, kk = 64, lda = 64;
  void *args[] = {&address, &m, &kk, &lda};
  k.launchRaw(Grid(1), stream, args, 4);
  CHECK(reinterpret_cast<uint64_t>(tle::test::lastTensorMapEncode().globalAddress) == address);
  CHECK(tle::test::lastTensorMapEncode().globalDim[1] == 7);
  tle_rt_module cm = nullptr;
  tle_rt_kernel ck = nullptr;
  REQUIRE(tle_rt_module_load_data(0, kDerivedModule, 0, &cm) == TLE_RT_SUCCESS);
  REQUIRE(tle_rt_module_get_kernel(cm, "mm", &ck) == TLE_RT_SUCCESS);
  lda = 128;
  REQUIRE(tle_rt_launch(ck, 1, 1, 1, nullptr, args, 4) == TLE_RT_SUCCESS);
  CHECK(tle::test::lastTensorMapEncode().globalStrides[0] == 256);
  // Arguments TMA cannot describe are refused before the launch, naming the tensor and the rule.
  lda = 20; // 40 bytes
  CHECK(tle_rt_launch(ck, 1, 1, 1, nullptr, args, 4) == TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(tle_rt_last_error()),
             Contains("mm: the tensor descriptor over 'a' (shape [7, 64], strides [20, 1]) cannot be copied with "
                      "TMA: encodeTensorMapTiled:"));
  tle_rt_kernel_release(ck);
  tle_rt_module_unload(cm);
  // An empty tensor (a dimension of 0) gets a descriptor of one zero element the runtime keeps
  // on the device: copies through it read zeros, as the kernel's bounds checks would.
  k.launch(Grid(1), stream, a, int32_t(0), int32_t(64), int32_t(64));
  const MockTensorMapCall &e = tle::test::lastTensorMapEncode();
  uint64_t zeros = reinterpret_cast<uint64_t>(e.globalAddress);
  CHECK(zeros != a.address());
  CHECK(zeros % 16 == 0);
  CHECK(e.globalDim[0] == 1);
  CHECK(e.globalDim[1] == 1);
  CHECK(e.globalStrides[0] == 16);
  CHECK(e.boxDim[0] == 64);
  CHECK(e.boxDim[1] == 128);
  std::vector<unsigned char> z(16, 0xff);
  std::memcpy(z.data(), reinterpret_cast<const void *>(zeros), 16); // the fake driver's memory is the host's
  CHECK(z == std::vector<unsigned char>(16, 0));
  // Without such an element the empty tensor is refused, naming it.
  int32_t zero = 0;
  void *empty[] = {&address, &zero, &kk, &lda};
  CHECK_THROWS_WITH(launchTensorMap(ki, 0, empty),
                    Contains("mm: the tensor descriptor over 'a' (shape [0, 64], strides [20, 1]) cannot be copied "
                             "with TMA"));
}

TEST_CASE("tensor map: metadata descriptors are checked when the module is read", "[tensormap]") {
  const std::string ok = R"({"dtype": "fp16", "base": "a", "shape": ["M", 64], "strides": [64, 1], "box": [64, 64], "swizzle": 128})";
  ModuleInfo info = parseModuleMetadata(withTensorMap(ok));
  REQUIRE(info.kernels[0].tensorMaps.size() == 1);
  CHECK(info.kernels[0].tensorMaps[0].shape[1].value == 64);
  // Products: of int64 factors, or computed in 32 bits as an i32 product in the kernel.
  const std::string products = R"({"dtype": "fp16", "base": "a", "shape": [{"product": ["M", "M", 3], "bits": 32}, 64], "strides": [["M", 16], 1], "box": [64, 64], "swizzle": 128})";
  info = parseModuleMetadata(withTensorMap(products));
  const TensorMapArgInfo &t = info.kernels[0].tensorMaps[0];
  CHECK(t.shape[0].params == std::vector<int>{1, 1});
  CHECK(t.shape[0].value == 3);
  CHECK(t.shape[0].bits == 32);
  CHECK(t.strides[0].params == std::vector<int>{1});
  CHECK(t.strides[0].value == 16);
  CHECK(t.strides[0].bits == 64);
  // The values the launch computes, seen in the refusal of a misaligned base (checked before
  // any driver call).
  uint64_t address = 0x10008;
  int32_t m = 40000; // M * M * 3 wraps at 32 bits: 4800000000 - 2^32 = 505032704
  void *args[] = {&address, &m};
  CHECK_THROWS_WITH(launchTensorMap(info.kernels[0], 0, args),
                    "mm: the tensor descriptor over 'a' (shape [505032704, 64], strides [640000, 1]) cannot be "
                    "copied with TMA: encodeTensorMapTiled: the global address 0x10008 is not 16-byte aligned");
  auto bad = [&](const std::string &from, const std::string &to) {
    std::string m = ok;
    m.replace(m.find(from), from.size(), to);
    return parseModuleMetadata(withTensorMap(m));
  };
  CHECK_THROWS_WITH(bad("\"base\": \"a\"", "\"base\": \"b\""),
                    "invalid __tle_metadata: kernels[0].tensor_maps[0].base: no parameter named 'b'");
  CHECK_THROWS_WITH(bad("\"base\": \"a\"", "\"base\": \"M\""),
                    "invalid __tle_metadata: kernels[0].tensor_maps[0].base: parameter 'M' is not a pointer");
  CHECK_THROWS_WITH(bad("[\"M\", 64]", "[\"a\", 64]"),
                    "invalid __tle_metadata: kernels[0].tensor_maps[0].shape[0]: parameter 'a' is not an integer");
  CHECK_THROWS_WITH(bad("\"box\": [64, 64]", "\"box\": [64]"),
                    "invalid __tle_metadata: kernels[0].tensor_maps[0]: shape, strides and box must have one entry per "
                    "dimension");
  CHECK_THROWS_WITH(bad("\"swizzle\": 128", "\"swizzle\": 96"),
                    "invalid __tle_metadata: kernels[0].tensor_maps[0].swizzle: 96 is not 0, 32, 64 or 128");
  CHECK_THROWS_WITH(bad("\"fp16\"", "\"fp12\""), Contains("kernels[0].tensor_maps[0].dtype"));
  CHECK_THROWS_WITH(bad("\"fp16\"", "\"bf16\""),
                    "invalid __tle_metadata: kernels[0].tensor_maps[0].dtype: bf16 disagrees with parameter 'a' (*fp16)");
  CHECK_THROWS_WITH(bad("[\"M\", 64]", "[[1099511627776, 1099511627776], 64]"),
                    "invalid __tle_metadata: kernels[0].tensor_maps[0].shape[0][1]: the product's constant factors "
                    "overflow 64 bits");
}
