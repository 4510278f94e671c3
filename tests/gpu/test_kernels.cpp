// tle-gpu-kernel-tests: runs the tlec-compiled kernels of tests/gpu/kernels/ on a GPU and checks them against independent CPU references.
//
// Usage: tle-gpu-kernel-tests [--cubin-dir DIR] [--arch ARCH] [--device N] [--only NAME[,NAME...]]
//   DIR defaults to the build tree's tests/gpu/kernels/ (next to this executable), where CMake
//   writes <variant>.<arch>.cubin (or .ptx without a CUDA toolkit) for every `# Build:` line of
//   tests/gpu/kernels/*.tle. ARCH defaults to the device's (sm_90a on 9.0, sm_80 on 8.x).
//   NAME is a group (softmax2d, row_sum, col_reduce, reduce_dtypes, casts, int_ops, float_ops,
//   rounding_modes, scalar_ops, loops, int64_offsets, masks, masks2d) or one variant (e.g.
//   softmax2d_16x128_w4).
// Every case poisons its outputs (all bytes 0xff), uses fresh random inputs with fixed seeds and
// compares with a float64 / integer reference computed here; elements outside the logical output
// must keep the poison. One PASS/FAIL line per case, then "N passed, M failed".
// Exit status: 0 all cases pass, 1 a case fails, 77 no usable GPU (ctest reports "Skipped").
#include "tle/Runtime/Runtime.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace tle::rt;

namespace {

constexpr int kSkip = 77;
constexpr double kInf = std::numeric_limits<double>::infinity();

// ------------------------------------------------------------------------------------------------
// Options, reporting, module loading
// ------------------------------------------------------------------------------------------------

struct Options {
  std::string cubinDir;
  std::string arch;
  int device = 0;
  std::set<std::string> only; // groups or variants; empty = all
};

std::string exeDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return ".";
  std::string p(buf, size_t(n));
  return p.substr(0, p.rfind('/'));
}

bool fileExists(const std::string &path) { return access(path.c_str(), R_OK) == 0; }

[[noreturn]] void usage(int status) {
  std::fprintf(status ? stderr : stdout,
               "usage: tle-gpu-kernel-tests [--cubin-dir DIR] [--arch ARCH] [--device N] "
               "[--only NAME[,NAME...]]\n"
               "  NAME: softmax2d, row_sum, col_reduce, reduce_dtypes, casts, int_ops, float_ops,\n"
               "        rounding_modes, scalar_ops, loops, int64_offsets, masks, masks2d, or a variant\n"
               "        name such as softmax2d_16x128_w4\n");
  std::exit(status);
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tle-gpu-kernel-tests: %s needs a value\n", a.c_str());
        usage(2);
      }
      return argv[++i];
    };
    if (a == "--cubin-dir") {
      o.cubinDir = value();
    } else if (a == "--arch") {
      o.arch = value();
    } else if (a == "--device") {
      o.device = std::atoi(value().c_str());
    } else if (a == "--only") {
      std::stringstream ss(value());
      for (std::string name; std::getline(ss, name, ',');)
        o.only.insert(name);
    } else if (a == "-h" || a == "--help") {
      usage(0);
    } else {
      std::fprintf(stderr, "tle-gpu-kernel-tests: unknown argument '%s'\n", a.c_str());
      usage(2);
    }
  }
  if (o.cubinDir.empty())
    o.cubinDir = exeDir() + "/kernels";
  return o;
}

struct Report {
  int passed = 0, failed = 0;
  void check(bool ok, const std::string &line) {
    ++(ok ? passed : failed);
    std::printf("%s  %s\n", ok ? "PASS" : "FAIL", line.c_str());
    std::fflush(stdout);
  }
};

// Everything a case needs: where to report, the device, a stream, the options.
struct Env {
  Report &rep;
  const Device &dev;
  const Options &opt;
  Stream &stream;
};

// Runs `body`; an exception becomes a FAIL line for `what`.
void guarded(Env &env, const std::string &what, const std::function<void()> &body) {
  try {
    body();
  } catch (const std::exception &e) {
    env.rep.check(false, what + ": " + e.what());
  }
}

std::vector<std::string> archCandidates(const Device &dev, const Options &opt) {
  if (!opt.arch.empty())
    return {opt.arch};
  int ma = dev.computeMajor(), mi = dev.computeMinor();
  if (ma == 9 && mi == 0)
    return {"sm_90a", "sm_90"};
  if (ma == 8 && mi != 0)
    return {fmt::format("sm_8{}", mi), "sm_80"};
  return {fmt::format("sm_{}{}", ma, mi)};
}

// Loads variant `name` (one kernel per module); reports FAIL and returns nullopt when it cannot.
std::optional<Kernel> loadVariant(Env &env, const std::string &name, const std::string &kernelName) {
  std::string looked;
  for (const std::string &arch : archCandidates(env.dev, env.opt)) {
    for (const char *ext : {"cubin", "ptx"}) {
      std::string path = fmt::format("{}/{}.{}.{}", env.opt.cubinDir, name, arch, ext);
      if (!fileExists(path)) {
        looked += (looked.empty() ? "" : ", ") + path;
        continue;
      }
      try {
        Kernel k = Module::fromFile(env.dev, path).kernel(kernelName);
        const KernelInfo &ki = k.info();
        std::printf("----  %s: %s (target %s): num_warps %d, shared %u B, %d regs, signature \"%s\"\n",
                    name.c_str(), path.c_str(), ki.target.c_str(), ki.numWarps, ki.sharedBytes,
                    k.numRegisters(), ki.signature().c_str());
        return k;
      } catch (const std::exception &e) {
        env.rep.check(false, fmt::format("{}: loading {}: {}", name, path, e.what()));
        return std::nullopt;
      }
    }
  }
  env.rep.check(false, fmt::format("{}: no module for this device (looked for {}); build the target "
                                   "tle_gpu_kernels or pass --cubin-dir",
                                   name, looked));
  return std::nullopt;
}

int64_t constexprOf(const Kernel &k, const char *name) {
  std::optional<int64_t> v = k.info().constexprInt(name);
  if (!v)
    throw std::runtime_error(fmt::format("{} has no integer constexpr {}", k.info().name, name));
  return *v;
}

bool hinted(const Kernel &k) { return !k.info().params.empty() && k.info().params[0].divisibility >= 16; }

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t roundUp(int64_t a, int64_t b) { return cdiv(a, b) * b; }

// ------------------------------------------------------------------------------------------------
// Device buffers with poisoned guard zones
// ------------------------------------------------------------------------------------------------

// `count` elements of T at element offset `front` of a buffer whose every byte starts as 0xff;
// `front` and `back` guard elements stay poisoned unless a kernel writes out of bounds.
// front = 1 gives a base pointer that is misaligned for vector accesses.
template <class T> struct Buf {
  size_t front = 0, count = 0, back = 0;
  DeviceBuffer mem;
  Buf(const Device &dev, size_t count_, size_t front_ = 0, size_t back_ = 64)
      : front(front_), count(count_), back(back_), mem(dev, (front_ + count_ + back_) * sizeof(T)) {
    mem.fillBytes(0xff);
  }
  Buf(const Device &dev, const std::vector<T> &data, size_t front_ = 0, size_t back_ = 64)
      : Buf(dev, data.size(), front_, back_) {
    if (!data.empty())
      mem.copyFromHost(data.data(), data.size() * sizeof(T), front * sizeof(T));
  }
  DevicePtr arg() const { return mem.ptr(front * sizeof(T)); }
  // The whole buffer, guards included; element i of the payload is at [front + i].
  std::vector<T> all() const { return mem.toHost<T>(); }
};

template <class T> bool isPoison(T v) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  return std::all_of(b, b + sizeof(T), [](unsigned char c) { return c == 0xff; });
}

template <class T> uint64_t bitsOf(T v) {
  uint64_t r = 0;
  std::memcpy(&r, &v, sizeof(T));
  return r;
}

// ------------------------------------------------------------------------------------------------
// Bit-exact reference conversions (written here, independent of the runtime's Half/BFloat16)
// ------------------------------------------------------------------------------------------------

uint32_t f32Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float f32FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// fp32 -> IEEE binary16, round to nearest even; NaN -> a quiet NaN, overflow -> infinity.
uint16_t f32ToF16(float f) {
  uint32_t x = f32Bits(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  uint32_t exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
  if (exp == 0xff)
    return uint16_t(sign | (man ? 0x7e00u : 0x7c00u));
  if (exp == 0) // fp32 zero or subnormal (< 2^-126): rounds to a signed zero in binary16
    return sign;
  int e = int(exp) - 127;
  if (e > 15)
    return uint16_t(sign | 0x7c00u);
  uint32_t m = man | 0x800000u; // value = m * 2^(e - 23)
  int shift = e >= -14 ? 13 : -1 - e; // keep 11 bits (normal) or the 2^-24 multiples (subnormal)
  if (shift > 24)
    return sign;
  uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  if (e >= -14) // a carry out of the significand bumps the exponent (up to infinity)
    return uint16_t(sign | ((uint32_t(e + 15) << 10) + (q - 1024)));
  return uint16_t(sign | q); // subnormal; q == 1024 is the smallest normal
}

// fp32 -> IEEE binary16, round toward zero; overflow gives the largest finite value.
uint16_t f32ToF16Rtz(float f) {
  uint32_t x = f32Bits(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  uint32_t exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
  if (exp == 0xff)
    return uint16_t(sign | (man ? 0x7e00u : 0x7c00u));
  if (exp == 0)
    return sign;
  int e = int(exp) - 127;
  if (e > 15)
    return uint16_t(sign | 0x7bffu);
  uint32_t m = man | 0x800000u;
  int shift = e >= -14 ? 13 : -1 - e;
  if (shift > 24)
    return sign;
  uint32_t q = m >> shift;
  return uint16_t(sign | (e >= -14 ? (uint32_t(e + 15) << 10) + (q - 1024) : q));
}

// fp32 -> bfloat16, round to nearest even; NaN -> a quiet NaN.
uint16_t f32ToBf16(float f) {
  uint32_t x = f32Bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  return uint16_t((x + 0x7fffu + lsb) >> 16);
}

double f16ToDouble(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v;
  if (e == 31)
    v = m ? std::numeric_limits<double>::quiet_NaN() : kInf;
  else
    v = e ? std::ldexp(1024 + m, e - 25) : std::ldexp(m, -24);
  return s ? -v : v;
}

float bf16ToFloat(uint16_t b) { return f32FromBits(uint32_t(b) << 16); }

bool f16IsNan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }
bool bf16IsNan(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f); }

