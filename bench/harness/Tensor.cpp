// Host tensors, parallel loops, generators and .npy I/O of the benchmark harness (see Tensor.h).
#include "Tensor.h"

#include "Expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <thread>

namespace tle::bench {

DType parseDType(const std::string &s) {
  if (s == "fp16") return DType::F16;
  if (s == "bf16") return DType::BF16;
  if (s == "fp32") return DType::F32;
  if (s == "fp64") return DType::F64;
  if (s == "i32") return DType::I32;
  if (s == "i64") return DType::I64;
  throw BenchError("unknown dtype '" + s + "' (known: fp16, bf16, fp32, fp64, i32, i64)");
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F16: return "fp16";
  case DType::BF16: return "bf16";
  case DType::F32: return "fp32";
  case DType::F64: return "fp64";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  }
  return "?";
}

size_t dtypeBytes(DType t) {
  switch (t) {
  case DType::F16:
  case DType::BF16: return 2;
  case DType::F32:
  case DType::I32: return 4;
  case DType::F64:
  case DType::I64: return 8;
  }
  return 0;
}

bool isFloatType(DType t) { return t != DType::I32 && t != DType::I64; }

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = 1;
  for (int64_t d : shape_) {
    if (d < 0)
      throw BenchError("negative tensor dimension");
    numel_ *= size_t(d);
  }
  data_.reset(new uint8_t[std::max<size_t>(bytes(), 1)]);
}

namespace {

// IEEE binary16 <-> float, round to nearest even (independent of libtle_rt so the harness can
// check its own conversions in tests).
float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f)
    exp = 0xff;
  else if (exp != 0)
    exp += 127 - 15;
  else if (man != 0) { // subnormal: normalise
    exp = 127 - 15 + 1;
    while (!(man & 0x400)) {
      man <<= 1;
      --exp;
    }
    man &= 0x3ff;
  }
  uint32_t bits = sign | (exp << 23) | (man << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u)
    return sign | 0x7e00; // NaN
  if (absx >= 0x477ff000u)
    return sign | 0x7c00; // rounds to infinity (>= 65520)
  if (absx < 0x38800000u) { // subnormal half or zero: scale to units of 2^-24
    float a;
    std::memcpy(&a, &absx, 4);
    float q = std::nearbyint(a * 16777216.0f); // ties to even in the default rounding mode
    return sign | uint16_t(q);
  }
  uint32_t mant = absx & 0x7fffff, exp = (absx >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h;
  return sign | uint16_t(h);
}

float bf16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((x >> 16) | 0x40);
  uint32_t lsb = (x >> 16) & 1;
  x += 0x7fff + lsb;
  return uint16_t(x >> 16);
}

} // namespace

double HostTensor::get(size_t i) const {
  const uint8_t *p = data_.get() + i * dtypeBytes(dtype_);
  switch (dtype_) {
  case DType::F16: { uint16_t h; std::memcpy(&h, p, 2); return halfToFloat(h); }
  case DType::BF16: { uint16_t h; std::memcpy(&h, p, 2); return bf16ToFloat(h); }
  case DType::F32: { float f; std::memcpy(&f, p, 4); return f; }
  case DType::F64: { double d; std::memcpy(&d, p, 8); return d; }
  case DType::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
  case DType::I64: { int64_t v; std::memcpy(&v, p, 8); return double(v); }
  }
  return 0;
}

void HostTensor::set(size_t i, double v) {
  uint8_t *p = data_.get() + i * dtypeBytes(dtype_);
  switch (dtype_) {
  case DType::F16: { uint16_t h = floatToHalf(float(v)); std::memcpy(p, &h, 2); return; }
  case DType::BF16: { uint16_t h = floatToBf16(float(v)); std::memcpy(p, &h, 2); return; }
  case DType::F32: { float f = float(v); std::memcpy(p, &f, 4); return; }
  case DType::F64: std::memcpy(p, &v, 8); return;
  case DType::I32: { int32_t x = int32_t(v); std::memcpy(p, &x, 4); return; }
  case DType::I64: { int64_t x = int64_t(v); std::memcpy(p, &x, 8); return; }
  }
}

