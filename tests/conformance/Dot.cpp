// Family "dot": tl.dot over fp16 / bf16 (fp32 accumulation), fp32 with input_precision "tf32"
// (the default), "ieee" and "tf32x3" (and allow_tf32=False), int8 (int32 accumulation), fp64;
// with acc=, out_dtype=fp16, transposed operands (tl.trans, .T) and several shapes. The
// reference accumulates with one fused multiply-add per k in k order (the CPU target's
// documented order, so bit-exact there), TF32 inputs rounded to nearest with ties away; the GPU
// is allowed a tolerance for its accumulation order and tensor-core rounding. Batched (3-D)
// dots [B, M, K] @ [B, K, N] for B = 1, 2, 4 over fp16, bf16, fp32 (tf32, ieee, tf32x3), int8
// and fp8, with acc= and out_dtype=, against long double sums per batch: on values whose sums
// are exact in fp32 (exact on both targets, except fp8 batches of wgmma's shape on sm_90a,
// whose fp8 tensor cores add with fewer bits), and on random fp32 values that tell tf32, tf32x3
// and ieee apart.
#include "Families.h"

namespace tle::conformance {

namespace {

struct Config {
  std::string name;
  DType in, out;      ///< operand dtype, result dtype
  std::string extra;  ///< extra tl.dot arguments
  bool tf32 = false;  ///< inputs rounded to TF32
  bool acc = false;   ///< acc= a loaded C
  bool trans = false; ///< b given as [N, K] and transposed in the kernel
  bool outF16 = false;
};

void dotCase(Suite &s, const Config &c, int M, int N, int K) {
  Rng rng(std::hash<std::string>()(c.name) + uint64_t(M * 10000 + N * 100 + K));
  auto gen = [&](size_t n) {
    Buffer b(c.in, n);
    for (size_t i = 0; i < n; ++i)
      b.setF(i, c.in == DType::I8 ? (long double)rng.range(-128, 127) : (long double)rng.real(-1, 1));
    return b;
  };
  Buffer a = gen(size_t(M * K)), b = gen(size_t(K * N)); // b row-major [K, N] (or [N, K] when trans)
  DType accT = c.in == DType::I8 ? DType::I32 : c.in == DType::F64 ? DType::F64 : DType::F32;
  Buffer cin(accT, size_t(M * N));
  for (size_t i = 0; i < cin.size(); ++i)
    cin.setF(i, c.in == DType::I8 ? (long double)rng.range(-1000, 1000) : (long double)rng.real(-4, 4));
  Buffer want(c.out, size_t(M * N));
  long double maxAbs = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      auto B = [&](int k) { return c.trans ? elem(b, size_t(j * K + k)) : elem(b, size_t(k * N + j)); };
      if (accT == DType::I32) {
        uint64_t acc = c.acc ? cin.getI(size_t(i * N + j)) : 0;
        for (int k = 0; k < K; ++k)
          acc = wrapInt(acc + a.getI(size_t(i * K + k)) * B(k).i, DType::I32);
        want.setI(size_t(i * N + j), acc);
        continue;
      }
      long double acc = c.acc ? cin.getF(size_t(i * N + j)) : 0;
      for (int k = 0; k < K; ++k) {
        long double x = a.getF(size_t(i * K + k)), y = B(k).f;
        if (c.tf32) {
          x = roundToAway(x, kTF32);
          y = roundToAway(y, kTF32);
        }
        if (accT == DType::F64)
          acc = std::fma(double(x), double(y), double(acc));
        else
          acc = std::fma(float(x), float(y), float(acc)); // one rounding per step, in fp32
      }
      maxAbs = std::max(maxAbs, std::fabs(acc));
      want.setF(size_t(i * N + j), acc); // out_dtype fp16: one rounding at the end
    }
  // GPU: hardware accumulation order and tensor-core behaviour.
  double eps = accT == DType::F64 ? 0x1p-52 : 0x1p-23;
  double gabs = (c.tf32 ? 0x1p-10 : eps) * K * 4 + (c.outF16 ? 0x1p-10 * double(maxAbs) : 0);
  Tol gpu = accT == DType::I32 ? Tol::exact() : Tol::close(c.outF16 ? 1e-3 : 0, gabs);
  Tol cpu = Tol::exact();
  if (c.name == "f32_tf32x3") {
    // Three TF32 products leave out small_a * small_b (about 2^-22 |a| |b| per term) and round
    // the small terms to TF32: close to the fp32 chain, not equal to it.
    cpu = gpu = Tol::close(0, 0x1p-19 * K);
  }
  Run run;
  run.args = {Arg::buf(a), Arg::buf(b), Arg::buf(cin), Arg::buf(Buffer(c.out, size_t(M * N)))};
  std::string shape = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  std::string nm = "dot/" + c.name + "/" + shape;
  expect(run, 3, nm, want, cpu, gpu);
  std::string bload = c.trans ? "    bt = tl.load(b_ptr + n[:, None] * K + kk[None, :])\n    b = tl.trans(bt)\n"
                              : "    b = tl.load(b_ptr + kk[:, None] * N + n[None, :])\n";
  std::string call = "tl.dot(a, b" + std::string(c.acc ? ", acc=c" : "") + c.extra + ")";
  Batch bt;
  bt.name = nm;
  bt.source = module(subst("@triton.jit\ndef k(a_ptr, b_ptr, c_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):\n"
                           "    m = tl.arange(0, M)\n    n = tl.arange(0, N)\n    kk = tl.arange(0, K)\n"
                           "    a = tl.load(a_ptr + m[:, None] * K + kk[None, :])\n{BLOAD}"
                           "    c = tl.load(c_ptr + m[:, None] * N + n[None, :])\n"
                           "    r = {CALL}\n    tl.static_assert(r.dtype == {T})\n"
                           "    tl.store(o_ptr + m[:, None] * N + n[None, :], r)\n",
                           {{"BLOAD", bload}, {"CALL", call}, {"T", tlName(c.out)}}));
  bt.signature = ptrSig({c.in, c.in, accT, c.out}, std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K));
  bt.runs.push_back(std::move(run));
  s.add(std::move(bt));
}