// ------------------------------------------------------------------------------------------------
// Checking
// ------------------------------------------------------------------------------------------------

// Mismatches of one output against its reference; the first one is kept for the report.
struct Check {
  std::string name;
  size_t count = 0, bad = 0;
  double maxErr = 0; // largest |got - want| / (atol + rtol * scale) seen
  std::string first;

  explicit Check(std::string n) : name(std::move(n)) {}

  void fail(const std::string &msg) {
    if (bad++ == 0)
      first = msg;
  }
  // |got - want| <= atol + rtol * |scale|; a non-finite want must be matched exactly (NaN by NaN).
  void near(size_t i, double got, double want, double atol, double rtol, double scale) {
    ++count;
    if (!std::isfinite(want)) {
      bool ok = std::isnan(want) ? std::isnan(got) : got == want;
      if (!ok)
        fail(fmt::format("[{}]: got {:.9g}, want {:.9g}", i, got, want));
      return;
    }
    double tol = atol + rtol * std::fabs(scale), err = std::fabs(got - want);
    if (std::isfinite(err) && tol > 0)
      maxErr = std::max(maxErr, err / tol);
    if (!(err <= tol))
      fail(fmt::format("[{}]: got {:.9g}, want {:.9g} (tolerance {:.3g})", i, got, want, tol));
  }
  // Bit-exact fp32, any NaN matching any NaN; `anyZero`: +0 and -0 match each other.
  void sameFloat(size_t i, float got, float want, bool anyZero = false) {
    ++count;
    bool ok = f32Bits(got) == f32Bits(want) || (std::isnan(got) && std::isnan(want)) ||
              (anyZero && got == 0 && want == 0);
    if (!ok)
      fail(fmt::format("[{}]: got {:.9g} (0x{:08x}), want {:.9g} (0x{:08x})", i, got, f32Bits(got), want,
                       f32Bits(want)));
  }
  // Bit-exact binary16 / bfloat16 (`bf`), any NaN matching any NaN.
  void same16(size_t i, uint16_t got, uint16_t want, bool bf) {
    ++count;
    bool nanG = bf ? bf16IsNan(got) : f16IsNan(got), nanW = bf ? bf16IsNan(want) : f16IsNan(want);
    if (got != want && !(nanG && nanW))
      fail(fmt::format("[{}]: got 0x{:04x}, want 0x{:04x}", i, got, want));
  }
  template <class T> void same(size_t i, T got, T want) {
    ++count;
    if (got != want)
      fail(fmt::format("[{}]: got {}, want {}", i, +got, +want));
  }
  template <class T> void untouched(size_t i, T got) {
    if (!isPoison(got))
      fail(fmt::format("[{}]: written outside the output (0x{:x})", i, bitsOf(got)));
  }
  bool ok() const { return bad == 0; }
};

// One line for a case: the overall verdict and, for failing outputs, their first mismatch.
void reportCase(Env &env, const std::string &what, const std::vector<Check> &checks) {
  bool ok = true;
  size_t n = 0;
  double worst = 0;
  std::string detail;
  for (const Check &c : checks) {
    n += c.count;
    worst = std::max(worst, c.maxErr);
    if (!c.ok()) {
      ok = false;
      detail += fmt::format("; {}: {} bad, first {}", c.name, c.bad, c.first);
    }
  }
  if (n == 0) {
    ok = false;
    detail += "; nothing was checked";
  }
  std::string err = worst > 0 ? fmt::format(", worst error {:.2f} of tolerance", worst) : "";
  env.rep.check(ok, fmt::format("{:<58} {} values{}{}", what, n, err, detail));
}

// Checks a row-major [rows][n] output block at payload offset 0 and the guards around it.
template <class T> void checkGuards(Check &c, const Buf<T> &b, const std::vector<T> &all, size_t used) {
  for (size_t i = 0; i < b.front; ++i)
    c.untouched(i, all[i]);
  for (size_t i = b.front + used; i < all.size(); ++i)
    c.untouched(i - b.front, all[i]);
}

// Waits for the case's launch (outputs were poisoned when their Buf was made).
void sync(Env &env) { env.stream.synchronize(); }

// ------------------------------------------------------------------------------------------------
// Random inputs
// ------------------------------------------------------------------------------------------------

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g); }
  double normal() { return std::normal_distribution<double>(0.0, 1.0)(g); }
  int64_t range(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g); } // [lo, hi]
  uint64_t bits() { return g(); }
  bool chance(double p) { return uniform(0, 1) < p; }
};

std::vector<float> normals(Rng &r, size_t n, double scale = 1.0) {
  std::vector<float> v(n);
  for (auto &x : v)
    x = float(scale * r.normal());
  return v;
}

// ------------------------------------------------------------------------------------------------
// softmax2d: BLOCK_M rows per program, 2-D masks, axis-1 max/sum
// ------------------------------------------------------------------------------------------------

void runSoftmax2d(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "softmax2d_kernel");
  if (!k)
    return;
  const int64_t BM = constexprOf(*k, "BLOCK_M"), BN = constexprOf(*k, "BLOCK_N");
  const bool hint = hinted(*k);
  struct Shape { int64_t rows, cols; };
  const Shape shapes[] = {{1, 1}, {7, 13}, {33, BN}, {50, BN - 1}, {129, BN / 2 + 3}, {1000, std::min<int64_t>(BN, 100)}, {3, BN}};
  for (const Shape &s : shapes) {
    const int64_t inStride = hint ? roundUp(s.cols, 16) + 16 : s.cols + 3;
    const int64_t outStride = hint ? roundUp(s.cols, 16) : s.cols + 1;
    const int64_t grid = cdiv(s.rows, BM);
    std::string what = fmt::format("{} {}x{} strides {}/{} grid {}", variant, s.rows, s.cols, inStride, outStride, grid);
    guarded(env, what, [&] {
      Rng r(uint64_t(s.rows * 7919 + s.cols * 31 + BM));
      std::vector<float> in(size_t(s.rows * inStride), f32FromBits(0xffffffffu)); // NaN padding
      for (int64_t i = 0; i < s.rows; ++i) {
        double off = r.uniform(-40, 40), spread = r.uniform(0.1, 8);
        for (int64_t c = 0; c < s.cols; ++c)
          in[size_t(i * inStride + c)] = float(off + spread * r.normal());
      }
      Buf<float> din(env.dev, in), dout(env.dev, size_t(grid * BM * outStride));
      k->launch(unsigned(grid), env.stream, dout.arg(), din.arg(), int32_t(inStride), int32_t(outStride),
                int32_t(s.rows), int32_t(s.cols));
      sync(env);
      std::vector<float> out = dout.all();
      Check c("out");
      for (int64_t i = 0; i < s.rows; ++i) {
        const float *row = &in[size_t(i * inStride)];
        double m = -kInf, sum = 0;
        for (int64_t j = 0; j < s.cols; ++j)
          m = std::max(m, double(row[j]));
        for (int64_t j = 0; j < s.cols; ++j)
          sum += std::exp(double(row[j]) - m);
        for (int64_t j = 0; j < outStride; ++j) {
          size_t at = size_t(i * outStride + j);
          if (j < s.cols) {
            double want = std::exp(double(row[j]) - m) / sum;
            c.near(at, out[at], want, 2e-6, 1e-5, want);
          } else {
            c.untouched(at, out[at]);
          }
        }
      }
      for (size_t at = size_t(s.rows * outStride); at < out.size(); ++at)
        c.untouched(at, out[at]);
      reportCase(env, what, {c});
    });
  }
}

// ------------------------------------------------------------------------------------------------
// row_sum: axis-1 sum/max stored through a 1-D pointer tile (convert_layout through shared memory)
// ------------------------------------------------------------------------------------------------

void runRowSum(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "row_sum_kernel");
  if (!k)
    return;
  const int64_t BM = constexprOf(*k, "BLOCK_M"), BN = constexprOf(*k, "BLOCK_N");
  struct Shape { int64_t rows, cols; };
  const Shape shapes[] = {{1, 1}, {5, BN}, {BM, BN - 3}, {3 * BM + 7, BN / 2 + 1}, {1000, BN}};
  for (const Shape &s : shapes) {
    const int64_t stride = roundUp(s.cols, 16);
    const int64_t grid = cdiv(s.rows, BM);
    std::string what = fmt::format("{} {}x{} grid {}", variant, s.rows, s.cols, grid);
    guarded(env, what, [&] {
      Rng r(uint64_t(s.rows * 131 + s.cols + BM * 7));
      std::vector<float> in(size_t(s.rows * stride), f32FromBits(0xffffffffu));
      for (int64_t i = 0; i < s.rows; ++i)
        for (int64_t j = 0; j < s.cols; ++j)
          in[size_t(i * stride + j)] = float(r.uniform(-3, 3) + r.normal());
      Buf<float> din(env.dev, in), dsum(env.dev, size_t(s.rows)), dmax(env.dev, size_t(s.rows));
      k->launch(unsigned(grid), env.stream, dsum.arg(), dmax.arg(), din.arg(), int32_t(stride), int32_t(s.rows),
                int32_t(s.cols));
      sync(env);
      std::vector<float> sum = dsum.all(), mx = dmax.all();
      Check cs("sum"), cm("max");
      for (int64_t i = 0; i < s.rows; ++i) {
        double want = 0, mag = 0;
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < s.cols; ++j) {
          float v = in[size_t(i * stride + j)];
          want += v;
          mag += std::fabs(v);
          m = std::max(m, v);
        }
        cs.near(size_t(i), sum[size_t(i)], want, 1e-6, 1e-5, mag);
        cm.sameFloat(size_t(i), mx[size_t(i)], m);
      }
      checkGuards(cs, dsum, sum, size_t(s.rows));
      checkGuards(cm, dmax, mx, size_t(s.rows));
      reportCase(env, what, {cs, cm});
    });
  }
}

