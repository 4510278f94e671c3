// Families "sort" and "gather": tl.sort (ascending and descending, along the last dim of 1-D and
// 2-D tiles, every numeric dtype, duplicates, infinities and signed zeros), tl.topk (the k
// largest, and with descending=False the k smallest, for k from 1 to the whole dim),
// tl.bitonic_merge (of bitonic rows, both orders), tl.histogram (with
// values outside the bins, and a mask) and tl.gather (both axes, index tiles of another size
// along the axis, indices outside the source giving 0, exact bits), against std::sort and
// counting and indexing loops; and their errors.
#include "Families.h"

#include <algorithm>

namespace tle::conformance {

namespace {

/// tl.sort of a [R, N] tile along dim 1 and of its first row as a 1-D tile, both orders.
/// Each row of x ([rows, N] of dtype t) sorted ascending (descending: reversed, largest first),
/// its first `keep` values kept: the reference of tl.sort (keep = N) and tl.topk.
Buffer sortedRows(const Buffer &x, DType t, int rows, int N, int keep, bool descending) {
  Buffer out(t, size_t(rows * keep));
  for (int r = 0; r < rows; ++r) {
    std::vector<long double> v;
    for (int c = 0; c < N; ++c)
      v.push_back(x.getF(size_t(r * N + c)));
    std::stable_sort(v.begin(), v.end());
    if (descending)
      std::reverse(v.begin(), v.end());
    for (int c = 0; c < keep; ++c)
      out.setF(size_t(r * keep + c), v[size_t(c)]);
  }
  return out;
}

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
  auto sorted = [&](int rows, bool desc) { return sortedRows(x, t, rows, N, N, desc); };
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

/// Random values with duplicates, infinities and signed zeros, as for the sort cases.
Buffer sortInput(DType t, size_t n, Rng &rng) {
  bool fl = isFloatT(t);
  Buffer x(t, n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t pick = rng.next() % 16;
    if (fl && pick == 0)
      x.setF(i, (rng.next() & 1) ? std::numeric_limits<long double>::infinity() : -std::numeric_limits<long double>::infinity());
    else if (fl && pick == 1)
      x.setF(i, (rng.next() & 1) ? 0.0L : -0.0L);
    else if (pick < 6)
      x.setF(i, (long double)rng.range(isSignedT(t) || fl ? -3 : 0, 3));
    else if (fl)
      x.setF(i, (long double)rng.real(-1000, 1000));
    else
      x.setI(i, rng.next());
  }
  return x;
}

/// tl.topk of a [R, N] tile (the K largest of each row, descending, and with descending=False
/// the K smallest, ascending) and of its first row as a 1-D tile (the method form).
void topkCase(Suite &s, DType t, int R, int N, int K, int warps) {
  Rng rng(uint64_t(t) * 23 + uint64_t(R * N + K));
  Buffer x = sortInput(t, size_t(R * N), rng);
  auto best = [&](int rows, bool largest) { return sortedRows(x, t, rows, N, K, largest); };
  std::string nm = "sort/topk/" + tag(t) + "/" + std::to_string(R) + "x" + std::to_string(N) + "_k" + std::to_string(K);
  Run run;
  run.args = {Arg::buf(x)};
  Tol tol = Tol::exact().anyZero(); // -0 and +0 compare equal: either may be kept
  std::vector<std::pair<std::string, Buffer>> outs = {
      {"2d_largest", best(R, true)}, {"2d_smallest", best(R, false)}, {"1d_largest_method", best(1, true)}};
  for (auto &[name, want] : outs) {
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(t, want.size())));
    expect(run, idx, nm + "/" + name, want, tol);
  }
  Batch b;
  b.name = nm;
  b.source = module(
      "@triton.jit\ndef k(x_ptr, l_ptr, s_ptr, l1_ptr, R: tl.constexpr, N: tl.constexpr, K: tl.constexpr):\n"
      "    r = tl.arange(0, R)\n    c = tl.arange(0, N)\n    kk = tl.arange(0, K)\n"
      "    x = tl.load(x_ptr + r[:, None] * N + c[None, :])\n"
      "    t = tl.topk(x, K)\n    tl.static_assert(t.dtype == x.dtype)\n"
      "    tl.store(l_ptr + r[:, None] * K + kk[None, :], t)\n"
      "    tl.store(s_ptr + r[:, None] * K + kk[None, :], tl.topk(x, K, dim=1, descending=False))\n"
      "    z = tl.load(x_ptr + c)\n    tl.store(l1_ptr + kk, z.topk(K))\n");
  b.signature = ptrSig({t, t, t, t}, std::to_string(R) + ", " + std::to_string(N) + ", " + std::to_string(K));
  b.numWarps = warps;
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// tl.bitonic_merge of [R, N] rows that rise then fall (or fall then rise): sorted rows.
void bitonicMergeCase(Suite &s, DType t, int R, int N) {
  Rng rng(uint64_t(t) * 31 + uint64_t(R * N));
  Buffer raw = sortInput(t, size_t(R * N), rng), x(t, size_t(R * N));
  Buffer asc(t, size_t(R * N)), desc(t, size_t(R * N));
  for (int r = 0; r < R; ++r) {
    std::vector<long double> v;
    for (int c = 0; c < N; ++c)
      v.push_back(raw.getF(size_t(r * N + c)));
    int split = int(rng.next() % uint64_t(N + 1)); // the peak (or valley) anywhere, ends included
    bool rise = r % 2 == 0;                          // rise then fall, or fall then rise
    auto up = [](long double a, long double b) { return a < b; };
    auto down = [](long double a, long double b) { return a > b; };
    if (rise) {
      std::sort(v.begin(), v.begin() + split, up);
      std::sort(v.begin() + split, v.end(), down);
    } else {
      std::sort(v.begin(), v.begin() + split, down);
      std::sort(v.begin() + split, v.end(), up);
    }
    for (int c = 0; c < N; ++c)
      x.setF(size_t(r * N + c), v[size_t(c)]);
    std::stable_sort(v.begin(), v.end());
    for (int c = 0; c < N; ++c) {
      asc.setF(size_t(r * N + c), v[size_t(c)]);
      desc.setF(size_t(r * N + N - 1 - c), v[size_t(c)]);
    }
  }
  std::string nm = "sort/bitonic_merge/" + tag(t);
  Run run;
  run.args = {Arg::buf(x), Arg::buf(Buffer(t, asc.size())), Arg::buf(Buffer(t, desc.size()))};
  Tol tol = Tol::exact().anyZero();
  expect(run, 1, nm + "/ascending", asc, tol);
  expect(run, 2, nm + "/descending", desc, tol);
  Batch b;
  b.name = nm;
  b.source = module(
      "@triton.jit\ndef k(x_ptr, u_ptr, d_ptr, R: tl.constexpr, N: tl.constexpr):\n"
      "    idx = tl.arange(0, R)[:, None] * N + tl.arange(0, N)[None, :]\n    x = tl.load(x_ptr + idx)\n"
      "    tl.store(u_ptr + idx, tl.bitonic_merge(x))\n"
      "    tl.store(d_ptr + idx, tl.bitonic_merge(x, dim=1, descending=True))\n");
  b.signature = ptrSig({t, t, t}, std::to_string(R) + ", " + std::to_string(N));
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

/// tl.gather of a [M, N] source with [K, N] indices along axis 0 and [M, K2] along axis 1; a
/// few indices fall outside the source (TLE: 0).
void gatherCase(Suite &s, DType t, DType it, int M, int N, int K, int K2) {
  Rng rng(uint64_t(t) * 41 + uint64_t(it) * 7 + uint64_t(M * N));
  Buffer src = randomBuffer(t, size_t(M * N), rng, 100, isFloatT(t));
  auto indices = [&](int rows, int cols, int limit) {
    Buffer b(it, size_t(rows * cols));
    for (size_t i = 0; i < b.size(); ++i) {
      int64_t v = rng.next() % 10 == 0 ? (isSignedT(it) && (rng.next() & 1) ? -1 - rng.range(0, 3) : limit + rng.range(0, 3))
                                       : rng.range(0, limit - 1);
      b.setI(i, uint64_t(v));
    }
    return b;
  };
  Buffer i0 = indices(K, N, M), i1 = indices(M, K2, N);
  Buffer g0(t, size_t(K * N)), g1(t, size_t(M * K2));
  auto inRange = [&](const Buffer &ix, size_t i, int limit, int64_t &v) {
    v = isSignedT(it) ? int64_t(ix.getI(i)) : int64_t(ix.getI(i) & (dbits(it) == 64 ? ~0ull : ((1ull << dbits(it)) - 1)));
    return !(isSignedT(it) || dbits(it) == 64) ? uint64_t(v) < uint64_t(limit) : v >= 0 && v < limit;
  };
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) {
      int64_t v;
      if (inRange(i0, size_t(k * N + j), M, v))
        g0.setBits(size_t(k * N + j), src.bits(size_t(v * N + j)));
    }
  for (int r = 0; r < M; ++r)
    for (int k = 0; k < K2; ++k) {
      int64_t v;
      if (inRange(i1, size_t(r * K2 + k), N, v))
        g1.setBits(size_t(r * K2 + k), src.bits(size_t(r * N + v)));
    }
  std::string nm = "gather/" + tag(t) + "/index_" + tag(it);
  Run run;
  run.args = {Arg::buf(src), Arg::buf(i0), Arg::buf(i1), Arg::buf(Buffer(t, g0.size())), Arg::buf(Buffer(t, g1.size()))};
  // Bit-exact: the gathered element is the source's (signed zeros and NaNs included).
  expect(run, 3, nm + "/axis0", g0);
  expect(run, 4, nm + "/axis1", g1);
  Batch b;
  b.name = nm;
  b.source = module("@triton.jit\ndef k(s_ptr, i0_ptr, i1_ptr, g0_ptr, g1_ptr, M: tl.constexpr, N: tl.constexpr,\n"
                    "      K: tl.constexpr, K2: tl.constexpr):\n"
                    "    m = tl.arange(0, M)\n    n = tl.arange(0, N)\n    k = tl.arange(0, K)\n    k2 = tl.arange(0, K2)\n"
                    "    x = tl.load(s_ptr + m[:, None] * N + n[None, :])\n"
                    "    i0 = tl.load(i0_ptr + k[:, None] * N + n[None, :])\n"
                    "    g = tl.gather(x, i0, 0)\n    tl.static_assert(g.dtype == x.dtype)\n"
                    "    tl.store(g0_ptr + k[:, None] * N + n[None, :], g)\n"
                    "    i1 = tl.load(i1_ptr + m[:, None] * K2 + k2[None, :])\n"
                    "    tl.store(g1_ptr + m[:, None] * K2 + k2[None, :], tl.gather(x, i1, axis=-1))\n");
  b.signature = ptrSig({t, it, it, t, t}, std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + ", " +
                                              std::to_string(K2));
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
      {"topk_k_pow2", "    r = tl.topk(tl.load(x_ptr + tl.arange(0, 16)), 6)\n", "k must be a power of two"},
      {"topk_k_large", "    r = tl.topk(tl.load(x_ptr + tl.arange(0, 16)), 32)\n", "between 1 and the size of the last dim"},
      {"topk_k_runtime", "    r = tl.topk(tl.load(x_ptr + tl.arange(0, 16)), tl.load(x_ptr))\n", "k must be a compile-time integer"},
      {"topk_dim0", "    x = tl.load(x_ptr + tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :])\n    r = tl.topk(x, 2, dim=0)\n",
       "only supports the last dim"},
      {"bitonic_merge_bool", "    r = tl.bitonic_merge(tl.load(x_ptr + tl.arange(0, 16)) > 0)\n", "expects numbers"},
      {"histogram_bins", "    r = tl.histogram(tl.load(x_ptr + tl.arange(0, 16)), 10)\n", "num_bins must be a power of two"},
      {"histogram_float", "    r = tl.histogram(tl.load(x_ptr + tl.arange(0, 16)).to(tl.float32), 16)\n",
       "expects a 1-D integer tile"},
      {"gather_rank", "    x = tl.load(x_ptr + tl.arange(0, 16))\n    r = tl.gather(x[:, None], x, 0)\n",
       "index must have the rank of src"},
      {"gather_sizes", "    x = tl.load(x_ptr + tl.arange(0, 16))[:, None]\n    r = tl.gather(tl.broadcast_to(x, (16, 4)), x, 0)\n",
       "must have equal sizes outside axis 0"},
      {"gather_float_index", "    x = tl.load(x_ptr + tl.arange(0, 16))\n    r = tl.gather(x, x.to(tl.float32), 0)\n",
       "index must be an integer tile"},
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
                  DType::BF16, DType::F32, DType::F64, DType::F8E4M3, DType::F8E5M2})
    sortCase(s, t, 4, 32, 4, "");
  sortCase(s, DType::F32, 2, 2, 1, "/2");
  sortCase(s, DType::I32, 2, 128, 8, "/2x128_w8");
  sortCase(s, DType::F32, 8, 64, 2, "/8x64_w2");
  for (DType t : {DType::I8, DType::U8, DType::I16, DType::I32, DType::U32, DType::I64, DType::U64, DType::F16,
                  DType::BF16, DType::F32, DType::F64, DType::F8E4M3, DType::F8E5M2})
    topkCase(s, t, 4, 32, 8, 4);
  topkCase(s, DType::F32, 4, 32, 1, 4);
  topkCase(s, DType::I32, 4, 32, 32, 4);
  topkCase(s, DType::F32, 2, 128, 2, 8);
  topkCase(s, DType::I64, 8, 64, 16, 2);
  topkCase(s, DType::F16, 1, 1024, 64, 4);
  for (DType t : {DType::I32, DType::U16, DType::F32, DType::F64, DType::BF16})
    bitonicMergeCase(s, t, 4, 32);
  for (DType t : {DType::I32, DType::I64, DType::U8, DType::I8})
    histogramCase(s, t, 256, 16);
  histogramCase(s, DType::I32, 1024, 256);
  gatherCase(s, DType::F32, DType::I32, 8, 32, 16, 8);
  gatherCase(s, DType::F16, DType::I64, 16, 16, 4, 32);
  gatherCase(s, DType::I8, DType::U8, 8, 16, 8, 16);
  gatherCase(s, DType::U64, DType::I32, 4, 64, 8, 4);
  gatherCase(s, DType::F64, DType::I16, 32, 8, 32, 8);
  gatherCase(s, DType::BF16, DType::U32, 8, 8, 16, 16);
  errorCases(s);
}

} // namespace tle::conformance
