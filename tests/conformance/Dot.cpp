// Family "dot": tl.dot over fp16 / bf16 (fp32 accumulation), fp32 with input_precision "tf32"
// (the default), "ieee" and "tf32x3" (and allow_tf32=False), int8 (int32 accumulation), fp64;
// with acc=, out_dtype=fp16, transposed operands (tl.trans, .T) and several shapes. The
// reference accumulates with one fused multiply-add per k in k order (the CPU target's
// documented order, so bit-exact there), TF32 inputs rounded to nearest with ties away; the GPU
// is allowed a tolerance for its accumulation order and tensor-core rounding.
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
}

} // namespace tle::conformance
