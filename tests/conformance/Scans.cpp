// Family "scan": tl.cumsum and tl.cumprod along each axis of 1-D and 2-D tiles, forward and
// reverse, over integer and float dtypes (8/16-bit integer cumsums in 32 bits and bf16 scans in
// fp32, as Triton's standard.py picks; cumprod wraps in the input's integer dtype),
// against a sequential reference in index order (the CPU target's documented order).
#include "Families.h"

namespace tle::conformance {

namespace {

/// cumsum's dtype: bf16 runs in fp32, narrow integers in 32 bits (cumprod: only the bf16 rule).
DType scanDType(DType t, bool prod) {
  if (t == DType::BF16)
    return DType::F32;
  if (!prod && !isFloatT(t) && dbits(t) < 32)
    return isSignedT(t) ? DType::I32 : DType::U32;
  return t;
}

/// One batch: a [M, N] tile scanned along both axes and an L-element 1-D tile, forward and
/// reverse. `suffix` names the size variant.
void scanCase(Suite &s, bool prod, DType t, int M = 4, int N = 32, int L = 64, const std::string &suffix = "") {
  Rng rng(uint64_t(t) * 3 + (prod ? 1 : 0) + 555 + uint64_t(L));
  DType r = scanDType(t, prod);
  auto data = [&](size_t n) {
    Buffer b(t, n);
    for (size_t i = 0; i < n; ++i) {
      if (isFloatT(t))
        b.setF(i, prod ? rng.real(0.8, 1.25) : rng.real(-1, 1));
      else if (prod)
        b.setF(i, (long double)rng.range(isSignedT(t) ? -3 : 1, 3)); // wraps in narrow types, exactly as the reference
      else
        b.setI(i, rng.next() % 3 == 0 ? rng.next() : uint64_t(rng.range(isSignedT(t) ? -50 : 0, 50)));
    }
    return b;
  };
  Buffer x2 = data(size_t(M * N)), x1 = data(size_t(L));
  // Sequential scan of x (shape rows x cols) along `axis`, optionally reversed.
  auto ref = [&](const Buffer &x, int rows, int cols, int axis, bool reverse) {
    Buffer out(r, size_t(rows * cols));
    int outer = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
    for (int o = 0; o < outer; ++o) {
      Val acc;
      for (int step = 0; step < len; ++step) {
        int k = reverse ? len - 1 - step : step;
        size_t idx = axis == 0 ? size_t(k * cols + o) : size_t(o * cols + k);
        Val v = castVal(elem(x, idx), t, r);
        if (step == 0)
          acc = v;
        else if (isFloatT(r)) {
          long double z = prod ? acc.f * v.f : acc.f + v.f;
          acc.f = r == DType::F64 ? (long double)(prod ? double(acc.f) * double(v.f) : double(acc.f) + double(v.f))
                                  : roundTo(z, fmtOf(r));
        } else {
          acc.i = wrapInt(prod ? acc.i * v.i : acc.i + v.i, r);
        }
        store(out, idx, acc);
      }
    }
    return out;
  };
  const char *op = prod ? "cumprod" : "cumsum";
  std::string nm = std::string("scan/") + op + "/" + tag(t) + suffix;
  Tol gpu = isFloatT(r) ? Tol::close(1e-2 * (r == DType::F16 || r == DType::BF16 ? 1 : 1e-3), 0.05 * (r == DType::BF16 ? 4 : 1) * (r == DType::F16 || r == DType::BF16 ? 1 : 1e-3))
                        : Tol::exact();
  Run run;
  run.args = {Arg::buf(x2), Arg::buf(x1)};
  std::vector<std::pair<std::string, Buffer>> outs = {
      {"1d", ref(x1, 1, L, 1, false)},          {"1d_reverse", ref(x1, 1, L, 1, true)},
      {"2d_axis0", ref(x2, M, N, 0, false)},    {"2d_axis1", ref(x2, M, N, 1, false)},
      {"2d_axis1_reverse", ref(x2, M, N, 1, true)}, {"2d_axis0_reverse", ref(x2, M, N, 0, true)}};
  for (auto &[name, want] : outs) {
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(r, want.size())));
    expect(run, idx, nm + "/" + name, want, Tol::exact(), gpu);
  }
  Batch b;
  b.name = nm;
  b.source = module(subst(
      "@triton.jit\ndef k(x2_ptr, x1_ptr, o1, o1r, o20, o21, o21r, o20r, M: tl.constexpr, N: tl.constexpr, L: tl.constexpr):\n"
      "    l = tl.arange(0, L)\n    z = tl.load(x1_ptr + l)\n    c = tl.{OP}(z, 0)\n    tl.static_assert(c.dtype == {R})\n"
      "    tl.store(o1 + l, c)\n    tl.store(o1r + l, tl.{OP}(z, axis=0, reverse=True))\n"
      "    i = tl.arange(0, M)\n    j = tl.arange(0, N)\n    idx = i[:, None] * N + j[None, :]\n    x = tl.load(x2_ptr + idx)\n"
      "    tl.store(o20 + idx, tl.{OP}(x, axis=0))\n    tl.store(o21 + idx, tl.{OP}(x, axis=1))\n"
      "    tl.store(o21r + idx, tl.{OP}(x, axis=1, reverse=True))\n    tl.store(o20r + idx, x.{OP}(0, reverse=True))\n",
      {{"OP", op}, {"R", tlName(r)}}));
  b.signature = ptrSig({t, t, r, r, r, r, r, r}, std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(L));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

} // namespace

void addScans(Suite &s) {
  const std::vector<DType> types = {DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U32,
                                    DType::U64, DType::F16, DType::BF16, DType::F32, DType::F64};
  for (bool prod : {false, true})
    for (DType t : types)
      scanCase(s, prod, t);
  // Tiles larger than a warp's lanes: on the GPU the scan crosses registers, lanes and warps
  // (a 2048-element row over 4 warps holds 4 chunks of 512 per thread block).
  for (bool prod : {false, true})
    for (DType t : {DType::I32, DType::F32})
      scanCase(s, prod, t, 16, 256, 2048, "/large");
}

} // namespace tle::conformance
