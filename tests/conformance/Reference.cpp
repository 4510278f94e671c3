// Independent reference arithmetic (Reference.h).
#include "Reference.h"

#include <stdexcept>

namespace tle::conformance {

unsigned dsize(DType t) {
  switch (t) {
  case DType::I1: case DType::I8: case DType::U8: case DType::F8E4M3: case DType::F8E5M2: return 1;
  case DType::I16: case DType::U16: case DType::F16: case DType::BF16: return 2;
  case DType::I32: case DType::U32: case DType::F32: return 4;
  case DType::I64: case DType::U64: case DType::F64: return 8;
  default: throw std::logic_error("dsize: bad dtype");
  }
}

unsigned dbits(DType t) { return t == DType::I1 ? 1 : 8 * dsize(t); }

bool isFloatT(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64 || isFp8T(t);
}

bool isFp8T(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2; }

bool isSignedT(DType t) { return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64; }

std::string sigName(DType t) {
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
  default: throw std::logic_error("sigName: bad dtype");
  }
}

std::string tlName(DType t) {
  switch (t) {
  case DType::I1: return "tl.int1";
  case DType::I8: return "tl.int8";
  case DType::I16: return "tl.int16";
  case DType::I32: return "tl.int32";
  case DType::I64: return "tl.int64";
  case DType::U8: return "tl.uint8";
  case DType::U16: return "tl.uint16";
  case DType::U32: return "tl.uint32";
  case DType::U64: return "tl.uint64";
  case DType::F16: return "tl.float16";
  case DType::BF16: return "tl.bfloat16";
  case DType::F32: return "tl.float32";
  case DType::F64: return "tl.float64";
  case DType::F8E4M3: return "tl.float8e4nv";
  case DType::F8E5M2: return "tl.float8e5";
  default: throw std::logic_error("tlName: bad dtype");
  }
}

std::string tag(DType t) {
  std::string s = sigName(t);
  if (s.rfind("fp", 0) == 0)
    return "f" + s.substr(2);
  return s;
}

long double roundTo(long double x, FloatFormat f, bool rtz) {
  if (std::isnan(x) || std::isinf(x) || x == 0)
    return x;
  long double a = std::fabs(x);
  int e;
  std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1): the unbiased exponent is e - 1
  int exp = std::max(e - 1, f.emin);
  long double quantum = std::ldexp(1.0L, exp - (f.p - 1));
  long double q = a / quantum; // exact: a power-of-two scaling
  long double r = rtz ? std::trunc(q) : std::nearbyint(q); // the default rounding mode: ties to even
  long double v = r * quantum;
  long double maxFinite = std::ldexp(std::ldexp(1.0L, f.p) - 1, f.emax - (f.p - 1));
  if (v > maxFinite)
    v = rtz ? maxFinite : INFINITY;
  return x < 0 ? -v : v;
}

long double roundToAway(long double x, FloatFormat f) {
  if (std::isnan(x) || std::isinf(x) || x == 0)
    return x;
  long double a = std::fabs(x);
  int e;
  std::frexp(a, &e);
  int exp = std::max(e - 1, f.emin);
  long double quantum = std::ldexp(1.0L, exp - (f.p - 1));
  long double v = std::round(a / quantum) * quantum; // round(): halfway cases away from zero
  long double maxFinite = std::ldexp(std::ldexp(1.0L, f.p) - 1, f.emax - (f.p - 1));
  if (v > maxFinite)
    v = INFINITY;
  return x < 0 ? -v : v;
}

uint16_t encode16(long double x, FloatFormat f) {
  int manBits = f.p - 1;
  int expBits = f.emax == 15 ? 5 : 8;
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  uint16_t expAll = uint16_t(((1 << expBits) - 1) << manBits);
  if (std::isnan(x))
    return uint16_t(expAll | (1 << (manBits - 1)) | sign);
  long double a = std::fabs(x);
  if (std::isinf(a))
    return uint16_t(expAll | sign);
  if (a == 0)
    return sign;
  int e;
  std::frexp(a, &e);
  int exp = e - 1;
  if (exp < f.emin) { // subnormal
    long double m = a / std::ldexp(1.0L, f.emin - manBits);
    return uint16_t(sign | uint16_t(m));
  }
  long double m = a / std::ldexp(1.0L, exp - manBits) - std::ldexp(1.0L, manBits);
  int biased = exp + (1 << (expBits - 1)) - 1;
  return uint16_t(sign | (biased << manBits) | uint16_t(m));
}