// ------------------------------------------------------------------------------------------------
// col_reduce: axis-0 sum/max/min and keep_dims=True
// ------------------------------------------------------------------------------------------------

void runColReduce(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "col_reduce_kernel");
  if (!k)
    return;
  const int64_t BM = constexprOf(*k, "BLOCK_M"), BN = constexprOf(*k, "BLOCK_N");
  struct Shape { int64_t rows, cols; };
  const Shape shapes[] = {{BM, BN}, {BM - 1, 3 * BN + 5}, {1, 1}, {BM / 2 + 3, 100}, {2, BN - 1}};
  for (const Shape &s : shapes) {
    const int64_t stride = roundUp(s.cols, 16);
    const int64_t grid = cdiv(s.cols, BN);
    std::string what = fmt::format("{} {}x{} grid {}", variant, s.rows, s.cols, grid);
    guarded(env, what, [&] {
      Rng r(uint64_t(s.rows * 977 + s.cols * 3 + BN));
      std::vector<float> in(size_t(s.rows * stride), f32FromBits(0xffffffffu));
      for (int64_t i = 0; i < s.rows; ++i)
        for (int64_t j = 0; j < s.cols; ++j)
          in[size_t(i * stride + j)] = float(r.uniform(-10, 10));
      const size_t nc = size_t(s.cols);
      Buf<float> din(env.dev, in), dsum(env.dev, nc), dmax(env.dev, nc), dmin(env.dev, nc),
          dcen(env.dev, size_t(s.rows * stride));
      k->launch(unsigned(grid), env.stream, dsum.arg(), dmax.arg(), dmin.arg(), dcen.arg(), din.arg(),
                int32_t(stride), int32_t(s.rows), int32_t(s.cols));
      sync(env);
      std::vector<float> sum = dsum.all(), mx = dmax.all(), mn = dmin.all(), cen = dcen.all();
      Check cs("sum"), cmax("max"), cmin("min"), cc("centred");
      auto at = [&](int64_t i, int64_t j) { return in[size_t(i * stride + j)]; };
      std::vector<double> mean(nc), mag(nc);
      for (int64_t j = 0; j < s.cols; ++j) {
        double sm = 0;
        float hi = -std::numeric_limits<float>::infinity(), lo = std::numeric_limits<float>::infinity();
        for (int64_t i = 0; i < s.rows; ++i) {
          sm += at(i, j);
          mag[size_t(j)] += std::fabs(at(i, j));
          hi = std::max(hi, at(i, j));
          lo = std::min(lo, at(i, j));
        }
        mean[size_t(j)] = sm / double(s.rows);
        cs.near(size_t(j), sum[size_t(j)], sm, 1e-6, 1e-5, mag[size_t(j)]);
        cmax.sameFloat(size_t(j), mx[size_t(j)], hi);
        cmin.sameFloat(size_t(j), mn[size_t(j)], lo);
      }
      for (int64_t i = 0; i < s.rows; ++i) {
        for (int64_t j = 0; j < stride; ++j) {
          size_t p = size_t(i * stride + j);
          if (j >= s.cols) {
            cc.untouched(p, cen[p]);
            continue;
          }
          int64_t b0 = j / BN * BN, b1 = std::min(s.cols, b0 + BN);
          double rowMax = -kInf;
          for (int64_t jj = b0; jj < b1; ++jj)
            rowMax = std::max(rowMax, double(at(i, jj)));
          double want = double(at(i, j)) - mean[size_t(j)] - rowMax;
          double scale = std::fabs(at(i, j)) + mag[size_t(j)] / double(s.rows) + std::fabs(rowMax);
          cc.near(p, cen[p], want, 1e-6, 1e-5, scale);
        }
      }
      checkGuards(cs, dsum, sum, nc);
      checkGuards(cmax, dmax, mx, nc);
      checkGuards(cmin, dmin, mn, nc);
      checkGuards(cc, dcen, cen, size_t(s.rows * stride));
      reportCase(env, what, {cs, cmax, cmin, cc});
    });
  }
}

// ------------------------------------------------------------------------------------------------
// reduce_dtypes: i32/i64/u8/fp16/fp32 reductions along both axes and to a scalar
// ------------------------------------------------------------------------------------------------

void runReduceDtypes(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "reduce_dtypes_kernel");
  if (!k)
    return;
  const int64_t BM = constexprOf(*k, "BLOCK_M"), BN = constexprOf(*k, "BLOCK_N"), T = BM * BN;
  struct Run { int64_t programs, rows, cols; };
  const Run runs[] = {{1, BM, BN}, {3, BM - 1, BN - 3}, {2, 1, 1}, {4, BM / 2 + 1, BN / 2 + 3}};
  for (const Run &run : runs) {
    const int64_t P = run.programs, R = run.rows, C = run.cols;
    std::string what = fmt::format("{} programs={} {}x{}", variant, P, R, C);
    guarded(env, what, [&] {
      Rng r(uint64_t(P * 31337 + R * 101 + C + T));
      const size_t n = size_t(P * T);
      // Masked-off cells hold poison (all bits set), which a masked load must not see.
      std::vector<int32_t> a(n, -1);
      std::vector<int64_t> l(n, -1);
      std::vector<uint8_t> u(n, 0xff);
      std::vector<uint16_t> h(n, 0xffff);
      std::vector<float> f(n, f32FromBits(0xffffffffu));
      auto valid = [&](int64_t i, int64_t j) { return i < R && j < C; };
      for (int64_t p = 0; p < P; ++p)
        for (int64_t i = 0; i < BM; ++i)
          for (int64_t j = 0; j < BN; ++j) {
            if (!valid(i, j))
              continue;
            size_t e = size_t(p * T + i * BN + j);
            a[e] = int32_t(uint32_t(r.bits()));
            l[e] = int64_t(r.bits());
            u[e] = uint8_t(r.range(0, 255));
            h[e] = f32ToF16(float(r.range(-8, 8)) * 0.5f); // multiples of 0.5: fp16 sums stay exact
            f[e] = float(r.uniform(-1, 1));
          }
      const size_t n32 = size_t(3 * BM + 2 * BN + 2), n64 = size_t(BM + 2 * BN), nh = size_t(BM + BN);
      Buf<int32_t> da(env.dev, a), o32(env.dev, size_t(P) * n32);
      Buf<int64_t> dl(env.dev, l), o64(env.dev, size_t(P) * n64);
      Buf<uint8_t> du(env.dev, u);
      Buf<uint16_t> dh(env.dev, h), oh(env.dev, size_t(P) * nh);
      Buf<float> df(env.dev, f), of(env.dev, size_t(P) * 4);
      k->launch(unsigned(P), env.stream, da.arg(), dl.arg(), du.arg(), dh.arg(), df.arg(), o32.arg(), o64.arg(), oh.arg(),
                of.arg(), int32_t(R), int32_t(C));
      sync(env);
      std::vector<int32_t> g32 = o32.all();
      std::vector<int64_t> g64 = o64.all();
      std::vector<uint16_t> gh = oh.all();
      std::vector<float> gf = of.all();
      Check c32("i32 row sum/max/min, u8 col max/sum, tile min"), c64("i64 row/col sum, col max"),
          ch("fp16 row sum, col max"), cf("fp32 tile sum/max"), cu("untouched");
      for (int64_t p = 0; p < P; ++p) {
        auto at = [&](int64_t i, int64_t j) { return size_t(p * T + i * BN + j); };
        const size_t b32 = size_t(p) * n32, b64 = size_t(p) * n64, bh = size_t(p) * nh, bf = size_t(p) * 4;
        int32_t tileMin = INT32_MAX;
        double fsum = 0, fmag = 0;
        float fmax = -std::numeric_limits<float>::infinity();
        for (int64_t i = 0; i < BM; ++i) {
          uint32_t sum = 0;
          uint64_t sum64 = 0;
          int32_t mx = INT32_MIN, mn = INT32_MAX;
          double hs = 0;
          for (int64_t j = 0; j < BN; ++j) {
            if (!valid(i, j))
              continue;
            int32_t v = a[at(i, j)];
            sum += uint32_t(v);
            mx = std::max(mx, v);
            mn = std::min(mn, v);
            sum64 += uint64_t(l[at(i, j)]);
            hs += f16ToDouble(h[at(i, j)]);
            fsum += f[at(i, j)];
            fmag += std::fabs(f[at(i, j)]);
            fmax = std::max(fmax, f[at(i, j)]);
          }
          tileMin = std::min(tileMin, mn);
          c32.same(b32 + size_t(i), g32[b32 + size_t(i)], int32_t(sum));
          c32.same(b32 + size_t(BM + i), g32[b32 + size_t(BM + i)], mx);
          c32.same(b32 + size_t(2 * BM + i), g32[b32 + size_t(2 * BM + i)], mn);
          c64.same(b64 + size_t(i), g64[b64 + size_t(i)], int64_t(sum64));
          ch.same16(bh + size_t(i), gh[bh + size_t(i)], f32ToF16(float(hs)), false);
        }
        for (int64_t j = 0; j < BN; ++j) {
          uint32_t umax = 0, usum = 0;
          uint64_t lsum = 0;
          int64_t lmax = INT64_MIN;
          double hmax = -kInf;
          for (int64_t i = 0; i < BM; ++i) {
            if (!valid(i, j))
              continue;
            umax = std::max<uint32_t>(umax, u[at(i, j)]);
            usum += u[at(i, j)];
            lsum += uint64_t(l[at(i, j)]);
            lmax = std::max(lmax, l[at(i, j)]);
            hmax = std::max(hmax, f16ToDouble(h[at(i, j)]));
          }
          c32.same(b32 + size_t(3 * BM + j), g32[b32 + size_t(3 * BM + j)], int32_t(umax));
          c32.same(b32 + size_t(3 * BM + BN + j), g32[b32 + size_t(3 * BM + BN + j)], int32_t(usum));
          c64.same(b64 + size_t(BM + j), g64[b64 + size_t(BM + j)], int64_t(lsum));
          c64.same(b64 + size_t(BM + BN + j), g64[b64 + size_t(BM + BN + j)], lmax);
          ch.same16(bh + size_t(BM + j), gh[bh + size_t(BM + j)], f32ToF16(float(hmax)), false);
        }
        c32.same(b32 + size_t(3 * BM + 2 * BN), g32[b32 + size_t(3 * BM + 2 * BN)], tileMin);
        cu.untouched(b32 + n32 - 1, g32[b32 + n32 - 1]);
        cf.near(bf, gf[bf], fsum, 1e-6, 1e-5, fmag);
        cf.sameFloat(bf + 1, gf[bf + 1], fmax);
        cf.near(bf + 2, gf[bf + 2], fsum, 1e-6, 1e-5, fmag);
        cu.untouched(bf + 3, gf[bf + 3]);
      }
      checkGuards(cu, o32, g32, size_t(P) * n32);
      checkGuards(cu, o64, g64, size_t(P) * n64);
      checkGuards(cu, oh, gh, size_t(P) * nh);
      checkGuards(cu, of, gf, size_t(P) * 4);
      reportCase(env, what, {c32, c64, ch, cf, cu});
    });
  }
}

