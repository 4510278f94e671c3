// TMA descriptors for kernel arguments: validated cuTensorMapEncodeTiled calls that build a tle::rt::TensorMap.
//
// A tiled tensor map describes a strided tensor in global memory and the box (tile) one TMA copy
// (`cp.async.bulk.tensor`, PTX ISA "Data Movement and Conversion Instructions") moves between
// it and shared memory. Every rule the CUDA driver API reference states for
// cuTensorMapEncodeTiled (section "Tensor Map Object Management", CUDA 12.x and 13.0) is checked
// here first, so a bad description fails with an ArgumentError naming the field and the rule
// rather than with CUDA_ERROR_INVALID_VALUE.
//
//   tle::rt::TensorMapDesc d;
//   d.base = a.ptr();                 // a DeviceBuffer of M x K fp16, row-major
//   d.dtype = "fp16";
//   d.shape = {M, K};                 // outermost first, elements
//   d.strides = {K, 1};               // elements; the innermost stride must be 1
//   d.box = {128, 64};                // the tile one copy moves: 128 rows of 64 elements
//   d.swizzle = tle::rt::TensorMapSwizzle::B128;
//   tle::rt::TensorMap map = tle::rt::encodeTensorMapTiled(d);
//   kernel.launch(grid, stream, map, ...);  // a "nvTmaDesc" parameter, passed by value
//
// Order: shapes, strides, boxes and element strides are given outermost dimension first, as in
// Triton's TensorDescriptor and tl.make_tensor_descriptor (row-major: the last dimension is the
// contiguous one). The driver takes them innermost first; tensorMapEncodeArgs reverses them.
#pragma once

#include "tle/Runtime/Runtime.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tle::rt {

/// CUtensorMapDataType (cuda.h): the element type TMA copies. Values are the driver's.
enum class TensorMapDataType : int {
  UInt8 = 0,        ///< 1 byte (also i8, u8, i1)
  UInt16 = 1,       ///< 2 bytes (also i16, u16)
  UInt32 = 2,       ///< 4 bytes (u32)
  Int32 = 3,        ///< 4 bytes (i32)
  UInt64 = 4,       ///< 8 bytes (u64)
  Int64 = 5,        ///< 8 bytes (i64)
  Float16 = 6,      ///< 2 bytes (fp16)
  Float32 = 7,      ///< 4 bytes (fp32)
  Float64 = 8,      ///< 8 bytes (fp64)
  BFloat16 = 9,     ///< 2 bytes (bf16)
  Float32Ftz = 10,  ///< 4 bytes, denormals flushed (fp32_ftz)
  TFloat32 = 11,    ///< 4 bytes, fp32 rounded to tf32 (tf32)
  TFloat32Ftz = 12, ///< 4 bytes, tf32 with denormals flushed (tf32_ftz)
};

/// CUtensorMapInterleave: NONE for ordinary tensors; 16B / 32B for NC/8HWC8-style layouts.
enum class TensorMapInterleave : int { None = 0, B16 = 1, B32 = 2 };

/// CUtensorMapSwizzle: the shared-memory bank swizzle of the box; the span bounds the box's
/// inner dimension in bytes (32, 64, 128). Must match the shared layout the kernel assumes.
enum class TensorMapSwizzle : int { None = 0, B32 = 1, B64 = 2, B128 = 3 };

/// CUtensorMapL2promotion: the granularity of L2 fills from DRAM for the copies.
enum class TensorMapL2Promotion : int { None = 0, B64 = 1, B128 = 2, B256 = 3 };

/// CUtensorMapFloatOOBfill: what out-of-bounds elements of a box read as. Zero is the driver's
/// CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE (zeros); NanRequestZeroFma (a NaN that FMA treats as zero)
/// is allowed for floating-point types only.
enum class TensorMapOobFill : int { Zero = 0, NanRequestZeroFma = 1 };

/// The TMA element type for a runtime dtype name: i1 i8 u8 -> UInt8, i16 u16 -> UInt16,
/// i32 -> Int32, u32 -> UInt32, i64 -> Int64, u64 -> UInt64, fp16, bf16, fp32, fp64, and the
/// TMA-only spellings fp32_ftz, tf32, tf32_ftz. Throws ArgumentError for anything else (pointer
/// types included).
TLE_RT_API TensorMapDataType tensorMapDataType(std::string_view dtype);

/// The size of one element of `type`, bytes (1, 2, 4 or 8).
TLE_RT_API size_t tensorMapElementBytes(TensorMapDataType type);

