// Family "shape": tl.trans (2-D, .T, 3-D with dims), tl.permute (every permutation of 3 dims),
// tl.reshape / tl.view (2-D <-> 1-D <-> 3-D), tl.join / tl.split (round trip and values), tl.cat,
// tl.expand_dims (several axes, negative, a tuple of axes), tl.broadcast_to, tl.broadcast (both
// operands to their common shape), tl.zeros / tl.full / tl.arange with
// offsets and tl.zeros_like, over several dtypes. References are index arithmetic on the host.
#include "Families.h"

#include <algorithm>
#include <array>

namespace tle::conformance {

namespace {

/// `n` distinct values of dtype t (exact in every dtype: small integers, wrapped for i8).
Buffer iota(DType t, size_t n, long double scale = 1) {
  Buffer b(t, n);
  for (size_t i = 0; i < n; ++i)
    b.setF(i, t == DType::I1 ? (long double)(i % 3 == 0) : isFloatT(t) ? (long double)i * scale - 7 : (long double)(i % 100));
  return b;
}

void permutes(Suite &s, DType t) {
  const std::array<int, 3> dims = {2, 4, 8};
  Buffer x = iota(t, 64);
  std::array<int, 3> p = {0, 1, 2};
  int idx = 0;
  do {
    std::array<int, 3> od = {dims[size_t(p[0])], dims[size_t(p[1])], dims[size_t(p[2])]};
    Buffer want(t, 64);
    for (int a = 0; a < od[0]; ++a)
      for (int b = 0; b < od[1]; ++b)
        for (int c = 0; c < od[2]; ++c) {
          int src[3];
          src[p[0]] = a, src[p[1]] = b, src[p[2]] = c;
          want.setBits(size_t((a * od[1] + b) * od[2] + c), x.bits(size_t((src[0] * 4 + src[1]) * 8 + src[2])));
        }
    std::string ps = std::to_string(p[0]) + std::to_string(p[1]) + std::to_string(p[2]);
    Run run;
    run.args = {Arg::buf(x), Arg::buf(Buffer(t, 64)), Arg::buf(Buffer(t, 64))};
    expect(run, 1, "shape/permute/" + ps + "/" + tag(t), want);
    expect(run, 2, "shape/trans_dims/" + ps + "/" + tag(t), want);
    Batch b;
    b.name = "shape/permute/" + ps + "/" + tag(t);
    b.source = module(subst(
        "@triton.jit\ndef k(x_ptr, o_ptr, o2_ptr):\n    a = tl.arange(0, 2)\n    b = tl.arange(0, 4)\n    c = tl.arange(0, 8)\n"
        "    x = tl.load(x_ptr + a[:, None, None] * 32 + b[None, :, None] * 8 + c[None, None, :])\n"
        "    y = tl.permute(x, ({P0}, {P1}, {P2}))\n    z = tl.trans(x, {P0}, {P1}, {P2})\n"
        "    i = tl.arange(0, {D0})\n    j = tl.arange(0, {D1})\n    l = tl.arange(0, {D2})\n"
        "    o = i[:, None, None] * ({D1} * {D2}) + j[None, :, None] * {D2} + l[None, None, :]\n"
        "    tl.store(o_ptr + o, y)\n    tl.store(o2_ptr + o, z)\n",
        {{"P0", std::to_string(p[0])}, {"P1", std::to_string(p[1])}, {"P2", std::to_string(p[2])},
         {"D0", std::to_string(od[0])}, {"D1", std::to_string(od[1])}, {"D2", std::to_string(od[2])}}));
    b.signature = ptrSig({t, t, t});
    b.runs.push_back(std::move(run));
    s.add(std::move(b));
    ++idx;
  } while (std::next_permutation(p.begin(), p.end()));
}

void twoD(Suite &s, DType t, int M, int N) {
  Buffer x = iota(t, size_t(M * N));
  Buffer tr(t, size_t(M * N));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      tr.setBits(size_t(j * M + i), x.bits(size_t(i * N + j)));
  // join(x, x2) -> [M, N, 2]; split gives both back; cat of the two rows of a reshape.
  Buffer x2 = iota(t, size_t(M * N), 0.5);
  Buffer joined(t, size_t(M * N * 2));
  for (size_t k = 0; k < size_t(M * N); ++k) {
    joined.setBits(2 * k, x.bits(k));
    joined.setBits(2 * k + 1, x2.bits(k));
  }
  Buffer cat(t, size_t(2 * M * N));
  for (size_t k = 0; k < size_t(M * N); ++k) {
    cat.setBits(k, x.bits(k));
    cat.setBits(size_t(M * N) + k, x2.bits(k));
  }
  Buffer zeros(t, size_t(M * N)), full(t, size_t(M * N)), ar(DType::I32, size_t(N));
  for (size_t k = 0; k < size_t(M * N); ++k)
    full.setF(k, t == DType::I1 ? 1 : 3);
  for (int j = 0; j < N; ++j)
    ar.setI(size_t(j), uint64_t(j + 5));
  Buffer bto(t, size_t(M * N)); // broadcast_to(row[:, None], (M, N)) with row[i] = x[i, 0]
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      bto.setBits(size_t(i * N + j), x.bits(size_t(i * N)));
  std::string sh = std::to_string(M) + "x" + std::to_string(N) + "/" + tag(t);
  Run run;
  run.args = {Arg::buf(x), Arg::buf(x2)};
  const std::vector<std::pair<std::string, Buffer>> outs = {
      {"trans", tr},           {"dot_T", tr},      {"reshape_1d", x},     {"reshape_3d", x}, {"view", x},
      {"join", joined},        {"split0", x},      {"split1", x2},        {"cat", cat},      {"zeros_like", zeros},
      {"full", full},          {"broadcast_to", bto}, {"expand_dims_neg", x}, {"arange_offset", ar}};
  std::vector<DType> ptrs = {t, t};
  for (auto &[name, want] : outs) {
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(want.dtype, want.size())));
    ptrs.push_back(want.dtype);
    Check &c = expect(run, idx, "shape/" + name + "/" + sh, want);
    if (name == "cat") // Triton's cat may reorder (can_reorder=True is required): compare as multisets
      c.validate = [idx, want](const std::vector<Arg> &args) -> std::string {
        const Buffer &got = args[size_t(idx)].buffer;
        std::vector<uint64_t> g, w;
        for (size_t k = 0; k < want.size(); ++k)
          g.push_back(got.bits(k)), w.push_back(want.bits(k));
        std::sort(g.begin(), g.end());
        std::sort(w.begin(), w.end());
        return g == w ? "" : "the concatenation does not hold the elements of both inputs";
      };
  }
  Batch b;
  b.name = "shape/2d/" + sh;
  b.source = module(subst(
      "@triton.jit\ndef k(x_ptr, x2_ptr, o_tr, o_T, o_r1, o_r3, o_view, o_join, o_s0, o_s1, o_cat, o_zl, o_full, o_bt, o_ed, o_ar,\n"
      "      M: tl.constexpr, N: tl.constexpr):\n"
      "    i = tl.arange(0, M)\n    j = tl.arange(0, N)\n    idx = i[:, None] * N + j[None, :]\n"
      "    x = tl.load(x_ptr + idx)\n    x2 = tl.load(x2_ptr + idx)\n"
      "    tl.store(o_tr + j[:, None] * M + i[None, :], tl.trans(x))\n"
      "    tl.store(o_T + j[:, None] * M + i[None, :], x.T)\n"
      "    f = tl.arange(0, M * N)\n    tl.store(o_r1 + f, tl.reshape(x, (M * N,)))\n"
      "    r3 = tl.reshape(x, (2, M // 2, N))\n"
      "    a = tl.arange(0, 2)\n    bb = tl.arange(0, M // 2)\n"
      "    tl.store(o_r3 + a[:, None, None] * (M // 2 * N) + bb[None, :, None] * N + j[None, None, :], r3)\n"
      "    tl.store(o_view + f, x.reshape(M * N))\n"
      "    jn = tl.join(x, x2)\n    c2 = tl.arange(0, 2)\n    tl.store(o_join + idx[:, :, None] * 2 + c2[None, None, :], jn)\n"
      "    s0, s1 = tl.split(jn)\n    tl.store(o_s0 + idx, s0)\n    tl.store(o_s1 + idx, s1)\n"
      "    g = tl.arange(0, 2 * M * N)\n    tl.store(o_cat + g, tl.cat(tl.reshape(x, (M * N,)), tl.reshape(x2, (M * N,)), can_reorder=True))\n"
      "    tl.store(o_zl + idx, tl.zeros_like(x))\n"
      "    tl.store(o_full + idx, tl.full((M, N), {FULL}, {T}))\n"
      "    row = tl.load(x_ptr + i * N)\n    tl.store(o_bt + idx, tl.broadcast_to(row[:, None], (M, N)))\n"
      "    e = tl.expand_dims(tl.reshape(x, (M * N,)), -1)\n    tl.store(o_ed + f[:, None] + tl.arange(0, 1)[None, :], e)\n"
      "    tl.store(o_ar + j, tl.arange(5, 5 + N))\n",
      {{"T", tlName(t)}, {"FULL", t == DType::I1 ? "True" : "3"}}));
  b.signature = ptrSig(ptrs, std::to_string(M) + ", " + std::to_string(N));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

/// tl.expand_dims with a tuple of axes ([N] -> [1, N, 1]; [M, N] with (-1, 1) -> [M, 1, N, 1])
/// and tl.broadcast of a column and a row to [M, N].
void expandTupleAndBroadcast(Suite &s, DType t, int M, int N) {
  Buffer x = iota(t, size_t(M * N));
  Buffer row(t, size_t(N)), a(t, size_t(M * N)), bb(t, size_t(M * N));
  for (int j = 0; j < N; ++j)
    row.setBits(size_t(j), x.bits(size_t(j)));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      a.setBits(size_t(i * N + j), x.bits(size_t(i * N)));
      bb.setBits(size_t(i * N + j), x.bits(size_t(j)));
    }
  std::string sh = std::to_string(M) + "x" + std::to_string(N) + "/" + tag(t);
  Run run;
  run.args = {Arg::buf(x)};
  const std::vector<std::pair<std::string, Buffer>> outs = {
      {"expand_dims_tuple", row}, {"expand_dims_tuple_neg", x}, {"broadcast_col", a}, {"broadcast_row", bb}};
  for (auto &[name, want] : outs) {
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(t, want.size())));
    expect(run, idx, "shape/" + name + "/" + sh, want);
  }
  Batch b;
  b.name = "shape/expand_broadcast/" + sh;
  b.source = module(
      "@triton.jit\ndef k(x_ptr, o_e3, o_e4, o_a, o_b, M: tl.constexpr, N: tl.constexpr):\n"
      "    i = tl.arange(0, M)\n    j = tl.arange(0, N)\n    o = tl.arange(0, 1)\n    idx = i[:, None] * N + j[None, :]\n"
      "    x = tl.load(x_ptr + idx)\n"
      "    e3 = tl.expand_dims(tl.load(x_ptr + j), (0, 2))\n    tl.static_assert(e3.shape == (1, N, 1))\n"
      "    tl.store(o_e3 + o[:, None, None] + j[None, :, None] + o[None, None, :], e3)\n"
      "    e4 = x.expand_dims((-1, 1))\n    tl.static_assert(e4.shape == (M, 1, N, 1))\n"
      "    tl.store(o_e4 + i[:, None, None, None] * N + o[None, :, None, None] + j[None, None, :, None] + o[None, None, None, :], e4)\n"
      "    ca, rb = tl.broadcast(tl.load(x_ptr + i * N)[:, None], tl.load(x_ptr + j)[None, :])\n"
      "    tl.static_assert(ca.shape == (M, N) and rb.shape == (M, N))\n"
      "    tl.store(o_a + idx, ca)\n    tl.store(o_b + idx, rb)\n");
  b.signature = ptrSig({t, t, t, t, t}, std::to_string(M) + ", " + std::to_string(N));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

} // namespace

