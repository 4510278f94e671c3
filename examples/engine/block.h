// One transformer block forward as data: shapes, buffers, and the kernel launches in order, with their packed arguments.
//
// Header-only and free of any runtime or compiler dependency, so that the engine example
// (engine.cpp, on the GPU through libtle_rt) and its CPU test (tests/unit/test_cpu_engine.cpp, on
// the CPU target) launch exactly the same kernels with exactly the same arguments and grids.
//
// The block (pre-norm, Llama-style), T = batch * seq tokens, all activations and weights fp16:
//   xn1  = rmsnorm(x) * norm1_w                      [T, hidden]
//   qkv  = xn1 @ Wqkv                                [T, 3 * hidden]  (q | k | v, heads of head_dim)
//   q, k = rotary(q, k)                              in place in qkv
//   attn = causal_attention(q, k, v)                 [T, hidden]
//   h    = x + attn @ Wo                             [T, hidden]
//   xn2  = rmsnorm(h) * norm2_w
//   gate_up = [xn2 @ Wgate | xn2 @ Wup]              [T, 2 * ffn]
//   act  = silu(gate) * up                           [T, ffn]
//   out  = h + act @ Wdown                           [T, hidden]
// Weights are stored [in, out] row-major (K x N for the matmul kernel).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tle_engine {

/// Shapes of one block. tokens() = batch * seq rows go through every step.
struct BlockConfig {
  int batch = 2;       ///< sequences
  int seq = 1024;      ///< tokens per sequence (positions 0 .. seq-1); a multiple of 128
  int hidden = 1024;   ///< model width = heads * headDim, at most 4096
  int heads = 16;      ///< attention heads
  int headDim = 64;    ///< 64 or 128
  int ffn = 2816;      ///< MLP inner width, a multiple of 16
  float eps = 1e-5f;   ///< RMSNorm epsilon
  double ropeBase = 10000.0; ///< rotary base (theta_i = base^(-2i / headDim))

  /// Rows of every activation matrix.
  int64_t tokens() const { return int64_t(batch) * seq; }
};

/// Empty when the kernels support `c`, otherwise a sentence saying which constraint is broken.
inline std::string validate(const BlockConfig &c) {
  auto big = [](int64_t v) { return v >= (int64_t(1) << 31); };
  if (c.batch < 1 || c.seq < 1 || c.heads < 1 || c.hidden < 1 || c.ffn < 1)
    return "batch, seq, heads, hidden and ffn must be positive";
  if (c.headDim != 64 && c.headDim != 128)
    return "head dim must be 64 or 128 (the attention and rotary kernels are compiled for those)";
  if (int64_t(c.heads) * c.headDim != c.hidden)
    return "hidden (" + std::to_string(c.hidden) + ") must equal heads * head dim (" + std::to_string(c.heads) +
           " * " + std::to_string(c.headDim) + ")";
  if (c.hidden > 4096)
    return "hidden must be at most 4096 (the largest RMSNorm block)";
  if (c.seq % 128 != 0)
    return "seq must be a multiple of 128 (the attention kernel's BLOCK_M; it does not mask the sequence end)";
  if (c.ffn % 16 != 0)
    return "ffn must be a multiple of 16 (the matmul kernel's i32:16 promises)";
  if (int64_t(c.batch) * c.heads > 65535)
    return "batch * heads must be at most 65535 (grid y of the attention kernel)";
  if (big(c.tokens() * 3 * c.hidden) || big(c.tokens() * 2 * c.ffn))
    return "the activations are too large for the kernels' 32-bit sizes";
  if (!(c.eps > 0.f))
    return "eps must be positive";
  return "";
}

/// Element type of a buffer.
enum class DType { F16, F32 };

/// The buffers of the block. Activations are row-major [tokens, width].
enum Buf : int {
  X,        ///< block input [T, hidden]
  NormW1,   ///< first RMSNorm weight [hidden]
  Xn1,      ///< normalised input [T, hidden]
  Rstd1,    ///< 1 / rms of each row of X, fp32 [T]
  Wqkv,     ///< [hidden, 3 * hidden]
  Qkv,      ///< [T, 3 * hidden]
  Cos,      ///< rotary table, fp32 [seq, headDim / 2]
  Sin,      ///< rotary table, fp32 [seq, headDim / 2]
  Attn,     ///< attention output [T, hidden]
  Wo,       ///< [hidden, hidden]
  AttnProj, ///< attn @ Wo [T, hidden]
  H,        ///< x + attn @ Wo [T, hidden]
  NormW2,   ///< second RMSNorm weight [hidden]
  Xn2,      ///< [T, hidden]
  Rstd2,    ///< fp32 [T]
  Wgate,    ///< [hidden, ffn]
  Wup,      ///< [hidden, ffn]
  GateUp,   ///< [T, 2 * ffn]: gate in columns 0..ffn-1, up in ffn..2ffn-1
  Act,      ///< silu(gate) * up [T, ffn]
  Wdown,    ///< [ffn, hidden]
  MlpOut,   ///< act @ Wdown [T, hidden]
  Out,      ///< block output h + act @ Wdown [T, hidden]
  kNumBufs
};

