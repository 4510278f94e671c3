// Buffers, arguments and checks of the conformance harness (Harness.h).
#include "Harness.h"

#include <cstdio>
#include <sstream>

namespace tle::conformance {

namespace {
FloatFormat fmt16(DType t) { return t == DType::F16 ? kF16 : kBF16f; }
} // namespace

void Buffer::setBits(size_t i, uint64_t b) { std::memcpy(&bytes[i * dsize(dtype)], &b, dsize(dtype)); }

uint64_t Buffer::bits(size_t i) const {
  uint64_t b = 0;
  std::memcpy(&b, &bytes[i * dsize(dtype)], dsize(dtype));
  return b;
}

void Buffer::setF(size_t i, long double v) {
  switch (dtype) {
  case DType::F8E4M3:
  case DType::F8E5M2: setBits(i, fp8Encode(v, dtype)); return;
  case DType::F16:
  case DType::BF16: setBits(i, encode16(roundTo(v, fmt16(dtype)), fmt16(dtype))); return;
  case DType::F32: { float f = float(roundTo(v, kF32f)); uint32_t b; std::memcpy(&b, &f, 4); setBits(i, b); return; }
  case DType::F64: { double d = double(v); uint64_t b; std::memcpy(&b, &d, 8); setBits(i, b); return; }
  case DType::I1: setBits(i, v != 0); return;
  default:
    setI(i, v < 0 ? uint64_t(int64_t(v)) : uint64_t(v));
  }
}

void Buffer::setI(size_t i, uint64_t v) {
  if (isFloatT(dtype)) {
    setF(i, (long double)int64_t(v));
    return;
  }
  if (dtype == DType::I1)
    v = v != 0;
  setBits(i, wrapInt(v, dtype));
}

long double Buffer::getF(size_t i) const {
  uint64_t b = bits(i);
  switch (dtype) {
  case DType::F8E4M3:
  case DType::F8E5M2: return fp8Decode(uint8_t(b), dtype);
  case DType::F16:
  case DType::BF16: return decode16(uint16_t(b), fmt16(dtype));
  case DType::F32: { float f; uint32_t u = uint32_t(b); std::memcpy(&f, &u, 4); return f; }
  case DType::F64: { double d; std::memcpy(&d, &b, 8); return d; }
  default: return intValue(wrapInt(b, dtype), dtype);
  }
}

uint64_t Buffer::getI(size_t i) const { return isFloatT(dtype) ? bits(i) : wrapInt(bits(i), dtype); }

std::string Buffer::str(size_t i) const {
  char buf[96];
  if (isFloatT(dtype))
    std::snprintf(buf, sizeof buf, "%.17Lg (0x%llx)", getF(i), (unsigned long long)bits(i));
  else if (isSignedT(dtype))
    std::snprintf(buf, sizeof buf, "%lld", (long long)getI(i));
  else
    std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)getI(i));
  return buf;
}

Buffer makeBuffer(DType t, size_t n, const std::function<long double(size_t)> &f) {
  Buffer b(t, n);
  for (size_t i = 0; i < n; ++i)
    b.setF(i, f(i));
  return b;
}

Arg Arg::f(DType t, long double v) {
  Buffer b(t, 1);
  b.setF(0, v);
  Arg a;
  a.dtype = t;
  a.bits = b.bits(0);
  return a;
}

Check &expect(Run &run, int arg, std::string name, Buffer expected, Tol cpu) {
  return expect(run, arg, std::move(name), std::move(expected), cpu, cpu);
}

Check &expect(Run &run, int arg, std::string name, Buffer expected, Tol cpu, Tol gpu) {
  Check c;
  c.name = std::move(name);
  c.arg = arg;
  c.expected = std::move(expected);
  c.cpu = cpu;
  c.gpu = gpu;
  run.checks.push_back(std::move(c));
  return run.checks.back();
}

std::string module(const std::string &body) {
  return "import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n\n" + body;
}

std::string subst(std::string text, const std::map<std::string, std::string> &vars) {
  for (auto &[k, v] : vars) {
    std::string key = "{" + k + "}";
    for (size_t pos = text.find(key); pos != std::string::npos; pos = text.find(key, pos + v.size()))
      text.replace(pos, key.size(), v);
  }
  return text;
}

} // namespace tle::conformance