void addShapes(Suite &s) {
  for (DType t : {DType::I32, DType::F16, DType::F64, DType::I8, DType::BF16, DType::U64})
    permutes(s, t);
  for (DType t : {DType::I32, DType::F32, DType::F16, DType::I8, DType::I64, DType::BF16, DType::U16, DType::F64})
    for (auto [M, N] : {std::pair{2, 8}, std::pair{16, 16}, std::pair{8, 32}, std::pair{32, 4}})
      twoD(s, t, M, N);
  for (DType t : {DType::I32, DType::F16, DType::I8, DType::F64})
    expandTupleAndBroadcast(s, t, 8, 16);
  Batch e;
  e.name = "shape/error/reshape_count";
  e.source = module("@triton.jit\ndef k(x_ptr):\n    x = tl.load(x_ptr + tl.arange(0, 16))\n    y = tl.reshape(x, (4, 8))\n"
                    "    tl.store(x_ptr + tl.arange(0, 16), tl.reshape(y, (16,)))\n");
  e.signature = "*fp32";
  e.expectError = "reshape";
  s.add(std::move(e));
  Batch e2 = e;
  e2.name = "shape/error/permute_dims";
  e2.source = module("@triton.jit\ndef k(x_ptr):\n    i = tl.arange(0, 4)\n    x = tl.load(x_ptr + i[:, None] * 4 + i[None, :])\n"
                     "    tl.store(x_ptr + i[:, None] * 4 + i[None, :], tl.permute(x, (0, 0)))\n");
  e2.expectError = "permut";
  s.add(std::move(e2));
  Batch e3;
  e3.name = "shape/error/expand_dims_axis_range";
  e3.signature = "*fp32";
  e3.source = module("@triton.jit\ndef k(x_ptr):\n    x = tl.load(x_ptr + tl.arange(0, 4))\n"
                     "    y = tl.expand_dims(x, (0, 3))\n");
  e3.expectError = "axis 3 is out of range for a result of rank 3";
  s.add(std::move(e3));
}

} // namespace tle::conformance
