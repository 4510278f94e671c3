// Family "fp8": tl.float8e4nv (OCP e4m3fn) and tl.float8e5 (e5m2). Every one of the 256 codes of
// each format cast to every dtype; casts into fp8 from fp16, bf16, fp32, fp64 and integers at
// every representable value, every halfway point and just beside it, beyond the largest finite
// value, infinities, NaN and subnormals, to nearest even and toward zero (one rounding from the
// source value: no double rounding through fp32 or fp16); arithmetic (computed in fp32, rounded
// to fp8), comparisons, where, masked loads and stores with `other`, bitcasts, reductions, cumsum,
// tl.dot of every fp8 pair (fp32 and fp16 out; in K loops of the shapes sm_90a multiplies
// natively), and the errors fp8 brings.
#include "Families.h"

#include <algorithm>

namespace tle::conformance {

namespace {

/// The non-negative finite values of fp8 dtype `t`, ascending (codes 0 .. largest finite).
std::vector<long double> fp8Grid(DType t) {
  std::vector<long double> g;
  for (int c = 0; c < 0x80; ++c) {
    long double v = fp8Decode(uint8_t(c), t);
    if (std::isfinite(v))
      g.push_back(v);
  }
  return g;
}

/// Inputs for casts into fp8 dtype `to`: the grid, the midpoints between neighbours and values
/// just beside them, overflow, infinities, NaN and tiny values, each with both signs; random
/// values fill the rest of `n`.
std::vector<long double> toFp8Inputs(DType to, size_t n) {
  std::vector<long double> g = fp8Grid(to), v;
  for (size_t i = 0; i + 1 < g.size(); ++i) {
    long double mid = (g[i] + g[i + 1]) / 2, eps = (g[i + 1] - g[i]) * 0x1p-12L;
    v.insert(v.end(), {g[i], mid, mid - eps, mid + eps});
  }
  long double mx = g.back(), ulp = mx - g[g.size() - 2];
  v.insert(v.end(), {mx, mx + ulp / 4, mx + ulp / 2, mx + ulp, 1e6L, 1e30L, INFINITY, NAN, g[1] / 2, g[1] / 4,
                     g[1] * 0.75L, 1e-30L, 0.0L});
  size_t base = v.size();
  for (size_t i = 0; i < base; ++i)
    v.push_back(-v[i]);
  Rng rng(uint64_t(to) * 101 + 7);
  while (v.size() < n)
    v.push_back(rng.real(-1, 1) * std::ldexp(1.0L, int(rng.range(-18, 17))));
  v.resize(n);
  return v;
}

/// Every code of `from` cast to every dtype (and to the other fp8 format).
void fromFp8(Suite &s, DType from) {
  constexpr size_t n = 256;
  Buffer x(from, n);
  for (size_t i = 0; i < n; ++i)
    x.setBits(i, i);
  std::vector<DType> tos;
  for (DType t : kAllDTypes)
    tos.push_back(t);
  tos.push_back(from == DType::F8E4M3 ? DType::F8E5M2 : DType::F8E4M3);
  s.add(castBatch("fp8/cast/from_" + tag(from), "fp8/cast/", x, from, tos, /*alternate=*/false));
}

/// Casts from `from` into fp8 `to`: to nearest even, and toward zero for float sources.
void toFp8(Suite &s, DType from, DType to) {
  constexpr size_t n = 1024;
  Buffer x(from, n);
  std::vector<long double> in = toFp8Inputs(to, n);
  Rng rng(uint64_t(from) * 31 + uint64_t(to));
  for (size_t i = 0; i < n; ++i) {
    if (isFloatT(from)) {
      x.setF(i, in[i]);
    } else { // integers: around the fp8 range and beyond it
      long double v = std::isfinite(in[i]) ? std::round(in[i]) : 0;
      if (i % 5 == 0)
        v = (long double)int64_t(rng.next());
      x.setF(i, std::max(std::min(v, 1e18L), -1e18L));
    }
  }
  bool rtz = isFloatT(from) && !isFp8T(from); // rtz needs a narrowing cast
  Run run;
  run.args = {Arg::buf(x), Arg::buf(Buffer(to, n)), Arg::buf(Buffer(to, n))};
  Buffer rtne(to, n), trunc(to, n);
  for (size_t i = 0; i < n; ++i) {
    store(rtne, i, castVal(elem(x, i), from, to, false));
    store(trunc, i, castVal(elem(x, i), from, to, true));
  }
  std::string nm = "fp8/cast/" + tag(from) + "->" + tag(to);
  expect(run, 1, nm + "/rtne", rtne);
  if (rtz)
    expect(run, 2, nm + "/rtz", trunc);
  Batch b;
  b.name = nm;
  b.source = module(subst("@triton.jit\ndef k(x_ptr, a_ptr, z_ptr, BLOCK: tl.constexpr):\n"
                          "    offs = tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs)\n"
                          "    tl.store(a_ptr + offs, x.to({T}))\n{RTZ}",
                          {{"T", tlName(to)},
                           {"RTZ", rtz ? subst("    tl.store(z_ptr + offs, x.to({T}, fp_downcast_rounding=\"rtz\"))\n",
                                               {{"T", tlName(to)}})
                                       : ""}}));
  b.signature = ptrSig({from, to, to}, std::to_string(n));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// Random finite fp8 values whose magnitudes lie in [2^lo, 2^hi] (and some of their negatives).
Buffer fp8Values(DType t, size_t n, Rng &rng, int lo, int hi, bool allowZero = true) {
  Buffer b(t, n);
  for (size_t i = 0; i < n; ++i) {
    long double v = std::ldexp((long double)rng.real(1, 2), int(rng.range(lo, hi - 1)));
    if (rng.next() & 1)
      v = -v;
    if (allowZero && i % 29 == 5)
      v = 0;
    b.setF(i, v);
  }
  return b;
}

/// fp8 + - * on one format (rounded to fp8 from the fp32 result) and between the two formats
/// (fp16), comparisons and where.
void arithmetic(Suite &s) {
  constexpr size_t n = 256;
  for (DType t : kFp8DTypes) {
    Rng rng(uint64_t(t) * 13);
    bool e4 = t == DType::F8E4M3;
    Buffer a = fp8Values(t, n, rng, e4 ? -9 : -16, e4 ? 9 : 16), c = fp8Values(t, n, rng, e4 ? -9 : -16, e4 ? 9 : 16);
    for (size_t i = 0; i < 8; ++i) // overflow of the fp8 range
      a.setF(i, e4 ? 400 : 50000), c.setF(i, e4 ? 300 : 40000);
    struct Op {
      const char *name, *expr;
      long double (*f)(long double, long double);
    };
    const Op ops[] = {{"add", "a + b", [](long double x, long double y) { return x + y; }},
                      {"sub", "a - b", [](long double x, long double y) { return x - y; }},
                      {"mul", "a * b", [](long double x, long double y) { return x * y; }},
                      {"scalar", "a * 2.0 + 0.5", [](long double x, long double) { return x * 2; }}};
    Run run;
    run.args = {Arg::buf(a), Arg::buf(c)};
    std::string body = "@triton.jit\ndef k(a_ptr, b_ptr, {OUTS}BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                       "    a = tl.load(a_ptr + offs)\n    b = tl.load(b_ptr + offs)\n";
    std::string outs;
    std::vector<DType> ptrs = {t, t};
    for (const Op &op : ops) {
      Buffer want(t, n);
      for (size_t i = 0; i < n; ++i) {
        long double r = op.f(a.getF(i), c.getF(i));
        if (std::string(op.name) == "scalar") // two fp8 roundings: a * 2.0, then + 0.5
          r = fp8Decode(fp8Encode(roundTo(r, kF32f), t), t) + 0.5L;
        want.setF(i, fp8Decode(fp8Encode(roundTo(r, kF32f), t), t));
      }
      std::string o = std::string("o_") + op.name;
      outs += o + ", ";
      ptrs.push_back(t);
      body += subst("    tl.store({O} + offs, {E})\n", {{"O", o}, {"E", op.expr}});
      int idx = int(run.args.size());
      run.args.push_back(Arg::buf(Buffer(t, n)));
      expect(run, idx, "fp8/arith/" + tag(t) + "/" + op.name, want);
    }
    // Comparisons (exact, through fp32) and where.
    const std::pair<const char *, const char *> cmps[] = {{"lt", "<"}, {"le", "<="}, {"eq", "=="}, {"ne", "!="}};
    for (auto [name, sym] : cmps) {
      Buffer want(DType::I1, n);
      for (size_t i = 0; i < n; ++i) {
        long double x = a.getF(i), y = c.getF(i);
        std::string o = sym;
        want.setI(i, o == "<" ? x < y : o == "<=" ? x <= y : o == "==" ? x == y : x != y);
      }
      std::string o = std::string("o_") + name;
      outs += o + ", ";
      ptrs.push_back(DType::I1);
      body += subst("    tl.store({O} + offs, a {S} b)\n", {{"O", o}, {"S", sym}});
      int idx = int(run.args.size());
      run.args.push_back(Arg::buf(Buffer(DType::I1, n)));
      expect(run, idx, "fp8/compare/" + tag(t) + "/" + name, want);
    }
    Buffer where(t, n);
    for (size_t i = 0; i < n; ++i)
      where.setBits(i, a.getF(i) > c.getF(i) ? a.bits(i) : c.bits(i));
    outs += "o_where, ";
    ptrs.push_back(t);
    body += "    tl.store(o_where + offs, tl.where(a > b, a, b))\n";
    run.args.push_back(Arg::buf(Buffer(t, n)));
    expect(run, int(run.args.size()) - 1, "fp8/where/" + tag(t), where);
    Batch b;
    b.name = "fp8/arith/" + tag(t);
    b.source = module(subst(body, {{"OUTS", outs}}));
    b.signature = ptrSig(ptrs, std::to_string(n));
    b.runs.push_back(std::move(run));
    s.add(std::move(b));
  }
  // e4m3 with e5m2: both to fp16 (Triton's promotion of two different fp8 types). Magnitudes in
  // [2^-6, 2^8] keep every sum exact in fp32, so the fp16 result is one rounding on both targets.
  Rng rng(99);
  Buffer a = fp8Values(DType::F8E4M3, n, rng, -6, 8), c = fp8Values(DType::F8E5M2, n, rng, -6, 8);
  Buffer sum(DType::F16, n), prod(DType::F16, n);
  for (size_t i = 0; i < n; ++i) {
    sum.setF(i, a.getF(i) + c.getF(i));
    prod.setF(i, a.getF(i) * c.getF(i));
  }
  Run run;
  run.args = {Arg::buf(a), Arg::buf(c), Arg::buf(Buffer(DType::F16, n)), Arg::buf(Buffer(DType::F16, n))};
  expect(run, 2, "fp8/arith/mixed/add_fp16", sum);
  expect(run, 3, "fp8/arith/mixed/mul_fp16", prod);
  Batch b;
  b.name = "fp8/arith/mixed";
  b.source = module("@triton.jit\ndef k(a_ptr, b_ptr, s_ptr, p_ptr, BLOCK: tl.constexpr):\n"
                    "    offs = tl.arange(0, BLOCK)\n    a = tl.load(a_ptr + offs)\n    b = tl.load(b_ptr + offs)\n"
                    "    tl.store(s_ptr + offs, a + b)\n    tl.store(p_ptr + offs, a * b)\n");
  b.signature = ptrSig({DType::F8E4M3, DType::F8E5M2, DType::F16, DType::F16}, std::to_string(n));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// Masked loads with `other`, masked stores, bitcasts to and from uint8.
void memory(Suite &s) {
  constexpr size_t n = 128;
  for (DType t : kFp8DTypes) {
    Rng rng(uint64_t(t) * 5 + 1);
    Buffer x(t, n);
    for (size_t i = 0; i < n; ++i)
      x.setBits(i, rng.next() & 0xFF);
    Buffer init(t, n), masked(t, n), stored(t, n), bits(DType::U8, n), fromBits(t, n);
    for (size_t i = 0; i < n; ++i) {
      init.setF(i, -1);
      masked.setBits(i, i < 100 ? x.bits(i) : fp8Encode(1.5L, t)); // other=1.5
      stored.setBits(i, i % 3 == 0 ? x.bits(i) : init.bits(i));
      bits.setBits(i, x.bits(i));
      fromBits.setBits(i, uint8_t(x.bits(i) ^ 0x80)); // u8 ^ 0x80, bitcast back: -x
    }
    Run run;
    run.args = {Arg::buf(x), Arg::buf(Buffer(t, n)), Arg::buf(init), Arg::buf(Buffer(DType::U8, n)), Arg::buf(Buffer(t, n))};
    expect(run, 1, "fp8/memory/" + tag(t) + "/load_other", masked);
    expect(run, 2, "fp8/memory/" + tag(t) + "/masked_store", stored);
    expect(run, 3, "fp8/bitcast/" + tag(t) + "/to_u8", bits);
    expect(run, 4, "fp8/bitcast/" + tag(t) + "/from_u8", fromBits);
    Batch b;
    b.name = "fp8/memory/" + tag(t);
    b.source = module(subst(
        "@triton.jit\ndef k(x_ptr, m_ptr, s_ptr, u_ptr, f_ptr, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    tl.store(m_ptr + offs, tl.load(x_ptr + offs, mask=offs < 100, other=1.5))\n"
        "    x = tl.load(x_ptr + offs)\n"
        "    tl.store(s_ptr + offs, x, mask=offs % 3 == 0)\n"
        "    u = x.to(tl.uint8, bitcast=True)\n"
        "    tl.store(u_ptr + offs, u)\n"
        "    tl.store(f_ptr + offs, (u ^ 0x80).to({T}, bitcast=True))\n",
        {{"T", tlName(t)}}));
    b.signature = ptrSig({t, t, t, DType::U8, t}, std::to_string(n));
    b.runs.push_back(std::move(run));
    s.add(std::move(b));
  }
}

/// tl.max / tl.min (fp32 results) and tl.sum (fp8, accumulated in fp32) along both axes of a
/// [16, 32] tile, and tl.cumsum along rows (fp32). Magnitudes in [2^-6, 2^4] keep every partial
/// sum exact in fp32, so any order gives the same result.
void reductions(Suite &s) {
  constexpr int R = 16, C = 32;
  for (DType t : kFp8DTypes) {
    Rng rng(uint64_t(t) * 3 + 11);
    Buffer x = fp8Values(t, R * C, rng, -6, 4);
    Buffer mx(DType::F32, R), mn(DType::F32, C), sum0(t, C), sum1(t, R), cs(DType::F32, R * C);
    for (int r = 0; r < R; ++r) {
      long double m = -INFINITY, acc = 0, run = 0;
      for (int c = 0; c < C; ++c) {
        m = std::max(m, x.getF(size_t(r * C + c)));
        acc += x.getF(size_t(r * C + c));
        run += x.getF(size_t(r * C + c));
        cs.setF(size_t(r * C + c), run);
      }
      mx.setF(size_t(r), m);
      sum1.setF(size_t(r), acc);
    }
    for (int c = 0; c < C; ++c) {
      long double m = INFINITY, acc = 0;
      for (int r = 0; r < R; ++r) {
        m = std::min(m, x.getF(size_t(r * C + c)));
        acc += x.getF(size_t(r * C + c));
      }
      mn.setF(size_t(c), m);
      sum0.setF(size_t(c), acc);
    }
    Run run;
    run.args = {Arg::buf(x),           Arg::buf(Buffer(DType::F32, R)), Arg::buf(Buffer(DType::F32, C)),
                Arg::buf(Buffer(t, C)), Arg::buf(Buffer(t, R)),         Arg::buf(Buffer(DType::F32, R * C))};
    std::string nm = "fp8/reduce/" + tag(t);
    expect(run, 1, nm + "/max_axis1", mx);
    expect(run, 2, nm + "/min_axis0", mn);
    expect(run, 3, nm + "/sum_axis0", sum0);
    expect(run, 4, nm + "/sum_axis1", sum1);
    expect(run, 5, "fp8/scan/" + tag(t) + "/cumsum_axis1", cs);
    Batch b;
    b.name = nm;
    b.source = module("@triton.jit\ndef k(x_ptr, mx_ptr, mn_ptr, s0_ptr, s1_ptr, cs_ptr, R: tl.constexpr, C: tl.constexpr):\n"
                      "    r = tl.arange(0, R)\n    c = tl.arange(0, C)\n"
                      "    x = tl.load(x_ptr + r[:, None] * C + c[None, :])\n"
                      "    tl.store(mx_ptr + r, tl.max(x, axis=1))\n"
                      "    tl.store(mn_ptr + c, tl.min(x, axis=0))\n"
                      "    tl.store(s0_ptr + c, tl.sum(x, axis=0))\n"
                      "    tl.store(s1_ptr + r, tl.sum(x, axis=1))\n"
                      "    tl.store(cs_ptr + r[:, None] * C + c[None, :], tl.cumsum(x, axis=1))\n");
    b.signature = ptrSig({t, DType::F32, DType::F32, t, t, DType::F32}, std::to_string(R) + ", " + std::to_string(C));
    b.runs.push_back(std::move(run));
    s.add(std::move(b));
  }
}

/// tl.dot of [M, K] x [K, N] fp8 tiles, every pair of formats, fp32 and fp16 results. Magnitudes
/// in [2^-3, 2^3] keep every partial sum exact in fp32.
void dots(Suite &s) {
  constexpr int M = 32, N = 32, K = 64;
  for (DType ta : kFp8DTypes)
    for (DType tb : kFp8DTypes) {
      Rng rng(uint64_t(ta) * 7 + uint64_t(tb));
      Buffer a = fp8Values(ta, M * K, rng, -3, 3), bm = fp8Values(tb, K * N, rng, -3, 3);
      Buffer want(DType::F32, M * N), want16(DType::F16, M * N);
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          long double acc = 0;
          for (int k = 0; k < K; ++k)
            acc += a.getF(size_t(i * K + k)) * bm.getF(size_t(k * N + j));
          want.setF(size_t(i * N + j), acc);
          want16.setF(size_t(i * N + j), acc);
        }
      Run run;
      run.args = {Arg::buf(a), Arg::buf(bm), Arg::buf(Buffer(DType::F32, M * N)), Arg::buf(Buffer(DType::F16, M * N))};
      std::string nm = "fp8/dot/" + tag(ta) + "x" + tag(tb);
      expect(run, 2, nm + "/fp32", want);
      expect(run, 3, nm + "/out_fp16", want16);
      Batch b;
      b.name = nm;
      b.source = module("@triton.jit\ndef k(a_ptr, b_ptr, c_ptr, h_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):\n"
                        "    m = tl.arange(0, M)\n    n = tl.arange(0, N)\n    kk = tl.arange(0, K)\n"
                        "    a = tl.load(a_ptr + m[:, None] * K + kk[None, :])\n"
                        "    b = tl.load(b_ptr + kk[:, None] * N + n[None, :])\n"
                        "    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b))\n"
                        "    tl.store(h_ptr + m[:, None] * N + n[None, :], tl.dot(a, b, out_dtype=tl.float16))\n");
      b.signature = ptrSig({ta, tb, DType::F32, DType::F16},
                           std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K));
      b.runs.push_back(std::move(run));
      s.add(std::move(b));
    }
}

/// fp8 dots in a K loop, in the shapes sm_90a multiplies natively (wgmma m64nNk32: M a multiple
/// of 16 x num_warps, K of 32): B from a K-contiguous [N, K] buffer through tl.trans (both
/// operands K-major in pipelined shared-memory slots), or as an [K, N] tile (staged K-major from
/// registers), and one dot outside a loop. Elsewhere (the CPU, sm_80) the same kernels run
/// through fp16. Magnitudes in [2^-3, 2^3] keep every sum exact in fp32.
void loopDots(Suite &s) {
  constexpr int M = 64, N = 64, K = 128, BK = 32;
  struct W {
    const char *name;
    DType ta, tb;
    bool bTransposed, loop;
    int maxImprecise; ///< max_num_imprecise_acc (0: not given)
  };
  const W vs[] = {{"e4m3_bt", DType::F8E4M3, DType::F8E4M3, true, true, 0},
                  {"e5m2xe4m3_bt", DType::F8E5M2, DType::F8E4M3, true, true, 0},
                  {"e4m3_b_rowmajor", DType::F8E4M3, DType::F8E4M3, false, true, 0},
                  {"e5m2_single", DType::F8E5M2, DType::F8E5M2, true, false, 0},
                  {"e4m3_bt_imprecise32", DType::F8E4M3, DType::F8E4M3, true, true, 32},
                  {"e5m2_single_imprecise32", DType::F8E5M2, DType::F8E5M2, true, false, 32}};
  for (const W &v : vs) {
    Rng rng(uint64_t(v.ta) * 5 + uint64_t(v.tb) * 3 + (v.bTransposed ? 1 : 0) + (v.loop ? 2 : 0));
    int kk = v.loop ? K : BK;
    Buffer a = fp8Values(v.ta, size_t(M * kk), rng, -3, 3), bm = fp8Values(v.tb, size_t(kk * N), rng, -3, 3);
    // b holds B ([K, N]) row-major, or B^T ([N, K]) row-major when bTransposed.
    Buffer want(DType::F32, M * N);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        long double acc = 0;
        for (int k = 0; k < kk; ++k)
          acc += a.getF(size_t(i * kk + k)) * bm.getF(v.bTransposed ? size_t(j * kk + k) : size_t(k * N + j));
        want.setF(size_t(i * N + j), acc);
      }
    Run run;
    run.args = {Arg::buf(a), Arg::buf(bm), Arg::buf(Buffer(DType::F32, M * N))};
    std::string nm = std::string("fp8/dot_loop/") + v.name;
    // The CPU adds in fp32 (exact here). sm_90a's fp8 wgmma adds with fewer bits than fp32 (as
    // in Triton, whose default on sm_90 never promotes); max_num_imprecise_acc bounds how many
    // elements it adds so. Either way the error stays far below a wrong element or order.
    long double maxAbs = 0;
    for (size_t i = 0; i < want.size(); ++i)
      maxAbs = std::max(maxAbs, std::fabs(want.getF(i)));
    expect(run, 2, nm, want, Tol::exact(), Tol::close(2e-3, double(4e-3L * maxAbs)));
    std::string loadB = v.bTransposed ? "tl.trans(tl.load(b_ptr + n[:, None] * K + (k + kk)[None, :]))"
                                      : "tl.load(b_ptr + (k + kk)[:, None] * N + n[None, :])";
    std::string body = "@triton.jit\ndef k(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, "
                       "BK: tl.constexpr):\n"
                       "    m = tl.arange(0, M)\n    n = tl.arange(0, N)\n    kk = tl.arange(0, BK)\n"
                       "    acc = tl.zeros((M, N), dtype=tl.float32)\n";
    if (v.loop)
      body += "    for k in range(0, K, BK):\n"
              "        a = tl.load(a_ptr + m[:, None] * K + (k + kk)[None, :])\n"
              "        b = " + loadB + "\n"
              "        acc = tl.dot(a, b, acc{IMP})\n";
    else
      body += "    k = 0\n    a = tl.load(a_ptr + m[:, None] * K + kk[None, :])\n    b = " + loadB +
              "\n    acc = tl.dot(a, b{IMP})\n";
    body += "    tl.store(c_ptr + m[:, None] * N + n[None, :], acc)\n";
    Batch b;
    b.name = nm;
    b.source = module(subst(body, {{"IMP", v.maxImprecise ? ", max_num_imprecise_acc=" + std::to_string(v.maxImprecise) : ""}}));
    b.signature = ptrSig({v.ta, v.tb, DType::F32}, std::to_string(M) + ", " + std::to_string(N) + ", " +
                                                       std::to_string(kk) + ", " + std::to_string(BK));
    b.runs.push_back(std::move(run));
    s.add(std::move(b));
  }
}

/// dtype queries on fp8 and the errors fp8 brings.
void queriesAndErrors(Suite &s) {
  Buffer want(DType::I32, 8);
  const int64_t vals[] = {1, 0, 1, 1, 8, 3, 2, 0};
  for (size_t i = 0; i < 8; ++i)
    want.setI(i, uint64_t(vals[i]));
  Run run;
  run.args = {Arg::buf(Buffer(DType::F8E4M3, 8)), Arg::buf(Buffer(DType::I32, 8))};
  expect(run, 1, "fp8/dtype_queries", want);
  Batch q;
  q.name = "fp8/dtype_queries";
  q.source = module("@triton.jit\ndef k(x_ptr, o_ptr):\n"
                    "    t: tl.constexpr = x_ptr.dtype.element_ty\n"
                    "    i = tl.arange(0, 8)\n"
                    "    v = tl.where(i == 0, t.is_fp8(), 0)\n"
                    "    v = tl.where(i == 1, t.is_fp16(), v)\n"
                    "    v = tl.where(i == 2, t.is_floating(), v)\n"
                    "    v = tl.where(i == 3, t == tl.float8e4nv, v)\n"
                    "    v = tl.where(i == 4, t.primitive_bitwidth, v)\n"
                    "    v = tl.where(i == 5, t.fp_mantissa_width, v)\n"
                    "    v = tl.where(i == 6, tl.float8e5.fp_mantissa_width, v)\n"
                    "    v = tl.where(i == 7, t.is_standard_floating(), v)\n"
                    "    tl.store(o_ptr + i, v)\n");
  q.signature = "*fp8e4nv, *i32";
  q.runs.push_back(std::move(run));
  s.add(std::move(q));

  struct E {
    const char *name, *sig, *body, *error;
  };
  const E errs[] = {
      {"int_operand", "*fp8e4nv, *i32", "    x = tl.load(x_ptr)\n    y = tl.load(y_ptr)\n    tl.store(x_ptr, x + y)\n",
       "Triton promotes an fp8 value only with a float type"},
      {"atomic", "*fp8e4nv, *i32", "    tl.atomic_add(x_ptr, 1.0)\n", "no fp8 atomics"},
      {"e4b15", "*fp8e4nv, *i32", "    tl.store(x_ptr, tl.load(x_ptr).to(tl.float8e4b15))\n",
       "whose fp8 types are tl.float8e4nv and tl.float8e5"},
      {"scalar_param", "fp8e4nv, *i32", "    pass\n", "an fp8 scalar parameter is not supported"},
      {"libdevice", "*fp8e4nv, *i32", "    tl.store(x_ptr, tl.sin(tl.load(x_ptr)))\n", "expects fp32 or fp64"},
      {"rtz_same_width", "*fp8e4nv, *i32",
       "    tl.store(x_ptr, tl.load(x_ptr).to(tl.float8e5, fp_downcast_rounding=\"rtz\").to(tl.float8e4nv))\n",
       "fp_downcast_rounding applies only to float-to-narrower-float casts"},
  };
  for (const E &e : errs) {
    Batch b;
    b.name = std::string("fp8/error/") + e.name;
    b.source = module(std::string("@triton.jit\ndef k(x_ptr, y_ptr):\n") + e.body);
    b.signature = e.sig;
    b.expectError = e.error;
    s.add(std::move(b));
  }
}

} // namespace

void addFp8(Suite &s) {
  for (DType t : kFp8DTypes)
    fromFp8(s, t);
  for (DType to : kFp8DTypes)
    for (DType from : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8,
                       DType::F8E4M3, DType::F8E5M2})
      if (from != to)
        toFp8(s, from, to);
  arithmetic(s);
  memory(s);
  reductions(s);
  dots(s);
  loopDots(s);
  queriesAndErrors(s);
}

} // namespace tle::conformance