/// How a buffer is initialised before the block runs.
enum class Init {
  Zero,    ///< produced by a step
  Uniform, ///< uniform in [-scale, scale) (fp16-rounded)
  NormWeight, ///< uniform in [0.5, 1.5) (fp16-rounded)
  RopeCos, ///< cos(pos * theta_i)
  RopeSin, ///< sin(pos * theta_i)
};

/// One buffer: its name, element type, element count and initialisation.
struct BufferSpec {
  const char *name;
  DType dtype;
  size_t elems;
  Init init;
  double scale = 0; ///< for Init::Uniform
  /// Bytes of the buffer.
  size_t bytes() const { return elems * (dtype == DType::F16 ? 2 : 4); }
};

/// Every buffer of the block, indexed by Buf.
inline std::vector<BufferSpec> bufferSpecs(const BlockConfig &c) {
  size_t T = size_t(c.tokens()), Hd = size_t(c.hidden), F = size_t(c.ffn);
  size_t rope = size_t(c.seq) * size_t(c.headDim / 2);
  double wIn = std::sqrt(3.0 / double(Hd)), wDown = std::sqrt(3.0 / double(F)); // unit-variance outputs
  std::vector<BufferSpec> s(kNumBufs);
  s[X] = {"x", DType::F16, T * Hd, Init::Uniform, 1.0};
  s[NormW1] = {"norm1_w", DType::F16, Hd, Init::NormWeight};
  s[Xn1] = {"xn1", DType::F16, T * Hd, Init::Zero};
  s[Rstd1] = {"rstd1", DType::F32, T, Init::Zero};
  s[Wqkv] = {"w_qkv", DType::F16, Hd * 3 * Hd, Init::Uniform, wIn};
  s[Qkv] = {"qkv", DType::F16, T * 3 * Hd, Init::Zero};
  s[Cos] = {"rope_cos", DType::F32, rope, Init::RopeCos};
  s[Sin] = {"rope_sin", DType::F32, rope, Init::RopeSin};
  s[Attn] = {"attn", DType::F16, T * Hd, Init::Zero};
  s[Wo] = {"w_o", DType::F16, Hd * Hd, Init::Uniform, wIn};
  s[AttnProj] = {"attn_proj", DType::F16, T * Hd, Init::Zero};
  s[H] = {"h", DType::F16, T * Hd, Init::Zero};
  s[NormW2] = {"norm2_w", DType::F16, Hd, Init::NormWeight};
  s[Xn2] = {"xn2", DType::F16, T * Hd, Init::Zero};
  s[Rstd2] = {"rstd2", DType::F32, T, Init::Zero};
  s[Wgate] = {"w_gate", DType::F16, Hd * F, Init::Uniform, wIn};
  s[Wup] = {"w_up", DType::F16, Hd * F, Init::Uniform, wIn};
  s[GateUp] = {"gate_up", DType::F16, T * 2 * F, Init::Zero};
  s[Act] = {"act", DType::F16, T * F, Init::Zero};
  s[Wdown] = {"w_down", DType::F16, F * Hd, Init::Uniform, wDown};
  s[MlpOut] = {"mlp_out", DType::F16, T * Hd, Init::Zero};
  s[Out] = {"out", DType::F16, T * Hd, Init::Zero};
  return s;
}

/// What a step computes, independent of how its kernel takes arguments (used by the reference).
enum class OpKind {
  RmsNorm,   ///< c[r, :] = a[r, :] * rstd * b, d[r] = rstd; rows x cols
  Matmul,    ///< c[r, cOffset + n] (row stride ldc) = sum_k a[r, k] * b[k, n]; rows x cols, depth k
  Rotary,    ///< a = qkv [rows, 3 * hidden]: rotate q and k heads in place with b = cos, c = sin
  Attention, ///< c[rows, hidden] = causal attention of the heads of a = qkv
  SiluMul,   ///< c[r, j] = silu(a[r, j]) * a[r, cols + j]; rows x cols
  Add,       ///< c = a + b over rows * cols elements
};

/// The semantic description of a step; buffer roles per OpKind as documented there.
struct Op {
  OpKind kind;
  Buf a, b, c, d;
  int64_t rows = 0, cols = 0, k = 0;
  int64_t ldc = 0, cOffset = 0;
};

