// Tile IR types: scalar dtypes (Triton's names), global pointers, and tiles (blocks) of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tle::ir {

/// Element types, spelled as in Triton's signature strings (i1, i8, ..., fp32, bf16).
/// `Ptr` is a pointer into global memory; its pointee is kept in ScalarType::pointee.
/// The 8-bit floats are OCP FP8 (Triton's names): F8E4M3 is `fp8e4nv` (tl.float8e4nv: e4m3fn,
/// bias 7, no infinities, NaN = S.1111.111, largest finite 448) and F8E5M2 is `fp8e5`
/// (tl.float8e5: e5m2, bias 15, IEEE-like with infinities, largest finite 57344).
enum class DType : uint8_t { Invalid, I1, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, Ptr, F8E4M3, F8E5M2 };

bool isInteger(DType t);  ///< i1..i64 and u8..u64 (i1 counts as an integer: Triton's bool).
bool isSigned(DType t);   ///< i8..i64 (i1 is unsigned in Triton's promotion rules).
bool isUnsigned(DType t); ///< i1, u8..u64.
bool isFloat(DType t);    ///< fp8e4nv, fp8e5, fp16, bf16, fp32, fp64.
/// fp8e4nv and fp8e5. Tile IR arithmetic never takes them: ir::Builder computes in fp32 and
/// rounds back (see Builder::binary); only memory, shape, select and cast ops carry their bits.
bool isFP8(DType t);
/// Mantissa bits without the implicit one (Triton's fp_mantissa_width): 3, 2, 10, 7, 23, 52.
unsigned mantissaBits(DType t);
/// The fp8 value `bits` as a double (exact; NaN for the NaN encodings).
double fp8ToDouble(uint8_t bits, DType t);
/// `x` rounded to the fp8 dtype `t`, to nearest even or toward zero, saturating as PTX
/// `cvt.rn.satfinite` (PTX ISA §9.7.9.21, what Triton emits on sm_89+): NaN stays NaN, finite
/// results beyond the largest finite value and infinities become +-largest finite.
uint8_t fp8FromDouble(double x, DType t, bool towardZero = false);
unsigned bitWidth(DType t); ///< bits of one element; pointers are 64.
/// Bytes of one element in memory: i1 is stored as one byte, pointers take 8.
unsigned storageBytes(DType t);
/// Triton's spelling ("fp32", "i32", "u8", "bf16"); "ptr" for a pointer.
const char *name(DType t);
/// Parses Triton's spelling (also the alias "u1" for i1); nullopt if unknown. Triton's signature
/// alias "B" for i1 is the signature parser's alone, since "B" is also a common constexpr name.
std::optional<DType> parseDType(std::string_view s);
/// The one dtype vocabulary of the command lines (tlec -s, tle-run's --arg generators, tle-bench):
/// Triton's spelling or its short and NumPy / torch names: "fp32"/"f32"/"float32"/"float",
/// "fp16"/"f16"/"float16"/"half", "bf16"/"bfloat16", "fp64"/"f64"/"float64"/"double",
/// "i8".."i64"/"int8".."int64", "u8".."u64"/"uint8".."uint64", "i1"/"bool",
/// "fp8e4nv"/"float8e4nv"/"float8_e4m3fn", "fp8e5"/"float8e5"/"float8_e5m2"; nullopt if unknown.
std::optional<DType> parseDTypeName(std::string_view s);
/// The integer dtype of `bits` width and signedness, e.g. (32, true) -> I32.
DType intDType(unsigned bits, bool isSigned);

/// The memory a pointer addresses (PTX ISA §5.1, state spaces):
/// - Global: global memory, the only kind Triton's pointers have (`.global`).
/// - Shared: the CTA's own shared memory, from tle.gpu.local_ptr (`.shared::cta`).
/// - Cluster: the shared memory of a CTA of the thread-block cluster (distributed shared
///   memory, sm_90+), from tle.remote (`.shared::cluster`; PTX ISA §9.7.9.24, mapa).
enum class AddrSpace : uint8_t { Global, Shared, Cluster };
/// "global", "shared", "cluster".
const char *name(AddrSpace s);

/// A scalar type: a dtype, or a pointer to a dtype in an address space.
struct ScalarType {
  DType dtype = DType::Invalid;
  DType pointee = DType::Invalid; ///< set only when dtype == Ptr
  AddrSpace space = AddrSpace::Global; ///< meaningful only when dtype == Ptr
  bool isPointer() const { return dtype == DType::Ptr; }
  static ScalarType ptrTo(DType d, AddrSpace s = AddrSpace::Global) { return {DType::Ptr, d, s}; }
  bool operator==(const ScalarType &o) const {
    return dtype == o.dtype && pointee == o.pointee && (dtype != DType::Ptr || space == o.space);
  }
  bool operator!=(const ScalarType &o) const { return !(*this == o); }
  /// "fp32", "*fp16" (global), "*fp32_shared", "*fp32_cluster".
  std::string str() const;
};

/// A value type: a scalar (empty shape) or a tile of `shape` (every dim a power of two,
/// at most 2^20 elements in total; dims of size 1 are allowed).
struct Type {
  ScalarType elem;
  std::vector<int64_t> shape;

  Type() = default;
  Type(ScalarType e, std::vector<int64_t> s = {}) : elem(e), shape(std::move(s)) {}
  static Type scalar(DType d) { return Type(ScalarType{d}); }

  bool isTile() const { return !shape.empty(); }
  bool isScalar() const { return shape.empty(); }
  unsigned rank() const { return static_cast<unsigned>(shape.size()); }
  int64_t numElements() const; ///< saturated as ir::numElements
  DType dtype() const { return elem.dtype; }
  /// The same shape with another element type.
  Type withElem(ScalarType e) const { return Type(e, shape); }
  bool operator==(const Type &o) const { return elem == o.elem && shape == o.shape; }
  bool operator!=(const Type &o) const { return !(*this == o); }
  /// "fp32", "tile<1024xfp32>", "tile<64x64x*fp16>".
  std::string str() const;
};

/// Largest number of elements a tile may hold (Triton's TRITON_MAX_TENSOR_NUMEL).
inline constexpr int64_t kMaxTileElements = int64_t(1) << 20;

/// The most elements one tile value may put in each thread's registers on the GPU target (its
/// backend checks it): 8 times what the register file holds (255 registers), far past the point
/// where ptxas spills nearly all of it to local memory, and where LLVM's compile time grows
/// without bound (2^20 elements over 128 threads: 8192 per thread, two minutes of code generation).
inline constexpr int64_t kMaxElementsPerThread = 2048;

/// The number of elements of a tile of `shape` (1 for a scalar), saturated at INT64_MAX when the
/// product overflows int64 or a dim is negative, so that checks against kMaxTileElements never wrap.
int64_t numElements(const std::vector<int64_t> &shape);

/// Empty when a tile of `shape` holds at most kMaxTileElements elements; otherwise the end of a
/// diagnostic, "67108864 elements, which exceeds the limit of 1048576" ("more than
/// 9223372036854775807 elements, ..." when the count overflows int64).
std::string tileLimitError(const std::vector<int64_t> &shape);

} // namespace tle::ir