/// A batched (3-D) tl.dot configuration.
struct Batched {
  std::string name;
  DType ta, tb, out;  ///< operand dtypes, result dtype
  std::string extra;  ///< extra tl.dot arguments
  bool acc = false;   ///< acc= a loaded [B, M, N] tile
  /// Random fp32 operands in [-1, 1) (not exact in TF32) instead of values whose products and
  /// sums are exact in fp32; the reference rounds them to TF32 (ties away) when `tf32`.
  bool random = false, tf32 = false;
  std::string call;   ///< the whole call when not "tl.dot(a, b[, acc=c]EXTRA)"
  /// Random operands through tf32x3: three TF32 products, close to the exact sum (as in
  /// dotCase), far from a single TF32 product.
  bool tf32x3 = false;
};

/// An exact operand value of dtype `t`: integers in [-128, 127] for int8; for fp8 +-(8 + m) / 8 *
/// 2^e with e in -2..1 and m in 0..7 (fp8e5, with one bit less: m even), or 0 (products are
/// multiples of 2^-10 below 16); for wider floats k / 8 with |k| <= 16 (products are multiples
/// of 2^-6 up to 4). Sums of up to 2^10 such products are exact in fp32, in any order.
long double exactValue(DType t, Rng &rng) {
  if (t == DType::I8)
    return (long double)rng.range(-128, 127);
  if (isFp8T(t)) {
    if (rng.range(0, 15) == 0)
      return 0;
    int64_t m = t == DType::F8E5M2 ? 2 * rng.range(0, 3) : rng.range(0, 7);
    long double v = std::ldexp((long double)(8 + m) / 8, int(rng.range(-2, 1)));
    return rng.next() & 1 ? -v : v;
  }
  return (long double)rng.range(-16, 16) / 8;
}