unsigned workerThreads() {
  if (const char *s = std::getenv("TLE_BENCH_THREADS"))
    if (int n = std::atoi(s); n > 0)
      return unsigned(n);
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallelFor(size_t n, const std::function<void(size_t, size_t)> &fn) {
  unsigned nt = std::min<size_t>(workerThreads(), std::max<size_t>(1, n / 4096));
  if (nt <= 1) {
    fn(0, n);
    return;
  }
  std::vector<std::thread> threads;
  std::exception_ptr error;
  std::mutex m;
  size_t chunk = (n + nt - 1) / nt;
  for (unsigned t = 0; t < nt; ++t) {
    size_t b = std::min(n, size_t(t) * chunk), e = std::min(n, b + chunk);
    threads.emplace_back([&, b, e] {
      try {
        fn(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (!error)
          error = std::current_exception();
      }
    });
  }
  for (auto &t : threads)
    t.join();
  if (error)
    std::rethrow_exception(error);
}

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// A uniform double in (0, 1) from the hash of (seed, i, lane).
double uniform01(uint64_t seed, uint64_t i, uint64_t lane) {
  uint64_t h = splitmix64(seed ^ splitmix64(i * 2 + lane));
  return (double(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

} // namespace

void fillTensor(HostTensor &t, const InitSpec &init, uint64_t seed) {
  if (init.kind == InitSpec::Normal) {
    // Box-Muller: elements 2k and 2k+1 are the cosine and sine outputs of one hashed pair.
    parallelFor(t.numel(), [&](size_t b, size_t e) {
      for (size_t i = b; i < e;) {
        size_t k = i / 2;
        double u1 = uniform01(seed, k, 0), u2 = uniform01(seed, k, 1);
        double r = init.b * std::sqrt(-2.0 * std::log(u1)), phi = 6.283185307179586 * u2;
        if (i % 2 == 0)
          t.set(i++, init.a + r * std::cos(phi));
        if (i < e && i / 2 == k)
          t.set(i++, init.a + r * std::sin(phi));
      }
    });
    return;
  }
  parallelFor(t.numel(), [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      double v = 0;
      switch (init.kind) {
      case InitSpec::Uniform: v = init.a + (init.b - init.a) * uniform01(seed, i, 0); break;
      case InitSpec::RandInt:
        v = std::floor(init.a + (init.b - init.a) * uniform01(seed, i, 0));
        v = std::min(v, init.b - 1);
        break;
      case InitSpec::Ones: v = 1; break;
      case InitSpec::Full: v = init.a; break;
      default: v = 0; break;
      }
      t.set(i, v);
    }
  });
}

namespace {

const char *npyDescr(DType t) {
  switch (t) {
  case DType::F16: return "<f2";
  case DType::BF16: return "<u2";
  case DType::F32: return "<f4";
  case DType::F64: return "<f8";
  case DType::I32: return "<i4";
  case DType::I64: return "<i8";
  }
  return "?";
}

} // namespace

void writeNpy(const std::string &path, const HostTensor &t) {
  std::string shape = "(";
  for (int64_t d : t.shape())
    shape += std::to_string(d) + ",";
  if (t.shape().size() > 1)
    shape.pop_back();
  shape += ")";
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", npyDescr(t.dtype()), shape);
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  f.write(magic, 8);
  uint16_t len = uint16_t(header.size());
  f.write(reinterpret_cast<const char *>(&len), 2);
  f << header;
  f.write(reinterpret_cast<const char *>(t.data()), std::streamsize(t.bytes()));
  if (!f)
    throw BenchError("cannot write " + path);
}

void readNpyInto(const std::string &path, HostTensor &t) {
  std::ifstream f(path, std::ios::binary);
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw BenchError(path + " is not a .npy file");
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    uint16_t l;
    f.read(reinterpret_cast<char *>(&l), 2);
    hlen = l;
  } else {
    f.read(reinterpret_cast<char *>(&hlen), 4);
  }
  std::string header(hlen, ' ');
  f.read(header.data(), hlen);
  auto descrAt = header.find("'descr'");
  if (descrAt == std::string::npos)
    throw BenchError(path + ": no 'descr' in the .npy header");
  size_t q1 = header.find('\'', header.find(':', descrAt));
  size_t q2 = header.find('\'', q1 + 1);
  std::string descr = header.substr(q1 + 1, q2 - q1 - 1);
  std::string want = npyDescr(t.dtype());
  bool ok = descr == want || (t.dtype() == DType::BF16 && (descr == "<i2" || descr == "<u2"));
  if (!ok)
    throw BenchError(fmt::format("{} holds '{}' elements, expected '{}'", path, descr, want));
  if (header.find("'fortran_order': True") != std::string::npos)
    throw BenchError(path + " is in Fortran order");
  f.read(reinterpret_cast<char *>(t.data()), std::streamsize(t.bytes()));
  if (size_t(f.gcount()) != t.bytes())
    throw BenchError(fmt::format("{} holds fewer than the {} bytes expected", path, t.bytes()));
}

} // namespace tle::bench
