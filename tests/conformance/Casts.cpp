// Family "cast": every pair of the 13 dtypes (i1 included) through .to() and tl.cast, with NaN,
// infinities, out-of-range values (float -> int saturates, NaN -> 0), halfway cases of fp16 /
// bf16 / fp32 and inputs that double rounding would get wrong (fp64 -> fp16, i64 -> fp32 / bf16);
// fp_downcast_rounding="rtz"; bitcasts.
#include "Families.h"

namespace tle::conformance {

namespace {

constexpr size_t kN = 128;

/// Source values for dtype `t`.
Buffer castInputs(DType t) {
  Rng rng(uint64_t(t) + 2024);
  if (!isFloatT(t))
    return randomBuffer(t, kN, rng);
  Buffer b(t, kN);
  const long double fixed[] = {
      0.0L, -0.0L, INFINITY, -INFINITY, NAN, 0.5L, -0.5L, 1.5L, 2.5L, -2.5L, 127.9L, 128.0L, -128.0L, -129.5L,
      255.5L, 256.0L, 32767.0L, 32768.0L, -32769.0L, 65504.0L, 65519.0L, 65520.0L, 1e5L, -1e5L, 2147483520.0L,
      4294967040.0L, 3e9L, -3e9L, 1e19L, -1e19L, 1e30L, 3.4e38L, -3.4e38L, 1e-8L, -1e-8L, 6e-5L, 1e-40L,
      // halfway / double-rounding patterns (exact in fp64; rounded for narrower sources)
      1.0L + 0x1p-11L, 1.0L + 0x1p-11L + 0x1p-40L, 1.0L + 0x1p-8L, 1.0L + 0x1p-8L + 0x1p-30L, 1.0L + 3 * 0x1p-11L,
      1.0L + 0x1p-24L, 1.0L + 0x1p-24L + 0x1p-50L, 1.0L + 3 * 0x1p-24L, 0x1p-25L, 0x1p-24L + 0x1p-40L, 0x1p-150L,
      0x1p-149L + 0x1p-160L, 0x1.fffffep127L + 0x1p102L, 0x1.ffep15L + 0x1p3L};
  size_t nf = sizeof fixed / sizeof fixed[0];
  for (size_t i = 0; i < kN; ++i)
    b.setF(i, i < nf ? fixed[i] : (i % 3 == 0 ? rng.real(-300, 300) : rng.real(-2, 2) * std::ldexp(1.0, int(rng.range(-20, 40)))));
  return b;
}

void fromSource(Suite &s, DType from) {
  Buffer x = castInputs(from);
  if (!isFloatT(from)) { // integer patterns that break double rounding to fp32 / bf16
    const uint64_t pats[] = {(1ull << 60) + (1ull << 36) + 1, (1ull << 62) + (1ull << 38) + 1, (1ull << 24) + 1,
                             (1ull << 53) + 1, ~0ull, 1ull << 63, (1ull << 63) - 1, (1ull << 31), 0};
    for (size_t k = 0; k < 9; ++k)
      x.setI(k + 1, pats[k]);
  }
  s.add(castBatch("cast/from_" + tag(from), "cast/", x, from, kAllDTypes, /*alternate=*/true));
}

void roundingModes(Suite &s) {
  const std::pair<DType, DType> pairs[] = {{DType::F32, DType::F16}, {DType::F32, DType::BF16}, {DType::F64, DType::F32},
                                           {DType::F64, DType::F16}, {DType::F64, DType::BF16}};
  for (auto [from, to] : pairs) {
    Buffer x = castInputs(from);
    Run run;
    run.args = {Arg::buf(x), Arg::buf(Buffer(to, kN)), Arg::buf(Buffer(to, kN))};
    Buffer rtz(to, kN), rtne(to, kN);
    for (size_t i = 0; i < kN; ++i) {
      store(rtz, i, castVal(elem(x, i), from, to, true));
      store(rtne, i, castVal(elem(x, i), from, to, false));
    }
    std::string nm = tag(from) + "->" + tag(to);
    expect(run, 1, "cast/rtz/" + nm, rtz);
    expect(run, 2, "cast/rtne/" + nm, rtne);
    Batch b;
    b.name = "cast/rounding/" + nm;
    b.source = module(subst("@triton.jit\ndef k(x_ptr, o_rtz, o_rtne, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                            "    x = tl.load(x_ptr + offs)\n"
                            "    tl.store(o_rtz + offs, x.to({T}, fp_downcast_rounding=\"rtz\"))\n"
                            "    tl.store(o_rtne + offs, tl.cast(x, {T}, fp_downcast_rounding=\"rtne\"))\n",
                            {{"T", tlName(to)}}));
    b.signature = ptrSig({from, to, to}, std::to_string(kN));
    b.runs.push_back(std::move(run));
    s.add(std::move(b));
  }
}

void bitcasts(Suite &s) {
  const std::pair<DType, DType> pairs[] = {{DType::F32, DType::I32}, {DType::I32, DType::F32}, {DType::F16, DType::I16},
                                           {DType::BF16, DType::U16}, {DType::U16, DType::F16}, {DType::F64, DType::I64},
                                           {DType::I64, DType::F64}, {DType::I32, DType::U32}, {DType::U8, DType::I8},
                                           {DType::F16, DType::BF16}};
  for (auto [from, to] : pairs) {
    Buffer x = castInputs(from);
    Buffer want(to, kN);
    for (size_t i = 0; i < kN; ++i)
      want.setBits(i, x.bits(i));
    Run run;
    run.args = {Arg::buf(x), Arg::buf(Buffer(to, kN))};
    expect(run, 1, "cast/bitcast/" + tag(from) + "->" + tag(to), want);
    Batch b;
    b.name = "cast/bitcast/" + tag(from) + "->" + tag(to);
    b.source = module(subst("@triton.jit\ndef k(x_ptr, o_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                            "    tl.store(o_ptr + offs, tl.load(x_ptr + offs).to({T}, bitcast=True))\n",
                            {{"T", tlName(to)}}));
    b.signature = ptrSig({from, to}, std::to_string(kN));
    b.runs.push_back(std::move(run));
    s.add(std::move(b));
  }
  Batch e;
  e.name = "cast/bitcast/error_width";
  e.source = module("@triton.jit\ndef k(x_ptr, o_ptr):\n    offs = tl.arange(0, 16)\n"
                    "    tl.store(o_ptr + offs, tl.load(x_ptr + offs).to(tl.int16, bitcast=True))\n");
  e.signature = "*fp32, *i16";
  e.expectError = "bitcast";
  s.add(std::move(e));
}

} // namespace

void addCasts(Suite &s) {
  for (DType from : kAllDTypes)
    fromSource(s, from);
  roundingModes(s);
  bitcasts(s);
}

} // namespace tle::conformance
