// The engine example's kernels and launch plan (examples/engine) on the CPU target: every step of
// the transformer block, with the arguments and grids tle-engine uses, against its float64
// reference; the new kernels (rotary, silu_and_mul, residual_add) on edge shapes; the host fp16
// conversion.
#include "test_cpu_util.h"

#include "../../examples/engine/block.h"
#include "../../examples/engine/reference.h"

#include <fstream>
#include <regex>

using namespace tle;
using namespace tle::cputest;
using tle_engine::Arg;
using tle_engine::BlockConfig;
using tle_engine::DType;

namespace {

/// One line of examples/engine/kernels.manifest.
struct Variant {
  std::string source, signature;
};

std::map<std::string, Variant> readManifest() {
  std::ifstream in(std::string(TLE_SOURCE_DIR) + "/examples/engine/kernels.manifest");
  REQUIRE(in.good());
  std::map<std::string, Variant> m;
  std::regex line(R"re(^([A-Za-z0-9_]+) +([^ ]+) +-s "([^"]+)" +-w ([0-9]+)$)re");
  std::string s;
  while (std::getline(in, s)) {
    std::smatch g;
    if (s.empty() || s[0] == '#')
      continue;
    INFO(s);
    REQUIRE(std::regex_match(s, g, line));
    m[g[1]] = {g[2], g[3]};
  }
  return m;
}

/// Compiles the manifest's variant `name` for the CPU, with bounds checking.
Compiled compileVariant(const std::map<std::string, Variant> &manifest, const std::string &name) {
  auto it = manifest.find(name);
  REQUIRE(it != manifest.end());
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream err;
  diags.setStream(err);
  std::string ioErr;
  uint32_t file = sm.loadFile(std::string(TLE_SOURCE_DIR) + "/" + it->second.source, ioErr);
  REQUIRE(file != 0);
  driver::CompileOptions o;
  o.signature = it->second.signature;
  cpu::CompileOptions co;
  co.checkBounds = true;
  Compiled c;
  if (auto fn = driver::compileToTile(file, o, diags))
    c.kernel = cpu::Kernel::compile(*fn, diags, co);
  c.diagnostics = err.str();
  return c;
}

/// The block's buffers as the device holds them: fp16 as bit patterns, fp32 as floats.
struct Memory {
  std::vector<tle_engine::BufferSpec> specs;
  std::vector<std::vector<uint16_t>> f16;
  std::vector<std::vector<float>> f32;

  explicit Memory(const BlockConfig &c, const tle_engine::HostState &st) : specs(tle_engine::bufferSpecs(c)) {
    f16.resize(specs.size());
    f32.resize(specs.size());
    for (size_t b = 0; b < specs.size(); ++b) {
      if (specs[b].dtype == DType::F32) {
        f32[b] = st[b];
        continue;
      }
      for (float v : st[b])
        f16[b].push_back(tle_engine::floatToHalf(v));
    }
  }
  cpu::ArgValue pointer(tle_engine::Buf b, int64_t offset) {
    size_t elem = specs[b].dtype == DType::F16 ? 2 : 4;
    char *base = specs[b].dtype == DType::F16 ? reinterpret_cast<char *>(f16[b].data())
                                              : reinterpret_cast<char *>(f32[b].data());
    REQUIRE(offset >= 0);
    REQUIRE(size_t(offset) < specs[b].elems);
    return cpu::ArgValue::ptr(base + size_t(offset) * elem, specs[b].bytes() - size_t(offset) * elem);
  }
  std::vector<float> values(tle_engine::Buf b) const {
    if (specs[b].dtype == DType::F32)
      return f32[b];
    std::vector<float> v;
    for (uint16_t h : f16[b])
      v.push_back(tle_engine::halfToFloat(h));
    return v;
  }
};

/// Runs the whole block of `c` on the CPU target step by step, checking each step.
void runBlock(const BlockConfig &c) {
  REQUIRE(tle_engine::validate(c).empty());
  auto manifest = readManifest();
  tle_engine::HostState state = tle_engine::initialState(c, 7);
  Memory mem(c, state);
  std::map<std::string, Compiled> kernels;
  for (const tle_engine::Step &s : tle_engine::planBlock(c)) {
    INFO("step " << s.label << " (kernel " << s.kernel << ")");
    if (!kernels.count(s.kernel)) {
      kernels[s.kernel] = compileVariant(manifest, s.kernel);
      TLE_REQUIRE_COMPILED(kernels[s.kernel]);
    }
    std::vector<cpu::ArgValue> args;
    for (const Arg &a : s.args)
      args.push_back(a.kind == Arg::Buffer ? mem.pointer(a.buf, a.offset)
                     : a.kind == Arg::I32  ? cpu::ArgValue::of<int32_t>(a.i)
                                           : cpu::ArgValue::of<float>(a.f));
    kernels[s.kernel]->run({s.grid[0], s.grid[1], s.grid[2]}, args);
    tle_engine::HostState before = state;
    for (tle_engine::Buf b : s.outputs)
      state[b] = mem.values(b);
    tle_engine::CheckResult r = tle_engine::checkStep(s, c, before, state, 0, 2);
    INFO(r.bad << " bad of " << r.checked << "; max abs " << r.maxAbs << ", max rel " << r.maxRel << "; "
               << r.firstBad);
    REQUIRE(r.pass());
    // The outputs really changed (a step that wrote nothing would compare its zeros with
    // non-zero references and fail above; this guards the reference itself).
    for (tle_engine::Buf b : s.outputs) {
      double sumAbs = 0;
      for (float v : state[b])
        sumAbs += std::fabs(v);
      REQUIRE(sumAbs > 0);
    }
  }
}

std::vector<uint16_t> randomHalves(size_t n, uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<uint16_t> v(n);
  for (auto &h : v)
    h = tle_engine::floatToHalf(float(u(rng)));
  return v;
}

constexpr uint16_t kHalfSentinel = 0x7bff; // 65504

} // namespace

TEST_CASE("engine: every kernel variant of the manifest compiles for the CPU", "[cpu][engine]") {
  for (const auto &[name, v] : readManifest()) {
    INFO(name);
    Compiled k = compileVariant(readManifest(), name);
    TLE_REQUIRE_COMPILED(k);
  }
}

TEST_CASE("engine: the block with head_dim 64 (6 heads, masked ffn tiles) matches the references", "[cpu][engine]") {
  BlockConfig c;
  c.batch = 2;
  c.seq = 256;
  c.hidden = 384;
  c.heads = 6;
  c.headDim = 64;
  c.ffn = 400;
  runBlock(c);
}

TEST_CASE("engine: the block with head_dim 128 (9 heads, RMSNorm block 2048) matches the references", "[cpu][engine]") {
  BlockConfig c;
  c.batch = 1;
  c.seq = 128;
  c.hidden = 1152;
  c.heads = 9;
  c.headDim = 128;
  c.ffn = 144;
  runBlock(c);
}

TEST_CASE("engine: plan arguments keep the kernels' divisibility promises", "[cpu][engine]") {
  BlockConfig c; // the engine's default shapes
  REQUIRE(tle_engine::validate(c).empty());
  auto steps = tle_engine::planBlock(c);
  REQUIRE(steps.size() == 12);
  auto manifest = readManifest();
  for (const auto &s : steps) {
    INFO(s.label);
    REQUIRE(manifest.count(s.kernel));
    // Split the signature's runtime parameters (constexprs are the bare literals at the end).
    std::vector<std::string> params;
    std::stringstream ss(manifest[s.kernel].signature);
    for (std::string p; std::getline(ss, p, ',');) {
      p.erase(0, p.find_first_not_of(' '));
      if (p[0] == '*' || p[0] == 'i' || p[0] == 'f')
        params.push_back(p);
    }
    // ":1" parameters are removed from the kernel (matmul's unit strides).
    params.erase(std::remove_if(params.begin(), params.end(),
                                [](const std::string &p) { return p.size() > 2 && p.substr(p.size() - 2) == ":1"; }),
                 params.end());
    REQUIRE(params.size() == s.args.size());
    for (size_t i = 0; i < params.size(); ++i) {
      INFO("argument " << i << " (" << params[i] << ")");
      const Arg &a = s.args[i];
      REQUIRE((params[i][0] == '*') == (a.kind == Arg::Buffer));
      bool div16 = params[i].find(":16") != std::string::npos;
      if (a.kind == Arg::Buffer)
        REQUIRE((!div16 || (a.offset * 2) % 16 == 0)); // fp16 element offsets; buffers are 256-byte aligned
      else if (a.kind == Arg::I32)
        REQUIRE((params[i].rfind("i32", 0) == 0 && (!div16 || a.i % 16 == 0)));
      else
        REQUIRE(params[i].rfind("fp32", 0) == 0);
    }
  }
  REQUIRE(tle_engine::validate([] { BlockConfig b; b.seq = 1000; return b; }()).find("multiple of 128") !=
          std::string::npos);
  REQUIRE(tle_engine::validate([] { BlockConfig b; b.hidden = 1000; return b; }()).find("heads * head dim") !=
          std::string::npos);
  REQUIRE(tle_engine::validate([] { BlockConfig b; b.headDim = 96; b.hidden = 96 * 16; return b; }())
              .find("64 or 128") != std::string::npos);
  REQUIRE(tle_engine::validate([] { BlockConfig b; b.ffn = 1000; return b; }()).find("multiple of 16") !=
          std::string::npos);
}

TEST_CASE("engine: silu_and_mul masks the row tail and leaves padding untouched", "[cpu][engine]") {
  auto manifest = readManifest();
  Compiled k = compileVariant(manifest, "silu_and_mul");
  TLE_REQUIRE_COMPILED(k);
  for (int cols : {16, 1040, 2048 + 48}) {
    INFO("n_cols " << cols);
    const int rows = 5, inStride = 2 * cols + 16, outStride = cols + 32;
    auto in = randomHalves(size_t(rows * inStride), uint64_t(cols), 6.0);
    std::vector<uint16_t> out(size_t(rows * outStride), kHalfSentinel);
    k->run({uint32_t(rows), uint32_t((cols + 1023) / 1024), 1},
           {cpu::ArgValue::ptr(out), cpu::ArgValue::ptr(in), i32(inStride), i32(outStride), i32(cols)});
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < outStride; ++j) {
        uint16_t got = out[size_t(r * outStride + j)];
        if (j >= cols) {
          REQUIRE(got == kHalfSentinel);
          continue;
        }
        double g = kHalf.value(in[size_t(r * inStride + j)]), u = kHalf.value(in[size_t(r * inStride + cols + j)]);
        double want = g / (1 + std::exp(-g)) * u;
        REQUIRE(std::fabs(kHalf.value(got) - want) <= 1e-6 + 1e-3 * std::fabs(want));
      }
  }
}

TEST_CASE("engine: residual_add is the correctly rounded fp16 sum, also in place", "[cpu][engine]") {
  auto manifest = readManifest();
  Compiled k = compileVariant(manifest, "residual_add");
  TLE_REQUIRE_COMPILED(k);
  for (int n : {16, 1040, 4096, 100000}) {
    INFO("n " << n);
    size_t padded = size_t((n + 1023) / 1024 * 1024);
    auto x = randomHalves(padded, 1, 100.0), y = randomHalves(padded, 2, 100.0);
    std::vector<uint16_t> out(padded, kHalfSentinel), x0 = x;
    k->run({uint32_t((n + 1023) / 1024)}, {cpu::ArgValue::ptr(x), cpu::ArgValue::ptr(y), cpu::ArgValue::ptr(out), i32(n)});
    for (size_t i = 0; i < padded; ++i)
      REQUIRE(out[i] == (i < size_t(n) ? kHalf.round((long double)kHalf.value(x[i]) + kHalf.value(y[i])) : kHalfSentinel));
    // out aliasing x (x += y).
    k->run({uint32_t((n + 1023) / 1024)}, {cpu::ArgValue::ptr(x), cpu::ArgValue::ptr(y), cpu::ArgValue::ptr(x), i32(n)});
    for (size_t i = 0; i < padded; ++i)
      REQUIRE(x[i] == (i < size_t(n) ? out[i] : x0[i]));
  }
}

TEST_CASE("engine: rotary rotates the q and k heads of each row, masks extra heads, keeps v", "[cpu][engine]") {
  auto manifest = readManifest();
  for (int d : {64, 128}) {
    Compiled k = compileVariant(manifest, "rotary_d" + std::to_string(d));
    TLE_REQUIRE_COMPILED(k);
    for (int heads : {1, 8, 11}) {
      INFO("head_dim " << d << ", heads " << heads);
      const int seq = 5, rows = 2 * seq, hid = heads * d, ld = 3 * hid + 16, half = d / 2;
      auto qkv = randomHalves(size_t(rows * ld), uint64_t(heads * d));
      auto orig = qkv;
      std::vector<float> cs(size_t(seq * half)), sn(size_t(seq * half));
      for (int p = 0; p < seq; ++p)
        for (int i = 0; i < half; ++i) {
          double a = p * std::pow(10000.0, -2.0 * i / d);
          cs[size_t(p * half + i)] = float(std::cos(a));
          sn[size_t(p * half + i)] = float(std::sin(a));
        }
      uint16_t *base = qkv.data();
      k->run({uint32_t(rows), uint32_t((heads + 7) / 8), 1},
             {cpu::ArgValue::ptr(base, qkv.size() * 2), cpu::ArgValue::ptr(base + hid, (qkv.size() - size_t(hid)) * 2),
              cpu::ArgValue::ptr(cs), cpu::ArgValue::ptr(sn), i32(ld), i32(seq), i32(heads)});
      for (int r = 0; r < rows; ++r)
        for (int j = 0; j < ld; ++j) {
          size_t at = size_t(r * ld + j);
          if (j >= 2 * hid) { // v heads and row padding
            REQUIRE(qkv[at] == orig[at]);
            continue;
          }
          int i = j % d, head0 = j - i, p = r % seq, ii = i % half;
          double x1 = kHalf.value(orig[size_t(r * ld + head0 + ii)]);
          double x2 = kHalf.value(orig[size_t(r * ld + head0 + half + ii)]);
          double c = cs[size_t(p * half + ii)], s = sn[size_t(p * half + ii)];
          double want = i < half ? x1 * c - x2 * s : x2 * c + x1 * s;
          REQUIRE(std::fabs(kHalf.value(qkv[at]) - want) <= 1e-6 + 1e-3 * std::fabs(want));
        }
    }
  }
}

TEST_CASE("engine: the host fp16 conversion is exact and rounds to nearest even", "[cpu][engine]") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float v = tle_engine::halfToFloat(uint16_t(h));
    bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    if (nan) {
      REQUIRE(std::isnan(v));
      REQUIRE(std::isnan(tle_engine::halfToFloat(tle_engine::floatToHalf(v))));
      continue;
    }
    if ((h & 0x7fff) == 0x7c00)
      REQUIRE((std::isinf(v) && std::signbit(v) == bool(h & 0x8000)));
    else
      REQUIRE(double(v) == kHalf.value(uint16_t(h)));
    REQUIRE(tle_engine::floatToHalf(v) == h);
  }
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> e(-30, 18);
  for (int i = 0; i < 200000; ++i) {
    float f = float(std::ldexp(1.0 + std::generate_canonical<double, 53>(rng), int(e(rng)))) * (i % 2 ? -1.f : 1.f);
    INFO(f);
    REQUIRE(tle_engine::floatToHalf(f) == kHalf.round(f));
  }
  REQUIRE(tle_engine::floatToHalf(65519.99f) == 0x7bff);
  REQUIRE(tle_engine::floatToHalf(65520.f) == 0x7c00);
  REQUIRE(tle_engine::floatToHalf(-INFINITY) == 0xfc00);
}