// ------------------------------------------------------------------------------------------------
// casts
// ------------------------------------------------------------------------------------------------

// A random binary16 bit pattern: mostly finite values of any exponent, with subnormals, zeros,
// infinities and NaNs mixed in.
uint16_t randomF16(Rng &r) {
  int kind = int(r.range(0, 19));
  uint16_t sign = uint16_t(r.range(0, 1) << 15);
  if (kind == 0)
    return uint16_t(sign | 0x7c00); // infinity
  if (kind == 1)
    return uint16_t(0x7c00 | r.range(1, 0x3ff)); // NaN
  if (kind == 2)
    return sign; // zero
  if (kind == 3)
    return uint16_t(sign | r.range(1, 0x3ff)); // subnormal
  return uint16_t(sign | r.range(0x400, 0x7bff));
}

// A random fp32 that exercises fp16/bf16 rounding: exact ties, values next to ties, the binary16
// subnormal and overflow boundaries, and arbitrary bit patterns (NaNs and infinities included).
float randomF32ForRounding(Rng &r) {
  int kind = int(r.range(0, 9));
  uint32_t sign = uint32_t(r.range(0, 1)) << 31;
  switch (kind) {
  case 0: { // a binary16 value plus half an ulp (+-1 fp32 ulp): ties and near ties
    uint16_t h = uint16_t(r.range(0, 0x7bfe));
    float lo = float(f16ToDouble(h)), hi = float(f16ToDouble(uint16_t(h + 1)));
    uint32_t mid = f32Bits(float((double(lo) + double(hi)) / 2));
    return f32FromBits(sign | uint32_t(int64_t(mid) + r.range(-1, 1)));
  }
  case 1: { // bf16 ties: low half 0x8000, or next to it
    uint32_t b = uint32_t(r.bits()) & 0x7f7f0000u;
    return f32FromBits(sign | b | uint32_t(0x8000 + r.range(-1, 1)));
  }
  case 2: // around the binary16 overflow threshold 65520
    return f32FromBits(sign | uint32_t(int64_t(f32Bits(65520.0f)) + r.range(-3, 3)));
  case 3: // binary16 subnormal range and below
    return float(r.uniform(-1, 1) * std::ldexp(1.0, int(r.range(-27, -14))));
  case 4: // arbitrary bits (NaN, infinity, fp32 subnormals)
    return f32FromBits(uint32_t(r.bits()));
  default:
    return float(r.normal() * std::ldexp(1.0, int(r.range(-20, 20))));
  }
}

void runCasts(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "casts_kernel");
  if (!k)
    return;
  const int64_t BLOCK = constexprOf(*k, "BLOCK");
  const bool hint = hinted(*k);
  std::vector<int64_t> sizes = hint ? std::vector<int64_t>{16, 1024, 1040, 4144}
                                    : std::vector<int64_t>{1, 255, 1000, 3001};
  for (int64_t n : sizes) {
    const int64_t grid = cdiv(n, BLOCK);
    std::string what = fmt::format("{} n={} grid {}", variant, n, grid);
    guarded(env, what, [&] {
      Rng r(uint64_t(n * 613 + BLOCK));
      const size_t N = size_t(n);
      std::vector<uint16_t> h(N), bf(N);
      std::vector<int8_t> a(N);
      std::vector<uint8_t> u(N);
      std::vector<int32_t> i32(N);
      std::vector<int64_t> i64(N);
      std::vector<float> f(N), g(N);
      for (size_t e = 0; e < N; ++e) {
        h[e] = randomF16(r);
        bf[e] = uint16_t(r.chance(0.9) ? f32ToBf16(float(r.normal() * std::ldexp(1.0, int(r.range(-30, 40)))))
                                       : uint16_t(r.bits()));
        a[e] = int8_t(r.range(-128, 127));
        u[e] = uint8_t(r.range(0, 255));
        i32[e] = r.chance(0.5) ? int32_t(r.range(-70000, 70000)) : int32_t(uint32_t(r.bits()));
        i64[e] = int64_t(r.bits()) >> r.range(2, 40);
        f[e] = randomF32ForRounding(r);
        g[e] = float(r.uniform(-1, 1) * std::ldexp(1.0, int(r.range(0, 30))));
      }
      g[0] = -0.0f;
      if (N > 1)
        g[1] = 2147483520.0f; // largest fp32 below 2^31
      Buf<uint16_t> dh(env.dev, h), dbf(env.dev, bf), of16(env.dev, 5 * N), obf16(env.dev, 4 * N);
      Buf<int8_t> da(env.dev, a), oi8(env.dev, 3 * N);
      Buf<uint8_t> du(env.dev, u);
      Buf<int32_t> di(env.dev, i32), oi32(env.dev, 10 * N);
      Buf<int64_t> dl(env.dev, i64), oi64(env.dev, 7 * N);
      Buf<float> df(env.dev, f), dg(env.dev, g), of32(env.dev, 7 * N);
      k->launch(unsigned(grid), env.stream, dh.arg(), dbf.arg(), da.arg(), du.arg(), di.arg(), dl.arg(), df.arg(),
                dg.arg(), of32.arg(), of16.arg(), obf16.arg(), oi32.arg(), oi64.arg(), oi8.arg(), int32_t(n));
      sync(env);
      std::vector<float> rf32 = of32.all();
      std::vector<uint16_t> rf16 = of16.all(), rbf16 = obf16.all();
      std::vector<int32_t> ri32 = oi32.all();
      std::vector<int64_t> ri64 = oi64.all();
      std::vector<int8_t> ri8 = oi8.all();
      std::vector<Check> checks;
      auto check = [&](const std::string &name) -> Check & { checks.emplace_back(name); return checks.back(); };
      checks.reserve(64); // references into it stay valid
      static const char *f32Rows[] = {"f32<-f16", "f32<-bf16", "f32<-i8", "f32<-u8", "f32<-i32", "f32<-i64", "f32<-bitcast(i32)"};
      for (int row = 0; row < 7; ++row) {
        Check &c = check(f32Rows[row]);
        for (size_t e = 0; e < N; ++e) {
          float want = 0;
          switch (row) {
          case 0: want = float(f16ToDouble(h[e])); break;
          case 1: want = bf16ToFloat(bf[e]); break;
          case 2: want = float(a[e]); break;
          case 3: want = float(u[e]); break;
          case 4: want = float(i32[e]); break; // round to nearest even
          case 5: want = float(i64[e]); break;
          default: want = f32FromBits(uint32_t(i32[e])); break;
          }
          c.sameFloat(e, rf32[row * N + e], want);
        }
      }
      static const char *f16Rows[] = {"f16<-f32", "f16<-bf16", "f16<-i32%50000", "f16 h*h", "f16<-store(f32)"};
      for (int row = 0; row < 5; ++row) {
        Check &c = check(f16Rows[row]);
        for (size_t e = 0; e < N; ++e) {
          uint16_t want = 0;
          switch (row) {
          case 0: case 4: want = f32ToF16(f[e]); break;
          case 1: want = f32ToF16(bf16ToFloat(bf[e])); break;
          case 2: want = f32ToF16(float(i32[e] % 50000)); break;
          default: want = f32ToF16(float(f16ToDouble(h[e]) * f16ToDouble(h[e]))); break; // exact in fp32
          }
          c.same16(e, rf16[row * N + e], want, false);
        }
      }
      static const char *bfRows[] = {"bf16<-f32", "bf16<-f16", "bf16 b*b", "bf16<-i8"};
      for (int row = 0; row < 4; ++row) {
        Check &c = check(bfRows[row]);
        for (size_t e = 0; e < N; ++e) {
          uint16_t want = 0;
          if (row == 0) {
            want = f32ToBf16(f[e]);
          } else if (row == 1) {
            want = f32ToBf16(float(f16ToDouble(h[e])));
          } else if (row == 2) {
            double p = double(bf16ToFloat(bf[e])) * double(bf16ToFloat(bf[e]));
            if (!std::isnan(p) && std::fabs(p) <= std::numeric_limits<float>::max() && double(float(p)) != p)
              continue; // not exact in fp32 (fp32 subnormal range): sm_80 rounds twice, skip
            want = f32ToBf16(float(p));
          } else {
            want = f32ToBf16(float(a[e]));
          }
          c.same16(e, rbf16[row * N + e], want, true);
        }
      }
      static const char *i32Rows[] = {"i32<-f32", "i32<-f16", "i32<-bf16", "i32<-i8", "i32<-u8", "i32<-i64",
                                      "i32<-bitcast(f32)", "i32<-u8<-i32", "i32<-i8<-i32", "i32<-i1"};
      for (int row = 0; row < 10; ++row) {
        Check &c = check(i32Rows[row]);
        for (size_t e = 0; e < N; ++e) {
          int32_t want = 0;
          double hv = f16ToDouble(h[e]), bv = bf16ToFloat(bf[e]);
          switch (row) {
          case 0: want = int32_t(g[e]); break;
          case 1: if (!std::isfinite(hv)) continue; want = int32_t(hv); break; // non-finite: undefined
          case 2: if (!(std::fabs(bv) < 2147483648.0)) continue; want = int32_t(bv); break;
          case 3: want = a[e]; break;
          case 4: want = u[e]; break;
          case 5: want = int32_t(uint32_t(uint64_t(i64[e]))); break;
          case 6: want = int32_t(f32Bits(f[e])); break;
          case 7: want = int32_t(uint32_t(i32[e]) & 0xffu); break;
          case 8: want = int8_t(uint8_t(uint32_t(i32[e]) & 0xffu)); break;
          default: want = (g[e] != 0 ? 1 : 0) + 2 * (a[e] != 0 ? 1 : 0); break;
          }
          c.same(e, ri32[row * N + e], want);
        }
      }
      static const char *i64Rows[] = {"i64<-f32*1024", "i64<-i32", "i64<-u8", "i64<-i8", "i64<-u32<-i32", "i64<-f16", "i64<-f64<-i64"};
      for (int row = 0; row < 7; ++row) {
        Check &c = check(i64Rows[row]);
        for (size_t e = 0; e < N; ++e) {
          int64_t want = 0;
          double hv = f16ToDouble(h[e]);
          switch (row) {
          case 0: want = int64_t(double(g[e]) * 1024.0); break;
          case 1: want = i32[e]; break;
          case 2: want = u[e]; break;
          case 3: want = a[e]; break;
          case 4: want = int64_t(uint32_t(i32[e])); break;
          case 5: if (!std::isfinite(hv)) continue; want = int64_t(hv); break;
          default: want = int64_t(double(i64[e])); break;
          }
          c.same(e, ri64[row * N + e], want);
        }
      }
      static const char *i8Rows[] = {"i8<-i32", "i8<-i64", "i8<-u8"};
      for (int row = 0; row < 3; ++row) {
        Check &c = check(i8Rows[row]);
        for (size_t e = 0; e < N; ++e) {
          uint64_t src = row == 0 ? uint64_t(uint32_t(i32[e])) : row == 1 ? uint64_t(i64[e]) : uint64_t(u[e]);
          c.same(e, ri8[row * N + e], int8_t(uint8_t(src & 0xffu)));
        }
      }
      Check &guards = check("guards");
      checkGuards(guards, of32, rf32, 7 * N);
      checkGuards(guards, of16, rf16, 5 * N);
      checkGuards(guards, obf16, rbf16, 4 * N);
      checkGuards(guards, oi32, ri32, 10 * N);
      checkGuards(guards, oi64, ri64, 7 * N);
      checkGuards(guards, oi8, ri8, 3 * N);
      reportCase(env, what, checks);
    });
  }
}

