// Families "argreduce" and "standard": tl.argmax / tl.argmin and tl.max / tl.min with
// return_indices over both axes of 2-D tiles and 1-D tiles for every numeric dtype (ties go to the
// lowest index, NaNs are ignored, an all-NaN slice gives index 0 and a NaN value; the value keeps
// the input dtype); and tl.clamp (propagate_nan NONE / ALL), tl.maximum / tl.minimum with
// propagate_nan, tl.umulhi, tl.flip, tl.ravel, tl.interleave, tl.swizzle2d, tl.debug_barrier and
// tl.assume, with the errors Triton requires. References are computed here, element by element.
#include "Families.h"

namespace tle::conformance {

namespace {

/// Whether a < b for values of dtype t (NaNs never compare).
bool lessVal(const Val &a, const Val &b, DType t) {
  if (isFloatT(t))
    return a.f < b.f;
  return isSignedT(t) ? int64_t(a.i) < int64_t(b.i) : a.i < b.i;
}
bool isNanVal(const Val &v) { return v.isF && std::isnan(v.f); }

/// The first index of the NaN-ignoring maximum (or minimum) of `vals`; 0 when all are NaN.
size_t firstExtremum(const std::vector<Val> &vals, DType t, bool isMax) {
  size_t best = vals.size();
  for (size_t k = 0; k < vals.size(); ++k) {
    if (isNanVal(vals[k]))
      continue;
    if (best == vals.size() || (isMax ? lessVal(vals[best], vals[k], t) : lessVal(vals[k], vals[best], t)))
      best = k;
  }
  return best == vals.size() ? 0 : best;
}

/// Values of dtype t with many ties (small integers), and for floats some NaNs, infinities,
/// signed zeros and a slice that is all NaN (row `nanRow` of a rows x cols tile).
Buffer argInput(DType t, int rows, int cols, Rng &rng, int nanRow) {
  Buffer b = smallInts(t, size_t(rows * cols), rng, isSignedT(t) || isFloatT(t) ? -4 : 0, 6);
  if (!isFloatT(t)) {
    // The extremes of the type too.
    b.setI(size_t(rng.range(0, rows * cols - 1)), isSignedT(t) ? (1ull << (dbits(t) - 1)) : 0);
    b.setI(size_t(rng.range(0, rows * cols - 1)), isSignedT(t) ? (1ull << (dbits(t) - 1)) - 1 : ~0ull);
    return b;
  }
  long double nan = std::numeric_limits<long double>::quiet_NaN(), inf = std::numeric_limits<long double>::infinity();
  for (int k = 0; k < rows * cols / 8; ++k)
    b.setF(size_t(rng.range(0, rows * cols - 1)), nan);
  b.setF(size_t(rng.range(0, rows * cols - 1)), inf);
  b.setF(size_t(rng.range(0, rows * cols - 1)), -inf);
  b.setF(size_t(rng.range(0, rows * cols - 1)), -0.0L);
  if (nanRow >= 0 && nanRow < rows)
    for (int j = 0; j < cols; ++j)
      b.setF(size_t(nanRow * cols + j), nan);
  return b;
}

/// argmax/argmin/max-with-indices of a [M, N] tile along both axes and of its first row as a
/// 1-D tile, for dtype t.
void argCase(Suite &s, DType t, int M, int N, int warps, const std::string &suffix) {
  Rng rng(uint64_t(t) * 7 + uint64_t(M * 131 + N));
  Buffer x = argInput(t, M, N, rng, M / 2);
  auto slice = [&](int axis, int k) {
    std::vector<Val> v;
    int len = axis == 0 ? M : N;
    for (int e = 0; e < len; ++e)
      v.push_back(elem(x, size_t(axis == 0 ? e * N + k : k * N + e)));
    return v;
  };
  std::string nm = "argreduce/" + tag(t) + suffix;
  Run run;
  run.args = {Arg::buf(x)};
  auto addIdx = [&](const std::string &name, int axis, bool isMax) {
    int outer = axis == 0 ? N : M;
    Buffer want(DType::I32, size_t(outer));
    for (int k = 0; k < outer; ++k)
      want.setI(size_t(k), firstExtremum(slice(axis, k), t, isMax));
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(DType::I32, size_t(outer))));
    expect(run, idx, nm + "/" + name, want);
  };
  auto addVal = [&](const std::string &name, int axis, bool isMax) {
    int outer = axis == 0 ? N : M;
    Buffer want(t, size_t(outer));
    for (int k = 0; k < outer; ++k) {
      auto v = slice(axis, k);
      size_t i = firstExtremum(v, t, isMax);
      store(want, size_t(k), v[i]); // an all-NaN slice: NaN (any NaN matches)
    }
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(t, size_t(outer))));
    // max(-0, +0) may give either zero; the index is the first of them.
    expect(run, idx, nm + "/" + name, want, Tol::exact().anyZero());
  };
  addIdx("argmax_axis1", 1, true);
  addIdx("argmin_axis1", 1, false);
  addIdx("argmax_axis0", 0, true);
  addIdx("argmin_axis0", 0, false);
  addVal("max_indices_value_axis1", 1, true);
  addIdx("max_indices_index_axis1", 1, true);
  addVal("min_indices_value_axis0", 0, false);
  addIdx("min_indices_index_axis0", 0, false);
  // The first row as a 1-D tile (keep_dims: a [1] tile).
  {
    Buffer want(DType::I32, 2);
    want.setI(0, firstExtremum(slice(1, 0), t, true));
    want.setI(1, firstExtremum(slice(1, 0), t, false));
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(DType::I32, 2)));
    expect(run, idx, nm + "/1d_keep_dims", want);
  }
  Batch b;
  b.name = nm;
  b.source = module(subst(
      "@triton.jit\n"
      "def k(x_ptr, a1, n1, a0, n0, mv1, mi1, nv0, ni0, o1d, M: tl.constexpr, N: tl.constexpr):\n"
      "    i = tl.arange(0, M)\n    j = tl.arange(0, N)\n"
      "    x = tl.load(x_ptr + i[:, None] * N + j[None, :])\n"
      "    tl.store(a1 + i, tl.argmax(x, axis=1))\n"
      "    tl.store(n1 + i, tl.argmin(x, 1, tie_break_left=True))\n"
      "    tl.store(a0 + j, x.argmax(0))\n"
      "    tl.store(n0 + j, tl.argmin(x, axis=-2, tie_break_left=False))\n"
      "    v, ix = tl.max(x, axis=1, return_indices=True)\n"
      "    tl.static_assert(v.dtype == {T})\n    tl.static_assert(ix.dtype == tl.int32)\n"
      "    tl.store(mv1 + i, v)\n    tl.store(mi1 + i, ix)\n"
      "    w, iw = tl.min(x, 0, return_indices=True, return_indices_tie_break_left=False)\n"
      "    tl.store(nv0 + j, w)\n    tl.store(ni0 + j, iw)\n"
      "    r = tl.load(x_ptr + j)\n"
      "    ka = tl.argmax(r, 0, keep_dims=True)\n    kv, kn = tl.min(r, axis=0, return_indices=True, keep_dims=True)\n"
      "    tl.static_assert(len(ka.shape) == 1 and ka.shape[0] == 1)\n"
      "    tl.static_assert(len(kn.shape) == 1 and kn.shape[0] == 1)\n"
      "    z = tl.arange(0, 1)\n    tl.store(o1d + z, ka)\n    tl.store(o1d + 1 + z, kn)\n",
      {{"T", tlName(t)}}));
  b.signature = ptrSig({t, DType::I32, DType::I32, DType::I32, DType::I32, t, DType::I32, t, DType::I32, DType::I32},
                       std::to_string(M) + ", " + std::to_string(N));
  b.numWarps = warps;
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// A batch of one kernel `k(params)` run once: buffer arguments `inputs`, then one output
/// buffer per entry of `outs` (checked against its `want`), then `scalars`; `tail` ends the
/// signature (the scalars' types and the constexprs).
struct Out {
  std::string name;
  Buffer want;
  Tol cpu = Tol::exact(), gpu = Tol::exact();
};
void simpleBatch(Suite &s, const std::string &name, const std::string &params, const std::string &body,
                 const std::vector<Buffer> &inputs, const std::vector<Out> &outs, const std::string &tail,
                 const std::vector<Arg> &scalars = {}) {
  Batch b;
  b.name = name;
  b.source = module("@triton.jit\ndef k(" + params + "):\n" + body);
  std::vector<DType> ptrs;
  Run run;
  for (auto &in : inputs) {
    ptrs.push_back(in.dtype);
    run.args.push_back(Arg::buf(in));
  }
  for (auto &o : outs) {
    ptrs.push_back(o.want.dtype);
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(o.want.dtype, o.want.size())));
    expect(run, idx, name + "/" + o.name, o.want, o.cpu, o.gpu);
  }
  for (auto &a : scalars)
    run.args.push_back(a);
  b.signature = ptrSig(ptrs, tail);
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