void batchedCase(Suite &s, const Batched &c, int B, int M, int N, int K) {
  Rng rng(std::hash<std::string>()(c.name) + uint64_t(B * 1000000 + M * 10000 + N * 100 + K));
  auto gen = [&](DType t, size_t n) {
    Buffer x(t, n);
    for (size_t i = 0; i < n; ++i)
      x.setF(i, c.random ? (long double)rng.real(-1, 1) : exactValue(t, rng));
    return x;
  };
  Buffer a = gen(c.ta, size_t(B * M * K)), bm = gen(c.tb, size_t(B * K * N)); // row-major [B, M, K], [B, K, N]
  const bool integer = c.ta == DType::I8;
  DType accT = integer ? DType::I32 : DType::F32;
  Buffer cin(accT, size_t(B * M * N));
  for (size_t i = 0; i < cin.size(); ++i)
    cin.setF(i, integer ? (long double)rng.range(-1000, 1000) : (long double)rng.range(-64, 64) / 8);
  Buffer want(c.out, size_t(B * M * N));
  long double maxPartial = 0; // the largest |partial sum|, for the fp32 rounding bound
  for (int q = 0; q < B; ++q)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        size_t o = size_t((q * M + i) * N + j);
        long double acc = c.acc ? cin.getF(o) : 0;
        for (int k = 0; k < K; ++k) {
          long double x = a.getF(size_t((q * M + i) * K + k)), y = bm.getF(size_t((q * K + k) * N + j));
          if (c.tf32) {
            x = roundToAway(x, kTF32);
            y = roundToAway(y, kTF32);
          }
          acc += x * y;
          maxPartial = std::max(maxPartial, std::fabs(acc));
        }
        want.setF(o, acc); // rounded once to the result dtype
      }
  // Exact sums match on both targets whatever the order of the additions (the zero's sign
  // aside); random fp32 values are within the fp32 roundings of a chain of K additions (the
  // GPU's TF32 path also within its truncation of the inputs).
  Tol cpu = Tol::exact().anyZero(), gpu = cpu;
  if (c.random) {
    cpu = Tol::close(0, double(maxPartial) * K * 0x1p-23);
    gpu = Tol::close(0, c.tf32 ? 0x1p-10 * K * 4 : double(maxPartial) * K * 0x1p-22);
  }
  if (c.tf32x3)
    cpu = gpu = Tol::close(0, 0x1p-19 * K);
  if (isFp8T(c.ta) && isFp8T(c.tb) && M % 64 == 0 && K % 32 == 0 && c.out == DType::F32) {
    // Per batch, the shape sm_90a multiplies natively (fp8 wgmma, with 4 warps), whose tensor
    // cores add with fewer bits than fp32 (as in the fp8 family's dot loops).
    long double maxAbs = 0;
    for (size_t i = 0; i < want.size(); ++i)
      maxAbs = std::max(maxAbs, std::fabs(want.getF(i)));
    gpu = Tol::close(2e-3, double(4e-3L * maxAbs));
  }
  Run run;
  run.args = {Arg::buf(a), Arg::buf(bm), Arg::buf(cin), Arg::buf(Buffer(c.out, size_t(B * M * N)))};
  std::string shape = std::to_string(B) + "x" + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  std::string nm = "dot/batched/" + c.name + "/" + shape;
  expect(run, 3, nm, want, cpu, gpu);
  std::string call = !c.call.empty() ? c.call : "tl.dot(a, b" + std::string(c.acc ? ", acc=c" : "") + c.extra + ")";
  Batch bt;
  bt.name = nm;
  bt.source = module(subst("@triton.jit\n"
                           "def k(a_ptr, b_ptr, c_ptr, o_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, "
                           "K: tl.constexpr):\n"
                           "    q = tl.arange(0, B)[:, None, None]\n"
                           "    m = tl.arange(0, M)[None, :, None]\n"
                           "    n = tl.arange(0, N)[None, None, :]\n"
                           "    kk = tl.arange(0, K)\n"
                           "    a = tl.load(a_ptr + q * (M * K) + m * K + kk[None, None, :])\n"
                           "    b = tl.load(b_ptr + q * (K * N) + kk[None, :, None] * N + n)\n"
                           "    c = tl.load(c_ptr + q * (M * N) + m * N + n)\n"
                           "    r = {CALL}\n"
                           "    tl.static_assert(r.dtype == {T})\n"
                           "    tl.static_assert(r.shape == (B, M, N))\n"
                           "    tl.store(o_ptr + q * (M * N) + m * N + n, r)\n",
                           {{"CALL", call}, {"T", tlName(c.out)}}));
  bt.signature = ptrSig({c.ta, c.tb, accT, c.out}, std::to_string(B) + ", " + std::to_string(M) + ", " +
                                                       std::to_string(N) + ", " + std::to_string(K));
  bt.runs.push_back(std::move(run));
  s.add(std::move(bt));
}