// ------------------------------------------------------------------------------------------------
// int_ops
// ------------------------------------------------------------------------------------------------

int32_t wrap32(int64_t v) { return int32_t(uint32_t(uint64_t(v))); }
int64_t wrapMul64(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

void runIntOps(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "int_ops_kernel");
  if (!k)
    return;
  const int64_t BLOCK = constexprOf(*k, "BLOCK");
  const bool hint = hinted(*k);
  const size_t front = hint ? 0 : 1; // the unhinted variant gets misaligned base pointers
  struct Run { int64_t n; int32_t kk; };
  std::vector<Run> runs = hint ? std::vector<Run>{{16, -17}, {512, 17}, {2000, -2147483647}, {5008, 2}}
                               : std::vector<Run>{{1, -1}, {127, -17}, {129, 100}, {1000, -300}};
  for (const Run &run : runs) {
    const int64_t n = run.n, grid = cdiv(n, BLOCK);
    std::string what = fmt::format("{} n={} k={} grid {}", variant, n, run.kk, grid);
    guarded(env, what, [&] {
      Rng r(uint64_t(n * 2654435761u + BLOCK));
      const size_t N = size_t(n);
      std::vector<int32_t> a(N), b(N), s(N);
      std::vector<uint32_t> c(N), d(N);
      std::vector<int64_t> a64(N), b64(N);
      auto any32 = [&]() -> int32_t {
        switch (r.range(0, 5)) {
        case 0: return int32_t(r.range(-20, 20));
        case 1: return int32_t(r.range(-100000, 100000));
        case 2: { static const int32_t sp[] = {INT32_MIN, INT32_MAX, 0, -1, 1, INT32_MIN + 1}; return sp[r.range(0, 5)]; }
        default: return int32_t(uint32_t(r.bits()));
        }
      };
      for (size_t e = 0; e < N; ++e) {
        a[e] = any32();
        do {
          b[e] = any32();
        } while (b[e] == 0 || int8_t(b[e]) == 0 || (a[e] == INT32_MIN && b[e] == -1) ||
                 (int8_t(a[e]) == -128 && int8_t(b[e]) == -1));
        s[e] = int32_t(r.range(0, 31));
        c[e] = r.chance(0.3) ? uint32_t(r.range(0, 1000)) : uint32_t(r.bits());
        do {
          d[e] = r.chance(0.5) ? uint32_t(r.range(1, 300)) : uint32_t(r.bits());
        } while (uint8_t(d[e]) == 0);
        a64[e] = r.chance(0.3) ? r.range(-1000, 1000) : int64_t(r.bits());
        do {
          b64[e] = r.chance(0.5) ? r.range(-50, 50) : int64_t(r.bits()) >> r.range(0, 60);
        } while (b64[e] == 0 || (a64[e] == INT64_MIN && b64[e] == -1));
      }
      Buf<int32_t> da(env.dev, a, front), db(env.dev, b, front), ds(env.dev, s, front), oi32(env.dev, 21 * N, front);
      Buf<uint32_t> dc(env.dev, c, front), dd(env.dev, d, front), ou32(env.dev, 8 * N, front);
      Buf<int64_t> da64(env.dev, a64, front), db64(env.dev, b64, front), oi64(env.dev, 7 * N, front);
      Buf<int8_t> oi8(env.dev, 6 * N, front);
      Buf<uint8_t> ou8(env.dev, 4 * N, front), ob(env.dev, 4 * N, front);
      k->launch(unsigned(grid), env.stream, da.arg(), db.arg(), ds.arg(), dc.arg(), dd.arg(), da64.arg(), db64.arg(),
                oi32.arg(), ou32.arg(), oi64.arg(), oi8.arg(), ou8.arg(), ob.arg(), run.kk, int32_t(n));
      sync(env);
      std::vector<int32_t> ri32 = oi32.all();
      std::vector<uint32_t> ru32 = ou32.all();
      std::vector<int64_t> ri64 = oi64.all();
      std::vector<int8_t> ri8 = oi8.all();
      std::vector<uint8_t> ru8 = ou8.all(), rb = ob.all();
      std::vector<Check> checks;
      checks.reserve(50);
      const int32_t kk = run.kk;
      static const char *i32Names[] = {"a//b", "a%b", "a>>s", "a<<s", "a&b", "a|b", "a^b", "where(a>b,a,b-1)",
                                       "maximum", "minimum", "a//-7", "a%5", "-a", "~a", "abs(a)", "k//b",
                                       "cmp", "a*b+(a-b)", "where(a%2==0,a,-b)", "k//3,k%3", "(a>>31)&3"};
      for (int row = 0; row < 21; ++row) {
        checks.emplace_back(i32Names[row]);
        Check &ck = checks.back();
        for (size_t e = 0; e < N; ++e) {
          int64_t x = a[e], y = b[e];
          int32_t want = 0;
          switch (row) {
          case 0: want = wrap32(x / y); break;
          case 1: want = wrap32(x % y); break;
          case 2: want = int32_t(a[e] >> s[e]); break;
          case 3: want = int32_t(uint32_t(a[e]) << s[e]); break;
          case 4: want = a[e] & b[e]; break;
          case 5: want = a[e] | b[e]; break;
          case 6: want = a[e] ^ b[e]; break;
          case 7: want = a[e] > b[e] ? a[e] : wrap32(y - 1); break;
          case 8: want = std::max(a[e], b[e]); break;
          case 9: want = std::min(a[e], b[e]); break;
          case 10: want = int32_t(x / -7); break;
          case 11: want = int32_t(x % 5); break;
          case 12: want = wrap32(-x); break;
          case 13: want = ~a[e]; break;
          case 14: want = wrap32(x < 0 ? -x : x); break;
          case 15: want = int32_t(int64_t(kk) / y); break;
          case 16: want = (x < y) + 2 * (x <= y) + 4 * (x == y) + 8 * (x != y) + 16 * (x > y) + 32 * (x >= y); break;
          case 17: want = wrap32(int64_t(wrap32(x * y)) + int64_t(wrap32(x - y))); break;
          case 18: want = a[e] % 2 == 0 ? a[e] : wrap32(-y); break;
          case 19: want = wrap32(int64_t(kk / 3) * 10 + kk % 3); break;
          default: want = (a[e] >> 31) & 3; break;
          }
          ck.same(e, ri32[front + row * N + e], want);
        }
      }
      static const char *u32Names[] = {"u32 c>>s", "u32 c//d", "u32 c%d", "u32 maximum", "u32 minimum", "u32 cmp", "u32 c<<s", "u32 c+d*3"};
      for (int row = 0; row < 8; ++row) {
        checks.emplace_back(u32Names[row]);
        Check &ck = checks.back();
        for (size_t e = 0; e < N; ++e) {
          uint32_t x = c[e], y = d[e], want = 0;
          switch (row) {
          case 0: want = x >> s[e]; break;
          case 1: want = x / y; break;
          case 2: want = x % y; break;
          case 3: want = std::max(x, y); break;
          case 4: want = std::min(x, y); break;
          case 5: want = uint32_t((x < y) + 2 * (x <= y) + 16 * (x > y) + 32 * (x >= y)); break;
          case 6: want = x << s[e]; break;
          default: want = x + y * 3u; break;
          }
          ck.same(e, ru32[front + row * N + e], want);
        }
      }
      static const char *i64Names[] = {"i64 a//b", "i64 a%b", "i64 a>>2s", "i64 a*b", "i64 maximum", "i64<-i32*i32", "i64 sign cmp"};
      for (int row = 0; row < 7; ++row) {
        checks.emplace_back(i64Names[row]);
        Check &ck = checks.back();
        for (size_t e = 0; e < N; ++e) {
          int64_t x = a64[e], y = b64[e], want = 0;
          switch (row) {
          case 0: want = x / y; break;
          case 1: want = x % y; break;
          case 2: want = x >> (2 * s[e]); break;
          case 3: want = wrapMul64(x, y); break;
          case 4: want = std::max(x, y); break;
          case 5: want = int64_t(a[e]) * int64_t(b[e]); break;
          default: want = (x < y) - (x > y); break;
          }
          ck.same(e, ri64[front + row * N + e], want);
        }
      }
      static const char *i8Names[] = {"i8 a+b", "i8 a*b", "i8 a>>3", "i8 a//b", "i8 a%b", "i8 minimum"};
      for (int row = 0; row < 6; ++row) {
        checks.emplace_back(i8Names[row]);
        Check &ck = checks.back();
        for (size_t e = 0; e < N; ++e) {
          int x = int8_t(a[e]), y = int8_t(b[e]), want = 0;
          switch (row) {
          case 0: want = x + y; break;
          case 1: want = x * y; break;
          case 2: want = x >> 3; break;
          case 3: want = x / y; break;
          case 4: want = x % y; break;
          default: want = std::min(x, y); break;
          }
          ck.same(e, ri8[front + row * N + e], int8_t(uint8_t(unsigned(want) & 0xffu)));
        }
      }
      static const char *u8Names[] = {"u8 c>>3", "u8 c+d", "u8 c//d", "u8 maximum"};
      for (int row = 0; row < 4; ++row) {
        checks.emplace_back(u8Names[row]);
        Check &ck = checks.back();
        for (size_t e = 0; e < N; ++e) {
          unsigned x = uint8_t(c[e]), y = uint8_t(d[e]), want = 0;
          switch (row) {
          case 0: want = x >> 3; break;
          case 1: want = x + y; break;
          case 2: want = x / y; break;
          default: want = std::max(x, y); break;
          }
          ck.same(e, ru8[front + row * N + e], uint8_t(want & 0xffu));
        }
      }
      static const char *bNames[] = {"i1 a<b", "i1 c<d", "i1 xor", "i1 or/and"};
      for (int row = 0; row < 4; ++row) {
        checks.emplace_back(bNames[row]);
        Check &ck = checks.back();
        for (size_t e = 0; e < N; ++e) {
          bool want = row == 0 ? a[e] < b[e]
                      : row == 1 ? c[e] < d[e]
                      : row == 2 ? (a[e] < b[e]) != (c[e] < d[e])
                                 : ((a[e] < 0) || (b[e] < 0)) && a64[e] != 0;
          ck.same(e, rb[front + row * N + e], uint8_t(want));
        }
      }
      checks.emplace_back("guards");
      Check &gd = checks.back();
      checkGuards(gd, oi32, ri32, 21 * N);
      checkGuards(gd, ou32, ru32, 8 * N);
      checkGuards(gd, oi64, ri64, 7 * N);
      checkGuards(gd, oi8, ri8, 6 * N);
      checkGuards(gd, ou8, ru8, 4 * N);
      checkGuards(gd, ob, rb, 4 * N);
      reportCase(env, what, checks);
    });
  }
}

