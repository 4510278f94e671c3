// Family "combine": tl.reduce and tl.associative_scan with @triton.jit combine functions (tuples
// of inputs, a runtime `if` inside the combine, keep_dims, axis=None), tl.xor_sum, tl.reduce_or
// (integers and booleans), and their errors. The scans use associative combines that are not commutative (affine maps, 2x2 integer
// matrix products, "last non-zero"), so the order of combination is checked too: forward
// result[i] = combine(result[i-1], x[i]); reverse result[i] = combine(result[i+1], x[i]) (flip,
// scan, flip). References are sequential loops over wrapping integers or exact values.
#include "Families.h"

namespace tle::conformance {

namespace {

/// Element index of (row r, column c) in a row-major [M, N] tile.
size_t at(int r, int c, int N) { return size_t(r) * size_t(N) + size_t(c); }

/// tl.reduce((x, index), axis, argmax combine with ties to the lower index) on [M, N] data
/// along both axes, on a 1-D tile, and with axis=None and keep_dims; small integer values make
/// ties common.
void argmaxCase(Suite &s, DType t, int M, int N, int L, int warps, const std::string &suffix) {
  Rng rng(uint64_t(t) * 31 + uint64_t(M * N + L));
  Buffer x2 = smallInts(t, size_t(M * N), rng, -6, 6), x1 = smallInts(t, size_t(L), rng, -6, 6);
  // The first maximum of `n` elements, element k at x[first + k * stride].
  auto argmax = [&](const Buffer &x, size_t first, size_t stride, int n, Buffer &v, Buffer &ix, size_t out) {
    int best = 0;
    for (int k = 1; k < n; ++k)
      if (x.getF(first + size_t(k) * stride) > x.getF(first + size_t(best) * stride))
        best = k;
    v.setF(out, x.getF(first + size_t(best) * stride));
    ix.setI(out, uint64_t(best));
  };
  Buffer v0(t, size_t(N)), i0(DType::I32, size_t(N)), v1(t, size_t(M)), i1(DType::I32, size_t(M));
  Buffer vl(t, 1), il(DType::I32, 1), vn(t, 1), in(DType::I32, 1);
  for (int c = 0; c < N; ++c)
    argmax(x2, size_t(c), size_t(N), M, v0, i0, size_t(c));
  for (int r = 0; r < M; ++r)
    argmax(x2, at(r, 0, N), 1, N, v1, i1, size_t(r));
  argmax(x1, 0, 1, L, vl, il, 0);
  argmax(x2, 0, 1, M * N, vn, in, 0);
  std::string nm = "combine/reduce_argmax/" + tag(t) + suffix;
  Run run;
  run.args = {Arg::buf(x2), Arg::buf(x1)};
  std::vector<std::pair<std::string, Buffer>> outs = {{"axis0_value", v0}, {"axis0_index", i0}, {"axis1_value", v1},
                                                      {"axis1_index", i1}, {"1d_value", vl},    {"1d_index", il},
                                                      {"none_value", vn},  {"none_index", in}};
  for (auto &[name, want] : outs) {
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(want.dtype, want.size())));
    expect(run, idx, nm + "/" + name, want);
  }
  Batch b;
  b.name = nm;
  b.source = module(
      "@triton.jit\ndef pick(v1, i1, v2, i2):\n"
      "    first = (v1 > v2) | ((v1 == v2) & (i1 < i2))\n"
      "    return tl.where(first, v1, v2), tl.where(first, i1, i2)\n\n"
      "@triton.jit\ndef k(x2_ptr, x1_ptr, v0, i0, v1, i1, vl, il, vn, inn, M: tl.constexpr, N: tl.constexpr,\n"
      "      L: tl.constexpr):\n"
      "    i = tl.arange(0, M)\n    j = tl.arange(0, N)\n    idx = i[:, None] * N + j[None, :]\n"
      "    x = tl.load(x2_ptr + idx)\n"
      "    a, b = tl.reduce((x, tl.broadcast_to(i[:, None], (M, N))), 0, pick)\n"
      "    tl.store(v0 + j, a)\n    tl.store(i0 + j, b)\n"
      "    a, b = tl.reduce((x, tl.broadcast_to(j[None, :], (M, N))), axis=1, combine_fn=pick)\n"
      "    tl.store(v1 + i, a)\n    tl.store(i1 + i, b)\n"
      "    l = tl.arange(0, L)\n    z = tl.load(x1_ptr + l)\n"
      "    a, b = tl.reduce((z, l), 0, pick)\n    tl.store(vl, a)\n    tl.store(il, b)\n"
      "    a, b = tl.reduce((x, idx), None, pick, keep_dims=True)\n"
      "    tl.static_assert(a.shape == (1, 1))\n"
      "    o = tl.arange(0, 1)[:, None]\n    tl.store(vn + o, a)\n    tl.store(inn + o, b)\n");
  b.signature = ptrSig({t, t, t, DType::I32, t, DType::I32, t, DType::I32, t, DType::I32},
                       std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(L));
  b.numWarps = warps;
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// tl.reduce with a combine that returns from inside a runtime `if` (the maximum), and
/// tl.xor_sum, along both axes and over the whole tile.
void ifAndXorCase(Suite &s, DType t) {
  Rng rng(uint64_t(t) * 7 + 3);
  const int M = 8, N = 32;
  bool fl = isFloatT(t);
  Buffer x = fl ? randomBuffer(t, size_t(M * N), rng, 50) : randomBuffer(t, size_t(M * N), rng);
  Buffer m0(t, size_t(N)), m1(t, size_t(M)), x0(t, size_t(N)), x1(t, size_t(M)), xa(t, 1);
  for (int c = 0; c < N; ++c) {
    long double best = x.getF(size_t(c));
    uint64_t acc = 0;
    for (int r = 0; r < M; ++r) {
      best = std::max(best, x.getF(at(r, c, N)));
      acc ^= x.getI(at(r, c, N));
    }
    m0.setF(size_t(c), best);
    if (!fl)
      x0.setI(size_t(c), acc);
  }
  uint64_t all = 0;
  for (int r = 0; r < M; ++r) {
    long double best = x.getF(at(r, 0, N));
    uint64_t acc = 0;
    for (int c = 0; c < N; ++c) {
      best = std::max(best, x.getF(at(r, c, N)));
      acc ^= x.getI(at(r, c, N));
    }
    m1.setF(size_t(r), best);
    if (!fl)
      x1.setI(size_t(r), acc);
    all ^= acc;
  }
  xa.setI(0, all);
  std::string nm = "combine/reduce_if_xor/" + tag(t);
  Run run;
  run.args = {Arg::buf(x)};
  std::vector<std::pair<std::string, Buffer>> outs = {{"if_max_axis0", m0}, {"if_max_axis1", m1}};
  if (!fl)
    outs.insert(outs.end(), {{"xor_sum_axis0", x0}, {"xor_sum_axis1", x1}, {"xor_sum_all", xa}});
  for (auto &[name, want] : outs) {
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(t, want.size())));
    expect(run, idx, nm + "/" + name, want);
  }
  std::string body =
      "@triton.jit\ndef bigger(a, b):\n    if a > b:\n        return a\n    return b\n\n"
      "@triton.jit\ndef k(x_ptr, m0, m1{XARGS}, M: tl.constexpr, N: tl.constexpr):\n"
      "    i = tl.arange(0, M)\n    j = tl.arange(0, N)\n    x = tl.load(x_ptr + i[:, None] * N + j[None, :])\n"
      "    tl.store(m0 + j, tl.reduce(x, 0, bigger))\n    tl.store(m1 + i, x.reduce(1, bigger))\n";
  if (!fl)
    body += "    r = tl.xor_sum(x, axis=0)\n    tl.static_assert(r.dtype == x.dtype)\n    tl.store(x0 + j, r)\n"
            "    tl.store(x1 + i, x.xor_sum(1))\n    tl.store(xa + tl.arange(0, 1)[:, None], tl.xor_sum(x, keep_dims=True))\n";
  Batch b;
  b.name = nm;
  b.source = module(subst(body, {{"XARGS", fl ? "" : ", x0, x1, xa"}}));
  std::vector<DType> ptrs(outs.size() + 1, t);
  b.signature = ptrSig(ptrs, std::to_string(M) + ", " + std::to_string(N));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// A sequential scan reference over `n` operand buffers of one shape [rows, cols] along `axis`