void clampCases(Suite &s) {
  long double nan = std::numeric_limits<long double>::quiet_NaN(), inf = std::numeric_limits<long double>::infinity();
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    Rng rng(uint64_t(t) + 900);
    const size_t n = 64;
    Buffer x = makeBuffer(t, n, [&](size_t i) -> long double {
      return i % 9 == 0 ? nan : i == 5 ? inf : i == 6 ? -inf : i == 7 ? -0.0L : rng.real(-3, 3);
    });
    Buffer lo = makeBuffer(t, n, [&](size_t i) -> long double { return i % 11 == 3 ? nan : rng.real(-2, 0); });
    // Triton promotes bf16 to fp32 and the Python bounds to fp32 tensors: the result is fp32 for
    // half inputs with literal bounds, and x's dtype (bf16: fp32) with bounds of x's dtype.
    DType lit = t == DType::F64 ? DType::F64 : DType::F32;
    DType same = t == DType::BF16 ? DType::F32 : t;
    Buffer c1(lit, n), c2(lit, n), c3(same, n), c4(same, n), mx(same, n), mn(same, n);
    auto clampRef = [](long double v, long double a, long double b, bool all) -> long double {
      if (all && (std::isnan(v) || std::isnan(a) || std::isnan(b)))
        return std::numeric_limits<long double>::quiet_NaN();
      long double m = std::isnan(v) ? a : std::isnan(a) ? v : std::max(v, a); // maxnum
      return std::isnan(m) ? b : std::isnan(b) ? m : std::min(m, b);           // minnum
    };
    for (size_t i = 0; i < n; ++i) {
      long double v = x.getF(i), a = lo.getF(i);
      c1.setF(i, clampRef(v, -0.5L, 0.75L, false));
      c2.setF(i, clampRef(v, -0.5L, 0.75L, true));
      c3.setF(i, clampRef(v, a, 1.0L, false));
      c4.setF(i, clampRef(v, a, 1.0L, true));
      bool anyNan = std::isnan(v) || std::isnan(a);
      mx.setF(i, anyNan ? nan : std::max(v, a));
      mn.setF(i, std::isnan(v) ? a : std::isnan(a) ? v : std::min(v, a));
    }
    std::string body =
        "    i = tl.arange(0, N)\n    x = tl.load(x_ptr + i)\n    lo = tl.load(lo_ptr + i)\n"
        "    c = tl.clamp(x, -0.5, 0.75)\n    tl.static_assert(c.dtype == {LIT})\n    tl.store(o1 + i, c)\n"
        "    tl.store(o2 + i, tl.clamp(x, -0.5, 0.75, propagate_nan=tl.PropagateNan.ALL))\n"
        "    one = tl.full((N,), 1.0, x.dtype)\n"
        "    d = tl.clamp(x, lo, one)\n    tl.static_assert(d.dtype == {SAME})\n    tl.store(o3 + i, d)\n"
        "    tl.store(o4 + i, tl.clamp(x, lo, one, tl.PropagateNan.ALL))\n"
        "    tl.store(o5 + i, tl.maximum(x, lo, propagate_nan=tl.PropagateNan.ALL))\n"
        "    tl.store(o6 + i, tl.minimum(x, lo, propagate_nan=tl.PropagateNan.NONE))\n";
    simpleBatch(s, "standard/clamp/" + tag(t), "x_ptr, lo_ptr, o1, o2, o3, o4, o5, o6, N: tl.constexpr",
                subst(body, {{"LIT", tlName(lit)}, {"SAME", tlName(same)}}), {x, lo},
                {{"literal_bounds", c1, Tol::exact().anyZero(), Tol::exact().anyZero()},
                 {"literal_bounds_nan_all", c2, Tol::exact().anyZero(), Tol::exact().anyZero()},
                 {"tile_bounds", c3, Tol::exact().anyZero(), Tol::exact().anyZero()},
                 {"tile_bounds_nan_all", c4, Tol::exact().anyZero(), Tol::exact().anyZero()},
                 {"maximum_nan_all", mx, Tol::exact().anyZero(), Tol::exact().anyZero()},
                 {"minimum_nan_none", mn, Tol::exact().anyZero(), Tol::exact().anyZero()}},
                "64");
  }
}