long double decode16(uint16_t h, FloatFormat f) {
  int manBits = f.p - 1;
  int expBits = f.emax == 15 ? 5 : 8;
  int e = (h >> manBits) & ((1 << expBits) - 1), m = h & ((1 << manBits) - 1);
  long double v;
  if (e == (1 << expBits) - 1)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = std::ldexp((long double)m, f.emin - manBits);
  else
    v = std::ldexp((long double)((1 << manBits) + m), e - (1 << (expBits - 1)) + 1 - manBits);
  return (h & 0x8000) ? -v : v;
}

uint64_t wrapInt(uint64_t v, DType t) {
  unsigned b = dbits(t);
  if (b == 64)
    return v;
  uint64_t mask = (uint64_t(1) << b) - 1;
  v &= mask;
  if (isSignedT(t) && (v >> (b - 1)) & 1)
    v |= ~mask;
  return v;
}

long double intValue(uint64_t v, DType t) {
  return isSignedT(t) ? (long double)(int64_t)v : (long double)v;
}

DType intPromote(DType a, DType b) {
  unsigned wa = dbits(a), wb = dbits(b);
  bool sa = isSignedT(a), sb = isSignedT(b);
  if (sa == sb)
    return wa >= wb ? a : b;
  DType u = sa ? b : a, s = sa ? a : b;
  return dbits(u) >= dbits(s) ? u : s;
}

// fp8 from the OCP 8-bit floating point specification: e4m3 (fp8e4nv) has bias 7, no
// infinities and only S.1111.111 as NaN; e5m2 (fp8e5) has bias 15 and IEEE infinities and NaNs.
long double fp8Decode(uint8_t code, DType t) {
  bool e4 = t == DType::F8E4M3;
  int manBits = e4 ? 3 : 2, bias = e4 ? 7 : 15;
  int e = (code & 0x7F) >> manBits, m = code & ((1 << manBits) - 1);
  long double v;
  if (e4 && (code & 0x7F) == 0x7F)
    v = NAN;
  else if (!e4 && e == 31)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = std::ldexp((long double)m, 1 - bias - manBits);
  else
    v = std::ldexp((long double)((1 << manBits) + m), e - bias - manBits);
  return (code & 0x80) ? -v : v;
}

uint8_t fp8Encode(long double x, DType t, bool rtz) {
  // A search over the finite non-negative codes (their values increase with the code).
  const int maxCode = t == DType::F8E4M3 ? 0x7E : 0x7B;
  if (std::isnan(x))
    return 0x7F;
  uint8_t sign = std::signbit(x) ? 0x80 : 0;
  long double a = std::fabs(x);
  int c = 0;
  while (c < maxCode && fp8Decode(uint8_t(c + 1), t) <= a)
    ++c;
  if (c < maxCode && fp8Decode(uint8_t(c), t) != a && !rtz) {
    long double lo = a - fp8Decode(uint8_t(c), t), hi = fp8Decode(uint8_t(c + 1), t) - a;
    if (hi < lo || (hi == lo && (c & 1)))
      ++c; // nearer, or a tie and c + 1 has the even mantissa
  }
  return uint8_t(c | sign); // beyond the largest finite value (infinity too): saturated
}

DType promote(DType a, DType b, bool divMod) {
  if (a == DType::F64 || b == DType::F64)
    return DType::F64;
  if (a == DType::F32 || b == DType::F32)
    return DType::F32;
  if (a == DType::F16 || b == DType::F16)
    return divMod ? DType::F32 : DType::F16;
  if (a == DType::BF16 && b == DType::BF16)
    return divMod ? DType::F32 : DType::BF16;
  if (a == DType::BF16 || b == DType::BF16)
    return DType::F32;
  if (isFp8T(a) && isFp8T(b))
    return a == b ? a : DType::F16;
  if (isFp8T(a) || isFp8T(b))
    return DType::Invalid;
  if (divMod && isSignedT(a) != isSignedT(b))
    return DType::Invalid;
  return intPromote(a, b);
}

} // namespace tle::conformance