/// One kernel argument: a buffer (plus an element offset), or a scalar.
struct Arg {
  enum Kind { Buffer, I32, F32 } kind;
  Buf buf = X;
  int64_t offset = 0; ///< elements from the start of `buf`
  int32_t i = 0;
  float f = 0;

  /// A pointer to element `offset` of `b`.
  static Arg buffer(Buf b, int64_t offset = 0) { return {Buffer, b, offset, 0, 0.f}; }
  /// An i32 scalar.
  static Arg i32(int64_t v) { return {I32, X, 0, int32_t(v), 0.f}; }
  /// An fp32 scalar.
  static Arg f32(float v) { return {F32, X, 0, 0, v}; }
};

/// One kernel launch of the block.
struct Step {
  std::string label;  ///< e.g. "qkv_proj"
  std::string kernel; ///< the kernel variant's NAME in kernels.manifest
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::vector<Arg> args; ///< in the kernel's parameter order (constexprs left out)
  Op op;
  std::vector<Buf> outputs; ///< buffers the step writes
  double flops = 0;         ///< floating-point operations (matmuls and attention), else 0
  double bytes = 0;         ///< global memory bytes read + written, ideal
};

/// ceil(a / b) for positive a and b, as a grid dimension.
inline uint32_t cdiv(int64_t a, int64_t b) { return uint32_t((a + b - 1) / b); }

/// The NAME of the RMSNorm variant for `hidden` (the smallest BLOCK >= hidden).
inline std::string rmsnormKernelFor(int hidden) {
  return hidden <= 1024 ? "rmsnorm_1024" : hidden <= 2048 ? "rmsnorm_2048" : "rmsnorm_4096";
}