/// with the combine `f` on integer bits (wrapped to each operand's dtype).
using IntCombine = std::function<std::vector<uint64_t>(const std::vector<uint64_t> &, const std::vector<uint64_t> &)>;
std::vector<Buffer> scanRef(const std::vector<Buffer> &xs, int rows, int cols, int axis, bool reverse, const IntCombine &f) {
  std::vector<Buffer> out;
  for (const Buffer &x : xs)
    out.push_back(Buffer(x.dtype, x.size()));
  int outer = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
  for (int o = 0; o < outer; ++o) {
    std::vector<uint64_t> acc;
    for (int step = 0; step < len; ++step) {
      int k = reverse ? len - 1 - step : step;
      size_t idx = axis == 0 ? at(k, o, cols) : at(o, k, cols);
      std::vector<uint64_t> v;
      for (const Buffer &x : xs)
        v.push_back(x.getI(idx));
      acc = step == 0 ? v : f(acc, v);
      for (size_t q = 0; q < xs.size(); ++q) {
        acc[q] = wrapInt(acc[q], xs[q].dtype);
        out[q].setI(idx, acc[q]);
      }
    }
  }
  return out;
}

/// tl.associative_scan with non-commutative combines on integers: affine maps (a, b) (two
/// operands: x -> a * x + b composed, wrapping) and 2x2 matrix products (four operands), along
/// both axes of [M, N] and a 1-D tile of L, forward and reverse.
void scanCase(Suite &s, DType t, int M, int N, int L, int warps, const std::string &suffix) {
  Rng rng(uint64_t(t) * 13 + uint64_t(M * N + L));
  auto small = [&](size_t n) { return smallInts(t, n, rng, isSignedT(t) ? -3 : 0, 3); };
  Buffer a2 = small(size_t(M * N)), b2 = randomBuffer(t, size_t(M * N), rng), a1 = small(size_t(L)),
         b1 = randomBuffer(t, size_t(L), rng);
  std::vector<Buffer> m1 = {small(size_t(L)), small(size_t(L)), small(size_t(L)), small(size_t(L))};
  IntCombine affine = [](const std::vector<uint64_t> &p, const std::vector<uint64_t> &q) {
    return std::vector<uint64_t>{p[0] * q[0], p[1] * q[0] + q[1]};
  };
  IntCombine matmul = [](const std::vector<uint64_t> &p, const std::vector<uint64_t> &q) {
    return std::vector<uint64_t>{p[0] * q[0] + p[1] * q[2], p[0] * q[1] + p[1] * q[3], p[2] * q[0] + p[3] * q[2],
                                 p[2] * q[1] + p[3] * q[3]};
  };
  std::string nm = "combine/scan_ordered/" + tag(t) + suffix;
  Run run;
  run.args = {Arg::buf(a2), Arg::buf(b2), Arg::buf(a1), Arg::buf(b1)};
  for (auto &m : m1)
    run.args.push_back(Arg::buf(m));
  std::vector<std::pair<std::string, Buffer>> outs;
  auto add = [&](const std::string &name, const std::vector<Buffer> &bufs) {
    for (size_t q = 0; q < bufs.size(); ++q)
      outs.push_back({name + "_" + std::to_string(q), bufs[q]});
  };
  add("affine_axis0", scanRef({a2, b2}, M, N, 0, false, affine));
  add("affine_axis1", scanRef({a2, b2}, M, N, 1, false, affine));
  add("affine_axis1_reverse", scanRef({a2, b2}, M, N, 1, true, affine));
  add("affine_axis0_reverse", scanRef({a2, b2}, M, N, 0, true, affine));
  add("affine_1d", scanRef({a1, b1}, 1, L, 1, false, affine));
  add("matmul_1d", scanRef(m1, 1, L, 1, false, matmul));
  add("matmul_1d_reverse", scanRef(m1, 1, L, 1, true, matmul));
  std::vector<DType> ptrs(run.args.size(), t);
  for (auto &[name, want] : outs) {
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(t, want.size())));
    ptrs.push_back(t);
    expect(run, idx, nm + "/" + name, want);
  }
  Batch b;
  b.name = nm;
  b.source = module(
      "@triton.jit\ndef affine(a1, b1, a2, b2):\n    return a1 * a2, b1 * a2 + b2\n\n"
      "@triton.jit\ndef matmul(a, b, c, d, e, f, g, h):\n"
      "    return a * e + b * g, a * f + b * h, c * e + d * g, c * f + d * h\n\n"
      "@triton.jit\ndef k(a2p, b2p, a1p, b1p, m0p, m1p, m2p, m3p,\n"
      "      o0a, o0b, o1a, o1b, o1ra, o1rb, o0ra, o0rb, ola, olb, om0, om1, om2, om3, omr0, omr1, omr2, omr3,\n"
      "      M: tl.constexpr, N: tl.constexpr, L: tl.constexpr):\n"
      "    i = tl.arange(0, M)\n    j = tl.arange(0, N)\n    idx = i[:, None] * N + j[None, :]\n"
      "    a = tl.load(a2p + idx)\n    b = tl.load(b2p + idx)\n"
      "    p, q = tl.associative_scan((a, b), 0, affine)\n    tl.store(o0a + idx, p)\n    tl.store(o0b + idx, q)\n"
      "    p, q = tl.associative_scan((a, b), axis=-1, combine_fn=affine)\n"
      "    tl.store(o1a + idx, p)\n    tl.store(o1b + idx, q)\n"
      "    p, q = tl.associative_scan((a, b), 1, affine, reverse=True)\n"
      "    tl.store(o1ra + idx, p)\n    tl.store(o1rb + idx, q)\n"
      "    p, q = tl.associative_scan((a, b), 0, affine, True)\n"
      "    tl.store(o0ra + idx, p)\n    tl.store(o0rb + idx, q)\n"
      "    l = tl.arange(0, L)\n"
      "    p, q = tl.associative_scan((tl.load(a1p + l), tl.load(b1p + l)), 0, affine)\n"
      "    tl.store(ola + l, p)\n    tl.store(olb + l, q)\n"
      "    m = (tl.load(m0p + l), tl.load(m1p + l), tl.load(m2p + l), tl.load(m3p + l))\n"
      "    r0, r1, r2, r3 = tl.associative_scan(m, 0, matmul)\n"
      "    tl.store(om0 + l, r0)\n    tl.store(om1 + l, r1)\n    tl.store(om2 + l, r2)\n    tl.store(om3 + l, r3)\n"
      "    r = tl.associative_scan(m, 0, matmul, reverse=True)\n"
      "    tl.store(omr0 + l, r[0])\n    tl.store(omr1 + l, r[1])\n    tl.store(omr2 + l, r[2])\n    tl.store(omr3 + l, r[3])\n");
  b.signature = ptrSig(ptrs, std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(L));
  b.numWarps = warps;
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// A one-operand non-commutative scan on floats: the last non-zero element so far (exact), as a
/// tensor method, forward and reverse.
void lastNonZeroCase(Suite &s, DType t) {
  Rng rng(uint64_t(t) * 5 + 11);
  const int L = 128;
  Buffer x(t, size_t(L));
  for (int k = 0; k < L; ++k)
    x.setF(size_t(k), rng.next() % 3 == 0 ? (long double)rng.range(-9, 9) : 0.0L);
  Buffer fwd(t, size_t(L)), rev(t, size_t(L));
  long double last = 0;
  for (int k = 0; k < L; ++k) {
    if (x.getF(size_t(k)) != 0 || k == 0)
      last = x.getF(size_t(k));
    fwd.setF(size_t(k), last);
  }
  for (int k = L - 1; k >= 0; --k) {
    if (x.getF(size_t(k)) != 0 || k == L - 1)
      last = x.getF(size_t(k));
    rev.setF(size_t(k), last);
  }
  std::string nm = "combine/scan_last_nonzero/" + tag(t);
  Run run;
  run.args = {Arg::buf(x), Arg::buf(Buffer(t, size_t(L))), Arg::buf(Buffer(t, size_t(L)))};
  expect(run, 1, nm + "/forward", fwd, Tol::exact().anyZero());
  expect(run, 2, nm + "/reverse", rev, Tol::exact().anyZero());
  Batch b;
  b.name = nm;
  b.source = module("@triton.jit\ndef last(a, b):\n    return tl.where(b != 0, b, a)\n\n"
                    "@triton.jit\ndef k(x_ptr, f_ptr, r_ptr, L: tl.constexpr):\n"
                    "    l = tl.arange(0, L)\n    x = tl.load(x_ptr + l)\n"
                    "    tl.store(f_ptr + l, x.associative_scan(0, last))\n"
                    "    tl.store(r_ptr + l, tl.associative_scan(x, 0, last, reverse=True))\n");
  b.signature = ptrSig({t, t, t}, std::to_string(L));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// tl.reduce_or along both axes and over the whole tile, of sparse bit patterns (integers) or
/// mostly-false booleans.
void reduceOrCase(Suite &s, DType t) {
  Rng rng(uint64_t(t) * 13 + 5);
  const int M = 8, N = 32;
  const int bits = t == DType::I1 ? 1 : dbits(t);
  Buffer x(t, size_t(M * N));
  for (size_t i = 0; i < x.size(); ++i)
    x.setI(i, rng.next() % 9 == 0 ? (1ull << (rng.next() % uint64_t(bits))) : 0);
  Buffer o0(t, size_t(N)), o1(t, size_t(M)), oa(t, 1);
  uint64_t all = 0;
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      uint64_t v = x.getI(at(r, c, N));
      o0.setI(size_t(c), o0.getI(size_t(c)) | v);
      o1.setI(size_t(r), o1.getI(size_t(r)) | v);
      all |= v;
    }
  oa.setI(0, all);
  std::string nm = "combine/reduce_or/" + tag(t);
  Run run;
  run.args = {Arg::buf(x), Arg::buf(Buffer(t, size_t(N))), Arg::buf(Buffer(t, size_t(M))), Arg::buf(Buffer(t, 1))};
  expect(run, 1, nm + "/axis0", o0);
  expect(run, 2, nm + "/axis1_method", o1);
  expect(run, 3, nm + "/all_keep_dims", oa);
  Batch b;
  b.name = nm;
  b.source = module("@triton.jit\ndef k(x_ptr, o0, o1, oa, M: tl.constexpr, N: tl.constexpr):\n"
                    "    i = tl.arange(0, M)\n    j = tl.arange(0, N)\n    x = tl.load(x_ptr + i[:, None] * N + j[None, :])\n"
                    "    r = tl.reduce_or(x, 0)\n    tl.static_assert(r.dtype == x.dtype)\n    tl.store(o0 + j, r)\n"
                    "    tl.store(o1 + i, x.reduce_or(axis=1))\n"
                    "    tl.store(oa + tl.arange(0, 1)[:, None], tl.reduce_or(x, None, keep_dims=True))\n");
  b.signature = ptrSig({t, t, t, t}, std::to_string(M) + ", " + std::to_string(N));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// Programs that must not compile, with the message they must give.
void errorCases(Suite &s) {
  struct E {
    const char *name, *helper, *call, *error;
  };
  const E cases[] = {
      {"wrong_count", "def f(a, b, c, d):\n    return a + c\n", "tl.reduce((x, x), 0, f)", "returns 1 value for 2 inputs"},
      {"wrong_dtype", "def f(a, b):\n    return a + 1.5\n", "tl.reduce(x, 0, f)", "must keep each input's dtype"},
      {"makes_tile", "def f(a, b):\n    return a + tl.sum(tl.arange(0, 2))\n", "tl.reduce(x, 0, f)", "cannot build a tile"},
      {"returns_none", "def f(a, b):\n    pass\n", "tl.associative_scan(x, 0, f)", "returns nothing"},
      {"not_jit", nullptr, "tl.reduce(x, 0, 3)", "combine_fn must be a @triton.jit function"},
      {"scan_axis_none", "def f(a, b):\n    return a + b\n", "tl.associative_scan(x, None, f)", "needs an integer axis"},
      {"shapes_differ", "def f(a, b, c, d):\n    return a, b\n", "tl.reduce((x, x[:, None]), 0, f)", "inputs must have one shape"},
      {"axis_range", "def f(a, b):\n    return a + b\n", "tl.reduce(x, 1, f)", "axis 1 is out of range"},
      {"xor_float", nullptr, "tl.xor_sum(x.to(tl.float32))", "xor_sum only supported for integers"},
      {"or_float", nullptr, "tl.reduce_or(x.to(tl.float16), 0)", "reduce_or only supported for integers"},
      {"or_no_axis", nullptr, "tl.reduce_or(x)", "missing required argument 'axis'"},
  };
  for (const E &e : cases) {
    Batch b;
    b.name = std::string("combine/error/") + e.name;
    std::string src;
    if (e.helper)
      src += std::string("@triton.jit\n") + e.helper + "\n";
    src += "@triton.jit\ndef k(x_ptr, o_ptr):\n    x = tl.load(x_ptr + tl.arange(0, 16))\n    r = " +
           std::string(e.call) + "\n";
    b.source = module(src);
    b.signature = "*i32, *i32";
    b.expectError = e.error;
    s.add(std::move(b));
  }
}

} // namespace

void addCombine(Suite &s) {
  for (DType t : {DType::I32, DType::F32, DType::I8, DType::F16, DType::U64})
    argmaxCase(s, t, 8, 32, 64, 4, "");
  // Tiles over several warps: on the GPU the combine runs across registers, lanes and warps
  // (through shared memory), in element order.
  argmaxCase(s, DType::F32, 16, 256, 2048, 8, "/16x256_w8");
  argmaxCase(s, DType::I32, 64, 64, 1024, 4, "/64x64_w4");
  for (DType t : {DType::I32, DType::F32, DType::I8, DType::U64, DType::I64})
    ifAndXorCase(s, t);
  for (DType t : {DType::I1, DType::I8, DType::U16, DType::I32, DType::U64})
    reduceOrCase(s, t);
  for (DType t : {DType::I32, DType::U32, DType::I64, DType::I16})
    scanCase(s, t, 4, 32, 64, 4, "");
  scanCase(s, DType::I32, 16, 256, 2048, 8, "/16x256_w8");
  scanCase(s, DType::U64, 64, 64, 1024, 4, "/64x64_w4");
  for (DType t : {DType::F32, DType::F16, DType::F64})
    lastNonZeroCase(s, t);
  errorCases(s);
}

} // namespace tle::conformance