void umulhiCases(Suite &s) {
  for (DType t : {DType::I32, DType::U32, DType::I64, DType::U64}) {
    Rng rng(uint64_t(t) + 1300);
    const size_t n = 128;
    Buffer a(t, n), b(t, n), hi(t, n), hiC(t, n);
    unsigned w = dbits(t);
    uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
    for (size_t i = 0; i < n; ++i) {
      a.setI(i, i == 0 ? ~0ull : i == 1 ? 0 : rng.next());
      b.setI(i, i == 0 ? ~0ull : i == 2 ? 1 : rng.next());
    }
    // A constexpr that fits the tile's type (Triton rejects a Python integer out of its range):
    // below 2^31 for int32, 2^32 for uint32, 2^63 for the 64-bit types.
    uint64_t c = w == 64 ? 0x52E7470EE14C6C93ull : t == DType::I32 ? 0x52511F53ull : 0xD2511F53ull;
    auto mulhi = [&](uint64_t x, uint64_t y) -> uint64_t {
      x &= mask;
      y &= mask;
      if (w == 64)
        return uint64_t((unsigned __int128)x * y >> 64);
      return (x * y) >> 32;
    };
    for (size_t i = 0; i < n; ++i) {
      hi.setI(i, mulhi(a.getI(i), b.getI(i)));
      hiC.setI(i, mulhi(c, a.getI(i)));
    }
    simpleBatch(s, "standard/umulhi/" + tag(t), "a_ptr, b_ptr, o1, o2, N: tl.constexpr, C: tl.constexpr",
                subst("    i = tl.arange(0, N)\n    a = tl.load(a_ptr + i)\n    b = tl.load(b_ptr + i)\n"
                      "    h = tl.umulhi(a, b)\n    tl.static_assert(h.dtype == {T})\n    tl.store(o1 + i, h)\n"
                      "    tl.store(o2 + i, tl.umulhi(a, C))\n",
                      {{"T", tlName(t)}}),
                {a, b}, {{"tiles", hi}, {"constant", hiC}}, "128, " + std::to_string(c));
  }
}