/// A tiled tensor map to encode. Every array is outermost dimension first and has rank entries
/// (elementStrides may be empty); sizes and strides count elements, not bytes.
struct TensorMapDesc {
  DevicePtr base;                      ///< global address of element (0, ..., 0)
  std::string dtype = "fp32";          ///< element type, see tensorMapDataType
  std::vector<int64_t> shape;          ///< elements per dimension (rank 1..5)
  std::vector<int64_t> strides;        ///< elements between neighbours per dimension; last is 1
  std::vector<int64_t> box;            ///< box (tile) elements per dimension, 1..256 each
  std::vector<int64_t> elementStrides; ///< traversal step per dimension, 1..8 (empty: all 1)
  TensorMapInterleave interleave = TensorMapInterleave::None; ///< interleaved layout, if any
  TensorMapSwizzle swizzle = TensorMapSwizzle::None;          ///< shared-memory swizzle
  TensorMapL2Promotion l2Promotion = TensorMapL2Promotion::None; ///< L2 fill granularity
  TensorMapOobFill oobFill = TensorMapOobFill::Zero;          ///< out-of-bounds fill
};

/// The exact arguments of a cuTensorMapEncodeTiled call (innermost dimension first, as the
/// driver takes them). Entries at index >= rank are zero.
struct TensorMapEncodeArgs {
  TensorMapDataType dataType = TensorMapDataType::Float32; ///< tensorDataType
  uint32_t rank = 0;                                       ///< tensorRank, 1..5
  uint64_t globalAddress = 0;                              ///< globalAddress
  std::array<uint64_t, 5> globalDim{};     ///< globalDim: elements, innermost first
  std::array<uint64_t, 4> globalStrides{}; ///< globalStrides: bytes of dims 1..rank-1
  std::array<uint32_t, 5> boxDim{};        ///< boxDim: elements, innermost first
  std::array<uint32_t, 5> elementStrides{}; ///< elementStrides, innermost first
  TensorMapInterleave interleave = TensorMapInterleave::None; ///< interleave
  TensorMapSwizzle swizzle = TensorMapSwizzle::None;          ///< swizzle
  TensorMapL2Promotion l2Promotion = TensorMapL2Promotion::None; ///< l2Promotion
  TensorMapOobFill oobFill = TensorMapOobFill::Zero;          ///< oobFill
};

/// Checks `desc` against every rule of cuTensorMapEncodeTiled (CUDA driver API reference) and
/// returns the driver's arguments; needs no driver. Throws ArgumentError, "encodeTensorMapTiled: "
/// followed by the field, the value and the rule, when:
/// - the rank (shape.size()) is not in 1..5, or interleave is not None and the rank is below 3;
/// - strides, box or a non-empty elementStrides do not have rank entries;
/// - dtype is unknown (tensorMapDataType), or an enum field is out of range;
/// - base is null, or not 16-byte aligned (32-byte with TensorMapInterleave::B32);
/// - a shape entry is not in 1..2^32;
/// - the innermost stride is not 1, another stride is not positive, or a stride in bytes
///   (stride * element bytes) is not a multiple of 16 (32 with interleave B32) or not below 2^40;
/// - a box entry is not in 1..256, or, with interleave None, the box's inner dimension in bytes
///   (box.back() * element bytes) is not a multiple of 16, or exceeds the swizzle span
///   (32, 64 or 128 bytes) when swizzled;
/// - an element stride is not in 1..8;
/// - interleave is B32 and swizzle is not B32;
/// - oobFill is NanRequestZeroFma for an integer dtype.
TLE_RT_API TensorMapEncodeArgs tensorMapEncodeArgs(const TensorMapDesc &desc);

/// Validates `desc` (tensorMapEncodeArgs) and encodes it with the driver's
/// cuTensorMapEncodeTiled. Tensor maps are used by sm_90+ kernels. The driver encodes in the
/// calling thread's current context; on a thread with none (libtle_rt leaves a thread's context
/// as it found it), the context that owns `desc.base` is made current for the call and the
/// thread is left without one again.
/// Throws ArgumentError as tensorMapEncodeArgs (before any driver call), NoDriverError when the
/// driver cannot be used, Error when the driver lacks cuTensorMapEncodeTiled (drivers older than
/// CUDA 12.0), and DriverError naming the call and the arguments when the driver refuses them.
TLE_RT_API TensorMap encodeTensorMapTiled(const TensorMapDesc &desc);

} // namespace tle::rt
