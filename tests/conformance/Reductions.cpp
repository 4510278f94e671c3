// Family "reduce": tl.sum / tl.max / tl.min over every axis of 1-D, 2-D and 3-D tiles (negative
// axes, axis=None, keep_dims, method spellings) for every numeric dtype, with the result dtype
// Triton picks (8/16-bit integer sums in 32 bits), NaN / inf inputs (max / min ignore NaN, sums
// propagate it), and integer wrap-around. The reference combines in index order in the
// accumulation dtype (the CPU target's documented order, so it is bit-exact there); the GPU's
// tree order is allowed a rounding tolerance.
#include "Families.h"

namespace tle::conformance {

namespace {

enum class Op { Sum, Max, Min };
const char *opName(Op o) { return o == Op::Sum ? "sum" : o == Op::Max ? "max" : "min"; }

/// The dtype Triton's tl.sum (_pick_sum_dtype: no bf16 promotion) and tl.max / tl.min return.
DType resultDType(Op o, DType t) {
  if (o != Op::Sum) // max / min: bf16 and fp16 in fp32, narrow integers in int32 (standard.py)
    return dsize(t) >= 4 ? t : isFloatT(t) ? DType::F32 : DType::I32;
  if (isSignedT(t) && dbits(t) < 32)
    return DType::I32;
  if (!isFloatT(t) && !isSignedT(t) && dbits(t) < 32)
    return DType::U32;
  return t;
}

/// Combines `vals` (already of dtype r) in order.
Val combine(Op o, const std::vector<Val> &vals, DType r) {
  Val acc = vals[0];
  for (size_t k = 1; k < vals.size(); ++k) {
    Val v = vals[k];
    if (isFloatT(r)) {
      if (o == Op::Sum)
        acc.f = r == DType::F64 ? (long double)(double(acc.f) + double(v.f)) : roundTo(acc.f + v.f, fmtOf(r));
      else if (std::isnan(acc.f))
        acc = v;
      else if (!std::isnan(v.f))
        acc.f = o == Op::Max ? std::max(acc.f, v.f) : std::min(acc.f, v.f);
    } else if (o == Op::Sum) {
      acc.i = wrapInt(acc.i + v.i, r);
    } else {
      bool less = isSignedT(r) ? int64_t(v.i) < int64_t(acc.i) : v.i < acc.i;
      if ((o == Op::Min) == less)
        acc = v;
    }
  }
  return acc;
}

/// GPU tolerance for a float sum of `n` values of magnitude up to `mag` in dtype r.
Tol sumTol(Op o, DType r, size_t n, long double mag) {
  if (o != Op::Sum || !isFloatT(r))
    return Tol::exact().anyZero();
  double eps = std::ldexp(1.0, 1 - fmtOf(r).p);
  return Tol::close(0, double(4 * n * eps * mag));
}

struct Red {
  std::string name;
  std::vector<int64_t> shape;
  int axis; ///< -100: all
  bool keep;
  std::string expr; ///< the source expression over `x`
};

/// One batch: a [M, N] tile reduced along each axis and whole, a [4, 8, 2] tile, a 1-D tile;
/// `warps` and `suffix` give the larger variants (tiles spread over several warps along both axes).
void reduceCase(Suite &s, Op o, DType t, bool specials, int M = 8, int N = 16, int warps = 4,
                const std::string &suffix = "") {
  const int A = 4, B = 8, C = 2, L = 128;
  Rng rng(uint64_t(t) * 11 + uint64_t(o) + (specials ? 1000 : 0));
  auto data = [&](size_t n) {
    if (specials) {
      Buffer b = randomBuffer(t, n, rng, 1, false);
      // Row-dependent specials: some rows with NaN, +inf, -inf, inf and -inf, all NaN.
      for (size_t i = 0; i < n; ++i) {
        size_t row = i / 16, col = i % 16;
        if (row == 1 && col == 3) b.setF(i, NAN);
        if (row == 2 && col == 5) b.setF(i, INFINITY);
        if (row == 3 && col == 0) b.setF(i, -INFINITY);
        if (row == 4 && (col == 1 || col == 9)) b.setF(i, col == 1 ? INFINITY : -INFINITY);
        if (row == 5) b.setF(i, NAN);
        if (row == 6 && col == 15) b.setF(i, NAN);
        if (row == 7 && col == 0) b.setF(i, NAN);
      }
      return b;
    }
    if (isFloatT(t))
      return randomBuffer(t, n, rng, o == Op::Sum ? 1 : 100, false);
    return randomBuffer(t, n, rng);
  };
  DType r = resultDType(o, t);
  Buffer x2 = data(size_t(M * N)), x3 = data(size_t(A * B * C)), x1 = data(size_t(L));
  const char *op = opName(o);
  std::string tagName = std::string("reduce/") + op + "/" + tag(t) + (specials ? "/special" : "") + suffix;

  // Reference over a row-major tile of `shape` along `axis` (-100: all).
  auto ref = [&](const Buffer &x, std::vector<int64_t> shape, int axis) {
    size_t total = 1;
    for (auto d : shape)
      total *= size_t(d);
    if (axis == -100) {
      // axis=None: the last axis first, then the next (the CPU target's documented order: each
      // partial result combined in index order).
      size_t inner = size_t(shape.back()), outer = total / inner;
      std::vector<Val> partial;
      for (size_t a = 0; a < outer; ++a) {
        std::vector<Val> v;
        for (size_t c = 0; c < inner; ++c)
          v.push_back(castVal(elem(x, a * inner + c), t, r));
        partial.push_back(combine(o, v, r));
      }
      Buffer out(r, 1);
      store(out, 0, combine(o, partial, r));
      return out;
    }
    if (axis < 0)
      axis += int(shape.size());
    size_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d)
      outer *= size_t(shape[size_t(d)]);
    for (size_t d = size_t(axis) + 1; d < shape.size(); ++d)
      inner *= size_t(shape[d]);
    size_t len = size_t(shape[size_t(axis)]);
    Buffer out(r, outer * inner);
    for (size_t a = 0; a < outer; ++a)
      for (size_t c = 0; c < inner; ++c) {
        std::vector<Val> v;
        for (size_t k = 0; k < len; ++k)
          v.push_back(castVal(elem(x, (a * len + k) * inner + c), t, r));
        store(out, a * inner + c, combine(o, v, r));
      }
    return out;
  };
  long double mag = specials ? 1 : isFloatT(t) ? (o == Op::Sum ? 1 : 100) : 0;
  Run run;
  run.args = {Arg::buf(x2), Arg::buf(x3), Arg::buf(x1)};
  struct Out {
    std::string name;
    Buffer want;
    size_t n;
  };
  std::vector<Out> outs = {
      {"2d_axis0", ref(x2, {M, N}, 0), size_t(M)},   {"2d_axis1", ref(x2, {M, N}, 1), size_t(N)},
      {"2d_all", ref(x2, {M, N}, -100), size_t(M * N)}, {"2d_axis0_keep", ref(x2, {M, N}, 0), size_t(M)},
      {"2d_axis-1_keep", ref(x2, {M, N}, 1), size_t(N)}, {"3d_axis0", ref(x3, {A, B, C}, 0), size_t(A)},
      {"3d_axis1", ref(x3, {A, B, C}, 1), size_t(B)}, {"3d_axis2", ref(x3, {A, B, C}, 2), size_t(C)},
      {"3d_axis-2_keep", ref(x3, {A, B, C}, 1), size_t(B)}, {"1d", ref(x1, {L}, 0), size_t(L)},
      {"1d_method", ref(x1, {L}, 0), size_t(L)}};
  for (auto &out : outs) {
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(r, out.want.size())));
    expect(run, idx, tagName + "/" + out.name, out.want, Tol::exact().anyZero(), sumTol(o, r, out.n, mag));
  }
  std::string body = subst(
      "@triton.jit\ndef k(x2_ptr, x3_ptr, x1_ptr, o0, o1, oall, o0k, o1k, p0, p1, p2, p1k, q, qm,\n"
      "      M: tl.constexpr, N: tl.constexpr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, L: tl.constexpr):\n"
      "    i = tl.arange(0, M)\n    j = tl.arange(0, N)\n    x = tl.load(x2_ptr + i[:, None] * N + j[None, :])\n"
      "    r0 = tl.{OP}(x, axis=0)\n    tl.static_assert(r0.dtype == {R})\n    tl.store(o0 + j, r0)\n"
      "    tl.store(o1 + i, tl.{OP}(x, 1))\n"
      "    tl.store(oall, tl.{OP}(x))\n"
      "    k0 = tl.{OP}(x, axis=0, keep_dims=True)\n    tl.store(o0k + tl.arange(0, 1)[:, None] * N + j[None, :], k0)\n"
      "    k1 = tl.{OP}(x, axis=-1, keep_dims=True)\n    tl.store(o1k + i[:, None] + tl.arange(0, 1)[None, :], k1)\n"
      "    a = tl.arange(0, A)\n    b = tl.arange(0, B)\n    c = tl.arange(0, C)\n"
      "    y = tl.load(x3_ptr + a[:, None, None] * (B * C) + b[None, :, None] * C + c[None, None, :])\n"
      "    tl.store(p0 + b[:, None] * C + c[None, :], tl.{OP}(y, axis=0))\n"
      "    tl.store(p1 + a[:, None] * C + c[None, :], tl.{OP}(y, axis=1))\n"
      "    tl.store(p2 + a[:, None] * B + b[None, :], tl.{OP}(y, axis=2))\n"
      "    yk = tl.{OP}(y, axis=-2, keep_dims=True)\n"
      "    tl.store(p1k + a[:, None, None] * C + tl.arange(0, 1)[None, :, None] + c[None, None, :], yk)\n"
      "    l = tl.arange(0, L)\n    z = tl.load(x1_ptr + l)\n    tl.store(q, tl.{OP}(z, axis=0))\n    tl.store(qm, z.{OP}())\n",
      {{"OP", op}, {"R", tlName(r)}});
  Batch b;
  b.name = tagName;
  b.source = module(body);
  std::vector<DType> ptrs = {t, t, t};
  for (size_t k = 0; k < outs.size(); ++k)
    ptrs.push_back(r);
  b.signature = ptrSig(ptrs, std::to_string(M) + ", " + std::to_string(N) + ", 4, 8, 2, 128");
  b.numWarps = warps;
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

} // namespace

void addReductions(Suite &s) {
  for (Op o : {Op::Sum, Op::Max, Op::Min}) {
    for (DType t : kNumDTypes)
      reduceCase(s, o, t, false);
    for (DType t : kFloatDTypes)
      reduceCase(s, o, t, true);
    // Tiles over 4 and 8 warps: on the GPU the per-warp partials of column and row reductions
    // are combined across warps through shared memory.
    for (DType t : {DType::I32, DType::F32}) {
      reduceCase(s, o, t, false, 64, 64, 8, "/64x64_w8");
      reduceCase(s, o, t, false, 128, 32, 4, "/128x32_w4");
      reduceCase(s, o, t, false, 16, 256, 8, "/16x256_w8");
    }
  }
  Batch e;
  e.name = "reduce/error/axis_out_of_range";
  e.source = module("@triton.jit\ndef k(x_ptr):\n    x = tl.load(x_ptr + tl.arange(0, 16))\n    tl.store(x_ptr, tl.sum(x, axis=1))\n");
  e.signature = "*fp32";
  e.expectError = "axis";
  s.add(std::move(e));
}

} // namespace tle::conformance