void shapeCases(Suite &s) {
  for (DType t : {DType::I1, DType::I8, DType::I16, DType::I32, DType::I64, DType::F16, DType::BF16, DType::F32,
                  DType::F64, DType::U64}) {
    Rng rng(uint64_t(t) + 1700);
    const int M = 8, N = 32;
    const size_t S = M * N;
    Buffer x = t == DType::I1 ? smallInts(t, S, rng, 0, 1) : randomBuffer(t, S, rng, 100, isFloatT(t));
    Buffer y = t == DType::I1 ? smallInts(t, S, rng, 0, 1) : randomBuffer(t, S, rng);
    Buffer f0(t, S), f1(t, S), fl(t, S), rv(t, S), il(t, 2 * S), f3(t, S), f1d(t, size_t(N));
    auto cp = [&](Buffer &dst, size_t i, const Buffer &src, size_t j) { dst.setBits(i, src.bits(j)); };
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        size_t e = size_t(i * N + j);
        cp(f0, e, x, size_t((M - 1 - i) * N + j));
        cp(f1, e, x, size_t(i * N + (N - 1 - j)));
        cp(fl, e, x, size_t(i * N + (N - 1 - j)));
        cp(rv, e, x, size_t((M - 1 - i) * N + j));
        cp(il, 2 * e, x, e);
        cp(il, 2 * e + 1, y, e);
      }
    // [M/2, 2, N] flipped along dim 0 (every pair of rows moves as a block).
    for (int a = 0; a < M / 2; ++a)
      for (int r = 0; r < 2; ++r)
        for (int j = 0; j < N; ++j)
          cp(f3, size_t(((a * 2) + r) * N + j), x, size_t(((M / 2 - 1 - a) * 2 + r) * N + j));
    for (int j = 0; j < N; ++j)
      cp(f1d, size_t(j), x, size_t(N - 1 - j));
    simpleBatch(s, "standard/shape/" + tag(t),
                "x_ptr, y_ptr, o0, o1, ol, orv, oil, o3, o1d, M: tl.constexpr, N: tl.constexpr",
                "    i = tl.arange(0, M)\n    j = tl.arange(0, N)\n    idx = i[:, None] * N + j[None, :]\n"
                "    x = tl.load(x_ptr + idx)\n    y = tl.load(y_ptr + idx)\n"
                "    tl.store(o0 + idx, tl.flip(x, 0))\n    tl.store(o1 + idx, tl.flip(x, dim=-1))\n"
                "    tl.store(ol + idx, x.flip())\n"
                "    tl.store(orv + tl.arange(0, M * N), tl.ravel(tl.flip(x, 0)))\n"
                "    tl.store(oil + tl.arange(0, 2 * M * N), tl.interleave(x, y).ravel())\n"
                "    z = tl.reshape(x, (M // 2, 2, N))\n"
                "    tl.store(o3 + tl.arange(0, M * N), tl.reshape(tl.flip(z, 0), (M * N,)))\n"
                "    tl.store(o1d + j, tl.flip(tl.load(x_ptr + j)))\n",
                {x, y},
                {{"flip_dim0", f0}, {"flip_dim1", f1}, {"flip_last", fl}, {"ravel", rv}, {"interleave", il},
                 {"flip_3d_dim0", f3}, {"flip_1d", f1d}},
                std::to_string(M) + ", " + std::to_string(N));
  }
}

