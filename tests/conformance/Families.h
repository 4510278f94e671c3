// Helpers shared by the family files: input generators and Triton's conversion rules as
// reference arithmetic on buffer elements.
#pragma once

#include "Harness.h"

#include <limits>

namespace tle::conformance {

/// The float format of fp16 / bf16 / fp32 / fp64.
FloatFormat fmtOf(DType t);

/// A reference value: an integer (two's-complement bits, already wrapped to its dtype) or a real.
struct Val {
  bool isF = false;
  uint64_t i = 0;
  long double f = 0;
  static Val ofF(long double v) { Val x; x.isF = true; x.f = v; return x; }
  static Val ofI(uint64_t v) { Val x; x.i = v; return x; }
};

/// Element `i` of `b` as a value of its own dtype.
Val elem(const Buffer &b, size_t i);
/// Triton's cast of `v` (of dtype `from`) to dtype `to`: integers wrap (sign-extending signed
/// sources); int -> float and float -> narrower float round to nearest even (or toward zero
/// with `rtz`); float -> int truncates toward zero, saturating, NaN -> 0 (TLE's defined
/// behaviour on both targets); anything -> i1 is `!= 0`.
Val castVal(Val v, DType from, DType to, bool rtz = false);
/// Stores `v` (of dtype `t`) into element `i` of `out` (of dtype `t`).
void store(Buffer &out, size_t i, Val v);

/// `n` random values of dtype `t`: integers over the whole range mixed with small values
/// (-20..20 or 0..40); floats uniform in [-range, range) with, when `specials`, a few of
/// +-0, +-inf, NaN, subnormals and extremes at fixed positions.
Buffer randomBuffer(DType t, size_t n, Rng &rng, double range = 100, bool specials = false);
/// Small integers in [lo, hi] as dtype `t` (rounded for floats).
Buffer smallInts(DType t, size_t n, Rng &rng, int64_t lo, int64_t hi);

/// A batch that loads `x` (of dtype `from`, a power-of-two length) and stores it cast to each of
/// `tos`, one output buffer each, with a case "<casePrefix><tag(from)>-><tag(to)>" per output
/// against castVal. `alternate`: every other cast is spelled tl.cast(x, T) instead of x.to(T).
Batch castBatch(const std::string &name, const std::string &casePrefix, const Buffer &x, DType from,
                const std::vector<DType> &tos, bool alternate);

/// "*i8, *fp32, ..." for the given pointer dtypes followed by `tail` entries.
std::string ptrSig(const std::vector<DType> &ptrs, const std::string &tail = "");

} // namespace tle::conformance
