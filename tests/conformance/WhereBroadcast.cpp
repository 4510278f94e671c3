// Families "where" (tl.where over every pair of value dtypes, with scalar operands) and
// "broadcast" (NumPy broadcasting through x[:, None] / x[None, :], implicit leading dims,
// runtime scalars, tl.broadcast_to, tl.expand_dims, 3-D, with promotion).
#include "Families.h"

namespace tle::conformance {

namespace {

constexpr size_t kN = 64;

void wherePair(Suite &s, DType a, DType b) {
  Rng rng(uint64_t(a) * 59 + uint64_t(b) + 17);
  Buffer c = randomBuffer(DType::I1, kN, rng), x = randomBuffer(a, kN, rng, 100, true), y = randomBuffer(b, kN, rng, 100, true);
  DType r = promote(a, b);
  Buffer want(r, kN);
  for (size_t i = 0; i < kN; ++i)
    store(want, i, c.getI(i) ? castVal(elem(x, i), a, r) : castVal(elem(y, i), b, r));
  Run run;
  run.args = {Arg::buf(c), Arg::buf(x), Arg::buf(y), Arg::buf(Buffer(r, kN))};
  std::string p = tag(a) + "," + tag(b);
  expect(run, 3, "where/" + p, want);
  Batch bt;
  bt.name = "where/" + p;
  bt.source = module(subst("@triton.jit\ndef k(c_ptr, x_ptr, y_ptr, o_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                           "    r = tl.where(tl.load(c_ptr + offs), tl.load(x_ptr + offs), tl.load(y_ptr + offs))\n"
                           "    tl.static_assert(r.dtype == {T})\n    tl.store(o_ptr + offs, r)\n",
                           {{"T", tlName(r)}}));
  bt.signature = ptrSig({DType::I1, a, b, r}, std::to_string(kN));
  bt.runs.push_back(std::move(run));
  s.add(std::move(bt));
}

/// where with scalar operands and a computed condition, per dtype.
void whereScalars(Suite &s, DType t) {
  Rng rng(uint64_t(t) + 99);
  Buffer x = isFloatT(t) ? randomBuffer(t, kN, rng, 50, true) : smallInts(t, kN, rng, isSignedT(t) ? -50 : 0, 50);
  Buffer w1(t, kN), w2(t, kN), w3(t, kN);
  for (size_t i = 0; i < kN; ++i) {
    long double v = x.getF(i);
    w1.setF(i, v > 10 ? v : 0);           // where(x > 10, x, 0)
    w2.setF(i, v < 5 ? 7 : v);             // where(x < 5, 7, x)
    w3.setF(i, (i % 3 == 0) ? 2 : 3);      // where(offs % 3 == 0, 2, 3) as t
  }
  Run run;
  run.args = {Arg::buf(x), Arg::buf(Buffer(t, kN)), Arg::buf(Buffer(t, kN)), Arg::buf(Buffer(t, kN))};
  expect(run, 1, "where/scalar_other/" + tag(t), w1);
  expect(run, 2, "where/scalar_then/" + tag(t), w2);
  expect(run, 3, "where/both_scalars/" + tag(t), w3);
  Batch bt;
  bt.name = "where/scalars/" + tag(t);
  bt.source = module(subst("@triton.jit\ndef k(x_ptr, o1, o2, o3, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                           "    x = tl.load(x_ptr + offs)\n    tl.store(o1 + offs, tl.where(x > 10, x, 0))\n"
                           "    tl.store(o2 + offs, tl.where(x < 5, 7, x))\n"
                           "    tl.store(o3 + offs, tl.where(offs % 3 == 0, 2, 3).to({T}))\n",
                           {{"T", tlName(t)}}));
  bt.signature = ptrSig({t, t, t, t}, std::to_string(kN));
  bt.runs.push_back(std::move(run));
  s.add(std::move(bt));
}

void broadcast(Suite &s, int M, int N, DType ta, DType tb) {
  Rng rng(uint64_t(M) * 7 + uint64_t(N) + uint64_t(ta) * 3 + uint64_t(tb));
  Buffer x = smallInts(ta, size_t(M), rng, -20, 20), y = smallInts(tb, size_t(N), rng, -20, 20);
  Buffer m2 = smallInts(tb, size_t(M * N), rng, -20, 20);
  DType r = promote(ta, tb);
  std::string sh = std::to_string(M) + "x" + std::to_string(N) + "/" + tag(ta) + "," + tag(tb);
  auto X = [&](int i) { return castVal(elem(x, size_t(i)), ta, r); };
  auto Y = [&](int j) { return castVal(elem(y, size_t(j)), tb, r); };
  auto add = [&](Val u, Val v) { return isFloatT(r) ? Val::ofF(roundTo(u.f + v.f, fmtOf(r))) : Val::ofI(wrapInt(u.i + v.i, r)); };
  auto mul = [&](Val u, Val v) { return isFloatT(r) ? Val::ofF(roundTo(u.f * v.f, fmtOf(r))) : Val::ofI(wrapInt(u.i * v.i, r)); };
  DType rs = promote(ta, DType::I32);
  Buffer outer(r, size_t(M * N)), rowB(r, size_t(M * N)), scal(rs, size_t(M * N)), bto(ta, size_t(M * N)),
      ex0(ta, size_t(M)), cube(r, size_t(M * N * 2));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      size_t k = size_t(i * N + j);
      store(outer, k, add(X(i), Y(j)));                                   // x[:, None] + y[None, :]
      // [M,N] * [N]: both tb, so the product is in tb, then stored as r
      store(rowB, k, castVal(isFloatT(tb) ? Val::ofF(roundTo(m2.getF(k) * y.getF(size_t(j)), fmtOf(tb)))
                                          : Val::ofI(wrapInt(m2.getI(k) * y.getI(size_t(j)), tb)), tb, r));
      // x[:, None] + s with s a runtime i32 (a tensor operand, so promoted as tile with tile)
      scal.setF(k, x.getF(size_t(i)) + 5);
      store(bto, k, elem(x, size_t(i)));                                  // broadcast_to(x[:, None], (M, N))
      for (int c = 0; c < 2; ++c)                                         // x[:, None, None] * y[None, :, None] + c
        store(cube, k * 2 + size_t(c), add(mul(X(i), Y(j)), castVal(Val::ofI(uint64_t(c)), DType::I32, r)));
    }
  for (int i = 0; i < M; ++i)
    store(ex0, size_t(i), elem(x, size_t(i)));
  Run run;
  run.args = {Arg::buf(x), Arg::buf(y), Arg::buf(m2), Arg::i32(5), Arg::buf(Buffer(r, size_t(M * N))),
              Arg::buf(Buffer(r, size_t(M * N))), Arg::buf(Buffer(rs, size_t(M * N))), Arg::buf(Buffer(ta, size_t(M * N))),
              Arg::buf(Buffer(ta, size_t(M))), Arg::buf(Buffer(r, size_t(M * N * 2)))};
  expect(run, 4, "broadcast/outer/" + sh, outer);
  expect(run, 5, "broadcast/leading_dim/" + sh, rowB);
  expect(run, 6, "broadcast/runtime_scalar/" + sh, scal);
  expect(run, 7, "broadcast/broadcast_to/" + sh, bto);
  expect(run, 8, "broadcast/expand_dims/" + sh, ex0);
  expect(run, 9, "broadcast/3d/" + sh, cube);
  Batch b;
  b.name = "broadcast/" + sh;
  b.source = module(subst("@triton.jit\ndef k(x_ptr, y_ptr, m_ptr, s, o_outer, o_row, o_scal, o_bto, o_ex, o_cube,\n"
                    "      M: tl.constexpr, N: tl.constexpr):\n"
                    "    i = tl.arange(0, M)\n    j = tl.arange(0, N)\n    x = tl.load(x_ptr + i)\n    y = tl.load(y_ptr + j)\n"
                    "    idx = i[:, None] * N + j[None, :]\n"
                    "    tl.store(o_outer + idx, x[:, None] + y[None, :])\n"
                    "    tl.store(o_row + idx, tl.load(m_ptr + idx) * y)\n"
                    "    sc = x[:, None] + s\n    tl.static_assert(sc.dtype == {RS})\n    tl.store(o_scal + idx, sc)\n"
                    "    tl.store(o_bto + idx, tl.broadcast_to(x[:, None], (M, N)))\n"
                    "    e = tl.expand_dims(x, 1)\n    tl.store(o_ex + i[:, None] + tl.arange(0, 1)[None, :], e)\n"
                    "    c = tl.arange(0, 2)\n"
                    "    cube = x[:, None, None] * y[None, :, None] + c[None, None, :]\n"
                    "    tl.store(o_cube + idx[:, :, None] * 2 + c[None, None, :], cube)\n",
                          {{"RS", tlName(rs)}}));
  b.signature = ptrSig({ta, tb, tb}, "i32, " + ptrSig({r, r, rs, ta, ta, r}, std::to_string(M) + ", " + std::to_string(N)));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));
}

} // namespace