void swizzleCases(Suite &s) {
  for (int g : {1, 3, 4}) {
    const int BLOCK = 128;
    for (auto [si, sj] : {std::pair{7, 5}, std::pair{16, 8}}) {
      Buffer want(DType::I32, size_t(2 * BLOCK));
      std::vector<std::pair<int, int>> walk; // groups of g rows walked column by column
      for (int g0 = 0; g0 < si; g0 += g)
        for (int col = 0; col < sj; ++col)
          for (int r = 0; r < std::min(g, si - g0); ++r)
            walk.push_back({g0 + r, col});
      for (int t = 0; t < BLOCK; ++t) {
        bool in = t < si * sj;
        want.setI(size_t(2 * t), uint64_t(int64_t(in ? walk[size_t(t)].first : -1)));
        want.setI(size_t(2 * t + 1), uint64_t(int64_t(in ? walk[size_t(t)].second : -1)));
      }
      Batch b;
      b.name = "standard/swizzle2d/g" + std::to_string(g) + "_" + std::to_string(si) + "x" + std::to_string(sj);
      b.source = module("@triton.jit\ndef k(o_ptr, size_i, size_j, G: tl.constexpr, BLOCK: tl.constexpr):\n"
                        "    t = tl.arange(0, BLOCK)\n    ni, nj = tl.swizzle2d(t // size_j, t % size_j, size_i, size_j, G)\n"
                        "    m = t < size_i * size_j\n"
                        "    tl.store(o_ptr + 2 * t, tl.where(m, ni, -1))\n"
                        "    tl.store(o_ptr + 2 * t + 1, tl.where(m, nj, -1))\n");
      b.signature = "*i32, i32, i32, " + std::to_string(g) + ", " + std::to_string(BLOCK);
      Run run;
      run.args = {Arg::buf(Buffer(DType::I32, size_t(2 * BLOCK))), Arg::i32(si), Arg::i32(sj)};
      expect(run, 0, b.name, want);
      b.runs.push_back(std::move(run));
      s.add(std::move(b));
    }
  }
}

