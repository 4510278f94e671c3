// Shared helpers of the family files (Families.h).
#include "Families.h"

namespace tle::conformance {

FloatFormat fmtOf(DType t) {
  switch (t) {
  case DType::F16: return kF16;
  case DType::BF16: return kBF16f;
  case DType::F32: return kF32f;
  default: return kF64f;
  }
}

Val elem(const Buffer &b, size_t i) { return isFloatT(b.dtype) ? Val::ofF(b.getF(i)) : Val::ofI(b.getI(i)); }

Val castVal(Val v, DType from, DType to, bool rtz) {
  if (to == DType::I1)
    return Val::ofI(v.isF ? (v.f != 0 || std::isnan(v.f)) : (v.i != 0));
  if (isFp8T(to)) // one rounding from the exact source value
    return Val::ofF(fp8Decode(fp8Encode(v.isF ? v.f : intValue(v.i, from), to, rtz), to));
  if (isFloatT(to)) {
    long double x = v.isF ? v.f : intValue(v.i, from);
    if (to == DType::F64 && !v.isF)
      return Val::ofF((long double)(double)x); // hardware rounding from the exact long double
    return Val::ofF(roundTo(x, fmtOf(to), rtz));
  }
  if (!v.isF)
    return Val::ofI(wrapInt(v.i, to));
  // float -> int: truncate, saturate, NaN -> 0.
  long double x = v.f;
  if (std::isnan(x))
    return Val::ofI(0);
  x = std::trunc(x);
  unsigned b = dbits(to);
  if (isSignedT(to)) {
    long double lo = -std::ldexp(1.0L, int(b) - 1), hi = std::ldexp(1.0L, int(b) - 1) - 1;
    x = std::min(std::max(x, lo), hi);
    return Val::ofI(wrapInt(uint64_t(int64_t(x)), to));
  }
  long double hi = std::ldexp(1.0L, int(b)) - 1;
  x = std::min(std::max(x, 0.0L), hi);
  return Val::ofI(wrapInt(uint64_t(x), to));
}

Batch castBatch(const std::string &name, const std::string &casePrefix, const Buffer &x, DType from,
                const std::vector<DType> &tos, bool alternate) {
  size_t n = x.size();
  std::string body = "@triton.jit\ndef k(x_ptr, {OUTS}BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                     "    x = tl.load(x_ptr + offs)\n";
  std::string outs;
  std::vector<DType> ptrs = {from};
  Run run;
  run.args = {Arg::buf(x)};
  int k = 0;
  for (DType to : tos) {
    std::string o = "o_" + tag(to);
    outs += o + ", ";
    ptrs.push_back(to);
    body += subst(alternate && k % 2 == 0 ? "    tl.store({O} + offs, tl.cast(x, {T}))\n"
                                          : "    tl.store({O} + offs, x.to({T}))\n",
                  {{"O", o}, {"T", tlName(to)}});
    Buffer want(to, n);
    for (size_t i = 0; i < n; ++i)
      store(want, i, castVal(elem(x, i), from, to));
    run.args.push_back(Arg::buf(Buffer(to, n)));
    expect(run, 1 + k, casePrefix + tag(from) + "->" + tag(to), want);
    ++k;
  }
  Batch b;
  b.name = name;
  b.source = module(subst(body, {{"OUTS", outs}}));
  b.signature = ptrSig(ptrs, std::to_string(n));
  b.runs.push_back(std::move(run));
  return b;
}

void store(Buffer &out, size_t i, Val v) {
  if (v.isF)
    out.setF(i, v.f);
  else
    out.setI(i, v.i);
}

Buffer randomBuffer(DType t, size_t n, Rng &rng, double range, bool specials) {
  Buffer b(t, n);
  for (size_t i = 0; i < n; ++i) {
    if (t == DType::I1) {
      b.setI(i, rng.next() & 1);
    } else if (!isFloatT(t)) {
      uint64_t r = rng.next();
      if (i % 3 == 0)
        b.setI(i, r); // the whole range
      else if (isSignedT(t))
        b.setI(i, uint64_t(rng.range(-20, 20)));
      else
        b.setI(i, uint64_t(rng.range(0, 40)));
    } else {
      long double v = rng.real(-range, range);
      if (i % 4 == 1)
        v = std::round(v); // some integral values
      b.setF(i, v);
    }
  }
  if (specials && isFloatT(t) && n >= 16) {
    FloatFormat f = fmtOf(t);
    long double maxFinite = std::ldexp(std::ldexp(1.0L, f.p) - 1, f.emax - (f.p - 1));
    const long double sp[] = {0.0L, -0.0L, INFINITY, -INFINITY, NAN, std::ldexp(1.0L, f.emin - 3),
                              -std::ldexp(3.0L, f.emin - 2), maxFinite, -maxFinite, 1.0L};
    for (size_t k = 0; k < sizeof sp / sizeof sp[0]; ++k)
      b.setF((k * 7 + 3) % n, sp[k]);
  }
  return b;
}

Buffer smallInts(DType t, size_t n, Rng &rng, int64_t lo, int64_t hi) {
  Buffer b(t, n);
  for (size_t i = 0; i < n; ++i)
    b.setF(i, (long double)rng.range(lo, hi));
  return b;
}

std::string ptrSig(const std::vector<DType> &ptrs, const std::string &tail) {
  std::string s;
  for (DType t : ptrs)
    s += (s.empty() ? "*" : ", *") + sigName(t);
  if (!tail.empty())
    s += (s.empty() ? "" : ", ") + tail;
  return s;
}

} // namespace tle::conformance
