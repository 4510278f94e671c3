// Tests of launch-argument checking (count, C++ type vs parameter type, divisibility) and fp16/bf16 scalars.
#include "tle/Runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace tle::rt;
using Catch::Matchers::Contains;

namespace {

KernelInfo layerNorm() {
  return parseModuleMetadata(R"({
    "format": "tle-module", "version": 1, "target": "sm_90a",
    "kernels": [{"name": "layer_norm_fwd", "num_warps": 4, "params": [
      {"name": "X", "type": "*fp32", "divisibility": 16},
      {"name": "Y", "type": "*fp32", "divisibility": 16},
      {"name": "stride", "type": "i32", "divisibility": 16},
      {"name": "N", "type": "i32"},
      {"name": "eps", "type": "fp32"},
      {"name": "count", "type": "u64", "divisibility": 8},
      {"name": "flag", "type": "i1"},
      {"name": "h", "type": "fp16"},
      {"name": "b", "type": "bf16"},
      {"name": "small", "type": "i8", "divisibility": 2}
    ]}]})")
      .kernels.at(0);
}

} // namespace

// Compile-time mapping of C++ types to argument descriptors.
static_assert(argDescOf<float>().kind == ScalarKind::Float && argDescOf<float>().bits == 32);
static_assert(argDescOf<double>().bits == 64);
static_assert(argDescOf<int32_t>().kind == ScalarKind::Int && argDescOf<int32_t>().bits == 32);
static_assert(argDescOf<const int &>().bits == 32);
static_assert(argDescOf<uint64_t>().kind == ScalarKind::UInt && argDescOf<uint64_t>().bits == 64);
static_assert(argDescOf<long long>().kind == ScalarKind::Int && argDescOf<long long>().bits == 64);
static_assert(argDescOf<bool>().kind == ScalarKind::Bool && argDescOf<bool>().bits == 1);
static_assert(argDescOf<DeviceBuffer>().pointer);
static_assert(argDescOf<DevicePtr &>().pointer);
static_assert(argDescOf<Half>().kind == ScalarKind::Float && argDescOf<Half>().bits == 16);
static_assert(argDescOf<BFloat16>().kind == ScalarKind::BFloat);

TEST_CASE("argument count is checked", "[args]") {
  KernelInfo k = layerNorm();
  CHECK_NOTHROW(checkArgCount(k, 10));
  CHECK_THROWS_AS(checkArgCount(k, 9), ArgumentError);
  CHECK_THROWS_WITH(checkArgCount(k, 9), Contains(
                           "layer_norm_fwd expects 10 arguments (X, Y, stride, N, eps, count, "
                           "flag, h, b, small) but was given 9"));
  CHECK_THROWS_AS(checkArgType(k, 10, argDescOf<float>()), ArgumentError);
}

TEST_CASE("matching C++ types are accepted", "[args]") {
  KernelInfo k = layerNorm();
  CHECK_NOTHROW(checkArgType(k, 0, argDescOf<DeviceBuffer>()));
  CHECK_NOTHROW(checkArgType(k, 1, argDescOf<DevicePtr>()));
  CHECK_NOTHROW(checkArgType(k, 2, argDescOf<int32_t>()));
  CHECK_NOTHROW(checkArgType(k, 3, argDescOf<int>()));
  CHECK_NOTHROW(checkArgType(k, 4, argDescOf<float>()));
  CHECK_NOTHROW(checkArgType(k, 5, argDescOf<uint64_t>()));
  CHECK_NOTHROW(checkArgType(k, 5, argDescOf<unsigned long long>()));
  CHECK_NOTHROW(checkArgType(k, 6, argDescOf<bool>()));
  CHECK_NOTHROW(checkArgType(k, 7, argDescOf<Half>()));
  CHECK_NOTHROW(checkArgType(k, 8, argDescOf<BFloat16>()));
  CHECK_NOTHROW(checkArgType(k, 9, argDescOf<int8_t>()));
}

TEST_CASE("mismatched C++ types name the parameter and both types", "[args]") {
  KernelInfo k = layerNorm();
  CHECK_THROWS_AS(checkArgType(k, 4, argDescOf<double>()), ArgumentError);
  CHECK_THROWS_WITH(checkArgType(k, 4, argDescOf<double>()), Contains("layer_norm_fwd: argument 4 ('eps') has parameter type "
                                        "fp32 (C++ float) but was given double (fp64); cast the "
                                        "argument to float"));
  CHECK_THROWS_WITH(checkArgType(k, 2, argDescOf<int64_t>()),
                    Contains("argument 2 ('stride') has parameter type i32 (C++ int32_t) but was "
                             "given int64_t (i64)"));
  CHECK_THROWS_WITH(checkArgType(k, 2, argDescOf<uint32_t>()),
                    Contains("'stride') has parameter type i32 (C++ int32_t) but was given uint32_t (u32)"));
  CHECK_THROWS_WITH(checkArgType(k, 3, argDescOf<float>()), Contains("given float (fp32)"));
  CHECK_THROWS_WITH(checkArgType(k, 0, argDescOf<int32_t>()),
                    Contains("argument 0 ('X') has parameter type *fp32 (C++ tle::rt::DeviceBuffer "
                             "or tle::rt::DevicePtr) but was given int32_t (i32)"));
  CHECK_THROWS_WITH(checkArgType(k, 1, argDescOf<uint64_t>()),
                    Contains("wrap a raw CUdeviceptr in tle::rt::DevicePtr"));
  CHECK_THROWS_WITH(checkArgType(k, 5, argDescOf<DevicePtr>()),
                    Contains("argument 5 ('count') has parameter type u64 (C++ uint64_t) but was "
                             "given tle::rt::DevicePtr (pointer)"));
  CHECK_THROWS_WITH(checkArgType(k, 6, argDescOf<int>()), Contains("'flag') has parameter type i1 (C++ bool)"));
  CHECK_THROWS_WITH(checkArgType(k, 7, argDescOf<BFloat16>()), Contains("type fp16 (C++ tle::rt::Half)"));
  CHECK_THROWS_WITH(checkArgType(k, 8, argDescOf<Half>()), Contains("given tle::rt::Half (fp16)"));
  CHECK(argTypeName(argDescOf<DeviceBuffer>()) == "pointer");
  CHECK(argTypeName(argDescOf<uint16_t>()) == "u16");
}