/// A batched dot accumulated over K in a runtime loop (acc carried by the loop), the usual shape
/// of a batched matmul kernel: [2, 32, 16] @ [2, 16, 32] chunks of fp16 over K = 64.
void batchedLoopCase(Suite &s) {
  constexpr int B = 2, M = 32, N = 32, KC = 16, K = 64;
  Rng rng(77);
  Buffer a(DType::F16, B * M * K), bm(DType::F16, B * K * N);
  for (size_t i = 0; i < a.size(); ++i)
    a.setF(i, exactValue(DType::F16, rng));
  for (size_t i = 0; i < bm.size(); ++i)
    bm.setF(i, exactValue(DType::F16, rng));
  Buffer want(DType::F32, B * M * N);
  for (int q = 0; q < B; ++q)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        long double acc = 0;
        for (int k = 0; k < K; ++k)
          acc += a.getF(size_t((q * M + i) * K + k)) * bm.getF(size_t((q * K + k) * N + j));
        want.setF(size_t((q * M + i) * N + j), acc);
      }
  Run run;
  run.args = {Arg::buf(a), Arg::buf(bm), Arg::buf(Buffer(DType::F32, B * M * N)), Arg::i32(K)};
  expect(run, 2, "dot/batched/f16_loop/2x32x32x64", want, Tol::exact().anyZero());
  Batch bt;
  bt.name = "dot/batched/f16_loop/2x32x32x64";
  bt.source = module("@triton.jit\n"
                     "def k(a_ptr, b_ptr, o_ptr, K, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, "
                     "KC: tl.constexpr):\n"
                     "    q = tl.arange(0, B)[:, None, None]\n"
                     "    m = tl.arange(0, M)[None, :, None]\n"
                     "    n = tl.arange(0, N)[None, None, :]\n"
                     "    kc = tl.arange(0, KC)\n"
                     "    acc = tl.zeros((B, M, N), tl.float32)\n"
                     "    for k0 in range(0, K, KC):\n"
                     "        a = tl.load(a_ptr + q * (M * K) + m * K + k0 + kc[None, None, :])\n"
                     "        b = tl.load(b_ptr + q * (K * N) + (k0 + kc[None, :, None]) * N + n)\n"
                     "        acc = tl.dot(a, b, acc)\n"
                     "    tl.store(o_ptr + q * (M * N) + m * N + n, acc)\n");
  bt.signature = "*fp16, *fp16, *fp32, i32, " + std::to_string(B) + ", " + std::to_string(M) + ", " +
                 std::to_string(N) + ", " + std::to_string(KC);
  bt.runs.push_back(std::move(run));
  s.add(std::move(bt));
}

/// A batch that must fail to compile with a message containing `error`; `body` is the kernel
/// body (indented), which builds its tiles with tl.zeros.
void errorCase(Suite &s, const std::string &name, const std::string &body, const std::string &error) {
  Batch e;
  e.name = "dot/error/" + name;
  e.source = module("@triton.jit\ndef k(o_ptr):\n" + body);
  e.signature = "*fp32";
  e.expectError = error;
  s.add(std::move(e));
}