/// The block's steps in launch order. `c` must pass validate().
inline std::vector<Step> planBlock(const BlockConfig &c) {
  const int64_t T = c.tokens(), Hd = c.hidden, F = c.ffn, S = c.seq, D = c.headDim;
  const std::string d = std::to_string(c.headDim);
  std::vector<Step> steps;

  auto rmsnorm = [&](const char *label, Buf in, Buf w, Buf out, Buf rstd) {
    Step s{label, rmsnormKernelFor(c.hidden), {uint32_t(T), 1, 1}, {}, {}, {out, rstd}};
    // rmsnorm_fwd_kernel(x_ptr, y_ptr, w_ptr, rstd_ptr, row_stride, N, eps)
    s.args = {Arg::buffer(in), Arg::buffer(out), Arg::buffer(w), Arg::buffer(rstd), Arg::i32(Hd), Arg::i32(Hd),
              Arg::f32(c.eps)};
    s.op = {OpKind::RmsNorm, in, w, out, rstd, T, Hd};
    s.bytes = double(2 * T * Hd * 2 + Hd * 2 + T * 4);
    steps.push_back(s);
  };
  // C[:, cOffset:cOffset+N] (row stride ldc) = A [M, K] @ B [K, N].
  auto matmul = [&](const char *label, Buf a, Buf b, Buf out, int64_t M, int64_t N, int64_t K, int64_t ldc,
                    int64_t cOffset) {
    Step s{label, "matmul", {cdiv(M, 128) * cdiv(N, 128), 1, 1}, {}, {}, {out}};
    // matmul_kernel(a, b, c, M, N, K, stride_am, stride_ak=1, stride_bk, stride_bn=1, stride_cm, stride_cn=1)
    s.args = {Arg::buffer(a), Arg::buffer(b), Arg::buffer(out, cOffset), Arg::i32(M), Arg::i32(N), Arg::i32(K),
              Arg::i32(K), Arg::i32(N), Arg::i32(ldc)};
    s.op = {OpKind::Matmul, a, b, out, out, M, N, K, ldc, cOffset};
    s.flops = 2.0 * double(M) * double(N) * double(K);
    s.bytes = double(M * K + K * N + M * N) * 2;
    steps.push_back(s);
  };
  auto add = [&](const char *label, Buf a, Buf b, Buf out) {
    Step s{label, "residual_add", {cdiv(T * Hd, 1024), 1, 1}, {}, {}, {out}};
    s.args = {Arg::buffer(a), Arg::buffer(b), Arg::buffer(out), Arg::i32(T * Hd)};
    s.op = {OpKind::Add, a, b, out, out, T, Hd};
    s.bytes = double(3 * T * Hd * 2);
    steps.push_back(s);
  };

  rmsnorm("rmsnorm_1", X, NormW1, Xn1, Rstd1);
  matmul("qkv_proj", Xn1, Wqkv, Qkv, T, 3 * Hd, Hd, 3 * Hd, 0);
  {
    Step s{"rotary", "rotary_d" + d, {uint32_t(T), cdiv(c.heads, 8), 1}, {}, {}, {Qkv}};
    // rotary_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, row_stride, seq_len, n_heads)
    s.args = {Arg::buffer(Qkv), Arg::buffer(Qkv, Hd), Arg::buffer(Cos), Arg::buffer(Sin), Arg::i32(3 * Hd),
              Arg::i32(S), Arg::i32(c.heads)};
    s.op = {OpKind::Rotary, Qkv, Cos, Sin, Qkv, T, Hd};
    s.bytes = double(2 * 2 * T * Hd * 2 + 2 * S * (D / 2) * 4);
    steps.push_back(s);
  }
  {
    Step s{"attention", "attention_d" + d, {cdiv(S, 128), uint32_t(c.batch * c.heads), 1}, {}, {}, {Attn}};
    // attn_fwd(Q, K, V, Out, sm_scale, stride_{q,k,v,o}{z,h,m}, H, N_CTX): q, k, v are column blocks of qkv.
    int64_t ldq = 3 * Hd;
    s.args = {Arg::buffer(Qkv), Arg::buffer(Qkv, Hd), Arg::buffer(Qkv, 2 * Hd), Arg::buffer(Attn),
              Arg::f32(float(1.0 / std::sqrt(double(D))))};
    for (int i = 0; i < 3; ++i)
      for (int64_t v : {S * ldq, D, ldq})
        s.args.push_back(Arg::i32(v));
    for (int64_t v : {S * Hd, D, Hd})
      s.args.push_back(Arg::i32(v));
    s.args.push_back(Arg::i32(c.heads));
    s.args.push_back(Arg::i32(S));
    s.op = {OpKind::Attention, Qkv, Qkv, Attn, Attn, T, Hd};
    // QK^T and PV over the causal half (Triton's tutorial convention).
    s.flops = 4.0 * double(c.batch) * c.heads * double(S) * double(S) * double(D) * 0.5;
    s.bytes = double(4 * T * Hd * 2);
    steps.push_back(s);
  }
  matmul("o_proj", Attn, Wo, AttnProj, T, Hd, Hd, Hd, 0);
  add("residual_1", X, AttnProj, H);
  rmsnorm("rmsnorm_2", H, NormW2, Xn2, Rstd2);
  matmul("gate_proj", Xn2, Wgate, GateUp, T, F, Hd, 2 * F, 0);
  matmul("up_proj", Xn2, Wup, GateUp, T, F, Hd, 2 * F, F);
  {
    Step s{"silu_and_mul", "silu_and_mul", {uint32_t(T), cdiv(F, 1024), 1}, {}, {}, {Act}};
    // silu_and_mul_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols)
    s.args = {Arg::buffer(Act), Arg::buffer(GateUp), Arg::i32(2 * F), Arg::i32(F), Arg::i32(F)};
    s.op = {OpKind::SiluMul, GateUp, GateUp, Act, Act, T, F};
    s.bytes = double(3 * T * F * 2);
    steps.push_back(s);
  }
  matmul("down_proj", Act, Wdown, MlpOut, T, Hd, F, Hd, 0);
  add("residual_2", H, MlpOut, Out);
  return steps;
}

// ------------------------------------------------------------------------------------------------
// fp16 on the host
// ------------------------------------------------------------------------------------------------

/// The value of the IEEE binary16 bit pattern `h` (exact).
inline float halfToFloat(uint16_t h) {
  int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v = exp == 0    ? std::ldexp(float(man), -24)
            : exp == 31 ? (man ? NAN : INFINITY)
                        : std::ldexp(float(man | 0x400), exp - 25);
  return (h & 0x8000) ? -v : v;
}

/// `f` rounded to the nearest binary16 (ties to even; overflow to infinity; NaN stays NaN).
inline uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u)
    return uint16_t(sign | 0x7e00);
  if (ax >= 0x477ff000u) // >= 65520 (halfway past the largest finite value): infinity
    return uint16_t(sign | 0x7c00);
  if (ax < 0x38800000u) { // below 2^-14: a subnormal (or zero); scaling by 2^24 is exact
    float a;
    std::memcpy(&a, &ax, 4);
    return uint16_t(sign | uint16_t(std::nearbyint(a * 16777216.0f)));
  }
  uint32_t mant = ax & 0x7fffffu;
  uint32_t h = ((((ax >> 23) - 127 + 15)) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h; // a carry out of the mantissa correctly bumps the exponent
  return uint16_t(sign | h);
}

} // namespace tle_engine