void barrierAssumeCases(Suite &s) {
  // A debug_barrier between two phases that exchange data through global memory within one
  // program: every element of the second phase reads what another thread stored in the first.
  const int N = 256;
  Rng rng(2024);
  Buffer x = randomBuffer(DType::I32, size_t(N), rng), want(DType::I32, size_t(N));
  for (int i = 0; i < N; ++i)
    want.setI(size_t(i), wrapInt(x.getI(size_t(N - 1 - i)) * 3, DType::I32));
  simpleBatch(s, "standard/debug_barrier_assume", "x_ptr, tmp_ptr, o_ptr, n, N: tl.constexpr",
              "    tl.assume(n > 0)\n    i = tl.arange(0, N)\n    tl.assume(i < N)\n"
              "    tl.store(tmp_ptr + i, tl.load(x_ptr + i) * 3)\n    tl.debug_barrier()\n"
              "    tl.store(o_ptr + i, tl.load(tmp_ptr + (N - 1 - i)), mask=i < n)\n",
              {x, Buffer(DType::I32, size_t(N))}, {{"reverse_through_global", want}}, "i32, " + std::to_string(N),
              {Arg::i32(N)});
}

void errorCases(Suite &s) {
  auto err = [&](const std::string &name, const std::string &body, const std::string &sig, const std::string &msg) {
    Batch e;
    e.name = "standard/error/" + name;
    e.source = module("@triton.jit\ndef k(x_ptr, N: tl.constexpr):\n    i = tl.arange(0, N)\n" + body);
    e.signature = sig;
    e.expectError = msg;
    s.add(std::move(e));
  };
  err("clamp_int", "    tl.store(x_ptr + i, tl.clamp(tl.load(x_ptr + i), 0, 3))\n", "*i32, 16",
      "clamp() supports floating-point values only");
  err("umulhi_float", "    tl.store(x_ptr + i, tl.umulhi(tl.load(x_ptr + i), 3))\n", "*fp32, 16",
      "umulhi() expects int32, uint32, int64 or uint64");
  err("umulhi_i16", "    tl.store(x_ptr + i, tl.umulhi(tl.load(x_ptr + i), 3))\n", "*i16, 16",
      "umulhi() expects int32, uint32, int64 or uint64");
  err("argmax_axis_range", "    tl.store(x_ptr, tl.argmax(tl.load(x_ptr + i), 1))\n", "*fp32, 16",
      "argmax() axis 1 is out of range");
  err("argmax_no_axis_2d", "    tl.store(x_ptr, tl.argmax(tl.load(x_ptr + i[:, None] + i[None, :]), None))\n",
      "*fp32, 16", "argmax() needs an axis");
  err("flip_dim_range", "    tl.store(x_ptr + i, tl.flip(tl.load(x_ptr + i), 2))\n", "*fp32, 16",
      "flip() dim 2 is out of range");
  err("assume_int", "    tl.assume(i)\n", "*fp32, 16", "assume() condition must be a boolean");
  err("rand_float_offsets", "    tl.store(x_ptr + i, tl.rand(1, i.to(tl.float32)))\n", "*fp32, 16",
      "rand() offset must be an integer tensor");
  err("rand_float_seed", "    tl.store(x_ptr + i, tl.rand(1.5, i))\n", "*fp32, 16", "rand() seed must be an integer");
}

} // namespace

void addArgReduce(Suite &s) {
  for (DType t : kNumDTypes)
    argCase(s, t, 8, 32, 4, "");
  // Slices across lanes and warps: 16 rows of 256 (4 warps), 64 x 64 over 8 warps.
  for (DType t : {DType::I32, DType::F32, DType::F16, DType::I64})
    argCase(s, t, 16, 256, 4, "/16x256");
  for (DType t : {DType::F32, DType::U8})
    argCase(s, t, 64, 64, 8, "/64x64_w8");
}

void addStandard(Suite &s) {
  clampCases(s);
  umulhiCases(s);
  shapeCases(s);
  swizzleCases(s);
  barrierAssumeCases(s);
  errorCases(s);
}

} // namespace tle::conformance