void addBatched(Suite &s) {
  using D = DType;
  const std::vector<Batched> configs = {
      {"f16", D::F16, D::F16, D::F32, ""},
      {"f16_acc", D::F16, D::F16, D::F32, "", true},
      {"f16_acc_out_f16", D::F16, D::F16, D::F16, ", out_dtype=tl.float16", true},
      {"f16_acc_positional", D::F16, D::F16, D::F32, "", true, false, false, "tl.dot(a, b, c)"},
      {"f16_keywords", D::F16, D::F16, D::F32, "", true, false, false,
       "tl.dot(other=b, input=a, out_dtype=tl.float32, acc=c)"},
      {"bf16", D::BF16, D::BF16, D::F32, ""},
      {"bf16_acc", D::BF16, D::BF16, D::F32, "", true},
      {"f32_tf32", D::F32, D::F32, D::F32, ""},
      {"f32_ieee_acc", D::F32, D::F32, D::F32, ", input_precision=\"ieee\"", true},
      {"f32_tf32x3_acc", D::F32, D::F32, D::F32, ", input_precision=\"tf32x3\"", true},
      {"f32_tf32_random", D::F32, D::F32, D::F32, "", true, true, true},
      {"f32_ieee_random", D::F32, D::F32, D::F32, ", input_precision=\"ieee\"", true, true},
      {"f32_allow_tf32_false_random", D::F32, D::F32, D::F32, ", allow_tf32=False", false, true},
      {"f32_tf32x3_random", D::F32, D::F32, D::F32, ", input_precision=\"tf32x3\"", true, true, false, "", true},
      {"i8", D::I8, D::I8, D::I32, ""},
      {"i8_acc", D::I8, D::I8, D::I32, "", true},
      {"f8e4nv", D::F8E4M3, D::F8E4M3, D::F32, ""},
      {"f8e4nv_acc", D::F8E4M3, D::F8E4M3, D::F32, "", true},
      {"f8e4nv_out_f16", D::F8E4M3, D::F8E4M3, D::F16, ", out_dtype=tl.float16"},
      {"f8e4nv_x_f8e5", D::F8E4M3, D::F8E5M2, D::F32, "", true},
  };
  const int shapes[][4] = {{1, 16, 16, 16}, {2, 32, 16, 32}, {4, 16, 32, 16}};
  for (const Batched &c : configs)
    for (auto &sh : shapes) // 8-bit operands: K >= 32 (Triton's minimum on NVIDIA)
      batchedCase(s, c, sh[0], sh[1], sh[2], dsize(c.ta) == 1 ? std::max(sh[3], 32) : sh[3]);
  // Batches of the shape sm_90a multiplies with wgmma (M = 64 over 4 warps): the slices are
  // staged through shared memory as wgmma operands.
  for (const Batched &c : configs)
    if (c.name == "f16_acc" || c.name == "f8e4nv_acc")
      batchedCase(s, c, 2, 64, 64, 64);
  batchedLoopCase(s);
  const std::string a2 = "    a = tl.zeros((2, 16, 16), tl.float16)\n";
  errorCase(s, "batch_mismatch", a2 + "    b = tl.zeros((4, 16, 16), tl.float16)\n    r = tl.dot(a, b)\n",
            "dot() batch sizes differ: tile<2x16x16xfp16> @ tile<4x16x16xfp16>");
  errorCase(s, "rank_mix", a2 + "    b = tl.zeros((16, 16), tl.float16)\n    r = tl.dot(a, b)\n",
            "dot() operands must both be 2-D or both be 3-D (batched), got tile<2x16x16xfp16> and tile<16x16xfp16>");
  errorCase(s, "rank_mix_2d_3d",
            "    a = tl.zeros((16, 16), tl.float16)\n    b = tl.zeros((2, 16, 16), tl.float16)\n    r = tl.dot(a, b)\n",
            "dot() operands must both be 2-D or both be 3-D (batched)");
  errorCase(s, "rank_4", "    a = tl.zeros((2, 2, 16, 16), tl.float16)\n    r = tl.dot(a, a)\n",
            "dot() expects two 2-D tiles or two 3-D (batched) tiles, got tile<2x2x16x16xfp16>");
  errorCase(s, "batched_inner_mismatch", a2 + "    b = tl.zeros((2, 32, 16), tl.float16)\n    r = tl.dot(a, b)\n",
            "dot() inner dimensions differ: tile<2x16x16xfp16> @ tile<2x32x16xfp16>");
  errorCase(s, "batched_acc_shape",
            a2 + "    c = tl.zeros((16, 16), tl.float32)\n    r = tl.dot(a, a, acc=c)\n",
            "dot() acc must be a [2, 16, 16] tile for tile<2x16x16xfp16> @ tile<2x16x16xfp16>, got tile<16x16xfp32>");
  errorCase(s, "batched_small_k",
            "    a = tl.zeros((2, 16, 8), tl.float16)\n    r = tl.dot(a, tl.zeros((2, 8, 16), tl.float16))\n",
            "dot() needs K of at least 16");
  errorCase(s, "batched_mixed_dtypes",
            a2 + "    b = tl.zeros((2, 16, 16), tl.float32)\n    r = tl.dot(a, b)\n", "same dtype");
}

} // namespace