// ------------------------------------------------------------------------------------------------
// float_ops
// ------------------------------------------------------------------------------------------------

float randomSpecialF32(Rng &r) {
  switch (r.range(0, 15)) {
  case 0: return std::numeric_limits<float>::quiet_NaN();
  case 1: return f32FromBits(0x7f800000u | uint32_t(r.range(1, 0x7fffff)) | (uint32_t(r.range(0, 1)) << 31)); // other NaNs
  case 2: return r.chance(0.5) ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  case 3: return r.chance(0.5) ? 0.0f : -0.0f;
  case 4: return float(r.range(-3, 3)); // small integers, often equal between x and y
  default: return float(r.normal() * std::pow(10.0, r.uniform(-3, 3)));
  }
}

void runFloatOps(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "float_ops_kernel");
  if (!k)
    return;
  const int64_t BLOCK = constexprOf(*k, "BLOCK");
  const bool hint = hinted(*k);
  const size_t front = hint ? 0 : 1;
  std::vector<int64_t> sizes = hint ? std::vector<int64_t>{16, 1024, 3008} : std::vector<int64_t>{1, 63, 65, 1000};
  for (int64_t n : sizes) {
    const int64_t grid = cdiv(n, BLOCK);
    std::string what = fmt::format("{} n={} grid {}", variant, n, grid);
    guarded(env, what, [&] {
      Rng r(uint64_t(n * 40503 + BLOCK));
      const size_t N = size_t(n);
      std::vector<float> x(N), y(N), z(N), p(N);
      for (size_t e = 0; e < N; ++e) {
        x[e] = randomSpecialF32(r);
        y[e] = r.chance(0.1) ? x[e] : randomSpecialF32(r);
        z[e] = r.chance(0.05) ? float(r.range(-2, 2)) : float(r.uniform(-80, 80));
        p[e] = float(std::pow(10.0, r.uniform(-30, 30)));
      }
      Buf<float> dx(env.dev, x, front), dy(env.dev, y, front), dz(env.dev, z, front), dp(env.dev, p, front),
          out(env.dev, 16 * N, front);
      Buf<int32_t> dcmp(env.dev, N, front);
      k->launch(unsigned(grid), env.stream, dx.arg(), dy.arg(), dz.arg(), dp.arg(), out.arg(), dcmp.arg(), int32_t(n));
      sync(env);
      std::vector<float> o = out.all();
      std::vector<int32_t> cmp = dcmp.all();
      auto got = [&](int row, size_t e) { return o[front + size_t(row) * N + e]; };
      auto maxnum = [](float a, float b) { return std::isnan(a) ? b : std::isnan(b) ? a : std::max(a, b); };
      auto minnum = [](float a, float b) { return std::isnan(a) ? b : std::isnan(b) ? a : std::min(a, b); };
      static const char *names[] = {"maximum", "minimum", "sqrt", "rsqrt", "exp", "exp2", "log", "log2", "abs", "neg",
                                    "x/p", "maximum(x,0)", "where(x!=x)", "sqrt_rn", "x*0.5+y", "clamp(-1,1)"};
      std::vector<Check> checks;
      checks.reserve(18);
      for (int row = 0; row < 16; ++row) {
        checks.emplace_back(names[row]);
        Check &c = checks.back();
        for (size_t e = 0; e < N; ++e) {
          float xv = x[e], yv = y[e], g = got(row, e);
          double zd = z[e], pd = p[e];
          switch (row) {
          case 0: c.sameFloat(e, g, maxnum(xv, yv), true); break;
          case 1: c.sameFloat(e, g, minnum(xv, yv), true); break;
          case 2: c.sameFloat(e, g, std::sqrt(xv)); break;
          case 3: c.near(e, g, 1.0 / std::sqrt(pd), 0, 1e-6, 1.0 / std::sqrt(pd)); break;
          // ex2.approx(x * log2 e): the rounded product adds |x| * 2^-24 * ln 2 of relative error.
          case 4: c.near(e, g, std::exp(zd), 0, 2e-6 + 6e-8 * std::fabs(zd), std::exp(zd)); break;
          case 5: c.near(e, g, std::exp2(zd), 0, 2e-6, std::exp2(zd)); break;
          case 6: c.near(e, g, std::log(pd), 1e-6, 2e-6, std::log(pd)); break;
          case 7: c.near(e, g, std::log2(pd), 1e-6, 2e-6, std::log2(pd)); break;
          case 8: c.sameFloat(e, g, std::fabs(xv)); break;
          case 9: c.sameFloat(e, g, -xv); break;
          case 10: c.near(e, g, double(xv) / pd, 0, 4e-7, double(xv) / pd); break; // div.full.f32: ~2 ulp
          case 11: c.sameFloat(e, g, maxnum(xv, 0.0f), true); break;
          case 12: c.sameFloat(e, g, std::isnan(xv) ? 1.5f : xv); break;
          case 13: c.sameFloat(e, g, std::sqrt(p[e])); break;
          case 14: { volatile float h = xv * 0.5f; c.sameFloat(e, g, h + yv); break; } // x*0.5 is exact
          default: c.sameFloat(e, g, minnum(maxnum(xv, -1.0f), 1.0f), true); break;
          }
        }
      }
      checks.emplace_back("cmp");
      Check &cc = checks.back();
      for (size_t e = 0; e < N; ++e) {
        float a = x[e], b = y[e];
        int32_t want = (a < b) + 2 * (a <= b) + 4 * (a == b) + 8 * (a != b) + 16 * (a > b) + 32 * (a >= b);
        cc.same(e, cmp[front + e], want);
      }
      checks.emplace_back("guards");
      checkGuards(checks.back(), out, o, 16 * N);
      checkGuards(checks.back(), dcmp, cmp, N);
      reportCase(env, what, checks);
    });
  }
}

// ------------------------------------------------------------------------------------------------
// rounding_modes: tl.div_rn, fdiv(ieee_rounding=True), fp_downcast_rounding
// ------------------------------------------------------------------------------------------------

void runRoundingModes(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "rounding_modes_kernel");
  if (!k)
    return;
  const int64_t BLOCK = constexprOf(*k, "BLOCK");
  for (int64_t n : {int64_t(16), int64_t(1024), int64_t(3008)}) {
    const int64_t grid = cdiv(n, BLOCK);
    std::string what = fmt::format("{} n={} grid {}", variant, n, grid);
    guarded(env, what, [&] {
      Rng r(uint64_t(n * 7777 + BLOCK));
      const size_t N = size_t(n);
      std::vector<float> x(N), y(N);
      for (size_t e = 0; e < N; ++e) {
        x[e] = r.chance(0.5) ? randomF32ForRounding(r) : randomSpecialF32(r);
        y[e] = randomSpecialF32(r);
      }
      Buf<float> dx(env.dev, x), dy(env.dev, y), out(env.dev, 2 * N);
      Buf<uint16_t> dh(env.dev, 2 * N);
      k->launch(unsigned(grid), env.stream, out.arg(), dh.arg(), dx.arg(), dy.arg(), int32_t(n));
      sync(env);
      std::vector<float> o = out.all();
      std::vector<uint16_t> h = dh.all();
      Check cdiv("div_rn"), cfdiv("fdiv(ieee_rounding=True)"), crtz("fp16 rtz"), crtne("fp16 rtne");
      for (size_t e = 0; e < N; ++e) {
        volatile float q = x[e] / y[e]; // IEEE single-precision division on the host
        cdiv.sameFloat(e, o[e], q);
        cfdiv.sameFloat(e, o[N + e], q);
        crtz.same16(e, h[e], f32ToF16Rtz(x[e]), false);
        crtne.same16(e, h[N + e], f32ToF16(x[e]), false);
      }
      checkGuards(cdiv, out, o, 2 * N);
      checkGuards(crtz, dh, h, 2 * N);
      reportCase(env, what, {cdiv, cfdiv, crtz, crtne});
    });
  }
}

