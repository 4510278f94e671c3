// TMA descriptor checks without a driver: every cuTensorMapEncodeTiled rule, the driver arguments, and that checks come before the driver.
#include "tle/Runtime/TensorMap.h"
#include "tle/Runtime/tle_rt.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <dlfcn.h>

using namespace tle::rt;
using Catch::Matchers::Contains;

namespace {

/// A valid 2-D fp16 description: 1000 x 512 row-major, 128 x 64 boxes, 128B swizzle.
TensorMapDesc good() {
  TensorMapDesc d;
  d.base = DevicePtr{0x7f0000010000ull};
  d.dtype = "fp16";
  d.shape = {1000, 512};
  d.strides = {512, 1};
  d.box = {128, 64};
  d.swizzle = TensorMapSwizzle::B128;
  return d;
}

/// A valid 3-D fp16 description that may use an interleaved layout.
TensorMapDesc good3d() {
  TensorMapDesc d;
  d.base = DevicePtr{0x7f0000010000ull};
  d.dtype = "fp16";
  d.shape = {4, 64, 16};
  d.strides = {64 * 16, 16, 1};
  d.box = {1, 8, 16};
  return d;
}

/// The ArgumentError message tensorMapEncodeArgs(d) throws, or "" when it accepts d.
std::string errorOf(const TensorMapDesc &d) {
  try {
    tensorMapEncodeArgs(d);
  } catch (const ArgumentError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("tensor map: driver arguments are innermost first, strides in bytes", "[tensormap]") {
  TensorMapEncodeArgs a = tensorMapEncodeArgs(good());
  CHECK(a.dataType == TensorMapDataType::Float16);
  CHECK(int(a.dataType) == 6);
  CHECK(a.rank == 2);
  CHECK(a.globalAddress == 0x7f0000010000ull);
  CHECK(a.globalDim == std::array<uint64_t, 5>{512, 1000, 0, 0, 0});
  CHECK(a.globalStrides == std::array<uint64_t, 4>{1024, 0, 0, 0});
  CHECK(a.boxDim == std::array<uint32_t, 5>{64, 128, 0, 0, 0});
  CHECK(a.elementStrides == std::array<uint32_t, 5>{1, 1, 0, 0, 0});
  CHECK(a.swizzle == TensorMapSwizzle::B128);
  CHECK(a.interleave == TensorMapInterleave::None);
  CHECK(a.l2Promotion == TensorMapL2Promotion::None);
  CHECK(a.oobFill == TensorMapOobFill::Zero);

  TensorMapDesc d;
  d.base = DevicePtr{0x1000};
  d.dtype = "fp32";
  d.shape = {3, 5, 7, 9, 64};
  d.strides = {5 * 8 * 9 * 64 * 2, 8 * 9 * 64, 9 * 64, 64, 1}; // padded dims 1 and 0
  d.box = {1, 2, 3, 4, 8};
  d.elementStrides = {1, 2, 3, 4, 5};
  d.l2Promotion = TensorMapL2Promotion::B256;
  d.oobFill = TensorMapOobFill::NanRequestZeroFma;
  a = tensorMapEncodeArgs(d);
  CHECK(a.rank == 5);
  CHECK(a.dataType == TensorMapDataType::Float32);
  CHECK(a.globalDim == std::array<uint64_t, 5>{64, 9, 7, 5, 3});
  CHECK(a.globalStrides == std::array<uint64_t, 4>{64 * 4, 9 * 64 * 4, 8 * 9 * 64 * 4, 5 * 8 * 9 * 64 * 2 * 4});
  CHECK(a.boxDim == std::array<uint32_t, 5>{8, 4, 3, 2, 1});
  CHECK(a.elementStrides == std::array<uint32_t, 5>{5, 4, 3, 2, 1});
  CHECK(int(a.l2Promotion) == 3);
  CHECK(int(a.oobFill) == 1);

  // Rank 1: no strides reach the driver.
  TensorMapDesc r1;
  r1.base = DevicePtr{0x1000};
  r1.dtype = "u8";
  r1.shape = {100};
  r1.strides = {1};
  r1.box = {256};
  a = tensorMapEncodeArgs(r1);
  CHECK(a.rank == 1);
  CHECK(a.globalDim[0] == 100);
  CHECK(a.boxDim[0] == 256);
  CHECK(a.globalStrides == std::array<uint64_t, 4>{0, 0, 0, 0});
}

TEST_CASE("tensor map: dtype names and element sizes", "[tensormap]") {
  struct Case {
    const char *name;
    TensorMapDataType type;
    size_t bytes;
  } cases[] = {
      {"i1", TensorMapDataType::UInt8, 1},       {"i8", TensorMapDataType::UInt8, 1},
      {"u8", TensorMapDataType::UInt8, 1},       {"i16", TensorMapDataType::UInt16, 2},
      {"u16", TensorMapDataType::UInt16, 2},     {"i32", TensorMapDataType::Int32, 4},
      {"u32", TensorMapDataType::UInt32, 4},     {"i64", TensorMapDataType::Int64, 8},
      {"u64", TensorMapDataType::UInt64, 8},     {"fp16", TensorMapDataType::Float16, 2},
      {"bf16", TensorMapDataType::BFloat16, 2},  {"fp32", TensorMapDataType::Float32, 4},
      {"fp64", TensorMapDataType::Float64, 8},   {"fp32_ftz", TensorMapDataType::Float32Ftz, 4},
      {"tf32", TensorMapDataType::TFloat32, 4},  {"tf32_ftz", TensorMapDataType::TFloat32Ftz, 4},
      {"fp8e4nv", TensorMapDataType::UInt8, 1},  {"fp8e5", TensorMapDataType::UInt8, 1},
  };
  for (const Case &c : cases) {
    INFO(c.name);
    CHECK(tensorMapDataType(c.name) == c.type);
    CHECK(tensorMapElementBytes(c.type) == c.bytes);
  }
  CHECK(int(TensorMapDataType::BFloat16) == 9);
  CHECK(int(TensorMapDataType::TFloat32Ftz) == 12);
  CHECK_THROWS_AS(tensorMapDataType("*fp16"), ArgumentError);
  CHECK_THROWS_WITH(tensorMapDataType("f16"), Contains("unknown dtype 'f16'"));
}

TEST_CASE("tensor map: rank and array lengths", "[tensormap]") {
  TensorMapDesc d = good();
  d.shape = {};
  CHECK(errorOf(d) == "encodeTensorMapTiled: rank 0 (shape []) is not in 1..5 (the ranks "
                      "cuTensorMapEncodeTiled supports)");
  d.shape = {1, 2, 3, 4, 5, 6};
  CHECK(errorOf(d) == "encodeTensorMapTiled: rank 6 (shape [1, 2, 3, 4, 5, 6]) is not in 1..5 "
                      "(the ranks cuTensorMapEncodeTiled supports)");
  d = good();
  d.strides = {1};
  CHECK(errorOf(d) == "encodeTensorMapTiled: strides [1] has 1 entries, the shape [1000, 512] has rank 2");
  d = good();
  d.box = {1, 2, 64};
  CHECK(errorOf(d) == "encodeTensorMapTiled: box [1, 2, 64] has 3 entries, the shape [1000, 512] has rank 2");
  d = good();
  d.elementStrides = {1};
  CHECK(errorOf(d) == "encodeTensorMapTiled: elementStrides [1] has 1 entries, the shape [1000, 512] "
                      "has rank 2 (or leave it empty)");
  d = good();
  d.interleave = TensorMapInterleave::B16;
  CHECK(errorOf(d) == "encodeTensorMapTiled: rank 2 is below 3, which an interleaved layout requires");
}

TEST_CASE("tensor map: dtype and enum values", "[tensormap]") {
  TensorMapDesc d = good();
  d.dtype = "half";
  CHECK_THAT(errorOf(d), Contains("encodeTensorMapTiled: unknown dtype 'half'"));
  d = good();
  d.swizzle = TensorMapSwizzle(4);
  CHECK(errorOf(d) == "encodeTensorMapTiled: swizzle 4 is not one of none, 32B, 64B, 128B (0..3)");
  d = good();
  d.interleave = TensorMapInterleave(3);
  CHECK(errorOf(d) == "encodeTensorMapTiled: interleave 3 is not a CUtensorMapInterleave value (0..2)");
  d = good();
  d.l2Promotion = TensorMapL2Promotion(-1);
  CHECK(errorOf(d) == "encodeTensorMapTiled: l2Promotion -1 is not a CUtensorMapL2promotion value (0..3)");
  d = good();
  d.oobFill = TensorMapOobFill(2);
  CHECK(errorOf(d) == "encodeTensorMapTiled: oobFill 2 is not a CUtensorMapFloatOOBfill value (0..1)");
  d = good();
  d.dtype = "i32";
  d.box = {128, 32};
  d.oobFill = TensorMapOobFill::NanRequestZeroFma;
  CHECK(errorOf(d) == "encodeTensorMapTiled: oobFill NanRequestZeroFma needs a floating-point dtype, not i32");
  d.dtype = "bf16";
  d.box = {128, 64};
  CHECK(errorOf(d) == "");
}

TEST_CASE("tensor map: global address alignment", "[tensormap]") {
  TensorMapDesc d = good();
  d.base = DevicePtr{0};
  CHECK(errorOf(d) == "encodeTensorMapTiled: the global address is null");
  d.base = DevicePtr{0x7f0000010008ull};
  CHECK(errorOf(d) == "encodeTensorMapTiled: the global address 0x7f0000010008 is not 16-byte aligned");
  d.base = DevicePtr{0x7f0000010010ull};
  CHECK(errorOf(d) == "");
  // Interleave 32B needs 32-byte alignment (and swizzle 32B, rank >= 3).
  TensorMapDesc i = good3d();
  i.interleave = TensorMapInterleave::B32;
  i.swizzle = TensorMapSwizzle::B32;
  CHECK(errorOf(i) == "");
  i.base = DevicePtr{0x7f0000010010ull};
  CHECK(errorOf(i) == "encodeTensorMapTiled: the global address 0x7f0000010010 is not 32-byte "
                      "aligned (required with interleave 32B)");
}

TEST_CASE("tensor map: global dimensions", "[tensormap]") {
  TensorMapDesc d = good();
  d.shape = {0, 512};
  CHECK(errorOf(d) == "encodeTensorMapTiled: shape[0] = 0 is not in 1..2^32");
  d.shape = {1000, -512};
  CHECK(errorOf(d) == "encodeTensorMapTiled: shape[1] = -512 is not in 1..2^32");
  d.shape = {(int64_t(1) << 32) + 1, 512};
  CHECK(errorOf(d) == "encodeTensorMapTiled: shape[0] = 4294967297 is not in 1..2^32");
  d.shape = {int64_t(1) << 32, 512};
  CHECK(errorOf(d) == "");
  CHECK(tensorMapEncodeArgs(d).globalDim[1] == uint64_t(1) << 32);
}

TEST_CASE("tensor map: global strides", "[tensormap]") {
  TensorMapDesc d = good();
  d.strides = {512, 2};
  CHECK(errorOf(d) == "encodeTensorMapTiled: strides[1] = 2: the innermost stride must be 1 element "
                      "(TMA reads the last dimension contiguously)");
  d.strides = {0, 1};
  CHECK(errorOf(d) == "encodeTensorMapTiled: strides[0] = 0 is not positive");
  d.strides = {-512, 1};
  CHECK(errorOf(d) == "encodeTensorMapTiled: strides[0] = -512 is not positive");
  d.strides = {100, 1}; // 200 bytes
  CHECK(errorOf(d) == "encodeTensorMapTiled: strides[0] = 100 elements = 200 bytes is not a multiple of 16 bytes");
  d.strides = {520, 1}; // 1040 bytes: padded rows are fine
  CHECK(errorOf(d) == "");
  d.strides = {int64_t(1) << 39, 1}; // 2^40 bytes
  CHECK(errorOf(d) == "encodeTensorMapTiled: strides[0] = 549755813888 elements of 2 bytes is not below 2^40 bytes");
  d.strides = {(int64_t(1) << 39) - 8, 1}; // 2^40 - 16 bytes
  CHECK(errorOf(d) == "");
  CHECK(tensorMapEncodeArgs(d).globalStrides[0] == (uint64_t(1) << 40) - 16);
  // Interleave 32B: strides are multiples of 32 bytes.
  TensorMapDesc i = good3d();
  i.interleave = TensorMapInterleave::B32;
  i.swizzle = TensorMapSwizzle::B32;
  i.strides = {64 * 24, 24, 1}; // 48 bytes
  CHECK(errorOf(i) == "encodeTensorMapTiled: strides[1] = 24 elements = 48 bytes is not a multiple of "
                      "32 bytes (required with interleave 32B)");
}

TEST_CASE("tensor map: box dimensions and swizzle span", "[tensormap]") {
  TensorMapDesc d = good();
  d.box = {0, 64};
  CHECK(errorOf(d) == "encodeTensorMapTiled: box[0] = 0 is not in 1..256");
  d.box = {257, 64};
  CHECK(errorOf(d) == "encodeTensorMapTiled: box[0] = 257 is not in 1..256");
  d.box = {256, 4}; // 8 bytes
  CHECK(errorOf(d) == "encodeTensorMapTiled: the box's inner dimension, box[1] = 4 elements = 8 bytes, "
                      "is not a multiple of 16 bytes");
  d.box = {256, 128}; // 256 bytes
  CHECK(errorOf(d) == "encodeTensorMapTiled: the box's inner dimension, box[1] = 128 elements = 256 "
                      "bytes, exceeds the 128-byte span of swizzle 128B");
  d.swizzle = TensorMapSwizzle::None;
  CHECK(errorOf(d) == "");
  d.box = {256, 32}; // 64 bytes
  d.swizzle = TensorMapSwizzle::B32;
  CHECK(errorOf(d) == "encodeTensorMapTiled: the box's inner dimension, box[1] = 32 elements = 64 "
                      "bytes, exceeds the 32-byte span of swizzle 32B");
  d.swizzle = TensorMapSwizzle::B64;
  CHECK(errorOf(d) == "");
  d.box = {256, 40}; // 80 bytes
  CHECK(errorOf(d) == "encodeTensorMapTiled: the box's inner dimension, box[1] = 40 elements = 80 "
                      "bytes, exceeds the 64-byte span of swizzle 64B");
  // Interleaved layouts have no inner-box rules of their own here.
  TensorMapDesc i = good3d();
  i.interleave = TensorMapInterleave::B16;
  i.box = {1, 8, 4}; // 8 bytes
  i.swizzle = TensorMapSwizzle::B32;
  CHECK(errorOf(i) == "");
}

TEST_CASE("tensor map: element strides and interleave/swizzle pairing", "[tensormap]") {
  TensorMapDesc d = good();
  d.elementStrides = {0, 1};
  CHECK(errorOf(d) == "encodeTensorMapTiled: elementStrides[0] = 0 is not in 1..8");
  d.elementStrides = {9, 1};
  CHECK(errorOf(d) == "encodeTensorMapTiled: elementStrides[0] = 9 is not in 1..8");
  d.elementStrides = {8, 1};
  CHECK(errorOf(d) == "");
  TensorMapDesc i = good3d();
  i.interleave = TensorMapInterleave::B32;
  i.swizzle = TensorMapSwizzle::B64;
  CHECK(errorOf(i) == "encodeTensorMapTiled: interleave 32B requires swizzle 32B, not 64B");
}

TEST_CASE("tensor map: the checks run before the driver is touched", "[tensormap][nodriver]") {
  const char *env = std::getenv("TLE_RT_CUDA_DRIVER");
  std::string driver = env && *env ? env : "libcuda.so.1";
  if (void *h = dlopen(driver.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    dlclose(h);
    WARN("the CUDA driver " << driver << " loads here: the no-driver path is not exercised");
    return;
  }
  TensorMapDesc bad = good();
  bad.box = {128, 65};
  CHECK_THROWS_AS(encodeTensorMapTiled(bad), ArgumentError);
  CHECK_THROWS_AS(encodeTensorMapTiled(good()), NoDriverError);
  // The C ABI: the rule is named; a valid description needs the driver.
  alignas(64) unsigned char map[128];
  int64_t shape[] = {1000, 512}, strides[] = {512, 1}, box[] = {128, 65};
  CHECK(tle_rt_tensor_map_encode_tiled(map, "fp16", 2, 0x10000, shape, strides, box, nullptr, 0, 3, 0, 0) ==
        TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(tle_rt_last_error()), Contains("box[1] = 65 elements = 130 bytes"));
  box[1] = 64;
  CHECK(tle_rt_tensor_map_encode_tiled(map, "fp16", 2, 0x10000, shape, strides, box, nullptr, 0, 3, 0, 0) ==
        TLE_RT_ERROR_NO_DRIVER);
  CHECK(tle_rt_tensor_map_encode_tiled(map + 8, "fp16", 2, 0x10000, shape, strides, box, nullptr, 0, 3, 0, 0) ==
        TLE_RT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(tle_rt_last_error()), Contains("not 64-byte aligned"));
}

TEST_CASE("tensor map: nvTmaDesc in metadata and argument checks", "[tensormap][metadata]") {
  ParamType t = ParamType::parse("nvTmaDesc");
  CHECK_FALSE(t.pointer);
  CHECK(t.kind == ScalarKind::TensorMap);
  CHECK(t.bits == 1024);
  CHECK(t.argBytes() == 128);
  CHECK(t.str() == "nvTmaDesc");
  CHECK(t.cppName() == "tle::rt::TensorMap");
  CHECK_THROWS_WITH(ParamType::parse("*nvTmaDesc"),
                    "type '*nvTmaDesc': a TMA descriptor (nvTmaDesc) is passed by value, not through a pointer");
  constexpr ArgDesc desc = argDescOf<TensorMap>();
  static_assert(!desc.pointer && desc.kind == ScalarKind::TensorMap && desc.bits == 1024);
  CHECK(argTypeName(desc) == "nvTmaDesc");

  auto doc = [](const std::string &param) {
    return R"({"format": "tle-module", "version": 1, "target": "sm_90a", "kernels": [{"name": "k", "num_warps": 4, "params": [)" +
           param + "]}]}";
  };
  ModuleInfo mi = parseModuleMetadata(doc(R"({"name": "d", "type": "nvTmaDesc"})"));
  CHECK(mi.kernels[0].params[0].type == t);
  CHECK_THROWS_WITH(parseModuleMetadata(doc(R"({"name": "d", "type": "nvTmaDesc", "divisibility": 16})")),
                    Contains("kernels[0].params[0].divisibility: 16 on a nvTmaDesc parameter"));
  CHECK_THROWS_WITH(parseModuleMetadata(doc(R"({"name": "d", "type": "*nvTmaDesc"})")),
                    Contains("kernels[0].params[0].type"));

  KernelInfo k = mi.kernels[0];
  CHECK_NOTHROW(checkArgType(k, 0, argDescOf<TensorMap>()));
  CHECK_THROWS_WITH(checkArgType(k, 0, argDescOf<uint64_t>()),
                    "k: argument 0 ('d') has parameter type nvTmaDesc (C++ tle::rt::TensorMap) but was given "
                    "uint64_t (u64); build the descriptor with tle::rt::encodeTensorMapTiled");
  TensorMap m;
  CHECK_NOTHROW(checkArgValue(k, 0, &m));
}
