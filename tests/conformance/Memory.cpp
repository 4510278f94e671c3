// Family "memory": masked loads with and without `other` (masked-off lanes read no memory, the
// buffers are exactly n elements), masked stores that leave the rest untouched, 2-D masks,
// scalar loads, stores that cast to the pointee, gathers and scatters through index tiles, block
// pointers (tl.make_block_ptr / tl.advance) with every boundary_check and padding_option, and
// cache / eviction / volatile and alignment hints (multiple_of, max_contiguous, `:16`).
#include "Families.h"

namespace tle::conformance {

namespace {

constexpr int kB = 64;

/// The literal `other` for dtype t and its value.
std::pair<std::string, long double> otherFor(DType t) {
  if (isFloatT(t))
    return {"-2.5", -2.5L};
  if (t == DType::I1)
    return {"True", 1};
  return isSignedT(t) ? std::pair<std::string, long double>{"-3", -3} : std::pair<std::string, long double>{"9", 9};
}

void masked1d(Suite &s, DType t) {
  auto [otherSrc, otherVal] = otherFor(t);
  std::string inf = isFloatT(t) ? "float(\"-inf\")" : otherSrc;
  long double infVal = isFloatT(t) ? -INFINITY : otherVal;
  Batch b;
  b.name = "memory/masked/" + tag(t);
  b.source = module(subst("@triton.jit\ndef k(x_ptr, o_other, o_zero, o_store, o_inf, n, BLOCK: tl.constexpr):\n"
                          "    offs = tl.arange(0, BLOCK)\n    m = offs < n\n"
                          "    a = tl.load(x_ptr + offs, mask=m, other={O})\n    tl.store(o_other + offs, a)\n"
                          "    z = tl.load(x_ptr + offs, mask=m)\n    tl.store(o_zero + offs, z)\n"
                          "    tl.store(o_store + offs, a, mask=m)\n"
                          "    tl.store(o_inf + offs, tl.load(x_ptr + offs, mask=offs < n, other={I}))\n",
                          {{"O", otherSrc}, {"I", inf}}));
  b.signature = ptrSig({t, t, t, t, t}, "i32, " + std::to_string(kB));
  for (int n : {0, 1, 37, 63, 64}) {
    Rng rng(uint64_t(t) * 5 + uint64_t(n));
    Buffer x = randomBuffer(t, size_t(std::max(n, 1)), rng, 100, false);
    x.bytes.resize(size_t(n) * dsize(t)); // exactly n elements
    Buffer sentinel(t, kB);
    for (int i = 0; i < kB; ++i)
      sentinel.setF(size_t(i), 42);
    Buffer wo(t, kB), wz(t, kB), ws(t, kB), wi(t, kB);
    for (int i = 0; i < kB; ++i) {
      size_t k = size_t(i);
      if (i < n) {
        wo.setBits(k, x.bits(k));
        wz.setBits(k, x.bits(k));
        ws.setBits(k, x.bits(k));
        wi.setBits(k, x.bits(k));
      } else {
        wo.setF(k, otherVal);
        wz.setF(k, 0);
        ws.setF(k, 42);
        wi.setF(k, infVal);
      }
    }
    Run run;
    run.args = {Arg::buf(x), Arg::buf(Buffer(t, kB)), Arg::buf(Buffer(t, kB)), Arg::buf(sentinel), Arg::buf(Buffer(t, kB)),
                Arg::i32(n)};
    std::string nm = "memory/masked/" + tag(t) + "/n" + std::to_string(n);
    expect(run, 1, nm + "/other", wo);
    Check &c = expect(run, 2, nm + "/no_other_zero", wz);
    c.cpuOnly = true; // Triton leaves masked-off lanes without `other` undefined; TLE defines zero
    expect(run, 3, nm + "/store", ws);
    expect(run, 4, nm + "/other_inf", wi);
    b.runs.push_back(std::move(run));
  }
  s.add(std::move(b));
}

void masked2d(Suite &s, DType t) {
  const int M = 16, N = 32;
  Batch b;
  b.name = "memory/masked2d/" + tag(t);
  b.source = module("@triton.jit\ndef k(x_ptr, o_ptr, s_ptr, m, n, stride, M: tl.constexpr, N: tl.constexpr):\n"
                    "    i = tl.arange(0, M)\n    j = tl.arange(0, N)\n    mask = (i[:, None] < m) & (j[None, :] < n)\n"
                    "    x = tl.load(x_ptr + i[:, None] * stride + j[None, :], mask=mask, other=1)\n"
                    "    tl.store(o_ptr + i[:, None] * N + j[None, :], x)\n"
                    "    tl.store(s_ptr + i[:, None] * stride + j[None, :], x + x, mask=mask)\n");
  b.signature = ptrSig({t, t, t}, "i32, i32, i32, 16, 32");
  for (auto [m, n] : {std::pair{16, 32}, std::pair{5, 32}, std::pair{16, 7}, std::pair{3, 9}, std::pair{0, 4}}) {
    int stride = n + 3;
    Rng rng(uint64_t(t) + uint64_t(m * 100 + n));
    size_t len = size_t(std::max(m, 1) * stride);
    Buffer x = isFloatT(t) ? randomBuffer(t, len, rng, 50) : smallInts(t, len, rng, 0, 50);
    Buffer sbuf(t, len), want(t, size_t(M * N)), wantS(t, len);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        bool in = i < m && j < n;
        long double v = in ? x.getF(size_t(i * stride + j)) : 1;
        want.setF(size_t(i * N + j), v);
        if (in)
          wantS.setF(size_t(i * stride + j), isFloatT(t) ? roundTo(v + v, fmtOf(t)) : v + v);
      }
    Run run;
    run.args = {Arg::buf(x), Arg::buf(Buffer(t, size_t(M * N))), Arg::buf(sbuf), Arg::i32(m), Arg::i32(n), Arg::i32(stride)};
    std::string nm = "memory/masked2d/" + tag(t) + "/" + std::to_string(m) + "x" + std::to_string(n);
    expect(run, 1, nm + "/load", want);
    expect(run, 2, nm + "/store", wantS);
    b.runs.push_back(std::move(run));
  }
  s.add(std::move(b));
}

/// Stores cast the value to the pointee; scalar loads and stores; gathers and scatters.
void misc(Suite &s) {
  const int n = 64;
  Rng rng(4711);
  Buffer x = randomBuffer(DType::F32, n, rng, 300, true);
  std::vector<DType> targets = {DType::F16, DType::BF16, DType::F64, DType::I32, DType::U8, DType::I64, DType::I1};
  std::string body = "@triton.jit\ndef k(x_ptr, {OUTS}BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
                     "    x = tl.load(x_ptr + offs)\n";
  std::string outs;
  Run run;
  run.args = {Arg::buf(x)};
  std::vector<DType> ptrs = {DType::F32};
  for (DType t : targets) {
    std::string o = "o_" + tag(t);
    outs += o + ", ";
    body += "    tl.store(" + o + " + offs, x)\n";
    Buffer want(t, n);
    for (int i = 0; i < n; ++i)
      store(want, size_t(i), castVal(elem(x, size_t(i)), DType::F32, t));
    int idx = int(run.args.size());
    run.args.push_back(Arg::buf(Buffer(t, n)));
    ptrs.push_back(t);
    expect(run, idx, "memory/store_casts/f32->" + tag(t), want);
  }
  Batch b;
  b.name = "memory/store_casts";
  b.source = module(subst(body, {{"OUTS", outs}}));
  b.signature = ptrSig(ptrs, std::to_string(n));
  b.runs.push_back(std::move(run));
  s.add(std::move(b));

  // Gather, scatter (a permutation), scalar loads and stores with masks.
  Batch g;
  g.name = "memory/indirect";
  g.source = module("@triton.jit\ndef k(x_ptr, idx_ptr, g_ptr, s_ptr, sc_ptr, n, BLOCK: tl.constexpr):\n"
                    "    offs = tl.arange(0, BLOCK)\n    idx = tl.load(idx_ptr + offs)\n"
                    "    tl.store(g_ptr + offs, tl.load(x_ptr + idx))\n"
                    "    tl.store(s_ptr + idx, tl.load(x_ptr + offs))\n"
                    "    v = tl.load(x_ptr + n, mask=n < BLOCK, other=-7.0)\n    tl.store(sc_ptr, v)\n"
                    "    tl.store(sc_ptr + 1, v * 2, mask=n > 3)\n    tl.store(sc_ptr + 2, tl.load(x_ptr))\n");
  g.signature = "*fp32, *i32, *fp32, *fp32, *fp32, i32, 64";
  for (int nn : {2, 10, 70}) {
    Rng r2{uint64_t(nn)};
    Buffer idx(DType::I32, n);
    std::vector<int> perm(n);
    for (int i = 0; i < n; ++i)
      perm[size_t(i)] = i;
    for (int i = n - 1; i > 0; --i)
      std::swap(perm[size_t(i)], perm[size_t(r2.range(0, i))]);
    for (int i = 0; i < n; ++i)
      idx.setI(size_t(i), uint64_t(perm[size_t(i)]));
    Buffer wg(DType::F32, n), ws(DType::F32, n), sc(DType::F32, 3), wsc(DType::F32, 3);
    for (int i = 0; i < n; ++i) {
      wg.setBits(size_t(i), x.bits(size_t(perm[size_t(i)])));
      ws.setBits(size_t(perm[size_t(i)]), x.bits(size_t(i)));
    }
    for (int i = 0; i < 3; ++i)
      sc.setF(size_t(i), 100);
    long double v = nn < 64 ? x.getF(size_t(nn)) : -7;
    wsc.setF(0, v);
    wsc.setF(1, nn > 3 ? roundTo(v * 2, kF32f) : 100);
    wsc.setBits(2, x.bits(0));
    Run run2;
    run2.args = {Arg::buf(x), Arg::buf(idx), Arg::buf(Buffer(DType::F32, n)), Arg::buf(Buffer(DType::F32, n)), Arg::buf(sc),
                 Arg::i32(nn)};
    std::string nm = "memory/indirect/n" + std::to_string(nn);
    expect(run2, 2, nm + "/gather", wg);
    expect(run2, 3, nm + "/scatter", ws);
    expect(run2, 4, nm + "/scalar", wsc);
    g.runs.push_back(std::move(run2));
  }
  s.add(std::move(g));
}

/// Block pointers over an R x C row-major array (leading stride C + 5), loading a BM x BN block
/// at (r0, c0) with each boundary check / padding, advancing, and storing with checks.
void blockPointers(Suite &s, DType t) {
  const int R = 20, C = 24, LD = C + 5, BM = 8, BN = 16;
  bool fl = isFloatT(t);
  Batch b;
  b.name = "memory/block_ptr/" + tag(t);
  std::string pad = fl ? "\"nan\"" : "\"zero\"";
  b.source = module(subst(
      "@triton.jit\ndef k(x_ptr, o_both, o_rows, o_cols, o_pad, o_adv, y_ptr, r0, c0, R, C, LD,\n"
      "      BM: tl.constexpr, BN: tl.constexpr):\n"
      "    bp = tl.make_block_ptr(base=x_ptr, shape=(R, C), strides=(LD, 1), offsets=(r0, c0),\n"
      "                           block_shape=(BM, BN), order=(1, 0))\n"
      "    i = tl.arange(0, BM)\n    j = tl.arange(0, BN)\n    o = i[:, None] * BN + j[None, :]\n"
      "    tl.store(o_both + o, tl.load(bp, boundary_check=(0, 1)))\n"
      "    rows = tl.load(tl.make_block_ptr(x_ptr, (R, C), (LD, 1), (r0, 0), (BM, BN), (1, 0)), boundary_check=(0,))\n"
      "    tl.store(o_rows + o, rows)\n"
      "    cols = tl.load(tl.make_block_ptr(x_ptr, (R, C), (LD, 1), (0, c0), (BM, BN), (1, 0)), boundary_check=(1,))\n"
      "    tl.store(o_cols + o, cols)\n"
      "    tl.store(o_pad + o, tl.load(bp, boundary_check=(1, 0), padding_option={PAD}))\n"
      "    bp2 = tl.advance(bp, (2, -3))\n    tl.store(o_adv + o, tl.load(bp2, boundary_check=(0, 1)))\n"
      "    yp = tl.make_block_ptr(y_ptr, (R, C), (LD, 1), (r0, c0), (BM, BN), (1, 0))\n"
      "    tl.store(yp, tl.load(bp, boundary_check=(0, 1)) + 1, boundary_check=(0, 1))\n",
      {{"PAD", pad}}));
  b.signature = ptrSig({t, t, t, t, t, t, t}, "i32, i32, i32, i32, i32, 8, 16");
  Rng rng(uint64_t(t) + 8080);
  // The array holds R rows of LD elements; padding columns past C hold values a load must not see.
  Buffer x(t, size_t(R * LD));
  for (int i = 0; i < R * LD; ++i)
    x.setF(size_t(i), fl ? (long double)rng.range(-60, 60) / 4 : (long double)rng.range(0, 60));
  for (auto [r0, c0] : {std::pair{0, 0}, std::pair{12, 8}, std::pair{15, 3}, std::pair{4, 12}, std::pair{16, 20}}) {
    auto at = [&](int r, int c, bool checkR, bool checkC, long double padV) -> long double {
      bool inR = r >= 0 && r < R, inC = c >= 0 && c < C;
      if ((checkR && !inR) || (checkC && !inC))
        return padV;
      return x.getF(size_t(r * LD + c));
    };
    Buffer wBoth(t, BM * BN), wRows(t, BM * BN), wCols(t, BM * BN), wPad(t, BM * BN), wAdv(t, BM * BN), wy(t, size_t(R * LD));
    bool colsSafe = true, rowsSafe = true; // unchecked dims must stay inside the allocation
    for (int i = 0; i < BM; ++i)
      for (int j = 0; j < BN; ++j) {
        size_t k = size_t(i * BN + j);
        wBoth.setF(k, at(r0 + i, c0 + j, true, true, 0));
        if (r0 + i < R && j < LD)
          wRows.setF(k, at(r0 + i, j, true, false, 0));
        else
          wRows.setF(k, 0);
        rowsSafe = rowsSafe && (r0 + i >= R || (r0 + i) * LD + j < R * LD);
        colsSafe = colsSafe && (i * LD + c0 + j < R * LD);
        wCols.setF(k, at(i, c0 + j, false, true, 0));
        wPad.setF(k, at(r0 + i, c0 + j, true, true, fl ? NAN : 0));
        wAdv.setF(k, at(r0 + 2 + i, c0 - 3 + j, true, true, 0));
        if (r0 + i < R && c0 + j < C) {
          long double v = x.getF(size_t((r0 + i) * LD + c0 + j)) + 1;
          wy.setF(size_t((r0 + i) * LD + c0 + j), v);
        }
      }
    if (!rowsSafe || !colsSafe)
      continue; // an unchecked dim would leave the array: not a valid case
    Run run;
    run.args = {Arg::buf(x), Arg::buf(Buffer(t, BM * BN)), Arg::buf(Buffer(t, BM * BN)), Arg::buf(Buffer(t, BM * BN)),
                Arg::buf(Buffer(t, BM * BN)), Arg::buf(Buffer(t, BM * BN)), Arg::buf(Buffer(t, size_t(R * LD))),
                Arg::i32(r0), Arg::i32(c0), Arg::i32(R), Arg::i32(C), Arg::i32(LD)};
    std::string nm = "memory/block_ptr/" + tag(t) + "/at" + std::to_string(r0) + "," + std::to_string(c0);
    expect(run, 1, nm + "/check_both", wBoth);
    expect(run, 2, nm + "/check_rows", wRows);
    expect(run, 3, nm + "/check_cols", wCols);
    expect(run, 4, nm + "/padding", wPad);
    expect(run, 5, nm + "/advance", wAdv);
    expect(run, 6, nm + "/store", wy);
    b.runs.push_back(std::move(run));
  }
  s.add(std::move(b));
}

/// Cache and eviction hints, volatile loads, and the compiler hints (multiple_of, max_contiguous,
/// `:16` divisibility in the signature) change no values.
void hints(Suite &s, DType t) {
  const int B = 128;
  Batch b;
  b.name = "memory/hints/" + tag(t);
  b.source = module("@triton.jit\ndef k(x_ptr, o_ptr, n, BLOCK: tl.constexpr):\n    pid = tl.program_id(0)\n"
                    "    offs = tl.multiple_of(pid * BLOCK, 16) + tl.max_contiguous(tl.arange(0, BLOCK), 16)\n    m = offs < n\n"
                    "    a = tl.load(x_ptr + offs, mask=m, other=0, cache_modifier=\".cg\", eviction_policy=\"evict_last\")\n"
                    "    c = tl.load(x_ptr + offs, mask=m, other=0, volatile=True, eviction_policy=\"evict_first\")\n"
                    "    tl.store(o_ptr + offs, a + c, mask=m, cache_modifier=\".wb\", eviction_policy=\"evict_first\")\n");
  b.signature = "*" + sigName(t) + ":16, *" + sigName(t) + ":16, i32:16, " + std::to_string(B);
  for (int n : {16, 128, 400, 1024}) {
    Rng rng(uint64_t(t) * 7 + uint64_t(n));
    Buffer x = isFloatT(t) ? randomBuffer(t, size_t(n), rng, 50) : smallInts(t, size_t(n), rng, -50, 50);
    Buffer want(t, size_t(n));
    for (int i = 0; i < n; ++i)
      want.setF(size_t(i), isFloatT(t) ? roundTo(x.getF(size_t(i)) * 2, fmtOf(t)) : x.getF(size_t(i)) * 2);
    Run run;
    run.args = {Arg::buf(x), Arg::buf(Buffer(t, size_t(n))), Arg::i32(n)};
    run.grid[0] = uint32_t((n + B - 1) / B);
    expect(run, 1, "memory/hints/" + tag(t) + "/n" + std::to_string(n), want);
    b.runs.push_back(std::move(run));
  }
  s.add(std::move(b));
}

} // namespace

void addMemory(Suite &s) {
  for (DType t : {DType::F32, DType::F16, DType::I8, DType::I64, DType::BF16, DType::U32, DType::F64})
    hints(s, t);
  for (DType t : kAllDTypes)
    masked1d(s, t);
  for (DType t : {DType::F32, DType::F16, DType::I8, DType::I64, DType::U16, DType::F64})
    masked2d(s, t);
  misc(s);
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U8, DType::I64})
    blockPointers(s, t);
  Batch e;
  e.name = "memory/error/other_without_mask";
  e.source = module("@triton.jit\ndef k(x_ptr):\n    offs = tl.arange(0, 16)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs, other=0.0))\n");
  e.signature = "*fp32";
  e.expectError = "other";
  s.add(std::move(e));
  Batch e2 = e;
  e2.name = "memory/error/boundary_check_plain_pointer";
  e2.source = module("@triton.jit\ndef k(x_ptr):\n    offs = tl.arange(0, 16)\n"
                     "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, boundary_check=(0,)))\n");
  e2.expectError = "boundary_check";
  s.add(std::move(e2));
}

} // namespace tle::conformance