// ------------------------------------------------------------------------------------------------
// scalar_ops
// ------------------------------------------------------------------------------------------------

void runScalarOps(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "scalar_ops_kernel");
  if (!k)
    return;
  const int64_t BLOCK = constexprOf(*k, "BLOCK");
  const bool hint = hinted(*k);
  struct Run { int64_t programs, n; float scale; };
  const Run runs[] = {{1, BLOCK, 0.75f}, {3, 1, -1.25f}, {37, BLOCK - 5, 2.0f}, {5, BLOCK / 2 + 1, 0.5f}};
  for (const Run &run : runs) {
    const int64_t P = run.programs, n = run.n;
    const int64_t stride = hint ? roundUp(BLOCK, 16) + 16 : BLOCK + 3;
    std::string what = fmt::format("{} programs={} n={} scale={}", variant, P, n, run.scale);
    guarded(env, what, [&] {
      Rng r(uint64_t(P * 1009 + n * 17 + BLOCK));
      std::vector<float> x(size_t(P * stride), f32FromBits(0xffffffffu));
      for (int64_t p = 0; p < P; ++p)
        for (int64_t j = 0; j < n; ++j)
          x[size_t(p * stride + j)] = float(r.uniform(-4, 4));
      Buf<float> dx(env.dev, x), dscale(env.dev, std::vector<float>{run.scale, 99.0f}), dout(env.dev, size_t(P * 8));
      Buf<int32_t> dcounts(env.dev, size_t(P * 2));
      k->launch(unsigned(P), env.stream, dout.arg(), dcounts.arg(), dx.arg(), dscale.arg(), int32_t(stride), int32_t(n));
      sync(env);
      std::vector<float> out = dout.all();
      std::vector<int32_t> counts = dcounts.all();
      Check csum("sum*s"), cexact("max/min+s/pid/num_programs/count"), cun("untouched");
      for (int64_t p = 0; p < P; ++p) {
        double sum = 0, mag = 0;
        float hi = -std::numeric_limits<float>::infinity(), lo = std::numeric_limits<float>::infinity();
        int32_t pos = 0;
        for (int64_t j = 0; j < n; ++j) {
          float v = x[size_t(p * stride + j)];
          sum += v;
          mag += std::fabs(v);
          hi = std::max(hi, v);
          lo = std::min(lo, v);
          pos += v > 0;
        }
        const float *o = &out[size_t(p * 8)];
        size_t b = size_t(p * 8);
        csum.near(b, o[0], sum * run.scale, 1e-6, 1e-5, mag * std::fabs(run.scale));
        cexact.sameFloat(b + 1, o[1], hi);
        cexact.sameFloat(b + 2, o[2], lo + run.scale);
        cexact.sameFloat(b + 4, o[4], float(p * 3 + n / 2));
        cexact.sameFloat(b + 6, o[6], float(pos));
        cexact.sameFloat(b + 5, o[5], float(P));
        cexact.same(size_t(p * 2), counts[size_t(p * 2)], pos);
        for (int j : {3, 7})
          cun.untouched(b + size_t(j), o[j]);
        cun.untouched(size_t(p * 2 + 1), counts[size_t(p * 2 + 1)]);
      }
      checkGuards(cun, dout, out, size_t(P * 8));
      checkGuards(cun, dcounts, counts, size_t(P * 2));
      reportCase(env, what, {csum, cexact, cun});
    });
  }
}

// ------------------------------------------------------------------------------------------------
// loops
// ------------------------------------------------------------------------------------------------

void runLoops(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "loops_kernel");
  if (!k)
    return;
  const int64_t BM = constexprOf(*k, "BLOCK_M"), BN = constexprOf(*k, "BLOCK_N"), T = BM * BN;
  // n_iters <= 0 needs n_inner <= 0 too: the nested loop divides by n_iters.
  struct Run { int32_t iters, outer, inner, step; int64_t grid; };
  const Run runs[] = {{0, 3, 0, 1, 2}, {1, 1, 1, 1, 1}, {5, 3, 7, 2, 4}, {13, 4, 9, 3, 5}, {-3, 0, 0, 1, 1}, {2, 0, 5, 5, 3}};
  for (const Run &run : runs) {
    std::string what = fmt::format("{} n_iters={} outer={} inner={} step={} grid {}", variant, run.iters, run.outer,
                                   run.inner, run.step, run.grid);
    guarded(env, what, [&] {
      Rng r(uint64_t(run.iters * 101 + run.outer * 11 + run.inner + T));
      const int64_t tiles = std::max<int32_t>(run.iters, 1), G = run.grid;
      std::vector<float> x = normals(r, size_t(tiles * T));
      Buf<float> dx(env.dev, x), dacc(env.dev, size_t(G * T)), drmax(env.dev, size_t(G * BM)), dnest(env.dev, size_t(G * T));
      Buf<int32_t> dstr(env.dev, size_t(G * BM));
      k->launch(unsigned(G), env.stream, dx.arg(), dacc.arg(), drmax.arg(), dnest.arg(), dstr.arg(), run.iters, run.outer,
                run.inner, run.step);
      sync(env);
      std::vector<float> acc = dacc.all(), rmax = drmax.all(), nest = dnest.all();
      std::vector<int32_t> str = dstr.all();
      Check ca("acc"), cm("rmax"), cn("nested"), cs("strided");
      const size_t TN = static_cast<size_t>(T);
      std::vector<double> wantAcc(TN), magAcc(TN), wantNest(TN), magNest(TN);
      std::vector<float> wantMax(size_t(BM), -std::numeric_limits<float>::infinity());
      for (int64_t t = 0; t < run.iters; ++t)
        for (int64_t e = 0; e < T; ++e) {
          double v = x[size_t(t * T + e)];
          wantAcc[size_t(e)] += v * double(t + 1);
          magAcc[size_t(e)] += std::fabs(v) * double(t + 1);
          wantMax[size_t(e / BN)] = std::max(wantMax[size_t(e / BN)], float(v));
        }
      for (int64_t i = 0; i < run.outer; ++i)
        for (int64_t j = i; j < run.inner; ++j)
          for (int64_t e = 0; e < T; ++e) {
            double v = x[size_t((j % run.iters) * T + e)];
            wantNest[size_t(e)] += v * double(i - j);
            magNest[size_t(e)] += std::fabs(v * double(i - j));
          }
      for (int64_t p = 0; p < G; ++p) {
        int32_t count = 0;
        for (int64_t t = p; t < run.iters; t += run.step)
          count += int32_t(t + 1);
        for (int64_t e = 0; e < T; ++e) {
          size_t at = size_t(p * T + e);
          ca.near(at, acc[at], wantAcc[size_t(e)], 1e-6, 1e-5, magAcc[size_t(e)]);
          cn.near(at, nest[at], wantNest[size_t(e)], 1e-6, 1e-5, magNest[size_t(e)]);
        }
        for (int64_t i = 0; i < BM; ++i) {
          cm.sameFloat(size_t(p * BM + i), rmax[size_t(p * BM + i)], wantMax[size_t(i)]);
          cs.same(size_t(p * BM + i), str[size_t(p * BM + i)], count);
        }
      }
      checkGuards(ca, dacc, acc, size_t(G * T));
      checkGuards(cm, drmax, rmax, size_t(G * BM));
      checkGuards(cn, dnest, nest, size_t(G * T));
      checkGuards(cs, dstr, str, size_t(G * BM));
      reportCase(env, what, {ca, cm, cn, cs});
    });
  }
}

// ------------------------------------------------------------------------------------------------
// int64_offsets
// ------------------------------------------------------------------------------------------------

void runInt64Offsets(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "int64_offsets_kernel");
  if (!k)
    return;
  const int64_t BLOCK = constexprOf(*k, "BLOCK");
  const bool hint = hinted(*k);
  const int64_t big = int64_t(0x123456789LL), big2 = -(int64_t(1) << 33) - 12345;
  struct Run { int32_t rows, cols; };
  const Run runs[] = {{1, int32_t(BLOCK)}, {4, int32_t(BLOCK - 1)}, {9, 1}, {7, int32_t(BLOCK / 2 + 3)}};
  for (const Run &run : runs) {
    const int64_t stride = hint ? roundUp(run.cols, 16) + 16 : run.cols + 5;
    std::string what = fmt::format("{} rows={} cols={} stride={}", variant, run.rows, run.cols, stride);
    guarded(env, what, [&] {
      Rng r(uint64_t(run.rows * 7 + run.cols * 1000003 + stride));
      std::vector<int64_t> x(size_t(run.rows * stride));
      for (auto &v : x)
        v = int64_t(r.bits());
      const size_t total = size_t(run.rows) * size_t(run.cols);
      Buf<int64_t> dx(env.dev, x), dout(env.dev, 5 * total);
      k->launch(unsigned(run.rows), env.stream, dout.arg(), dx.arg(), big, stride, big2, run.rows, run.cols);
      sync(env);
      std::vector<int64_t> out = dout.all();
      Check c0("x[pid*stride+c]"), c1("end-(pid+1)*stride"), c2("pid*big+c*big2"), c3("(x*3+big)>>7"), c4("offset*8");
      Check *cs[] = {&c0, &c1, &c2, &c3, &c4};
      for (int64_t p = 0; p < run.rows; ++p)
        for (int64_t c = 0; c < run.cols; ++c) {
          size_t at = size_t(p * run.cols + c);
          int64_t xv = x[size_t(p * stride + c)];
          int64_t want[5] = {xv, x[size_t((run.rows - 1 - p) * stride + c)],
                             int64_t(uint64_t(wrapMul64(p, big)) + uint64_t(wrapMul64(c, big2))),
                             int64_t(uint64_t(wrapMul64(xv, 3)) + uint64_t(big)) >> 7, (p * stride + c) * 8};
          for (int row = 0; row < 5; ++row)
            cs[row]->same(at, out[size_t(row) * total + at], want[row]);
        }
      checkGuards(c0, dout, out, 5 * total);
      reportCase(env, what, {c0, c1, c2, c3, c4});
    });
  }
}

