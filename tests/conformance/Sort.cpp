// Family "sort": tl.sort (ascending and descending, along the last dim of 1-D and 2-D tiles,
// every numeric dtype, duplicates, infinities and signed zeros) and tl.histogram (with values
// outside the bins, and a mask), against std::sort and counting loops; and their errors.
#include "Families.h"

#include <algorithm>

namespace tle::conformance {

namespace {

/// tl.sort of a [R, N] tile along dim 1 and of its first row as a 1-D tile, both orders.
void sortCase(Suite &s, DType t, int R, int N, int warps, const std::string &suffix) {
  Rng rng(uint64_t(t) * 17 + uint64_t(R * N));
  bool fl = isFloatT(t);
  Buffer x(t, size_t(R * N));
  for (size_t i = 0; i < x.size(); ++i) {
    uint64_t pick = rng.next() % 16;
    if (fl && pick == 0)
      x.setF(i, (rng.next() & 1) ? std::numeric_limits<long double>::infinity() : -std::numeric_limits<long double>::infinity());
    else if (fl && pick == 1)
      x.setF(i, (rng.next() & 1) ? 0.0L : -0.0L);
    else if (pick < 6) // duplicates
      x.setF(i, (long double)rng.range(isSignedT(t) || fl ? -3 : 0, 3));
    else if (fl)
      x.setF(i, (long double)rng.real(-1000, 1000));
    else
      x.setI(i, rng.next());
  }
  auto sorted = [&](int rows, bool desc) {
    Buffer out(t, size_t(rows * N));
    for (int r = 0; r < rows; ++r) {
      std::vector<long double> v;
      for (int c = 0; c < N; ++c)
        v.push_back(x.getF(size_t(r * N + c)));
      std::stable_sort(v.begin(), v.end());
      if (desc)
        std::reverse(v.begin(), v.end());
      for (int c = 0; c < N; ++c)
        out.setF(size_t(r * N + c), v[size_t(c)]);
    }
    return out;
  };
  std::string nm = "sort/" + tag(t) + suffix;
  Run run;
  run.args = {Arg::buf(x)};
  // Equal values may come out in any order: -0 and +0 compare equal, so either sign is right.
  Tol tol = Tol::exact().anyZero();
  std::vector<std::pair<std::string, Buffer>> outs = {{"2d_ascending", sorted(R, false)},
                                                      {"2d_descending", sorted(R, true)},
                                                      {"1d_ascending", sorted(1, false)},
                                                      {"1d_descending_method", sorted(1, true)}};
  for (auto &[name, want] : outs) {
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(t, want.size())));
    expect(run, idx, nm + "/" + name, want, tol);
  }
  Batch b;
  b.name = nm;
  b.source = module(
      "@triton.jit\ndef k(x_ptr, a_ptr, d_ptr, a1_ptr, d1_ptr, R: tl.constexpr, N: tl.constexpr):\n"
      "    r = tl.arange(0, R)\n    c = tl.arange(0, N)\n    idx = r[:, None] * N + c[None, :]\n"
      "    x = tl.load(x_ptr + idx)\n"
      "    s = tl.sort(x)\n    tl.static_assert(s.dtype == x.dtype)\n    tl.store(a_ptr + idx, s)\n"
      "    tl.store(d_ptr + idx, tl.sort(x, dim=1, descending=True))\n"
      "    z = tl.load(x_ptr + c)\n    tl.store(a1_ptr + c, tl.sort(z, 0))\n"
      "    tl.store(d1_ptr + c, z.sort(descending=True))\n");
  b.signature = ptrSig({t, t, t, t, t}, std::to_string(R) + ", " + std::to_string(N));
  b.numWarps = warps;
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// tl.histogram of N values (some below 0 or at least `bins`, which are not counted), without
/// and with a mask.
void histogramCase(Suite &s, DType t, int N, int bins) {
  Rng rng(uint64_t(t) * 29 + uint64_t(N + bins));
  Buffer x(t, size_t(N)), m(DType::I1, size_t(N));
  for (int i = 0; i < N; ++i) {
    int64_t v = rng.next() % 8 == 0 ? rng.range(isSignedT(t) ? -5 : bins, bins + 5) : rng.range(0, bins - 1);
    x.setF(size_t(i), (long double)v);
    m.setI(size_t(i), rng.next() % 3 != 0);
  }
  Buffer all(DType::I32, size_t(bins)), masked(DType::I32, size_t(bins));
  for (int i = 0; i < N; ++i) {
    long double v = x.getF(size_t(i));
    if (v < 0 || v >= bins)
      continue;
    all.setI(size_t(v), all.getI(size_t(v)) + 1);
    if (m.getI(size_t(i)))
      masked.setI(size_t(v), masked.getI(size_t(v)) + 1);
  }
  std::string nm = "sort/histogram/" + tag(t) + "/" + std::to_string(N) + "x" + std::to_string(bins);
  Run run;
  run.args = {Arg::buf(x), Arg::buf(m), Arg::buf(Buffer(DType::I32, size_t(bins))), Arg::buf(Buffer(DType::I32, size_t(bins)))};
  expect(run, 2, nm + "/all", all);
  expect(run, 3, nm + "/masked", masked);
  Batch b;
  b.name = nm;
  b.source = module("@triton.jit\ndef k(x_ptr, m_ptr, h_ptr, hm_ptr, N: tl.constexpr, B: tl.constexpr):\n"
                    "    i = tl.arange(0, N)\n    x = tl.load(x_ptr + i)\n    j = tl.arange(0, B)\n"
                    "    h = tl.histogram(x, B)\n    tl.static_assert(h.dtype == tl.int32)\n    tl.store(h_ptr + j, h)\n"
                    "    tl.store(hm_ptr + j, x.histogram(B, mask=tl.load(m_ptr + i)))\n");
  b.signature = ptrSig({t, DType::I1, DType::I32, DType::I32}, std::to_string(N) + ", " + std::to_string(bins));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

void errorCases(Suite &s) {
  struct E {
    const char *name, *body, *error;
  };
  const E cases[] = {
      {"sort_dim0", "    x = tl.load(x_ptr + tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :])\n    r = tl.sort(x, dim=0)\n",
       "only supports the last dim"},
      {"sort_scalar", "    r = tl.sort(tl.load(x_ptr))\n", "sort() expects a tile"},
      {"histogram_bins", "    r = tl.histogram(tl.load(x_ptr + tl.arange(0, 16)), 10)\n", "num_bins must be a power of two"},
      {"histogram_float", "    r = tl.histogram(tl.load(x_ptr + tl.arange(0, 16)).to(tl.float32), 16)\n",
       "expects a 1-D integer tile"},
  };
  for (const E &e : cases) {
    Batch b;
    b.name = std::string("sort/error/") + e.name;
    b.source = module(std::string("@triton.jit\ndef k(x_ptr):\n") + e.body);
    b.signature = "*i32";
    b.expectError = e.error;
    s.add(std::move(b));
  }
}

} // namespace

void addSort(Suite &s) {
  for (DType t : {DType::I8, DType::U8, DType::I16, DType::I32, DType::U32, DType::I64, DType::U64, DType::F16,
                  DType::BF16, DType::F32, DType::F64})
    sortCase(s, t, 4, 32, 4, "");
  sortCase(s, DType::F32, 2, 2, 1, "/2");
  sortCase(s, DType::I32, 2, 128, 8, "/2x128_w8");
  sortCase(s, DType::F32, 8, 64, 2, "/8x64_w2");
  for (DType t : {DType::I32, DType::I64, DType::U8, DType::I8})
    histogramCase(s, t, 256, 16);
  histogramCase(s, DType::I32, 1024, 256);
  errorCases(s);
}

} // namespace tle::conformance