void addDot(Suite &s) {
  std::vector<Config> configs = {
      {"f16", DType::F16, DType::F32, ""},
      {"f16_acc", DType::F16, DType::F32, "", false, true},
      {"f16_trans", DType::F16, DType::F32, "", false, false, true},
      {"f16_out_f16", DType::F16, DType::F16, ", out_dtype=tl.float16", false, false, false, true},
      {"bf16", DType::BF16, DType::F32, ""},
      {"bf16_acc", DType::BF16, DType::F32, "", false, true},
      {"f32_tf32", DType::F32, DType::F32, "", true},
      {"f32_tf32_explicit", DType::F32, DType::F32, ", input_precision=\"tf32\"", true, true},
      {"f32_ieee", DType::F32, DType::F32, ", input_precision=\"ieee\""},
      {"f32_ieee_acc_trans", DType::F32, DType::F32, ", input_precision=\"ieee\"", false, true, true},
      {"f32_allow_tf32_false", DType::F32, DType::F32, ", allow_tf32=False"},
      {"f32_tf32x3", DType::F32, DType::F32, ", input_precision=\"tf32x3\""},
      {"i8", DType::I8, DType::I32, ""},
      {"i8_acc", DType::I8, DType::I32, "", false, true},
      {"i8_trans", DType::I8, DType::I32, "", false, false, true},
      {"f64", DType::F64, DType::F64, ""},
      {"f64_acc", DType::F64, DType::F64, "", false, true},
  };
  const int shapes[][3] = {{16, 16, 16}, {32, 64, 16}, {16, 32, 64}, {64, 16, 32}};
  for (const Config &c : configs)
    for (auto &sh : shapes)
      dotCase(s, c, sh[0], sh[1], c.in == DType::I8 ? std::max(sh[2], 32) : sh[2]);
  Batch e;
  e.name = "dot/error/mixed_dtypes";
  e.source = module("@triton.jit\ndef k(a_ptr, b_ptr):\n    i = tl.arange(0, 16)\n    a = tl.load(a_ptr + i[:, None] * 16 + i[None, :])\n"
                    "    b = tl.load(b_ptr + i[:, None] * 16 + i[None, :])\n    tl.store(a_ptr + i[:, None] * 16 + i[None, :], tl.dot(a, b))\n");
  e.signature = "*fp16, *fp32";
  e.expectError = "same dtype";
  s.add(std::move(e));
  addBatched(s);
}

} // namespace tle::conformance