// ------------------------------------------------------------------------------------------------
// masks: 1-D fp32/fp16/i8 with odd sizes and misaligned bases; masks2d: odd strides
// ------------------------------------------------------------------------------------------------

void runMasks(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "masks_kernel");
  if (!k)
    return;
  const int64_t BLOCK = constexprOf(*k, "BLOCK");
  const bool hint = hinted(*k);
  struct Run { int64_t n; size_t front; };
  std::vector<Run> runs = hint ? std::vector<Run>{{16, 0}, {496, 0}, {4112, 0}}
                               : std::vector<Run>{{1, 1}, {7, 3}, {63, 1}, {65, 5}, {511, 1}, {1000, 7}, {4099, 1}};
  for (const Run &run : runs) {
    const int64_t n = run.n, grid = cdiv(n, BLOCK);
    std::string what = fmt::format("{} n={} base+{} elements grid {}", variant, n, run.front, grid);
    guarded(env, what, [&] {
      Rng r(uint64_t(n * 3 + run.front + BLOCK));
      const size_t N = size_t(n);
      std::vector<float> x = normals(r, N, 100.0);
      std::vector<uint16_t> hx(N);
      std::vector<int8_t> bx(N);
      for (size_t e = 0; e < N; ++e) {
        hx[e] = randomF16(r);
        bx[e] = int8_t(r.range(-128, 127));
      }
      Buf<float> dx(env.dev, x, run.front), dy(env.dev, N, run.front);
      Buf<uint16_t> dhx(env.dev, hx, run.front), dhy(env.dev, N, run.front);
      Buf<int8_t> dbx(env.dev, bx, run.front), dby(env.dev, N, run.front);
      k->launch(unsigned(grid), env.stream, dy.arg(), dx.arg(), dhy.arg(), dhx.arg(), dby.arg(), dbx.arg(), int32_t(n));
      sync(env);
      std::vector<float> y = dy.all();
      std::vector<uint16_t> hy = dhy.all();
      std::vector<int8_t> by = dby.all();
      Check cf("fp32 x*2+1"), ch("fp16 x*2"), cb("i8 x+1");
      for (size_t e = 0; e < N; ++e) {
        volatile float twice = x[e] * 2.0f;
        cf.sameFloat(e, y[run.front + e], twice + 1.0f);
        ch.same16(e, hy[run.front + e], f32ToF16(float(f16ToDouble(hx[e]) * 2.0)), false);
        cb.same(e, by[run.front + e], int8_t(uint8_t(unsigned(bx[e] + 1) & 0xffu)));
      }
      checkGuards(cf, dy, y, N);
      checkGuards(ch, dhy, hy, N);
      checkGuards(cb, dby, by, N);
      reportCase(env, what, {cf, ch, cb});
    });
  }
}

void runMasks2d(Env &env, const std::string &variant) {
  std::optional<Kernel> k = loadVariant(env, variant, "masks2d_kernel");
  if (!k)
    return;
  const int64_t BM = constexprOf(*k, "BLOCK_M"), BN = constexprOf(*k, "BLOCK_N");
  const bool hint = hinted(*k);
  struct Shape { int64_t rows, cols; };
  std::vector<Shape> shapes = hint ? std::vector<Shape>{{16, 64}, {33, 96}, {7, 16}, {40, 208}}
                                   : std::vector<Shape>{{1, 1}, {17, 65}, {33, 100}, {5, 3}, {BM + 1, BN - 1}};
  for (const Shape &s : shapes) {
    const int64_t sx = hint ? roundUp(s.cols, 16) + 16 : s.cols + 3, sy = hint ? roundUp(s.cols, 16) : s.cols + 1;
    const size_t front = hint ? 0 : 1;
    const unsigned gm = unsigned(cdiv(s.rows, BM)), gn = unsigned(cdiv(s.cols, BN));
    std::string what = fmt::format("{} {}x{} strides {}/{} grid {}x{}", variant, s.rows, s.cols, sx, sy, gm, gn);
    guarded(env, what, [&] {
      Rng r(uint64_t(s.rows * 59 + s.cols + BN));
      std::vector<float> x(size_t(s.rows * sx), f32FromBits(0xffffffffu));
      for (int64_t i = 0; i < s.rows; ++i)
        for (int64_t j = 0; j < s.cols; ++j)
          x[size_t(i * sx + j)] = float(r.uniform(-1000, 1000));
      Buf<float> dx(env.dev, x, front), dy(env.dev, size_t(s.rows * sy), front);
      k->launch(Grid(gm, gn), env.stream, dy.arg(), dx.arg(), int32_t(sy), int32_t(sx), int32_t(s.rows), int32_t(s.cols));
      sync(env);
      std::vector<float> y = dy.all();
      Check c("y");
      for (int64_t i = 0; i < s.rows; ++i)
        for (int64_t j = 0; j < sy; ++j) {
          size_t at = size_t(i * sy + j);
          if (j < s.cols)
            c.sameFloat(at, y[front + at], x[size_t(i * sx + j)] - float(j));
          else
            c.untouched(at, y[front + at]);
        }
      checkGuards(c, dy, y, size_t(s.rows * sy));
      reportCase(env, what, {c});
    });
  }
}

// ------------------------------------------------------------------------------------------------
// Driver
// ------------------------------------------------------------------------------------------------

struct Group {
  const char *name;
  void (*run)(Env &, const std::string &);
  std::vector<std::string> variants; // must match the `# Build:` lines of tests/gpu/kernels/<name>.tle
};

const std::vector<Group> &groups() {
  static const std::vector<Group> g = {
      {"softmax2d", runSoftmax2d,
       {"softmax2d_16x128_w1", "softmax2d_16x128_w2", "softmax2d_16x128_w4", "softmax2d_16x128_w8",
        "softmax2d_4x1024_w4", "softmax2d_4x1024_w8", "softmax2d_2x32_w2", "softmax2d_16x128_w4_nohint"}},
      {"row_sum", runRowSum, {"row_sum_32x64_w4", "row_sum_64x32_w2", "row_sum_8x256_w8", "row_sum_128x16_w4"}},
      {"col_reduce", runColReduce,
       {"col_reduce_64x64_w4", "col_reduce_64x64_w8", "col_reduce_128x32_w4", "col_reduce_16x128_w2"}},
      {"reduce_dtypes", runReduceDtypes,
       {"reduce_dtypes_32x64_w4", "reduce_dtypes_16x16_w1", "reduce_dtypes_64x32_w8"}},
      {"casts", runCasts, {"casts_1024_w4", "casts_256_w2_nohint"}},
      {"int_ops", runIntOps, {"int_ops_512_w4", "int_ops_128_w1_nohint"}},
      {"float_ops", runFloatOps, {"float_ops_1024_w4", "float_ops_64_w2_nohint"}},
      {"rounding_modes", runRoundingModes, {"rounding_modes_1024_w4"}},
      {"scalar_ops", runScalarOps, {"scalar_ops_256_w4", "scalar_ops_32_w1", "scalar_ops_1024_w8_nohint"}},
      {"loops", runLoops, {"loops_16x32_w4", "loops_8x64_w2", "loops_64x16_w8"}},
      {"int64_offsets", runInt64Offsets, {"int64_offsets_256_w4", "int64_offsets_64_w1_nohint"}},
      {"masks", runMasks, {"masks_1d_nohint_w4", "masks_1d_nohint_w1", "masks_1d_hint_w4"}},
      {"masks2d", runMasks2d, {"masks2d_nohint_w4", "masks2d_nohint_w2", "masks2d_hint_w4"}},
  };
  return g;
}

} // namespace

int main(int argc, char **argv) {
  Options opt = parseOptions(argc, argv);
  std::set<std::string> known;
  for (const Group &g : groups()) {
    known.insert(g.name);
    known.insert(g.variants.begin(), g.variants.end());
  }
  for (const std::string &name : opt.only)
    if (!known.count(name)) {
      std::fprintf(stderr, "tle-gpu-kernel-tests: --only: unknown group or variant '%s'\n", name.c_str());
      usage(2);
    }
  std::string reason;
  if (!gpuAvailable(&reason)) {
    std::string msg = "SKIPPED: tle-gpu-kernel-tests needs a CUDA GPU: " + reason;
    std::printf("%s\n", msg.c_str());
    std::fprintf(stderr, "%s\n", msg.c_str());
    return kSkip;
  }
  Report rep;
  try {
    Device dev(opt.device);
    Stream stream(dev);
    Env env{rep, dev, opt, stream};
    std::printf("tle-gpu-kernel-tests: device %d: %s, compute capability %d.%d (%s), %d SMs, driver %d; "
                "modules from %s\n",
                dev.ordinal(), dev.name().c_str(), dev.computeMajor(), dev.computeMinor(), dev.arch().c_str(),
                dev.smCount(), driverVersion(), opt.cubinDir.c_str());
    for (const Group &g : groups())
      for (const std::string &v : g.variants)
        if (opt.only.empty() || opt.only.count(g.name) || opt.only.count(v))
          g.run(env, v);
  } catch (const std::exception &e) {
    rep.check(false, std::string("tle-gpu-kernel-tests: ") + e.what());
  }
  std::printf("tle-gpu-kernel-tests: %d passed, %d failed\n", rep.passed, rep.failed);
  return rep.failed ? 1 : 0;
}
