// Independent reference arithmetic for the conformance suite: dtype facts, IEEE rounding to
// fp16 / bf16 / fp32 / TF32 written from the formats' definitions (long double intermediates,
// exact for every 64-bit integer and every double), two's-complement integer wrapping, Triton's
// promotion rules and a deterministic random generator. Nothing here calls the compiler.
#pragma once

#include "tle/IR/Types.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tle::conformance {

using ir::DType;

/// Every element dtype of the language, in a fixed order.
inline const std::vector<DType> kAllDTypes = {DType::I1,  DType::I8,  DType::I16, DType::I32, DType::I64,
                                              DType::U8,  DType::U16, DType::U32, DType::U64, DType::F16,
                                              DType::BF16, DType::F32, DType::F64};
/// The numeric dtypes (no i1) Triton's binary-op tests cover.
inline const std::vector<DType> kNumDTypes = {DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16,
                                              DType::U32, DType::U64, DType::F16, DType::BF16, DType::F32, DType::F64};
/// The integer dtypes (no i1).
inline const std::vector<DType> kIntDTypes = {DType::I8, DType::I16, DType::I32, DType::I64,
                                              DType::U8, DType::U16, DType::U32, DType::U64};
/// The float dtypes (fp8 apart: kFp8DTypes).
inline const std::vector<DType> kFloatDTypes = {DType::F16, DType::BF16, DType::F32, DType::F64};
/// The fp8 dtypes.
inline const std::vector<DType> kFp8DTypes = {DType::F8E4M3, DType::F8E5M2};

/// Bytes per element (i1 is one byte).
unsigned dsize(DType t);
/// Bits of the value (i1: 1).
unsigned dbits(DType t);
bool isFloatT(DType t);  ///< fp8e4nv, fp8e5, fp16, bf16, fp32, fp64
bool isFp8T(DType t);    ///< fp8e4nv, fp8e5
bool isSignedT(DType t); ///< i8..i64
/// The signature spelling: "i32", "u8", "fp16", "bf16", ...
std::string sigName(DType t);
/// The source spelling: "tl.int32", "tl.uint8", "tl.float16", "tl.bfloat16", ...
std::string tlName(DType t);
/// A short tag for case names: "i32", "u8", "f16", "bf16", "f32", ...
std::string tag(DType t);

/// A binary float format: `p` significand bits (with the implicit one), minimum normal exponent
/// `emin`, maximum exponent `emax`.
struct FloatFormat {
  int p, emin, emax;
};
inline constexpr FloatFormat kF16{11, -14, 15}, kBF16f{8, -126, 127}, kF32f{24, -126, 127}, kF64f{53, -1022, 1023},
    kTF32{11, -126, 127};

/// Rounds `x` to format `f`, to nearest with ties to even (or toward zero when `rtz`); overflow
/// gives infinity (rtz: the largest finite value); NaN stays NaN.
long double roundTo(long double x, FloatFormat f, bool rtz = false);
/// Rounds to nearest with ties away from zero (TF32 conversion `cvt.rna`).
long double roundToAway(long double x, FloatFormat f);
/// The bits of the fp16 / bf16 value `x`, which must be representable (or inf / NaN).
uint16_t encode16(long double x, FloatFormat f);
/// The value of fp16 / bf16 bits `h`.
long double decode16(uint16_t h, FloatFormat f);

/// The value of fp8 (fp8e4nv or fp8e5) bits `code`, decoded from the format's definition.
long double fp8Decode(uint8_t code, DType t);
/// The fp8 bits nearest `x` (ties to the even mantissa; toward zero with `rtz`), saturating to
/// +-largest finite for larger magnitudes and infinities; NaN gives 0x7F.
uint8_t fp8Encode(long double x, DType t, bool rtz = false);

/// Truncates the 64-bit two's-complement `v` to dtype `t` (integers and i1) and sign- or zero-
/// extends it back: the value an integer of dtype `t` holds.
uint64_t wrapInt(uint64_t v, DType t);
/// The exact value of the integer bits `v` (already wrapped to `t`) as long double.
long double intValue(uint64_t v, DType t);

/// Triton's promotion of two tile operands for arithmetic (computation_type_impl); `divMod` for
/// `/` and `%` (half types go to fp32). Returns Invalid for an error (mixed signedness `/ % //`).
DType promote(DType a, DType b, bool divMod = false);
/// Integer promotion (integer_promote_impl).
DType intPromote(DType a, DType b);

/// splitmix64: a small deterministic generator, the same on every machine.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x1234567ull) {}
  /// 64 random bits.
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform integer in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) { return lo + int64_t(next() % uint64_t(hi - lo + 1)); }
  /// Uniform real in [lo, hi).
  double real(double lo, double hi) { return lo + (hi - lo) * double(next() >> 11) * 0x1p-53; }
};

} // namespace tle::conformance
