// Tile IR types.
#include "tle/IR/Types.h"

#include <llvm/ADT/APFloat.h>

#include <cmath>
#include <limits>

namespace tle::ir {

bool isInteger(DType t) {
  switch (t) {
  case DType::I1: case DType::I8: case DType::I16: case DType::I32: case DType::I64:
  case DType::U8: case DType::U16: case DType::U32: case DType::U64:
    return true;
  default:
    return false;
  }
}

bool isSigned(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}

bool isUnsigned(DType t) { return isInteger(t) && !isSigned(t); }

bool isFloat(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64 || isFP8(t);
}

bool isFP8(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2; }

unsigned mantissaBits(DType t) {
  switch (t) {
  case DType::F8E4M3: return 3;
  case DType::F8E5M2: return 2;
  case DType::F16: return 10;
  case DType::BF16: return 7;
  case DType::F32: return 23;
  case DType::F64: return 52;
  default: return 0;
  }
}

static const llvm::fltSemantics &fp8Semantics(DType t) {
  return t == DType::F8E4M3 ? llvm::APFloat::Float8E4M3FN() : llvm::APFloat::Float8E5M2();
}

double fp8ToDouble(uint8_t bits, DType t) {
  llvm::APFloat f(fp8Semantics(t), llvm::APInt(8, bits));
  bool lost = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost); // exact
  return f.convertToDouble();
}

uint8_t fp8FromDouble(double x, DType t, bool towardZero) {
  const double maxFinite = t == DType::F8E4M3 ? 448.0 : 57344.0;
  if (std::isnan(x))
    return t == DType::F8E4M3 ? 0x7F : 0x7E;
  if (std::fabs(x) > maxFinite) // saturate (also infinities), as cvt.satfinite
    x = std::copysign(maxFinite, x);
  llvm::APFloat f(x);
  bool lost = false;
  f.convert(fp8Semantics(t), towardZero ? llvm::APFloat::rmTowardZero : llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint8_t>(f.bitcastToAPInt().getZExtValue());
}

unsigned bitWidth(DType t) {
  switch (t) {
  case DType::I1: return 1;
  case DType::I8: case DType::U8: case DType::F8E4M3: case DType::F8E5M2: return 8;
  case DType::I16: case DType::U16: case DType::F16: case DType::BF16: return 16;
  case DType::I32: case DType::U32: case DType::F32: return 32;
  case DType::I64: case DType::U64: case DType::F64: case DType::Ptr: return 64;
  case DType::Invalid: return 0;
  }
  return 0;
}

unsigned storageBytes(DType t) { return t == DType::I1 ? 1 : bitWidth(t) / 8; }

const char *name(DType t) {
  switch (t) {
  case DType::I1: return "i1";
  case DType::I8: return "i8";
  case DType::I16: return "i16";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::U8: return "u8";
  case DType::U16: return "u16";
  case DType::U32: return "u32";
  case DType::U64: return "u64";
  case DType::F16: return "fp16";
  case DType::BF16: return "bf16";
  case DType::F32: return "fp32";
  case DType::F64: return "fp64";
  case DType::F8E4M3: return "fp8e4nv";
  case DType::F8E5M2: return "fp8e5";
  case DType::Ptr: return "ptr";
  case DType::Invalid: return "<invalid>";
  }
  return "<invalid>";
}

std::optional<DType> parseDType(std::string_view s) {
  static const std::pair<const char *, DType> table[] = {
      {"i1", DType::I1},   {"u1", DType::I1},   {"i8", DType::I8},
      {"i16", DType::I16}, {"i32", DType::I32}, {"i64", DType::I64},  {"u8", DType::U8},
      {"u16", DType::U16}, {"u32", DType::U32}, {"u64", DType::U64},  {"fp16", DType::F16},
      {"bf16", DType::BF16}, {"fp32", DType::F32}, {"fp64", DType::F64},
      {"fp8e4nv", DType::F8E4M3}, {"fp8e5", DType::F8E5M2}};
  for (auto &[n, d] : table)
    if (s == n)
      return d;
  return std::nullopt;
}

std::optional<DType> parseDTypeName(std::string_view s) {
  static const std::pair<const char *, DType> table[] = {
      {"f16", DType::F16},  {"float16", DType::F16},  {"half", DType::F16},     {"bfloat16", DType::BF16},
      {"f32", DType::F32},  {"float32", DType::F32},  {"float", DType::F32},    {"f64", DType::F64},
      {"float64", DType::F64}, {"double", DType::F64}, {"int8", DType::I8},     {"int16", DType::I16},
      {"float8e4nv", DType::F8E4M3}, {"float8_e4m3fn", DType::F8E4M3}, {"float8e5", DType::F8E5M2},
      {"float8_e5m2", DType::F8E5M2},
      {"int32", DType::I32}, {"int64", DType::I64},   {"uint8", DType::U8},     {"uint16", DType::U16},
      {"uint32", DType::U32}, {"uint64", DType::U64}, {"bool", DType::I1}};
  for (auto &[n, t] : table)
    if (s == n)
      return t;
  return parseDType(s);
}

DType intDType(unsigned bits, bool sgn) {
  switch (bits) {
  case 1: return DType::I1;
  case 8: return sgn ? DType::I8 : DType::U8;
  case 16: return sgn ? DType::I16 : DType::U16;
  case 32: return sgn ? DType::I32 : DType::U32;
  case 64: return sgn ? DType::I64 : DType::U64;
  default: return DType::Invalid;
  }
}

const char *name(AddrSpace s) {
  switch (s) {
  case AddrSpace::Global: return "global";
  case AddrSpace::Shared: return "shared";
  case AddrSpace::Cluster: return "cluster";
  }
  return "?";
}

std::string ScalarType::str() const {
  if (isPointer())
    return std::string("*") + name(pointee) + (space == AddrSpace::Global ? "" : std::string("_") + name(space));
  return name(dtype);
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::numeric_limits<int64_t>::max();
    if (__builtin_mul_overflow(n, d, &n))
      return std::numeric_limits<int64_t>::max();
  }
  return n;
}

std::string tileLimitError(const std::vector<int64_t> &shape) {
  int64_t n = numElements(shape);
  if (n <= kMaxTileElements)
    return "";
  std::string count = n == std::numeric_limits<int64_t>::max() ? "more than " + std::to_string(n) : std::to_string(n);
  return count + " elements, which exceeds the limit of " + std::to_string(kMaxTileElements);
}

int64_t Type::numElements() const { return ir::numElements(shape); }

std::string Type::str() const {
  if (isScalar())
    return elem.str();
  std::string s = "tile<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + elem.str() + ">";
}

} // namespace tle::ir