/// tl.where in loops on index masks (the version-masks pass gives such loops a branch without
/// the compare and select where every element is true): a causal mask whose true operand is
/// computed from the index tiles, at the diagonal, away from it, and where the i32 index tiles
/// wrap around (the branch must then not be taken); and a bounds mask `offs < n`. fp32 sums of
/// integers (the pass versions floating-point selects), exact.
void whereLoopMasks(Suite &s) {
  constexpr int BM = 16, BN = 8, P = 4, NBLK = 9;
  auto w32 = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); };
  Batch bt;
  bt.name = "where/loop_mask/causal";
  bt.source = module("@triton.jit\ndef k(out_ptr, base, off, BM: tl.constexpr, BN: tl.constexpr, NBLK: tl.constexpr):\n"
                     "    pid = tl.program_id(0)\n"
                     "    offs_m = base + pid * BM + tl.arange(0, BM)\n"
                     "    offs_n = tl.arange(0, BN)\n"
                     "    acc = tl.zeros([BM, BN], dtype=tl.float32)\n"
                     "    for start_n in range(0, NBLK * BN, BN):\n"
                     "        cols = off + start_n + offs_n[None, :]\n"
                     "        keep = offs_m[:, None] >= cols\n"
                     "        acc += tl.where(keep, (cols % 1000 + 1).to(tl.float32), -1.0)\n"
                     "    tl.store(out_ptr + pid * BM * BN + tl.arange(0, BM)[:, None] * BN + offs_n[None, :], acc)\n");
  bt.signature = "*fp32, i32, i32, " + std::to_string(BM) + ", " + std::to_string(BN) + ", " + std::to_string(NBLK);
  const std::pair<int64_t, int64_t> args[] = {
      {0, 0}, {5, -3}, {40, 0},                      // the diagonal crosses the loop; every tile below it
      {INT32_MAX - 40, 0}, {INT32_MIN + 10, 40},     // rows that wrap past INT32_MAX; rows near INT32_MIN
      {100, INT32_MAX - 30}};                        // columns that wrap
  for (auto [base, off] : args) {
    // Sums of integers below 2^24: exact in fp32, in any order.
    Buffer want(DType::F32, size_t(P * BM * BN));
    for (int p = 0; p < P; ++p)
      for (int i = 0; i < BM; ++i)
        for (int j = 0; j < BN; ++j) {
          int32_t row = w32(base + p * BM + i);
          int64_t acc = 0;
          for (int sn = 0; sn < NBLK * BN; sn += BN) {
            int32_t col = w32(off + sn + j);
            acc += row >= col ? col % 1000 + 1 : -1; // % truncates toward zero, as Triton's
          }
          want.setF(size_t((p * BM + i) * BN + j), static_cast<long double>(acc));
        }
    Run run;
    run.grid[0] = P;
    run.args = {Arg::buf(Buffer(DType::F32, size_t(P * BM * BN))), Arg::i32(static_cast<int32_t>(base)),
                Arg::i32(static_cast<int32_t>(off))};
    expect(run, 0, "where/loop_mask/causal/" + std::to_string(base) + "," + std::to_string(off), want);
    bt.runs.push_back(std::move(run));
  }
  s.add(std::move(bt));

  // acc += where(offs < n, x, 0) over a loop that runs past n: every block but the last is
  // unmasked.
  Batch bd;
  constexpr int N = 32;
  bd.name = "where/loop_mask/bounds";
  bd.source = module("@triton.jit\ndef k(x_ptr, out_ptr, n, total, BN: tl.constexpr):\n"
                     "    acc = tl.zeros([BN], dtype=tl.float32)\n"
                     "    for start in range(0, total, BN):\n"
                     "        offs = start + tl.arange(0, BN)\n"
                     "        acc += tl.where(offs < n, tl.load(x_ptr + offs), 0.0)\n"
                     "    tl.store(out_ptr + tl.arange(0, BN), acc)\n");
  bd.signature = "*fp32, *fp32, i32, i32, " + std::to_string(N);
  Rng rng(4242);
  Buffer xi = smallInts(DType::I32, size_t(4 * N), rng, -1000, 1000);
  Buffer x = makeBuffer(DType::F32, size_t(4 * N), [&](size_t i) { return static_cast<long double>(static_cast<int32_t>(xi.getI(i))); });
  for (int n : {0, 1, 31, 32, 33, 77, 96, 128}) {
    Buffer want(DType::F32, size_t(N));
    for (int j = 0; j < N; ++j) {
      int64_t acc = 0;
      for (int st = 0; st < 4 * N; st += N)
        acc += st + j < n ? static_cast<int32_t>(xi.getI(size_t(st + j))) : 0;
      want.setF(size_t(j), static_cast<long double>(acc));
    }
    Run run;
    run.args = {Arg::buf(x), Arg::buf(Buffer(DType::F32, size_t(N))), Arg::i32(n), Arg::i32(4 * N)};
    expect(run, 1, "where/loop_mask/bounds/n=" + std::to_string(n), want);
    bd.runs.push_back(std::move(run));
  }
  s.add(std::move(bd));

  // Ranges whose i64 bounds would overflow: at run time (a * C + b * C + 15 * C with C =
  // 2^31 - 1) and at compile time (offs * 962528571 * 1277658633, whose largest element is
  // 2^64 + 29). Neither may be versioned as "always true"; the i32 tiles wrap.
  constexpr int K = 16;
  Batch ov;
  ov.name = "where/loop_mask/overflow";
  ov.source = module("@triton.jit\ndef k(o1, o2, a, b, n, C: tl.constexpr, BN: tl.constexpr):\n"
                     "    offs = tl.arange(0, BN)\n"
                     "    acc1 = tl.zeros([BN], dtype=tl.float32)\n"
                     "    acc2 = tl.zeros([BN], dtype=tl.float32)\n"
                     "    for i in range(n):\n"
                     "        x = (offs + a + b) * C\n"
                     "        acc1 += tl.where(x >= 0, 1.0, 0.0)\n"
                     "        y = offs * 962528571 * 1277658633\n"
                     "        acc2 += tl.where(y >= 0, 1.0, 0.0)\n"
                     "    tl.store(o1 + offs, acc1)\n"
                     "    tl.store(o2 + offs, acc2)\n");
  ov.signature = "*fp32, *fp32, i32, i32, i32, 2147483647, " + std::to_string(K);
  for (auto [a, b] : {std::pair<int32_t, int32_t>{INT32_MAX, INT32_MAX}, {1, 2}, {-7, INT32_MIN}}) {
    Buffer w1(DType::F32, size_t(K)), w2(DType::F32, size_t(K));
    for (int j = 0; j < K; ++j) {
      int32_t x = w32(int64_t(w32(int64_t(w32(int64_t(j) + a)) + b)) * int64_t(INT32_MAX));
      int32_t y = w32(int64_t(w32(int64_t(j) * 962528571)) * 1277658633);
      w1.setF(size_t(j), x >= 0 ? 2 : 0);
      w2.setF(size_t(j), y >= 0 ? 2 : 0);
    }
    Run run;
    run.args = {Arg::buf(Buffer(DType::F32, size_t(K))), Arg::buf(Buffer(DType::F32, size_t(K))), Arg::i32(a), Arg::i32(b),
                Arg::i32(2)};
    std::string tagAB = std::to_string(a) + "," + std::to_string(b);
    expect(run, 0, "where/loop_mask/overflow/runtime/" + tagAB, w1);
    expect(run, 1, "where/loop_mask/overflow/static/" + tagAB, w2);
    ov.runs.push_back(std::move(run));
  }
  s.add(std::move(ov));
}

void addWhereBroadcast(Suite &s) {
  whereLoopMasks(s);
  for (DType a : kNumDTypes)
    for (DType b : kNumDTypes)
      wherePair(s, a, b);
  for (DType t : kNumDTypes)
    whereScalars(s, t);
  const std::pair<int, int> shapes[] = {{1, 8}, {4, 8}, {16, 2}, {32, 32}, {8, 1}};
  const std::pair<DType, DType> types[] = {{DType::I32, DType::I32}, {DType::F32, DType::F32}, {DType::I8, DType::F32},
                                           {DType::F16, DType::I64}, {DType::U8, DType::I16}};
  for (auto [M, N] : shapes)
    for (auto [ta, tb] : types)
      broadcast(s, M, N, ta, tb);
  Batch e;
  e.name = "broadcast/error/incompatible";
  e.source = module("@triton.jit\ndef k(x_ptr):\n    a = tl.arange(0, 16)\n    b = tl.arange(0, 8)\n"
                    "    tl.store(x_ptr + a, a + b)\n");
  e.signature = "*i32";
  e.expectError = "broadcast";
  s.add(std::move(e));
}

} // namespace tle::conformance
