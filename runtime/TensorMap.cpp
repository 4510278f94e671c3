// TMA descriptors: the cuTensorMapEncodeTiled rules checked up front, then the driver call through the dlopen'ed table.
#include "tle/Runtime/TensorMap.h"
#include "tle/Runtime/Runtime.h"

#include "CudaDriver.h"
#include "RuntimeState.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace tle::rt {

namespace {

constexpr const char *kWho = "encodeTensorMapTiled";

[[noreturn]] void reject(const std::string &what) {
  throw ArgumentError(fmt::format("{}: {}", kWho, what));
}

bool isFloat(TensorMapDataType t) {
  switch (t) {
  case TensorMapDataType::Float16:
  case TensorMapDataType::Float32:
  case TensorMapDataType::Float64:
  case TensorMapDataType::BFloat16:
  case TensorMapDataType::Float32Ftz:
  case TensorMapDataType::TFloat32:
  case TensorMapDataType::TFloat32Ftz:
    return true;
  default:
    return false;
  }
}

const char *swizzleName(TensorMapSwizzle s) {
  switch (s) {
  case TensorMapSwizzle::None: return "none";
  case TensorMapSwizzle::B32: return "32B";
  case TensorMapSwizzle::B64: return "64B";
  case TensorMapSwizzle::B128: return "128B";
  }
  return "?";
}

std::string list(const std::vector<int64_t> &v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

} // namespace

TensorMapDataType tensorMapDataType(std::string_view dtype) {
  struct Entry {
    const char *name;
    TensorMapDataType type;
  };
  static constexpr Entry table[] = {
      {"i1", TensorMapDataType::UInt8},         {"i8", TensorMapDataType::UInt8},
      {"u8", TensorMapDataType::UInt8},         {"i16", TensorMapDataType::UInt16},
      {"u16", TensorMapDataType::UInt16},       {"i32", TensorMapDataType::Int32},
      {"u32", TensorMapDataType::UInt32},       {"i64", TensorMapDataType::Int64},
      {"u64", TensorMapDataType::UInt64},       {"fp16", TensorMapDataType::Float16},
      {"bf16", TensorMapDataType::BFloat16},    {"fp32", TensorMapDataType::Float32},
      {"fp64", TensorMapDataType::Float64},     {"fp32_ftz", TensorMapDataType::Float32Ftz},
      {"tf32", TensorMapDataType::TFloat32},    {"tf32_ftz", TensorMapDataType::TFloat32Ftz},
      {"fp8e4nv", TensorMapDataType::UInt8},    {"fp8e5", TensorMapDataType::UInt8}, // bytes to TMA
  };
  for (const Entry &e : table)
    if (dtype == e.name)
      return e.type;
  throw ArgumentError(fmt::format(
      "{}: unknown dtype '{}' (expected one of i1 i8 u8 i16 u16 i32 u32 i64 u64 fp8e4nv fp8e5 fp16 bf16 fp32 "
      "fp64 fp32_ftz tf32 tf32_ftz)",
      kWho, dtype));
}

size_t tensorMapElementBytes(TensorMapDataType type) {
  switch (type) {
  case TensorMapDataType::UInt8: return 1;
  case TensorMapDataType::UInt16:
  case TensorMapDataType::Float16:
  case TensorMapDataType::BFloat16: return 2;
  case TensorMapDataType::UInt64:
  case TensorMapDataType::Int64:
  case TensorMapDataType::Float64: return 8;
  default: return 4;
  }
}

TensorMapEncodeArgs tensorMapEncodeArgs(const TensorMapDesc &d) {
  TensorMapEncodeArgs a;
  size_t rank = d.shape.size();
  if (rank < 1 || rank > 5)
    reject(fmt::format("rank {} (shape {}) is not in 1..5 (the ranks cuTensorMapEncodeTiled supports)",
                       rank, list(d.shape)));
  if (int(d.interleave) < 0 || int(d.interleave) > 2)
    reject(fmt::format("interleave {} is not a CUtensorMapInterleave value (0..2)", int(d.interleave)));
  if (int(d.swizzle) < 0 || int(d.swizzle) > 3)
    reject(fmt::format("swizzle {} is not one of none, 32B, 64B, 128B (0..3)", int(d.swizzle)));
  if (int(d.l2Promotion) < 0 || int(d.l2Promotion) > 3)
    reject(fmt::format("l2Promotion {} is not a CUtensorMapL2promotion value (0..3)",
                       int(d.l2Promotion)));
  if (int(d.oobFill) < 0 || int(d.oobFill) > 1)
    reject(fmt::format("oobFill {} is not a CUtensorMapFloatOOBfill value (0..1)", int(d.oobFill)));
  bool interleaved = d.interleave != TensorMapInterleave::None;
  bool interleave32 = d.interleave == TensorMapInterleave::B32;
  if (interleaved && rank < 3)
    reject(fmt::format("rank {} is below 3, which an interleaved layout requires", rank));
  if (d.strides.size() != rank)
    reject(fmt::format("strides {} has {} entries, the shape {} has rank {}", list(d.strides),
                       d.strides.size(), list(d.shape), rank));
  if (d.box.size() != rank)
    reject(fmt::format("box {} has {} entries, the shape {} has rank {}", list(d.box), d.box.size(),
                       list(d.shape), rank));
  if (!d.elementStrides.empty() && d.elementStrides.size() != rank)
    reject(fmt::format("elementStrides {} has {} entries, the shape {} has rank {} (or leave it empty)",
                       list(d.elementStrides), d.elementStrides.size(), list(d.shape), rank));
  a.dataType = tensorMapDataType(d.dtype);
  uint64_t elem = tensorMapElementBytes(a.dataType);
  if (d.oobFill == TensorMapOobFill::NanRequestZeroFma && !isFloat(a.dataType))
    reject(fmt::format("oobFill NanRequestZeroFma needs a floating-point dtype, not {}", d.dtype));
  if (interleave32 && d.swizzle != TensorMapSwizzle::B32)
    reject(fmt::format("interleave 32B requires swizzle 32B, not {}", swizzleName(d.swizzle)));

  uint64_t addr = d.base.address;
  uint64_t addrAlign = interleave32 ? 32 : 16;
  if (addr == 0)
    reject("the global address is null");
  if (addr % addrAlign)
    reject(fmt::format("the global address 0x{:x} is not {}-byte aligned{}", addr, addrAlign,
                       interleave32 ? " (required with interleave 32B)" : ""));

  for (size_t i = 0; i < rank; ++i)
    if (d.shape[i] < 1 || uint64_t(d.shape[i]) > (uint64_t(1) << 32))
      reject(fmt::format("shape[{}] = {} is not in 1..2^32", i, d.shape[i]));

  uint64_t strideAlign = interleave32 ? 32 : 16;
  if (d.strides[rank - 1] != 1)
    reject(fmt::format("strides[{}] = {}: the innermost stride must be 1 element (TMA reads the "
                       "last dimension contiguously)",
                       rank - 1, d.strides[rank - 1]));
  for (size_t i = 0; i + 1 < rank; ++i) {
    int64_t s = d.strides[i];
    if (s < 1)
      reject(fmt::format("strides[{}] = {} is not positive", i, s));
    // 2^40 bytes bounds every valid stride; larger element counts cannot be valid.
    if (uint64_t(s) >= (uint64_t(1) << 40) / elem)
      reject(fmt::format("strides[{}] = {} elements of {} bytes is not below 2^40 bytes", i, s, elem));
    uint64_t bytes = uint64_t(s) * elem;
    if (bytes % strideAlign)
      reject(fmt::format("strides[{}] = {} elements = {} bytes is not a multiple of {} bytes{}", i, s,
                         bytes, strideAlign, interleave32 ? " (required with interleave 32B)" : ""));
  }

  for (size_t i = 0; i < rank; ++i)
    if (d.box[i] < 1 || d.box[i] > 256)
      reject(fmt::format("box[{}] = {} is not in 1..256", i, d.box[i]));
  uint64_t innerBytes = uint64_t(d.box[rank - 1]) * elem;
  if (!interleaved) {
    if (innerBytes % 16)
      reject(fmt::format("the box's inner dimension, box[{}] = {} elements = {} bytes, is not a "
                         "multiple of 16 bytes",
                         rank - 1, d.box[rank - 1], innerBytes));
    uint64_t span = d.swizzle == TensorMapSwizzle::B32   ? 32
                    : d.swizzle == TensorMapSwizzle::B64 ? 64
                    : d.swizzle == TensorMapSwizzle::B128 ? 128
                                                          : 0;
    if (span && innerBytes > span)
      reject(fmt::format("the box's inner dimension, box[{}] = {} elements = {} bytes, exceeds the "
                         "{}-byte span of swizzle {}",
                         rank - 1, d.box[rank - 1], innerBytes, span, swizzleName(d.swizzle)));
  }
  for (size_t i = 0; i < d.elementStrides.size(); ++i)
    if (d.elementStrides[i] < 1 || d.elementStrides[i] > 8)
      reject(fmt::format("elementStrides[{}] = {} is not in 1..8", i, d.elementStrides[i]));

  // Innermost first for the driver; strides of dimensions 1..rank-1 in bytes.
  a.rank = uint32_t(rank);
  a.globalAddress = addr;
  for (size_t j = 0; j < rank; ++j) {
    size_t i = rank - 1 - j; // the caller's index of driver dimension j
    a.globalDim[j] = uint64_t(d.shape[i]);
    a.boxDim[j] = uint32_t(d.box[i]);
    a.elementStrides[j] = d.elementStrides.empty() ? 1u : uint32_t(d.elementStrides[i]);
    if (j > 0)
      a.globalStrides[j - 1] = uint64_t(d.strides[i]) * elem;
  }
  a.interleave = d.interleave;
  a.swizzle = d.swizzle;
  a.l2Promotion = d.l2Promotion;
  a.oobFill = d.oobFill;
  return a;
}

TensorMap encodeTensorMapTiled(const TensorMapDesc &desc) {
  TensorMapEncodeArgs a = tensorMapEncodeArgs(desc);
  const cu::Api &api = cu::api();
  if (!api.cuTensorMapEncodeTiled)
    throw Error(fmt::format("{}: the CUDA driver lacks cuTensorMapEncodeTiled (TMA descriptors "
                            "need a CUDA 12.0 or newer driver)",
                            kWho));
  // The driver encodes in the calling thread's current context (CUDA_ERROR_INVALID_CONTEXT
  // without one). libtle_rt leaves a thread's context as it found it, so an engine thread may
  // have none: then the context owning the address (CU_POINTER_ATTRIBUTE_CONTEXT) is made
  // current for the call. An address no context owns is left for the driver to refuse.
  std::optional<detail::ScopedContext> scope;
  cu::CUcontext current = nullptr;
  if (api.cuPointerGetAttribute && api.cuCtxGetCurrent(&current) == cu::CUDA_SUCCESS && !current) {
    cu::CUcontext owner = nullptr;
    constexpr int kPointerAttributeContext = 1; // CU_POINTER_ATTRIBUTE_CONTEXT
    if (api.cuPointerGetAttribute(&owner, kPointerAttributeContext, cu::CUdeviceptr(a.globalAddress)) ==
            cu::CUDA_SUCCESS &&
        owner)
      scope.emplace(owner);
  }
  cu::CUtensorMap map{};
  cu::CUresult r = api.cuTensorMapEncodeTiled(
      &map, int(a.dataType), a.rank, reinterpret_cast<void *>(uintptr_t(a.globalAddress)),
      a.globalDim.data(), a.globalStrides.data(), a.boxDim.data(), a.elementStrides.data(),
      int(a.interleave), int(a.swizzle), int(a.l2Promotion), int(a.oobFill));
  if (r != cu::CUDA_SUCCESS)
    cu::fail("cuTensorMapEncodeTiled", r,
             fmt::format("dtype {}, shape {}, strides {}, box {}, address 0x{:x}, swizzle {}",
                         desc.dtype, list(desc.shape), list(desc.strides), list(desc.box),
                         a.globalAddress, swizzleName(desc.swizzle)));
  TensorMap out;
  static_assert(sizeof(out) == sizeof(map));
  std::memcpy(static_cast<void *>(&out), &map, sizeof(out));
  return out;
}

// The descriptor of a kernel's tensor-map parameter, from its launch arguments (see Runtime.h).
TensorMap launchTensorMap(const KernelInfo &kernel, size_t k, void *const *args, DevicePtr zeros) {
  const TensorMapArgInfo &t = kernel.tensorMaps.at(k);
  // As the kernel computes it: two's-complement products, wrapped to 32 bits for an i32 one.
  auto number = [&](const TensorMapArgInfo::Source &s) -> int64_t {
    uint64_t v = uint64_t(s.value);
    for (int p : s.params) {
      int64_t sv = 0;
      uint64_t uv = 0;
      argInteger(kernel.params[size_t(p)].type, args[p], sv, uv);
      v *= kernel.params[size_t(p)].type.kind == ScalarKind::Int ? uint64_t(sv) : uv;
    }
    return s.bits == 32 ? int64_t(int32_t(uint32_t(v))) : int64_t(v);
  };
  TensorMapDesc d;
  uint64_t base = 0;
  std::memcpy(&base, args[t.base], 8);
  d.base = DevicePtr{base};
  d.dtype = t.dtype;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    d.shape.push_back(number(t.shape[i]));
    d.strides.push_back(number(t.strides[i]));
  }
  d.box = t.box;
  if (zeros.address && std::find(d.shape.begin(), d.shape.end(), 0) != d.shape.end()) {
    // An empty tensor: one zero element, 16-byte strides; every other element is out of bounds.
    size_t eb = tensorMapElementBytes(tensorMapDataType(d.dtype));
    d.base = zeros;
    std::fill(d.shape.begin(), d.shape.end(), 1);
    std::fill(d.strides.begin(), d.strides.end(), int64_t(16 / eb));
    d.strides.back() = 1;
  }
  d.swizzle = t.swizzle == 128  ? TensorMapSwizzle::B128
              : t.swizzle == 64 ? TensorMapSwizzle::B64
              : t.swizzle == 32 ? TensorMapSwizzle::B32
                                : TensorMapSwizzle::None;
  auto list = [](const std::vector<int64_t> &v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + std::to_string(v[i]);
    return s;
  };
  try {
    return encodeTensorMapTiled(d);
  } catch (const ArgumentError &e) {
    throw ArgumentError(fmt::format("{}: the tensor descriptor over '{}' (shape [{}], strides [{}]) cannot be "
                                    "copied with TMA: {}",
                                    kernel.name, kernel.params[t.base].name, list(d.shape), list(d.strides),
                                    e.what()));
  }
}

} // namespace tle::rt