TEST_CASE("divisibility promises are checked on the values", "[args]") {
  KernelInfo k = layerNorm();
  uint64_t aligned = 0x7f0000001000ull, misaligned = 0x7f0000001004ull;
  CHECK_NOTHROW(checkArgValue(k, 0, &aligned));
  CHECK_THROWS_AS(checkArgValue(k, 0, &misaligned), ArgumentError);
  CHECK_THROWS_WITH(checkArgValue(k, 0, &misaligned), Contains(
                           "argument 0 ('X') is declared *fp32:16 (address divisible by 16 bytes) "
                           "but the address 0x7f0000001004 is not"));
  int32_t stride = 1024, badStride = 1000, negative = -32;
  CHECK_NOTHROW(checkArgValue(k, 2, &stride));
  CHECK_NOTHROW(checkArgValue(k, 2, &negative));
  CHECK_THROWS_WITH(checkArgValue(k, 2, &badStride),
                    Contains("argument 2 ('stride') is declared i32:16 (a multiple of 16) but the value is 1000"));
  int32_t n = 1001;
  CHECK_NOTHROW(checkArgValue(k, 3, &n)); // no promise
  float eps = 1e-5f;
  CHECK_NOTHROW(checkArgValue(k, 4, &eps));
  uint64_t count = 64, badCount = 65;
  CHECK_NOTHROW(checkArgValue(k, 5, &count));
  CHECK_THROWS_WITH(checkArgValue(k, 5, &badCount), Contains("value is 65"));
  int8_t small = -4, badSmall = -3;
  CHECK_NOTHROW(checkArgValue(k, 9, &small));
  CHECK_THROWS_WITH(checkArgValue(k, 9, &badSmall), Contains("value is -3"));
}

TEST_CASE("fp16 scalars round to nearest even", "[args]") {
  CHECK(Half::fromFloat(1.0f).bits == 0x3c00);
  CHECK(Half::fromFloat(-2.0f).bits == 0xc000);
  CHECK(Half::fromFloat(0.0f).bits == 0x0000);
  CHECK(Half::fromFloat(-0.0f).bits == 0x8000);
  CHECK(Half::fromFloat(65504.0f).bits == 0x7bff);
  CHECK(Half::fromFloat(65520.0f).bits == 0x7c00); // rounds up to infinity
  CHECK(Half::fromFloat(1e6f).bits == 0x7c00);
  CHECK(Half::fromFloat(std::numeric_limits<float>::infinity()).bits == 0x7c00);
  CHECK((Half::fromFloat(std::nanf("")).bits & 0x7fff) > 0x7c00);
  CHECK(Half::fromFloat(std::ldexp(1.0f, -24)).bits == 0x0001); // smallest subnormal
  CHECK(Half::fromFloat(std::ldexp(1.0f, -25)).bits == 0x0000); // tie to even: 0
  CHECK(Half::fromFloat(std::ldexp(3.0f, -25)).bits == 0x0002); // 1.5 ulp: tie to even 2
  CHECK(Half::fromFloat(std::ldexp(1.0f, -14)).bits == 0x0400); // smallest normal
  CHECK(Half::fromFloat(1.0f + std::ldexp(1.0f, -11)).bits == 0x3c00); // tie -> even
  CHECK(Half::fromFloat(1.0f + std::ldexp(3.0f, -11)).bits == 0x3c02); // tie -> even (up)
  for (float v : {1.0f, 0.5f, -3.25f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f})
    CHECK(Half::fromFloat(v).toFloat() == v);
}

TEST_CASE("bf16 scalars round to nearest even", "[args]") {
  CHECK(BFloat16::fromFloat(1.0f).bits == 0x3f80);
  CHECK(BFloat16::fromFloat(-2.0f).bits == 0xc000);
  CHECK(BFloat16::fromFloat(1.0f + std::ldexp(1.0f, -8)).bits == 0x3f80); // tie -> even
  CHECK(BFloat16::fromFloat(1.0f + std::ldexp(3.0f, -8)).bits == 0x3f82);
  CHECK(BFloat16::fromFloat(3.0e38f).toFloat() > 2.9e38f);
  CHECK(std::isnan(BFloat16::fromFloat(std::nanf("")).toFloat()));
  CHECK(BFloat16::fromFloat(1.5f).toFloat() == 1.5f);
}
